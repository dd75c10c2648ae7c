"""`memstrata demo [FOLDER]`: write, kill, reopen and recall, in a store of its own.

The demo never touches the store `--home` names (the one `make run` serves): it
writes into FOLDER, which must be new or empty, or into a fresh temporary folder,
so running it twice never duplicates anything. The folder is kept and printed, so
the result can be inspected afterwards.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import textwrap
from typing import Any

CHILD = textwrap.dedent("""
    import sys, time
    from memstrata import MemoryManager
    m = MemoryManager("demo-agent", sys.argv[1], room="room-blog")
    m.update_now("Write the blog post on Python decorators", ["Outline", "Draft intro"])
    m.append_log("TOOL_USE", "researched functools.wraps and decorator factories", {"sources": 3})
    m.save_fact("preferred_style", "short paragraphs, code first", "preference")
    m.store.ledger.publish("convention", "Blog code samples target Python 3.11",
                           tags=["blog", "python"])
    print("written", flush=True)
    time.sleep(120)
""")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="write memory in a process, SIGKILL it, reopen and recall (own store)",
        description="Show the durability promise in a store of its own: a child process "
        "writes NOW, LOG, a fact and a ledger entry and is killed with SIGKILL; "
        "a fresh process reopens the store, recalls and prints the context.",
        epilog="example: memstrata demo            # a fresh temporary store, kept and printed",
    )
    p.add_argument(
        "folder",
        nargs="?",
        help="where to write the demo store (must be new or empty; "
        "default: a fresh temporary folder)",
    )
    p.set_defaults(func=run_demo)


def _folder(arg: str | None) -> str:
    import tempfile
    from pathlib import Path

    from memstrata.errors import AlreadyExists

    if arg is None:
        return tempfile.mkdtemp(prefix="memstrata-demo-")
    path = Path(arg)
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise AlreadyExists(
            f"{arg} is not an empty folder: the demo writes into a new store "
            "(leave FOLDER out for a fresh temporary one)"
        )
    path.mkdir(parents=True, exist_ok=True)
    return str(path.resolve())


def run_demo(args: argparse.Namespace) -> int:
    from memstrata import MemoryManager
    from memstrata.cli.common import command_name

    home = _folder(args.folder)
    print(f"demo store: {home}")
    child = subprocess.Popen([sys.executable, "-c", CHILD, home], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    line = child.stdout.readline().strip()
    child.send_signal(signal.SIGKILL)
    child.wait()
    print(f"writer process {child.pid}: {line}, then killed with SIGKILL")
    with MemoryManager("demo-agent", home) as m:
        print("reopened; NOW.md says:", m.memory.now.state().objective)
        print("last LOG entry:", m.read_log(1)[0]["content"])
        print("fact preferred_style =", m.get_fact("preferred_style"))
        for hit in m.recall_memory("decorators blog python", n_results=3):
            print(f"recall [{hit.layer}] {hit.snippet}")
        print()
        print(m.format_context_for_prompt(budget_chars=1500))
    print(f"\ninspect it: {command_name()} --home {home} --agent demo-agent context")
    return 0
