"""Architecture rules as tests: data flows files -> index -> search -> assembly -> adapters."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "memstrata"
CORE = ("files", "index", "search", "layers", "assembly", "embed", "llm", "lifecycle")
ADAPTERS = ("memstrata.cli", "memstrata.mcp", "memstrata.web")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
    return out


def test_core_never_imports_adapters() -> None:
    offenders = []
    for pkg in CORE:
        for path in (SRC / pkg).rglob("*.py"):
            for mod in _imports(path):
                if mod.startswith(ADAPTERS):
                    offenders.append(f"{path.relative_to(SRC)} imports {mod}")
    assert offenders == []


def test_files_layer_depends_on_nothing_above_it() -> None:
    for path in (SRC / "files").rglob("*.py"):
        for mod in _imports(path):
            assert not mod.startswith(
                ("memstrata.index", "memstrata.layers", "memstrata.search", "memstrata.store")
            ), f"{path.name} imports {mod}"


def test_no_module_over_600_lines() -> None:
    big = [p for p in SRC.rglob("*.py") if len(p.read_text(encoding="utf-8").splitlines()) > 600]
    assert big == []


def test_import_is_cheap_and_pulls_no_optional_dependency() -> None:
    code = (
        "import sys, memstrata, memstrata.cli.main; "
        "heavy = [m for m in ('mcp', 'numpy', 'torch', 'sentence_transformers', 'uvicorn') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _runs_sql(path: Path) -> list[str]:
    """Where a module imports sqlite3, or calls `.execute`/`.executemany`/`.executescript`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = [f"imports {m}" for m in _imports(path) if m.split(".")[0] == "sqlite3"]
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("execute", "executemany", "executescript")
        ):
            found.append(f"line {node.lineno} calls .{node.func.attr}()")
    return found


def test_adapters_never_run_sql() -> None:
    """Adapters translate, never decide: CLI, MCP, HTTP and web share the library's
    functions and none of them opens the index or runs SQL of its own."""
    offenders = []
    for pkg in ("cli", "mcp", "web"):
        for path in (SRC / pkg).rglob("*.py"):
            offenders += [f"{path.relative_to(SRC)} {what}" for what in _runs_sql(path)]
    assert offenders == []


def test_the_sql_detector_sees_sql() -> None:
    sample = SRC / "index" / "db.py"
    assert any("sqlite3" in w for w in _runs_sql(sample))
    assert any(".execute()" in w for w in _runs_sql(SRC / "search" / "engine.py"))
