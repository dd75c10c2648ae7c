"""The timeline as a story tells events of one millisecond in the order they happened
(a fact set to vim then to helix in the same millisecond read helix, then vim)."""

from __future__ import annotations

from pathlib import Path

from memstrata import Store
from memstrata.assembly import story
from memstrata.assembly.story import StoryLine


def test_events_of_one_millisecond_keep_the_order_they_happened() -> None:
    def line(title: str) -> StoryLine:
        return StoryLine("fact", 1000.0, title, "", title, (title,), "fact")

    newest_first = [line("editor forgotten"), line("editor = helix"), line("editor = vim")]
    [group] = story._grouped(newest_first)
    assert [x.title for x in group] == ["editor = vim", "editor = helix", "editor forgotten"]


def test_fact_changes_of_one_millisecond_read_in_order_on_the_timeline(home: Path) -> None:
    with Store(home, agent="finn") as s:
        m = s.agent()
        for value in ("vim", "helix", "emacs", "nano"):
            m.facts.set("editor", value, "preference")
        told = story.tell(s, "finn", kinds=("facts",))
    said = [x.title for g in told.groups for x in g.lines]
    assert said == [f"editor = {v}" for v in ("vim", "helix", "emacs", "nano")], said
