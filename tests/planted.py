"""Facts as a hand edit or an import leaves them in facts.jsonl, past the library's write rules.

Seed 001's rules (a repo-persistent fact is cited, 1-2 sentences and no save exclusion)
are enforced on every write path, so a polluted fact can only get in the way people's
edits and old stores do: Checklist D (`lifecycle.hygiene.audit`) and verify-before-use
exist for those. Tests that need such a fact plant it here.
"""

from __future__ import annotations

from collections.abc import Sequence

from memstrata import Store
from memstrata.files.jsonl import encode
from memstrata.model import iso, now_ts


def plant_fact(
    store: Store,
    agent: str,
    key: str,
    value: str,
    category: str = "project",
    citations: Sequence[str] = (),
) -> None:
    """Append one `set` record to `agent`'s facts.jsonl on disk, as a hand edit would (the
    index notices the file changed at the next read)."""
    now = iso(now_ts())
    rec = {
        "op": "set",
        "key": key,
        "value": value,
        "category": category,
        "citations": list(citations),
        "created_at": now,
        "updated_at": now,
    }
    path = store.agent(agent, create=True).facts.path
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as f:
        f.write(encode(rec))
