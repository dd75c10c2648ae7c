"""Hits that repeat a better hit's title and text are shown once (`search.duplicates`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.search.duplicates import collapse_duplicates
from memstrata.search.query import Hit


def _hit(uid: str, title: str, text: str, score: float) -> Hit:
    return Hit(uid, uid.split(":")[0], score, title, text, "", 0.0, "x")


def test_a_repeated_line_is_shown_once_and_named_by_the_one_shown() -> None:
    hits = [
        _hit("session:a", "user", "Looks good, go ahead.", 0.9),
        _hit("session:b", "user", "looks good,  go ahead.", 0.8),
        _hit("session:c", "assistant", "Looks good, go ahead.", 0.7),  # another speaker
        _hit("fact:d", "redis", "Redis holds the sessions", 0.6),
        _hit("session:e", "user", "Looks good, go ahead.", 0.5),
    ]
    shown = collapse_duplicates(hits, limit=3)
    assert [h.uid for h in shown] == ["session:a", "session:c", "fact:d"]
    assert shown[0].explain["duplicates"] == [
        {"uid": "session:b", "layer": "session"},
        {"uid": "session:e", "layer": "session"},
    ]
    assert "duplicates" not in shown[1].explain


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_copies_of_one_line_leave_room_for_the_answer(home: Path, mode: str) -> None:
    """Copies of one LOG line took every place a question got, and the answer was not
    shown. Shown once, with the others in its explain, the answer is in the top 3.
    `[search] duplicates = false` shows every copy, as before."""
    from memstrata import SearchQuery, Store
    from memstrata.embed.base import FakeEmbedder

    with Store(home, agent="coder") as store:
        log = store.agent().log
        log.append("THOUGHT", "The invoice export answer: run the invoice job at 02:00")
        for _ in range(4):
            log.append("TOOL_USE", "Ran invoice export invoice export --dry-run")

    def search(duplicates: bool) -> list[Hit]:
        (home / "config.toml").write_text(f"[search]\nduplicates = {str(duplicates).lower()}\n")
        with Store(home, agent="coder") as store:
            store.use_embedder(FakeEmbedder(dim=64))
            return store.search(SearchQuery(text="invoice export", mode=mode, k=3))

    copy = "Ran invoice export invoice export --dry-run"
    before = [h.text for h in search(False)]
    assert before == [copy] * 3, before

    after = search(True)
    texts = [h.text for h in after]
    assert texts.count(copy) == 1, texts
    assert any(t.startswith("The invoice export answer") for t in texts), texts
    shown = next(h for h in after if h.text == copy)
    assert [d["layer"] for d in shown.explain["duplicates"]] == ["log"] * 3
    assert len({h.uid for h in after}) == len(after)


def test_a_pool_that_repeats_nothing_weighs_the_contenders_of_k_places_only(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no two candidates saying the same, nothing is collapsed: the priors rank for
    the k places shown (`search.prune` keeps fewer contenders), not the 3k collapse would
    need, and the list is the one the 3k gave, every field; a pool with a repeated line
    still ranks 3k and names the copy."""
    from memstrata import SearchQuery, Store
    from memstrata.search import reach, worth

    store = Store(home, agent="finn", watch=False)
    for i in range(40):
        store.agent().facts.set(f"otter{i}", f"otter habitat number {i} by the river")
    q = SearchQuery(text="otter habitat river", k=5, mode="lexical", now=1_800_000_000.0)
    limits: list[int | None] = []
    real = worth.apply_priors

    def spy(*args: object, limit: int | None = None, **kw: object) -> list[Hit]:
        limits.append(limit)
        return real(*args, limit=limit, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(worth, "apply_priors", spy)
    shown = [h.to_dict(full=True) for h in store.search(q)]
    assert limits == [5]
    monkeypatch.setattr(worth, "repeats", lambda hits: True)  # as if a line repeated
    monkeypatch.setattr(reach, "repeats", lambda hits: True)  # the lexical path asks here
    assert [h.to_dict(full=True) for h in store.search(q)] == shown and limits[1:] == [15]
    monkeypatch.undo()
    for _ in range(2):
        store.agent().log.append("THOUGHT", "otter habitat river otter habitat river")
    limits.clear()
    monkeypatch.setattr(worth, "apply_priors", spy)
    hits = store.search(q)
    assert limits == [15] and len(hits) == 5
    assert [d["layer"] for h in hits for d in h.explain.get("duplicates", [])] == ["log"]
    store.close()
