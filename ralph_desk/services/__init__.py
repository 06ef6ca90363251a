"""The one API that the window, the MCP server and the loop call."""
