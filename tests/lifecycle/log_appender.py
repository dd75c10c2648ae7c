"""A real writer process for the compaction race test (run as a script).

    python log_appender.py HOME AGENT STOPFILE

Appends LOG entries until STOPFILE exists; prints each entry id only after the
append returned (acknowledged), flushing every line.
"""

from __future__ import annotations

import os
import sys
import time

from memstrata import Store


def main() -> None:
    home, agent, stop = sys.argv[1:4]
    store = Store(home, agent=agent)
    log = store.agent().log
    i = 0
    while not os.path.exists(stop):
        entry = log.append("TOOL_USE", f"writer step {i}\nline two of {i}", {"i": i})
        sys.stdout.write(entry.id + "\n")
        sys.stdout.flush()
        i += 1
        time.sleep(0.002)
    store.close()


if __name__ == "__main__":
    main()
