"""Architecture rules as tests: the flow the folder list shows, and what keeps it honest.

    basics (errors, model, limits, values, config, policy, reading)
      -> files (the truth) -> index -> store.engine (one per home: the only write doors)
      -> layers -> search -> lifecycle -> store.view (a principal: layers, search, triggers)
      -> assembly -> operations -> adapters (cli, mcp, web, integrations)

Each part imports only what lies below it, with no cycle even counting the imports
made inside functions: those are deferred only for start-up speed (the CLI starts
on every agent hook), each listed in DEFERRED_FOR_START_UP with its reason. Only the
index and the search engine run SQL; only the engine (and the truth's own package)
reaches the truth.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from importgraph import SRC, Edge, cycles, edges, modules

CORE = ("files", "index", "search", "layers", "assembly", "embed", "llm", "lifecycle")
ADAPTERS = ("memstrata.cli", "memstrata.mcp", "memstrata.web", "memstrata.integrations")

# (importer, target, why): an import inside a function is allowed only here. A prefix
# ends in "." for a package's modules; "" as target: whatever the importer needs.
DEFERRED_FOR_START_UP: tuple[tuple[str, str, str], ...] = (
    (
        "memstrata.cli.",
        "",
        "every command module is imported to build the parser; a "
        "command imports what it runs when it runs",
    ),
    (
        "memstrata.operations.hooks",
        "",
        "a hook runs on every agent event: each hook loads "
        "only what it answers with (the digest and classifier rules cost 30-70 ms)",
    ),
    (
        "memstrata.lifecycle.triggers",
        "memstrata.lifecycle.",
        "compaction and flush load their rules only for the write that crosses a limit",
    ),
    (
        "memstrata.operations.manager",
        "memstrata.operations.hooks",
        "the hooks' module (~15 ms) only for `conversation_compacted`, not for every "
        "builder's `MemoryManager`",
    ),
    (
        "memstrata.assembly.context",
        "memstrata.assembly.ignore",
        "its cue rules (a dozen regular expressions, 3-8 ms) read a prompt, which "
        "`memstrata context` has none of",
    ),
    (
        "memstrata.assembly.standing",
        "memstrata.assembly.ignore",
        "the same cue rules, only for an agent whose LOG names no prompt (its transcript's "
        "asides are read then)",
    ),
    (
        "memstrata.assembly.standing",
        "memstrata.lifecycle.moot",
        "the moot rules (regular expressions), only for an agent with an open error",
    ),
    (
        "memstrata.assembly.standing",
        "memstrata.lifecycle.statements",
        "the statement readers and their English rules (3-4 ms), only for transcript talk",
    ),
    (
        "memstrata.lifecycle.activity",
        "memstrata.lifecycle.statements",
        "the same, only for a session with a prompt in LOG.md",
    ),
    (
        "memstrata.assembly.standing",
        "memstrata.lifecycle.retired",
        "the rules retiring a warning (and the moot rules they use), only with a warning in force",
    ),
    (
        "memstrata.assembly.context",
        "memstrata.lifecycle.retired",
        "the rules telling a replaced fact (and the moot rules they use), only with facts",
    ),
    (
        "memstrata.assembly.context",
        "memstrata.assembly.predecessor",
        "the ledger search of other rooms, only with a brief or a room",
    ),
    (
        "memstrata.assembly.context",
        "memstrata.lifecycle.flushed",
        "the flushed-copy rules (search.copies), only when CONTEXT.md holds a memory flush",
    ),
    (
        "memstrata.store.view",
        "memstrata.layers.",
        "the items, sources and room handles (and search's value types below them), only "
        "when asked for: a context reads none of them",
    ),
    (
        "memstrata.layers.catalog",
        "memstrata.layers.",
        "the items and room layers, only for a store that holds items or rooms",
    ),
    ("memstrata.layers.ledger", "memstrata.layers.rooms", "only to publish into a room"),
    (
        "memstrata.layers.ledger",
        "memstrata.search.query",
        "search's value types (2-3 ms of dataclasses), only for a ledger query or search",
    ),
    ("memstrata.layers.items", "memstrata.search.query", "the same, only to find items"),
    (
        "memstrata.search.priors",
        "memstrata.reading.classify",
        "14 ms of rules, only for a ranked search",
    ),
    (
        "memstrata.store.semantic",
        "memstrata.embed",
        "the embedder (and its daemon), on first semantic use",
    ),
    ("memstrata.store.semantic", "memstrata.index.vectors", "vectors, on first semantic use"),
    (
        "memstrata.store.view",
        "memstrata.operations.transfer.importer",
        "only when an import died half done",
    ),
    (
        "memstrata.store.view",
        "memstrata.search.",
        "the search engine (ranking rules, priors, tool-call parsing: 10-25 ms), on the "
        "first search; `memstrata context` and the write commands search nothing",
    ),
    (
        "memstrata.files.backends",
        "memstrata.files.postgres.",
        "psycopg, only for a PostgreSQL truth",
    ),
    (
        "memstrata.files.postgres.truth",
        "memstrata.files.postgres.watch",
        "a LISTEN connection, only when watching",
    ),
    (
        "memstrata.embed",
        "memstrata.embed.",
        "a provider (NumPy, tokenizers, torch, HTTP) loads when it is the one configured",
    ),
    ("memstrata.llm", "memstrata.llm.", "a model provider (an HTTP client) loads when configured"),
    ("memstrata.lifecycle.providers", "memstrata.llm", "the same"),
    (
        "memstrata.mcp.stdio",
        "memstrata.mcp.tools",
        "the stdio server answers initialize before it loads the catalogue",
    ),
    ("memstrata.mcp.server", "memstrata.web.bodies", "Starlette, only when serving HTTP"),
    (
        "memstrata.web.",
        "memstrata.web.",
        "FastAPI, Starlette, Jinja2 and the MCP SDK load "
        "only when `memstrata serve` builds the app",
    ),
    ("memstrata.web.mcp_mount", "memstrata.mcp.server", "the MCP SDK, on the first /mcp request"),
)

# What lies above each part: it never imports these (prefixes; "memstrata.store." is
# the store package's lower half, its view is "memstrata.store.view").
ABOVE_ENGINE = (
    "memstrata.layers",
    "memstrata.search",
    "memstrata.lifecycle",
    "memstrata.assembly",
    "memstrata.operations",
    "memstrata.store.view",
    *ADAPTERS,
)
NEVER_IMPORTS: dict[str, tuple[str, ...]] = {
    "memstrata.files": ("memstrata.index", "memstrata.store", *ABOVE_ENGINE),
    "memstrata.index": ("memstrata.store", *ABOVE_ENGINE),
    "memstrata.store.engine": ABOVE_ENGINE,
    "memstrata.store.catchup": ABOVE_ENGINE,
    "memstrata.store.editing": ABOVE_ENGINE,
    "memstrata.store.events": ABOVE_ENGINE,
    "memstrata.store.jobs": ABOVE_ENGINE,
    "memstrata.store.signals": ABOVE_ENGINE,
    # layers use search's value types (SearchQuery, Hit) and are handed a search
    "memstrata.layers": (
        "memstrata.search.engine",
        "memstrata.search.hybrid",
        "memstrata.search.recall",
        *ABOVE_ENGINE[2:],
    ),
    "memstrata.search": ("memstrata.layers", "memstrata.store", *ABOVE_ENGINE[2:]),
    "memstrata.lifecycle": ("memstrata.assembly", "memstrata.operations", *ADAPTERS),
    "memstrata.assembly": ("memstrata.operations", *ADAPTERS),
    "memstrata.operations": ADAPTERS,
    "memstrata.policy": ("memstrata.files", "memstrata.index", "memstrata.store", *ABOVE_ENGINE),
    "memstrata.reading": ("memstrata.files", "memstrata.index", "memstrata.store", *ABOVE_ENGINE),
}
# Modules that run SQL of their own besides `index/` and the search engine.
SQL_ELSEWHERE = {
    "files/postgres/": "the truth in PostgreSQL: its own tables, not the index",
    "bench/": "baselines measure raw FTS5 on scratch databases of their own",
}
# Modules that reach a truth object besides the store's engine and the truth's package.
TRUTH_ELSEWHERE = {
    "index/": "the index reads the sources it catches up with (`reconcile.Origin`)",
    "bench/teams.py": "counts the PostgreSQL truth's own calls",
}
ROOT_BASICS = {"__init__.py", "__main__.py", "errors.py", "model.py", "limits.py", "values.py"}
# The design documents ("seeds", `../shared/seeds/000_*` .. `004_*`) live outside the
# repository, so the code names the layer or the behaviour, not the document's number;
# docs/seeds.md maps each document's rows to the code and the tests. A mention by number
# is allowed only here (file -> its exact lines): a docstring that quotes a document
# where the exact wording matters.
SEED_MENTIONS_ALLOWED: dict[str, tuple[str, ...]] = {}
SEED_MENTION = re.compile(
    r"\bseeds?[\s#'\"(-]*(?:\d{3}|0{0,2}[0-4])\b"  # seed 004, Seed 002's, seed-001, seeds 002
    r"|\bseeds?/00[0-4]"  # a path to one
    r"|\b00[0-4]_(?:\*|[0-9a-f]{16})",  # its file name (not a migration such as 001_docs)
    re.IGNORECASE,
)


def _starts(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(
        name == p.rstrip(".") or name.startswith(p if p.endswith(".") else p + ".")
        for p in prefixes
    )


def _allowed_deferral(edge: Edge) -> bool:
    for importer, target, _why in DEFERRED_FOR_START_UP:
        if _starts(edge.importer, (importer,)) and (not target or _starts(edge.target, (target,))):
            return True
    return False


def test_no_import_cycle_counting_deferred_imports() -> None:
    assert cycles((e.importer, e.target) for e in edges()) == []


def test_the_cycle_detector_sees_a_cycle_through_a_deferred_import(tmp_path: Path) -> None:
    pkg = tmp_path / "memstrata"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "low.py").write_text("def f():\n    from memstrata.a.high import g\n")
    (pkg / "a" / "high.py").write_text("from memstrata.a import low\n")
    found = edges(pkg)
    assert Edge("memstrata.a.low", "memstrata.a.high", True, 2) in found
    assert cycles((e.importer, e.target) for e in found) == [
        ["memstrata.a.high", "memstrata.a.low"]
    ]
    assert not _allowed_deferral(Edge("memstrata.a.low", "memstrata.a.high", True, 2))


def test_deferred_imports_are_only_for_start_up_speed() -> None:
    """An import inside a function hides a dependency from a reader; each one left is
    on the list above, with why the module must not load it when it is imported."""
    offenders = [str(e) for e in edges() if e.deferred and not _allowed_deferral(e)]
    assert offenders == []


def test_each_part_imports_only_what_lies_below_it() -> None:
    offenders = []
    for e in edges():
        for part, above in NEVER_IMPORTS.items():
            if _starts(e.importer, (part,)) and _starts(e.target, above):
                offenders.append(str(e))
    assert offenders == []


def test_the_package_root_holds_only_basics() -> None:
    assert {p.name for p in SRC.glob("*.py")} == ROOT_BASICS


def test_core_never_imports_adapters() -> None:
    offenders = []
    for pkg in CORE:
        for path in (SRC / pkg).rglob("*.py"):
            for mod in _imports(path):
                if mod.startswith(ADAPTERS):
                    offenders.append(f"{path.relative_to(SRC)} imports {mod}")
    assert offenders == []


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


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
    return out


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


def test_only_the_index_and_the_search_engine_run_sql() -> None:
    """One module owns the queries layers, pages, doctor and purge ask (`index.queries`);
    the search engine builds its ranked statements; adapters translate and run none."""
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith(("index/", "search/", *SQL_ELSEWHERE)):
            continue
        offenders += [f"{rel} {what}" for what in _runs_sql(path)]
    assert offenders == []


def test_the_sql_detector_sees_sql() -> None:
    assert any("sqlite3" in w for w in _runs_sql(SRC / "index" / "db.py"))
    assert any(".execute()" in w for w in _runs_sql(SRC / "index" / "queries.py"))
    assert any(".execute()" in w for w in _runs_sql(SRC / "search" / "engine.py"))


def _reaches_truth(path: Path) -> list[int]:
    """Lines where a module reads an attribute named `truth` (a truth object)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "truth"]


def test_only_the_engine_reaches_the_truth() -> None:
    """Writes go through the engine's doors (append, editing, put, make_folder, move):
    no layer, lifecycle step or operation holds the truth itself."""
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith(("files/", "store/", *TRUTH_ELSEWHERE)):
            continue
        offenders += [f"{rel}:{line}" for line in _reaches_truth(path)]
    assert offenders == []
    assert _reaches_truth(SRC / "store" / "engine.py")  # the detector sees the engine's


def test_every_module_is_in_the_import_graph() -> None:
    names = set(modules())
    assert {e.importer for e in edges()} <= names and len(names) > 200


def _seed_mentions(text: str) -> list[str]:
    """Each line where a design document is named by its number (a mention may wrap)."""
    return [
        text.splitlines()[text.count("\n", 0, m.start())].strip()
        for m in SEED_MENTION.finditer(text)
    ]


def test_the_code_names_layers_not_design_documents() -> None:
    """Issue 21 item 6: "seed NNN" stays in docs/seeds.md and the allow-listed quotes."""
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in SRC.rglob("*") if p.is_file()):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        rel = path.relative_to(SRC).as_posix()
        lines = [x for x in _seed_mentions(text) if x not in SEED_MENTIONS_ALLOWED.get(rel, ())]
        if lines:
            found[rel] = lines
    assert found == {}


def test_the_seed_mention_detector_sees_every_form() -> None:
    said = (
        "seed 004",
        "Seed 002's",
        "(seed 003)",
        "seed-004",
        "seeds 002 and 004",
        "records seed\n002's log_metadata",
        "# the seed\n# 001 rule",
        "../shared/seeds/000_*",
        "000_39c47af41e6874e0.txt",
        "000_*",
    )
    assert all(_seed_mentions(s) for s in said), [s for s in said if not _seed_mentions(s)]
    unsaid = ('"001_docs"', "004_source_lines", "a fixed seed per conversation", "seed=7")
    assert not any(_seed_mentions(s) for s in unsaid)
