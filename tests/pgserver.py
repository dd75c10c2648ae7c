"""A real PostgreSQL server for the tests: initdb into a temporary folder, a Unix socket.

One server per test session (`PgServer.start`), one database per test
(`create_database`). The server binaries are Debian's (`/usr/lib/postgresql/*/bin`,
installed by `.ci/run` where missing); as root the server runs as `nobody`, which
owns its data folder. Trust authentication on the socket only (no TCP port).
`stop(mode="immediate")` and `start()` restart the same cluster (crash tests).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

SUPERUSER = "memstrata"


def find_bin() -> Path | None:
    """The newest PostgreSQL server bin folder on this machine, or None."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
    )
    override = os.environ.get("MEMSTRATA_PG_BIN")
    if override:
        return Path(override)
    return Path(found[-1]).parent if found else None


def unavailable_reason() -> str | None:
    """Why no server can be started here (None: one can)."""
    if find_bin() is None:
        return (
            "no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb): "
            "apt-get install postgresql (.ci/run does)"
        )
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser: cannot start PostgreSQL as an unprivileged user"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed: pip install -e '.[postgres]'"
    return None


class PgServer:
    def __init__(self, root: Path, *, fsync: bool = False) -> None:
        self.bin = find_bin()
        assert self.bin is not None
        self.root = root
        self.data = root / "data"
        self.sock = root / "sock"
        self.log = root / "server.log"
        self.fsync = fsync
        self.as_nobody = os.geteuid() == 0
        self._shared: str | None = None

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = list(args)
        if self.as_nobody:
            cmd = ["runuser", "-u", "nobody", "--", *cmd]
        return subprocess.run(cmd, check=check, capture_output=True, text=True, timeout=120)

    def init(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.sock.mkdir(exist_ok=True)
        if self.as_nobody:
            for p in (self.root, self.sock):
                shutil.chown(p, "nobody")
            os.chmod(self.root, 0o755)
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
        )

    def start(self) -> None:
        opts = (
            f"-k {self.sock} -c listen_addresses='' -c fsync={'on' if self.fsync else 'off'} "
            "-c max_connections=200 -c shared_buffers=32MB"
        )
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-w",
            "-t",
            "60",
            "-o",
            opts,
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        self._run(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop", check=False
        )

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@/{database}?host={self.sock}"

    def create_database(self) -> str:
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def empty_database(self) -> str:
        """The session's shared test database, every memstrata table emptied."""
        import psycopg

        if self._shared is None:
            self._shared = self.create_database()
        with psycopg.connect(self._shared, autocommit=True) as conn:
            tables = [
                r[0]
                for r in conn.execute(
                    "SELECT tablename FROM pg_tables WHERE tablename LIKE 'memstrata_%' "
                    "AND tablename <> 'memstrata_migrations'"
                )
            ]
            if tables:
                conn.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")
        return self._shared

    @classmethod
    def start_new(cls, *, fsync: bool = False) -> PgServer:
        root = Path(tempfile.mkdtemp(prefix="memstrata-pg-"))
        server = cls(root, fsync=fsync)
        server.init()
        server.start()
        return server

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)
