"""A warning fixed in the millisecond it was written (`lifecycle.retired.fixed_by`): the
ledger lists records newest first, the later written first at one time; a fix written
after the warning in its millisecond retires it (CI writes several records in one)."""

from __future__ import annotations

from dataclasses import replace

from memstrata.lifecycle.retired import fixed_by
from memstrata.model import LedgerEntry

TS = "2026-11-29T03:00:00.123Z"


def _entry(id_: str, kind: str, summary: str, ts: str = TS) -> LedgerEntry:
    return LedgerEntry(id_, ts, kind, "checkout-web", None, None, (), summary, None, None)


WARNING = _entry(
    "w",
    "warning",
    "The payment events stream sends amount_cents as a string; payments-api should send an integer",
)
FIX = _entry("f", "decision", "amount_cents is always a JSON integer in the events stream (fixed)")


def test_a_fix_written_after_the_warning_in_its_millisecond_retires_it() -> None:
    assert fixed_by(WARNING, [FIX, WARNING]) == FIX  # newest first: the fix came after


def test_a_record_written_before_the_warning_in_its_millisecond_does_not() -> None:
    assert fixed_by(WARNING, [WARNING, FIX]) is None  # the "fix" came first
    assert fixed_by(WARNING, [FIX]) is None  # the warning's place unknown: only a later time
    after = replace(FIX, ts="2026-11-29T03:00:00.124Z")
    assert fixed_by(WARNING, [after]) == after  # a later millisecond: after it, wherever listed
