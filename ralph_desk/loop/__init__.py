"""The loop runner: planner, prompt builder, agent adapters, stream parsers, post-processing."""
