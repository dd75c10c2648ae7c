"""MCP adapter: the memstrata server, its tools, and the Claude memory-tool handler."""
