"""``stratagate mcp``: the memory plugin's tools served to MCP clients over stdio."""
