"""The web app in real headless Chromium (Debian's `chromium`, driven by Playwright):
the timeline, search with its explain, editing NOW.md (on disk), a supersede in the ledger
view, memory text with `<script>` shown as text and never run, a conflicting edit from a
second browser refused. Screenshots go to `$MEMSTRATA_SCREENSHOTS` or the test's tmp_path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.web.conftest import Served, logged_in

Ids = dict[str, str]


def test_timeline_shows_memory_and_script_as_text(
    browser: Any, served: tuple[Served, Ids], shots: Path
) -> None:
    server, _ = served
    page = logged_in(browser, server)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.reload()
    items = page.locator("#timeline li.line")
    assert items.count() >= 6
    text = page.locator("#timeline").inner_text()
    assert "bcrypt work factor 12 is enough" in text
    assert "<script>window.__pwned = 1</script>" in text  # shown as text...
    assert page.evaluate("window.__pwned") is None  # ...and never executed
    assert page.locator("#timeline script").count() == 0
    assert "acting as finn" in page.locator("#who").inner_text()
    page.screenshot(path=str(shots / "timeline.png"), full_page=True)
    page.check("input[name=kinds][value=facts]")
    page.click("#timeline-filters button")
    page.wait_for_url("**kinds=facts**")  # loaded (all() does not wait)
    kinds = {x.get_attribute("data-kind") for x in page.locator("#timeline li.line").all()}
    assert kinds == {"fact"}
    assert dialogs == []
    page.context.close()


def test_search_shows_the_explain_of_each_hit(
    browser: Any, served: tuple[Served, Ids], shots: Path
) -> None:
    server, _ = served
    page = logged_in(browser, server)
    page.goto(f"{server.base}/search")
    page.fill("input[name=q]", "bcrypt passwords")
    page.click("#search-form button")
    first = page.locator("#hits li.hit").first
    first.locator("details.explain summary").click()
    table = first.locator("table.explain-table").inner_text()
    for word in ("bm25", "decay", "half_life_hours", "age_hours", "formula"):
        assert word in table
    page.screenshot(path=str(shots / "search.png"), full_page=True)
    page.context.close()


def test_edit_now_reaches_the_file_on_disk(
    browser: Any, served: tuple[Served, Ids], shots: Path
) -> None:
    server, _ = served
    page = logged_in(browser, server)
    page.goto(f"{server.base}/a/finn/edit/now")
    page.fill("#editor textarea", "# NOW\n\n## Objective\nEdited in the browser\n")
    page.click("#save")
    page.wait_for_selector("#saved")
    on_disk = (server.home / "agents/finn/memory/NOW.md").read_text(encoding="utf-8")
    assert on_disk == "# NOW\n\n## Objective\nEdited in the browser\n"
    page.screenshot(path=str(shots / "now-saved.png"), full_page=True)
    page.context.close()


def test_conflicting_edit_from_a_second_browser_is_refused(
    browser: Any, served: tuple[Served, Ids], shots: Path
) -> None:
    server, _ = served
    one = logged_in(browser, server)
    two = logged_in(browser, server)
    for p in (one, two):  # both open the same version of CONTEXT.md
        p.goto(f"{server.base}/a/finn/edit/context")
    one.fill("#editor textarea", "# Finn\n\nFirst editor's text.\n")
    one.click("#save")
    one.wait_for_selector("#saved")
    two.fill("#editor textarea", "# Finn\n\nSecond editor's text.\n")
    two.click("#save")
    two.wait_for_selector("#conflict")
    path = server.home / "agents/finn/memory/CONTEXT.md"
    assert path.read_text(encoding="utf-8") == "# Finn\n\nFirst editor's text.\n"  # not lost
    assert "First editor's text." in two.locator("#theirs").inner_text()
    assert "Second editor's text." in two.locator("#yours").inner_text()  # not lost either
    two.screenshot(path=str(shots / "conflict.png"), full_page=True)
    two.click("#save")  # saving again, now based on the current version, goes through
    two.wait_for_selector("#saved")
    assert path.read_text(encoding="utf-8") == "# Finn\n\nSecond editor's text.\n"
    one.context.close()
    two.context.close()


def test_supersede_is_shown_in_the_ledger_view(
    browser: Any, served: tuple[Served, Ids], shots: Path
) -> None:
    server, ids = served
    page = logged_in(browser, server)
    page.goto(f"{server.base}/ledger?room=room-1&include_superseded=true")
    old = page.locator(f"#ledger tr[data-id={ids['first']}]")
    assert "superseded" in (old.get_attribute("class") or "")
    assert f"superseded by {ids['second']}" in old.inner_text()
    assert "%" in page.locator(f"#ledger tr[data-id={ids['second']}]").inner_text()  # freshness
    page.screenshot(path=str(shots / "ledger.png"), full_page=True)
    page.click(f"#ledger tr[data-id={ids['second']}] td:nth-child(4) a")
    page.wait_for_url(f"**/ledger/{ids['second']}")  # loaded (all() does not wait)
    chain = page.locator("#chain li")
    assert [c.get_attribute("data-id") for c in chain.all()] == [ids["first"], ids["second"]]
    page.fill("#supersede input[name=summary]", "Use bcrypt, work factor 12")
    page.click("#supersede button")
    page.wait_for_selector("#chain li:nth-child(3)")
    assert "Use bcrypt, work factor 12" in page.locator("#chain li.live").inner_text()
    page.screenshot(path=str(shots / "chain.png"), full_page=True)
    page.context.close()


def test_other_agents_pages_are_refused_like_the_api(
    browser: Any, served: tuple[Served, Ids], shots: Path
) -> None:
    server, _ = served
    page = logged_in(browser, server)
    resp = page.goto(f"{server.base}/a/mira/timeline")
    assert resp is not None and resp.status == 403
    assert "scope_denied" in page.locator("#error").inner_text()
    for where in ("tasks", "prompt", "audit"):
        resp = page.goto(f"{server.base}/a/finn/{where}")
        assert resp is not None and resp.status == 200
        page.screenshot(path=str(shots / f"{where}.png"), full_page=True)
    page.context.close()
