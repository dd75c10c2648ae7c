"""The package's internal import graph, read from the source (for tests/test_architecture.py).

Every `import memstrata...` / `from memstrata... import ...` of every module is an edge,
top-level or deferred (inside a function); imports under `if TYPE_CHECKING:` are no
edges (they never run). `from memstrata.x import y` is an edge to `memstrata.x.y` when
that is a module, else to `memstrata.x`.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "memstrata"


@dataclass(frozen=True)
class Edge:
    importer: str
    target: str
    deferred: bool
    line: int

    def __str__(self) -> str:
        how = "deferred" if self.deferred else "top-level"
        return f"{self.importer} -> {self.target} ({how}, line {self.line})"


def modules(src: Path = SRC) -> dict[str, Path]:
    out = {}
    for path in src.rglob("*.py"):
        parts = path.relative_to(src.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def edges(src: Path = SRC) -> list[Edge]:
    mods = modules(src)

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    out: list[Edge] = []
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]

        def visit(
            node: ast.AST, in_function: bool, name: str = name, package: str = package
        ) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                    for other in child.orelse:
                        visit(other, in_function)
                    continue
                deferred = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                if isinstance(child, ast.Import):
                    targets = [a.name for a in child.names]
                elif isinstance(child, ast.ImportFrom):
                    base = child.module or ""
                    if child.level:
                        up = package.split(".")[: len(package.split(".")) - child.level + 1]
                        base = ".".join([*up, base] if base else up)
                    targets = [f"{base}.{a.name}" for a in child.names]
                else:
                    targets = []
                for t in targets:
                    target = resolve(t) if t.split(".")[0] == "memstrata" else None
                    if target is not None and target != name:
                        out.append(Edge(name, target, in_function, child.lineno))
                visit(child, deferred)

        visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return out


def cycles(graph: Iterable[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    succ: dict[str, set[str]] = defaultdict(set)
    for a, b in graph:
        succ[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:  # iterative, so a long chain cannot hit the recursion limit
        work = [(v, iter(sorted(succ[v])))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        while work:
            node, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(succ[w]))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))

    for v in sorted(set(succ) | {b for bs in succ.values() for b in bs}):
        if v not in index:
            connect(v)
    return sorted(found)
