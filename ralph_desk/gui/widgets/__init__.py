"""Reusable widgets: message bar, empty states, sidebar, cards, bars and pills."""
