"""Store configuration: `<home>/config.toml`, every key optional.

```toml
[kinds]            # ledger kinds and their half-lives in hours (seed 000)
convention = 720
interface = 480
decision = 336
artifact = 168
warning = 168
code = 72

[roles]            # seed 004 scope table; unnamed agents are "project"
admin = ["wilco"]
skill = ["seo"]

[log]
compact_bytes = 51200
compact_entries = 100

[sessions]
retention_days = 30
keep_recent = 10
tool_result_retention = 5

[decay]            # half-lives (hours) of other layers; 0 = no decay
log = 336
channel = 168

[search]
embedder = "local"        # enables mode="hybrid"/"semantic"; "fake", "openai:<model>@<url>"
fusion = "weighted"       # or "rrf"
text_weight = 0.7
vector_weight = 0.3
postings_budget = 6000    # candidate generation keeps the rarest terms up to this many postings

[tools.memory]
enabled = true     # seed 003: memory tools off, CONTEXT.md auto-load stays
```
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memstrata.errors import MalformedInput

DEFAULT_HALF_LIVES: dict[str, float] = {
    "convention": 720.0,
    "interface": 480.0,
    "decision": 336.0,
    "artifact": 168.0,
    "warning": 168.0,
    "code": 72.0,
}


# Decay for non-ledger layers (hours; None = evergreen). Identity, CONTEXT.md,
# NOW.md, facts, tasks, items and memory files are what the agent currently holds
# true, so they do not fade; the activity log and room chatter do. Transcripts do
# not decay by default: what was said stays what was said.
DEFAULT_LAYER_HALF_LIVES: dict[str, float | None] = {
    "log": 336.0,
    "archive": 720.0,
    "channel": 168.0,
}


@dataclass(frozen=True)
class Bounds:
    """Seed 000 memory bounds."""

    summary_bytes: int = 4096
    detail_bytes: int = 16384
    query_max: int = 50
    search_default: int = 10
    context_entries: int = 15
    context_bytes: int = 10240


@dataclass(frozen=True)
class Config:
    half_lives: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_HALF_LIVES))
    bounds: Bounds = field(default_factory=Bounds)
    admins: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    log_compact_bytes: int = 50 * 1024
    log_compact_entries: int = 100
    session_retention_days: int = 30
    session_keep_recent: int = 10
    tool_result_retention: int = 5
    max_memory_chars: int = 50000
    memory_tools_enabled: bool = True
    layer_half_lives: dict[str, float | None] = field(
        default_factory=lambda: dict(DEFAULT_LAYER_HALF_LIVES)
    )
    postings_budget: int = 6_000
    embedder: str | None = None
    fusion: str = "weighted"
    # Hybrid weights: chosen on the LoCoMo dev split among 0.5/0.5, 0.4/0.6 and 0.7/0.3
    # (r@10 0.766, 0.734, 0.794): a small sentence model helps as a minority voice.
    text_weight: float = 0.7
    vector_weight: float = 0.3
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self.half_lives)

    def half_life(self, layer: str, kind: str | None) -> float | None:
        """Half-life in hours for a doc of `layer`/`kind` (None: no decay)."""
        if layer == "ledger":
            return self.half_lives.get(kind or "")
        return self.layer_half_lives.get(layer)

    def role_of(self, agent: str | None) -> str:
        if agent is None:
            return "admin"
        if agent in self.admins:
            return "admin"
        if agent in self.skills:
            return "skill"
        return "project"


def load_config(home: Path) -> Config:
    path = home / "config.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Config()
    except tomllib.TOMLDecodeError as exc:
        raise MalformedInput(f"{path}: invalid TOML: {exc}") from None
    try:
        kinds = data.get("kinds")
        half_lives = (
            {str(k): float(v) for k, v in kinds.items()} if kinds else dict(DEFAULT_HALF_LIVES)
        )
        roles = data.get("roles", {})
        log = data.get("log", {})
        sessions = data.get("sessions", {})
        memory = data.get("memory", {})
        tools = data.get("tools", {}).get("memory", {})
        search = data.get("search", {})
        if search.get("fusion", "weighted") not in ("weighted", "rrf"):
            raise MalformedInput(f"{path}: [search] fusion must be 'weighted' or 'rrf'")
        decay = dict(DEFAULT_LAYER_HALF_LIVES)
        for k, v in data.get("decay", {}).items():
            decay[str(k)] = float(v) if v else None
        return Config(
            half_lives=half_lives,
            admins=tuple(roles.get("admin", ())),
            skills=tuple(roles.get("skill", ())),
            log_compact_bytes=int(log.get("compact_bytes", 50 * 1024)),
            log_compact_entries=int(log.get("compact_entries", 100)),
            session_retention_days=int(sessions.get("retention_days", 30)),
            session_keep_recent=int(sessions.get("keep_recent", 10)),
            tool_result_retention=int(sessions.get("tool_result_retention", 5)),
            max_memory_chars=int(memory.get("max_chars", 50000)),
            memory_tools_enabled=bool(tools.get("enabled", True)),
            layer_half_lives=decay,
            postings_budget=int(search.get("postings_budget", 6_000)),
            embedder=search.get("embedder"),
            fusion=str(search.get("fusion", "weighted")),
            text_weight=float(search.get("text_weight", 0.7)),
            vector_weight=float(search.get("vector_weight", 0.3)),
            raw=data,
        )
    except (TypeError, ValueError, AttributeError) as exc:
        raise MalformedInput(f"{path}: invalid value: {exc}") from None
