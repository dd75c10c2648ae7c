"""Every caller-supplied size and count has a documented limit, checked before any work that
grows with the input (issue 10 item 8), and the table in docs/configuration.md says what the code does. On
both truths (local files and PostgreSQL): what was stored is read through `store.engine.truth`.

"Before any work that grows with the input" is checked without a stopwatch where it can
be: collections are passed as `Counting` lists, tuples and dicts that count the elements
the code reads, and a refusal may read no more than the limit allows. What cannot be
counted (a 10 MiB string, JSON arriving over MCP) is held to a CPU-time bound
(`_cpu`): a busy machine makes a call wait for a CPU, not use more of it, so the bound
holds under load, while a pass over the input in Python (seconds on these sizes) fails.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memstrata import EntryTooLarge, InvalidInput, MalformedInput, SearchQuery, Store, limits

LIMITS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"


CPU_BOUND_S = 0.5  # CPU seconds a refusal may take (a Python pass over 1M items: > 1 s)


class Counting(list):  # type: ignore[type-arg]
    """A list that counts the elements read from it (class-wide, reset by `reads()`)."""

    read = 0

    def __iter__(self) -> Any:
        for x in super().__iter__():
            Counting.read += 1
            yield x

    def __getitem__(self, i: Any) -> Any:
        Counting.read += 1
        return super().__getitem__(i)


class CountingTuple(tuple):  # type: ignore[type-arg]
    def __iter__(self) -> Any:
        for x in super().__iter__():
            Counting.read += 1
            yield x


class CountingDict(dict):  # type: ignore[type-arg]
    def items(self) -> Any:
        for kv in super().items():
            Counting.read += 1
            yield kv

    def __iter__(self) -> Any:
        for k in super().__iter__():
            Counting.read += 1
            yield k


def reads(call: Callable[[], Any], error: type[Exception] | tuple[type[Exception], ...]) -> int:
    """How many elements `call` read from Counting collections before raising `error`."""
    Counting.read = 0
    with pytest.raises(error):
        call()
    return Counting.read


def _cpu(
    calls: list[Callable[[], Any]], error: type[Exception] | tuple[type[Exception], ...]
) -> float:
    """CPU seconds the calls took, each raising `error`."""
    t = time.thread_time()
    for call in calls:
        with pytest.raises(error):
            call()
    return time.thread_time() - t


@pytest.fixture(autouse=True)
def _on_both_truths(backend: str) -> str:
    return backend


def _stored(store: Store, path: Path) -> bytes | None:
    """A source's bytes as the truth holds them, or None if it does not exist."""
    found = store.engine.read(path)
    return None if found is None else found.data


def _nested(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = CountingDict()
    node = root
    for _ in range(depth):
        node["a"] = CountingDict()
        node = node["a"]
    return root


def test_100k_tags_are_refused_before_they_are_read(store: Store) -> None:
    tags = Counting(f"tag{i}" for i in range(100_000))
    as_tuple = CountingTuple(f"tag{i}" for i in range(100_000))
    for call in (
        lambda: store.ledger.publish("decision", "x", tags=tags),
        lambda: store.ledger.query(tags=tags),
        lambda: store.room().post("x", tags=tags),
        lambda: store.search(SearchQuery(text="x", tags=as_tuple)),
    ):
        assert reads(call, InvalidInput) <= limits.TAGS_PER_ENTRY + 1
    assert _stored(store, store.layout.ledger) is None
    # duplicates count toward the limit; 32 distinct tags are fine
    with pytest.raises(EntryTooLarge):
        store.ledger.publish("decision", "x", tags=["same"] * 33)
    assert len(store.ledger.publish("decision", "x", tags=[f"t{i}" for i in range(32)]).tags) == 32


def test_the_counting_collections_count(store: Store) -> None:
    """The probes above can fail: a call that reads its input is counted."""
    Counting.read = 0
    store.ledger.publish("decision", "x", tags=Counting(f"t{i}" for i in range(32)))
    assert Counting.read >= 32
    Counting.read = 0
    store.agent().log.append("THOUGHT", "x", _nested(3))
    assert Counting.read >= 3


def test_100k_tags_over_mcp_are_refused_cheaply(store: Store) -> None:
    pytest.importorskip("mcp")
    import anyio

    from mcp import Client
    from memstrata.mcp.server import build_server

    async def main() -> tuple[bool, str, float]:
        async with Client(build_server(store, ["all"])) as c:
            t = time.thread_time()  # client and in-memory server share this thread
            r = await c.call_tool(
                "memory_publish",
                {"kind": "decision", "summary": "x", "tags": [f"t{i}" for i in range(100_000)]},
            )
            return bool(r.is_error), r.content[0].text, time.thread_time() - t

    is_error, text, took = anyio.run(main)
    assert is_error and "entry_too_large" in text
    # JSON of 100k tags is encoded, sent and decoded (linear, in C): seconds of CPU
    # would mean work per tag in Python, or worse.
    assert took < 4 * CPU_BOUND_S


def test_log_metadata_has_a_size_and_depth_limit(store: Store) -> None:
    log = store.agent().log
    deep, big = _nested(100_000), {"blob": "x" * (10 * 1024 * 1024)}
    wide = CountingDict((f"k{i}", i) for i in range(1_000_000))
    # json.dumps would raise RecursionError on `deep`: the walk stops at the depth limit
    assert (
        reads(lambda: log.append("THOUGHT", "deep", deep), MalformedInput) <= limits.JSON_DEPTH + 1
    )
    assert reads(lambda: log.append("THOUGHT", "wide", wide), EntryTooLarge) == 0  # len() says it
    assert _cpu([lambda: log.append("THOUGHT", "big", big)], EntryTooLarge) < CPU_BOUND_S
    with pytest.raises(MalformedInput, match="not JSON"):
        log.append("THOUGHT", "odd", {"when": object()})
    assert b"deep" not in (_stored(store, log.path) or b"")
    ok = log.append("THOUGHT", "fine", {"rows": 1200, "nested": _nested(limits.JSON_DEPTH - 2)})
    assert log.tail(1)[0].metadata == ok.metadata


def test_task_fields_are_bounded(store: Store) -> None:
    tasks = store.agent().tasks
    many = Counting(["c"] * 100_000)
    assert reads(lambda: tasks.add("x", acceptance_criteria=many), InvalidInput) <= 1
    assert (
        reads(lambda: tasks.add("x", blocked_by=Counting(["TASK-001"] * 100_000)), InvalidInput)
        <= 1
    )
    assert (
        _cpu(
            [
                lambda: tasks.add("x", milestone="m" * (5 * 1024 * 1024)),
                lambda: tasks.add("x", priority=-99),
                lambda: tasks.add("x", priority=10**9),
                lambda: tasks.add("x", priority=True),
            ],
            InvalidInput,
        )
        < CPU_BOUND_S
    )
    assert _cpu([lambda: tasks.add("d" * (5 * 1024 * 1024))], EntryTooLarge) < CPU_BOUND_S
    assert _stored(store, tasks.path) is None


BAD_TASK_CHANGES: list[dict[str, Any]] = [
    {"priority": -99},
    {"priority": "high"},
    {"priority": 10**9},
    {"milestone": "m" * 5000},
    {"milestone": "M1\n"},
    {"description": ""},
    {"description": "d" * (64 * 1024)},
    {"acceptance_criteria": ["c"] * 100_000},
    {"acceptance_criteria": "not a list"},
    {"acceptance_criteria": ["x" * 5000]},
    {"blocked_by": ["TASK-404"]},
    {"blocked_by": ["TASK-001"]},
]


@pytest.mark.parametrize("change", BAD_TASK_CHANGES, ids=lambda c: f"{next(iter(c))}")
def test_task_update_validates_exactly_as_task_add(store: Store, change: dict[str, Any]) -> None:
    tasks = store.agent().tasks
    tasks.add("first")
    before = _stored(store, tasks.path)
    assert before is not None
    with pytest.raises((InvalidInput, LookupError)):
        tasks.update("TASK-001", **change)
    assert _stored(store, tasks.path) == before
    if "blocked_by" not in change:  # add refuses the same value (blockers: add cannot name itself)
        field = next(iter(change))
        args: dict[str, Any] = {} if field == "description" else {field: change[field]}
        with pytest.raises(InvalidInput):
            tasks.add(change.get("description", "second"), **args)


def test_task_update_over_mcp_refuses_what_task_add_refuses(store: Store) -> None:
    pytest.importorskip("mcp")
    import anyio

    from mcp import Client
    from memstrata.mcp.server import build_server

    async def main() -> list[tuple[bool, str]]:
        async with Client(build_server(store, ["all"])) as c:
            out = []
            for tool, args in (
                ("task_add", {"description": "x", "priority": -99}),
                ("task_add", {"description": "ok"}),
                ("task_update", {"task_id": "TASK-001", "priority": -99}),
            ):
                r = await c.call_tool(tool, args)
                out.append((bool(r.is_error), r.content[0].text))
            return out

    (add_err, _), (ok_err, _), (upd_err, text) = anyio.run(main)
    assert add_err and not ok_err and upd_err and "malformed_input" in text
    assert store.agent().tasks.get("TASK-001").priority == 3


def test_session_messages_are_bounded(store: Store) -> None:
    sessions = store.agent().sessions
    msg = {"role": "user", "content": "x"}
    many, deep = Counting([msg] * 10**6), _nested(100_000)
    assert reads(lambda: sessions.append_many("s1", many), InvalidInput) <= 1
    assert (
        reads(lambda: sessions.append("s1", "tool_call", "", name="read", input=deep), InvalidInput)
        <= limits.JSON_DEPTH + 1
    )
    assert (
        reads(
            lambda: sessions.append("s1", "assistant", deep),  # type: ignore[arg-type]
            InvalidInput,
        )
        <= limits.JSON_DEPTH + 1
    )
    calls: list[Callable[[], Any]] = [
        lambda: sessions.append(
            "s1", "tool_call", "", name="read", input={"a": "x" * (1024 * 1024)}
        ),
        lambda: sessions.append("s1", "user", "x", id="i" * 10_000),
        lambda: sessions.append("s1", "tool_call", "", name="n" * 10_000),
        lambda: sessions.append("s1", "user", "x" * (1024 * 1024)),
    ]
    assert _cpu(calls, InvalidInput) < CPU_BOUND_S
    with pytest.raises(EntryTooLarge):  # a generator stops at the first message too many
        sessions.append_many("s1", (msg for _ in range(10**7)))
    assert sessions.ids() == []


def test_items_now_channel_facts_are_bounded(store: Store) -> None:
    m = store.agent()
    items = store.acting_as(None).items  # items are pipeline-only: written as the store's owner
    for drafts in (
        [{"type": "note", "title": "t", "content": "c", "confidence": "high"}],
        [{"type": "note", "title": "t", "content": "c", "lineNumber": "7"}],
        [{"type": "note", "title": "t" * 5000, "content": "c"}],
        ({"type": "note", "title": "t", "content": "c"} for _ in range(10**7)),
    ):
        with pytest.raises(InvalidInput):
            items.replace_source("doc.md", drafts)
    assert reads(lambda: m.now.update("status", Counting(["step"] * 100_000)), EntryTooLarge) <= 1
    assert (
        reads(lambda: m.facts.set("k", "v", citations=Counting(["c"] * 100_000)), EntryTooLarge)
        <= 1
    )
    assert (
        _cpu([lambda: store.room().post("x", to="a" * (1024 * 1024))], InvalidInput) < CPU_BOUND_S
    )
    assert _cpu([lambda: m.facts.set("k" * 1_000_000, "v")], EntryTooLarge) < CPU_BOUND_S
    assert _stored(store, store.layout.items) is None and _stored(store, m.facts.path) is None


def test_the_documented_limits_table_matches_the_code() -> None:
    text = LIMITS_PAGE.read_text(encoding="utf-8")
    rows = re.findall(r"^\| [^|]+\| `limits\.([A-Z_]+)` \| ([^|]+) \|", text, re.M)
    assert len(rows) >= 20
    for name, shown in rows:
        value = getattr(limits, name)
        words = shown.strip().replace(",", "")
        if words.endswith("MiB"):
            expected = int(words.split()[0]) * limits.MIB
        elif words.endswith("KiB"):
            expected = int(words.split()[0]) * limits.KIB
        else:
            expected = int(words.split()[0])
        assert value == expected, (name, shown)
    documented = {name for name, _ in rows}
    public = {n for n in dir(limits) if n.isupper() and n not in ("KIB", "MIB")}
    assert public == documented, public ^ documented
