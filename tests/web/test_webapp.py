"""Issue 24's "Why", bullet by bullet, through a real `memstrata serve` on 127.0.0.1.

The store is the one the issue describes: ten sessions of a coding agent recorded by the
Claude Code hooks (`tests.web.coding_store`: prompts, tool calls with their transcript
tool_use and tool_result, answers, a failed test run, a NOW the agent set, tasks, a
decision, a constraint), a ledger in two rooms and a second agent. Each test reads what
a person gets back (the page's HTML, the API's JSON), as the issue's new user did.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx
import pytest
from tests.web.conftest import CONFIG, Served, start_server, stop_server

from memstrata import Store
from memstrata.lifecycle.compaction import compact_log
from memstrata.model import iso

Coding = tuple[Served, dict[str, Any]]
LINE = re.compile(r'<li class="line k-(\w+)[^"]*" id="([^"]+)"')
HIT_LINK = re.compile(r'class="hit-link" href="([^"]+)">([^<]*)<')


def _text(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", " ", html))


def _section(html: str, start: str, end: str) -> str:
    return html[html.index(start) : html.index(end, html.index(start))]


# -- the home page --------------------------------------------------------------------------
def test_home_page_says_where_each_agent_is(coding: Coding) -> None:
    """Why: the home page lists agent names and "NOW · tasks · prompt" links: no current
    objective, no open task count, no recent decisions, no sign of memory health."""
    server, ids = coding
    with server.client("finn") as c:
        r = c.get("/")
    assert r.status_code == 200
    card = _section(r.text, 'id="agent-finn"', "</section>")
    said = " ".join(_text(card).split())
    assert "PDF export blocked: WeasyPrint needs pango on the CI image" in said  # NOW
    assert "Next: ask about the CI image; else switch to ReportLab" in said
    assert "1 in progress" in said and "1 blocked" in said and "1 pending" in said
    assert "Never log raw passwords, even at debug level" in said  # constraint in force
    assert "Use argon2id for new password hashes" in said  # decision in force
    assert "Prepare the release notes for 1.4" in said  # the last session, by its prompt
    assert "Outcome: Done: prepare the release notes for 1.4. All 12 tests pass." in said
    assert "2 reads, 1 edit, 1 test run" in said  # its calls counted, never a raw trace
    assert "Read(" not in said and "toolu_" not in said
    assert "Index caught up" in said and "No problems" in said and "KB in" in said
    assert "No secrets in what agents see" in said
    # each item links to where it lives
    assert 'href="/a/finn/edit/now"' in card
    assert f'href="/ledger/{ids["decision"]}"' in card
    assert 'href="/a/finn/tasks#r-' in card
    assert 'href="/a/finn/health"' in card
    rooms = _section(r.text, 'id="rooms"', "</div>\n")
    assert "room-1" in rooms and "room-2" in rooms
    assert f'href="/ledger/{ids["mira_entry"]}"' in rooms  # a room's latest entries


def test_home_page_counts_secrets_withheld_and_problems(coding: Coding) -> None:
    server, _ = coding
    with server.client("wilco") as c:
        mira = _section(c.get("/").text, 'id="agent-mira"', "</section>")
    said = " ".join(_text(mira).split())
    assert "Refactor billing" in said and "No open tasks" in said
    assert "No decisions or constraints recorded" in said  # an empty part says how it fills


# -- the timeline ---------------------------------------------------------------------------
def _story(c: httpx.Client, query: str) -> list[tuple[str, str]]:
    """Every line (kind, id) of the timeline, following `Older` to the end."""
    lines: list[tuple[str, str]] = []
    url: str | None = f"/a/finn/timeline?{query}"
    while url:
        html = c.get(url).text
        lines += LINE.findall(html)
        older = re.search(r'id="older" href="([^"]+)"', html)
        url = urljoin("/a/finn/timeline", unescape(older.group(1))) if older else None
    return lines


def test_timeline_tells_each_tool_call_once(coding: Coding) -> None:
    """Why: the timeline shows every tool call three times (the LOG TOOL_USE line, the
    transcript's tool_use and its tool_result)."""
    server, _ = coding
    with Store(server.home, agent="wilco") as s:
        calls = [e for e in s.agent("finn").log.entries() if (e.metadata or {}).get("tool")]
        prompts = [e for e in s.agent("finn").log.entries() if e.entry_type == "USER_FEEDBACK"]
    assert len(calls) == 41 and len(prompts) == 10  # ten sessions: 4 calls each, 1 failed run
    with server.client("finn") as c:
        lines = _story(c, "")
        only_calls = _story(c, "kinds=calls")
    assert sum(kind == "call" for kind, _ in lines) == len(calls)
    assert sum(kind == "prompt" for kind, _ in lines) == len(prompts)  # LOG + transcript: once
    assert len({i for _, i in lines}) == len(lines)
    assert [k for k, _ in only_calls] == ["call"] * len(calls)  # the kind filter
    with server.client("finn") as c:  # Older, then Newer: back above where page 2 starts
        first = c.get("/a/finn/timeline?kinds=calls").text
        older = unescape(re.search(r'id="older" href="([^"]+)"', first).group(1))  # type: ignore[union-attr]
        second = c.get(urljoin("/a/finn/timeline", older)).text
        newer = unescape(re.search(r'id="newer" href="([^"]+)"', second).group(1))  # type: ignore[union-attr]
        back = c.get(urljoin("/a/finn/timeline", newer)).text
    assert LINE.findall(first)[-1] in LINE.findall(back)
    assert not set(LINE.findall(second)) & set(LINE.findall(back))


def test_timeline_groups_by_session_with_goal_and_outcome_and_folds_traces(
    coding: Coding,
) -> None:
    server, ids = coding
    with server.client("finn") as c:
        html = c.get("/a/finn/timeline").text
    first = _section(html, "Prepare the release notes for 1.4</h2>", "</ol>\n</li>")
    said = " ".join(_text(first).split())
    assert "Prepare the release notes for 1.4" in said  # titled by its prompt
    assert "Outcome: Done: prepare the release notes for 1.4." in said
    assert "2 reads, 1 edit, 1 test run" in said
    fold = re.search(r'<li class="fold"><details>\s*<summary>([^<]+)</summary>', first)
    assert fold is not None and fold.group(1) == "4 tool calls: 2 reads, 1 edit, 1 test run"
    assert ids["sessions"][-1] not in _text(first).split("transcript")[0]  # no bare UUID title
    failed = _section(html, "Fix the failing token refresh test</h2>", "</ol>\n</li>")
    assert re.search(r'class="line k-call failed"', failed)  # a failure is never folded away
    assert "Bash pytest -q tests/test_auth.py: failed: 1 failed: test_refresh" in _text(failed)


def test_timeline_file_changes_link_to_their_history(coding: Coding) -> None:
    """Why: the web app said whole files keep no earlier versions; each file's line in
    the timeline (and the home card) now leads to its history page."""
    server, _ = coding
    with server.client("finn") as c:
        page = c.get("/a/finn/timeline", params={"kinds": "files"}).text
        links = re.findall(r'<a class="src" href="([^"]+)">earlier versions</a>', page)
        assert "/a/finn/history?path=memory%2FCONTEXT.md" in links
        context = c.get(unescape(links[links.index("/a/finn/history?path=memory%2FCONTEXT.md")]))
        assert context.status_code == 200 and "Rate limit counters live in Redis." in context.text
        assert '<a href="/a/finn/history">History</a>' in c.get("/").text


def test_timeline_dates_are_inclusive(coding: Coding) -> None:
    """Why: its "to" date is exclusive (from = to = 2026-11-14 shows "Nothing in this
    range" over ~60 entries that day)."""
    server, _ = coding
    today = datetime.now(UTC).date().isoformat()
    with server.client("finn") as c:
        one_day = c.get("/a/finn/timeline", params={"since": today, "until": today}).text
        api = c.get("/api/agents/finn/timeline", params={"since": today, "until": today}).json()
    assert "Nothing in this range" not in one_day
    assert len(LINE.findall(one_day)) >= 30
    items = api["items"]
    # a full page of that day's records: 50, or more when records after the 50th share its
    # millisecond (a fast machine writes several in one): a page never ends inside one time
    assert len(items) >= 50
    assert all(i["ts"] == items[49]["ts"] for i in items[50:])
    assert all(i["ts"].startswith(today) for i in items)


# -- search ---------------------------------------------------------------------------------
def test_every_search_hit_links_to_its_place_with_a_meaningful_title(coding: Coding) -> None:
    """Why: search hits are not links, and each hit's title repeats its kind
    (USER_FEEDBACK, also its badge)."""
    server, _ = coding
    with server.client("finn") as c:
        html = c.get("/search", params={"q": "rate limit login", "k": 20}).text
        links = HIT_LINK.findall(html)
        hits = c.get("/api/search", params={"q": "rate limit login", "k": 20}).json()["hits"]
        assert len(links) == len(hits) >= 8
        layers = {h["layer"] for h in hits}
        assert {"log", "ledger", "task", "file"} <= layers
        for (href, title), hit in zip(links, hits, strict=True):
            title = unescape(title)
            kind = hit["kind"] or ""
            assert title and title not in (kind, hit["layer"], kind.upper(), kind.lower())
            assert not title.startswith(("USER_FEEDBACK", "SYSTEM", "TOOL_USE", "Final response"))
            target = c.get(unescape(href).split("#")[0])
            assert target.status_code == 200, href
            fragment = unescape(href).partition("#")[2]
            if fragment:  # the page marks the record the link points at
                assert f'id="{fragment}"' in target.text, (href, hit["uid"])
            if hit["layer"] == "log":
                here = re.search(r'class="line [^"]*here[^"]*" id="([^"]+)"', target.text)
                assert here is not None  # the LOG entry among its neighbours
                assert len(LINE.findall(target.text)) > 1


def test_search_explains_in_words(coding: Coding) -> None:
    server, _ = coding
    with server.client("finn") as c:
        html = c.get("/search", params={"q": "what did we decide about redis"}).text
    why = _text(_section(html, '<ul class="why">', "</ul>"))
    assert "Matches “decide”, “redis”." in why
    assert "Word match: 100% of the best match in this search" in why
    assert "with a half-life of 14 days it keeps" in why
    assert "Counted as a decision (ledger kind decision), weight ×1 (recall.decision)" in why
    assert "the question asks about decisions: ×1.5" in why


# -- polish ---------------------------------------------------------------------------------
def test_sessions_are_titled_by_their_first_prompt_with_times_and_counts(coding: Coding) -> None:
    """Why: the Sessions page lists bare UUIDs; the title and ended columns are always
    empty."""
    server, ids = coding
    with server.client("finn") as c:
        html = c.get("/a/finn/sessions").text
        api = c.get("/api/agents/finn/sessions").json()["sessions"]
    rows = re.findall(r"<tr><td>(.*?)</tr>", html, re.S)
    assert len(rows) == 10
    first = " ".join(_text(rows[0]).split())  # the newest session first
    assert first.startswith("Prepare the release notes for 1.4")
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \d{4}-\d\d-\d\d \d\d:\d\d:\d\d 10 4$", first)
    heading = re.search(r'<a href="/a/finn/sessions/[^"]+">([^<]+)</a>', rows[-1])
    assert heading is not None and heading.group(1) == "Add rate limiting to the login endpoint"
    assert all(s["first_prompt"] and s["last_active"] and s["tool_calls"] >= 4 for s in api)
    assert {s["id"] for s in api} == set(ids["sessions"])


def test_a_session_link_opens_the_transcript_at_the_message(coding: Coding) -> None:
    server, _ = coding
    with server.client("finn") as c:
        hits = c.get(
            "/api/search", params={"q": "speed up the user search query", "layers": "sessions"}
        ).json()["hits"]
        html = c.get(
            "/search", params={"q": "speed up the user search query", "layers": "sessions"}
        )
        href = unescape(HIT_LINK.findall(html.text)[0][0])
        page = c.get(href.split("#")[0])
    assert hits[0]["layer"] == "session"
    pos = hits[0]["uid"].rsplit(":", 1)[-1]
    assert href.endswith(f"#m-{pos}")
    assert re.search(f'class="msg role-\\w+ here" id="m-{pos}"', page.text)
    assert "<h1>Speed up the user search query</h1>" in page.text


@pytest.fixture(scope="module")
def empty(tmp_path_factory: pytest.TempPathFactory) -> Any:
    home = tmp_path_factory.mktemp("empty") / "store"
    home.mkdir(parents=True)
    (home / "config.toml").write_text(CONFIG, encoding="utf-8")
    with Store(home, agent="finn", room="room-1") as s:
        s.agent().now.update("Start")
    server = start_server(home)
    try:
        yield server
    finally:
        stop_server(server)


@pytest.mark.parametrize(
    ("path", "how"),
    [
        ("/ledger", "ledger publish"),
        ("/items", "memstrata extract"),
        ("/a/finn/sessions", "Stop or PreCompact hook"),
        ("/a/finn/facts", "save_fact"),
        ("/a/finn/tasks", "task_add"),
        ("/a/finn/timeline?kinds=calls", "The timeline fills as the agent works"),
        ("/", "A room fills when an agent in it publishes"),
    ],
)
def test_empty_pages_say_how_they_fill(empty: Served, path: str, how: str) -> None:
    """Why: Ledger and Items pages are empty with no word on how they fill."""
    with empty.client("finn") as c:
        r = c.get(path)
    assert r.status_code == 200
    assert how in " ".join(_text(r.text).split())


def test_favicon_is_served(coding: Coding) -> None:
    """Why: `/favicon.ico` is a 404 (a console error on every page)."""
    server, _ = coding
    r = httpx.get(f"{server.base}/favicon.ico")  # no token: browsers ask before logging in
    assert r.status_code == 200 and r.headers["content-type"] == "image/x-icon"
    assert r.content[:4] == b"\x00\x00\x01\x00"  # an ICO file
    with server.client("finn") as c:
        assert '<link rel="icon" href="/favicon.ico"' in c.get("/").text


def test_openapi_declares_the_bearer_scheme(coding: Coding) -> None:
    """Why: the OpenAPI schema declares no security scheme."""
    server, _ = coding
    spec = httpx.get(f"{server.base}/api/openapi.json").json()
    assert spec["components"]["securitySchemes"]["bearerToken"] == {
        "type": "http",
        "scheme": "bearer",
        "description": spec["components"]["securitySchemes"]["bearerToken"]["description"],
    }
    assert spec["security"] == [{"bearerToken": []}]
    from openapi_spec_validator import validate

    validate(spec)


ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def test_api_gives_times_in_iso_8601(coding: Coding) -> None:
    """Why: the API gives times as epoch floats where MCP and the CLI give ISO 8601."""
    server, _ = coding
    with server.client("finn") as c:
        hits = c.get("/api/search", params={"q": "rate limit"}).json()["hits"]
        one = c.get("/api/memories", params={"uid": hits[0]["uid"]}).json()
        items = c.get("/api/agents/finn/timeline", params={"limit": 20}).json()["items"]
        events = c.get("/api/events", params={"limit": 20}).json()["events"]
    times = [h["ts"] for h in hits] + [one["ts"]] + [i["ts"] for i in items]
    times += [e["ts"] for e in events]
    assert times and all(isinstance(t, str) and ISO.match(t) for t in times), times[:5]
    assert all(set(h) >= {"uid", "layer", "score", "title", "source", "explain"} for h in hits)


def test_no_answer_carries_the_servers_path(tmp_path: Any) -> None:
    """Why: archive uids shown in results carry the server's absolute path."""
    home = tmp_path / "store"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG, encoding="utf-8")
    with Store(home, agent="finn", room="room-1") as s:
        for i in range(8):
            s.agent().log.append("THOUGHT", f"archived thought number {i} about kiwis")
        compact_log(s, "finn", summary="Kiwis, compacted.")
    server = start_server(home)
    try:
        with server.client("finn") as c:
            answers = [
                c.get("/api/search", params={"q": "archived thought kiwis", "k": 20}),
                c.get("/api/agents/finn/timeline", params={"limit": 50}),
                c.get("/api/agents/finn/archive"),
                c.get("/search", params={"q": "archived thought kiwis", "k": 20}),
                c.get("/a/finn/timeline"),
            ]
            uids = [h["uid"] for h in answers[0].json()["hits"] if h["layer"] == "archive"]
            assert uids and all(u.startswith("archive:agents/finn/archive/LOG-") for u in uids)
            answers.append(c.get("/api/memories", params={"uid": uids[0]}))
            html = c.get("/search", params={"q": "archived thought kiwis"}).text
            href = unescape(HIT_LINK.findall(html)[0][0])
            answers.append(c.get(href.split("#")[0]))  # the archived entry in the timeline
    finally:
        stop_server(server)
    for r in answers:
        assert r.status_code == 200, r.url
        at = r.text.find(str(tmp_path))
        assert at < 0, (r.url, r.text[max(0, at - 300) : at + 120])


def test_a_story_page_never_splits_a_tool_call_with_a_record_between_its_parts(
    tmp_path: Path,
) -> None:
    """Why: a tool call's records (its transcript tool_use, the LOG TOOL_USE and its
    tool_result) were split over two story pages when another record sat between them in
    the index's order below the page's cut (records written in one millisecond may be
    indexed in another order): page 1 told the call from its LOG entry and result, page 2
    told its tool_use again as a second call (`tests/web/test_webapp.py::
    test_timeline_tells_each_tool_call_once` failed about 1 run in 5). Here the order is
    fixed by the records' times: the agent's note lies between the call's tool_use and
    its result, just below the first page's cut."""
    from memstrata.assembly.story import RECORDS
    from memstrata.assembly.timeline import timeline
    from memstrata.operations.loop import log_tool

    home = tmp_path / "store"
    home.mkdir()
    # 150 entries: over the LOG's limit; compacted, they would be one archive's records
    (home / "config.toml").write_text(CONFIG + "\n[log]\nauto_compact = false\n", "utf-8")
    sid, call = "build-session", "toolu_0123456789abcdef"
    t0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC).timestamp()
    with Store(home, agent="finn") as s:
        mem = s.agent()
        mem.sessions.append(
            sid,
            "tool_call",
            "",
            id=call,
            name="Bash",
            input={"command": "make build"},
            timestamp=iso(t0),
        )
        mem.log.append("THOUGHT", "The build cache is cold", {"session": sid}, ts=t0 + 1)
        entry = log_tool(
            s, "finn", "Bash", {"command": "make build"}, "ok", session=sid, tool_use_id=call
        )
        assert entry is not None  # (at the real time: newer than every record below)
        mem.sessions.append(
            sid, "tool_result", "built", id=call, name="Bash", timestamp=iso(t0 + 2)
        )
        for n in range(RECORDS - 2):  # the rest of the first page: newer notes
            mem.log.append("THOUGHT", f"Note {n}", {"session": sid})
        s.drain()
        page = timeline(s, "finn", limit=RECORDS)
    cut = [(i.layer, i.kind, i.text) for i in page.items[-2:]]  # the page ends with the call
    assert {k for _, k, _ in cut} == {"TOOL_USE", "tool_result"}, cut
    server = start_server(home, env={"MEMSTRATA_EMBEDDER": "none"})
    try:
        with server.client("finn") as c:
            lines = _story(c, "kinds=calls")
    finally:
        stop_server(server)
    assert [k for k, _ in lines] == ["call"], lines  # one line: not the tool_use again
