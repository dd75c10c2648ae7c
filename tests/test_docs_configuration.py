"""docs/configuration.md's reference of every `config.toml` key is generated from the
settings table the code parses with (`memstrata.config.SETTINGS`, the free-name sections
and their defaults), so it cannot drift: a setting added, renamed or given a new default
fails this test until the page is regenerated with

    PYTHONPATH=src .venv/bin/python tests/test_docs_configuration.py

which rewrites the part of the page between the two markers and nothing else."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "configuration.md"
BEGIN = "<!-- settings: generated from the settings table by tests/test_docs_configuration.py -->"
END = "<!-- end of the generated settings -->"


def _value(v: Any) -> str:
    if v is None:
        return "unset"
    if isinstance(v, bool):
        return "`true`" if v else "`false`"
    if isinstance(v, tuple):
        return "`[" + ", ".join(f'"{x}"' for x in v) + "]`"
    if isinstance(v, str):
        return f'`"{v}"`'
    if isinstance(v, float):
        return f"`{v:g}`"
    return f"`{v:,}`" if isinstance(v, int) else f"`{v}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render() -> str:
    """The generated part of the page: one table per section, in the table's order."""
    from memstrata import config

    sections: dict[str, list[Any]] = {}
    for s in config.SETTINGS:
        sections.setdefault(s.section, []).append(s)
    out: list[str] = []
    for section, rows in sections.items():
        out += [f"### `[{section}]`", "", "| key | default | environment | what it does |"]
        out.append("|---|---|---|---|")
        for s in rows:
            env = f"`${s.env}`" if s.env else ""
            out.append(f"| `{s.key}` | {_value(s.default)} | {env} | {_cell(s.help)} |")
        out.append("")
    recall = config.recallconfig
    free = {
        "kinds": {
            k: (v, "ledger entries of this kind") for k, v in config.DEFAULT_HALF_LIVES.items()
        },
        "decay": {
            k: (v, "this layer's records (unset: evergreen)")
            for k, v in config.DEFAULT_LAYER_HALF_LIVES.items()
        },
        "recall": {
            **{k: (w, what) for k, (w, what) in recall.SIGNALS.items()},
            recall.ASKED_KEY: (recall.DEFAULT_ASKED, "factor for the signal a question asks about"),
            recall.REPLACED_KEY: (
                recall.DEFAULT_REPLACED,
                "factor for a decision a newer one among the results says it replaces",
            ),
            recall.COVERAGE_KEY: (
                recall.DEFAULT_COVERAGE,
                "weight of the IDF-weighted share of the query's terms a record holds (0: off)",
            ),
            recall.NEWER_KEY: (
                recall.DEFAULT_NEWER,
                "near-ties on one subject go to the newer record within this band (0: off)",
            ),
            recall.QUESTION_KEY: (
                recall.DEFAULT_QUESTION,
                "factor for a record that asks rather than states (1: off)",
            ),
        },
    }
    for section, (unit, _, what) in config.MAP_SECTIONS.items():
        out += [f"### `[{section}]`", "", f"{_cell(what)}; each value is a {unit}.", ""]
        out += [
            f"| key | default | {'what it weighs' if section == 'recall' else 'half-life of'} |"
        ]
        out.append("|---|---|---|")
        out += [f"| `{k}` | {_value(v)} | {_cell(w)} |" for k, (v, w) in free[section].items()]
        out.append("")
    return "\n".join(out)


def _current(text: str) -> str:
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n")


def test_the_configuration_reference_is_current() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert BEGIN in text and END in text, f"{PAGE}: the markers of the generated part"
    assert _current(text) == render().strip("\n"), (
        "docs/configuration.md is stale: run `PYTHONPATH=src python tests/test_docs_configuration.py`"
    )


def test_every_setting_is_on_the_page() -> None:
    """The generator itself leaves none out (a check on `render`, not on the page)."""
    from memstrata import config

    made = render()
    for s in config.SETTINGS:
        assert f"### `[{s.section}]`" in made and f"| `{s.key}` |" in made, s.name
    for section in config.MAP_SECTIONS:
        assert f"### `[{section}]`" in made, section


if __name__ == "__main__":
    text = PAGE.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    PAGE.write_text(f"{head}{BEGIN}\n\n{render().strip()}\n\n{END}{tail}", encoding="utf-8")
    sys.stdout.write(f"wrote {PAGE.relative_to(ROOT)}\n")
