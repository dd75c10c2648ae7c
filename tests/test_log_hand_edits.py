"""LOG.md is a file people edit: whatever they save stays visible (issue 9 item 3).

Each variant is checked through an already-open store (the incremental path an
append source takes), after a reindex (uids stable), and through the real CLI.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from memstrata import Store
from memstrata.assembly.context import assemble_context
from memstrata.files.locks import LockTable
from memstrata.layers.log import encode_entry, parse_log
from memstrata.model import LogEntry

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"
HAND = "### 2026-11-01T09:00:00Z · USER_FEEDBACK\n"


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, "--home", str(home), "--agent", "finn", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _found(store: Store, word: str) -> list[str]:
    return [h.uid for h in store.search(word, layers=("log",))]


def _log_uids(store: Store) -> set[str]:
    with store.db.read() as conn:
        return {r[0] for r in conn.execute("SELECT uid FROM docs WHERE layer = 'log'")}


def _crlf(log: Path, first: str) -> list[str]:
    log.write_bytes(log.read_bytes().replace(b"\n", b"\r\n"))
    with open(log, "ab") as fh:
        fh.write(
            (HAND + "typed on windows: kiwi\n<!-- log-0a0b0c0d {} -->\n\n")
            .replace("\n", "\r\n")
            .encode()
        )
    return ["kiwi"]


def _footerless_last(log: Path, first: str) -> list[str]:
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(HAND + "no footer, last in the file: zebra\n")
    return ["zebra"]


def _footerless_no_newline(log: Path, first: str) -> list[str]:
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(HAND + "no footer, no final newline: quokka")
    return ["quokka"]


def _duplicated_id(log: Path, first: str) -> list[str]:
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"{HAND}copied the footer of the first entry: walrus\n<!-- {first} {{}} -->\n\n")
    return ["walrus"]


def _stray_text(log: Path, first: str) -> list[str]:
    text = log.read_text(encoding="utf-8")
    cut = text.index(f"<!-- {first} ")
    cut = text.index("\n", cut) + 1
    log.write_text(
        text[:cut] + "\na stray remark about penguins\n" + text[cut:] + "closing note: marmot\n",
        encoding="utf-8",
    )
    return ["penguins", "marmot"]


VARIANTS: dict[str, Callable[[Path, str], list[str]]] = {
    "crlf": _crlf,
    "footerless-last": _footerless_last,
    "footerless-no-newline": _footerless_no_newline,
    "duplicated-id": _duplicated_id,
    "stray-text": _stray_text,
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_hand_edited_entry_is_found_by_search_tail_and_context(
    home: Path, variant: str
) -> None:
    store = Store(home, agent="finn")
    log = store.agent().log
    first = log.append("THOUGHT", "written through the api: aardvark")
    log.append("TOOL_USE", "second api entry: buffalo")
    assert _found(store, "aardvark")  # indexed before the hand edit
    words = ["aardvark", "buffalo", *VARIANTS[variant](log.path, first.id)]

    def check(s: Store) -> set[str]:
        for w in words:
            assert _found(s, w), (variant, w)
        tail = " ".join(e.content for e in s.agent().log.tail(50))
        text = assemble_context(s, "finn").text
        for w in words:
            assert w in tail, (variant, w, tail)
            assert w in text, (variant, w)
        return _log_uids(s)

    store.close()
    opened = Store(home, agent="finn")  # catches up from where the index stopped
    incremental = check(opened)
    opened.close()
    again = Store(home, agent="finn")
    again.reindex()
    assert check(again) == incremental  # uids stable across reindex
    if variant == "duplicated-id":
        assert len([u for u in incremental if first.id in u]) == 2
        assert f"log:finn:{first.id}" in _found(again, "aardvark")  # the original kept its uid
    again.close()


def test_all_variants_at_once_through_the_real_cli(home: Path) -> None:
    store = Store(home, agent="finn")
    first = store.agent().log.append("THOUGHT", "written through the api: aardvark")
    path = store.agent().log.path
    store.close()
    words = ["aardvark"]
    for name in ("stray-text", "duplicated-id", "crlf", "footerless-last"):
        words += VARIANTS[name](path, first.id)
    tail = _cli(home, "--json", "log", "tail", "-n", "50")
    assert tail.returncode == 0, tail.stderr
    contents = " ".join(e["content"] for e in json.loads(tail.stdout))
    ctx = _cli(home, "context")
    assert ctx.returncode == 0, ctx.stderr
    for w in words:
        found = _cli(home, "--json", "search", w)
        assert found.returncode == 0 and json.loads(found.stdout), (w, found.stderr)
        assert w in contents and w in ctx.stdout, w
    doctor = _cli(home, "--json", "doctor")
    report = json.loads(doctor.stdout)
    assert report["drift"] == []  # the index holds exactly what the file says
    assert any("duplicate entry id" in b["reason"] for b in report["bad_lines"])


def test_a_block_our_writer_is_still_writing_is_not_taken_for_a_hand_entry(home: Path) -> None:
    """Half an entry while the writer holds the file's lock stays pending; the whole entry
    is indexed once, under its own id, with no ghost left behind."""
    store = Store(home, agent="finn")
    log = store.agent().log
    log.append("THOUGHT", "before")
    entry = LogEntry(
        "log-00c0ffee", "2026-11-01T09:00:00.000Z", "THOUGHT", "slow writer: narwhal", {}
    )
    data = encode_entry(entry)
    other = LockTable(store.layout.locks)  # another open file description: flock excludes us
    with other.hold(str(log.path)):
        with open(log.path, "ab") as fh:
            fh.write(data[:-30])  # header and content, footer not yet written
        assert "narwhal" not in " ".join(e.content for e in log.tail(10))
        assert not _found(store, "narwhal")
        with open(log.path, "ab") as fh:
            fh.write(data[-30:])
    assert [e.id for e in log.tail(10)] == [log.tail(10)[0].id, "log-00c0ffee"]
    assert _found(store, "narwhal") == ["log:finn:log-00c0ffee"]
    other.close()
    store.close()


def test_hand_entry_without_footer_becomes_visible_to_an_open_store(home: Path) -> None:
    store = Store(home, agent="finn")
    log = store.agent().log
    log.append("THOUGHT", "api entry")
    with open(log.path, "a", encoding="utf-8") as fh:
        fh.write(HAND + "typed while the store was open: okapi\n")
    assert [e.content for e in log.tail(5)][-1] == "typed while the store was open: okapi"
    log.append(
        "THOUGHT", "api entry after the hand one"
    )  # the hand entry is neither lost nor doubled
    assert [e.content for e in log.tail(5)] == [
        "api entry",
        "typed while the store was open: okapi",
        "api entry after the hand one",
    ]
    assert log.path.read_text(encoding="utf-8").count("okapi") == 1
    store.close()


@pytest.mark.parametrize("ending", ["\n", "", "\r\n\r\n"])
def test_hand_entry_then_an_api_append_indexes_both(home: Path, ending: str) -> None:
    """The writer indexes the hand block it finds before its own write (the gap) at once."""
    store = Store(home, agent="finn")
    log = store.agent().log
    log.append("THOUGHT", "api entry")
    with open(log.path, "a", encoding="utf-8", newline="") as fh:
        fh.write(HAND + "typed, then the agent wrote: tapir" + ending)
    log.append("THOUGHT", "api entry after it")  # no read in between: the gap path
    with store.db.read() as conn:
        bodies = [
            r[0] for r in conn.execute("SELECT body FROM docs WHERE layer = 'log' ORDER BY pos")
        ]
    assert bodies == ["api entry", "typed, then the agent wrote: tapir", "api entry after it"]
    store.close()


def test_parser_keeps_what_it_cannot_read_and_reports_it() -> None:
    data = (
        "# LOG\n\nnotes a person put at the top\n\n"
        "### 2026-11-01T09:00:00Z · THOUGHT\nfine\n<!-- log-00000001 {} -->\n\n"
        "### 2026-11-01T09:01:00Z · THOUGHT\nbad metadata\n<!-- log-00000002 {nope} -->\n\n"
        "### yesterday · thought\nbad timestamp, lower-case type\n\n"
        "### 2026-11-01T09:02:00Z · TOOL_USE\ntorn by a killed writer\n<!-- log-0000\n\n"
        "### 2026-11-01T09:03:00Z · THOUGHT\nafter the torn one\n<!-- log-00000003 {} -->\n\n"
    ).encode()
    parsed = parse_log(data, 0, "LOG.md", owner="finn", final=True)
    bodies = [d.body for d in parsed.docs]
    assert bodies == [
        "notes a person put at the top",
        "fine",
        "bad metadata",
        "bad timestamp, lower-case type",
        "torn by a killed writer",
        "after the torn one",
    ]
    assert [d.kind for d in parsed.docs] == [
        "TEXT",
        "THOUGHT",
        "THOUGHT",
        "THOUGHT",
        "TOOL_USE",
        "THOUGHT",
    ]
    reasons = " | ".join(b.reason for b in parsed.bad)
    assert len(parsed.bad) == 3, reasons
    assert (
        "not JSON" in reasons and "invalid timestamp" in reasons and "footer cut short" in reasons
    )
    assert parsed.consumed == len(data)
    # incrementally, the last block is pending until something follows it
    pending = parse_log(data[:-8], 0, "LOG.md", owner="finn")  # footer line incomplete
    assert [d.body for d in pending.docs][-1] == "torn by a killed writer"
    assert pending.consumed == data.index(b"### 2026-11-01T09:03")
    assert all(data[d.pos or 0 :].startswith(b"### ") for d in parsed.docs[1:])  # offsets exact


def test_doctor_reports_what_it_could_not_parse_instead_of_ok(home: Path) -> None:
    store = Store(home, agent="finn")
    mem = store.agent()
    mem.log.append("THOUGHT", "a clean entry")
    mem.facts.set("editor", "helix")
    store.close()
    clean = _cli(home, "doctor")
    assert clean.returncode == 0 and "result: OK" in clean.stdout
    with open(mem.log.path, "a", encoding="utf-8") as fh:
        fh.write(HAND + "footer cut by a crash: ocelot\n<!-- log-12ab\n\n")
        fh.write(HAND + "metadata mangled by hand: lynx\n<!-- log-0000abcd {oops} -->\n\n")
    with open(mem.facts.path, "a", encoding="utf-8") as fh:
        fh.write('{"op": "set", "key": "half a line\n')
    assert _cli(home, "log", "tail").returncode == 0  # any command catches the index up
    text = _cli(home, "doctor")
    assert text.returncode == 1 and "result: OK" not in text.stdout
    assert "FILE PROBLEMS" in text.stdout
    report = json.loads(_cli(home, "--json", "doctor").stdout)
    assert report["ok"] is False and report["index_ok"] is True and report["files_ok"] is False
    where = {(b["source"], b["reason"].split(":")[0]) for b in report["bad_lines"]}
    assert where == {
        ("agents/finn/memory/LOG.md", "LOG entry"),
        ("agents/finn/facts.jsonl", "invalid JSON"),
    }
    assert len([b for b in report["bad_lines"] if b["source"].endswith("LOG.md")]) == 2
    for word in ("ocelot", "lynx"):  # reported, and still entries
        assert json.loads(_cli(home, "--json", "search", word).stdout)
