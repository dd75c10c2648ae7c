"""`purge_copies.Quotes`: which quotes of a purged text are found in derived text, with plain
strings (the end-to-end scenarios are in test_purge.py)."""

from __future__ import annotations

import time

from memstrata.operations.purge_copies import FRAGMENT, PURGED, Quotes

TEXT = "We decided the vault passphrase is Quokka-Marmot-Heron, rotate it monthly."


def test_a_verbatim_quote_is_replaced_whatever_its_whitespace_and_case() -> None:
    q = Quotes([TEXT])
    assert q.scrub(f"- Decision: {TEXT}\n- before") == f"- Decision: {PURGED}\n- before"
    flowed = TEXT.replace(" the ", "\n  the ").upper()
    assert q.scrub(f"x {flowed} y") == f"x {PURGED} y"


def test_a_quote_cut_short_or_relabelled_loses_every_word_it_kept() -> None:
    q = Quotes([TEXT])
    cut = TEXT[:45]  # ends mid-word: "...Quokka-Mar"
    assert q.scrub(f"- user: {cut}…") == f"- user: {PURGED}…"
    assert (
        q.scrub("- Decision: the vault passphrase is Quokka-Marmot-Heron")
        == f"- Decision: {PURGED}"
    )


def test_short_stretches_and_other_text_are_left_alone() -> None:
    q = Quotes([TEXT])
    shared = "the vault passphrase"  # under FRAGMENT characters in common
    assert len(shared) < FRAGMENT
    assert q.scrub(f"where is {shared} kept?") == f"where is {shared} kept?"
    assert q.scrub("nothing in common") == "nothing in common"


def test_a_short_purged_text_is_replaced_as_a_whole_word_only() -> None:
    q = Quotes(["vim", "python"])  # "vim": under MIN_WHOLE, ignored
    assert q.scrub("editor vim, lang python; pythonic") == f"editor vim, lang {PURGED}; pythonic"
    assert q.scrub_json({"args": {"value": "python", "n": 3}}) == {
        "args": {"value": PURGED, "n": 3}
    }


def test_searching_is_linear_in_the_text() -> None:
    q = Quotes([TEXT * 200])
    haystack = ("unrelated words of a long log " * 40_000) + TEXT
    start = time.monotonic()
    out = q.scrub(haystack)
    assert out.endswith(PURGED) and time.monotonic() - start < 30
