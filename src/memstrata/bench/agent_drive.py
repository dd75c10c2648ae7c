"""The surfaces `bench agent` drives, in process but through the real code paths.

* `VirtualClock`: the wall clock the library reads (`time.time`, which every
  timestamp and every decay "now" come from; deadlines use `time.monotonic` and
  are left alone). It is frozen within a step and moved forward by the runner,
  so sessions span days and weeks and every run writes the same timestamps.
  Files keep the kernel's mtime, which is the real time: after each step
  `stamp_files` sets the mtime of every file changed in it to the virtual time,
  as if the machine's clock had said so (Markdown chunks are dated by their
  file's mtime).
* `Transcript`: a session transcript as Claude Code writes it (JSONL records with
  uuid, parentUuid, timestamp, message; tool_use / tool_result blocks; the
  compaction boundary and summary), at a path like Claude Code's.
* `HookRunner`: `memstrata hook EVENT` through its CLI entry (`run_hook`, with the
  arguments the README's hook config gives, plus `--home`), fed the hook's JSON on
  stdin, with the working directory and `$CLAUDE_PROJECT_DIR` Claude Code gives a
  hook. One call opens and closes its own store, as one hook process does.
* `McpAgent`: the MCP server object of `memstrata mcp --http` (`build_server`, its
  store opened as that command opens it, the start-up upkeep run), reached through
  the MCP SDK's in-memory client. Tools are discovered from `tools/list`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memstrata.cli.parser import build_parser
from memstrata.embed import daemon
from memstrata.lifecycle.maintain import start_maintenance
from memstrata.mcp.server import build_server, select_tools
from memstrata.model import iso
from memstrata.store.view import Store

UUID_NAMESPACE = uuid.UUID("6f1d3c1e-5b0a-4c55-9a53-0c1f6b1e2a77")
SKIP_DIRS = frozenset({"index", ".locks", ".imports"})
CLAUDE_VERSION = "2.0.14"
MODEL = "claude-sonnet-4-5-20250929"


def parse_when(text: str) -> float:
    """'2026-03-02' or '2026-03-02T09:00:00Z' -> epoch seconds (a time without a zone is UTC)."""
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()


class VirtualClock:
    """`time.time` as the bench sets it, while installed (`with clock:`)."""

    def __init__(self, start: float) -> None:
        self.now = start
        self._real: Callable[[], float] | None = None

    def __enter__(self) -> VirtualClock:
        self._real = time.time
        time.time = self._time
        return self

    def __exit__(self, *exc: object) -> None:
        if self._real is not None:
            time.time = self._real
            self._real = None

    def _time(self) -> float:
        return self.now

    def set(self, ts: float) -> None:
        if ts < self.now:
            raise ValueError(f"the clock cannot go back ({iso(ts)} < {iso(self.now)})")
        self.now = ts

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def iso(self) -> str:
        return iso(self.now)

    def stamp_files(self, root: Path) -> int:
        """Give every file under `root` newer than the virtual clock (written by this step
        at the kernel's real time) the virtual time as its mtime; the index, locks and
        dot-files are left alone. Returns how many files were stamped."""
        stamped = 0
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")]
            for name in files:
                if name.startswith("."):
                    continue
                path = os.path.join(folder, name)
                try:
                    if os.stat(path).st_mtime > self.now + 0.5:
                        os.utime(path, (self.now, self.now))
                        stamped += 1
                except FileNotFoundError:  # removed meanwhile (an archive rename)
                    continue
        return stamped


class SeededIds:
    """`os.urandom` from seeded generators, while installed (`with SeededIds(seed):`).

    The library names what it writes with random ids (`log-…`, `arc-…`, `mem-…`) and some
    of them land in indexed text (a compaction digest, a capture notice): their token
    counts would move near-ties in BM25 from run to run. Seeded, every run writes the same
    ids. Each call site (the function that asked, below `uuid`, `secrets` and `random`)
    and thread name draws from its own stream, so no other code's draws shift the
    library's: modules imported lazily during the first scenario of a process draw at
    import time (`opentelemetry.context` takes three `uuid4()`s), the MCP SDK draws per
    server and client, and one shared stream handed the first scenario other ids than it
    gets after another scenario ran (web-quillmark 0.577 / 0.885 alone, 0.577 / 0.846
    after the others). A compaction job runs in a thread of its own while the MCP client
    answers in another: per thread, the order the threads ran in does not matter either.
    Nothing else changes: the ids stay unique within a run."""

    def __init__(self, seed: int) -> None:
        self._seed = seed
        self._streams: dict[str, random.Random] = {}
        self._lock = threading.Lock()
        self._real: Callable[[int], bytes] | None = None

    def _urandom(self, n: int) -> bytes:
        key = f"{threading.current_thread().name}/{_call_site(sys._getframe(1))}"
        with self._lock:
            rng = self._streams.get(key)
            if rng is None:
                rng = self._streams[key] = random.Random(f"{self._seed}/{key}")
            return rng.randbytes(n)

    def __enter__(self) -> SeededIds:
        self._real = os.urandom
        os.urandom = self._urandom
        return self

    def __exit__(self, *exc: object) -> None:
        if self._real is not None:
            os.urandom = self._real
            self._real = None


# The standard library's wrappers around `os.urandom`: the draw is the caller's.
_WRAPPERS = frozenset({"uuid", "secrets", "random"})


def _call_site(frame: Any) -> str:
    """'module.function' of the first frame outside `_WRAPPERS`: not its line, so an edit
    elsewhere in the module does not move the ids it draws."""
    while frame is not None and frame.f_globals.get("__name__") in _WRAPPERS:
        frame = frame.f_back
    if frame is None:
        return "?"
    return f"{frame.f_globals.get('__name__')}.{frame.f_code.co_qualname}"


@contextlib.contextmanager
def default_environment() -> Iterator[None]:
    """No `MEMSTRATA_*` variable while the bench runs: its stores use their defaults (a
    `MEMSTRATA_DATABASE_URL`, `MEMSTRATA_EMBEDDER` or `MEMSTRATA_ROOM` of the shell would
    move the figures, or the data); the local time zone is UTC, so the contexts'
    "current date and time" line reads the same on every machine; and no embedding
    daemon is asked to build vectors (the bench builds them, `ScenarioRun.embed`)."""
    saved = {k: v for k, v in os.environ.items() if k.startswith("MEMSTRATA_") or k == "TZ"}
    for key in saved:
        del os.environ[key]
    os.environ["TZ"] = "UTC"
    time.tzset()
    # A hook process asks the embedding daemon to build what it wrote (`semantic.later`);
    # the bench builds it itself at the end of the step (`ScenarioRun.embed`), in order.
    request_build = daemon.request_build
    daemon.request_build = lambda spec, home: None
    try:
        yield
    finally:
        daemon.request_build = request_build
        del os.environ["TZ"]
        os.environ.update(saved)
        time.tzset()


def stable_uuid(*parts: str) -> str:
    return str(uuid.uuid5(UUID_NAMESPACE, "/".join(parts)))


class Transcript:
    """One Claude Code session transcript (`~/.claude/projects/<slug>/<session>.jsonl`)."""

    def __init__(self, path: Path, session_id: str, cwd: Path, clock: VirtualClock) -> None:
        self.path = path
        self.session_id = session_id
        self.cwd = str(cwd)
        self.clock = clock
        self.parent: str | None = None
        self.n = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()

    def _id(self, kind: str) -> str:
        self.n += 1
        return stable_uuid(self.session_id, kind, str(self.n))

    def _write(self, record: dict[str, Any]) -> str:
        uid = self._id("record")
        full = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": CLAUDE_VERSION,
            "gitBranch": "main",
            **record,
            "uuid": uid,
            "timestamp": self.clock.iso(),
        }
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(full, ensure_ascii=False) + "\n")
        self.parent = uid
        return uid

    def user(self, text: str, **extra: Any) -> str:
        return self._write({"type": "user", "message": {"role": "user", "content": text}, **extra})

    def _assistant(self, block: dict[str, Any]) -> str:
        message = {
            "id": "msg_" + self._id("msg").replace("-", "")[:24],
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [block],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 4, "output_tokens": 120},
        }
        return self._write(
            {"type": "assistant", "message": message, "requestId": "req_" + self._id("req")[:18]}
        )

    def assistant_text(self, text: str) -> str:
        return self._assistant({"type": "text", "text": text})

    def tool_use(self, name: str, tool_input: dict[str, Any]) -> str:
        tool_id = "toolu_" + self._id("tool").replace("-", "")[:24]
        self._assistant({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        return tool_id

    def tool_result(
        self, tool_id: str, content: str, result: Any = None, *, is_error: bool = False
    ) -> str:
        block: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        if is_error:
            block["is_error"] = True
        extra = {"toolUseResult": result if result is not None else content}
        return self._write(
            {"type": "user", "message": {"role": "user", "content": [block]}, **extra}
        )

    def compact(self, summary: str, pre_tokens: int) -> None:
        """What Claude Code appends when it compacts: a boundary, then the summary as a
        user message the model reads (`isCompactSummary`)."""
        self._write(
            {
                "type": "system",
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "isMeta": False,
                "level": "info",
                "compactMetadata": {"trigger": "auto", "preTokens": pre_tokens},
            }
        )
        self.user(
            "This session is being continued from a previous conversation that ran out of "
            "context. The conversation is summarized below:\n" + summary,
            isCompactSummary=True,
            isVisibleInTranscriptOnly=True,
        )


class HookRunner:
    """`memstrata --home H --agent A hook EVENT`, one call per hook, as Claude Code runs it."""

    def __init__(self, home: Path, agent: str, project: Path) -> None:

        self.home = home
        self.agent = agent
        self.project = project
        self._parser = build_parser()
        self.errors: list[str] = []  # what a hook reported on stderr as its failure
        self.calls = 0

    def fire(self, event: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        """Run the hook with `payload` on stdin; its stdout JSON, or None if it printed none."""
        argv = ["--home", str(self.home), "--agent", self.agent, "hook", event]
        args = self._parser.parse_args(argv)
        out, err = io.StringIO(), io.StringIO()
        with _process_like(self.project, payload, out, err):
            args.func(args)
        self.calls += 1
        for line in err.getvalue().splitlines():
            if line.startswith(f"memstrata hook {event}:"):
                self.errors.append(line)
        text = out.getvalue().strip()
        if not text:
            return None
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            self.errors.append(f"memstrata hook {event}: stdout is not JSON: {text[:200]}")
            return None
        return parsed if isinstance(parsed, dict) else None


@contextlib.contextmanager
def _process_like(
    cwd: Path, payload: dict[str, Any], out: io.StringIO, err: io.StringIO
) -> Iterator[None]:
    """stdin, stdout, stderr, cwd and $CLAUDE_PROJECT_DIR as a hook process has them."""
    saved = (sys.stdin, sys.stdout, sys.stderr, os.getcwd(), os.environ.get("CLAUDE_PROJECT_DIR"))
    sys.stdin = io.StringIO(json.dumps(payload, ensure_ascii=False))
    sys.stdout, sys.stderr = out, err
    os.environ["CLAUDE_PROJECT_DIR"] = str(cwd)
    os.chdir(cwd)
    try:
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved[0], saved[1], saved[2]
        os.chdir(saved[3])
        if saved[4] is None:
            os.environ.pop("CLAUDE_PROJECT_DIR", None)
        else:
            os.environ["CLAUDE_PROJECT_DIR"] = saved[4]


class ToolFailed(Exception):
    """An MCP tool answered with an error: the bench reports it (a scenario bug or a crash)."""


class McpAgent:
    """One agent's MCP session: the server object over its own store, an in-memory client."""

    def __init__(self, home: Path, agent: str, tools: list[str], room: str | None = None) -> None:
        self.home = home
        self.agent = agent
        self.room = room
        self.tool_names = tools
        self.listed: dict[str, dict[str, Any]] = {}  # tool name -> its inputSchema
        self.unlisted: list[str] = []
        self._stack = contextlib.AsyncExitStack()
        self.store: Any = None
        self.client: Any = None
        self.calls = 0

    async def __aenter__(self) -> McpAgent:
        from mcp import Client

        # As `memstrata mcp --http` opens it: watching its folder, caught up, upkeep started.
        self.store = Store(self.home, agent=self.agent, room=self.room, watch=True)
        self._stack.callback(self.store.close)
        self.store.sync()
        start_maintenance(self.store)
        self.store.drain()

        self.unlisted = sorted(  # tools the server has but this agent's `--tools` leaves out
            {s.name for s in select_tools(self.store, ["all"])}
            - {s.name for s in select_tools(self.store, self.tool_names)}
        )
        server = build_server(self.store, self.tool_names)
        self.client = await self._stack.enter_async_context(Client(server))
        listing = await self.client.list_tools()
        self.listed = {t.name: dict(t.input_schema or {}) for t in listing.tools}
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    def has(self, name: str) -> bool:
        return name in self.listed

    async def call(self, name: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """(text, structured content) of a tool call; ToolFailed if the tool said error."""
        result = await self.client.call_tool(name, args)
        self.store.drain()  # work the call started in the background ends before the next step
        self.calls += 1
        text = "\n".join(getattr(c, "text", "") for c in result.content)
        if result.is_error:
            raise ToolFailed(f"{name}({json.dumps(args, ensure_ascii=False)[:300]}): {text}")
        return text, dict(result.structured_content or {})

    async def read(self, uri: str) -> str:
        result = await self.client.read_resource(uri)
        return "\n".join(getattr(c, "text", "") for c in result.contents)
