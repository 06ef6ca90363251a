"""The Loop pane: settings, start/pause/stop, the live session and the session history."""
