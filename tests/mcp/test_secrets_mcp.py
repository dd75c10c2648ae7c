"""Secrets never reach a model through MCP (issue 20, item 5): the official client over
stdio against `memstrata mcp`, on a store holding keys in every layer. Tool results and
resources show `[withheld: <kind>]`; only `get_fact`, asked for a key by name (seed 002:
"What is my API key?"), returns a value as stored."""

from __future__ import annotations

import json
import os
import shutil
import sys
import warnings
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
from mcp.client.stdio import StdioServerParameters

from mcp import Client
from memstrata import Store

EXE = shutil.which("memstrata", path=str(Path(sys.executable).parent)) or "memstrata"
ANTHROPIC = "sk-ant-api03-Xy7Qp2Lm9Vt4Rw7Ks1Jd6Hf3Gb5Nc0YaZx8Q-AA"
AWS = "AKIAZ7Q4M2XK9LD3PB6W"
OPENAI = "sk-proj-T3BlbkFJq9Zx8Qp2Lm9Vt4Rw7Ks1Jd6Hf3Gb5Nc0Ya"
GITHUB = "ghp_Zx8Qp2Lm9Vt4Rw7Ks1Jd6Hf3Gb5Nc0YaQ7Lm"
SECRETS = (ANTHROPIC, AWS, OPENAI, GITHUB)


def seed(home: Path) -> None:
    with Store(home, agent="finn") as s, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the warn policy's SecretWarning: stored as given
        mem = s.agent()
        mem.files.write("notes/keys.md", f"# Keys\nthe deploy key is {ANTHROPIC}\n")
        mem.files.write("CONTEXT.md", f"# Finn\nThe CI runner uses {GITHUB}\n")
        mem.log.append("TOOL_USE", f"exported AWS id {AWS} for the deploy")
        mem.facts.set("bot_key", OPENAI)
        mem.sessions.append("s-1", "user", f"use the deploy key {ANTHROPIC} please")


def params(home: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=EXE,
        args=["--home", str(home), "--agent", "finn", "mcp", "--tools", "all,claude"],
        env={k: os.environ[k] for k in ("PATH", "PYTHONPATH") if k in os.environ},
    )


def raw(result: Any) -> str:
    """Everything a tool result carries: its text and its structured content."""
    texts = [c.text for c in result.content if hasattr(c, "text")]
    return "\n".join(texts) + json.dumps(result.structured_content)


def test_tool_results_and_resources_withhold_secrets_over_stdio(home: Path) -> None:
    seed(home)

    async def main() -> dict[str, str]:
        seen: dict[str, str] = {}
        async with Client(params(home)) as c:
            recall = await c.call_tool("recall_memory", {"query": "deploy key", "n_results": 10})
            seen["recall_memory"] = raw(recall)
            uids = [h["uid"] for h in recall.structured_content["results"]]
            for uid in uids:
                seen[f"memory_get {uid}"] = raw(await c.call_tool("memory_get", {"uid": uid}))
            seen["memory_read"] = raw(await c.call_tool("memory_read", {"path": "notes/keys.md"}))
            seen["memory_read CONTEXT"] = raw(
                await c.call_tool("memory_read", {"path": "CONTEXT.md"})
            )
            seen["memory view"] = raw(
                await c.call_tool("memory", {"command": "view", "path": "/memories/notes/keys.md"})
            )
            seen["session_read"] = raw(await c.call_tool("session_read", {"session_id": "s-1"}))
            for uri in ("memory://context", "memory://prompt-context"):
                res = await c.read_resource(uri)
                seen[uri] = "".join(getattr(x, "text", "") for x in res.contents)
            fact = await c.call_tool("get_fact", {"key": "bot_key"})
            seen["get_fact"] = raw(fact)
        return seen

    seen = anyio.run(main)
    asked = {k: v for k, v in seen.items() if k != "get_fact"}
    for name, text in asked.items():
        for secret in SECRETS:
            assert secret not in text, f"{name} returned {secret}"
    assert "[withheld: anthropic-key]" in seen["recall_memory"]
    assert "[withheld: anthropic-key]" in seen["memory_read"]
    assert "[withheld: github-token]" in seen["memory://context"]
    assert "[withheld: anthropic-key]" in seen["memory view"]
    assert "[withheld: anthropic-key]" in seen["session_read"]
    assert any("[withheld: aws-access-key]" in v for k, v in seen.items() if "memory_get" in k)
    assert "the deploy key is" in seen["memory_read"]  # the rest of the file is there
    assert OPENAI in seen["get_fact"]  # asked for by its key: seed 002's explicit fetch


def test_edits_made_from_a_withheld_view_keep_the_secrets(home: Path) -> None:
    """An agent sees `[withheld: <kind>]`; what it writes back from that view keeps the
    secret as stored (`policy.secrets.restore_withheld`), never the marker in its place."""
    seed(home)

    async def main() -> None:
        async with Client(params(home)) as c:
            seen = (await c.call_tool("memory_read", {"path": "notes/keys.md"})).structured_content
            text = seen["content"]
            assert "[withheld: anthropic-key]" in text
            r = await c.call_tool(
                "memory_write",
                {"path": "notes/keys.md", "content": text + "rotate it in May\n"},
            )
            assert not r.is_error, r.content
            r = await c.call_tool(
                "memory_replace",
                {
                    "path": "notes/keys.md",
                    "old_str": "deploy key is [withheld: anthropic-key]",
                    "new_str": "prod deploy key is [withheld: anthropic-key]",
                },
            )
            assert not r.is_error, r.content
            r = await c.call_tool(
                "memory",
                {
                    "command": "str_replace",
                    "path": "/memories/CONTEXT.md",
                    "old_str": "uses [withheld: github-token]",
                    "new_str": "uses [withheld: github-token] (read-only)",
                },
            )
            assert not r.is_error, r.content

    anyio.run(main)
    notes = (home / "agents/finn/memory/notes/keys.md").read_text()
    assert notes == f"# Keys\nthe prod deploy key is {ANTHROPIC}\nrotate it in May\n"
    context = (home / "agents/finn/memory/CONTEXT.md").read_text()
    assert f"uses {GITHUB} (read-only)" in context and "withheld" not in context


def test_a_password_said_in_a_prompt_is_withheld_from_recall(home: Path) -> None:
    """firmware-larkspur (scen19c): the user typed the broker's password in prose ("user
    larkspur, password Kestrel-Barn-4471."); the prompt hook logged it, and recall_memory
    handed the whole prompt, password included, to the agent."""
    from memstrata.mcp.server import build_server
    from memstrata.operations.hooks import user_prompt_submit

    prompt = (
        "Tomas gave me the login for the barn MQTT broker: user larkspur, password "
        "Kestrel-Barn-4471. Keep it in gateway/.env, never in the repo."
    )
    with Store(home, agent="me") as s, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the warn policy's SecretWarning: stored as given
        user_prompt_submit(s, "me", {"prompt": prompt, "session_id": "s-1"})
        ask = "where's the broker login kept?"  # a later session's question (never its own hit)
        user_prompt_submit(s, "me", {"prompt": ask, "session_id": "s-2"})

    async def main() -> str:
        with Store(home, agent="me") as s:
            async with Client(build_server(s)) as c:
                return raw(await c.call_tool("recall_memory", {"query": ask}))

    shown = anyio.run(main)
    assert "gateway/.env" in shown  # the prompt is recalled
    assert "Kestrel-Barn-4471" not in shown and "[withheld: credential]" in shown


def test_recall_for_a_withheld_secret_finds_nothing_over_stdio(home: Path) -> None:
    """Issue 19 (stop 35's note): the index held a secret's raw text, so `recall_memory` for
    a guessed password found its record (shown withheld): a search confirmed the guess."""
    guesses = ("Kingfisher#2207", "Tern-Lantern-9", "hunter2x")
    with Store(home, agent="finn") as s, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem = s.agent()
        login = {"username": "priya", "password": guesses[0]}
        mem.sessions.append("s-1", "tool_call", "", id="t1", name="portal_login", input=login)
        mem.sessions.append("s-1", "user", f"the portal password is {guesses[1]} for now")
        mem.facts.set("db_password", guesses[2])

    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(params(home)) as c:
            for g in guesses:
                for layers in (None, ["session"], ["fact", "session"]):
                    args: dict[str, Any] = {"query": g, "explain": True, "n_results": 10}
                    if layers:
                        args["layers"] = layers
                    r = await c.call_tool("recall_memory", args)
                    out[f"{g} {layers}"] = r.structured_content["results"]
            r = await c.call_tool("recall_memory", {"query": "portal login", "layers": ["session"]})
            out["portal"] = r.structured_content["results"]
        return out

    seen = anyio.run(main)
    assert {h["kind"] for h in seen.pop("portal")} >= {"tool_call", "user"}
    assert seen == {k: [] for k in seen}
