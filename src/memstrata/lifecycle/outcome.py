"""What a coding agent's turn leaves in memory through the hooks: NOW belongs to the agent.

AgentOS's engine sets NOW.md to "task complete" after every execution, and `AgentLoop`
still does: there the loop runs the turn and owns NOW. In a coding agent the agent owns
NOW (it calls `update_status`, or writes NOW.md) and the hooks only watch, so they follow
one rule: **a hook never overwrites a NOW the agent set**, in this turn or an earlier one.
A hook writes NOW.md only while the agent owns none: no NOW yet, the default one, or one a
hook wrote (the recovery status, or a NOW with the "Last turn" section below).

    UserPromptSubmit  `turn_started`: the session's row in sessions.json records when the
                      turn started and NOW.md's sha256 then (a NOW changed since is the
                      agent's, even one that kept a hook's sections)
    PostToolUse(Failure)  a failed tool leaves its ERROR entry; the recovery steps go to
                      NOW.md (self-annealing) only when the agent owns no NOW
    Stop              `record_outcome`: a NOW the agent set stays as the agent left it.
                      Otherwise the outcome is recorded: the objective is the user's goal
                      (`statements.goal_of` of the prompt; a prompt that sets none,
                      "continue", a decision, a question, keeps the goal before it), the
                      next steps are the open tasks, the blockers the blocked tasks, and a
                      "## Last turn" section says what the turn answered, which tasks remain
                      open and how many of its tool failures nothing resolved. Never "Task
                      complete": a hook cannot know that work is complete, and the tasks
                      may say it is not.

Also here, for the Stop hook: `record_statements`, the decisions, constraints and
preferences the turn's prompts and final response clearly state, recorded as first-class
records (`layers.decisions`) unless the agent recorded that kind itself in the turn.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any

from memstrata.layers.hot import NowState, parse_now, render_now
from memstrata.lifecycle.activity import one_line
from memstrata.lifecycle.anneal import INTERRUPTED, RECOVERY_STATUS
from memstrata.lifecycle.resolved import open_errors
from memstrata.lifecycle.statements import goal_of, statements
from memstrata.model import iso, now_ts

if TYPE_CHECKING:
    from memstrata.model import LedgerEntry, Task
    from memstrata.store.view import Store

LAST_TURN = "Last turn"  # the section only a hook's NOW carries
PLACEHOLDERS = frozenset({"", "(none)", "no active objective yet"})
COMPLETE_PREFIX = re.compile(r"^task complete:?\s*", re.I)
MAX_STEPS = 5


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def hook_written(state: NowState) -> bool:
    """True for a NOW a hook wrote (the recovery status, or a recorded outcome)."""
    return state.objective == RECOVERY_STATUS or LAST_TURN.lower() in state.extra


def _now_text(store: Store, agent: str) -> str:
    now = store.agent(agent).now
    return now.read() if now.exists() else ""


def turn_started(store: Store, agent: str, session: str) -> None:
    """Record the start of a turn (the UserPromptSubmit hook) in sessions.json."""
    text = _now_text(store, agent)
    store.agent(agent).sessions._update_index(
        session, turn={"started": iso(now_ts()), "now_sha": _sha(text)}
    )


def _turn(store: Store, agent: str, session: str) -> dict[str, Any] | None:
    row = store.agent(agent).sessions._read_index().find(session) or {}
    turn = row.get("turn")
    return turn if isinstance(turn, dict) and isinstance(turn.get("now_sha"), str) else None


def agent_set_now(store: Store, agent: str, session: str) -> bool | None:
    """Whether the agent set NOW.md during the current turn of `session` (None: no turn
    start was recorded, so it cannot be told)."""
    turn = _turn(store, agent, session)
    if turn is None:
        return None
    text = _now_text(store, agent)
    if _sha(text) == turn["now_sha"]:
        return False
    return not hook_written(parse_now(text))


def previous_goal(state: NowState | None) -> str | None:
    """The goal a NOW states (a recovery NOW: the interrupted objective; an `AgentLoop`
    "Task complete: X": X)."""
    if state is None:
        return None
    objective = state.objective.strip()
    if objective == RECOVERY_STATUS:
        for b in state.blockers:
            if b.startswith(INTERRUPTED):
                return b[len(INTERRUPTED) :].strip() or None
        return None
    objective = COMPLETE_PREFIX.sub("", objective).strip()
    return None if objective.lower() in PLACEHOLDERS else objective


def _task_step(t: Task) -> str:
    first = t.description.splitlines()[0] if t.description else ""
    return f"{t.id} [{t.status}] {one_line(first, 120)}"


def agent_owns_now(store: Store, agent: str, session: str | None) -> bool:
    """True when NOW.md is the agent's: set during this turn of `session`, or a NOW no hook
    wrote (not absent, not the default, not `AgentLoop`'s "Task complete: ...")."""
    if session is not None and agent_set_now(store, agent, session):
        return True
    mem = store.agent(agent)
    prior = mem.now.state() if mem.now.exists() else None
    return (
        prior is not None
        and not hook_written(prior)
        and previous_goal(prior) is not None
        and not COMPLETE_PREFIX.match(prior.objective)
    )


def record_outcome(store: Store, agent: str, session: str, prompt: str, answer: str) -> str:
    """The Stop hook's NOW (see module docstring); returns what it did, for the hook's
    JSON output: "kept" (the agent's NOW stands) or "recorded"."""
    if agent_owns_now(store, agent, session):
        return "kept: NOW.md is the agent's"
    write_outcome(store, agent, session, prompt, answer)
    return "recorded"


def open_work(store: Store, agent: str) -> bool:
    """Whether any of the agent's tasks is pending, in progress or blocked."""
    return any(
        t.status in ("pending", "in_progress", "blocked") for t in store.agent(agent).tasks.list()
    )


def write_outcome(store: Store, agent: str, session: str | None, prompt: str, answer: str) -> None:
    """NOW.md as a turn's outcome: the user's goal, the open tasks as next steps, the
    blocked ones as blockers, and a "Last turn" section; never "Task complete" (the Stop
    hook's NOW, and `AgentLoop`'s at a turn's end while tasks are open)."""
    mem = store.agent(agent)
    prior = mem.now.state() if mem.now.exists() else None
    earlier = previous_goal(prior)
    goal = goal_of(prompt, earlier)  # "ok, let's do that": what NOW said "that" was
    objective = goal or earlier or "(none)"
    tasks = mem.tasks.list()
    live = [t for t in tasks if t.status == "in_progress"] + [
        t for t in tasks if t.status == "pending"
    ]
    blocked = [t for t in tasks if t.status == "blocked"]
    steps = [_task_step(t) for t in live[:MAX_STEPS]]
    blockers = [
        _task_step(t) + (f" (blocked by {', '.join(t.blocked_by)})" if t.blocked_by else "")
        for t in blocked[:MAX_STEPS]
    ]
    ours = [
        e for e in mem.log.tail(200) if session and (e.metadata or {}).get("session") == session
    ]
    failures = len(open_errors(ours))  # listed once, in the context's open errors
    remaining = [t.id for t in [*live, *blocked]]
    last = f"{iso(now_ts())[:16].replace('T', ' ')} answered: {one_line(answer, 240)}"
    if remaining:
        last += f" Open tasks remain: {', '.join(remaining[:8])}."
    if failures:
        last += f" {failures} tool failure(s) of this session left unresolved (LOG.md)."
    state = NowState(
        objective,
        tuple(steps),
        tuple(blockers),
        prior.phase if prior is not None else None,
        extra={LAST_TURN: last},
    )
    mem.now.write(render_now(state))


HOOK_REF = "stated in session"  # the `ref` of a record the hooks transcribed


def record_statements(
    store: Store, agent: str, session: str, prompts: list[str], answer: str
) -> list[LedgerEntry]:
    """Record the decisions, constraints and preferences the turn's prompts and its final
    response clearly state (`statements`), at the end of the turn (the Stop hook).

    The agent's own records come first: a kind it recorded itself during this turn
    (`record_decision`, the CLI) is not transcribed again from the same turn, since the
    two would say one thing twice and, once the agent replaced its record, the copy would
    still stand. A statement already in force in other words is skipped too; one naming
    what it replaces ("instead of WeasyPrint") supersedes the one record in force of its
    kind that names it.
    """
    decisions = store.agent(agent).decisions
    turn = _turn(store, agent, session)
    since = str(turn.get("started") or "") if turn is not None else ""
    own = {
        e.kind
        for e, _ in decisions.history()
        if since and e.ts >= since and not (e.ref or "").startswith(HOOK_REF)
    }
    said = [(p, "user") for p in prompts] + [(answer, "assistant")]
    out = []
    for text, speaker in said:
        for st in statements(text, speaker):
            if st.kind in own or decisions.similar(st.text, st.kind) is not None:
                continue
            target = None
            # A "from now on" rule may replace what was a decision ("..., not top-1 accuracy").
            kinds = ("decision", "constraint") if st.kind == "constraint" else (st.kind,)
            for word in st.replaces:
                pattern = re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])", re.I)
                named = [e for e in decisions.in_force(kinds) if pattern.search(e.summary)]
                if len(named) == 1:
                    target = named[0].id
                    break
            ref = f"{HOOK_REF} {session}"
            out.append(decisions.record(st.text, st.kind, replaces=target, ref=ref))
    return out


def turn_prompts(store: Store, agent: str, session: str, fallback: str) -> list[str]:
    """The prompts of the turn that just ended (logged by the UserPromptSubmit hook since
    the turn started), else `fallback` (the transcript's last prompt)."""
    turn = _turn(store, agent, session)
    since = str(turn.get("started") or "") if turn is not None else ""
    if not since:
        return [fallback] if fallback else []
    logged = [
        e.content
        for e in store.agent(agent).log.tail(200)
        if e.entry_type == "USER_FEEDBACK"
        and (e.metadata or {}).get("session") == session
        and e.ts >= since
    ]
    return logged or ([fallback] if fallback else [])
