"""The Qt window: qasync app, main window, models and panes."""
