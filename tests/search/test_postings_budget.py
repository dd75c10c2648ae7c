"""A store larger than `[search] postings_budget`: the query's own words come first.

Past the budget, the MATCH keeps the rarest phrases and re-scores the others on the
candidates. Abbreviations of the query words (identifier words: `db` for "database")
shared that budget with the words typed and, being rarer, crowded them out: a search
for "database" matched only the `db_*` facts and none of the memories saying database.
"""

from __future__ import annotations

from pathlib import Path

from memstrata import Store


def test_the_query_words_are_matched_before_their_abbreviations(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[search]\npostings_budget = 10\n")
    with Store(home, agent="finn") as s:
        mem = s.agent()
        for i in range(8):
            mem.log.append("THOUGHT", f"the database migration step {i} ran")
        for key in ("db_engine", "db_host", "db_port"):
            mem.facts.set(key, "set by the installer", "config")
        hits = s.search("database", k=10, mode="lexical")
        assert sum("database" in h.text for h in hits) == 8
        assert hits[0].explain["common_terms_rescored"] == ["db"]
        # With no query word in any memory, the abbreviations have the whole budget.
        hits = s.search("databank", k=10, mode="lexical")
        assert {h.title for h in hits} == {"db_engine", "db_host", "db_port"}


def test_a_words_stems_are_the_same_remembered_or_not() -> None:
    """`terms.stems` remembers each word's terms; a caller changing what it got back
    changes nothing the next search sees."""
    from memstrata.search import terms

    terms._STEMS.clear()
    first = terms.stems(["running", "databases", "running"])
    assert first == {"running": ["run"], "databases": ["databas"]}
    first["running"].append("changed")
    assert terms.stems(["databases", "running", "user_tz"]) == {
        "databases": ["databas"],
        "running": ["run"],
        "user_tz": ["user", "tz"],
    }
