"""History pages: each memory file's versions, a readable diff between any two, restore.

Every replace of NOW.md, CONTEXT.md / MEMORY.md, AGENT.md and the memory files keeps the
content it replaced (`layers.versions`); these pages show it, through that handle only
(the same scope gate as reading and writing the file):

    /a/<agent>/history                       the files that have versions
    /a/<agent>/history?path=CONTEXT.md       its versions, newest first, and what the last
                                             change did; &a=<id>&b=<id> compares any two,
                                             &show=<id> shows one whole
    POST /a/<agent>/history/restore          path, version, expected_sha, csrf

A restore carries the sha256 of the content the page showed as current (as the editor's
form does): if the file changed since, nothing is written and the page says so (409),
showing the file as it is now beside the version asked for. A restore is itself a new
version, so the content it replaces is kept.
"""

from __future__ import annotations

import re
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Form, Query, Request
from markupsafe import Markup, escape
from starlette.responses import Response

from memstrata.errors import StaleWrite
from memstrata.files.versions import surface
from memstrata.layers.versions import CURRENT, History
from memstrata.policy.secrets import holds_secrets
from memstrata.store.editing import sha256_text
from memstrata.values import replace, value_type
from memstrata.web.context import store_of
from memstrata.web.pages.forms import back, require_csrf
from memstrata.web.pages.render import page

router = APIRouter(prefix="/a/{agent}")
FilePath = Annotated[str, Query(min_length=1, max_length=1024)]
VersionId = Annotated[str | None, Query(max_length=64, pattern="^([0-9a-fA-F]{4,64}|current)$")]
Csrf = Annotated[str, Form(max_length=128)]
WORDS = re.compile(r"\s+|\w+|[^\w\s]")


@value_type(frozen=True)
class DiffLine:
    """One line of a diff as the page shows it: `kind` is add, del, same, hunk or note;
    `parts` the text in pieces, each (text, changed) (changed: a word that differs from
    the line it replaces); `crlf` when the line ends with a carriage return (shown on
    added and removed lines, so a change of line endings alone is visible)."""

    kind: str
    old: int | None
    new: int | None
    parts: tuple[tuple[str, bool], ...]
    crlf: bool = False


def read_diff(unified: str) -> tuple[list[DiffLine], int, int]:
    """`layers.versions.diff`'s unified text as lines with their numbers in each version,
    replaced lines paired and their changed words marked; and (lines added, removed)."""
    out: list[DiffLine] = []
    old = new = 0
    added = removed = 0
    dels: list[int] = []  # where in `out` the run of removed lines being read is
    adds: list[int] = []

    def flush() -> None:
        for i, j in zip(dels, adds, strict=False):
            d, a = out[i], out[j]
            d_parts, a_parts = _changed_words(d.parts[0][0], a.parts[0][0])
            out[i] = DiffLine("del", d.old, None, d_parts, d.crlf)
            out[j] = DiffLine("add", None, a.new, a_parts, a.crlf)
        dels.clear()
        adds.clear()

    lines = unified.split("\n")  # (not splitlines: a line may hold \r, \f, \u2028...)
    if lines and lines[-1] == "":
        lines.pop()
    for raw in lines[2:] if len(lines) >= 2 and lines[0].startswith("---") else lines:
        text, crlf = (raw[1:-1], True) if raw.endswith("\r") else (raw[1:], False)
        if raw.startswith("@@"):
            flush()
            m = re.match(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@", raw)
            old, new = (int(m.group(1)), int(m.group(2))) if m else (old, new)
            out.append(DiffLine("hunk", None, new, ((str(new), False),)))
        elif raw.startswith("-"):
            if adds:
                flush()
            dels.append(len(out))
            out.append(DiffLine("del", old, None, ((text, False),), crlf))
            old, removed = old + 1, removed + 1
        elif raw.startswith("+"):
            adds.append(len(out))
            out.append(DiffLine("add", None, new, ((text, False),), crlf))
            new, added = new + 1, added + 1
        elif raw.startswith("\\"):
            out.append(DiffLine("note", None, None, (("no newline at the end", False),)))
        else:
            flush()
            out.append(DiffLine("same", old, new, ((text, False),), crlf))
            old, new = old + 1, new + 1
    flush()
    return out, added, removed


def _changed_words(
    before: str, after: str
) -> tuple[tuple[tuple[str, bool], ...], tuple[tuple[str, bool], ...]]:
    """Both lines in pieces, the words between their common beginning and common end
    marked (only when those share enough to be one line edited, not two unrelated lines).
    Linear in the line's length: a diff of hundreds of replaced lines stays cheap."""
    a, b = WORDS.findall(before), WORDS.findall(after)
    n = min(len(a), len(b))
    head = 0
    while head < n and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < n - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    shared = sum(map(len, a[:head])) + sum(map(len, a[len(a) - tail :]))
    if shared * 5 < 2 * max(len(before), len(after)):  # under 40% in common: unrelated
        return ((before, False),), ((after, False),)

    def pieces(words: list[str]) -> tuple[tuple[str, bool], ...]:
        mid = "".join(words[head : len(words) - tail])
        end = "".join(words[len(words) - tail :])
        parts = (("".join(words[:head]), False), (mid, True), (end, False))
        return tuple(p for p in parts if p[0])

    return pieces(a), pieces(b)


SIGN = {"add": "+", "del": "\u2212", "same": " "}
TAG = {"add": ("ins", "added: "), "del": ("del", "removed: ")}
SHOWN_VERSIONS = 20  # the newest; "show all" lists the rest (each a restore form)
MAX_DIFF_LINES = 3000  # a larger diff is cut (the versions are there whole: "View")


def diff_html(lines: list[DiffLine], secrets: bool = False) -> Markup:
    """The diff's lines as HTML list items, every text escaped. Built here rather than
    in the template: a diff of a few hundred lines would otherwise be a few thousand
    printed values, each looked at for secrets; the page masks this once, whole. So a
    line that holds a secret (`secrets`: the diff holds one somewhere) is never cut into
    marked words: the secret stays in one piece for the mask to find."""
    out = []
    for d in lines[:MAX_DIFF_LINES]:
        if secrets and len(d.parts) > 1:
            whole = "".join(t for t, _ in d.parts)
            if holds_secrets(whole):
                d = replace(d, parts=((whole, False),))
        if d.kind == "hunk":
            out.append(f'<li class="d-hunk"><span class="hunk">\u22ef at line {d.new}</span></li>')
            continue
        if d.kind == "note":
            out.append('<li class="d-note"><span class="hint">(no newline at the end)</span></li>')
            continue
        nums = "".join(
            f'<span class="n" aria-hidden="true">{"" if n is None else n}</span>'
            for n in (d.old, d.new)
        )
        text = "".join(
            f"<strong>{escape(t)}</strong>" if changed else str(escape(t)) for t, changed in d.parts
        )
        if d.kind in TAG:
            tag, said = TAG[d.kind]
            eol = ' <span class="eol">CRLF</span>' if d.crlf else ""
            text = f'<{tag}><span class="sr">{said}</span>{text}{eol}</{tag}>'
        else:
            text = f"<span>{text}</span>"
        sign = f'<span class="sign" aria-hidden="true">{SIGN[d.kind]}</span>'
        out.append(f'<li class="d-{d.kind}">{nums}{sign}{text}</li>')
    if len(lines) > MAX_DIFF_LINES:
        more = len(lines) - MAX_DIFF_LINES
        out.append(
            f'<li class="d-note"><span class="hint">({more} more lines not shown: view the versions whole)</span></li>'
        )
    return Markup("\n".join(out))


def _link(agent: str, path: str, **query: str) -> str:
    q = urlencode({"path": path, **{k: v for k, v in query.items() if v}})
    return f"/a/{quote(agent, safe='')}/history?{q}"


def _edit_link(agent: str, hist: History) -> str:
    """Where the file's editor is: NOW / CONTEXT / identity, or a memory file."""
    a = f"/a/{quote(agent, safe='')}"
    if hist.layer == "identity":
        return f"{a}/edit/identity"
    name = hist.path.removeprefix("memory/")
    if name in ("NOW.md", "NOTES.md"):
        return f"{a}/edit/now"
    if hist.layer == "context" or name in ("CONTEXT.md", "MEMORY.md"):
        return f"{a}/edit/context"
    return f"{a}/file?{urlencode({'path': name})}"


@router.get("/history")
def history_page(
    request: Request,
    agent: str,
    path: Annotated[str | None, Query(max_length=1024)] = None,
    a: VersionId = None,
    b: VersionId = None,
    show: VersionId = None,
    restored: VersionId = None,
    all: bool = False,
) -> Response:
    store = store_of(request)
    mem = store.agent(agent)  # NotFound / MalformedInput before anything is shown
    if not path:
        return page(
            request,
            "history.html",
            agent=mem.name,
            tab="history",
            files=mem.versions.files(),
            link=lambda p: _link(mem.name, p),
        )
    return _file_page(request, mem, path, a=a, b=b, show=show, restored=restored, every=all)


def _file_page(
    request: Request,
    mem: Any,
    path: str,
    *,
    a: str | None = None,
    b: str | None = None,
    show: str | None = None,
    restored: str | None = None,
    status: int = 200,
    every: bool = False,
    **values: Any,
) -> Response:
    versions = mem.versions
    hist: History = versions.history(path)
    listed = hist.versions
    current = next((v for v in listed if v.current), None)
    if current is None:  # the file is gone (deleted meanwhile): nothing is "current"
        a, b = (None if x is not None and x.lower() == CURRENT else x for x in (a, b))
    if a is None and b is None and len(listed) > 1:
        a, b = listed[1].id, listed[0].id  # what the last change did
    elif a is not None and b is None:
        b = CURRENT if current is not None else listed[0].id
    elif b is not None and a is None:
        a = listed[-1].id
    lines: list[DiffLine] = []
    added = removed = 0
    unified = ""
    if a is not None and b is not None:
        unified = versions.diff(hist.path, a, b)
        lines, added, removed = read_diff(unified)
    shown = versions.read(hist.path, show) if show else None
    a_id, b_id = _id_of(listed, a), _id_of(listed, b)
    rows = _rows(listed, a_id, b_id)
    if not every:  # the newest, and any older one the page compares or shows
        rows = [
            r
            for i, r in enumerate(rows)
            if i < SHOWN_VERSIONS or r.from_ or r.to or r.version.id == _id_of(listed, show)
        ]
    return page(
        request,
        "history.html",
        status,
        agent=mem.name,
        tab="history",
        hist=hist,
        current=current,
        # a restore expects the content shown as current ("" when the file is gone)
        expected_sha=current.sha256 if current is not None else _sha(""),
        a=a_id,
        b=b_id,
        rows=rows,
        older=len(listed) - len(rows),
        all_href=_link(mem.name, hist.path, a=a_id or "", b=b_id or "", all="1") + "#versions",
        diff=diff_html(lines, holds_secrets(unified)) if lines else None,
        added=added,
        removed=removed,
        show=_id_of(listed, show),
        shown=shown,
        restored=restored,
        edit=_edit_link(mem.name, hist),
        link=lambda **q: _link(mem.name, hist.path, **q),
        **values,
    )


@value_type(frozen=True)
class Row:
    """A version as the list shows it: an HTML id unique on the page (one content can
    be a version more than once: restored), whether its "from" / "to" is ticked, how
    many versions the list leaves out just before it."""

    version: Any
    html_id: str
    from_: bool
    to: bool
    at: int  # its place, newest first


def _rows(listed: Any, a: str | None, b: str | None) -> list[Row]:
    ids = [v.id for v in listed]
    to = ids.index(b) if b in ids else -1  # the newest row of that content
    later = [i for i, x in enumerate(ids) if x == a and i > to]
    frm = later[0] if later else (ids.index(a) if a in ids else -1)
    seen: set[str] = set()
    rows = []
    for i, v in enumerate(listed):
        html_id = f"v-{v.id}" if v.id not in seen else f"v-{v.id}-{i}"
        seen.add(v.id)
        rows.append(Row(v, html_id, i == frm, i == to, i))
    return rows


def _id_of(listed: Any, version: str | None) -> str | None:
    """The listed id `version` names (a prefix, or "current"), else it as given."""
    if version is None:
        return None
    v = version.lower()
    for item in listed:
        if (v == CURRENT and item.current) or item.sha256.startswith(v):
            return str(item.id)
    return v


def _sha(text: str) -> str:
    return sha256_text(text)


@router.post("/history/restore")
def history_restore(
    request: Request,
    agent: str,
    path: Annotated[str, Form(min_length=1, max_length=1024)],
    version: Annotated[str, Form(min_length=4, max_length=64, pattern="^[0-9a-fA-F]+$")],
    expected_sha: Annotated[str, Form(max_length=64, pattern="^[0-9a-f]{64}$")],
    csrf: Csrf,
) -> Response:
    require_csrf(request, csrf)
    mem = store_of(request).agent(agent)  # (names the surface "web")
    try:
        with surface("restore"):
            done = mem.versions.restore(path, version, expected_sha=expected_sha)
    except StaleWrite as exc:
        return _file_page(
            request,
            mem,
            path,
            a=CURRENT,  # what the restore would change in the file as it is now
            b=version,
            status=409,
            conflict=str(exc),
            wanted=version.lower(),
        )
    now = done.versions[0].id if done.versions else version
    return back(_link(mem.name, done.path, restored=now) + "#restored")
