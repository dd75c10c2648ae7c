"""Crawl the web app as a person would click through it: log in through the form, open
every page the navigation links to (the header and the agent's tabs), then every link
on those pages, one level further, and submit each GET form there with the values it
shows. No page may answer 5xx, and no link the app itself prints may be broken (4xx).

The pages are outside the OpenAPI schema, so schemathesis never reaches them; this
catches a handler that fails only on a real page (a memory file view that was a 500).
The store has data in every layer of one agent: NOW, CONTEXT, identity, LOG and its
compaction archive, memory files in a folder, scratch, a task episode, facts set,
changed and forgotten, tasks in several states, two sessions, items, and the ledger.
"""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urlencode, urljoin, urlsplit

import httpx
import pytest
from tests.web.conftest import Served

NEVER_FOLLOW = ("/api/events/stream", "/mcp")  # streams: they never end


class Links(HTMLParser):
    """The links (`a href`) and the GET forms (action, fields) of one page; `nav` holds
    the links inside <nav> elements."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.nav: list[str] = []
        self.forms: list[tuple[str, list[tuple[str, str]]]] = []
        self._in_nav = 0
        self._form: tuple[str, list[tuple[str, str]]] | None = None
        self._blank_required = False
        self._select: str | None = None
        self._first_option: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "nav":
            self._in_nav += 1
        elif tag == "a" and a.get("href"):
            (self.nav if self._in_nav else self.links).append(a["href"])
        elif tag == "form":
            get = a.get("method", "get").lower() == "get"
            self._form = (a.get("action", ""), []) if get else None
            self._blank_required = False
        elif self._form is not None and tag == "input" and a.get("name"):
            kind = a.get("type", "text")
            if "required" in a and not a.get("value"):
                self._blank_required = True  # a browser would not submit it as it is
            if kind not in ("checkbox", "radio") or "checked" in a:
                self._form[1].append((a["name"], a.get("value", "")))
        elif self._form is not None and tag == "select" and a.get("name"):
            self._select, self._first_option = a["name"], None
        elif (
            self._select is not None
            and tag == "option"
            and (self._first_option is None or "selected" in a)
        ):
            self._first_option = a.get("value", "\0")  # \0: the option's text

    def handle_data(self, data: str) -> None:
        if self._first_option == "\0":
            self._first_option = data.strip()

    def handle_endtag(self, tag: str) -> None:
        if tag == "nav":
            self._in_nav -= 1
        elif tag == "select" and self._form is not None and self._select is not None:
            self._form[1].append((self._select, self._first_option or ""))
            self._select = None
        elif tag == "form" and self._form is not None:
            if not self._blank_required:
                self.forms.append(self._form)
            self._form = None


def login(server: Served, token: str) -> httpx.Client:
    """A client that logged in through the login form (session cookie, no bearer)."""
    c = httpx.Client(base_url=server.base, timeout=60.0)
    r = c.get("/login")
    csrf = r.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    r = c.post("/login", data={"token": token, "csrf": csrf, "next": "/"})
    assert r.status_code == 303 and r.headers["location"] == "/", r.text[:300]
    assert c.get("/api/whoami").json()["agent"] == token.removeprefix("tok-")
    return c


def _local(base: str, page_url: str, href: str) -> str | None:
    """`href` as a path+query on this server, or None for another origin / a stream."""
    url = urljoin(page_url, href)
    parts = urlsplit(url)
    if f"{parts.scheme}://{parts.netloc}" != base:
        return None
    if parts.path.startswith(NEVER_FOLLOW):
        return None
    return parts.path + (f"?{parts.query}" if parts.query else "")


def crawl(server: Served, c: httpx.Client, starts: list[str]) -> dict[str, int]:
    """Open `starts`, their nav links, then every link and GET form on those pages."""
    status: dict[str, int] = {}
    pages: dict[str, Links] = {}

    def open_page(path: str) -> Links | None:
        if path in status:
            return pages.get(path)
        r = c.get(path)
        status[path] = r.status_code
        if not r.headers.get("content-type", "").startswith("text/html"):
            return None
        found = Links()
        found.feed(r.text)
        pages[path] = found
        return found

    level0: list[str] = []
    for start in starts:
        found = open_page(start)
        assert found is not None, start
        level0 += [p for h in found.nav if (p := _local(server.base, server.base + start, h))]
    level0 = list(dict.fromkeys([*starts, *level0]))
    for path in level0:
        open_page(path)
    for path in level0:
        found = pages.get(path)
        if found is None:
            continue
        here = server.base + path
        targets = [_local(server.base, here, h) for h in (*found.nav, *found.links)]
        for action, fields in found.forms:
            target = _local(server.base, here, action or path.split("?")[0])
            if target:
                targets.append(target.split("?")[0] + "?" + urlencode(fields))
        for target in targets:
            if target:
                open_page(target)
    return status


@pytest.mark.timeout(600)
@pytest.mark.parametrize("who", ["finn", "wilco"])
def test_every_page_one_click_away_answers(rich: Served, who: str) -> None:
    c = login(rich, f"tok-{who}")
    try:
        status = crawl(rich, c, ["/", "/a/finn/timeline"])
    finally:
        c.close()
    broken = {p: s for p, s in status.items() if s >= 400}
    assert broken == {}, broken
    # The crawl reached every kind of page (it would pass vacuously otherwise).
    reached = " ".join(status)
    for page in (
        "/ledger",
        "/search?",
        "/items",
        "/events",
        "/api/docs",
        "/a/finn/edit/now",
        "/a/finn/edit/identity",
        "/a/finn/files",
        "/a/finn/file?path=",
        "/a/finn/facts",
        "/a/finn/tasks",
        "/a/finn/sessions/s-",
        "/a/finn/prompt?",
        "/a/finn/audit",
        "/a/finn/timeline?",
        "/ledger/",
        "/ledger?room=room-1",
    ):
        assert page in reached, (page, sorted(status))
    assert len(status) > 40, sorted(status)
