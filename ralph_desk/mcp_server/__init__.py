"""The MCP server: tools bound to services, resources, prompts, hosting and auth."""
