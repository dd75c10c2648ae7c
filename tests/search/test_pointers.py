"""A record that names a fact's key stands below the fact it points to (`search.pointers`),
through `store.search`: infra-saltmarsh's "What size is the production database instance
right now?" ranked the decision "... the instance class is in the rds_instance_class fact"
above the fact `rds_instance_class`."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.search import features, pointers
from memstrata.search.pointers import keys_named
from memstrata.search.query import SearchQuery
from memstrata.store.view import Store

POINTER = (
    "Production database: RDS PostgreSQL 16.4 (salt-prod-db), Multi-AZ, 100 GB gp3; "
    "the instance class is in the rds_instance_class fact"
)


def _store(home: Path) -> Store:
    s = Store(home, agent="infra")
    s.agent().log.append("THOUGHT", POINTER)
    s.agent().log.append("THOUGHT", "The production database backups run nightly")
    s.agent().facts.set("rds_instance_class", "db.t4g.large (2 vCPU, 8 GB) since the rehearsal")
    return s


def test_the_fact_a_record_points_to_ranks_above_the_pointer(tmp_path: Path) -> None:
    with _store(tmp_path / "h") as s:
        hits = s.search(SearchQuery(text="What size is the production database instance now?", k=5))
        texts = [h.text for h in hits]
        assert "db.t4g.large" in texts[0], texts
        assert hits[0].explain.get("pointed_by"), hits[0].explain


def test_a_question_about_the_pointers_other_words_leaves_the_fact(tmp_path: Path) -> None:
    """ "Which PostgreSQL version?" holds no word of the key: the fact is not lifted."""
    with _store(tmp_path / "h") as s:
        hits = s.search(SearchQuery(text="Which PostgreSQL version runs in production?", k=5))
        assert not any(h.explain.get("pointed_by") for h in hits), [h.text for h in hits]


def test_keys_named() -> None:
    from memstrata.search.pointers import keys_named

    assert keys_named("see the db_engine and user-tz facts; not path/to_file.py") == [
        "db_engine",
        "user-tz",
    ]


def test_a_records_fact_keys_are_read_once_not_at_every_recall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`points_to` runs twice a recall (`worth.rules_idle`, `with_pointed`) over the pool's
    best records; the keys a record names are a function of its title and text, found
    once (`features.remember`; on main the text was searched both times, every recall)."""
    found: list[str] = []

    def counting(text: str) -> list[str]:
        found.append(text)
        return keys_named(text)

    monkeypatch.setattr(pointers, "keys_named", counting)
    features.clear()
    q = SearchQuery(text="What size is the production database instance now?", k=5)
    with _store(tmp_path / "h") as s:
        first = [h.to_dict(full=True) for h in s.search(q)]
        once = len(found)
        again = [h.to_dict(full=True) for h in s.search(q)]
    assert 0 < once <= 3 and len(found) == once, found
    assert again == first and first[0]["explain"].get("pointed_by")
