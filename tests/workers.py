"""Writer processes for the concurrency and crash tests (run as a script).

    python tests/workers.py append HOME AGENT ROOM N     # N ledger + N LOG appends
    python tests/workers.py crash HOME AGENT ROOM        # write forever, print each ack
    python tests/workers.py forks FD                     # fork `crash` writers (below)

Each acknowledged write is printed as one line `kind id` and flushed only after
the library call returned, so the parent knows exactly which writes were
acknowledged before it killed the process.

`forks` is a fork server for the crash rounds, which start three writers a round: a
new interpreter importing memstrata costs each of them more CPU than its writes. It
imports memstrata once, then serves the Unix socket FD: a message `crash HOME AGENT ROOM`
with two file descriptors (the writer's stdout and stderr) forks a writer (its own
process, which opens the store itself and runs `crash` as above) and replies
`pid <pid>`; `wait <pid>` replies `exit <status>` once that writer ended (a negative
status: the signal that ended it, as `subprocess` says it).
"""

from __future__ import annotations

import io
import os
import signal
import socket
import sys

from memstrata import Store


def main() -> None:
    if sys.argv[1] == "forks":
        serve_forks(socket.socket(fileno=int(sys.argv[2])))
        return
    write(*sys.argv[1:5], *sys.argv[5:6])


def serve_forks(sock: socket.socket) -> None:
    alive: set[int] = set()
    while True:
        msg, fds, _flags, _addr = socket.recv_fds(sock, 1024, 2)
        if not msg:  # the test closed its end (it ended, or failed before its kills)
            for pid in alive:
                os.kill(pid, signal.SIGKILL)
            return
        words = msg.decode().split()
        if words[0] == "wait":
            _pid, status = os.waitpid(int(words[1]), 0)
            alive.discard(_pid)
            code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            sock.sendall(f"exit {code}".encode())
            continue
        pid = os.fork()
        if pid == 0:  # the writer
            code = 1
            try:
                sock.close()
                os.dup2(fds[0], 1)
                os.dup2(fds[1], 2)
                for fd in fds:
                    os.close(fd)
                sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False))
                sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
                write(*words)
                code = 0
            except BaseException:
                import traceback

                traceback.print_exc()
            finally:
                os._exit(code)
        alive.add(pid)
        for fd in fds:
            os.close(fd)
        sock.sendall(f"pid {pid}".encode())


def write(mode: str, home: str, agent: str, room: str, n_text: str | None = None) -> None:
    store = Store(home, agent=agent, room=room)
    me = store.agent()
    out = sys.stdout
    if mode == "append":
        n = int(n_text or 0)
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
