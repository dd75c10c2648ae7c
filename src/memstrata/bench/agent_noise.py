"""The tool traffic a scripted agent produces: file reads, edits, shell and test runs.

Real agents read whole files, edit them, run the tests and the linter, and every
one of those calls comes back as a long result. The bench's scenarios name the
files and commands; this module makes their results, deterministically (a seed
from the file's path), in the shapes Claude Code gives its hooks and transcript:

    Read  -> {"type": "text", "file": {"filePath", "content", "numLines", ...}}
    Edit  -> {"filePath", "oldString", "newString", "originalFile", "structuredPatch", ...}
    Bash  -> {"stdout", "stderr", "interrupted", "isImage"}

A scenario may give a file's opening lines (`files`); the rest of the file is
filler code built from words of its path, so a read of `app/db.py` mentions
engines and sessions the way a real one does.
"""

from __future__ import annotations

import random
import re
import zlib
from typing import Any

FILLER_LINES = (120, 260)
PYTEST_HEADER = (
    "============================= test session starts ==============================\n"
    "platform linux -- Python 3.11.9, pytest-8.3.2, pluggy-1.5.0\n"
    "rootdir: {root}\nconfigfile: pyproject.toml\nplugins: anyio-4.4.0, cov-5.0.0\n"
    "collected {n} items\n\n"
)


def _rng(*key: str) -> random.Random:
    return random.Random(zlib.crc32("/".join(key).encode("utf-8")))


def _words(path: str) -> list[str]:
    stem = re.split(r"[/._-]+", path.lower())
    return [w for w in stem if w.isalpha() and w not in ("py", "app", "src", "tests", "md")] or [
        "item"
    ]


def file_content(path: str, head: str = "") -> str:
    """The whole text of `path`: the scenario's `head`, then filler code to a real length."""
    rng = _rng("file", path)
    words = _words(path)
    lines = head.rstrip("\n").splitlines() if head else [f'"""{path}"""', ""]
    target = rng.randint(*FILLER_LINES)
    n = 0
    while len(lines) < target:
        n += 1
        w = words[n % len(words)]
        other = rng.choice(("record", "payload", "row", "value", "entry", "member", "item"))
        if path.endswith(".py"):
            lines += [
                "",
                f"def {w}_{other}_{n}(session, {other}_id: int) -> dict:",
                f'    """Return the {w} {other} {n} as a plain dict."""',
                f"    {other} = session.get({w.capitalize()}, {other}_id)",
                f"    if {other} is None:",
                f'        raise LookupError(f"no {w} {{{other}_id}}")',
                f"    return {{'id': {other}.id, 'kind': '{w}', 'n': {n}}}",
            ]
        else:
            lines.append(f"{w} {other} {n}: {' '.join(rng.choice(words) for _ in range(6))}")
    return "\n".join(lines) + "\n"


PROSE = (
    "the study reports",
    "according to the operator",
    "city officials said",
    "the data covers",
    "in the first quarter",
    "per trip on average",
    "the survey found",
    "critics argue",
    "the council voted",
    "compared with the previous year",
)


def document(key: str, head: str = "") -> str:
    """A fetched page or paper: `head`, then 3-6 KB of prose built from words of `key`."""
    rng = _rng("doc", key)
    words = [w for w in re.split(r"[^a-z0-9]+", key.lower()) if len(w) > 2] or ["report"]
    paras = [head.strip()] if head.strip() else []
    size, target = len(head), rng.randint(3000, 6000)
    while size < target:
        sentence = " ".join(
            f"{rng.choice(PROSE)} {rng.choice(words)} {rng.choice(words)} {rng.randint(2, 98)}%"
            for _ in range(rng.randint(2, 4))
        )
        para = sentence[0].upper() + sentence[1:] + "."
        paras.append(para)
        size += len(para)
    return "\n\n".join(paras) + "\n"


def read_result(abs_path: str, content: str) -> tuple[str, dict[str, Any]]:
    """(transcript text, hook tool_response) of a Read: `cat -n` lines, the file object."""
    lines = content.splitlines()
    text = "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(lines, 1))
    response = {
        "type": "text",
        "file": {
            "filePath": abs_path,
            "content": content,
            "numLines": len(lines),
            "startLine": 1,
            "totalLines": len(lines),
        },
    }
    return text, response


def edit_io(
    abs_path: str, content: str, n: int, key: str
) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """(tool_input, transcript text, tool_response) of the n-th Edit of a file (`key`: its
    path in the project, which seeds the choice: the same wherever the project is)."""
    rng = _rng("edit", key, str(n))
    lines = content.splitlines()
    candidates = [i for i, line in enumerate(lines) if line.strip() and len(line) > 12] or [0]
    i = rng.choice(candidates)
    old = lines[i] if lines else ""
    new = old.rstrip() + f"  # reviewed ({n})" if not old.endswith(":") else old + f"  # ({n})"
    tool_input = {"file_path": abs_path, "old_string": old, "new_string": new}
    text = (
        f"The file {abs_path} has been updated. Here's the result of running `cat -n` on a "
        "snippet of the edited file:\n"
        + "\n".join(
            f"{j + 1:>6}\t{new if j == i else lines[j]}"
            for j in range(max(0, i - 4), min(len(lines), i + 5))
        )
    )
    response = {
        "filePath": abs_path,
        "oldString": old,
        "newString": new,
        "originalFile": content,
        "structuredPatch": [
            {
                "oldStart": i + 1,
                "oldLines": 1,
                "newStart": i + 1,
                "newLines": 1,
                "lines": [f"-{old}", f"+{new}"],
            }
        ],
        "userModified": False,
        "replaceAll": False,
    }
    return tool_input, text, response


def pytest_stdout(root: str, test_files: list[str], failure: str | None = None) -> str:
    """A `pytest -q`-style run over `test_files`; with `failure`, one test fails with it."""
    rng = _rng("pytest", *test_files, failure or "")
    out, total, failed_at = [], 0, rng.randrange(len(test_files)) if failure else -1
    for k, name in enumerate(test_files):
        n = rng.randint(4, 14)
        total += n
        dots = "." * n if k != failed_at else "." * (n - 1) + "F"
        out.append(f"{name} {dots:<40} [{min(100, (k + 1) * 100 // len(test_files)):>3}%]")
    head = PYTEST_HEADER.format(root=root, n=total)
    if failure is None:
        tail = f"\n\n============================== {total} passed in {rng.uniform(0.8, 4.0):.2f}s ==============================="
        return head + "\n".join(out) + tail
    test = f"{test_files[failed_at]}::test_{_words(test_files[failed_at])[-1]}_{rng.randint(1, 9)}"
    body = (
        "\n\n=================================== FAILURES ===================================\n"
        f"_____________________________ {test.split('::')[1]} ______________________________\n\n"
        "    def test_case(client):\n>       response = client.post('/api', json=payload)\n\n"
        f"E       {failure}\n\n"
        "=========================== short test summary info ============================\n"
        f"FAILED {test} - {failure.splitlines()[0]}\n"
        f"========================= 1 failed, {total - 1} passed in {rng.uniform(0.8, 4.0):.2f}s ========================="
    )
    return head + "\n".join(out) + body


def bash_response(stdout: str, stderr: str = "") -> dict[str, Any]:
    return {"stdout": stdout, "stderr": stderr, "interrupted": False, "isImage": False}
