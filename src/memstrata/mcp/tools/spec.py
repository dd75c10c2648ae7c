"""What a tool is: a plain function, and what an agent needs to call it right first time.

A `ToolSpec` declares one tool: its function, a description that says what is
searched or changed and what comes back, every parameter described with its
allowed values and default (`mcp.schema.Param`), the output schema of its
structured result (`mcp.shapes`), and its annotations (read-only, destructive,
idempotent). Each tool module (`mcp.tools.files`, `.ledger`, ...) defines its
tools as module-level functions of a `Caller` and the tool's arguments, and
declares them in `tools(config)`; the catalogue (`mcp.tools.build_tools`) binds
them to the caller of a server.

    from memstrata.mcp.tools.files import memory_read
    memory_read(Caller(store), path="notes.md")      # one tool, without a server
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memstrata.mcp.schema import REQUIRED, Param, input_schema
from memstrata.mcp.shapes import Reply
from memstrata.values import field, replace, value_type

if TYPE_CHECKING:
    from memstrata.layers.agent import AgentMemory
    from memstrata.store.view import Store


@value_type(frozen=True)
class ToolSpec:
    name: str
    fn: Callable[..., Reply]
    description: str
    params: tuple[Param, ...] = ()
    output: dict[str, Any] | None = None  # the outputSchema of `Reply.data`
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = False
    group: str = "core"  # one of GROUPS (`--tools` selects by group or by name)
    reveals: bool = False  # returns a value as stored (get_fact), see `run`
    extra: dict[str, Any] = field(default_factory=dict)

    def input_schema(self) -> dict[str, Any]:
        return input_schema(self.params)

    def listing(self) -> dict[str, Any]:
        """The tool as `tools/list` shows it (MCP field names)."""
        d: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema(),
        }
        if self.output is not None:
            d["outputSchema"] = self.output
        d["annotations"] = self.annotations()
        return d

    def annotations(self) -> dict[str, bool]:
        """The hints that differ from MCP's defaults (readOnly false, destructive true,
        idempotent false, openWorld true); the write hints only matter for writers."""
        if self.read_only:
            return {"readOnlyHint": True, "openWorldHint": False}
        out = {"destructiveHint": self.destructive, "openWorldHint": False}
        if self.idempotent:
            out["idempotentHint"] = True
        return out

    def bound(self, caller: Caller) -> ToolSpec:
        """This tool with its function bound to `caller` (what a server lists and calls)."""
        return replace(self, fn=partial(self.fn, caller))


class Caller:
    """Who calls the tools: a principal's store, and its agent, looked up when a tool
    first needs it, so a store opened without an agent (the owner at the terminal)
    still serves the ledger tools."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @cached_property
    def agent(self) -> AgentMemory:
        return self.store.agent()

    def where(self, source: str) -> str:
        """A hit's source as a store-relative path."""
        return self.store.rel(Path(source))


def p(name: str, typ: str, description: str, default: Any = None, **kw: Any) -> Param:
    """An optional parameter (default `default`)."""
    return Param(name, typ, description, default, **kw)


def req(name: str, typ: str, description: str, **kw: Any) -> Param:
    """A required parameter."""
    return Param(name, typ, description, REQUIRED, **kw)
