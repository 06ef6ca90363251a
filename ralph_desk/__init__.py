"""ralph_desk: a desktop app for running a Ralph loop of coding agents and reviewing what they signal."""

__version__ = "0.1.0"
