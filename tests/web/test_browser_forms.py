"""The web app's forms in real headless Chromium, each checked on disk afterwards: save a
fact, move a task across the board, remove extracted items (cleanup), apply an audit
prune as a reviewed action (only what was ticked happens), and the assembled prompt with
a small budget showing what was cut. Screenshots go to `$MEMSTRATA_SCREENSHOTS`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.web.conftest import Served, logged_in

FINN = "agents/finn"


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_fact_saved_in_the_browser_reaches_the_journal(
    browser: Any, rich: Served, shots: Path
) -> None:
    page = logged_in(browser, rich)
    page.goto(f"{rich.base}/a/finn/facts")
    form = page.locator("form[action='/a/finn/facts']")
    form.locator("input[name=key]").fill("deploy_target")
    form.locator("input[name=value]").fill("<b>eu-west-1</b>")
    form.locator("select[name=category]").select_option("project")
    form.locator("input[name=citations]").fill("infra/regions.md")  # a repo fact is cited
    form.locator("button").click()
    page.wait_for_selector("#facts td:has-text('deploy_target')")
    row = page.locator("#facts tr", has_text="deploy_target")
    assert "<b>eu-west-1</b>" in row.inner_text()  # shown as text
    assert "project" in row.inner_text()
    last = _jsonl(rich.home / FINN / "facts.jsonl")[-1]
    assert (last["key"], last["value"], last["category"], last["citations"]) == (
        "deploy_target",
        "<b>eu-west-1</b>",
        "project",
        ["infra/regions.md"],
    )
    page.screenshot(path=str(shots / "facts.png"), full_page=True)
    page.context.close()


def test_task_moved_on_the_board(browser: Any, rich: Served, shots: Path) -> None:
    page = logged_in(browser, rich)
    page.goto(f"{rich.base}/a/finn/tasks")
    card = page.locator(
        "section[data-status=in_progress] article.card", has_text="Deploy the auth service"
    )
    assert card.count() == 1
    task_id = card.locator("input[name=task_id]").input_value()
    card.locator("select[name=status]").select_option("done")
    card.locator("button").click()
    page.wait_for_selector("section[data-status=done] article.card:has-text('Deploy the auth')")
    assert (
        page.locator("section[data-status=in_progress]").inner_text().count("Deploy the auth") == 0
    )
    tasks = json.loads((rich.home / FINN / "tasks.json").read_text(encoding="utf-8"))["tasks"]
    assert [t["status"] for t in tasks if t["id"] == task_id] == ["done"]
    page.screenshot(path=str(shots / "tasks-moved.png"), full_page=True)
    page.context.close()


def test_items_cleanup_removes_the_ticked_item(browser: Any, rich: Served, shots: Path) -> None:
    page = logged_in(browser, rich, "tok-wilco")  # cleanup is an admin's (seed 004)
    page.goto(f"{rich.base}/items")
    rows = page.locator("#items tr", has_text="Use Fastify for API")
    assert rows.count() == 1
    item_id = rows.locator("input[name=ids]").input_value()
    rows.locator("input[name=ids]").check()
    page.click("#cleanup button.danger")
    page.wait_for_load_state()
    assert "Use Fastify for API" not in page.locator("#items").inner_text()
    assert "Sessions are JSONL" in page.locator("#items").inner_text()  # not ticked: kept
    removed = _jsonl(rich.home / "items.removed.jsonl")
    assert [r.get("id") for r in removed] == [item_id]
    page.screenshot(path=str(shots / "items-cleaned.png"), full_page=True)
    page.context.close()


def test_audit_prune_applies_only_the_reviewed_finding(
    browser: Any, rich: Served, shots: Path
) -> None:
    scratch = rich.home / FINN / "memory/session/notes.md"
    assert scratch.exists()
    page = logged_in(browser, rich)
    page.goto(f"{rich.base}/a/finn/audit")
    findings = page.locator("#findings tr", has_text="duplicate_fact")
    assert findings.count() == 1 and "would forget fact" in findings.inner_text()
    assert page.locator("#findings tr", has_text="unused_scratch").count() == 1
    page.screenshot(path=str(shots / "audit-dry-run.png"), full_page=True)
    findings.locator("input[name=reviewed]").check()  # reviewed: only this one
    page.click("#apply")
    page.wait_for_selector("#applied")
    page.wait_for_load_state()  # the findings below it parsed too (count() does not wait)
    applied = page.locator("#applied").inner_text()
    assert "duplicate_fact" in applied and "forgot fact" in applied
    assert "unused_scratch" not in applied
    journal = _jsonl(rich.home / FINN / "facts.jsonl")
    forgotten = [r["key"] for r in journal if r["op"] == "forget"]
    assert [k for k in forgotten if k.startswith("test_cmd")] in (["test_cmd"], ["test_cmd2"])
    assert scratch.exists()  # not reviewed: untouched
    assert page.locator("#findings tr", has_text="duplicate_fact").count() == 0
    assert page.locator("#findings tr", has_text="unused_scratch").count() == 1
    page.screenshot(path=str(shots / "audit-applied.png"), full_page=True)
    page.context.close()


def test_prompt_page_shows_the_budget_cut(browser: Any, rich: Served, shots: Path) -> None:
    page = logged_in(browser, rich)
    page.goto(f"{rich.base}/a/finn/prompt")
    assert page.locator("#cuts tr.cut").count() == 0  # the default budget holds it all
    whole = len(page.locator("#prompt").inner_text())
    page.fill("input[name=budget_chars]", "400")
    page.click("form.filters button")
    page.wait_for_url("**budget_chars=400**")
    assert "cut to fit the budget" in page.locator("main").inner_text()
    cut = page.locator("#cuts tr.cut")
    assert cut.count() >= 1
    dropped = [int(r.locator("td").nth(2).inner_text()) for r in cut.all()]
    assert all(d > 0 for d in dropped)
    assert len(page.locator("#prompt").inner_text()) <= 400 < whole
    page.screenshot(path=str(shots / "prompt-cut.png"), full_page=True)
    page.context.close()


def test_timeline_shows_the_history_of_a_fact(browser: Any, rich: Served, shots: Path) -> None:
    page = logged_in(browser, rich)
    page.goto(f"{rich.base}/a/finn/timeline?kinds=facts&kinds=files")
    editor = page.locator("#timeline li.line.k-fact", has=page.locator(".title", has_text="editor"))
    said = [e.locator(".title").first.inner_text() for e in editor.all()]  # oldest first
    assert said == ["editor = vim", "editor = helix", "editor forgotten"]
    now = page.locator("#timeline li.line.k-file", has_text="NOW.md")
    assert now.count() == 1 and "NOW.md (current version)" in now.inner_text()
    page.screenshot(path=str(shots / "timeline-facts.png"), full_page=True)
    page.context.close()


def test_search_page_filters_by_tags_and_excluded_room(
    browser: Any, rich: Served, shots: Path
) -> None:
    page = logged_in(browser, rich)
    page.goto(f"{rich.base}/search")

    def titles() -> list[str]:
        return sorted(t.inner_text() for t in page.locator("#hits li.hit .title").all())

    page.fill("#search-form input[name=tags]", "auth, billing")
    page.click("#search-form button")
    page.wait_for_selector("#hits")
    assert titles() == [
        "Billing API is rate limited",
        "Every service hashes with bcrypt",
        "Use bcrypt for passwords",
    ]
    assert page.locator("#hits .tag", has_text="billing").count() == 1  # tags shown
    page.fill("#search-form input[name=exclude_room]", "room-1")
    page.click("#search-form button")
    page.wait_for_url("**exclude_room=room-1**")
    assert titles() == ["Billing API is rate limited"]
    assert page.locator("#search-form input[name=tags]").input_value() == "auth, billing"
    page.screenshot(path=str(shots / "search-tags.png"), full_page=True)
    page.fill("#search-form input[name=exclude_room]", "")
    page.select_option("#search-form select[name=tags_match]", "all")
    page.click("#search-form button")
    page.wait_for_url("**tags_match=all**")
    assert titles() == []  # no entry has both tags
    page.context.close()
