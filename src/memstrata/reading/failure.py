"""What a failed tool's output says went wrong, within a length bound.

A build or a run prints its banner first and its error last: cargo lists forty
`Compiling ...` lines before `rust-lld: error: cannot find linker script linkall.x`; a
monitor prints the serial port and chip info before `Error: the device reset 6 times`;
a check prints `connected to barn.local:1883` before `no uplink from node 4 in the last
60 min`. The head of such an output tells nothing, so neither the ERROR entry a failed
tool leaves (`told`) nor the open-error line of the context (`gist`) is its head:

    telling   a line that says a failure: error / failed / fatal / panicked / an
              exception name / denied / refused / cannot / could not / not found /
              timeout / unsuccessful, pytest's `E   ` lines
    negative  else a line that says something is not so: no / not / missing / none /
              never / without / empty / unreachable (the check's "no uplink from ...")
    tail      else the last lines
    exit      "Exit code 101" is kept up front (short, it says how it ended) and told
              alone only when nothing else is said

`told` keeps, within its bound, the last telling line (the innermost cause) and the
first (where it failed), then the others from the end back, in the output's order, an
ellipsis where lines were left out. `Traceback (most recent call last):` and its frames
are banners: the exception line after them tells. Pure functions of strings.
"""

from __future__ import annotations

import re

from memstrata.reading.patterns import LazyPattern

_TELLING = LazyPattern(
    r"\b[A-Z]\w*(?:Error|Exception|Denied|Refused)\b|\b(?:errors?|failed|failure|failing|"
    r"fatal|panic|panicked|aborted|abort|exception|denied|refused|cannot|unable to|"
    r"could not|couldn't|can't|not found|no such|timed out|timeout|unsuccessful|"
    r"segmentation fault|killed|undefined|unresolved)\b|^E\s{2,}|\bHTTP [45]\d\d\b",
    re.I,
)
# The first of these lines a tool prints is where it failed; not a cause in itself.
_FRAME = LazyPattern(r"^(?:Traceback \(most recent call last\)|File \"|at \S+\(|\d+: *$)")
_NEGATIVE = LazyPattern(
    r"\b(?:no|not|missing|none|never|without|empty|unreachable|unavailable|lost|"
    r"expired|invalid|wrong|mismatch)\b",
    re.I,
)
# A line that only says how the run ended ("Exit code 101", "Error: Process completed
# with exit code 1.", "Error: Terraform exited with code 1.").
_EXIT = LazyPattern(
    r"^(?:exit (?:code|status)|returned|exited with)\s*:?\s*-?\d+\.?$|"
    r"^(?:error:\s*)?[\w ]{0,40}\b(?:exited|completed|failed) with (?:exit )?(?:code|status)"
    r"\s*:?\s*-?\d+\.?$",
    re.I,
)
_GIST = LazyPattern(
    r"\b[A-Z]\w*(?:Error|Exception|Denied|Refused)\b|\bFAILED\b|\berror:|\bfatal:|^E\s{2,}|"
    r"\bHTTP \d{3}\b|\bpermission denied\b|\bnot found\b",
    re.I,
)


def _lines(text: str) -> list[str]:
    return [" ".join(x.split()) for x in text.splitlines() if x.strip()]


def _chosen(said: list[str]) -> list[int]:
    """The positions of the lines that tell what went wrong (module docstring)."""
    telling = [i for i, x in enumerate(said) if _TELLING.search(x) and not _FRAME.match(x)]
    if telling:
        return telling
    negative = [i for i, x in enumerate(said) if _NEGATIVE.search(x)]
    return negative or list(range(len(said)))[-3:]


def told(detail: str, limit: int = 300) -> str:
    """A failed tool's output as one line of at most `limit` characters that says what
    went wrong (module docstring), the exit status first when there is one.

    >>> told("Exit code 101\\n  Compiling a v1\\n  Compiling b v2\\nerror: linker failed", 60)
    'Exit code 101 … error: linker failed'
    >>> told("connected to barn.local as larkspur\\nno uplink from node 4 in 60 min", 60)
    '… no uplink from node 4 in 60 min'
    """
    lines = _lines(detail)
    exits = [x for x in lines if _EXIT.match(x)]
    said = [x for x in lines if not _EXIT.match(x)]
    if not said:
        return ends(" ".join(exits), limit)
    chosen = _chosen(said)
    order = dict.fromkeys([chosen[-1], chosen[0], *reversed(chosen[1:-1])])
    head = [exits[0]] if exits else []
    room = limit - sum(len(x) + 1 for x in head)
    kept: dict[int, str] = {}
    for i in order:
        line, used = said[i], sum(len(x) + 3 for x in kept.values())
        if line in kept.values():
            continue  # a line repeated (one error per object): told once
        if used + len(line) + 3 > room:
            left = room - used - 3
            if kept and left < 60:
                continue
            line = ends(line, max(left, 20))  # a long line: both its ends
        kept[i] = line
    parts, last = head, -1
    for i in sorted(kept):
        parts += [*(["…"] if i != last + 1 else []), kept[i]]
        last = i
    text = " ".join(parts)
    return text if len(text) <= limit else ends(text, limit)


def gist(detail: str, limit: int = 160) -> str:
    """The telling line of an error's text, one line: the exception, the FAILED line, the
    HTTP status; else the last line that says what is not so or went wrong ("no uplink
    from node 4 ..."), not a banner ("connected to ..."); else the last line; a bare
    "Exit code 1" only when nothing else is said.

    >>> gist("Exit code 2\\nconnected to barn.local:1883 as larkspur\\nno uplink from node 4")
    'no uplink from node 4'
    """
    lines = _lines(detail)
    said = [x for x in lines if not _EXIT.match(x)] or lines
    if not said:
        return ""
    first = next((x for x in said if _GIST.search(x)), None)
    if first is None:
        chosen = _chosen(said)
        first = said[chosen[-1]]
    return ends(first, limit)


def clipped(output: str, limit: int) -> str:
    """`output` in at most about `limit` characters: its head (a quarter) and its tail, a
    marker line between, so that a long build's last lines (its error) are kept."""
    if len(output) <= limit:
        return output
    head = output[: limit // 4]
    cut = len(output) - (limit - len(head))
    return f"{head}\n[… {cut} characters left out …]\n{output[-(limit - len(head)) :]}"


def ends(text: str, limit: int) -> str:
    """One line of at most `limit` characters keeping both ends of a long one: an error
    line states where it failed first and its innermost cause last (`FAILED! => {... 401:
    unauthorized: key restricted to bucket web}`), so the middle goes. Pure.

    >>> ends("fatal: host FAILED! msg: init failed: create failed: 401: key restricted to web", 50)
    'fatal: host … failed: 401: key restricted to web'
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    head = flat[: limit // 3].rsplit(" ", 1)[0]
    tail = flat[-(limit - len(head) - 3) :]
    tail = tail.split(" ", 1)[1] if " " in tail else tail
    return f"{head} … {tail}"
