"""Issue 19, an MCP-only agent's open errors: its prompts never reach LOG.md, so the
"before the user's next prompt" bound on a note that says it fixed something never applied,
and any later note sharing one word with a failure closed it, days later. The failure's
session bounds the note now (`lifecycle.resolved`); in it, one shared name is still enough.
In process: the server as `memstrata mcp` builds it, a client, a clock the test sets."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

mcp = pytest.importorskip("mcp")
from mcp import Client  # noqa: E402
from memstrata.mcp.server import build_server  # noqa: E402
from memstrata.store.view import Store  # noqa: E402

DAY = 86_400.0
T0 = 1_800_000_000.0
OPEN = "## Open errors (nothing later resolved them)"


async def _log(c: Client, entry_type: str, content: str) -> None:
    r = await c.call_tool("log_activity", {"entry_type": entry_type, "content": content})
    assert not r.is_error, r.content


def test_a_note_in_a_later_session_sharing_one_word_leaves_an_error_open(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [T0]
    monkeypatch.setattr(time, "time", lambda: clock[0])

    async def main() -> str:
        with Store(home, agent="infra") as store:
            async with Client(build_server(store)) as c:
                await _log(c, "ERROR", "The nightly export to the billing bucket timed out")
                await _log(c, "ERROR", "The deploy role cannot use kms:Decrypt on the SSM key")
                clock[0] += 600
                await _log(c, "THOUGHT", "Fixed the deploy: granted kms:Decrypt to the role")
                clock[0] += 2 * DAY  # another day: another session of an agent naming none
                await _log(c, "THOUGHT", "Fixed the export button on the invoices page")
                context = await c.read_resource("memory://prompt-context")
                return str(context.contents[0].text)  # type: ignore[union-attr]

    text = anyio.run(main)
    errors = text.split(OPEN + "\n", 1)[1].split("\n## ", 1)[0] if OPEN in text else ""
    assert "nightly export" in errors, text
    assert "kms:Decrypt" not in errors  # noted fixed in its own session: closed


def _open_section(text: str) -> str:
    return text.split(OPEN + "\n", 1)[1].split("\n## ", 1)[0] if OPEN in text else ""


def test_a_later_success_of_the_failed_tool_closes_its_error_in_that_session_or_the_next(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """events-heronsgate: an MCP agent logs its call (`tool(...) -> 401`, no failure word)
    and the error's text as an ERROR; after the user reconnects, the same tool succeeds.
    The ERROR is that call's failure, and the later success closes it, in the failure's
    session or the next; three sessions later a success of the tool says nothing of it."""
    clock = [T0]
    monkeypatch.setattr(time, "time", lambda: clock[0])

    async def main() -> str:
        with Store(home, agent="shop") as store:
            async with Client(build_server(store)) as c:
                await _log(c, "TOOL_USE", "stripe_api(create product) -> 401")
                await _log(c, "ERROR", "401 Unauthorized: the API key was rolled")
                clock[0] += 300
                await _log(c, "TOOL_USE", "stripe_api(create product) -> prod_93k1")
                await _log(c, "TOOL_USE", "crm_sync(contacts) -> 503")
                await _log(c, "ERROR", "503 Service Unavailable: maintenance window")
                clock[0] += DAY
                await _log(c, "TOOL_USE", "crm_sync(contacts) -> 412 synced")  # next session
                await _log(c, "TOOL_USE", "mailer_send(newsletter) -> 550")
                await _log(c, "ERROR", "550 Mailbox unavailable: list address bounced")
                for _ in range(3):  # three sessions later: no longer this failure's fix
                    clock[0] += DAY
                    await _log(c, "THOUGHT", "Drafted the spring newsletter copy")
                await _log(c, "TOOL_USE", "mailer_send(receipt) -> queued")
                await _log(c, "TOOL_USE", "label_print(order 88) -> 409")
                await _log(c, "ERROR", "409 Conflict: printer busy")
                await _log(c, "TOOL_USE", "label_print(order 88) -> 409")  # failed again
                await _log(c, "ERROR", "409 Conflict: printer busy")
                context = await c.read_resource("memory://prompt-context")
                return str(context.contents[0].text)  # type: ignore[union-attr]

    errors = _open_section(anyio.run(main))
    assert "API key was rolled" not in errors and "maintenance window" not in errors, errors
    assert "list address bounced" in errors  # a success four sessions later is no fix
    assert "printer busy" in errors  # a retry that failed again closes nothing


def test_a_note_that_did_the_work_another_way_closes_the_error(home: Path) -> None:
    """events-heronsgate s08: the group address bounced, and the agent noted it "sent the
    Sunday call-out through the Mailchimp volunteer list instead"."""

    async def main() -> str:
        with Store(home, agent="shop") as store:
            async with Client(build_server(store)) as c:
                await _log(
                    c, "ERROR", "550 Recipient rejected: the wholesale group accepts no posts"
                )
                await _log(c, "ERROR", "Timeout fetching the supplier price feed")
                note = (
                    "The wholesale group refuses posts; sent the order through the portal instead"
                )
                await _log(c, "THOUGHT", note)
                await _log(c, "THOUGHT", "The price feed was slow instead of down, I think")
                context = await c.read_resource("memory://prompt-context")
                return str(context.contents[0].text)  # type: ignore[union-attr]

    errors = _open_section(anyio.run(main))
    assert "wholesale group" not in errors, errors
    assert "supplier price feed" in errors  # "instead" said of no work done


def test_a_retry_that_is_the_last_entry_of_the_log_closes_the_error(home: Path) -> None:
    """The success that closes the failure may be the LOG's last entry (the first run of
    events-heronsgate on the branch: "could not be read ... IndexError")."""

    async def main() -> str:
        with Store(home, agent="shop") as store:
            async with Client(build_server(store)) as c:
                await _log(c, "TOOL_USE", "stock_export(warehouse) -> 429")
                await _log(c, "ERROR", "429 Too Many Requests: retry after 30 s")
                await _log(c, "TOOL_USE", "stock_export(warehouse) -> 1,204 rows")
                context = await c.read_resource("memory://prompt-context")
                return str(context.contents[0].text)  # type: ignore[union-attr]

    text = anyio.run(main)
    assert "could not be read" not in text, text
    assert "Too Many Requests" in text and "Too Many Requests" not in _open_section(text), text
