"""`memstrata demo`: write, kill, reopen and recall on the embedded default store."""

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
    m = MemoryManager("demo-agent", sys.argv[1])
    m.update_now("Write the blog post on Python decorators", ["Outline", "Draft intro"])
    m.append_log("TOOL_USE", "researched functools.wraps and decorator factories", {"sources": 3})
    m.save_fact("preferred_style", "short paragraphs, code first", "preference")
    m.memory.store.ledger.publish("convention", "Blog code samples target Python 3.11",
                                  tags=["blog", "python"], room_id="room-blog")
    print("written", flush=True)
    time.sleep(120)
""")


def register(sub: Any) -> None:
    p = sub.add_parser("demo", help="write memory in a process, SIGKILL it, reopen and recall")
    p.set_defaults(func=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    from memstrata import MemoryManager
    from memstrata.files.layout import resolve_home

    home = resolve_home(args.home)
    print(f"store: {home}")
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(home)], stdout=subprocess.PIPE, text=True)
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
    return 0
