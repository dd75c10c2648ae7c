"""Memory files in the web app, in real headless Chromium: open one from the Files tab,
edit it (the change is on disk), a conflicting edit from a second browser refused with
nothing lost, delete (moved to the archive, never destroyed). The NOW / CONTEXT editors
offer no "move to archive" (they are not memory files).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.web.conftest import Served, logged_in

Ids = dict[str, str]
PLAN = "notes/plan.md"


def _memory(server: Served) -> Path:
    return server.home / "agents/finn/memory"


def test_open_a_memory_file_and_edit_it_on_disk(
    browser: Any, served: tuple[Served, Ids], shots: Path
) -> None:
    server, _ = served
    page = logged_in(browser, server)
    page.goto(f"{server.base}/a/finn/files")
    page.click("#files a:has-text('notes/')")
    resp_holder: list[Any] = []
    page.on("response", lambda r: resp_holder.append(r) if "/a/finn/file?" in r.url else None)
    page.click(f"#files a:has-text('{PLAN}')")
    page.wait_for_selector("#editor textarea")
    assert [r.status for r in resp_holder] == [200]
    assert page.locator("#editor textarea").input_value() == "# Plan\n\n- hash with bcrypt\n"
    assert page.locator("#editor input[name=path]").input_value() == PLAN
    page.fill("#editor textarea", "# Plan\n\n- hash with bcrypt\n- edited in the browser\n")
    page.click("#save")
    page.wait_for_selector("#saved")
    assert (_memory(server) / PLAN).read_text(encoding="utf-8") == (
        "# Plan\n\n- hash with bcrypt\n- edited in the browser\n"
    )
    assert "edited in the browser" in page.locator("#editor textarea").input_value()
    page.screenshot(path=str(shots / "file-saved.png"), full_page=True)
    page.context.close()


def test_new_memory_file_from_the_files_tab(browser: Any, served: tuple[Served, Ids]) -> None:
    server, _ = served
    page = logged_in(browser, server)
    page.goto(f"{server.base}/a/finn/files")
    page.fill("form.filters input[name=path]", "notes/new.md")
    page.click("form.filters button")
    page.wait_for_selector("#editor textarea")
    assert page.locator("#editor textarea").input_value() == ""
    page.fill("#editor textarea", "# New\n")
    page.click("#save")
    page.wait_for_selector("#saved")
    assert (_memory(server) / "notes/new.md").read_text(encoding="utf-8") == "# New\n"
    page.context.close()


def test_conflicting_file_edit_is_refused(
    browser: Any, served: tuple[Served, Ids], shots: Path
) -> None:
    server, _ = served
    (_memory(server) / "notes").mkdir(parents=True, exist_ok=True)
    one = logged_in(browser, server)
    two = logged_in(browser, server)
    for p in (one, two):  # both open the same version of the file
        resp = p.goto(f"{server.base}/a/finn/file?path=notes/shared.md")
        assert resp is not None and resp.status == 200
    one.fill("#editor textarea", "one's text\n")
    one.click("#save")
    one.wait_for_selector("#saved")
    two.fill("#editor textarea", "two's text\n")
    two.click("#save")
    two.wait_for_selector("#conflict")
    path = _memory(server) / "notes/shared.md"
    assert path.read_text(encoding="utf-8") == "one's text\n"  # not overwritten
    assert "one's text" in two.locator("#theirs").inner_text()
    assert "two's text" in two.locator("#yours").inner_text()  # not lost either
    assert two.locator("#editor input[name=path]").input_value() == "notes/shared.md"
    two.screenshot(path=str(shots / "file-conflict.png"), full_page=True)
    two.click("#save")  # now based on the current version: goes through
    two.wait_for_selector("#saved")
    assert path.read_text(encoding="utf-8") == "two's text\n"
    one.context.close()
    two.context.close()


def test_delete_moves_the_file_to_the_archive(browser: Any, served: tuple[Served, Ids]) -> None:
    server, _ = served
    doomed = _memory(server) / "notes/doomed.md"
    doomed.parent.mkdir(parents=True, exist_ok=True)
    doomed.write_text("# Doomed\n\nkeep me somewhere\n", encoding="utf-8")
    page = logged_in(browser, server)
    resp = page.goto(f"{server.base}/a/finn/file?path=notes/doomed.md")
    assert resp is not None and resp.status == 200
    page.click("button:has-text('Move to archive')")
    page.wait_for_url("**/a/finn/files")
    assert not doomed.exists()
    archived = list((server.home / "agents/finn/archive/deleted").glob("*/notes/doomed.md"))
    assert [a.read_text(encoding="utf-8") for a in archived] == ["# Doomed\n\nkeep me somewhere\n"]
    page.goto(f"{server.base}/a/finn/files?path=notes")
    assert "doomed.md" not in page.locator("#files").inner_text()
    page.context.close()


def test_now_editor_offers_no_archive_button(browser: Any, served: tuple[Served, Ids]) -> None:
    server, _ = served
    page = logged_in(browser, server)
    for which in ("now", "context", "identity"):
        page.goto(f"{server.base}/a/finn/edit/{which}")
        page.wait_for_selector("#editor textarea")
        assert page.locator("#editor input[name=path]").count() == 0
        assert page.locator("button:has-text('Move to archive')").count() == 0
    page.context.close()
