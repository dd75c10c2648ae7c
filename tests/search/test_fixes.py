"""A question that asks what fixed something is answered by the record that says it did.

support-marlin (scen19b's blind scenario): "the github cli kept refusing me last tuesday,
what fixed it?" ranked the ERROR "HTTP 401: Bad credentials ..." first and the THOUGHT
"gh fails with 401 ... fixed by removing GH_TOKEN ... and running gh auth refresh" 4th
(`search.fixes`).
"""

from __future__ import annotations

import pytest

from memstrata.search.fixes import asks_fix, with_fixes
from memstrata.search.priors import apply_priors
from memstrata.search.query import Hit

T0 = 1_790_000_000.0


def _log(uid: str, entry_type: str, text: str, score: float) -> Hit:
    meta = {"entry_type": entry_type, "content": text, "metadata": {}}
    return Hit(uid, "log", score, entry_type, text, text, T0, "LOG.md", kind=entry_type, meta=meta)


ERROR = _log("e", "ERROR", "HTTP 401: Bad credentials (https://api.github.com/graphql)", 0.97)
NOTE = _log(
    "n",
    "THOUGHT",
    "gh fails with 401 Bad credentials because GH_TOKEN in .envrc is stale; fixed by "
    "removing GH_TOKEN and running gh auth refresh",
    0.70,
)


def _order(query: str) -> list[str]:
    return [h.uid for h in apply_priors(with_fixes(query, [ERROR, NOTE]), query)]


def test_what_fixed_it_ranks_the_record_that_says_it_fixed_it_first() -> None:
    assert _order("the github cli kept refusing me last tuesday, what fixed it?") == ["n", "e"]
    [weighed] = with_fixes("what was the fix?", [NOTE])
    assert weighed.explain["fix"] == 1.5 and weighed.explain["fix_said"] == "fixed by"
    # asked what went wrong, not what fixed it: the records keep their own scores
    assert _order("what did the github cli refuse last tuesday?") == ["e", "n"]


@pytest.mark.parametrize(
    ("query", "asks"),
    [
        ("The login error on the shared warehouse: what fixed it?", True),
        ("ios build broke after we added the new map lib, how'd we fix it", True),
        ("lint job went red after the upgrade. what was the fix?", True),
        ("how was it fixed in the end?", True),
        ("What did the first model score once the leak was fixed?", False),
        ("How should I word the commit for this fix?", False),
        ("can I just fix a config file straight on the box?", False),
    ],
)
def test_what_asks_what_fixed_it(query: str, asks: bool) -> None:
    assert asks_fix(query) is asks


@pytest.mark.parametrize(
    ("query", "asks"),
    [
        ("What did the first restore trip over, and what got it through?", True),
        ("What was blocking terraform yesterday, and how did we get past it?", True),
        ("The debugger wouldn't connect at first. What did we do about it?", True),
        ("what was the workaround for the flaky test?", True),
        ("how'd we work around the rate limit", True),
        ("How do we handle secrets in CI?", False),
        ("What did we do on Tuesday?", False),
    ],
)
def test_what_asks_how_a_problem_was_got_past(query: str, asks: bool) -> None:
    """asks_fix also reads how a problem was got past (infra-saltmarsh q-restore-err,
    q-lock1; firmware-larkspur q-attach), in the past tense only."""
    assert asks_fix(query) is asks


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("pg_restore failed on ownership. Fix: pg_restore --no-owner", "Fix: "),
        ("the lock was stale, so we released it with terraform force-unlock", "released it with"),
        ("Workaround: pin the runner image to 22.04", "Workaround: "),
        ("fixtures live in tests/data; see the solution file", None),
    ],
)
def test_what_says_it_fixed_something(text: str, said: str | None) -> None:
    [hit] = with_fixes("what was the fix?", [_log("x", "THOUGHT", text, 0.5)])
    assert hit.explain.get("fix_said") == said
