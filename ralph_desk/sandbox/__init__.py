"""Agent sessions, checks and setup confined to the folders they may write (DESIGN §15)."""

from ralph_desk.sandbox.availability import Availability, availability
from ralph_desk.sandbox.policy import Confinement
from ralph_desk.sandbox.wrap import Confined, confine

__all__ = ["Availability", "Confined", "Confinement", "availability", "confine"]
