"""Wiring memstrata into coding agents: `memstrata setup CLIENT` (Claude Code, Cursor,
VS Code).

`clients` says what each client gets (hooks, the MCP server) as pure edits of JSON
documents; `jsonedit` applies them to the files keeping everything else byte for byte;
`plan` turns them into file changes (shown as a diff, written, or undone); `check` runs
what the files say, the way the client will. Nothing here reads or writes memory: the
entries run `memstrata`, which does.
"""
