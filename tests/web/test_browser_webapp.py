"""Issue 24 in real headless Chromium, as people use the web app, at desktop (1280 px) and
phone (390 px) widths: the home page, the timeline's folds, a search hit clicked through
to its place, no page wider than a phone, and an accessibility check of every page with
axe-core (`axe-playwright-python`, its bundled `axe.min.js`: no network) that allows no
serious or critical violation. Screenshots of each go to `$MEMSTRATA_SCREENSHOTS` or the
test's tmp_path (`shots`); one browser serves the module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.web.conftest import TOKENS, Served

Coding = tuple[Served, dict[str, Any]]
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}


def _page(browser: Any, server: Served, width: str, *, js: bool = True, who: str = "finn") -> Any:
    """A page of a fresh context of `width` that logged in with `who`'s token (the form)."""
    w, h = WIDTHS[width]
    ctx = browser.new_context(viewport={"width": w, "height": h}, java_script_enabled=js)
    page = ctx.new_page()
    page.goto(f"{server.base}/login")
    page.fill("input[name=token]", TOKENS[who])
    page.click("button:has-text('Log in')")
    page.wait_for_url(f"{server.base}/")
    return page


def _fits(page: Any) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"{page.url} is {width} px wide"


@pytest.mark.parametrize("width", list(WIDTHS))
def test_home_page_shows_where_the_agent_is(
    browser: Any, coding: Coding, shots: Path, width: str
) -> None:
    server, ids = coding
    page = _page(browser, server, width)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.reload()
    card = page.locator("#agent-finn")
    assert "PDF export blocked" in card.locator("[data-part=now]").inner_text()
    assert "1 in progress" in card.inner_text() and "1 blocked" in card.inner_text()
    assert "Never log raw passwords" in card.locator("[data-part=in-force]").inner_text()
    last = card.locator("[data-part=last-session]").inner_text()
    assert "Prepare the release notes for 1.4" in last and "Outcome:" in last
    assert "Index caught up" in card.locator("[data-part=health]").inner_text()
    _fits(page)
    page.screenshot(path=str(shots / f"home-{width}.png"), full_page=True)
    assert errors == []  # the favicon too: no 404 in the console
    card.locator("[data-part=in-force] a", has_text="argon2id").click()
    page.wait_for_url(f"**/ledger/{ids['decision']}")
    assert "Use argon2id for new password hashes" in page.locator("#chain").inner_text()
    page.go_back()
    card.locator("[data-part=tasks] a", has_text="PDF export").click()
    assert page.locator(".card:target").inner_text().count("PDF export of the audit log") == 1
    page.context.close()


@pytest.mark.parametrize("width", list(WIDTHS))
def test_timeline_folds_tool_calls_and_one_click_opens_them(
    browser: Any, coding: Coding, shots: Path, width: str
) -> None:
    server, _ = coding
    page = _page(browser, server, width, js=width == "desktop")  # the phone: without JS
    page.goto(f"{server.base}/a/finn/timeline")
    group = page.locator("li.session-group", has_text="Prepare the release notes for 1.4")
    fold = group.locator("li.fold").first
    calls = fold.locator("li.line.k-call")
    assert calls.count() == 4 and not calls.first.is_visible()  # folded
    assert group.locator("li.k-prompt").is_visible() and group.locator("li.k-answer").is_visible()
    page.screenshot(path=str(shots / f"timeline-folded-{width}.png"), full_page=True)
    fold.locator("summary").first.click()  # one click
    assert all(c.is_visible() for c in calls.all())
    titles = [c.locator(".title").first.inner_text() for c in calls.all()]
    assert titles == [
        "Read docs/auth.md",
        "Grep rate_limit in app",
        "Edit docs/auth.md",
        "Bash pytest -q",
    ]
    calls.nth(3).locator("summary").click()  # and a call's input and result
    assert '"command": "pytest -q"' in calls.nth(3).locator("pre").inner_text()
    assert "12 passed" in calls.nth(3).locator("pre").inner_text()
    _fits(page)
    page.screenshot(path=str(shots / f"timeline-open-{width}.png"), full_page=True)
    page.context.close()


@pytest.mark.parametrize("width", list(WIDTHS))
def test_search_hits_lead_to_their_place(
    browser: Any, coding: Coding, shots: Path, width: str
) -> None:
    server, _ = coding
    page = _page(browser, server, width)
    page.goto(f"{server.base}/search")
    page.fill("input[name=q]", "rate limit login")
    page.click("#search-form button")
    hit = page.locator("#hits li.hit", has=page.locator(".badge", has_text="USER_FEEDBACK")).first
    title = hit.locator(".hit-link").inner_text()
    assert title == "Add rate limiting to the login endpoint"  # the prompt, not its kind
    hit.locator("details.explain summary").click()
    assert "Matches" in hit.locator("ul.why").inner_text()
    _fits(page)
    page.screenshot(path=str(shots / f"search-{width}.png"), full_page=True)
    hit.locator(".hit-link").click()
    page.wait_for_url("**/a/finn/timeline?at=*")
    here = page.locator("li.line.here")
    assert here.count() == 1 and here.is_visible()
    assert title in here.inner_text()
    box, view = here.bounding_box(), page.viewport_size
    assert box is not None and 0 <= box["y"] < view["height"]  # scrolled to it
    assert page.locator("li.line").count() > 5  # among its neighbours
    _fits(page)
    page.screenshot(path=str(shots / f"search-landed-{width}.png"))
    page.context.close()


@pytest.mark.parametrize("width", list(WIDTHS))
def test_sessions_read_by_first_prompt_and_open_at_the_transcript(
    browser: Any, coding: Coding, shots: Path, width: str
) -> None:
    server, ids = coding
    page = _page(browser, server, width)
    page.goto(f"{server.base}/a/finn/sessions")
    rows = page.locator("#sessions tbody tr")
    assert rows.count() == 10
    newest = rows.first.locator("td a").first
    assert newest.inner_text() == "Prepare the release notes for 1.4"  # not a UUID
    assert rows.first.locator("td").nth(4).inner_text() == "4"  # its tool calls, counted
    _fits(page)
    page.screenshot(path=str(shots / f"sessions-{width}.png"), full_page=True)
    newest.click()
    page.wait_for_url(f"**/a/finn/sessions/{ids['sessions'][-1]}")
    assert "Prepare the release notes for 1.4" in page.locator("main").inner_text()
    _fits(page)
    page.context.close()


@pytest.mark.parametrize("width", list(WIDTHS))
def test_history_of_context_md_shows_what_changed(
    browser: Any, coding: Coding, shots: Path, width: str
) -> None:
    """The CONTEXT.md tab leads to its history; the last change is shown as a diff
    (restoring is `test_browser_history.py`'s)."""
    server, _ = coding
    page = _page(browser, server, width)
    page.goto(f"{server.base}/a/finn/edit/context")
    page.click("#history-link")
    # loaded, not just navigated to: count() does not wait, and a page whose body had not
    # arrived yet showed 0 versions (1 failure in ~100 clicks under load)
    page.wait_for_url("**/history?path=*")
    assert page.locator("#versions li.version").count() == 2
    added = page.locator("#diff li.d-add").inner_text()
    assert "Rate limit counters live in Redis." in added
    _fits(page)
    page.screenshot(path=str(shots / f"history-{width}.png"), full_page=True)
    page.context.close()


PAGES = [  # one of each template
    "/",
    "/a/finn/timeline?kinds=errors&kinds=conversation",
    "/a/finn/edit/context?line=3",
    "/a/finn/files",
    "/a/finn/history",
    "/a/finn/history?path=CONTEXT.md&show=current",
    "/a/finn/file?path=notes/plan.md&line=3",
    "/a/finn/facts",
    "/a/finn/tasks",
    "/a/finn/sessions",
    "/a/finn/prompt",
    "/a/finn/health",
    "/a/finn/audit",
    "/ledger",
    "/search?q=rate+limit+login",
    "/items",
    "/events",
    "/api/docs",
    "/reveal",
]


RUN_AXE = "axe.run(document, {resultTypes: ['violations']})"  # (passes not collected)


def _every_page(server: Served, ids: dict[str, Any]) -> list[str]:
    first = ids["sessions"][0]
    return [
        *PAGES,
        f"/a/finn/sessions/{first}?at=0",
        f"/ledger/{ids['decision']}",
        f"/memory?uid=ledger:{ids['decision']}",
        "/a/finn/no-such-page",  # the error page
    ]


def test_no_page_is_wider_than_a_phone(browser: Any, coding: Coding, shots: Path) -> None:
    """Why: the task board overflows on a phone (858 px wide at 390 px)."""
    server, ids = coding
    page = _page(browser, server, "phone")
    wide = {}
    for path in _every_page(server, ids):
        page.goto(f"{server.base}{path}")
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > 390:
            wide[path] = width
    page.goto(f"{server.base}/a/finn/tasks")
    page.screenshot(path=str(shots / "tasks-phone.png"), full_page=True)
    assert wide == {}
    page.context.close()


def test_every_page_passes_an_accessibility_check(browser: Any, coding: Coding) -> None:
    """axe-core on every page the app has (and the login page), desktop width: no serious
    or critical violation."""
    from axe_playwright_python.sync_playwright import Axe

    server, ids = coding
    axe = Axe()
    page = _page(browser, server, "desktop")
    page.context.add_init_script(axe.axe_script)  # parsed with each page, no second injection
    found: dict[str, list[str]] = {}
    for path in _every_page(server, ids):
        page.goto(f"{server.base}{path}")
        for v in page.evaluate(RUN_AXE)["violations"]:
            if v["impact"] in ("serious", "critical"):
                where = [n["target"] for n in v["nodes"]][:3]
                found.setdefault(path, []).append(f"{v['id']} ({v['impact']}): {where}")
    login = page.context.browser.new_page()
    login.goto(f"{server.base}/login")
    for v in axe.run(login).response["violations"]:
        if v["impact"] in ("serious", "critical"):
            found.setdefault("/login", []).append(v["id"])
    assert found == {}
    login.close()
    page.context.close()
