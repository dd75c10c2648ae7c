"""Every test a document names exists: docs/seeds.md says "done" only where a named test
proves it, and the README and the guides point at tests for their claims, so a renamed or deleted test
must fail the build, not leave a claim pointing at nothing.

A reference is `` `path.py::name` `` (path relative to tests/, or starting with tests/),
or `` `::name` `` continuing the last file named before it in the same table row, list item
or paragraph."""

from __future__ import annotations

import ast
import importlib
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
    last: Path | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or re.match(r"^\s*(\||[-*] |\d+\. )", line):
            last = None  # a new paragraph, list item or table row names its own file
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


DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_every_test_named_in_the_docs_exists() -> None:
    total = 0
    for path in DOCS:
        doc = str(path.relative_to(ROOT))
        checked, bad = broken_references(path.read_text(encoding="utf-8"), doc)
        assert bad == [], "\n".join(bad)
        total += checked
    assert total > 100  # the seeds table alone names more than a hundred


def _anchors(path: Path) -> set[str]:
    """The anchors GitHub makes of a page's headings."""
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") and not line.startswith("#!"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


def test_every_link_between_the_docs_resolves() -> None:
    """A guide moved or a section renamed leaves no link pointing at nothing."""
    bad, checked = [], 0
    for path in DOCS:
        for target in LINK.findall(path.read_text(encoding="utf-8")):
            if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
                continue
            file, _, anchor = target.partition("#")
            dest = (path.parent / file).resolve() if file else path
            checked += 1
            if not dest.exists():
                bad.append(f"{path.relative_to(ROOT)}: {target}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                bad.append(f"{path.relative_to(ROOT)}: {target}: no such section")
    assert bad == [], "\n".join(bad)
    assert checked > 50


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


MODULE = re.compile(r"`(memstrata(?:\.[A-Za-z_]\w*)+)(?:\(|`)")
SOURCE = re.compile(r"`([a-z_]+/[\w/]+\.py)`")


def _resolves(dotted: str) -> bool:
    """`memstrata.a.b.C.d`: the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:n]))
        except ImportError:
            continue
        for attr in parts[n:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_every_module_the_docs_name_exists() -> None:
    """Packages move (issue 21); a guide naming `memstrata.x.y`, `memstrata/x.py` or
    `files/x.py` must follow, or say it another way."""
    bad, checked = [], 0
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for dotted in MODULE.findall(text):
            checked += 1
            if not _resolves(dotted):
                bad.append(f"{path.relative_to(ROOT)}: {dotted}")
        for source in SOURCE.findall(text):
            checked += 1
            places = (ROOT / "src", ROOT / "src" / "memstrata", ROOT / "tests", ROOT)
            if not any((place / source).exists() for place in places):
                bad.append(f"{path.relative_to(ROOT)}: {source}")
    assert bad == [], "\n".join(bad)
    assert checked > 5
