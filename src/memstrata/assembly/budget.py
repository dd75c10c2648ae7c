"""Fitting sections into a character budget without ever cutting a line in half.

Sections keep their output order; when the total is over budget, the sections
with the lowest priority lose lines first (from their oldest end when
`keep="tail"`, e.g. the LOG), and each trimmed section says how much it lost.
Pure functions on plain strings.
"""

from __future__ import annotations

from memstrata.values import replace, value_type


@value_type(frozen=True)
class Section:
    """One titled section of the context, with what it keeps when the budget is short."""

    key: str
    title: str
    lines: tuple[str, ...]
    priority: int  # higher survives longer
    keep: str = "head"  # which end to keep when trimming: "head" | "tail"
    dropped: int = 0

    def render(self) -> str:
        body = list(self.lines)
        if self.dropped:
            marker = f"[… {self.dropped} line(s) omitted to fit the context budget]"
            body = [marker, *body] if self.keep == "tail" else [*body, marker]
        return "\n".join([self.title, *body]).rstrip() + "\n"


def total(sections: list[Section]) -> int:
    return sum(len(s.render()) + 1 for s in sections if s.lines or s.dropped)


def fit(sections: list[Section], budget: int) -> list[Section]:
    """Trim lowest-priority sections first until the rendering fits `budget` chars."""
    out = list(sections)
    for idx in sorted(range(len(out)), key=lambda i: (out[i].priority, -i)):
        if total(out) <= budget:
            break
        s = out[idx]
        lines = list(s.lines)
        dropped = s.dropped
        while lines and total(out) > budget:
            if s.keep == "tail":
                lines.pop(0)
            else:
                lines.pop()
            dropped += 1
            out[idx] = replace(s, lines=tuple(lines), dropped=dropped)
        if not lines and total(out) > budget:
            # a section with nothing left disappears, marker included
            out[idx] = replace(s, lines=(), dropped=0)
    return [s for s in out if s.lines or s.dropped]
