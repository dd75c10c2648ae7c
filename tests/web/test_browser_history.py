"""Issue 24 item 5 in real headless Chromium: each memory file's history, a readable diff
between any two versions, and a restore button with the editor's conflict check, each
restore checked on disk, at desktop (1280 px) and phone (390 px) widths. And the issue's
"done when": after a destructive `memory_write` (over MCP, the server's `/mcp`), a restore
clicked in the web app brings the old CONTEXT.md back byte for byte, on both truths
(the folder of files and PostgreSQL). Screenshots go to `$MEMSTRATA_SCREENSHOTS`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import anyio
import pytest
from tests.web.conftest import CONFIG, TOKENS, Served, start_server, stop_server

from memstrata import Store

WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}
# Bytes an editor or a form could mangle: CRLF, trailing spaces, non-ASCII, no final newline.
OLD = "# Context\r\nprefers tea  \r\nnaïve café ☕ — keep this\n\nlast line, no newline"
MIDDLE = "# Context\r\nprefers coffee  \r\nnaïve café ☕ — keep this\n\nlast line, no newline"
CLOBBER = "# Context\n(overwritten by a confused agent)\n"
DB_URL = "postgres://app:%s@db.internal:5432/shop"  # a URL's password: withheld
FILES = {"desktop": "CONTEXT.md", "phone": "notes/plan.md"}  # one file per width


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _id(text: str) -> str:
    return _sha(text)[:12]


def _on_disk(home: Path, rel: str) -> bytes:
    """The file's bytes in the truth (on a local store: the file itself)."""
    with Store(home, sync=False, watch=False) as s:
        found = s.engine.truth.read(rel)
        assert found is not None, rel
        return found.data


@pytest.fixture(scope="module")
def histories(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """finn's CONTEXT.md and notes/plan.md, each written OLD, MIDDLE, then CLOBBER."""
    home = tmp_path_factory.mktemp("history") / "store"
    home.mkdir(parents=True)
    (home / "config.toml").write_text(CONFIG, encoding="utf-8")
    with Store(home, agent="finn", room="room-1") as s:
        mem = s.agent()
        for text in (OLD, MIDDLE, CLOBBER):
            mem.context.write(text)
            mem.files.write("notes/plan.md", text)
        mem.files.write("notes/gone.md", "# Gone\n\nsoon deleted\n")
        with pytest.warns(UserWarning):  # (stored as given: [secrets] policy = "warn")
            for password in ("hunter2xyz", "hunter3xyz"):  # a word inside the secret changes
                mem.files.write("notes/keys.md", f"# Keys\n\ndb: {DB_URL % password} (rotated)\n")
    server = start_server(home)
    try:
        yield server
    finally:
        stop_server(server)


def _page(browser: Any, server: Served, width: str, start: str, who: str = "finn") -> Any:
    w, h = WIDTHS[width]
    page = browser.new_context(viewport={"width": w, "height": h}).new_page()
    page.goto(f"{server.base}/login?{urlencode({'next': start})}")
    page.fill("input[name=token]", TOKENS[who])
    page.click("button:has-text('Log in')")
    page.wait_for_url(lambda url: url.endswith(start))
    return page


def _lines(page: Any, kind: str) -> str:
    """The text of the diff's added (or removed) lines."""
    tag = {"add": "ins", "del": "del"}[kind]
    return "\n".join(page.locator(f"#diff li.d-{kind} > {tag}").all_text_contents())


def _fits(page: Any) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"{page.url} is {width} px wide"


@pytest.mark.parametrize("width", list(WIDTHS))
def test_history_diff_and_restore_in_the_browser(
    browser: Any, histories: Served, shots: Path, width: str
) -> None:
    name = FILES[width]
    rel = f"agents/finn/memory/{name}"
    page = _page(browser, histories, width, "/a/finn/history")
    # the files that have versions, each a link to its history
    page.locator("#histories a", has_text=name).click()
    page.wait_for_url("**/history?path=*")  # loaded (count() does not wait)
    versions = page.locator("#versions li.version")
    assert versions.count() == 3
    assert "current" in versions.first.inner_text() and _id(CLOBBER) in versions.first.inner_text()
    # by default: what the last change did (MIDDLE -> CLOBBER)
    assert "(overwritten by a confused agent)" in _lines(page, "add")

    # any two: from OLD to MIDDLE, one word changed on one line
    page.check(f"#v-{_id(OLD)} input[name=a]")
    page.check(f"#v-{_id(MIDDLE)} input[name=b]")
    page.click("#compare-button")
    page.wait_for_url(lambda url: f"b={_id(MIDDLE)}" in url)
    assert "removed: prefers tea   CRLF" in _lines(page, "del")  # the line ending shown too
    assert "added: prefers coffee   CRLF" in _lines(page, "add")
    assert page.locator("#diff li.d-del strong").inner_text() == "tea"  # the word, marked
    assert page.locator("#diff li.d-add strong").inner_text() == "coffee"
    assert "1 line added, 1 removed" in page.locator("#diff-heading").inner_text()
    _fits(page)
    page.screenshot(path=str(shots / f"history-diff-{width}.png"), full_page=True)

    # a version whole
    page.locator(f"#v-{_id(OLD)} a", has_text="View").click()
    assert "naïve café ☕ — keep this" in page.locator("#shown-text").inner_text()

    # restore OLD: on disk byte for byte, itself a new version
    page.click(f"#v-{_id(OLD)} button:has-text('Restore')")
    page.wait_for_selector("#restored")
    page.wait_for_load_state()  # the versions below #restored parsed too
    assert _on_disk(histories.home, rel) == OLD.encode()
    assert versions.count() == 4
    top = versions.first.inner_text()
    assert _id(OLD) in top and "current" in top
    assert f"restore of {_id(OLD)}" in top and "through web/restore" in top
    assert "(overwritten by a confused agent)" in _lines(page, "del")
    _fits(page)
    page.screenshot(path=str(shots / f"history-restored-{width}.png"), full_page=True)

    # someone writes the file while the page is open: a restore from it is refused
    with Store(histories.home, agent="finn", room="room-1", sync=False, watch=False) as s:
        s.agent().files.write(name, "# Context\nwritten meanwhile by the agent\n")
    page.click(f"#v-{_id(MIDDLE)} button:has-text('Restore')")
    page.wait_for_selector("#conflict")
    assert "Not restored" in page.locator("#conflict").inner_text()
    assert _on_disk(histories.home, rel) == b"# Context\nwritten meanwhile by the agent\n"
    assert "written meanwhile by the agent" in _lines(page, "del")
    _fits(page)
    page.screenshot(path=str(shots / f"history-conflict-{width}.png"), full_page=True)
    # the page now expects the current content: restoring again is what the person meant
    page.click(f"#v-{_id(MIDDLE)} button:has-text('Restore')")
    page.wait_for_selector("#restored")
    assert _on_disk(histories.home, rel) == MIDDLE.encode()
    page.context.close()


def test_another_agent_sees_no_history_and_restores_nothing(histories: Served) -> None:
    """The library's one gate: mira (another project agent) gets 403 on finn's history
    pages and restore; a restore form without its CSRF token writes nothing."""
    before = _on_disk(histories.home, "agents/finn/memory/notes/plan.md")
    form = {"path": "notes/plan.md", "version": _id(OLD), "expected_sha": _sha(CLOBBER)}
    with histories.client("mira") as mira:
        assert mira.get("/a/finn/history").status_code == 403
        assert mira.get("/a/finn/history", params={"path": "CONTEXT.md"}).status_code == 403
        csrf = _csrf(mira.get("/a/mira/facts").text)
        assert csrf
        assert mira.post("/a/finn/history/restore", data={**form, "csrf": csrf}).status_code == 403
    with histories.client("finn") as finn:
        assert finn.post("/a/finn/history/restore", data={**form, "csrf": "x"}).status_code == 403
    assert _on_disk(histories.home, "agents/finn/memory/notes/plan.md") == before


def test_a_deleted_file_comes_back_from_its_history(histories: Served) -> None:
    """Deleting a memory file (the editor's "Move to archive") keeps its versions; its
    history page says it is gone, and Restore writes it back (the form expects the
    content the page showed: none)."""
    rel = "agents/finn/memory/notes/gone.md"
    with histories.client("finn", follow_redirects=True) as finn:
        csrf = _csrf(finn.get("/a/finn/facts").text)
        gone = finn.post("/a/finn/file/delete", data={"path": "notes/gone.md", "csrf": csrf})
        assert gone.status_code == 200
        page = finn.get("/a/finn/history", params={"path": "notes/gone.md"})
        assert page.status_code == 200 and 'id="gone"' in page.text
        form = {
            "path": "memory/notes/gone.md",
            "version": _id("# Gone\n\nsoon deleted\n"),
            "expected_sha": _sha(""),
            "csrf": csrf,
        }
        done = finn.post("/a/finn/history/restore", data=form)
        assert done.status_code == 200 and 'id="restored"' in done.text
    assert _on_disk(histories.home, rel) == b"# Gone\n\nsoon deleted\n"


def test_an_empty_history_says_how_it_fills(histories: Served) -> None:
    with histories.client("wilco") as wilco:  # an agent that has written nothing yet
        page = wilco.get("/a/wilco/history")
    assert page.status_code == 200
    assert "No versions yet. The first time NOW.md, CONTEXT.md, AGENT.md" in page.text


def test_a_diff_withholds_the_secrets_it_shows(histories: Served) -> None:
    """A line edited inside a secret is shown whole (its changed words unmarked), so the
    page's secrets mask finds the secret and withholds it, as every page does."""
    with histories.client("finn") as finn:
        page = finn.get("/a/finn/history", params={"path": "notes/keys.md"})
        shown = finn.get("/a/finn/history", params={"path": "notes/keys.md", "show": "current"})
    assert page.status_code == 200 and '<li class="d-add">' in page.text
    for html in (page.text, shown.text):
        assert "hunter2xyz" not in html and "hunter3xyz" not in html
        assert "[withheld: " in html


def _csrf(html: str) -> str:
    import re

    found = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    return found[1] if found else ""


def _memory_write(server: Served, who: str, contents: list[str]) -> None:
    """`who`'s agent writes CONTEXT.md over MCP (streamable HTTP at the server's /mcp)."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from mcp import Client

    async def main() -> None:
        headers = {"Authorization": f"Bearer {TOKENS[who]}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:  # noqa: SIM117
            async with Client(streamable_http_client(f"{server.base}/mcp", http_client=http)) as c:
                for text in contents:
                    r = await c.call_tool("memory_write", {"path": "CONTEXT.md", "content": text})
                    assert not r.is_error, r.content

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:  # a thread of its own: Playwright's loop runs in this one
        pool.submit(anyio.run, main).result()


def test_a_web_restore_after_a_destructive_memory_write_brings_context_md_back_byte_for_byte(
    browser: Any, home: Path, backend: str, shots: Path, request: pytest.FixtureRequest
) -> None:
    """On the local truth the module's server serves (mira's CONTEXT.md, which nothing
    else here writes); on PostgreSQL a server of its own."""
    pytest.importorskip("mcp")
    if backend == "local":
        server: Served = request.getfixturevalue("histories")
    else:
        home.mkdir(parents=True)
        (home / "config.toml").write_text(CONFIG, encoding="utf-8")
        server = start_server(home)  # (MEMSTRATA_DATABASE_URL names the test's database)
    rel = "agents/mira/memory/CONTEXT.md"
    try:
        _memory_write(server, "mira", [OLD, CLOBBER])  # the second destroys the first
        assert _on_disk(server.home, rel) == CLOBBER.encode()
        page = _page(browser, server, "desktop", "/a/mira/history?path=CONTEXT.md", who="mira")
        top = page.locator("#versions li.version").first.inner_text()
        assert "through mcp memory_write" in top and _id(CLOBBER) in top
        page.click(f"#v-{_id(OLD)} button:has-text('Restore')")
        page.wait_for_selector("#restored")
        page.screenshot(path=str(shots / f"history-done-when-{backend}.png"), full_page=True)
        page.context.close()
        assert _on_disk(server.home, rel) == OLD.encode()
    finally:
        if backend != "local":
            stop_server(server)
    if backend == "local":
        assert (server.home / rel).read_bytes() == OLD.encode()  # the file itself
    with Store(server.home, agent="mira", sync=False, watch=False) as s:
        kept = [v.sha256 for v in s.agent().versions.history("CONTEXT.md").versions]
    assert kept == [_sha(OLD), _sha(CLOBBER), _sha(OLD)]  # nothing lost, the restore a version
