"""The truth has one door: nothing above `files/` and the backends touches the filesystem
for store data (issue 14). An AST check over every module: no `open()`, no `os.*` /
`os.path.*` file calls, no `shutil`, no `Path` reads, writes, listings or stats, outside
the boundary and a short allow-list of things that are not store data."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "memstrata"

BOUNDARY = ("files/",)
# module (or module:function) -> why it may use the filesystem: none of it is store data
ALLOWED = {
    "index/db.py": "the derived SQLite index (this host's cache)",
    "index/notes.py": "the derived index's notes of appends not yet indexed",
    "index/generations.py": "the derived index's generations folder",
    "index/access.py": "the derived index, or its private copy in a temporary folder",
    "index/vectors.py": "the derived index",
    "store/engine.py:Engine.__init__": "the home folder (this host's index, settings, locks)",
    "store/view.py:_finish_imports": "this host's import staging folder (.imports/)",
    "store/events.py": "this host's audit trail (events.jsonl), not part of the truth",
    "web/api/admin.py:events_stream": "streams this host's audit trail",
    "config/__init__.py": "this host's settings (config.toml)",
    "operations/transfer/members.py": "reads an export archive (outside the store)",
    "operations/transfer/histories.py:Staged": "file versions in this host's import staging "
    "folder (.imports/), as importer.py; the store's are written through the engine (place)",
    "operations/transfer/exporter.py:export_store": "writes the export archive (outside the store)",
    "operations/transfer/exporter.py:_write_tar": "writes the export archive",
    "operations/transfer/exporter.py:_write_folder": "writes the export archive",
    "operations/transfer/importer.py": "this host's import staging folder (.imports/); the store's "
    "sources are written through the truth (_place)",
    "lifecycle/extraction.py": "reads a project's documents (extraction input)",
    "lifecycle/verify.py": "reads a codebase root (verify-before-use)",
    "layers/sources.py:walk_source": "walks a project folder indexed as seed 004's `sources` "
    "scope (outside the store; sources.json goes through the truth)",
    "layers/sources.py:parse_source_file": "a project file's mtime (seed 004 `sources`)",
    "layers/sources.py:Sources.roots": "checks a registered project folder exists",
    "layers/sources.py:Sources.add": "checks a project folder exists before registering it",
    "operations/hooks.py:capture_transcript": "reads Claude Code's transcript file",
    "operations/hooks.py:_messages": "reads Claude Code's transcript file",
    "operations/hooks.py:_final_response": "reads Claude Code's transcript file",
    "embed/local.py": "the embedding model's folder",
    "embed/model_files.py": "the embedding model's files, its caches and their download",
    "embed/numpy_bert.py": "the embedding model's folder",
    "embed/safetensors.py": "the embedding model's weights file",
    "cli/export_cmd.py:run_export": "checks that the home folder exists",
    "cli/migrate_cmd.py": "names local folders to migrate from or to",
    "bench/": "benchmarks: synthetic fixtures and datasets",
    "cli/common.py:command_name": "finds the memstrata executable on PATH",
    "cli/demo_cmd.py:_folder": "picks the demo's own scratch folder",
    "cli/init_cmd.py:run_init": "this host's settings file (config.toml)",
    "embed/daemon.py": "the embedding daemon's runtime folder and socket, not store data",
    "operations/transfer/migrate.py:migrate": "names a local destination folder",
    "agentconfig/": "a coding agent's settings files in a project, and the memstrata program "
    "they run (`memstrata setup`); the store itself is only named, never touched",
}
OS_FILE_CALLS = frozenset(
    {
        "open",
        "stat",
        "lstat",
        "walk",
        "listdir",
        "scandir",
        "unlink",
        "remove",
        "rename",
        "replace",
        "mkdir",
        "makedirs",
        "rmdir",
        "removedirs",
        "link",
        "symlink",
        "truncate",
        "ftruncate",
        "fsync",
        "fdatasync",
        "chmod",
        "utime",
        "access",
        "readlink",
    }
)
OS_PATH_CALLS = frozenset(
    {"exists", "lexists", "isfile", "isdir", "islink", "getsize", "getmtime", "realpath"}
)
PATH_METHODS = frozenset(
    {
        "read_text",
        "read_bytes",
        "write_text",
        "write_bytes",
        "iterdir",
        "glob",
        "rglob",
        "mkdir",
        "rmdir",
        "unlink",
        "touch",
        "is_file",
        "is_dir",
        "is_symlink",
        "exists",
        "stat",
        "lstat",
        "symlink_to",
        "hardlink_to",
        "chmod",
        "open",
    }
)
# Receivers whose methods of those names are memstrata's own, not the filesystem's: the
# truth, the store, its engine and layer handles (`files.read_text` would be `MemoryFiles`').
HANDLES = frozenset(
    {
        "truth",
        "engine",
        "origin",
        "store",
        "files",
        "now",
        "context",
        "identity",
        "log",
        "mem",
        "memory",
        "layout",
        "Store",
        "AgentLoop",
        "tarfile",
        "webbrowser",
    }
)


def _receiver(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return _receiver(node.func)
    return ""


def _offences(path: Path) -> list[tuple[str, int, str]]:
    """(function, line, what) for each filesystem call in the module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[str, int, str]] = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, child.name)
                continue
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(
                    child,
                    f"{where}.{child.name}"
                    if where and where[0].isupper()
                    else (where or child.name),
                )
                continue
            if isinstance(child, ast.Call):
                what = _what(child)
                if what:
                    found.append((where, child.lineno, what))
            visit(child, where)

    visit(tree, "")
    return found


def _what(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Name) and func.id == "open":
        return "open()"
    if not isinstance(func, ast.Attribute):
        return None
    base = func.value
    if isinstance(base, ast.Name) and base.id == "os" and func.attr in OS_FILE_CALLS:
        return f"os.{func.attr}()"
    if (
        isinstance(base, ast.Attribute)
        and base.attr == "path"
        and isinstance(base.value, ast.Name)
        and base.value.id == "os"
        and func.attr in OS_PATH_CALLS
    ):
        return f"os.path.{func.attr}()"
    if isinstance(base, ast.Name) and base.id == "shutil":
        return f"shutil.{func.attr}()"
    if func.attr in PATH_METHODS and _receiver(base) not in HANDLES:
        return f"{ast.unparse(base)}.{func.attr}()"
    return None


def _allowed(rel: str, function: str) -> bool:
    if rel.startswith(BOUNDARY):
        return True
    for key in ALLOWED:
        module, _, fn = key.partition(":")
        if key.endswith("/") and rel.startswith(key):
            return True
        if rel == module and (not fn or function == fn or function.startswith(f"{fn}.")):
            return True
    return False


def test_nothing_above_the_boundary_touches_the_filesystem_for_store_data() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for function, line, what in _offences(path):
            if not _allowed(rel, function):
                offenders.append(f"{rel}:{line} ({function or 'module'}) {what}")
    assert offenders == [], "\n".join(offenders)


def test_the_detector_sees_filesystem_calls() -> None:
    sample = ast.parse(
        "import os, shutil\n"
        "def f(p, store):\n"
        "    open(p); os.stat(p); os.path.exists(p); shutil.move(p, p)\n"
        "    p.read_text(); p.parent.mkdir(); store.layout.ledger.exists()\n"
        "    store.truth.stat('x'); store.exists(p); self.files.read_text()\n"
    )
    whats = [_what(n) for n in ast.walk(sample) if isinstance(n, ast.Call)]
    assert [w for w in whats if w] == [
        "open()",
        "os.stat()",
        "os.path.exists()",
        "shutil.move()",
        "p.read_text()",
        "p.parent.mkdir()",
        "store.layout.ledger.exists()",
    ]


def test_the_allow_list_names_only_modules_that_exist() -> None:
    for key in ALLOWED:
        module = key.partition(":")[0]
        assert (SRC / module).exists(), key
