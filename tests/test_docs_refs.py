"""Every test a document names exists: docs/seeds.md says "done" only where a named test
proves it, and the README points at tests for its claims, so a renamed or deleted test
must fail the build, not leave a claim pointing at nothing.

A reference is `` `path.py::name` `` (path relative to tests/, or starting with tests/),
or `` `::name` `` continuing the last file named before it on the same line."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOKEN = re.compile(r"`((?:tests/)?[\w/]+\.py)?(?:::(\w+)(?:\[[^\]`]*\])?)?`")


def _defined(path: Path, cache: dict[Path, set[str]]) -> set[str]:
    if path not in cache:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        # module-level tests and test methods of classes, not helpers or nested functions
        cache[path] = {
            n.name
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test_")
        }
    return cache[path]


def broken_references(text: str, doc: str) -> tuple[int, list[str]]:
    """(references checked, the ones naming no test) in one document's text."""
    cache: dict[Path, set[str]] = {}
    bad, checked = [], 0
    for lineno, line in enumerate(text.splitlines(), 1):
        last: Path | None = None
        for m in TOKEN.finditer(line):
            file, test = m.group(1), m.group(2)
            if not file and not test:
                continue
            if file:
                rel = file if file.startswith("tests/") else f"tests/{file}"
                if not (ROOT / rel).exists():
                    # a test file, or a script under tests/ that a number comes from
                    if Path(file).name.startswith("test_") or file.startswith("tests/"):
                        bad.append(f"{doc}:{lineno}: no file {rel}")
                    last = None
                    continue
                last = ROOT / rel
            if test and test != "x":  # docs/seeds.md's own example of the notation
                checked += 1
                if last is None:
                    bad.append(f"{doc}:{lineno}: ::{test} with no file before it")
                elif not test.startswith("test_") or test not in _defined(last, cache):
                    bad.append(f"{doc}:{lineno}: {last.relative_to(ROOT)} has no {test}")
    return checked, bad


def test_every_test_named_in_the_docs_exists() -> None:
    total = 0
    for doc in ("docs/seeds.md", "README.md", "docs/scale.md"):
        checked, bad = broken_references((ROOT / doc).read_text(encoding="utf-8"), doc)
        assert bad == [], "\n".join(bad)
        total += checked
    assert total > 100  # the seeds table alone names more than a hundred


def test_a_renamed_test_is_reported() -> None:
    checked, bad = broken_references(
        "| row | `seeds/test_seed_000.py::test_no_such_test_anywhere` | done |\n"
        "| row | `test_docs_refs.py::test_a_renamed_test_is_reported` | done |",
        "doc",
    )
    assert checked == 2
    assert bad == ["doc:1: tests/seeds/test_seed_000.py has no test_no_such_test_anywhere"]
    # a helper is not a test, and a script a number comes from must exist
    checked, bad = broken_references(
        "`test_docs_refs.py::broken_references` and `tests/no_such_script.py`", "doc"
    )
    assert bad == [
        "doc:1: tests/test_docs_refs.py has no broken_references",
        "doc:1: no file tests/no_such_script.py",
    ]
