"""A real writer process for the compaction race test (run as a script).

    python log_appender.py HOME AGENT STOPFILE [SESSION]

Appends LOG entries (or messages to session SESSION) until STOPFILE exists; prints each entry id only after the
append returned (acknowledged), flushing every line.
"""

from __future__ import annotations

import os
import sys
import time

from memstrata import Store


def main() -> None:
    home, agent, stop = sys.argv[1:4]
    session = sys.argv[4] if len(sys.argv) > 4 else None
    store = Store(home, agent=agent)
    log, sessions = store.agent().log, store.agent().sessions
    i = 0
    while not os.path.exists(stop):
        if session:
            ack = sessions.append(session, "user", f"writer message {i}").id
        else:
            ack = log.append("TOOL_USE", f"writer step {i}\nline two of {i}", {"i": i}).id
        sys.stdout.write(ack + "\n")
        sys.stdout.flush()
        i += 1
        time.sleep(0.002)
    store.close()


if __name__ == "__main__":
    main()
