"""Writer processes for the concurrency and crash tests (run as a script).

    python tests/workers.py append HOME AGENT ROOM N     # N ledger + N LOG appends
    python tests/workers.py crash HOME AGENT ROOM        # write forever, print each ack

Each acknowledged write is printed as one line `kind id` and flushed only after
the library call returned, so the parent knows exactly which writes were
acknowledged before it killed the process.
"""

from __future__ import annotations

import os
import sys

from memstrata import Store


def main() -> None:
    mode, home, agent, room = sys.argv[1:5]
    store = Store(home, agent=agent, room=room)
    me = store.agent()
    out = sys.stdout
    if mode == "append":
        n = int(sys.argv[5])
        for i in range(n):
            e = store.ledger.publish("decision", f"{agent} decision {i}", tags=["load", agent])
            out.write(f"ledger {e.id}\n")
            le = me.log.append("TOOL_USE", f"{agent} step {i}", {"i": i})
            out.write(f"log {le.id}\n")
        out.flush()
        return
    i = 0
    while True:
        i += 1
        choice = i % 4
        if choice == 0:
            e = store.ledger.publish("warning", f"{agent} warns {i} " + "x" * (i % 300))
            out.write(f"ledger {e.id}\n")
        elif choice == 1:
            le = me.log.append("THOUGHT", f"{agent} thought {i}\n" + "y" * (i % 500))
            out.write(f"log {le.id}\n")
        elif choice == 2:
            me.facts.set(f"k{i}", f"value {i}", "general")
            out.write(f"fact k{i}\n")
        else:
            me.sessions.append("s", "user", f"{agent} message {i}")
            out.write(f"session {i}\n")
        out.flush()
        if i % 50 == 0:
            os.sched_yield()


if __name__ == "__main__":
    main()
