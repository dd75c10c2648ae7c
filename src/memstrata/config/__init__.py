"""Store configuration: `<home>/config.toml` (or a `config.yaml`), every key optional.

The settings are declared once, in `SETTINGS` (section, key, type, default, help), and
everything else is derived from that table: parsing, validation with "did you mean",
the commented file `memstrata init` writes, and `memstrata config`, which shows each
effective value and where it came from (default, file, environment).

A broken config never takes the store down: `load_config` keeps the default for every
value it cannot use and records one line per problem in `Config.problems` (unknown
section or key, wrong type, value out of range, unreadable file). Adapters print those
lines; `load_config(home, strict=True)` raises on the first one instead.

```toml
[kinds]            # ledger kinds and their half-lives in hours
decision = 336

[roles]            # the scope table's roles; unnamed agents are "project"
admin = ["wilco"]
skill = ["seo"]

[tools.memory]
enabled = false    # memory file tools off, CONTEXT.md auto-load stays
```
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memstrata.config import quicktoml
from memstrata.config import recall as recallconfig
from memstrata.config.aliases import MEMORY_CONFIG_ALIASES
from memstrata.config.settings import MAP_SECTIONS, SETTINGS, Setting
from memstrata.errors import MalformedInput
from memstrata.values import field, value_type

DEFAULT_HALF_LIVES: dict[str, float] = {
    "convention": 720.0,
    "interface": 480.0,
    "decision": 336.0,
    "artifact": 168.0,
    "warning": 168.0,
    "code": 72.0,
}

# Decay for non-ledger layers (hours; None = evergreen). Identity, CONTEXT.md, NOW.md,
# facts, tasks, items and memory files are what the agent holds true now; the activity
# log, transcripts and room chatter fade. Bounded (`[search] recency_bound`): it orders
# near-ties (a fact's later statement first) and never buries a strong match.
DEFAULT_LAYER_HALF_LIVES: dict[str, float | None] = {
    "log": 336.0,
    "archive": 720.0,
    "channel": 168.0,
    "session": 720.0,
}

CONFIG_FILES = ("config.toml", "config.yaml", "config.yml")


@value_type(frozen=True)
class Bounds:
    """The shared ledger's bounds."""

    summary_bytes: int = 4096
    detail_bytes: int = 16384
    query_max: int = 50
    search_default: int = 10
    context_entries: int = 15
    context_bytes: int = 10240


@value_type(frozen=True)
class Config:
    """A store's effective settings (`SETTINGS`: defaults, the config file, the environment)."""

    half_lives: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_HALF_LIVES))
    bounds: Bounds = field(default_factory=Bounds)
    admins: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()
    log_compact_bytes: int = 50 * 1024
    log_compact_entries: int = 100
    log_neighbour_context: int = 0
    session_retention_days: int = 30
    session_keep_recent: int = 10
    tool_result_retention: int = 5
    max_memory_chars: int = 50000
    memory_tools_enabled: bool = True
    context_instructions: bool = True
    layer_half_lives: dict[str, float | None] = field(
        default_factory=lambda: dict(DEFAULT_LAYER_HALF_LIVES)
    )
    postings_budget: int = 6_000
    embedder: str | None = None
    model_path: str | None = None
    model_download: bool = True
    fusion: str = "zsum"  # weights below: "weighted" only (LoCoMo dev r@10 0.794 at 0.7/0.3)
    text_weight: float = 0.7
    vector_weight: float = 0.3
    recency_bound: float = 0.1
    maxsim: bool = True
    duplicates: bool = True
    maxsim_pieces: str = "all"  # "content": docs/benchmarks-recall.md section 9 (bench agent)
    update_band: float = 0.0  # 0.05: docs/benchmarks-recall.md section 9
    feedback: float = 0.0  # 1.0: docs/benchmarks-recall.md sections 12, 15 (off: its cost)
    llm_summarizer: str | None = None
    llm_extractor: str | None = None
    llm_classifier: str | None = None
    memory_mode: str = "automatic"
    log_auto_compact: bool = True
    session_compaction_threshold: int = 100_000
    session_flush_enabled: bool = True
    session_flush_threshold: int = 80_000
    mcp_auto_log: bool = False
    http_allow_hosts: tuple[str, ...] = ()
    http_allow_origins: tuple[str, ...] = ()
    import_max_members: int = 100_000
    import_max_file_bytes: int = 64 * 1024 * 1024
    import_max_total_bytes: int = 1024 * 1024 * 1024
    events_record_queries: bool = False
    events_max_bytes: int = 8 * 1024 * 1024
    events_keep: int = 3
    versions_keep: int = 50
    versions_max_age_days: float = 90.0
    secrets_policy: str = "warn"
    secrets_share_in_ledger: bool = False
    index_watch: str = "auto"
    serve_tokens: tuple[tuple[str, str | None, str | None], ...] = ()
    search_provider: str = "auto"
    search_sessions_by_default: bool = False
    source_paths: tuple[str, ...] = ()
    memory_path: str | None = None
    sessions_path: str = "<agent>/sessions/"
    backend_url: str = ""
    backend_retry_seconds: float = 10.0
    backend_pool_size: int = 8
    recall_weights: dict[str, float] = field(default_factory=recallconfig.defaults)  # [recall]
    # What was read, and from where: "section.key" -> "default" | file name | "env VAR".
    origins: dict[str, str] = field(default_factory=dict)
    problems: tuple[str, ...] = ()
    source: str | None = None  # the config file read, if any
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def automatic_writes(self) -> bool:
        """False in agent-controlled mode: nothing writes on the agent's behalf."""
        return self.memory_mode == "automatic"

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self.half_lives)

    def half_life(self, layer: str, kind: str | None) -> float | None:
        """Half-life in hours for a doc of `layer`/`kind` (None: no decay)."""
        if layer == "ledger":
            return self.half_lives.get(kind or "")
        return self.layer_half_lives.get(layer)

    @property
    def configured_agents(self) -> frozenset[str]:
        """Every agent named in `[roles]`."""
        return frozenset((*self.admins, *self.skills, *self.projects))

    def role_of(self, agent: str | None) -> str:
        if agent is None:
            return "admin"
        if agent in self.admins:
            return "admin"
        if agent in self.skills:
            return "skill"
        return "project"

    def effective(self) -> list[tuple[str, Any, str]]:
        """(name, value, origin) of every setting, for `memstrata config`."""
        rows: list[tuple[str, Any, str]] = []
        for s in SETTINGS:
            rows.append((s.name, getattr(self, s.attr), self.origins.get(s.name, "default")))
        for kind, hours in self.half_lives.items():
            rows.append((f"kinds.{kind}", hours, self.origins.get("kinds", "default")))
        for layer, decay in self.layer_half_lives.items():
            rows.append(
                (f"decay.{layer}", decay or 0, self.origins.get(f"decay.{layer}", "default"))
            )
        rows += recallconfig.rows(self.recall_weights, self.origins)
        return rows


def _suggest(word: str, choices: list[str]) -> str:
    import difflib  # only to suggest a key (start-up)

    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _read_file(home: Path) -> tuple[str | None, dict[str, Any], list[str]]:
    """The first config file present, parsed to a mapping; problems instead of exceptions."""
    present = [n for n in CONFIG_FILES if (home / n).is_file()]
    if not present:
        return None, {}, []
    name = present[0]
    problems = [f"{n}: ignored, {name} is read (keep one config file)" for n in present[1:]]
    path = home / name
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return name, {}, [*problems, f"{name}: cannot be read ({exc}); using defaults"]
    try:
        data = _parse(name, text)
    except ValueError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return (
            name,
            {},
            [
                *problems,
                f"{name}: not valid {name.rsplit('.', 1)[1].upper()} ({first}); using defaults",
            ],
        )
    if not isinstance(data, dict):
        return name, {}, [*problems, f"{name}: the top level must be a table; using defaults"]
    return name, data, problems


def _parse(name: str, text: str) -> Any:
    """TOML or YAML text -> data; any syntax error becomes a ValueError."""
    if name.endswith(".toml"):
        plain = quicktoml.loads(text)  # the usual file, without importing tomllib
        if plain is not None:
            return plain
        import tomllib  # only a file beyond the plain subset (start-up)

        return tomllib.loads(text)  # TOMLDecodeError is a ValueError
    import yaml

    try:
        return yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None


def _flatten_sections(data: Mapping[str, Any]) -> dict[str, Any]:
    """{"tools": {"memory": {...}}} -> {"tools.memory": {...}} for the dotted sections."""
    out: dict[str, Any] = {}
    dotted = {s.section for s in SETTINGS if "." in s.section}
    for name, value in data.items():
        nested = [d for d in dotted if d.startswith(f"{name}.")]
        if nested and isinstance(value, dict):
            for sub, subval in value.items():
                out[f"{name}.{sub}"] = subval
        else:
            out[str(name)] = value
    return out


def load_config(
    home: Path, *, strict: bool = False, env: Mapping[str, str] | None = None
) -> Config:
    """Read the store's config file (if any) and the environment over the defaults.

    Never raises for a bad file unless `strict`: each unusable value keeps its default
    and adds a line to `Config.problems`.
    """
    environ = os.environ if env is None else env
    name, data, problems = _read_file(home)
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    sections = _flatten_sections(data)
    known_sections = sorted({s.section for s in SETTINGS} | set(MAP_SECTIONS))
    by_section: dict[str, dict[str, Setting]] = {}
    for s in SETTINGS:
        by_section.setdefault(s.section, {})[s.key] = s

    aliased: list[tuple[str, str, Any, str]] = []  # MemoryConfig camelCase keys
    half_lives = dict(DEFAULT_HALF_LIVES)
    layer_half_lives = dict(DEFAULT_LAYER_HALF_LIVES)
    for section, body in sections.items():
        where = f"{name}: [{section}]"
        if section not in known_sections:
            problems.append(f"{where}: unknown section{_suggest(section, known_sections)}")
            continue
        if not isinstance(body, dict):
            problems.append(f"{where}: must be a table of keys")
            continue
        if section in MAP_SECTIONS:
            what, parse, _ = MAP_SECTIONS[section]
            parsed: dict[str, float] = {}
            for key, raw in body.items():
                try:
                    parsed[str(key)] = parse(raw)
                except ValueError as exc:
                    problems.append(f"{where} {key}: {what} {exc}")
            if section == "kinds" and parsed:
                half_lives = parsed  # a [kinds] table replaces the six default kinds
                origins["kinds"] = str(name)
            elif section == "decay":
                for key, hours in parsed.items():
                    layer_half_lives[key] = hours or None
                    origins[f"decay.{key}"] = str(name)
            elif section == "recall":
                values["recall_weights"] = recallconfig.merged(
                    parsed, where, problems, origins, str(name)
                )
            continue
        known = by_section[section]
        for key, raw in body.items():
            setting = known.get(str(key))
            alias = MEMORY_CONFIG_ALIASES.get(str(key)) if section == "memory" else None
            if setting is None and alias is not None:
                aliased.append((where, str(key), raw, alias))  # applied after the real keys
                continue
            if setting is None:
                names = sorted(known) + (
                    sorted(MEMORY_CONFIG_ALIASES) if section == "memory" else []
                )
                problems.append(
                    f"{where} {key}: unknown key{_suggest(str(key), names)}"
                    f"; known keys: {', '.join(names)}"
                )
                continue
            try:
                values[setting.attr] = setting.parse(raw)
                origins[setting.name] = str(name)
            except ValueError as exc:
                problems.append(f"{where} {key}: {exc}; using the default {setting.default!r}")
    for where, key, raw, target in aliased:
        setting = next(x for x in SETTINGS if x.name == target)
        if setting.name in origins:
            problems.append(f"{where} {key}: {setting.name} is also set; {key} is ignored")
            continue
        try:
            values[setting.attr] = setting.parse(raw)
            origins[setting.name] = f"{name} ({key})"
        except ValueError as exc:
            problems.append(f"{where} {key}: {exc}; using the default {setting.default!r}")
    for setting in SETTINGS:
        if setting.env and environ.get(setting.env):
            try:
                values[setting.attr] = setting.parse(environ[setting.env])
                origins[setting.name] = f"env {setting.env}"
            except ValueError as exc:
                problems.append(f"${setting.env}: {exc}")
    if strict and problems:
        raise MalformedInput(problems[0])
    return Config(
        half_lives=half_lives,
        layer_half_lives=layer_half_lives,
        origins=origins,
        problems=tuple(problems),
        source=name,
        raw=dict(data),
        **values,
    )


def commented_template() -> str:
    """A config file with every setting commented out at its default, for `memstrata init`."""
    lines = [
        "# memstrata configuration: every key is optional; uncomment to change a default.",
        "# `memstrata config` shows the effective values and where each came from.",
        "",
    ]
    for section, (_, _, help_text) in MAP_SECTIONS.items():
        lines.append(f"# [{section}]  # {help_text}")
        defaults = DEFAULT_HALF_LIVES if section == "kinds" else DEFAULT_LAYER_HALF_LIVES
        defaults = recallconfig.defaults() if section == "recall" else defaults
        lines.extend(f"# {k} = {v:g}" for k, v in defaults.items() if v is not None)
        lines.append("")
    sections: dict[str, list[Setting]] = {}  # rows appended later join their section
    for s in SETTINGS:
        sections.setdefault(s.section, []).append(s)
    for section, rows in sections.items():
        lines.append(f"# [{section}]")
        lines.extend(f"# {s.key} = {_toml_value(s.default)}    # {s.help}" for s in rows)
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _toml_value(v: Any) -> str:
    if v is None:
        return '""'
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, tuple):
        return "[" + ", ".join(f'"{x}"' for x in v) + "]"
    if isinstance(v, str):
        return f'"{v}"'
    return str(v)
