"""MCP adapter: the memstrata server, its tools, and the Claude memory-tool handler.

Importing this package imports nothing from the `mcp` SDK: the SDK is an optional
extra and costs start-up time, so each submodule imports it lazily where needed.
`memstrata.mcp.claude_memory` has no SDK dependency at all.
"""
