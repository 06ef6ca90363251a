"""Dialogs shared by the panes: confirmations and the client configurations."""
