"""`python -m ralph_desk`: the same as the `ralph-desk` command."""

from __future__ import annotations

import sys

from ralph_desk.cli import main

if __name__ == "__main__":
    sys.exit(main())
