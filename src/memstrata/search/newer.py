"""Which of two records is newer, and near-ties on one subject going to the newer one.

Which is newer: the later `ts`; at the same `ts` (times are kept to the millisecond,
and a fast machine writes several records in one), the one later in the file when both
were appended to one time-ordered file (`appended_to`: LOG.md, a LOG archive, the
ledger, a transcript, a room's channel, the facts journal, the gate and compaction
histories: records appended in the order they happened). Records of other files at
the same `ts` are neither older nor newer; where an order is needed they keep a
deterministic one (uid), and records of one file among them take their places in
file order (`file_order`). A Markdown file's chunks all carry its last change's time:
its line order is no order of time, so they stay tied.

Near-ties (`recall.newer`): the pass `priors.apply_priors` makes over its pool once it
is in worth order. A hit is looked at only when an earlier one holds the same query
terms (most hold a combination no earlier hit holds, and have no older version to pass).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from memstrata.config.recall import NEWER_KEY

if TYPE_CHECKING:
    from memstrata.search.query import Hit

T = TypeVar("T")

# Layers whose files are appended in time order (their index specs are "append"); a
# LOG archive (`archive:` uids) keeps its entries in LOG order, an archived Markdown
# file (`md:` uids) does not.
APPENDED = frozenset({"log", "ledger", "session", "channel", "fact", "gate", "compaction"})


def appended_to(layer: str, uid: str, source: str, line: int | None) -> str | None:
    """The time-ordered file a record was appended to (its `source`), or None: another
    kind of file, or no line known."""
    if line is None:
        return None
    if layer in APPENDED or (layer == "archive" and uid.startswith("archive:")):
        return source
    return None


def _file_of(hit: Hit) -> str | None:
    return appended_to(hit.layer, hit.uid, hit.source, hit.line)


Placed = tuple[str, str, str, int | None]  # a record's layer, uid, source and line


def written_before(a: Placed, b: Placed) -> bool:
    """Of two records with the same ts: whether `a` is earlier than `b` in the one
    time-ordered file both were appended to (False for records of other files)."""
    if a[3] is None or b[3] is None or a[3] >= b[3]:
        return False
    file = appended_to(*a)
    return file is not None and file == appended_to(*b)


def is_older(a: Hit, b: Hit) -> bool:
    """Whether `a` was written before `b`: an earlier `ts`, or the same `ts` and earlier
    in the one time-ordered file both were appended to."""
    if a.ts != b.ts:
        return a.ts < b.ts
    return written_before((a.layer, a.uid, a.source, a.line), (b.layer, b.uid, b.source, b.line))


def file_order(
    items: list[T], tied: list[Hashable], hit: Callable[[T], Hit], *, newest_first: bool
) -> None:
    """Put records of one time-ordered file in file order where `items` (sorted; `tied[i]`
    the key of items[i], equal for records left tied, of one `ts`) leaves them tied: in
    each run of equal keys, the records of one file take the places they hold, the newest
    first (or last). Records of other files keep their places (an order by uid, say)."""
    n = len(items)
    if len(set(tied)) == n:
        return  # no ties (most pools): nothing to look at
    start = 0
    while start < n:
        key = tied[start]
        end = start + 1
        while end < n and tied[end] == key:
            end += 1
        if end - start > 1:
            _in_file_order(items, start, end, hit, newest_first)
        start = end


def _in_file_order(
    items: list[T], start: int, end: int, hit: Callable[[T], Hit], newest_first: bool
) -> None:
    places: dict[str, list[int]] = {}
    for i in range(start, end):
        file = _file_of(hit(items[i]))
        if file is not None:
            places.setdefault(file, []).append(i)
    for at in places.values():
        if len(at) > 1:
            ordered = sorted((items[i] for i in at), key=lambda x: hit(x).line or 0)
            if newest_first:
                ordered.reverse()
            for i, item in zip(at, ordered, strict=True):
                items[i] = item


def oldest_first(hits: Iterable[Hit]) -> list[Hit]:
    """`hits` by `ts`, then uid, records of one time-ordered file in file order."""
    out = sorted(hits, key=lambda h: (h.ts, h.uid))
    file_order(out, [h.ts for h in out], lambda h: h, newest_first=False)
    return out


def newer_first(
    kept: list[Any], band: float, states: frozenset[str], accounts: frozenset[str]
) -> None:
    """Near-ties on one subject go to the newer record: a hit moves above the highest
    older hit that holds the same query terms (the same subject, as far as the question
    goes) when it is worth at least (1 - band) of it and of every hit it passes. Only a
    record that states how things are (`states`) moves, above one of its signal or an
    account of the past (`accounts`). `kept` holds `priors._Worth` items in worth order."""
    near = 1.0 - band
    bound = [near * w.worth for w in kept]  # the band's bound of kept[i], moved along with it
    names = [w.signal.name for w in kept]  # and its signal
    plain = not any(n in accounts for n in names)  # no account of the past (most pools)
    # held terms -> how many of kept[:j] hold them: a hit no earlier one matches on its
    # terms (most of them) has no older version to look for
    earlier: dict[tuple[str, ...], int] = {}
    for j in range(len(kept)):  # kept[: j + 1] is reordered as it goes
        b = kept[j]
        if not b.held:
            continue
        held = tuple(b.held)
        if b.signal.name in states and earlier.get(held):
            top, bw = j, b.worth
            while top > 0 and bw >= bound[top - 1]:
                top -= 1
            ts, name = b.hit.ts, b.signal.name
            i = top
            while i < j:
                # an older say on b's subject: the same signal, or an account of the past
                # (`accounts`) a newer statement updates, older, the same query terms held
                if plain:  # the next place of b's own signal, found in C (b's place ends it)
                    i = names.index(name, i, j + 1)
                    if i == j:
                        break
                elif names[i] != name and names[i] not in accounts:
                    i += 1
                    continue
                a = kept[i]
                at = a.hit.ts
                if (at < ts or (at == ts and is_older(a.hit, b.hit))) and a.held == b.held:
                    b.prior["newer_than"] = a.hit.uid
                    b.prior["newer_key"] = f"recall.{NEWER_KEY}"
                    kept.insert(i, kept.pop(j))
                    bound.insert(i, bound.pop(j))
                    names.insert(i, names.pop(j))
                    break
                i += 1
        earlier[held] = earlier.get(held, 0) + 1
