"""Body caps on every route of a real `memstrata serve` (issue 20, item 4).

A declared Content-Length over the cap is answered 413 at once, before any body byte
is sent; a chunked body is counted as it arrives and refused at the cap; and sending a
300 MB body leaves the server's peak memory (VmHWM of its /proc entry) near where it
was. The requests go over a raw socket, so the test decides what is sent and when,
and reads the answer while it is still sending.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from tests.web.conftest import Served, seed, start_server, stop_server

from memstrata import limits

MIB = 1024 * 1024
AUTH = b"Authorization: Bearer tok-finn\r\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("caps") / "store"
    seed(home)
    s = start_server(home)
    try:
        yield s
    finally:
        stop_server(s)


def port_of(server: Served) -> int:
    return int(server.base.rsplit(":", 1)[1])


def proc_status(server: Served, field: str) -> int:
    """A size from the server process's /proc/<pid>/status, in bytes."""
    for line in Path(f"/proc/{server.proc.pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} in /proc/<pid>/status")


def reset_peak(server: Served) -> None:
    """Start the peak (VmHWM) over from the current RSS (Linux: `5` to clear_refs)."""
    Path(f"/proc/{server.proc.pid}/clear_refs").write_text("5")


def exchange(
    server: Served, head: bytes, chunks: Iterable[bytes] = ()
) -> tuple[int | None, dict[str, object], int]:
    """Send `head` then `chunks` while a reader waits for the answer; stop sending once
    it came (or the server closed). Returns (status, JSON body, body bytes sent)."""
    sock = socket.create_connection(("127.0.0.1", port_of(server)), timeout=60)
    got = bytearray()
    answered = threading.Event()

    def read() -> None:
        try:
            while True:
                block = sock.recv(65536)
                if not block:
                    return
                got.extend(block)
                head_end = got.find(b"\r\n\r\n")
                if head_end >= 0:
                    length = next(
                        (
                            int(line.split(b":", 1)[1])
                            for line in got[:head_end].split(b"\r\n")
                            if line.lower().startswith(b"content-length:")
                        ),
                        0,
                    )
                    if len(got) >= head_end + 4 + length:
                        return
        except OSError:
            return
        finally:
            answered.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    sent = 0
    try:
        sock.sendall(head)
        for chunk in chunks:
            if answered.is_set():
                break
            sock.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass  # the server closed the connection after answering: expected
    reader.join(60)
    sock.close()
    if not got:
        return None, {}, sent
    status = int(got.split(b" ", 2)[1])
    body = bytes(got[got.find(b"\r\n\r\n") + 4 :])
    try:
        data = json.loads(body) if body else {}
    except ValueError:
        data = {"raw": body[:200].decode("latin-1")}
    return status, data, sent


def head(
    server: Served, path: str, *, length: int | None, ctype: bytes = b"application/json"
) -> bytes:
    framing = (
        b"Transfer-Encoding: chunked\r\n"
        if length is None
        else f"Content-Length: {length}\r\n".encode()
    )
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port_of(server)}\r\n".encode()
        + AUTH
        + b"Content-Type: "
        + ctype
        + b"\r\nAccept: application/json, text/event-stream\r\n"
        + framing
        + b"\r\n"
    )


def chunked(
    total: int, first: bytes = b'{"entry_type": "THOUGHT", "content": "'
) -> Iterator[bytes]:
    """`total` bytes of a JSON body as HTTP/1.1 chunks of 1 MiB (one buffer, reused)."""
    block = b"x" * MIB
    frame = b"%x\r\n" % MIB + block + b"\r\n"
    yield b"%x\r\n" % len(first) + first + b"\r\n"
    for _ in range(total // MIB):
        yield frame
    yield b'2\r\n"}\r\n0\r\n\r\n'


def plain(total: int) -> Iterator[bytes]:
    """`total` bytes of body as sent after a Content-Length (one buffer, reused)."""
    block = b"x" * MIB
    for _ in range(total // MIB):
        yield block


@pytest.mark.parametrize(
    "path",
    ["/api/agents/finn/log", "/api/agents/finn/sessions/s-1/messages", "/mcp", "/login"],
)
def test_a_declared_100_gb_body_is_answered_413_before_it_is_sent(
    server: Served, path: str
) -> None:
    ctype = b"application/x-www-form-urlencoded" if path == "/login" else b"application/json"
    status, data, _ = exchange(server, head(server, path, length=100 * 1024**3, ctype=ctype))
    assert status == 413, data
    assert data["error"]["code"] == "entry_too_large"  # type: ignore[index]


def test_a_chunked_body_over_the_cap_is_refused_and_the_server_goes_on(server: Served) -> None:
    over = limits.HTTP_BODY_BYTES + 4 * MIB
    status, data, _ = exchange(
        server, head(server, "/api/agents/finn/log", length=None), chunked(over)
    )
    assert status == 413, data
    assert data["error"]["code"] == "entry_too_large"  # type: ignore[index]
    status, data, _ = exchange(server, head(server, "/mcp", length=None), chunked(over))
    assert status == 413, data
    with server.client("finn") as c:  # nothing was written, and the server still answers
        r = c.post("/api/agents/finn/log", json={"entry_type": "THOUGHT", "content": "small"})
        assert r.status_code == 201
        tail = c.get("/api/agents/finn/log", params={"n": 3}).json()["entries"]
        assert all(len(e["content"]) < 100 for e in tail)


def test_a_300_mb_body_leaves_the_servers_memory_flat(server: Served) -> None:
    """A 300 MB body costs the server what a body just over the cap costs (the cap and
    its copies), never the body: the peak of each is taken from the RSS it starts at."""
    cap = limits.HTTP_BODY_BYTES
    with server.client("finn") as c:  # the server has served a request: its baseline
        assert c.get("/api/whoami").status_code == 200
    reset_peak(server)
    status, _, _ = exchange(
        server, head(server, "/api/agents/finn/log", length=None), chunked(cap + 4 * MIB)
    )
    assert status == 413
    just_over = proc_status(server, "VmHWM")  # the cap's worth read, then refused
    reset_peak(server)
    before = proc_status(server, "VmRSS")
    status, _, sent = exchange(
        server, head(server, "/api/agents/finn/log", length=None), chunked(300 * MIB)
    )
    assert status == 413
    assert sent < 300 * MIB  # the server stopped reading: the rest was never taken
    status, _, _ = exchange(
        server, head(server, "/api/agents/finn/log", length=300 * MIB), plain(300 * MIB)
    )
    assert status == 413
    peak = proc_status(server, "VmHWM")
    print(
        f"server RSS {before / MIB:.0f} MiB, peak {peak / MIB:.0f} MiB under a 300 MB body, "
        f"{just_over / MIB:.0f} MiB under a body just over the {cap / MIB:.0f} MiB cap"
    )
    assert peak - before < 300 * MIB // 4  # never the body (300 MiB) nor a good part of it
    assert peak < just_over + 2 * cap  # what the cap costs, give or take one more copy
