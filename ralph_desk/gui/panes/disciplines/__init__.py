"""The Disciplines pane: fields, extra MCP servers and the recipe × tool matrix."""
