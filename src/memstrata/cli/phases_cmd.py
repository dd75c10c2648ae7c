"""Phase events of a task and the skill hand-off on the command line.

    memstrata phase start TASK PHASE [--note TEXT] [--fact JSON ...]
    memstrata phase end TASK PHASE REPORT [--next-phase P] [--blocker B ...] [--step S ...]
    memstrata phase complete TASK [--fact JSON ...]
    memstrata handoff SKILL ACTION [--brief TEXT] [--project-context TEXT] [--snippet TEXT]

`--fact` is a candidate durable fact as JSON, `{"text": ..., "citations": [...],
"category": ...}`: it is promoted through Checklist C or returned refused, with why.
`handoff` prints the request envelope an admin sends to a skill agent
(`envelope.hand_off`); the skill reads it with `envelope.SkillContext`.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    ph = sub.add_parser("phase", help="phase events of a task: start, end, task complete")
    psub = ph.add_subparsers(dest="phase_action", metavar="EVENT", required=True)
    st = psub.add_parser(
        "start",
        help="read the task folder, write a session note, promote durable facts (Checklist C)",
    )
    st.add_argument("task", help="task slug")
    st.add_argument("phase", help="the phase, e.g. 2")
    st.add_argument("--note", default="", help="the session note ('-' reads stdin)")
    _facts(st)
    st.set_defaults(func=run_start)
    en = psub.add_parser("end", help="write the completion report; NOTES.md to the boundary")
    en.add_argument("task", help="task slug")
    en.add_argument("phase", help="the phase that ended")
    en.add_argument("report", help="the phase completion report ('-' reads stdin)")
    en.add_argument("--next-phase", help="the phase that follows")
    en.add_argument(
        "--blocker",
        dest="blockers",
        action="append",
        default=[],
        help="an unresolved blocker (repeatable)",
    )
    en.add_argument(
        "--step", dest="steps", action="append", default=[], help="a next step (repeatable)"
    )
    en.set_defaults(func=run_end)
    co = psub.add_parser("complete", help="task complete: durable facts to repo memory")
    co.add_argument("task", help="task slug")
    _facts(co)
    co.set_defaults(func=run_complete)

    ho = sub.add_parser(
        "handoff",
        help="the context an admin hands a skill agent, as the request envelope (JSON)",
    )
    ho.add_argument("skill", help="the skill agent ([roles] skill)")
    ho.add_argument("action", help="what the skill is asked to do, e.g. analyze")
    ho.add_argument("--brief", help="what the task is about (picks the memory snippet)")
    ho.add_argument("--project-context", default="", help="the project context to pass")
    ho.add_argument("--snippet", help="the memory snippet as is (default: from your memory)")
    ho.add_argument("--budget", type=int, default=4000, help="snippet size in characters")
    ho.set_defaults(func=run_handoff)


def _facts(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--fact",
        dest="facts",
        action="append",
        default=[],
        help='a candidate durable fact: {"text": ..., "citations": [...]} (repeatable)',
    )


def _parsed_facts(raw: list[str]) -> list[dict[str, Any]]:
    from memstrata.cli.common import json_object

    return [json_object(f, "--fact") or {} for f in raw]


def _verdicts(refused: Any) -> list[dict[str, Any]]:
    return [v.to_dict() for v in refused]


def run_start(args: argparse.Namespace) -> int:
    from memstrata.cli.common import open_store, text_arg
    from memstrata.cli.main import emit
    from memstrata.lifecycle.phases import phase_start

    facts = _parsed_facts(args.facts)
    with open_store(args) as store:
        got = phase_start(
            store,
            store.agent().name,
            args.task,
            args.phase,
            note=text_arg(args.note) if args.note else "",
            facts=facts,
        )
    data = {
        "task": got.task,
        "phase": got.phase,
        "task_files": list(got.task_files),
        "verified": [v for _, v in got.verified],
        "session_note": got.session_note,
        "promoted": [f.key for f in got.promoted],
        "refused": _verdicts(got.refused),
    }
    lines = [
        f"phase {got.phase} of {got.task}: session note {got.session_note}",
        *(f"task file: {f}" for f in got.task_files),
        *(f"promoted {f.key}" for f in got.promoted),
        *(f"refused: {v.text} ({v.failed.why if v.failed else ''})" for v in got.refused),
    ]
    emit(args, data, "\n".join(lines))
    return 0


def run_end(args: argparse.Namespace) -> int:
    from memstrata.cli.common import open_store, text_arg
    from memstrata.cli.main import emit
    from memstrata.lifecycle.phases import phase_end

    with open_store(args) as store:
        where = phase_end(
            store,
            store.agent().name,
            args.task,
            args.phase,
            text_arg(args.report),
            next_phase=args.next_phase,
            blockers=args.blockers,
            next_steps=args.steps,
        )
    emit(
        args,
        {"task": args.task, "phase": args.phase, "report": where},
        f"phase {args.phase} of {args.task} ended; report at {where}",
    )
    return 0


def run_complete(args: argparse.Namespace) -> int:
    from memstrata.cli.common import open_store
    from memstrata.cli.main import emit
    from memstrata.lifecycle.phases import task_complete

    facts = _parsed_facts(args.facts)
    with open_store(args) as store:
        promoted, refused = task_complete(store, store.agent().name, args.task, facts)
    emit(
        args,
        {"task": args.task, "promoted": [f.key for f in promoted], "refused": _verdicts(refused)},
        f"task {args.task} complete: {len(promoted)} fact(s) promoted, {len(refused)} refused",
    )
    return 0


def run_handoff(args: argparse.Namespace) -> int:
    import sys

    from memstrata.cli.common import open_store
    from memstrata.operations.envelope import hand_off

    with open_store(args, as_agent=bool(args.agent)) as store:
        envelope = hand_off(
            store,
            args.skill,
            args.action,
            brief=args.brief,
            memory_snippet=args.snippet,
            project_context=args.project_context,
            budget_chars=args.budget,
        )
    sys.stdout.write(envelope.to_json() + "\n")  # the request itself, JSON with or without --json
    return 0
