"""The lifecycle rules read a word for what it says (support-marlin, scen19b): what a
replacement drops (`lifecycle.moot.dropped`) and which commands a successful shell line
shows succeeded (`lifecycle.shell.succeeded_parts`)."""

from __future__ import annotations

import pytest

from memstrata.lifecycle.moot import dropped
from memstrata.lifecycle.retired import replaced_facts
from memstrata.lifecycle.shell import succeeded_parts
from memstrata.model import Fact, LedgerEntry


def _record(id_: str, summary: str, detail: str | None = None, ts: str = "") -> LedgerEntry:
    ts = ts or "2026-09-09T16:00:00.000Z"
    return LedgerEntry(id_, ts, "decision", None, None, None, (), summary, detail, None)


def test_a_replacement_drops_what_the_replaced_record_decided_not_its_reasons_mentions() -> None:
    old = _record(
        "d0",
        "Drop linux/arm/v7 (32-bit ARM) from the release builds and the CI test matrix",
        "11 downloads of the armv7 archive for v0.8.2, and its qemu test job takes 7 minutes",
    )
    new = _record(
        "d1",
        "Build linux/arm/v7 release archives again; armv7 gets a build-only job",
        "Raspberry Pi 2/3 users install from our mirror, so GitHub's download count missed them",
    )
    assert "v082" not in dropped(new, [old])  # said in the old record's reason only
    docs = _record("d2", "Build the docs site with MkDocs Material", "pip conflicts with mike")
    hugo = _record("d3", "Build the docs site with Hugo and the Hextra theme")
    assert dropped(hugo, [docs]) == {"mkdocs", "material"}
    assert "weasyprint" in dropped(_record("d4", "Render PDFs with Typst, no WeasyPrint"), [])


@pytest.mark.parametrize(
    ("line", "parts"),
    [
        (
            "go mod edit -go=1.23 && go get x@v1",
            [["go", "mod", "edit", "-go=1.23"], ["go", "get", "x@v1"]],
        ),
        ("make docs; echo done", [["echo", "done"]]),  # only the last list's status is the line's
        ("npm ci && npm run build || true", []),  # either may have failed
        ("cargo fmt && cargo build | tee b.log", [["cargo", "fmt"], ["tee", "b.log"]]),
        ("sleep 5 & go get x", [["go", "get", "x"]]),  # a background job's status is unknown
        (
            "go test ./... 2>&1 && go vet ./...",
            [["go", "test", "./...", "2>&1"], ["go", "vet", "./..."]],
        ),
        (
            "git commit -m 'a; b || c' && go get x",
            [["git", "commit", "-m", "'a;", "b", "||", "c'"], ["go", "get", "x"]],
        ),
        ("(cd web && npm run build)", []),  # a subshell: not read
        ("echo $(go get x) && true", []),
    ],
)
def test_only_the_commands_a_successful_line_shows_succeeded_count(
    line: str, parts: list[list[str]]
) -> None:
    assert succeeded_parts(line) == parts


def _fact(key: str, value: str, at: str) -> Fact:
    return Fact(key, value, "general", at, at)


def test_numbers_with_thousands_separators_are_one_value_each() -> None:
    """research-scooters: `madrid_fleet` ("... from 10,000 to 6,000 scooters") was shown
    as replaced by `warsaw_fleet` ("about 40,000 shared scooters"): both keys say "fleet"
    and both values held "000", the digits after a thousands separator, read as a number
    of their own. A number is read whole; a later fact quoting one still replaces."""
    madrid = _fact("madrid_fleet", "Madrid cut the fleet from 10,000 to 6,000", "2026-04-10")
    warsaw = _fact("warsaw_fleet", "Warsaw had about 40,000 shared scooters", "2026-04-14")
    revised = _fact("madrid_fleet_final", "The fleet is 6,000 since May", "2026-04-20")
    assert replaced_facts([madrid, warsaw], []) == [None, None]
    assert replaced_facts([madrid, revised], []) == [("madrid_fleet_final", "2026-04-20"), None]


def test_a_year_is_no_measured_value() -> None:
    """research-scooters: `paris_injuries` ("... registry 2019-2022: 1 in 4 ...") was shown
    as replaced by `paris_revenue_per_ride` ("... per ride in Paris in 2022 ..."): both
    keys say "paris" and both values held 2022, a year read as a measured value. A year
    (in a range, or after "in", "since", "for"...) is a date; a number of the same digits
    measured in something still counts."""
    injuries = _fact("paris_injuries", "Trauma registry 2019-2022: 1 in 4 head injuries", "04-07")
    revenue = _fact("paris_revenue_per_ride", "3.10 euros per ride in 2022, Lime", "04-19")
    assert replaced_facts([injuries, revenue], []) == [None, None]
    tokens = _fact("model_tokens", "the context is 2048 tokens", "04-01")
    bigger = _fact("model_tokens_now", "4096 tokens, up from 2048 tokens", "04-02")
    assert replaced_facts([tokens, bigger], []) == [("model_tokens_now", "04-02"), None]


def test_a_name_that_opens_a_sentence_is_still_named() -> None:
    """research-scooters: "Cover Paris, Madrid and Oslo in the main text; Warsaw becomes a
    sidebar" replaced "Cover three cities: Paris, Madrid and Warsaw". Warsaw opens the
    second sentence, so it was not read as a name the new record says, and the fact
    `warsaw_fleet` was shown as replaced. A name the record says anywhere is its own; one
    it says is gone ("WeasyPrint is out") is still dropped."""
    old = _record("d0", "Cover three cities: Paris, Madrid and Warsaw")
    new = _record("d1", "Cover Paris, Madrid and Oslo in the main text; Warsaw becomes a sidebar")
    assert "warsaw" not in dropped(new, [old])
    out = _record("d2", "Render PDFs with ReportLab. WeasyPrint is out: it needs pango")
    assert "weasyprint" in dropped(out, [_record("d3", "Render PDFs with WeasyPrint")])
    fleet = _fact("warsaw_fleet", "Warsaw had about 40,000 shared scooters", "2026-04-14T00:00")
    new_later = _record("d1", new.summary, ts="2026-04-19T00:00:00.000Z")
    assert replaced_facts([fleet], [(old, "d1"), (new_later, None)]) == [None]
