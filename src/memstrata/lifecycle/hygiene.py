"""Memory pollution audit and pruning (Checklist D).

`audit` only reads. It reports:

* duplicate_fact:  near-duplicate facts (e.g. six phrasings of `cd evals && npm test`);
                   the newest of each group is kept, the others are superseded by it
* volatile_fact:   durable facts that break a save exclusion (git history,
                   ephemeral state, derivable code state): they will go stale
* stale_now:       NOW.md / NOTES.md not updated for `now_stale_days`
* oversized:       NOW/NOTES, CONTEXT or another memory file over its size threshold
* log_over_limit:  LOG.md over its compaction limits
* old_scratch / unused_scratch: session scratch older than N days, or never filled in

`prune(store, agent, report)` is a dry run unless `dry_run=False`; a real run
re-checks each finding first, forgets superseded facts (the journal keeps their
history), moves scratch files to the archive, compacts the LOG. It never
destroys anything; oversized or stale hand-written files are left for review.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from memstrata.errors import NotFound
from memstrata.layers.durable import save_exclusion
from memstrata.layers.episodes import SESSION_TEMPLATE
from memstrata.lifecycle.compaction import compact_log
from memstrata.lifecycle.likeness import near_duplicate
from memstrata.model import DURABLE_CATEGORIES, Fact, parse_ts
from memstrata.values import field, value_type

if TYPE_CHECKING:
    from memstrata.store.view import Store

DAY = 86400.0


@value_type(frozen=True)
class AuditThresholds:
    now_chars: int = 4000
    context_chars: int | None = None  # default: 80% of memory.max_chars
    file_chars: int = 20000
    now_stale_days: float = 14.0
    scratch_max_age_days: float = 7.0
    duplicate_threshold: float = 0.8


@value_type(frozen=True)
class AuditFinding:
    kind: str
    target: str  # a fact key, or a path relative to the agent's memory dir
    detail: str
    action: str  # forget_fact | archive_file | compact_log | review
    keep: str | None = None  # duplicate_fact: the key that stays


@value_type(frozen=True)
class AuditReport:
    agent: str
    findings: tuple[AuditFinding, ...] = ()

    @property
    def clean(self) -> bool:
        return not self.findings

    def of_kind(self, kind: str) -> list[AuditFinding]:
        return [f for f in self.findings if f.kind == kind]

    def to_markdown(self) -> str:
        lines = [f"# Memory audit report: {self.agent}", ""]
        if self.clean:
            return "\n".join([*lines, "No pollution found."]) + "\n"
        for f in self.findings:
            lines.append(f"- [{f.kind}] {f.target}: {f.detail} -> {f.action}")
        return "\n".join(lines) + "\n"


@value_type(frozen=True)
class PruneAction:
    finding: AuditFinding
    applied: bool
    result: str


@value_type(frozen=True)
class PruneReport:
    dry_run: bool
    actions: tuple[PruneAction, ...] = field(default=())

    @property
    def applied(self) -> list[PruneAction]:
        return [a for a in self.actions if a.applied]


def _duplicates(facts: list[Fact], threshold: float) -> list[AuditFinding]:
    parent = list(range(len(facts)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(facts)):
        for j in range(i + 1, len(facts)):
            if near_duplicate(facts[i].value, facts[j].value, threshold):
                parent[root(j)] = root(i)
    groups: dict[int, list[Fact]] = {}
    for i, f in enumerate(facts):
        groups.setdefault(root(i), []).append(f)
    out = []
    for group in groups.values():
        if len(group) < 2:
            continue
        newest = max(group, key=lambda f: (f.updated_at, f.key))
        for f in sorted(group, key=lambda f: f.key):
            if f is not newest:
                out.append(
                    AuditFinding(
                        "duplicate_fact",
                        f.key,
                        f"near-duplicate of {newest.key!r} (kept, newest): {f.value!r}",
                        "forget_fact",
                        keep=newest.key,
                    )
                )
    return out


def _updated(text: str) -> float | None:
    for line in reversed(text.splitlines()):
        if line.startswith("_Updated:"):
            try:
                return parse_ts(line.removeprefix("_Updated:").strip().strip("_").strip())
            except ValueError:
                return None
    return None


def _unused(text: str) -> bool:
    if text.strip() == SESSION_TEMPLATE.strip():
        return True
    return not any(line.strip() and not line.lstrip().startswith("#") for line in text.splitlines())


def audit(
    store: Store,
    agent: str,
    *,
    thresholds: AuditThresholds | None = None,
    now: float | None = None,
) -> AuditReport:
    """Find memory pollution in `agent`'s memory; changes nothing."""
    t = thresholds or AuditThresholds()
    clock = time.time() if now is None else now
    mem = store.agent(agent)
    found: list[AuditFinding] = []
    facts = mem.facts.list()
    found += _duplicates(facts, t.duplicate_threshold)
    dup_keys = {f.target for f in found}
    for f in facts:
        reason = save_exclusion(f.value) if f.category in DURABLE_CATEGORIES else None
        if reason and f.key not in dup_keys:
            found.append(
                AuditFinding("volatile_fact", f.key, f"{reason}: {f.value!r}", "forget_fact")
            )
    now_text = mem.now.read()
    now_rel = mem.now.path.name
    if len(now_text) > t.now_chars:
        found.append(
            AuditFinding(
                "oversized",
                now_rel,
                f"{len(now_text)} chars > {t.now_chars}: keep it to the "
                "active objective, blockers and phase",
                "review",
            )
        )
    updated = _updated(now_text)
    if updated is not None and clock - updated > t.now_stale_days * DAY:
        found.append(
            AuditFinding(
                "stale_now",
                now_rel,
                f"not updated for {(clock - updated) / DAY:.0f} days",
                "review",
            )
        )
    ctx_limit = t.context_chars or int(store.config.max_memory_chars * 0.8)
    ctx = mem.context.read()
    if len(ctx) > ctx_limit:
        found.append(
            AuditFinding(
                "oversized", mem.context.path.name, f"{len(ctx)} chars > {ctx_limit}", "review"
            )
        )
    log = mem.log
    if (
        log.size() > store.config.log_compact_bytes
        or log.count() > store.config.log_compact_entries
    ):
        found.append(
            AuditFinding(
                "log_over_limit",
                "LOG.md",
                f"{log.size()} bytes, {log.count()} entries",
                "compact_log",
            )
        )
    special = {now_rel, mem.context.path.name, "LOG.md"}
    if store.engine.exists(mem.files.root):
        for info in mem.files.list():
            if info.is_dir or info.path in special:
                continue
            age = clock - parse_ts(info.modified)
            if info.path.startswith("session/"):
                text = mem.files.read(info.path)
                if _unused(text):
                    found.append(
                        AuditFinding(
                            "unused_scratch", info.path, "scratch never filled in", "archive_file"
                        )
                    )
                elif age > t.scratch_max_age_days * DAY:
                    found.append(
                        AuditFinding(
                            "old_scratch",
                            info.path,
                            f"last changed {age / DAY:.0f} days ago",
                            "archive_file",
                        )
                    )
            elif info.size > t.file_chars:
                found.append(
                    AuditFinding(
                        "oversized", info.path, f"{info.size} bytes > {t.file_chars}", "review"
                    )
                )
    return AuditReport(agent, tuple(found))


def prune(
    store: Store,
    agent: str,
    report: AuditReport,
    *,
    dry_run: bool = True,
    only: Iterable[tuple[str, str]] | None = None,
) -> PruneReport:
    """Act on an audit report (dry run by default). Never destroys: facts are forgotten
    in an append-only journal, files move to the archive.

    `only` names the (kind, target) findings a person reviewed (a dry run shown, then
    confirmed): the rest of the report is left alone, and so is a reviewed finding
    that is no longer in the report.
    """

    mem = store.agent(agent)
    reviewed = None if only is None else set(only)
    done: list[PruneAction] = []
    for f in report.findings:
        if reviewed is not None and (f.kind, f.target) not in reviewed:
            continue
        if f.action == "review":
            done.append(PruneAction(f, False, "left for review: edit it by hand or by the agent"))
            continue
        if dry_run:
            verb = {
                "forget_fact": "forget fact",
                "archive_file": "move to archive",
                "compact_log": "compact",
            }[f.action]
            done.append(PruneAction(f, False, f"would {verb} {f.target}"))
            continue
        if f.action == "forget_fact":
            try:
                current = mem.facts.get(f.target)
                if f.keep is not None:
                    mem.facts.get(f.keep)  # never forget the last copy
            except NotFound:
                done.append(PruneAction(f, False, "skipped: the fact changed since the audit"))
                continue
            if f.keep is None and not save_exclusion(current.value):
                done.append(PruneAction(f, False, "skipped: the fact changed since the audit"))
                continue
            mem.facts.forget(f.target)
            done.append(PruneAction(f, True, f"forgot fact {f.target}"))
        elif f.action == "archive_file":
            if not mem.files.exists(f.target):
                done.append(PruneAction(f, False, "skipped: the file is gone"))
                continue
            done.append(PruneAction(f, True, f"moved to {mem.files.delete(f.target)}"))
        elif f.action == "compact_log":
            rec = compact_log(store, agent)
            done.append(PruneAction(f, rec.compacted, rec.archive_path or rec.reason))
    return PruneReport(dry_run, tuple(done))
