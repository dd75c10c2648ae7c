"""Import trusts nothing in an archive: crafted archives are refused before the store
changes, caps hold while streaming, roles never come from an archive, and an import
killed at any moment leaves the store as it was (or finished) and can be re-run."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import random
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from memstrata import Store
from memstrata.errors import AlreadyExists, EntryTooLarge, MalformedInput, PathOutsideStore
from memstrata.operations.transfer import MANIFEST, export_store, import_archive

EXE = str(Path(sys.executable).parent / "memstrata")
Members = list[tuple[str, bytes | None]]  # (name, bytes) or (name, None) for a folder


def manifest(members: Members) -> bytes:
    files = [
        {"path": n, "size": len(d), "sha256": hashlib.sha256(d).hexdigest()}
        for n, d in members
        if d is not None
    ]
    return json.dumps({"format": "memstrata-export", "version": 1, "files": files}).encode()


def make_tar(
    path: Path, members: Members, *, listed: Members | None = None, with_manifest: bool = True
) -> Path:
    """A .tar.gz of `members`, with a manifest of `listed` (default: the members)."""
    entries = list(members)
    if with_manifest:
        entries.append((MANIFEST, manifest(members if listed is None else listed)))
    with tarfile.open(path, "w:gz") as tar:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


def snapshot(home: Path) -> dict[str, str]:
    """Every memory file of a store (hidden and derived files aside) by its sha256."""
    out = {}
    if home.exists():
        for p in sorted(home.rglob("*")):
            rel = p.relative_to(home).as_posix()
            if (
                p.is_file()
                and not rel.startswith((".", "index.db", "index/"))
                and "/." not in rel
                and not rel.startswith("events")
            ):
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def leftovers(home: Path) -> list[str]:
    return (
        sorted(p.name for p in (home / ".imports").iterdir())
        if (home / ".imports").exists()
        else []
    )


def importing(home: Path, src: Path, **kw: bool) -> None:
    with Store(home) as s:
        import_archive(s, src, **kw)


GOOD: Members = [
    ("ledger.jsonl", b""),
    ("agents/finn/memory/NOW.md", b"# NOW\n\n## Objective\nship it\n"),
    (
        "agents/finn/facts.jsonl",
        b'{"op":"set","key":"lang","value":"python","updated_at":"2026-01-01T00:00:00Z"}\n',
    ),
]


def test_a_good_archive_imports_and_says_it_was_verified(home: Path, tmp_path: Path) -> None:
    src = make_tar(tmp_path / "good.tar.gz", GOOD)
    with Store(home) as s:
        report = import_archive(s, src)
        assert report.verified and report.files == 3 and report.written == 3
        assert s.agent("finn").facts.get("lang").value == "python"
    assert leftovers(home) == [] and not (home / ".imports").exists()


@pytest.mark.parametrize(
    ("case", "members", "listed", "error", "words"),
    [
        (
            "unlisted member",
            [*GOOD, ("agents/finn/memory/evil.md", b"planted")],
            GOOD,
            MalformedInput,
            "not listed in the manifest",
        ),
        (
            "tampered member",
            [*GOOD[:2], ("agents/finn/facts.jsonl", b"{}\n")],
            GOOD,
            MalformedInput,
            "sha256",
        ),
        ("listed but absent", GOOD[:2], GOOD, MalformedInput, "listed but absent"),
        (
            "duplicate member",
            [*GOOD, ("agents/finn/memory/NOW.md", b"# NOW\nsecond\n")],
            None,
            MalformedInput,
            "twice",
        ),
        (
            "file then folder",
            [*GOOD, ("agents/finn/memory/n.md", b"a"), ("agents/finn/memory/n.md/inner.md", b"b")],
            None,
            MalformedInput,
            "both a file and a folder",
        ),
        (
            "folder then file",
            [*GOOD, ("agents/finn/memory/n.md/inner.md", b"b"), ("agents/finn/memory/n.md", b"a")],
            None,
            MalformedInput,
            "both a file and a folder",
        ),
        (
            "folder member then file",
            [*GOOD, ("agents/finn/memory/n.md", None), ("agents/finn/memory/n.md", b"a")],
            None,
            MalformedInput,
            "both a file and a folder",
        ),
        (
            "absolute member",
            [*GOOD, ("/memories/x.md", b"rooted")],
            None,
            PathOutsideStore,
            "absolute",
        ),
        (
            "absolute store path",
            [*GOOD, ("/etc/cron.d/x", b"rooted")],
            None,
            PathOutsideStore,
            "absolute",
        ),
        (
            "dot-dot member",
            [*GOOD, ("agents/finn/../../escape.md", b"out")],
            None,
            PathOutsideStore,
            "outside",
        ),
        (
            "control character",
            [*GOOD, ("agents/finn\n/memory/x.md", b"x")],
            None,
            MalformedInput,
            "control",
        ),
        ("bad agent name", [*GOOD, ("agents/-x/memory/x.md", b"x")], None, MalformedInput, "agent"),
    ],
)
def test_crafted_archives_are_refused_before_anything_is_written(
    home: Path,
    tmp_path: Path,
    case: str,
    members: Members,
    listed: Members | None,
    error: type[Exception],
    words: str,
) -> None:
    with Store(home, agent="finn") as s:
        s.agent().log.append("THOUGHT", "the store before the import")
    before = snapshot(home)
    src = make_tar(tmp_path / "crafted.tar.gz", members, listed=listed)
    with pytest.raises(error, match=words):
        importing(home, src)
    assert snapshot(home) == before, case
    assert leftovers(home) == []
    assert not (home / "memories").exists() and not (tmp_path / "escape.md").exists()
    assert not (Path("/memories/x.md")).exists()


def test_a_manifest_is_required_unless_unverified_and_other_checks_still_hold(
    home: Path, tmp_path: Path
) -> None:
    bare = make_tar(tmp_path / "bare.tar.gz", GOOD, with_manifest=False)
    with pytest.raises(MalformedInput, match="no manifest"):
        importing(home, bare)
    assert snapshot(home) == {}
    with Store(home) as s:
        report = import_archive(s, bare, unverified=True)
    assert not report.verified and report.written == 3
    evil = make_tar(tmp_path / "evil.tar.gz", [("/memories/x.md", b"x")], with_manifest=False)
    with pytest.raises(PathOutsideStore):
        importing(home, evil, unverified=True)
    collide = make_tar(
        tmp_path / "c.tar.gz", [("agents/finn/memory/NOW.md/x.md", b"x")], with_manifest=False
    )
    with pytest.raises(AlreadyExists, match="needs a folder where the store has the file"):
        importing(home, collide, unverified=True)  # a file/folder collision with the store
    assert leftovers(home) == []


def test_roles_and_settings_are_never_taken_from_an_archive(home: Path, tmp_path: Path) -> None:
    members: Members = [
        ("config.toml", b'[roles]\nadmin = ["mallory"]\n'),
        ("agents/mallory/memory/NOW.md", b"# NOW\nmine now\n"),
    ]
    src = make_tar(tmp_path / "roles.tar.gz", members)
    with Store(home) as s:
        report = import_archive(s, src)
    assert not (home / "config.toml").exists()
    assert report.skipped[0][0] == "config.toml" and "roles" in report.skipped[0][1]
    with Store(home, agent="mallory") as m:
        assert m.principal.role == "project"
        assert m.agent().now.read() == "# NOW\nmine now\n"
    r = subprocess.run(
        [EXE, "--home", str(tmp_path / "cli"), "import", str(src)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0 and "skipped config.toml" in r.stderr


def test_caps_on_member_count_file_size_and_total_size(home: Path, tmp_path: Path) -> None:
    home.mkdir()
    (home / "config.toml").write_text(
        "[import]\nmax_members = 20\nmax_file_bytes = 65536\nmax_total_bytes = 100000\n"
    )
    many = [(f"agents/finn/memory/n{i}.md", b"x") for i in range(30)]
    with pytest.raises(EntryTooLarge, match="max_members"):
        importing(home, make_tar(tmp_path / "many.tar.gz", many))
    big = [("agents/finn/memory/big.md", b"a" * 70_000)]
    with pytest.raises(EntryTooLarge, match="max_file_bytes"):
        importing(home, make_tar(tmp_path / "big.tar.gz", big))
    total = [(f"agents/finn/memory/t{i}.md", b"b" * 30_000) for i in range(4)]
    with pytest.raises(EntryTooLarge, match="max_total_bytes"):
        importing(home, make_tar(tmp_path / "total.tar.gz", total))
    assert not (home / "agents").exists() and leftovers(home) == []


def bomb(path: Path, size: int) -> Path:
    """A .tar.gz whose one member is `size` zero bytes, about size/1000 compressed.

    Written as concatenated gzip members (valid gzip, read as one stream): one
    compressed MiB of zeros repeated, so making a 1 GiB bomb takes milliseconds.
    """
    info = tarfile.TarInfo("agents/finn/memory/bomb.md")
    info.size = size
    mib = gzip.compress(b"\0" * (1 << 20), compresslevel=9)
    with open(path, "wb") as out:
        out.write(gzip.compress(info.tobuf(format=tarfile.GNU_FORMAT)))
        for _ in range(size >> 20):
            out.write(mib)
        out.write(gzip.compress(b"\0" * ((size & ((1 << 20) - 1)) + 1024)))  # pad + end
    return path


LAUNCH = """
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(p.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss // 1024)
"""


def rss_of(args: list[str]) -> tuple[int, int]:
    """Run a command; its exit code and peak resident memory in MiB.

    Through a small launcher: a child forked straight from this (large) test process
    would count the parent's pages, shared until its exec, in its peak.
    """
    out = subprocess.run(
        [sys.executable, "-c", LAUNCH, *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout.split()
    return int(out[0]), int(out[1])


def test_a_gzip_bomb_is_refused_by_its_size_without_reading_it(home: Path, tmp_path: Path) -> None:
    src = bomb(tmp_path / "bomb.tar.gz", 1 << 30)  # 1 GiB of zeros, ~1 MB compressed
    assert src.stat().st_size < 2 * 1024 * 1024
    start = time.monotonic()
    code, rss = rss_of([EXE, "--home", str(home), "import", str(src)])
    took = time.monotonic() - start
    assert code == 2 and rss < 200 and took < 20
    assert snapshot(home) == {} and leftovers(home) == []
    # Under the cap it is streamed, never held whole in memory.
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text("[import]\nmax_file_bytes = 100000000\n")
    mid = bomb(tmp_path / "mid.tar.gz", 64 << 20)
    code, rss = rss_of([EXE, "--home", str(home), "import", "--unverified", str(mid)])
    assert code == 0 and rss < 150
    assert (home / "agents/finn/memory/bomb.md").stat().st_size == 64 << 20


def header_bomb(path: Path, kind: bytes, size: int) -> Path:
    """A .tar.gz that opens with one extended header (`kind`: GNU long name `L`, pax
    `x`) declaring a `size`-byte body of `a`s, written like `bomb` (~size/1000)."""
    info = tarfile.TarInfo("././@LongLink")
    info.type = kind
    info.size = size
    head = info._create_header(
        info.get_info(),
        tarfile.USTAR_FORMAT,  # type: ignore[attr-defined]
        "utf-8",
        "surrogateescape",
    )
    mib = gzip.compress(b"a" * (1 << 20), compresslevel=9)
    with open(path, "wb") as out:
        out.write(gzip.compress(head))
        for _ in range(size >> 20):
            out.write(mib)
        out.write(gzip.compress(b"\0" * 10240))
    return path


@pytest.mark.parametrize(
    "kind,size",
    [(tarfile.GNUTYPE_LONGNAME, 1 << 30), (tarfile.XHDTYPE, 512 << 20)],
    ids=["longname", "pax"],
)
def test_a_tarbomb_in_an_extended_header_is_refused_by_its_declared_size(
    home: Path, tmp_path: Path, kind: bytes, size: int
) -> None:
    # tarfile reads a long name's or a pax header's body whole, before any member is
    # seen: uncapped, these 1 MB archives took 3.1 GB and 1.5 GB of memory.
    src = header_bomb(tmp_path / "hdr.tar.gz", kind, size)
    assert src.stat().st_size < 2 * 1024 * 1024
    code, rss = rss_of([EXE, "--home", str(home), "import", "--unverified", str(src)])
    assert code == 2 and rss < 300
    with pytest.raises(EntryTooLarge, match="tar header of"):
        importing(home, src, unverified=True)
    assert snapshot(home) == {} and leftovers(home) == []


def test_sparse_members_and_endless_header_chains_are_refused(home: Path, tmp_path: Path) -> None:
    sparse = tarfile.TarInfo("agents/finn/memory/s.md")
    sparse.type = tarfile.GNUTYPE_SPARSE
    pax_sparse = tarfile.TarInfo("agents/finn/memory/p.md")
    pax_sparse.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0"}
    chained = b"".join(_long_name(f"agents/finn/memory/{'d' * 120}{i}.md") for i in range(2000))
    for name, raw, words in [
        ("gnu-sparse", sparse.tobuf(format=tarfile.GNU_FORMAT), "sparse"),
        ("pax-sparse", pax_sparse.tobuf(format=tarfile.PAX_FORMAT), "sparse"),
        ("chain", chained, "extended tar headers before one member"),
    ]:
        src = tmp_path / f"{name}.tar.gz"
        src.write_bytes(gzip.compress(raw + b"\0" * 10240))
        with pytest.raises(MalformedInput, match=words):
            importing(home, src, unverified=True)
    assert snapshot(home) == {} and leftovers(home) == []


def _long_name(name: str) -> bytes:
    """A GNU long-name header (and its body) for `name`, with no member after it."""
    info = tarfile.TarInfo("././@LongLink")
    info.type = tarfile.GNUTYPE_LONGNAME
    body = name.encode() + b"\0"
    info.size = len(body)
    return info.tobuf(format=tarfile.GNU_FORMAT) + body + b"\0" * (-len(body) % 512)


@pytest.mark.parametrize("fmt", [tarfile.GNU_FORMAT, tarfile.PAX_FORMAT], ids=["gnu", "pax"])
def test_long_member_names_still_import(home: Path, tmp_path: Path, fmt: int) -> None:
    name = f"agents/finn/memory/{'deep/' * 30}{'n' * 200}.md"  # over ustar's 100+155
    members: Members = [(name, b"# long\n")]
    src = tmp_path / "long.tar.gz"
    with tarfile.open(src, "w:gz", format=fmt) as tar:
        for n, data in [*members, (MANIFEST, manifest(members))]:
            info = tarfile.TarInfo(n)
            info.size = len(data or b"")
            tar.addfile(info, io.BytesIO(data or b""))
    importing(home, src)
    assert (home / name).read_bytes() == b"# long\n"


def test_readme_export_then_import_into_the_same_store_works(home: Path, tmp_path: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [EXE, "--home", str(home), *args],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )

    assert cli("init", "finn").returncode == 0
    assert cli("--agent", "finn", "facts", "set", "lang", "python").returncode == 0
    before = snapshot(home)
    r = subprocess.run(
        f"{EXE} --home {home} export backup.tar.gz && {EXE} --home {home} import backup.tar.gz",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert "already identical" in r.stdout and snapshot(home) == before


def test_export_and_import_are_library_functions_for_admins_only(
    home: Path, tmp_path: Path
) -> None:
    from memstrata.errors import ScopeDenied

    with Store(home, agent="finn") as s:
        s.agent().log.append("THOUGHT", "x")
        with pytest.raises(ScopeDenied):
            export_store(s, tmp_path / "x.tar.gz")
        with pytest.raises(ScopeDenied):
            import_archive(s, tmp_path / "x.tar.gz")
    with Store(home) as admin:
        report = export_store(admin, tmp_path / "x.tar.gz")
    assert report.files >= 2 and (tmp_path / "x.tar.gz").exists()


@pytest.fixture(scope="module")
def big_export(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    tmp_path = tmp_path_factory.mktemp("export")
    src = tmp_path / "src"
    # (set up before any test's environment: without this, the 150 writes embedded
    # their notes with all-MiniLM-L6-v2, vectors an export does not carry)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMSTRATA_EMBEDDER", "none")
        with Store(src) as s:
            mem = s.agent("finn", create=True)
            for i in range(150):
                mem.files.write(f"notes/n{i:03d}.md", f"# note {i}\n" + "text " * 400)
            for a in range(10):
                s.agent(f"a{a}", create=True).log.append("THOUGHT", f"agent {a} was here")
        with Store(src) as admin:
            export_store(admin, tmp_path / "big.tar.gz")
    return tmp_path / "big.tar.gz", snapshot(src)


IMPORTER = "from memstrata.cli.main import main; import sys; sys.exit(main(sys.argv[1:]))"


def _target(home: Path) -> None:
    with Store(home, agent="zed") as s:
        s.agent().log.append("THOUGHT", "zed was here first")


@pytest.fixture(scope="module")
def import_span(
    tmp_path_factory: pytest.TempPathFactory, big_export: tuple[Path, dict[str, str]]
) -> float:
    """How long a whole import of the big export into a store takes here (a CLI process),
    measured once for the module: the kill tests kill one at a random point of that span."""
    timing = tmp_path_factory.mktemp("timing") / "target"
    with pytest.MonkeyPatch.context() as mp:  # as the tests run it (see `big_export`)
        mp.setenv("MEMSTRATA_EMBEDDER", "none")
        _target(timing)
        start = time.monotonic()
        subprocess.run(
            [sys.executable, "-c", IMPORTER, "--home", str(timing), "import", str(big_export[0])],
            check=True,
            capture_output=True,
            timeout=120,
        )
        return time.monotonic() - start


@pytest.mark.parametrize("seed", range(int(os.environ.get("MEMSTRATA_KILL_ROUNDS", "2"))))
def test_an_import_killed_at_a_random_moment_leaves_no_partial_store(
    tmp_path: Path, seed: int, big_export: tuple[Path, dict[str, str]], import_span: float
) -> None:
    archive, expected = big_export
    home = tmp_path / "target"
    _target(home)
    before = snapshot(home)
    full = {**before, **expected}
    span = import_span  # a whole import's seconds: kill one at a random point of that span
    rng = random.Random(seed)
    p = subprocess.Popen(
        [sys.executable, "-c", IMPORTER, "--home", str(home), "import", str(archive)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(rng.uniform(0.1, 1.0) * span)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=60)
    with Store(home) as s:  # any open finishes or discards the dead import
        s.agent("zed")
    after_kill = snapshot(home)
    assert after_kill in (before, full), "a partial import is visible"
    assert leftovers(home) == []
    r = subprocess.run(
        [EXE, "--home", str(home), "--json", "import", str(archive)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert snapshot(home) == full and leftovers(home) == []
    with Store(home, agent="a3") as s:
        assert [e.content for e in s.agent().log.entries()] == ["agent 3 was here"]


# A real SIGKILL at the two moments that matter most: just before the commit marker,
# and half-way through moving the committed files into place.
KILL_AT = """
import os, signal, sys
from memstrata.operations.transfer import importer
where, after = sys.argv[1], int(sys.argv[2])
if where == "commit":
    def commit(*a, **k):
        os.kill(os.getpid(), signal.SIGKILL)
    importer._commit = commit
else:
    place, moved = importer._place, []
    def _place(*a, **k):
        if len(moved) == after:
            os.kill(os.getpid(), signal.SIGKILL)
        moved.append(1)
        place(*a, **k)
    importer._place = _place
from memstrata.cli.main import main
sys.exit(main(sys.argv[3:]))
"""


@pytest.mark.parametrize(("where", "state"), [("commit", "before"), ("move", "full")])
def test_a_kill_before_the_commit_leaves_the_store_and_after_it_the_next_open_finishes(
    tmp_path: Path, big_export: tuple[Path, dict[str, str]], where: str, state: str
) -> None:
    archive, expected = big_export
    home = tmp_path / "target"
    with Store(home, agent="zed") as s:
        s.agent().log.append("THOUGHT", "zed was here first")
    before = snapshot(home)
    p = subprocess.run(
        [sys.executable, "-c", KILL_AT, where, "40", "--home", str(home), "import", str(archive)],
        capture_output=True,
        timeout=120,
    )
    assert p.returncode == -signal.SIGKILL
    if where == "move":  # half of it is in place right now, the rest still staged
        assert snapshot(home) not in (before, {**before, **expected})
        assert leftovers(home) != []
    with Store(home) as s:
        s.agent("zed")
    assert snapshot(home) == (before if state == "before" else {**before, **expected})
    assert leftovers(home) == []
    r = subprocess.run(
        [EXE, "--home", str(home), "import", str(archive)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert snapshot(home) == {**before, **expected}


def test_a_plain_tar_of_a_store_folder_imports_unverified(home: Path, tmp_path: Path) -> None:
    src = tmp_path / "src"
    with Store(src, agent="finn") as s:
        s.agent().facts.set("lang", "python")
    archive = tmp_path / "plain.tgz"
    subprocess.run(["tar", "-C", str(src), "-czf", str(archive), "."], check=True)
    with Store(home) as s:
        with pytest.raises(MalformedInput, match="no manifest"):
            import_archive(s, archive)
        report = import_archive(s, archive, unverified=True)
        assert s.agent("finn").facts.get("lang").value == "python"
    skipped = {p for p, _ in report.skipped}
    assert any(p.startswith("index/") for p in skipped) and any(
        p.startswith(".locks/") for p in skipped
    )
