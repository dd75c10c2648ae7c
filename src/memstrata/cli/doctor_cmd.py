"""`memstrata doctor [--fix]`: does the derived index still agree with the files?

Opens the store without catching up, parses every source file afresh (the same
parsers `reindex` uses) and compares, source by source, the docs the files
yield with the rows the index holds: missing, stale and changed docs, docs of
files that no longer exist, and the superseded flags of the ledger. It also
lists what the files hold that could not be read cleanly (torn or hand-mangled
records, LOG blocks with a cut footer or a copied id, JSON entries the code does
not understand, a damaged session index: each skipped or kept as said, never
fatal) and runs SQLite's and FTS5's integrity checks. Exit 0 only when the
index agrees and every file reads cleanly, 1 otherwise; `--fix` rebuilds a
drifted or damaged index and checks again (file problems need a person). On a
read-only disk doctor says so and what it cannot fix there, and `--fix` refuses
(ReadOnlyStore) instead of rebuilding a throwaway private copy.
"""

from __future__ import annotations

import argparse
from typing import Any

from memstrata.operations.doctor import Findings, examine

__all__ = ["Findings", "examine", "register", "render", "run_doctor"]


def register(sub: Any) -> None:
    p = sub.add_parser("doctor", help="check the index against the files (exit 1 on drift)")
    p.add_argument("--fix", action="store_true", help="rebuild the index if it drifted")
    p.set_defaults(func=run_doctor)


def render(f: Findings, home: str) -> str:
    lines = [
        f"index: {home}/index/",
        f"sources: {f.sources} checked; docs: {f.file_docs} in files, {f.index_docs} in index",
    ]
    if f.drift:
        lines.append(f"DRIFT in {len(f.drift)} place(s):")
        for d in f.drift:
            detail = ", ".join(f"{k} {v}" for k, v in d.items() if k not in ("source", "problem"))
            lines.append(f"  {d['source']}: {d['problem']} ({detail})")
    else:
        lines.append("drift: none, every source matches its index rows")
    if f.bad_lines:
        lines.append(
            f"not read cleanly ({len(f.bad_lines)}; each kept or skipped as said, "
            "fix them by hand):"
        )
        lines += [f"  {b['source']} @ byte {b['offset']}: {b['reason']}" for b in f.bad_lines[:20]]
        if len(f.bad_lines) > 20:
            lines.append(f"  ... and {len(f.bad_lines) - 20} more (--json lists them all)")
    else:
        lines.append("bad lines: none")
    lines.append(f"integrity_check: {'; '.join(f.integrity)}")
    lines.append(f"fts integrity: {f.fts_integrity}")
    if f.cannot_fix and f.index_ok:
        lines.append(f"note: {f.cannot_fix}")
    if f.cannot_fix and not f.index_ok:
        lines.append(f"result: PROBLEMS FOUND in the index on disk: {f.cannot_fix}")
    elif not f.index_ok:
        lines.append(
            "result: PROBLEMS FOUND: run `memstrata reindex` (or `memstrata doctor --fix`)"
        )
    elif f.bad_lines:
        lines.append(
            f"result: FILE PROBLEMS: {len(f.bad_lines)} place(s) in the files could not "
            "be read cleanly (listed above); the index holds everything that could"
        )
    else:
        lines.append("result: OK")
    return "\n".join(lines)


def run_doctor(args: argparse.Namespace) -> int:
    from memstrata.cli.common import warn_config
    from memstrata.cli.main import emit
    from memstrata.store.view import Store

    # Store-wide (every agent's files): the person at the terminal owns them, so doctor
    # runs as the store's owner whatever --agent says; over HTTP it is for admins only.
    with Store(args.home, room=args.room, sync=False) as store:
        warn_config(store)
        if args.fix:
            store.engine.index_access.check_rebuild()  # a read-only disk: refuse, fix nothing
        findings = examine(store)
        fixed = False
        if args.fix and not findings.index_ok:  # a rebuild cannot fix the files themselves
            store.reindex()
            findings = examine(store)
            fixed = True
        home = str(store.home)
    emit(
        args,
        {**findings.to_dict(), "fixed": fixed, "home": home},
        ("rebuilt the index, then:\n" if fixed else "") + render(findings, home),
    )
    return 0 if findings.ok else 1
