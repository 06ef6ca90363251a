"""The Tasks pane: a filterable table of every task and a detail view to edit one."""
