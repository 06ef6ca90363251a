"""The project's checks, run (DESIGN §13): one runner for the gate, the merge queue, the window, the CLI."""
