"""Work after the acknowledgement: one background thread per job key.

Triggered maintenance (LOG compaction, transcript flush) must never slow down or
fail the acknowledged write that crossed a limit. At most one job per key runs at
a time: a request while it runs makes it run once more when it ends (the files
may have grown past the limit again meanwhile). A job's exception is logged and
kept in `errors`, never raised to a writer. The engine's `close()` waits for
every job (`drain`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Jobs:
    def __init__(self) -> None:
        self._jobs: dict[str, threading.Thread] = {}
        self._guard = threading.Lock()
        self._rerun: set[str] = set()
        self.errors: list[tuple[str, BaseException]] = []

    def start(self, key: str, job: Callable[[], object]) -> bool:
        """Run `job` in a background thread; False if the running one will run again."""
        with self._guard:
            running = self._jobs.get(key)
            if running is not None and running.is_alive():
                self._rerun.add(key)
                return False

            def run() -> None:
                while True:
                    try:
                        job()
                    except Exception as exc:  # reported, never raised to the writer
                        self.errors.append((key, exc))
                        import logging  # only when a job failed (start-up)

                        logging.getLogger("memstrata").warning("memstrata: %s failed: %s", key, exc)
                    with self._guard:
                        if key not in self._rerun:
                            # Not running from here on: a request that comes while this
                            # thread ends starts a new one (as running, it was lost).
                            if self._jobs.get(key) is threading.current_thread():
                                del self._jobs[key]
                            return
                        self._rerun.discard(key)

            thread = threading.Thread(target=run, name=f"memstrata {key}")
            self._jobs[key] = thread
            thread.start()
            return True

    def drain(self, timeout: float | None = None) -> None:
        """Wait for the jobs started (and any they started)."""
        while True:
            with self._guard:
                pending = [t for t in self._jobs.values() if t.is_alive()]
                if not pending:
                    self._jobs.clear()
                    return
            for t in pending:
                if t is threading.current_thread():
                    return
                t.join(timeout)
                if timeout is not None and t.is_alive():
                    return
