"""Every size and count limit on what callers write, in one place (docs/configuration.md, "Limits").

A limit is checked before any work that grows with the input: a list's length
before its items are looked at, a string's length before it is encoded, and a
JSON value's depth and size by one iterative walk that stops at the first excess
(never recursion, never a full `json.dumps` of something too big). So refusing
100,000 tags costs microseconds, not seconds.

The shared ledger's bounds (summary 4 KB, detail 16 KB, 50 query results, ...) are
configurable and live in `config.Bounds`; everything here is fixed.
"""

from __future__ import annotations

KIB = 1024
MIB = 1024 * KIB

# Names that become file names or ids (`model.check_name`).
NAME_CHARS = 64
PATH_CHARS = 512

# Tags (ledger entries, channel messages, search filters).
TAGS_PER_ENTRY = 32
TAG_CHARS = 100

# JSON values callers attach: LOG metadata, a tool call's input.
JSON_DEPTH = 16
LOG_METADATA_BYTES = 16 * KIB
LOG_CONTENT_BYTES = 64 * KIB

# Facts.
FACT_KEY_CHARS = 200
FACT_VALUE_BYTES = 16 * KIB
FACT_CITATIONS = 32
CITATION_CHARS = 1000

# Tasks.
TASK_DESCRIPTION_BYTES = 16 * KIB
TASK_MILESTONE_CHARS = 200
TASK_CRITERIA = 64
TASK_CRITERION_BYTES = 4 * KIB
TASK_BLOCKERS = 64
TASK_PRIORITY_MAX = 1000

# Session transcripts.
SESSION_MESSAGE_BYTES = 256 * KIB
SESSION_INPUT_BYTES = 256 * KIB
SESSION_LABEL_CHARS = 200  # message id, tool name, speaker
SESSION_MESSAGES_PER_APPEND = 10_000
SESSION_APPEND_BYTES = 32 * MIB

# Extracted items.
ITEM_TITLE_BYTES = 1 * KIB
ITEM_CONTENT_BYTES = 16 * KIB
ITEMS_PER_SOURCE = 10_000

# Whole files written at once: NOW.md, CONTEXT.md, AGENT.md, a memory file.
MEMORY_FILE_BYTES = 1 * MIB

# NOW.md.
NOW_STATUS_BYTES = 16 * KIB
NOW_STEPS = 100
NOW_STEP_CHARS = 1000
NOW_PHASE_CHARS = 1000

# Rooms.
CHANNEL_MESSAGE_BYTES = 64 * KIB
ARTIFACT_BYTES = 4 * MIB
LABEL_CHARS = 256  # ledger ref, channel `to` and `ref`, a source file name

# `memstrata mcp` over stdio: one JSON-RPC message per line. A longer line is drained
# (never held whole) and answered with an error; the server keeps serving. Nesting
# deeper than Python's JSON parser allows (about 1000 levels) is a parse error.
MCP_LINE_CHARS = 64 * MIB

# HTTP request bodies (`memstrata serve`, `memstrata mcp --http`): a declared
# Content-Length above the route's cap is answered 413 before any byte is read, and a
# body without one (chunked) is counted as it arrives and refused at the cap, so a
# request never holds more than its cap in memory (`web.bodies`). The default covers a
# 1 MiB memory file or a 4 MiB room artifact however its JSON or form encoding escapes
# it; a transcript append carries up to SESSION_APPEND_BYTES of messages.
HTTP_BODY_BYTES = 16 * MIB
HTTP_TRANSCRIPT_BODY_BYTES = 2 * SESSION_APPEND_BYTES
