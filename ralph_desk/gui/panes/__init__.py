"""The panes of the window: each a widget module and its wiring to the services."""
