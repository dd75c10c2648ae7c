"""Records written in one millisecond: which is newer is decided the same way everywhere.

Times are kept to the millisecond, and a fast machine (CI) writes several records in one:
their `ts` tie. Of two records appended to one time-ordered file (LOG.md, a LOG archive,
the ledger, a transcript), the later in the file is the newer (`search.newer`); records of
other files stay tied, in a deterministic order (uid). The stores here write under a
frozen clock, as the fast machine does."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memstrata import SearchQuery, Store
from memstrata.embed.base import FakeEmbedder
from memstrata.search.coverage import QueryTerm
from memstrata.search.newer import is_older, oldest_first
from memstrata.search.priors import PriorSettings, apply_priors, replaced_decisions
from memstrata.search.query import Hit

T0 = 1_790_000_000.123
OLD = "Decision: the PDF export uses WeasyPrint with HTML templates"
NEW = "Decision: replace WeasyPrint with ReportLab for the PDF export"


@pytest.fixture
def one_millisecond(monkeypatch: pytest.MonkeyPatch) -> float:
    """A clock that does not move: every write of the test happens in one millisecond."""
    for module in ("memstrata.layers.log", "memstrata.layers.ledger"):
        monkeypatch.setattr(f"{module}.now_ts", lambda: T0)
    return T0


def _log(uid: str, text: str, line: int | None, score: float = 1.0, **kw: object) -> Hit:
    meta = {"entry_type": "THOUGHT", "content": text, "metadata": {}}
    hit = Hit(uid, "log", score, "THOUGHT", text, text, T0, "/h/agents/coder/LOG.md", meta=meta)
    return hit.but(line=line, kind="THOUGHT", **kw)


def test_a_decision_replaced_in_the_same_millisecond_is_not_current(
    store: Store, one_millisecond: float
) -> None:
    """CI: the replacing decision, written in the millisecond of the one it replaces, was
    not newer than it (equal ts), so the old one kept its worth and stayed on top."""
    log = store.agent().log
    old = log.append("THOUGHT", OLD)
    new = log.append("THOUGHT", NEW)
    hits = store.search(SearchQuery(text="PDF export decision", layers=("log",)))
    by_id = {h.meta["id"]: h for h in hits}
    assert by_id[old.id].ts == by_id[new.id].ts == pytest.approx(one_millisecond, abs=1e-3)
    assert [h.meta["id"] for h in hits[:2]] == [new.id, old.id]
    assert by_id[old.id].explain["prior"]["replaced_by"] == by_id[new.id].uid


def test_ledger_decisions_of_one_millisecond_are_in_the_order_written(
    store: Store, one_millisecond: float
) -> None:
    """The same through the ledger (`decisions.record`, no `replaces`: the text says it)."""
    decisions = store.agent().decisions
    old = decisions.record("PDF export uses WeasyPrint with HTML templates")
    new = decisions.record("Replace WeasyPrint with ReportLab for the PDF export")
    hits = store.search(SearchQuery(text="PDF export", layers=("ledger",)))
    assert [h.uid for h in hits[:2]] == [f"ledger:{new.id}", f"ledger:{old.id}"]
    assert hits[0].ts == hits[1].ts and hits[0].line is not None and hits[1].line is not None
    assert hits[1].explain["prior"]["replaced_by"] == hits[0].uid


def test_replaced_decisions_reads_the_file_order_whatever_the_uids() -> None:
    # the uids sort the other way round: "a-new" < "z-old"
    old, new = _log("z-old", OLD, line=4), _log("a-new", NEW, line=9)
    assert replaced_decisions([new, old]) == {"z-old": ("a-new", "weasyprint")}
    assert [h.uid for h in oldest_first([new, old])] == ["z-old", "a-new"]
    # no line known (a store from before lines): tied, nothing replaced
    assert replaced_decisions([new.but(line=None), old.but(line=None)]) == {}


def test_the_near_tie_pass_puts_the_later_in_file_record_first() -> None:
    """`recall.newer`: of two statements on one subject within the band, the newer goes
    first; at one ts, the one later in LOG.md. Records of two files stay as they are."""
    terms = [QueryTerm("database", ("database",), 2.0)]
    earlier = _log("a-earlier", "Decision: the database is SQLite", line=3, score=1.0)
    later = _log("b-later", "Decision: the database is PostgreSQL 16", line=7, score=0.9)
    got = apply_priors([earlier, later], "which database", PriorSettings(), terms=terms)
    assert [h.uid for h in got] == ["b-later", "a-earlier"]
    assert got[0].explain["prior"]["newer_than"] == "a-earlier"
    off = apply_priors([earlier, later], "which database", PriorSettings(newer=0.0), terms=terms)
    assert [h.uid for h in off] == ["a-earlier", "b-later"]  # worth order without the pass
    # another file (an archive of another agent's LOG) at the same ts: neither is newer
    other = later.but(source="/h/agents/ivy/LOG.md")
    got = apply_priors([earlier, other], "which database", PriorSettings(), terms=terms)
    assert [h.uid for h in got] == ["a-earlier", "b-later"]
    assert "newer_than" not in got[0].explain["prior"]


def test_equal_worth_at_one_ts_goes_later_in_file_first_others_by_uid() -> None:
    """The order's tie-break (worth, then newer first): at one ts the later line of one
    file first, in the places that file's records hold; another file's record keeps its
    place by uid."""
    x = _log("a", "note one about caching", line=1)
    y = _log("c", "note two about caching", line=2)
    z = _log("b", "note three about caching", line=5).but(source="/h/agents/ivy/LOG.md")
    got = apply_priors([x, y, z], "caching", PriorSettings())
    assert [h.uid for h in got] == ["c", "b", "a"]  # places a, b, c: LOG.md's two swap


def test_which_files_are_in_time_order() -> None:
    a, b = _log("a", "one", line=1), _log("b", "two", line=2)
    assert is_older(a, b) and not is_older(b, a)
    assert not is_older(a, a)
    md = [h.but(layer="context", uid=f"md:CONTEXT.md#{h.line}") for h in (a, b)]
    assert not is_older(*md) and not is_older(*reversed(md))  # one mtime for every chunk
    archived = [h.but(layer="archive", uid=f"archive:arc/LOG-1.md:{h.uid}") for h in (a, b)]
    assert is_older(*archived)
    turns = [h.but(layer="session", source="/h/sessions/s1.jsonl") for h in (a, b)]
    assert is_older(*turns)
    assert not is_older(a.but(line=None), b)
    assert is_older(b.but(ts=T0 - 0.001), a)  # an earlier ts decides before any line


def test_an_update_said_in_the_same_millisecond_ranks_above_the_earlier_version(
    home: Path,
) -> None:
    """`search.updates` on transcript turns: two versions of a fact captured in one
    millisecond; the one later in the transcript is the update."""
    year_ago = time.time() - 400 * 86_400.0
    old_text = "Payment terms: members get 14 days to pay an invoice."
    new_text = "Payment terms are changing: from next month members get 21 days to pay an invoice."
    (home).mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('[search]\nupdate_band = 0.05\nembedder = "fake"\n')
    with Store(home, agent="a") as store:
        store.use_embedder(FakeEmbedder(256, tokens=True))
        filler = [
            "The members like the new coffee machine on the second floor.",
            "The invoice PDF should show the coworking logo at the top.",
            "Pay day for the staff is the last Friday of the month.",
            "Two new members joined the Utrecht space this week.",
        ]
        turns = [(year_ago - (n + 1) * 86_400.0, t) for n, t in enumerate(filler)]
        turns += [(year_ago, old_text), (year_ago, new_text)]
        store.agent().sessions.append_many(
            "s1", [{"role": "user", "content": text, "timestamp": ts} for ts, text in turns]
        )
        q = SearchQuery(
            text="how many days do members get to pay an invoice?",
            layers=("session",),
            mode="hybrid",
        )
        hits = store.search(q)
    assert hits[0].ts == hits[1].ts
    assert [h.text.split("\n")[-1] for h in hits[:2]] == [new_text, old_text]
    assert hits[0].explain["newer_than"] == hits[1].uid
