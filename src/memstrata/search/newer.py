"""Near-ties on one subject go to the newer record (`recall.newer`): the pass
`priors.apply_priors` makes over its pool once it is in worth order.

A hit is looked at only when an earlier one holds the same query terms (most hold a
combination no earlier hit holds, and have no older version to pass).
"""

from __future__ import annotations

from typing import Any

from memstrata.config.recall import NEWER_KEY


def newer_first(
    kept: list[Any], band: float, states: frozenset[str], accounts: frozenset[str]
) -> None:
    """Near-ties on one subject go to the newer record: a hit moves above the highest
    older hit that holds the same query terms (the same subject, as far as the question
    goes) when it is worth at least (1 - band) of it and of every hit it passes. Only a
    record that states how things are (`states`) moves, above one of its signal or an
    account of the past (`accounts`). `kept` holds `priors._Worth` items in worth order."""
    worth = [w.worth for w in kept]  # kept[i].worth, moved along with kept[i]
    near = 1.0 - band
    # held terms -> how many of kept[:j] hold them: a hit no earlier one matches on its
    # terms (most of them) has no older version to look for
    earlier: dict[tuple[str, ...], int] = {}
    for j in range(len(kept)):  # kept[: j + 1] is reordered as it goes
        b = kept[j]
        if not b.held:
            continue
        held = tuple(b.held)
        if b.signal.name in states and earlier.get(held):
            top, bw = j, worth[j]
            while top > 0 and bw >= near * worth[top - 1]:
                top -= 1
            ts, name = b.hit.ts, b.signal.name
            for i in range(top, j):
                # an older say on b's subject: older, the same query terms held, and the
                # same signal, or an account of the past (`accounts`) a newer statement updates
                a = kept[i]
                if (
                    a.hit.ts < ts
                    and a.held == b.held
                    and (a.signal.name == name or a.signal.name in accounts)
                ):
                    b.prior["newer_than"] = a.hit.uid
                    b.prior["newer_key"] = f"recall.{NEWER_KEY}"
                    kept.insert(i, kept.pop(j))
                    worth.insert(i, worth.pop(j))
                    break
        earlier[held] = earlier.get(held, 0) + 1
