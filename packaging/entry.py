"""The frozen app's entry point: the same as the `ralph-desk` command.

The frozen binary stands in for the Python interpreter too: code that starts `sys.executable -m
ralph_desk ARGS` (as a running window does to open another project) reaches the same command line.
"""

from __future__ import annotations

import sys

from ralph_desk.cli import main

if __name__ == "__main__":
    argv = sys.argv[1:]
    if getattr(sys, "frozen", False) and argv[:2] == ["-m", "ralph_desk"]:
        argv = argv[2:]
    sys.exit(main(argv))
