"""One "host" of a PostgreSQL store, for crash tests: a process with its own home folder.

    python tests/pg_host.py HOME NAME

It imports memstrata once, then reads commands on stdin:

    spawn ROUND   fork a writer (cheap: no new interpreter) that opens the store on
                  HOME as agent w-NAME in room room-NAME and writes forever, printing
                  `ack ledger <id> <round> <retries>` / `ack log <id> <round> <retries>`
                  after each acknowledged write (retries: how many of its operations
                  failed on a connection error and were tried again so far) and
                  `bgerror <job> <error>` when a background job (a LOG compaction)
                  failed, `compacted <round>` when a compaction of its LOG finished;
                  replies `pid <pid>`
    sync          replies `synced` (everything a dead writer printed is before it)
    quit          exits

Writers are SIGKILLed by the test at random; the host reaps them (SIGCHLD ignored).
Every line is one `os.write`, so lines from concurrent writers never interleave.
"""

from __future__ import annotations

import os
import signal
import sys


def out(line: str) -> None:
    os.write(1, (line + "\n").encode())


def writer(home: str, name: str, round_: str) -> None:
    from memstrata import Store

    store = Store(home, agent=f"w-{name}", room=f"room-{name}", watch=False)
    stats = store.engine.truth.stats  # type: ignore[attr-defined]
    history = store.rel(store.layout.compactions(f"w-{name}"))

    def compacted() -> int:
        entry = store.engine.truth.stat(history)
        return entry.size if entry is not None else 0

    n = reported = 0
    seen = compacted()
    while True:
        n += 1
        entry = store.ledger.publish(
            "decision", f"host {name} round {round_} write {n} payload", tags=["crash"]
        )
        out(f"ack ledger {entry.id} {round_} {stats['retries']}")
        log = store.agent().log.append("THOUGHT", f"host {name} round {round_} note {n} payload")
        out(f"ack log {log.id} {round_} {stats['retries']}")
        for key, exc in store.background_errors[reported:]:  # a compaction that failed
            out(f"bgerror {key} {type(exc).__name__}: {exc}")
            reported += 1
        if compacted() > seen:  # a compaction of this writer's LOG finished
            seen = compacted()
            out(f"compacted {round_}")


def main() -> None:
    home, name = sys.argv[1], sys.argv[2]
    # Imported once, before any fork: what every writer would otherwise import again
    # (psycopg and the pool alone cost ~0.1 s of CPU a writer, 140 writers a suite run).
    import tomllib  # noqa: F401  (the store's config.toml)

    import psycopg  # noqa: F401
    import psycopg_pool  # noqa: F401

    import memstrata.files.postgres.truth
    import memstrata.files.postgres.watch
    import memstrata.store.engine
    import memstrata.store.view  # noqa: F401

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # writers are reaped by the kernel
    out("ready")
    for line in sys.stdin:
        cmd, *rest = line.split()
        if cmd == "spawn":
            pid = os.fork()
            if pid == 0:
                try:
                    writer(home, name, rest[0])
                finally:
                    os._exit(1)
            out(f"pid {pid}")
        elif cmd == "sync":
            out("synced")
        elif cmd == "quit":
            return


if __name__ == "__main__":
    main()
