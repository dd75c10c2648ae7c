"""What the command modules share: opening the store from the common options,
reading user-supplied JSON and text, and rendering plain-text tables.

Everything heavy (the store, the layers) is imported inside the functions, so
importing a command module costs nothing at start-up.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

    from memstrata.errors import Conflict
    from memstrata.layers.agent import AgentMemory
    from memstrata.store.view import Store

from memstrata.model import DEFAULT_AGENT as DEFAULT_AGENT  # every surface's default agent

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_NOT_FOUND, EXIT_CONFLICT = 0, 1, 2, 3, 4  # `main.exit_code`
EXIT_INTERRUPTED = 130

_json_stderr = False  # under --json every line on stderr is one JSON object (`main` sets it)


def json_stderr(on: bool) -> None:
    """Under --json, warnings, notices and progress go to stderr as JSON lines."""
    global _json_stderr
    _json_stderr = on


def wants_json(argv: Sequence[str]) -> bool:
    return "--json" in argv


def report(code: str, message: str, exit_status: int, *, as_json: bool) -> None:
    """An error as one line on stderr, or under --json one JSON object (`cli.main`)."""
    if as_json:
        sys.stderr.write(
            json.dumps(
                {"error": {"code": code, "message": message, "exit": exit_status}},
                ensure_ascii=False,
            )
            + "\n"
        )
    else:
        sys.stderr.write(f"memstrata: error: {message}\n")


def shown(args: argparse.Namespace, value: Any) -> Any:
    """`value` as the CLI prints it: secrets withheld unless `--reveal` (an agent with a
    shell reads this output as its context; a person asks for the raw value)."""
    if getattr(args, "reveal", False):
        return value
    from memstrata.policy.secrets import withhold

    return withhold(value)


def emit(args: argparse.Namespace, data: Any, text: str | None = None) -> None:
    data, text = shown(args, data), shown(args, text)
    if args.json:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
    else:
        sys.stdout.write((text if text is not None else str(data)).rstrip("\n") + "\n")


def say(kind: str, message: str) -> None:
    """One line on stderr: `memstrata: warning: ...`, or under --json
    `{"warning": {"message": "..."}}` (kind: warning or notice)."""
    if _json_stderr:
        sys.stderr.write(json.dumps({kind: {"message": message}}, ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(f"memstrata: {kind}: {message}\n")


def command_name() -> str:
    """How to run this very program again, for the hints the CLI prints.

    "memstrata" when that name on PATH is this program; otherwise the absolute
    path of the running entry point (e.g. `.venv/bin/memstrata` when the venv is not
    activated), so that every printed hint works when pasted as printed.
    """
    import os
    import shutil

    me = os.path.realpath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    found = shutil.which("memstrata")
    if found and (not me or os.path.realpath(found) == me):
        return "memstrata"
    if me.endswith("__main__.py"):  # python -m memstrata
        return f"{sys.executable} -m memstrata"
    if os.path.basename(me).startswith("memstrata"):
        return os.path.abspath(sys.argv[0])
    return "memstrata"


def port_taken(host: str, port: int, exc: OSError) -> Conflict:
    """The error of a port another process holds, naming both ways to choose another:
    `--port` on the command line and `PORT=` for `make run` (which passes it on)."""
    from memstrata.errors import Conflict

    other = port + 1 if 0 < port < 65535 else 8766
    return Conflict(
        f"cannot listen on {host}:{port}: {exc.strerror or exc} (another server there? "
        f"pick another port: --port {other}, or with make: make run PORT={other})"
    )


def open_store(args: argparse.Namespace, *, as_agent: bool = True, sync: bool = True) -> Store:
    """The store named by --home, acting as --agent (default "agent") in --room.

    `as_agent=False` opens it for the whole store: without --agent the principal
    is anonymous and therefore admin, which store-wide commands (ledger, search,
    reindex, doctor) need to see everything.

    A command ends once it answers: it never starts the folder watcher (which `auto`
    starts for a store still read a second after opening, as a slow first semantic
    query is: 0.3 s of CPU for nothing). Its reads see every write all the same: the
    opening catch-up, other writers' notes (`index/notes.py`), the generation check.
    """
    from memstrata.store.view import Store

    agent = (args.agent or DEFAULT_AGENT) if as_agent else args.agent
    store = Store(args.home, agent=agent, room=args.room, role=args.role, sync=sync, watch=False)
    warn_config(store, named=args.agent is not None)
    store.notice_sink = _print_warning  # secrets policy `warn`: one stderr line each
    build_via_daemon(store)
    return store


DAEMON_BUILT = ("local", "minilm")  # embedders whose model is slow to load in every process


def build_via_daemon(store: Store) -> None:
    """Vectors of what a CLI write changed are built by the embedding daemon after the
    command returns (the CLI process ends at once), for embedders that load a model."""
    from memstrata.embed import DEFAULT_SPEC, daemon_enabled

    spec = store.config.embedder or DEFAULT_SPEC
    if spec.split(":", 1)[0] in DAEMON_BUILT and daemon_enabled():
        store.semantic.builds = "daemon"


def _print_warning(message: str) -> None:
    say("warning", message)


def embed_via_daemon(store: Store) -> None:
    """Let the CLI embed through the per-user daemon that keeps the local model loaded
    (`memstrata.embed.daemon`): the first semantic query starts it, later ones reuse it."""
    from memstrata.embed import daemon

    spec = store.config.embedder
    if spec and spec.split(":", 1)[0] == "local" and daemon.enabled():
        store.use_embedder(daemon.DaemonEmbedder(spec))


def warn_config(store: Store, *, named: bool = True) -> None:
    """One stderr line per config problem: a broken setting keeps its default, loudly;
    and one if the acting agent, when the user `named` it, is new to this store (a typo
    such as `--agent fnn`; the default agent is never a typo); one per store notice (a
    read-only store searched through a private index copy)."""
    for problem in store.config.problems:
        say("warning", problem)
    agent = store.principal.agent
    if named and agent is not None and not store.has_agent(agent):
        say(
            "warning",
            f"agent {agent!r} has no memory in {store.home} yet"
            f"{store.suggest_agent(agent)}; its first write creates it "
            f"(or run `memstrata init {agent}`)",
        )
    for notice in store.notices:
        say("notice", notice)


def agent_memory(args: argparse.Namespace) -> tuple[Store, AgentMemory]:
    store = open_store(args)
    return store, store.agent()


def json_object(text: str | None, what: str) -> dict[str, Any] | None:
    """Parse a JSON object given on the command line; MalformedInput if it is not one."""
    from memstrata.errors import MalformedInput

    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedInput(f"{what} is not valid JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(value, dict):
        raise MalformedInput(f"{what} must be a JSON object, got {type(value).__name__}")
    return value


def json_value(text: str | None, what: str) -> Any:
    from memstrata.errors import MalformedInput

    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedInput(f"{what} is not valid JSON: {exc.msg} at column {exc.colno}") from None


def text_arg(value: str) -> str:
    """A text argument; `-` reads it from stdin (for long or multi-line content)."""
    return sys.stdin.read() if value == "-" else value


def table(rows: Iterable[Sequence[object]], headers: Sequence[str], *, width: int = 60) -> str:
    """A left-aligned plain-text table; cells are flattened to one line and clipped."""
    cells = [[_cell(v, width) for v in row] for row in rows]
    if not cells:
        return "(none)"
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.upper().ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    for r in cells:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return "\n".join(lines)


def _cell(value: object, width: int) -> str:
    if value is None:
        return "-"
    if isinstance(value, list | tuple):
        value = ", ".join(str(v) for v in value)
    flat = " ".join(str(value).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def fields(obj: Any) -> dict[str, Any]:
    """A frozen dataclass as a JSON-ready dict (tuples become lists)."""
    from dataclasses import asdict

    if hasattr(obj, "to_dict"):
        return dict(obj.to_dict())
    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(obj).items()}


def progress(message: str) -> None:
    if _json_stderr:
        sys.stderr.write(json.dumps({"progress": message}, ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(message + "\n")
    sys.stderr.flush()


class Progress:
    """A one-line progress indicator on stderr: redrawn on a terminal, every 10% otherwise
    (as a JSON line under --json)."""

    def __init__(self, label: str, total: int, *, unit: str = "", enabled: bool = True) -> None:
        self.label, self.total, self.enabled = label, total, enabled and total > 0
        self.unit = f" {unit}" if unit else ""
        self.tty = sys.stderr.isatty() and not _json_stderr
        self.last = -1

    def __call__(self, done: int) -> None:
        if not self.enabled:
            return
        pct = 100 * done // self.total
        if _json_stderr:  # under --json: a JSON line every 10%
            if pct // 10 != self.last // 10 or done >= self.total:
                sys.stderr.write(
                    json.dumps(
                        {
                            "progress": {
                                "label": self.label,
                                "done": done,
                                "total": self.total,
                                "percent": pct,
                            }
                        }
                    )
                    + "\n"
                )
        elif self.tty:
            sys.stderr.write(f"\r{self.label}: {done}/{self.total}{self.unit} ({pct}%)")
            if done >= self.total:
                sys.stderr.write("\n")
        elif pct // 10 != self.last // 10 or done >= self.total:
            sys.stderr.write(f"{self.label}: {done}/{self.total}{self.unit} ({pct}%)\n")
        self.last = pct
        sys.stderr.flush()
