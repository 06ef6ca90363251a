"""The Dashboard pane: progress, cost, inbox counts and recent activity."""
