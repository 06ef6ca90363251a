"""The Features pane: features, their context and their learnings."""
