"""Work after the acknowledgement (`store.jobs`): a request for a job is never lost."""

from __future__ import annotations

import threading
from types import TracebackType

from memstrata.store.jobs import Jobs

DEADLINE_S = 30.0  # a condition waited for, never a fixed sleep


class _Window:
    """The jobs' lock, calling `after_release` once in the job's thread right after that
    thread lets it go: the moment a job has run, found no request to run again, and is
    ending."""

    def __init__(self, lock: threading.Lock, job_thread: str) -> None:
        self.lock = lock
        self.job_thread = job_thread
        self.after_release: list[object] = []

    def __enter__(self) -> _Window:
        self.lock.acquire()
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.lock.release()
        if threading.current_thread().name == self.job_thread and self.after_release:
            hook = self.after_release.pop()
            hook()  # type: ignore[operator]


def test_a_request_while_the_job_is_ending_runs_it_again() -> None:
    """A request that came after a job's last look for one, while its thread was still
    ending, was taken for a request to the running job, which never looked again: the job
    did not run, and `drain` did not wait for it (the vectors of the last writes were not
    built after a burst; a search then ranked over what had been built before)."""
    jobs = Jobs()
    window = _Window(jobs._guard, "memstrata vectors")  # type: ignore[arg-type]
    jobs._guard = window  # type: ignore[assignment]
    ran: list[int] = []

    def job() -> None:
        ran.append(1)

    ending, asked = threading.Event(), threading.Event()

    def in_the_window() -> None:
        ending.set()
        assert asked.wait(DEADLINE_S)

    window.after_release.append(in_the_window)
    jobs.start("vectors", job)
    assert ending.wait(DEADLINE_S)  # the job ran, found no request, and is ending
    jobs.start("vectors", job)  # a write acknowledged meanwhile asks for it
    asked.set()
    jobs.drain(DEADLINE_S)
    assert len(ran) == 2
