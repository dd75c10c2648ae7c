"""The `memory_20250818` handler against a dict-backed fake of the `MemoryFiles` Protocol.

The fake mimics the real layer's contract: paths relative to the memory dir,
`list` recursive with directories included, `exists` true for files only,
memstrata's typed errors for misses, duplicates and bad lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from memstrata.errors import AlreadyExists, InvalidInput, NotFound, NotUnique
from memstrata.mcp.claude_memory import ClaudeMemoryHandler, MemoryFiles, human_size


@dataclass(frozen=True)
class Info:
    path: str
    size: int
    is_dir: bool = False


class FakeFiles:
    def __init__(self, files: dict[str, str] | None = None) -> None:
        self.files: dict[str, str] = dict(files or {})
        self.calls: list[str] = []

    def _dirs(self) -> set[str]:
        out: set[str] = set()
        for p in self.files:
            parts = p.split("/")[:-1]
            out.update("/".join(parts[: i + 1]) for i in range(len(parts)))
        return out

    def read(self, path: str) -> str:
        if path not in self.files:
            raise NotFound(f"no memory file {path!r}")
        return self.files[path]

    def write(self, path: str, content: str) -> object:
        self.calls.append(f"write {path}")
        self.files[path] = content
        return Info(path, len(content.encode()))

    def replace(self, path: str, old: str, new: str) -> object:
        text = self.read(path)
        if text.count(old) != 1:
            raise NotUnique(f"text to replace found {text.count(old)} times in {path}")
        self.files[path] = text.replace(old, new, 1)
        return Info(path, len(self.files[path]))

    def insert(self, path: str, line: int, text: str) -> object:
        lines = self.read(path).split("\n")
        if self.files[path].endswith("\n"):
            lines.pop()
        if not 0 <= line <= len(lines):
            raise InvalidInput(f"line {line} is out of range")
        lines[line:line] = text.rstrip("\n").split("\n")
        self.files[path] = "\n".join(lines) + "\n"
        return Info(path, len(self.files[path]))

    def list(self, path: str = "") -> list[Any]:
        if path and path not in self._dirs():
            if path in self.files:
                return [Info(path, len(self.files[path].encode()))]
            raise NotFound(f"no memory folder {path!r}")
        prefix = f"{path}/" if path else ""
        out = [Info(p, len(t.encode())) for p, t in self.files.items() if p.startswith(prefix)]
        out += [Info(d, 4096, True) for d in self._dirs() if d.startswith(prefix)]
        return sorted(out, key=lambda i: i.path)

    def delete(self, path: str) -> None:
        doomed = [p for p in self.files if p == path or p.startswith(path + "/")]
        if not doomed:
            raise NotFound(f"no memory file {path!r}")
        for p in doomed:
            del self.files[p]

    def rename(self, old: str, new: str) -> None:
        if new in self.files or new in self._dirs():
            raise AlreadyExists(f"{new!r} already exists")
        moved = {p: t for p, t in self.files.items() if p == old or p.startswith(old + "/")}
        if not moved:
            raise NotFound(f"no memory file {old!r}")
        for p, t in moved.items():
            del self.files[p]
            self.files[new + p[len(old) :]] = t

    def exists(self, path: str) -> bool:
        return path in self.files


@pytest.fixture
def fake() -> FakeFiles:
    return FakeFiles(
        {
            "CONTEXT.md": "# Finn\nprefers tea\n",
            "notes/plan.md": "one\ntwo\nthree\nfour\nfive\n",
            "notes/deep/er/x.md": "hidden below two levels\n",
            "notes/.secret": "hidden",
            "node_modules/pkg.js": "x",
        }
    )


@pytest.fixture
def h(fake: FakeFiles) -> ClaudeMemoryHandler:
    files: MemoryFiles = fake  # the fake satisfies the Protocol (checked by mypy)
    return ClaudeMemoryHandler(files)


def ok(h: ClaudeMemoryHandler, **command: Any) -> str:
    text, is_error = h.handle_result(command)
    assert not is_error, text
    return text


def err(h: ClaudeMemoryHandler, **command: Any) -> str:
    text, is_error = h.handle_result(command)
    assert is_error, text
    assert h.handle(command) == text
    return text


def test_view_directory_two_levels_without_hidden(h: ClaudeMemoryHandler) -> None:
    text = ok(h, command="view", path="/memories")
    header, *rows = text.split("\n")
    assert header == (
        "Here're the files and directories up to 2 levels deep in /memories, "
        "excluding hidden items and node_modules:"
    )
    assert rows == [
        "67B\t/memories",
        "19B\t/memories/CONTEXT.md",
        "48B\t/memories/notes/",
        "24B\t/memories/notes/deep/",
        "24B\t/memories/notes/plan.md",
    ]
    sub = ok(h, command="view", path="/memories/notes/")
    assert sub.split("\n")[1:] == [
        "48B\t/memories/notes",
        "24B\t/memories/notes/deep/",
        "24B\t/memories/notes/deep/er/",
        "24B\t/memories/notes/plan.md",
    ]


def test_view_file_numbers_lines_and_ranges(h: ClaudeMemoryHandler) -> None:
    assert ok(h, command="view", path="/memories/CONTEXT.md") == (
        "Here's the content of /memories/CONTEXT.md with line numbers:\n"
        "     1\t# Finn\n     2\tprefers tea"
    )
    ranged = ok(h, command="view", path="/memories/notes/plan.md", view_range=[2, 3])
    assert ranged.split("\n")[1:] == ["     2\ttwo", "     3\tthree"]
    tail = ok(h, command="view", path="/memories/notes/plan.md", view_range=[4, -1])
    assert tail.split("\n")[1:] == ["     4\tfour", "     5\tfive"]
    assert "[1, 5]" in err(h, command="view", path="/memories/notes/plan.md", view_range=[9, 10])
    assert "second element" in err(
        h, command="view", path="/memories/notes/plan.md", view_range=[3, 2]
    )
    assert "view_range" in err(h, command="view", path="/memories/notes", view_range=[1, 2])


def test_view_missing(h: ClaudeMemoryHandler) -> None:
    assert err(h, command="view", path="/memories/nope.md") == (
        "The path /memories/nope.md does not exist. Please provide a valid path."
    )
    assert "does not exist" in err(h, command="view", path="/memories/no/such/dir")


def test_create(h: ClaudeMemoryHandler, fake: FakeFiles) -> None:
    assert ok(h, command="create", path="/memories/new/idea.md", file_text="hi\n") == (
        "File created successfully at: /memories/new/idea.md"
    )
    assert fake.files["new/idea.md"] == "hi\n"
    assert err(h, command="create", path="/memories/CONTEXT.md", file_text="x") == (
        "Error: File /memories/CONTEXT.md already exists"
    )
    assert err(h, command="create", path="/memories/notes", file_text="x") == (
        "Error: File /memories/notes already exists"
    )
    assert fake.files["CONTEXT.md"] == "# Finn\nprefers tea\n"


def test_str_replace(h: ClaudeMemoryHandler, fake: FakeFiles) -> None:
    text = ok(
        h, command="str_replace", path="/memories/notes/plan.md", old_str="three", new_str="THREE"
    )
    assert text == (
        "The memory file has been edited. Here is the snippet showing the change "
        "(with line numbers):\n     1\tone\n     2\ttwo\n     3\tTHREE\n     4\tfour\n"
        "     5\tfive"
    )
    assert fake.files["notes/plan.md"] == "one\ntwo\nTHREE\nfour\nfive\n"


def test_str_replace_not_unique_and_not_found(h: ClaudeMemoryHandler, fake: FakeFiles) -> None:
    before = dict(fake.files)
    assert err(
        h, command="str_replace", path="/memories/notes/plan.md", old_str="o", new_str="0"
    ) == (
        "No replacement was performed. Multiple occurrences of old_str "
        "`o` in lines: 1, 2, 4. Please ensure it is unique"
    )
    assert err(
        h, command="str_replace", path="/memories/notes/plan.md", old_str="six", new_str="6"
    ) == (
        "No replacement was performed, old_str `six` did not appear "
        "verbatim in /memories/notes/plan.md."
    )
    assert err(h, command="str_replace", path="/memories/gone.md", old_str="a", new_str="b") == (
        "Error: The path /memories/gone.md does not exist. Please provide a valid path."
    )
    assert "does not exist" in err(
        h, command="str_replace", path="/memories/notes", old_str="a", new_str="b"
    )
    assert fake.files == before


def test_insert(h: ClaudeMemoryHandler, fake: FakeFiles) -> None:
    assert (
        ok(
            h,
            command="insert",
            path="/memories/CONTEXT.md",
            insert_line=0,
            insert_text="<!-- v1 -->\n",
        )
        == "The file /memories/CONTEXT.md has been edited."
    )
    assert (
        ok(
            h,
            command="insert",
            path="/memories/CONTEXT.md",
            insert_line=3,
            insert_text="- likes rain",
        )
        == "The file /memories/CONTEXT.md has been edited."
    )
    assert fake.files["CONTEXT.md"] == "<!-- v1 -->\n# Finn\nprefers tea\n- likes rain\n"
    assert err(
        h, command="insert", path="/memories/CONTEXT.md", insert_line=9, insert_text="x"
    ) == (
        "Error: Invalid `insert_line` parameter: 9. It should be "
        "within the range of lines of the file: [0, 4]"
    )
    assert (
        err(h, command="insert", path="/memories/gone.md", insert_line=0, insert_text="x")
        == "Error: The path /memories/gone.md does not exist"
    )
    assert err(h, command="insert", path="/memories/CONTEXT.md") == (
        "Error: Parameter `insert_line` is required for command: insert"
    )


def test_delete(h: ClaudeMemoryHandler, fake: FakeFiles) -> None:
    assert ok(h, command="delete", path="/memories/CONTEXT.md") == (
        "Successfully deleted /memories/CONTEXT.md (moved to the memory archive, where it stays "
        "searchable; `memstrata purge file` removes it for good)"
    )
    assert "CONTEXT.md" not in fake.files
    assert ok(h, command="delete", path="/memories/notes").startswith(
        "Successfully deleted /memories/notes (moved to the memory archive"
    )
    assert not any(p.startswith("notes/") for p in fake.files)
    assert err(h, command="delete", path="/memories/CONTEXT.md") == (
        "Error: The path /memories/CONTEXT.md does not exist"
    )
    assert err(h, command="delete", path="/memories") == (
        "Error: Cannot delete the /memories directory itself"
    )


def test_rename(h: ClaudeMemoryHandler, fake: FakeFiles) -> None:
    assert ok(
        h, command="rename", old_path="/memories/CONTEXT.md", new_path="/memories/archive/ctx.md"
    ) == ("Successfully renamed /memories/CONTEXT.md to /memories/archive/ctx.md")
    assert fake.files["archive/ctx.md"] == "# Finn\nprefers tea\n"
    assert err(
        h, command="rename", old_path="/memories/archive/ctx.md", new_path="/memories/notes/plan.md"
    ) == ("Error: The destination /memories/notes/plan.md already exists")
    assert (
        err(h, command="rename", old_path="/memories/archive/ctx.md", new_path="/memories/notes")
        == "Error: The destination /memories/notes already exists"
    )
    assert err(h, command="rename", old_path="/memories/nope.md", new_path="/memories/b.md") == (
        "Error: The path /memories/nope.md does not exist"
    )
    assert fake.files["notes/plan.md"].startswith("one")


@pytest.mark.parametrize(
    "path",
    [
        "/memories/../x",
        "/etc/passwd",
        "/memories/%2e%2e/",
        "/memories/%2e%2e/etc/passwd",
        "/memories/%252e%252e/x",
        "/memories/a/../../x",
        "/memories/./a",
        "/memoriesX/a",
        "memories/a.md",
        "/memories\\..\\x",
        "/memories/a%2f..%2f..%2fx",
        "/memories/a\x00b",
        "",
        "../memories/a",
        "/Memories/a",
    ],
)
def test_paths_outside_memories_are_refused(
    h: ClaudeMemoryHandler, fake: FakeFiles, path: str
) -> None:
    before = dict(fake.files)
    for command in (
        {"command": "view", "path": path},
        {"command": "create", "path": path, "file_text": "pwned"},
        {"command": "delete", "path": path},
        {"command": "rename", "old_path": "/memories/CONTEXT.md", "new_path": path},
        {"command": "rename", "old_path": path, "new_path": "/memories/y.md"},
    ):
        text, is_error = h.handle_result(command)
        assert is_error and text.startswith("Error: Path"), (command, text)
    assert fake.files == before and not fake.calls


def test_malformed_commands(h: ClaudeMemoryHandler) -> None:
    assert "Unknown command" in err(h, command="explode", path="/memories")
    assert "Unknown command" in err(h, path="/memories")
    assert err(h, command="create", path="/memories/a.md") == (
        "Error: Parameter `file_text` is required for command: create"
    )
    assert "type int" in err(
        h, command="insert", path="/memories/CONTEXT.md", insert_line="1", insert_text="x"
    )
    assert "must not be empty" in err(
        h, command="str_replace", path="/memories/CONTEXT.md", old_str="", new_str="x"
    )


def test_other_memstrata_errors_become_error_text() -> None:
    class Refusing(FakeFiles):
        def write(self, path: str, content: str) -> object:
            raise InvalidInput("CONTEXT is too large")

    h = ClaudeMemoryHandler(Refusing())
    assert err(h, command="create", path="/memories/a.md", file_text="x") == (
        "Error: CONTEXT is too large"
    )


def test_human_size() -> None:
    assert [human_size(n) for n in (0, 512, 1024, 1536, 4096, 1_258_291)] == [
        "0B",
        "512B",
        "1K",
        "1.5K",
        "4K",
        "1.2M",
    ]
