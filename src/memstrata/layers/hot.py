"""Whole-file Markdown layers every prompt starts from.

* `Now`: hot state, `NOW.md` also known as `NOTES.md`:
  the current objective and next steps, overwritten when the objective changes;
  the task's blockers and phase boundary live in the same file.
* `Context`: `CONTEXT.md` also known as `MEMORY.md`: the
  long-term memory auto-loaded into the system prompt, capped at
  `memory.max_chars`.
* `Identity`: `AGENT.md` or `IDENTITY.md`, who the
  agent is: the first section of every prompt.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from memstrata import limits
from memstrata.errors import EntryTooLarge, MalformedInput
from memstrata.layers.base import Acting, Layer, check_count, check_text
from memstrata.layers.mdparse import markdown_spec
from memstrata.model import iso, now_ts
from memstrata.policy.secrets import restore_withheld
from memstrata.values import field, value_type

if TYPE_CHECKING:
    from memstrata.index.reconcile import SourceSpec

MAX_STEP_CHARS = limits.NOW_STEP_CHARS


class MarkdownLayer(Layer):
    """A single Markdown file owned by one agent."""

    def __init__(self, acting: Acting, owner: str, path: Path) -> None:
        super().__init__(acting, owner)
        self.path = path

    def _spec(self) -> SourceSpec:
        return markdown_spec(self.engine, self.path, self.layer, owner=self.owner)

    def read(self) -> str:
        """The file's text ('' if it does not exist yet)."""
        self._check("read")
        found = self.engine.read(self.path)
        text = found.text if found is not None else ""
        self._read_event(self.path, len(text))
        return text

    def write(self, text: str, *, expected_sha: str | None = None) -> None:
        self._check("write")
        check_text(text, f"{self.path.name} content", limits.MEMORY_FILE_BYTES, allow_empty=True)
        if "[withheld: " in text:  # edited from a withheld view: keep the secrets it hid
            found = self.engine.read(self.path)
            text = restore_withheld(text, found.text if found is not None else "")
        text = self._screen(text, self.path.name)
        old = self._stat(self.path)
        before = old.size if old is not None else 0
        self.engine.rewrite(self._spec(), text, expected_sha=expected_sha, by=self.gate.principal)
        self._write_event(self.path, len(text.encode("utf-8")) - before)

    def exists(self) -> bool:
        self._check("read")
        return self._stat(self.path) is not None


@value_type(frozen=True)
class NowState:
    """NOW.md's content: the objective, next steps, blockers, phase and other sections."""

    objective: str
    next_steps: tuple[str, ...] = ()
    blockers: tuple[str, ...] = ()
    phase: str | None = None
    updated: str | None = None
    extra: dict[str, str] = field(default_factory=dict)


_SECTION = re.compile(r"^##\s+(.+?)\s*$")
_ITEM = re.compile(r"^\s*[-*]\s+(?:\[[ xX]\]\s+)?(.*\S)\s*$")


def render_now(state: NowState) -> str:
    parts = ["# NOW", "", "## Objective", state.objective.strip() or "(none)", ""]
    if state.phase:
        parts += ["## Phase", state.phase.strip(), ""]
    parts += ["## Next steps"]
    parts += [f"- [ ] {s.strip()}" for s in state.next_steps] or ["- (none)"]
    parts.append("")
    if state.blockers:
        parts += ["## Blockers"] + [f"- {b.strip()}" for b in state.blockers] + [""]
    for title, body in state.extra.items():  # further sections, e.g. a hook's "Last turn"
        if body.strip():
            parts += [f"## {title}", body.strip(), ""]
    parts.append(f"_Updated: {state.updated or iso(now_ts())}_")
    return "\n".join(parts) + "\n"


def parse_now(text: str) -> NowState:
    sections: dict[str, list[str]] = {}
    current = None
    updated = None
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            current = m.group(1).strip().lower()
            sections[current] = []
            continue
        u = re.match(r"^_Updated:\s*(.+?)_\s*$", line)
        if u:
            updated = u.group(1)
            continue
        if current is not None:
            sections[current].append(line)

    def items(name: str) -> tuple[str, ...]:
        out = []
        for line in sections.get(name, []):
            m = _ITEM.match(line)
            if m and m.group(1) != "(none)":
                out.append(m.group(1))
        return tuple(out)

    objective = "\n".join(sections.get("objective", [])).strip()
    if not sections and text.strip():
        objective = text.strip()  # a hand-written NOW.md / NOTES.md without sections
    phase = "\n".join(sections.get("phase", [])).strip() or None
    known = {"objective", "phase", "next steps", "blockers"}
    extra = {k: "\n".join(v).strip() for k, v in sections.items() if k not in known}
    return NowState(objective, items("next steps"), items("blockers"), phase, updated, extra)


class Now(MarkdownLayer):
    """Hot memory: what the agent is doing right now."""

    layer = "now"

    def __init__(self, acting: Acting, owner: str) -> None:
        super().__init__(acting, owner, acting.engine.layout.now_file(owner))

    def update(
        self,
        status: str,
        next_steps: list[str] | tuple[str, ...] | None = None,
        *,
        blockers: list[str] | tuple[str, ...] | None = None,
        phase: str | None = None,
    ) -> NowState:
        """Overwrite NOW.md with a new objective and next steps (`update_now`)."""
        check_text(status, "status", limits.NOW_STATUS_BYTES)
        steps = _check_list(next_steps, "next_steps")
        block = _check_list(blockers, "blockers")
        if phase is not None:
            check_text(phase, "phase", limits.NOW_PHASE_CHARS)
        state = NowState(status, steps, block, phase, iso(now_ts()))
        self.write(render_now(state))
        return state

    def state(self) -> NowState:
        return parse_now(self.read())


def _check_list(values: list[str] | tuple[str, ...] | None, what: str) -> tuple[str, ...]:
    if values is None:
        return ()
    if isinstance(values, str) or not isinstance(values, list | tuple):
        raise MalformedInput(f"{what} must be a list of strings")
    check_count(values, what, limits.NOW_STEPS)
    for v in values:
        check_text(v, f"each of {what}", MAX_STEP_CHARS)
        if "\n" in v.strip():
            raise MalformedInput(f"each of {what} must be a single line")
    return tuple(v.strip() for v in values)


class Context(MarkdownLayer):
    """Long-term memory auto-loaded into every prompt (CONTEXT.md / MEMORY.md)."""

    layer = "context"

    def __init__(self, acting: Acting, owner: str) -> None:
        super().__init__(acting, owner, acting.engine.layout.context_file(owner))

    def write(self, text: str, *, expected_sha: str | None = None) -> None:
        limit = self.engine.config.max_memory_chars
        if len(text) > limit:
            raise EntryTooLarge(
                f"{self.path.name} would be {len(text)} characters; the limit is {limit} "
                "(memory.max_chars): move detail into other memory files"
            )
        super().write(text, expected_sha=expected_sha)


class Identity(MarkdownLayer):
    """AGENT.md (or IDENTITY.md): identity, rules and capabilities."""

    layer = "identity"

    def __init__(self, acting: Acting, owner: str) -> None:
        super().__init__(acting, owner, acting.engine.layout.identity(owner))
