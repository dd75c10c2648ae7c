"""The index never holds a secret's text: what a doc's searchable columns keep of one.

memstrata shows every secret as `[withheld: <kind>]` (`policy.secrets.withhold`); if the
index held the raw value, a search for a guessed password would find the record and
confirm the guess, whatever the hit then shows. So the text that goes into `docs`
(title, body, tags, context, which FTS5 and the embedder read) is masked with the same
rule as the one every read shows, here, the one place parsed docs pass on their way in
(`index.docs.apply_parsed`, `replace_source_docs`; `doctor` compares with it too):

* each span `find_secrets` finds, as `[withheld: <kind>]`;
* a value withheld whole where it was written: a fact under a key that names a credential
  (`db_password`), a string under such a key in the record (`{"password": ...}` of a
  tool call's input), wherever the doc's text repeats it, as `[withheld: credential]`.

The files stay the truth and keep the value as the `[secrets] policy` stored it (`warn`:
as given; `memstrata purge` removes it); the `meta` column, the layer's own record that
the library's reads return (`facts get`, `get_fact` by its key), keeps it too, and no
search reads it. Neighbour context is built from the masked bodies.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memstrata.policy.secrets import (
    WITHHELD,
    credential_key,
    find_secrets,
    redact,
)

if TYPE_CHECKING:
    from memstrata.index.docs import Doc

SHORTEST_WHOLE = 4  # a shorter value withheld whole is not looked for in the text
# a record's keys repeat (`role`, `input`, `command`...): each is read once
_credential_key = functools.lru_cache(maxsize=4096)(credential_key)


def whole_values(value: Any, key: str = "") -> list[str]:
    """The strings of a JSON-like record that `withhold` withholds whole: those under a
    key that names a credential (and have no secret shape of their own to find)."""
    if isinstance(value, str):
        return [value] if value.strip() and _credential_key(key) else []
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in whole_values(v, str(k))]
    if isinstance(value, list | tuple):
        return [s for v in value for s in whole_values(v)]
    return []


def masked(text: str, whole: Sequence[str] = ()) -> str:
    """`text` as the index may hold it: each secret as `[withheld: <kind>]`, and each of
    `whole` (values withheld whole elsewhere in the record) as `[withheld: credential]`.

    Example:
        >>> masked('login {"password": "tern lantern"}', ["tern lantern"])
        'login {"password": "[withheld: credential]"}'
    """
    if not text:
        return text
    for value in whole:
        # as written, and as a tool call's JSON input shows it (`pa\"ss`, `\u00e9`...)
        for form in {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}:
            if len(form) >= SHORTEST_WHOLE and form in text:
                text = text.replace(form, WITHHELD.format(kind="credential"))
    found = find_secrets(text)
    return redact(text, found, WITHHELD) if found else text


def holds_none(fields: Sequence[str]) -> bool:
    """True when `find_secrets` finds nothing in any of `fields`, from one scan of them
    joined by newlines (a scan per field cost 3-4x the calls, each reading every rule's
    triggers: `indexed` ran for every doc of every write and reindex).

    Sound, not a guess: no rule's match crosses a newline except `private_key`'s (a
    finding either way); a newline is a word boundary and whitespace, as the start and
    end of a field are; so a field's finding is one of the joined text's too, or the
    joined text has an earlier one. Not when lower-casing changes the text's length
    (`find_secrets` reads trigger positions in the lower-cased text): then per field."""
    text = "\n".join(fields)
    return (text.isascii() or len(text.lower()) == len(text)) and not find_secrets(text)


def indexed(doc: Doc) -> Doc:
    """`doc` with its searchable text masked (`masked`); the same object when it holds
    no secret."""
    whole = whole_values(doc.meta) if doc.meta else []
    if doc.layer == "fact" and credential_key(doc.title) and doc.body.strip():
        whole.append(doc.body)  # a fact's key is its record's `key`, its value the body
    if not whole and holds_none((doc.title, doc.body, doc.context, *doc.tags)):
        return doc
    title, body, context = (masked(t, whole) for t in (doc.title, doc.body, doc.context))
    tags = tuple(masked(t, whole) for t in doc.tags)
    if (title, body, context, tags) == (doc.title, doc.body, doc.context, doc.tags):
        return doc
    return doc.but(title=title, body=body, context=context, tags=tags)
