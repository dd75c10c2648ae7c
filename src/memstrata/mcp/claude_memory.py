"""Anthropic's client-side memory tool (`memory_20250818`) served from memstrata files.

Claude sends `view`, `create`, `str_replace`, `insert`, `delete` and `rename`
commands naming paths under `/memories`; the application runs them and answers
with a `tool_result` string. Claude is tuned to the texts in Anthropic's
memory-tool documentation, so this module reproduces them ("File created
successfully at: {path}", "The path {path} does not exist. Please provide a valid
path.", the old_str messages, ...); a delete's "Successfully deleted {path}" is
followed by a note that the file was archived, not destroyed and the view format: a directory as
`size<TAB>path` lines two levels deep without hidden items or node_modules; a file
as 6-wide 1-based line numbers, a tab, the line.

Design:
- A translator, not a store. It talks to `MemoryFiles`, a small Protocol over
  paths relative to the agent's memory dir, so the real layer and a dict fake
  plug in alike; "/memories/notes/a.md" becomes "notes/a.md".
- Paths are checked here although the store checks again (two independent
  checks is the point): only "/memories" or "/memories/..." is accepted; `..`,
  `.`, backslashes, NUL and percent-encoded tricks (decoded repeatedly) are refused.
- User mistakes never raise: `handle_result` returns `(text, is_error)` for the
  adapter's `is_error`; memstrata's typed errors become the documented texts, any
  other memstrata error "Error: <message>". Non-memstrata exceptions are bugs and
  propagate.
- The store decides each edit (uniqueness, line range); the handler reads first
  only to phrase the documented messages and re-reads to show the edited snippet.
"""

from __future__ import annotations

from typing import Any, Protocol
from urllib.parse import unquote

from memstrata.errors import AlreadyExists, InvalidInput, MemstrataError, NotFound, NotUnique
from memstrata.policy.secrets import restore_withheld

ROOT = "/memories"
MAX_LINES = 999_999
SNIPPET_CONTEXT = 2
ARCHIVED_NOTE = (
    " (moved to the memory archive, where it stays searchable; "
    "`memstrata purge file` removes it for good)"
)


class MemoryFiles(Protocol):
    """What the handler needs from a memory directory (paths relative, "" = root)."""

    def read(self, path: str) -> str: ...
    def write(self, path: str, content: str) -> object: ...
    def replace(self, path: str, old: str, new: str) -> object: ...
    def insert(self, path: str, line: int, text: str) -> object: ...
    def list(self, path: str = "") -> list[Any]: ...  # items: .path (relative), .size, .is_dir
    def delete(self, path: str) -> object: ...
    def rename(self, old: str, new: str) -> object: ...
    def exists(self, path: str) -> bool: ...


class _Fail(Exception):
    """A tool-result error text for Claude (never escapes the handler)."""


def human_size(n: int) -> str:
    """`du -h`-like size: 0B, 512B, 1.5K, 4K, 1.2M."""
    size, unit = float(n), "B"
    for unit in "BKMG":
        if size < 1024 or unit == "G":
            break
        size /= 1024
    return f"{int(size)}{unit}" if size == int(size) else f"{size:.1f}{unit}"


def split_lines(text: str) -> list[str]:
    """Lines as numbered in views; a final newline does not open an empty line."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def number(lines: list[str], first: int = 1) -> str:
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(lines, first))


def to_relative(path: object) -> str:
    """'/memories/a/b.md' -> 'a/b.md' ('' for the root); raises _Fail for anything else."""
    if not isinstance(path, str) or not path:
        raise _Fail(f"Error: Path must be a non-empty string starting with {ROOT}, got: {path!r}")
    if path != ROOT and not path.startswith(ROOT + "/"):
        raise _Fail(f"Error: Path must start with {ROOT}, got: {path}")
    decoded, previous = path, None
    while decoded != previous:  # %252e%252e -> %2e%2e -> ..
        previous, decoded = decoded, unquote(decoded)
    parts = path[len(ROOT) :].split("/")
    bad = {"..", "."}
    if (
        "\x00" in decoded
        or "\\" in decoded
        or any(p in bad for p in decoded.split("/"))
        or any(p in bad for p in parts)
    ):
        raise _Fail(f"Error: Path {path} would escape {ROOT} directory")
    return "/".join(p for p in parts if p)


class ClaudeMemoryHandler:
    """Runs `memory_20250818` commands against a `MemoryFiles`."""

    def __init__(self, files: MemoryFiles) -> None:
        self.files = files

    def handle(self, command: dict[str, Any]) -> str:
        """The tool_result text (an error text for a user mistake: see `handle_result`)."""
        return self.handle_result(command)[0]

    def handle_result(self, command: dict[str, Any]) -> tuple[str, bool]:
        """`(tool_result text, is_error)`."""
        try:
            if not isinstance(command, dict):
                raise _Fail("Error: the memory tool input must be an object with a `command`")
            name = command.get("command")
            method = getattr(self, f"_cmd_{name}", None) if isinstance(name, str) else None
            if method is None:
                raise _Fail(
                    f"Error: Unknown command {name!r}. Allowed commands: view, create, "
                    "str_replace, insert, delete, rename"
                )
            return method(command), False
        except _Fail as exc:
            return str(exc), True
        except MemstrataError as exc:
            return f"Error: {exc}", True

    # -- helpers ---------------------------------------------------------------
    @staticmethod
    def _arg(command: dict[str, Any], key: str, kind: type[Any] = str) -> Any:
        if key not in command or command[key] is None:
            raise _Fail(f"Error: Parameter `{key}` is required for command: {command['command']}")
        value = command[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise _Fail(f"Error: Parameter `{key}` must be of type {kind.__name__}")
        return value

    def _kind(self, rel: str) -> str | None:
        """'dir', 'file' or None (missing). The Protocol has no stat: ask the parent."""
        if rel == "":
            return "dir"
        try:
            entry = next(
                (e for e in self.files.list(rel.rpartition("/")[0]) if e.path == rel), None
            )
        except NotFound:
            return None
        if entry is not None:
            return "dir" if entry.is_dir else "file"
        return "file" if self.files.exists(rel) else None

    def _read_file(self, rel: str, missing: str) -> str:
        if self._kind(rel) != "file":
            raise _Fail(missing)
        try:
            return self.files.read(rel)
        except NotFound:
            raise _Fail(missing) from None

    # -- commands --------------------------------------------------------------
    def _cmd_view(self, command: dict[str, Any]) -> str:
        path = self._arg(command, "path")
        rel, view_range = to_relative(path), command.get("view_range")
        missing = f"The path {path} does not exist. Please provide a valid path."
        if self._kind(rel) == "dir":
            if view_range is not None:
                raise _Fail(
                    "Error: The `view_range` parameter is not allowed when `path` "
                    "points to a directory."
                )
            return self._view_dir(path, rel)
        lines = split_lines(self._read_file(rel, missing))
        if len(lines) > MAX_LINES:
            raise _Fail(f"File {path} exceeds maximum line limit of 999,999 lines.")
        first = 1
        if view_range is not None:
            if not (
                isinstance(view_range, list)
                and len(view_range) == 2
                and all(type(v) is int for v in view_range)
            ):
                raise _Fail("Error: Invalid `view_range`. It should be a list of two integers.")
            (first, last), n = view_range, len(lines)
            if not 1 <= first <= n:
                raise _Fail(
                    f"Error: Invalid `view_range`: {view_range}. Its first element "
                    f"`{first}` should be within the range of lines of the file: [1, {n}]"
                )
            if last != -1 and not first <= last <= n:
                raise _Fail(
                    f"Error: Invalid `view_range`: {view_range}. Its second element "
                    f"`{last}` should be -1 or within [{first}, {n}]"
                )
            lines = lines[first - 1 :] if last == -1 else lines[first - 1 : last]
        return f"Here's the content of {path} with line numbers:\n{number(lines, first)}"

    def _view_dir(self, path: str, rel: str) -> str:
        shown = path.rstrip("/") or ROOT
        prefix = f"{rel}/" if rel else ""
        entries = [e for e in self.files.list(rel) if e.path.startswith(prefix)]
        totals: dict[str, int] = {}
        rows: list[tuple[str, bool, int]] = []
        for entry in entries:
            sub = entry.path[len(prefix) :].strip("/")
            parts = sub.split("/")
            if not sub or any(p.startswith(".") or p == "node_modules" for p in parts):
                continue
            if not entry.is_dir:
                for depth in range(len(parts)):
                    key = "/".join(parts[:depth])
                    totals[key] = totals.get(key, 0) + entry.size
            if len(parts) <= 2:  # two levels deep, as documented
                rows.append((sub, entry.is_dir, entry.size))
        lines = [f"{human_size(totals.get('', 0))}\t{shown}"]
        for sub, is_dir, size in sorted(rows):
            size = totals.get(sub, 0) if is_dir else size
            lines.append(f"{human_size(size)}\t{shown}/{sub}{'/' if is_dir else ''}")
        return (
            "Here're the files and directories up to 2 levels deep in "
            f"{shown}, excluding hidden items and node_modules:\n" + "\n".join(lines)
        )

    def _cmd_create(self, command: dict[str, Any]) -> str:
        path, text = self._arg(command, "path"), self._arg(command, "file_text")
        rel = to_relative(path)
        if self._kind(rel) is not None:
            raise _Fail(f"Error: File {path} already exists")
        self.files.write(rel, text)
        return f"File created successfully at: {path}"

    def _cmd_str_replace(self, command: dict[str, Any]) -> str:
        path = self._arg(command, "path")
        old = self._arg(command, "old_str")
        new = "" if command.get("new_str") is None else self._arg(command, "new_str")
        rel = to_relative(path)
        missing = f"Error: The path {path} does not exist. Please provide a valid path."
        text = self._read_file(rel, missing)
        if old == "":
            raise _Fail("Error: Parameter `old_str` must not be empty")
        old = restore_withheld(old, text)  # as a view showed it: secrets `[withheld: ...]`
        try:
            self._check_unique(text, old, path)
            self.files.replace(rel, old, new)
        except NotFound:
            raise _Fail(missing) from None
        except NotUnique:  # changed under us: phrase it from the current text
            self._check_unique(self._read_file(rel, missing), old, path)
            raise
        start = text[: text.index(old)].count("\n")
        end = start + new.count("\n")
        after = split_lines(self.files.read(rel))
        lo, hi = max(0, start - SNIPPET_CONTEXT), min(len(after), end + SNIPPET_CONTEXT + 1)
        return (
            "The memory file has been edited. Here is the snippet showing the change "
            f"(with line numbers):\n{number(after[lo:hi], lo + 1)}"
        )

    @staticmethod
    def _check_unique(text: str, old: str, path: str) -> None:
        starts, at = [], text.find(old)
        while at != -1:
            starts.append(text[:at].count("\n") + 1)
            at = text.find(old, at + 1)
        if not starts:
            raise _Fail(
                f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}."
            )
        if len(starts) > 1:
            raise _Fail(
                f"No replacement was performed. Multiple occurrences of old_str `{old}` "
                f"in lines: {', '.join(map(str, starts))}. Please ensure it is unique"
            )

    def _cmd_insert(self, command: dict[str, Any]) -> str:
        path = self._arg(command, "path")
        line, text = self._arg(command, "insert_line", int), self._arg(command, "insert_text")
        rel = to_relative(path)
        missing = f"Error: The path {path} does not exist"
        n = len(split_lines(self._read_file(rel, missing)))
        bad_line = (
            f"Error: Invalid `insert_line` parameter: {line}. It should be within the "
            f"range of lines of the file: [0, {n}]"
        )
        if not 0 <= line <= n:
            raise _Fail(bad_line)
        try:
            self.files.insert(rel, line, text)
        except NotFound:
            raise _Fail(missing) from None
        except InvalidInput as exc:
            raise _Fail(f"{bad_line} ({exc})") from None
        return f"The file {path} has been edited."

    def _cmd_delete(self, command: dict[str, Any]) -> str:
        path = self._arg(command, "path")
        rel = to_relative(path)
        if rel == "":
            raise _Fail(f"Error: Cannot delete the {ROOT} directory itself")
        if self._kind(rel) is None:
            raise _Fail(f"Error: The path {path} does not exist")
        try:
            self.files.delete(rel)
        except NotFound:
            raise _Fail(f"Error: The path {path} does not exist") from None
        # Anthropic's documented text first (Claude is tuned to it), then what memstrata
        # really did: a delete is soft, and an agent (or its user) should know.
        return f"Successfully deleted {path}{ARCHIVED_NOTE}"

    def _cmd_rename(self, command: dict[str, Any]) -> str:
        old_path, new_path = self._arg(command, "old_path"), self._arg(command, "new_path")
        old, new = to_relative(old_path), to_relative(new_path)
        if "" in (old, new):
            raise _Fail(f"Error: Cannot rename the {ROOT} directory itself")
        if self._kind(old) is None:
            raise _Fail(f"Error: The path {old_path} does not exist")
        if self._kind(new) is not None:
            raise _Fail(f"Error: The destination {new_path} already exists")
        try:
            self.files.rename(old, new)
        except NotFound:
            raise _Fail(f"Error: The path {old_path} does not exist") from None
        except AlreadyExists:
            raise _Fail(f"Error: The destination {new_path} already exists") from None
        return f"Successfully renamed {old_path} to {new_path}"


__all__ = ["ClaudeMemoryHandler", "MemoryFiles", "human_size", "to_relative"]
