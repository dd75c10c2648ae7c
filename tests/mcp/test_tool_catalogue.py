"""The MCP catalogue assembled from one module per tool group (issue 21 item 4).

`build_tools` used to be one 315-line function of closures (and `build_episodic_tools`
another of 289): no tool could be imported or called without building them all. Now
each tool is a module-level function of a `Caller`, declared in its module's `tools`;
what an agent sees is unchanged: `tools_list.json` is every tool as `tools/list` showed
it before the split (name, description, input and output schema, annotations), with
its group, for three principals, in catalogue order.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

from memstrata import Store
from memstrata.mcp.tools import MODULES, build_tools, declarations, run
from memstrata.mcp.tools.files import memory_read, memory_write
from memstrata.mcp.tools.ledger import memory_publish
from memstrata.mcp.tools.skills import recall_memory
from memstrata.mcp.tools.spec import Caller

GOLDEN = Path(__file__).with_name("tools_list.json")
PRINCIPALS = {
    "admin-in-room": {"agent": "wilco", "room": "room-1"},
    "project": {"agent": "finn"},
    "owner": {},
}


def test_tools_list_is_what_it_was_before_the_split(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('[roles]\nadmin = ["wilco"]\nproject = ["finn"]\n')
    got = {}
    for label, kw in PRINCIPALS.items():
        with Store(home, **kw) as s:
            got[label] = [
                {**t.listing(), "group": t.group, "reveals": t.reveals} for t in build_tools(s)
            ]
    assert json.loads(json.dumps(got)) == json.loads(GOLDEN.read_text())


def test_every_tool_is_a_function_of_its_own_module(store: Store) -> None:
    names = []
    for module in MODULES:
        for spec in module.tools(store.config):
            assert spec.fn is getattr(module, spec.name), spec.name
            assert next(iter(inspect.signature(spec.fn).parameters)) == "caller", spec.name
            names.append(spec.name)
    assert len(names) == len(set(names)) == len(declarations(store.config)) == 39


def test_a_tool_is_called_on_its_own_without_a_catalogue(store: Store) -> None:
    me = Caller(store)
    wrote = memory_write(me, path="notes/plan.md", content="migrate billing to Postgres")
    assert wrote.data["path"] == "notes/plan.md"
    assert memory_read(me, path="notes/plan.md").text == "migrate billing to Postgres"
    published = memory_publish(
        me, "decision", "Billing moves to Postgres", ["db"], None, None, None, None, None, None
    )
    found = recall_memory(me, "billing postgres", 5, None, None, None, None, False)
    uids = [h["uid"] for h in found.data["results"]]
    assert f"ledger:{published.data['entry']['id']}" in uids
    assert any(u.startswith("md:agents/finn/memory/notes/plan.md") for u in uids)


def test_the_catalogue_calls_the_same_functions_through_run(store: Store) -> None:
    spec = next(s for s in build_tools(store) if s.name == "memory_write")
    run(spec, {"path": "a.md", "content": "one line"})
    assert memory_read(Caller(store), path="a.md").text == "one line"
