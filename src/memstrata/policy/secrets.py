"""Secrets in memory: a small, documented rule set, and the policy every write applies.

Agents paste keys into chats and then into memory. Every layer's write path calls
`screen` on the text it is about to store; `[secrets] policy` in config decides:

* `warn` (default): store it, warn the caller (`SecretWarning`, or the adapter's
  notice list), and the value is *marked*: see below.
* `redact`: store `[REDACTED:<kind>]` in place of each secret.
* `refuse`: raise `SecretDetected`; nothing is stored.

Marking, without a new field in any file (the shared ledger's lines keep their exact
fields): secrets are detected again wherever memory leaves its owner.

* One rule for everything that enters a model's context, `withhold`: each secret
  shown as `[withheld: <kind>]`. Assembled context (CONTEXT/prompt assembly,
  predecessor context) masks every line, and a fact whose key names a credential
  (`api_key`, `password`...) is withheld whole; every MCP tool result and resource
  (`mcp.tools.run`, `mcp.resources`), hook output (`hooks`) and skill result passes
  through `withhold`. The raw value only where a person asks for it: `--reveal` on
  the CLI, a confirmed reveal in the web app, the library's own reads; and `get_fact`
  by its exact key (the "My API key is 12345" case: the agent asks for it).
* The shared ledger, which every room reads: under `warn`, a publish that carries a
  secret is refused (`SecretDetected`) unless `[secrets] share_in_ledger = true`.
  Entries that arrive by hand edit or import are detected at index time (`docs.secret`
  column), and `policy.scope.Gate` hides them from every other room (admins still see them).

Why not a library: detect-secrets 1.5 (evaluated) takes 0.7-1.9 s to import (it pulls
requests), ~10 ms per line in its ad-hoc mode, and flags plain English sentences as
high-entropy strings. These rules cost a few microseconds per write and are compiled
on first use, so importing this module does no work.

Rules (kind: what matches):

| kind | shape |
|---|---|
| anthropic-key | `sk-ant-` + 20+ key characters |
| openai-key | `sk-` / `sk-proj-` ... + 20+ key characters |
| aws-access-key | `AKIA`/`ASIA`/`A3T.`/`ABIA`/`ACCA` + 16 upper-case letters or digits |
| aws-secret-key | 40 base64 characters after an `aws ... secret/key` label |
| github-token | `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_` + 36+, or `github_pat_...` |
| gitlab-token | `glpat-`/`gldt-`/`glptt-`/`glrt-`/`glsoat-`/... + 20+ characters |
| slack-token | `xoxb-`/`xoxp-`/... tokens and `hooks.slack.com/services/...` URLs |
| google-api-key | `AIza` + 35 characters |
| stripe-key | `sk_live_`/`rk_test_`... + 24+ characters |
| jwt | three base64url parts, the first two starting `eyJ` |
| private-key | a `-----BEGIN ... PRIVATE KEY-----` block (to its END line) |
| credential | `password = ...`, `api_key: ...`, `token=...` with an 8+ character value |
|            | of two character classes, not an environment variable's name (`token: |
|            | ACTIONS_ID_TOKEN_REQUEST_URL is not set`, `token=$GH_TOKEN`: upper-case |
|            | words and digits joined by `_`, three in four characters letters, a bare |
|            | one naming a token, key, password, URL...); or a |
|            | fact whose key names a credential; a password said in prose (`password X`, |
|            | `passphrase is X`, `password was X`), the same value rules |
| url-password | the password of `scheme://user:password@host` (not `${VAR}`, `<...>`, `***`) |
| bearer-token | 16+ token characters after `Bearer ` (an `Authorization` header) |
| high-entropy | a 32+ character token mixing 3 character classes, Shannon entropy >= 4.0 |
|              | bits/char, less than 60% of it made of word-like runs (`Name`, `word`, |
|              | `HTTP`): camelCase identifiers are 74-97% words, random base62/base64 |
|              | tokens 23-26% on average (99th percentile 54-66%). Pure hex, such as |
|              | commit ids and sha256 digests, is left alone, and so are the folders of |
|              | a path (`agents/finn/archive/...`, `/tmp/tmpq_501lb2/proj`: only its |
|              | last part is looked at), and |
|              | a compact UTC stamp (`20261127T080630Z`) or a lower-case hex id standing |
|              | alone (`arc-2c8e968d`) counts as words. |
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

from memstrata.errors import SecretDetected
from memstrata.values import value_type

if TYPE_CHECKING:
    from memstrata.config import Config


class Policed(Protocol):
    """Where a write's secrets policy comes from (the store's engine): `[secrets]` in its
    config, and where `warn` notices go when no call collects them."""

    config: Config
    notice_sink: Callable[[str], None] | None


POLICIES = ("warn", "redact", "refuse")
ENTROPY_MIN_LEN = 32
ENTROPY_BITS = 4.0
WORDY = 0.6

# (kind, literal triggers, pattern): a rule's pattern runs only when one of its
# triggers occurs in the text (`in` is C-fast; `re` with a leading `\b` is not).
# Triggers of rules marked `ci` are looked up in the lower-cased text.
_RULES: tuple[tuple[str, tuple[str, ...], bool, str], ...] = (
    (
        "private_key",
        ("PRIVATE KEY",),
        False,
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
    ),
    ("anthropic_key", ("sk-ant-",), False, r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    (
        "openai_key",
        ("sk-",),
        False,
        r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}",
    ),
    ("stripe_key", ("_live_", "_test_"), False, r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{24,}"),
    # Access key ids (AKIA long-term, ASIA temporary, A3T/ABIA/ACCA older forms); the
    # other unique-id prefixes (AIDA users, AROA roles...) name things, they grant nothing.
    (
        "aws_access_key",
        ("AKIA", "ASIA", "A3T", "ABIA", "ACCA"),
        False,
        r"\b(?:AKIA|ASIA|A3T[A-Z0-9]|ABIA|ACCA)[0-9A-Z]{16}\b",
    ),
    (
        "aws_secret_key",
        ("aws",),
        True,
        r"(?i:aws)[\w .-]{0,30}?(?i:secret|key)[\w .\"']{0,20}?[:=][ \t\"']*"
        r"(?P<awsval>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
    ),
    (
        "github_token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        False,
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
    ),
    (
        "slack_token",
        ("xox", "hooks.slack.com"),
        False,
        r"\bxox[abposr]-[A-Za-z0-9-]{10,}|https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}",
    ),
    ("google_api_key", ("AIza",), False, r"\bAIza[0-9A-Za-z_-]{35}"),
    ("jwt", ("eyJ",), False, r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    (
        "gitlab_token",
        (
            "glpat-",
            "gldt-",
            "glptt-",
            "glrt-",
            "glsoat-",
            "glcbt-",
            "glimt-",
            "glagent-",
            "gloas-",
            "glft-",
        ),
        False,
        r"\bgl(?:pat|dt|ptt|rt|soat|cbt|imt|agent|oas|ft)-[A-Za-z0-9_-]{20,}",
    ),
    (
        "url_password",
        ("://",),
        False,
        r"://[^\s/:@]*:(?P<urlpass>[^\s/@]+)@[^\s/@]",
    ),  # tried at each "://" after a scheme
    (
        "bearer_token",
        ("bearer",),
        True,
        r"\b(?i:bearer)[ \t]+(?P<bearer>[A-Za-z0-9._~+/-]{16,}=*)(?![A-Za-z0-9._~+/=-])",
    ),
    (
        "credential",
        ("pass", "pwd", "secret", "key", "token"),
        True,
        r"(?i:(?:password|passwd|passphrase|pwd|secret|api[_-]?key|apikey|access[_-]?key"
        r"|secret[_-]?key|access[_-]?token|auth[_-]?token|token|client[_-]?secret"
        r"|private[_-]?key)\b)[\"']?[ \t]*[:=][ \t]*[\"']?(?P<credval>[^\s\"',;]{8,})",
    ),
    (  # said in prose: "user larkspur, password Kestrel-Barn-4471" (firmware-larkspur)
        "credential",
        ("pass",),
        True,
        r"(?i:pass(?:word|wd|phrase)\b)[ \t]+(?:(?i:is|was|is now|will be|becomes)[ \t]+)?"
        r"(?P<credval>[^\s\"',;]{8,})",
    ),
)
KINDS = tuple(sorted({r[0].replace("_", "-") for r in _RULES} | {"high-entropy"}))
_CANDIDATE = r"[A-Za-z0-9+/_=-]{" + str(ENTROPY_MIN_LEN) + ",}"
_WORD = r"[A-Z]?[a-z]{3,}|[A-Z]{4,}"
_FOLDERS = re.compile(r"[a-z0-9_-]+(?:/[a-z0-9_-]+)*")
# Parts of memstrata's own names (`LOG-20261127T080630Z-arc-2c8e968d`) that read as words
# do: a compact UTC stamp, a lower-case hex id standing alone.
_STAMP = re.compile(r"\d{8}T\d{6,9}Z|(?<![A-Za-z0-9])[0-9a-f]{8,}(?![A-Za-z0-9])")


@value_type(frozen=True)
class Finding:
    """One secret-looking span `[start, end)` of a text, and which rule found it."""

    kind: str
    start: int
    end: int


class SecretWarning(UserWarning):
    """A value that looks like a secret was stored (policy `warn`)."""


@functools.cache
def _compiled() -> tuple[re.Pattern[str], re.Pattern[str]]:
    return re.compile(_CANDIDATE), re.compile(_WORD)


@functools.cache
def _rule(index: int) -> re.Pattern[str]:
    """Rule `index`'s pattern, compiled the first time a text holds one of its triggers
    (compiling them all took 8-10 ms of every `memstrata context`, which reads texts
    that hold none)."""
    return re.compile(_RULES[index][3], re.DOTALL)


def _entropy(token: str) -> float:
    n = len(token)
    return -sum(c / n * math.log2(c / n) for c in Counter(token).values())


def _classes(token: str) -> int:
    return (
        any(c.islower() for c in token)
        + any(c.isupper() for c in token)
        + any(c.isdigit() for c in token)
        + any(c in "+/_=-" for c in token)
    )


def _matches(
    kind: str, triggers: tuple[str, ...], rx: re.Pattern[str], text: str, lower: str
) -> Iterator[re.Match[str]]:
    if kind == "url_password":
        pos = text.find("://")
        while pos >= 0:
            if pos > 0 and text[pos - 1].isalnum():
                m = rx.match(text, pos)
                if m:
                    yield m
            pos = text.find("://", pos + 3)
        return
    if kind != "credential":
        yield from rx.finditer(text)
        return
    # Labels are common words ("key", "token"): try the pattern anchored where a
    # label can start (the word holding a trigger, or after a `_`/`-` inside it),
    # which is far cheaper than letting `re` try every position of the text.
    starts: set[int] = set()
    for t in triggers:
        pos = lower.find(t)
        while pos >= 0:
            start = pos
            while start > 0 and (lower[start - 1].isalnum() or lower[start - 1] in "_-"):
                start -= 1
            starts.update(i for i in range(start, pos + 1) if i == start or text[i - 1] in "_-")
            pos = lower.find(t, pos + 1)
    last = -1
    for at in sorted(starts):
        if at < last:
            continue
        m = rx.match(text, at)
        if m:
            last = m.end()
            yield m


_VARIABLE = re.compile(r"`?(?:\$\{(?P<braced>\w+)\}|\$?(?P<bare>\w+))`?[.):]*")
_NAME_PART = re.compile(r"[A-Z]+[0-9]*|[0-9]+")
# A bare name (no `$`) must say what it holds or where: a password written in capital
# words (`CORRECT_HORSE_BATTERY`) names nothing and stays withheld.
_NAME_WORD = re.compile(
    r"TOKEN|KEYS?|SECRETS?|PASS(?:WORD|WD)?|PWD|UR[LI]|DSN|ID|API|AUTH|CREDENTIALS?|CERT"
    r"|ACCESS|PRIVATE|FILE|PATH|HOST|USER|ENV|VAR"
)


def _variable_name(value: str) -> bool:
    """A credential label's value that names where a secret is kept, not the secret: an
    environment variable's name or a reference to one (`ACTIONS_ID_TOKEN_REQUEST_URL`,
    `$GH_TOKEN`, `${DB_PASSWORD}`): upper-case words (a word may end in digits: `S3`,
    `PG16`) joined by `_`, three in four of its letters and digits letters, and a bare
    one (no `$`) with a word of `_NAME_WORD`. A random value in capitals (`X7_Q9Z2K`) or
    a password in capital words (`CORRECT_HORSE_BATTERY`) is not one."""
    m = _VARIABLE.fullmatch(value)
    name = str(m.group("braced") or m.group("bare")) if m else ""
    parts = name.split("_")
    if len(parts) < 2 or not name[:1].isalpha() or not all(map(_NAME_PART.fullmatch, parts)):
        return False
    if not value.lstrip("`").startswith("$") and not any(map(_NAME_WORD.fullmatch, parts)):
        return False
    return 4 * sum(c.isalpha() for c in name) >= 3 * (len(name) - len(parts) + 1)


def _placeholder(value: str) -> bool:
    """A URL password that stands for one (`${DB_PASS}`, `<password>`, `***`, `%s`)."""
    return value.startswith(("$", "<", "{", "%")) or set(value) <= set("*xX.")


def _absolute_path(text: str, start: int, token: str) -> bool:
    """`token` (at `start` of `text`) is an absolute file path: it starts with `/` after a
    space, a quote, `=` or `:` (not inside a word or a URL), has two folders or more, each
    a short name (a temporary folder such as `tmpq_501lb2` is random but short), and none
    of base64's `+` or `=`. A random base64 token starting with `/` by chance rarely
    passes all of these, and its last part, when long, is still looked at."""
    before = text[start - 1] if start else " "
    if not token.startswith("/") or not (before.isspace() or before in "\"'`=:(["):
        return False
    if before == ":" and text[max(0, start - 6) : start].rstrip(":").isalpha():
        return False  # `https://host/...` is a URL, not a path
    parts = token[1:].split("/")
    return (
        len(parts) >= 3
        and "+" not in token
        and "=" not in token
        and all(0 < len(p) <= 24 for p in parts[:-1])
    )


def find_secrets(text: str) -> list[Finding]:
    """Every secret-looking span of `text`, in order, not overlapping.

    Example:
        >>> [f.kind for f in find_secrets("key: AKIAIOSFODNN7EXAMPLE")]
        ['aws-access-key']
    """
    if not text:
        return []
    candidate, word = _compiled()
    lower = text.lower()
    found: list[Finding] = []
    for index, (kind, triggers, ci, _rx) in enumerate(_RULES):
        haystack = lower if ci else text
        for t in triggers:  # a plain loop: this runs on every write and every ledger parse
            if t in haystack:
                break
        else:
            continue
        for m in _matches(kind, triggers, _rule(index), text, lower):
            # A labelled value: only the value is the secret, the label stays readable.
            group = {
                "aws_secret_key": "awsval",
                "credential": "credval",
                "url_password": "urlpass",
                "bearer_token": "bearer",
            }.get(kind)
            start, end = m.span(group) if group else m.span()
            if kind == "credential" and (
                _classes(text[start:end]) < 2 or _variable_name(text[start:end])
            ):
                continue
            if kind == "url_password" and _placeholder(text[start:end]):
                continue
            if any(f.start < end and start < f.end for f in found):
                continue
            found.append(Finding(kind.replace("_", "-"), start, end))
    if len(text) < ENTROPY_MIN_LEN or max(map(len, text.split()), default=0) < ENTROPY_MIN_LEN:
        found.sort(key=lambda f: f.start)
        return found
    for m in candidate.finditer(text):
        token, start = m.group(), m.start()
        if any(f.start < m.end() and start < f.end for f in found):
            continue
        folders, slash, name = token.rpartition("/")
        if slash and (_FOLDERS.fullmatch(folders) or _absolute_path(text, start, token)):
            # A path below lower-case folders (`agents/finn/archive/LOG-...`) or an absolute
            # path (`/tmp/tmpq_501lb2/ml-wrensong/proj`): only its last part can be a token;
            # random base64 has no such run of folders.
            token, start = name, start + len(folders) + 1
            if len(token) < ENTROPY_MIN_LEN:
                continue
        if re.fullmatch(r"[0-9a-fA-F-]+", token) or _classes(token) < 3:
            continue
        plain = _STAMP.sub("", token)
        wordy = (len(token) - len(plain) + sum(len(w) for w in word.findall(plain))) / len(token)
        if wordy < WORDY and _entropy(token) >= ENTROPY_BITS:
            found.append(Finding("high-entropy", start, m.end()))
    found.sort(key=lambda f: f.start)
    return found


# A fact key's words (`db_password` -> db, password; `apiKey` -> api, key). A word that can
# only mean a credential names one anywhere in the key; `pass`, `token` and `<x>_key` only as
# the key's last words (`db_pass`, `github_token`, `aws_secret_access_key`): `eval_pass_rate`,
# `max_tokens` or `token_budget` hold no secret, and were withheld from every context as one.
_KEY_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_ALWAYS = re.compile(r"passw(?:or)?d|passphrase|pwd|secrets?|credentials?|apikey")
_LAST = frozenset({"pass", "token"})
_KEY_OF = frozenset({"api", "private", "access", "secret", "signing", "encryption", "ssh"})


def credential_key(key: str) -> bool:
    """True when a fact key names a credential (`api_key`, `db_password`, `token`...), not
    when it only contains such a word (`eval_pass_rate`, `max_tokens`)."""
    words = [w.lower() for w in _KEY_WORDS.findall(key or "")]
    if not words:
        return False
    if any(map(_ALWAYS.fullmatch, words)) or words[-1] in _LAST:
        return True
    return len(words) > 1 and words[-1] == "key" and words[-2] in _KEY_OF


def fact_findings(key: str, value: str) -> list[Finding]:
    """Secrets in a fact: its value's shapes, or the whole value when the key names one."""
    found = find_secrets(value)
    if not found and value.strip() and credential_key(key):
        found = [Finding("credential", 0, len(value))]
    return found


def kinds(findings: list[Finding]) -> list[str]:
    return sorted({f.kind for f in findings})


def redact(text: str, findings: list[Finding], template: str = "[REDACTED:{kind}]") -> str:
    """`text` with each finding replaced by `template` (formatted with its kind)."""
    out: list[str] = []
    pos = 0
    for f in findings:
        if f.start < pos:
            continue
        out.append(text[pos : f.start])
        out.append(template.format(kind=f.kind))
        pos = f.end
    out.append(text[pos:])
    return "".join(out)


WITHHELD = "[withheld: {kind}]"


def mask(text: str) -> str:
    """What assembled context shows: each secret replaced by `[withheld: <kind>]`."""
    found = find_secrets(text)
    return redact(text, found, WITHHELD) if found else text


def withhold(value: Any, key: str = "") -> Any:
    """What a model may see of `value`: each secret in its strings (dict values, keys kept,
    list items; a whole value under a credential key, `{"password": ...}`) as `[withheld: <kind>]`.

    Example:
        >>> withhold({"text": "key AKIAZ7Q4M2XK9LD3PB6W", "n": 1})
        {'text': 'key [withheld: aws-access-key]', 'n': 1}
    """
    if isinstance(value, str):
        found = fact_findings(key, value)
        return redact(value, found, WITHHELD) if found else value
    if isinstance(value, dict):
        return {k: withhold(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [withhold(v) for v in value]
    return value


def holds_secrets(text: str) -> bool:
    """True when `withhold` would change `text`."""
    return bool(find_secrets(text)) if isinstance(text, str) else False


_WITHHELD_MARK = re.compile(r"\[withheld: ([a-z-]+)\]")


def restore_withheld(new: str, old: str) -> str:
    """`new` with each `[withheld: <kind>]` put back to the secret of that kind `old` held
    (the n-th marker of a kind gets the n-th secret of that kind): an edit made from a
    withheld view (an agent's read, a CLI read, a web page) keeps the secrets it could
    not see, instead of storing the markers in their place.

    Example:
        >>> restore_withheld("id [withheld: aws-access-key] (prod)", "id AKIAZ7Q4M2XK9LD3PB6W")
        'id AKIAZ7Q4M2XK9LD3PB6W (prod)'
    """
    if "[withheld: " not in new or not old:
        return new
    queues: dict[str, list[str]] = {}
    for f in find_secrets(old):
        queues.setdefault(f.kind, []).append(old[f.start : f.end])
    if not queues:
        return new

    def put_back(m: re.Match[str]) -> str:
        queue = queues.get(m.group(1))
        return queue.pop(0) if queue else m.group(0)

    return _WITHHELD_MARK.sub(put_back, new)


# -- the policy ----------------------------------------------------------------------


class SecretNotice(str):
    """A `warn`-policy notice (its text), with the kinds of secret it is about: what the
    HTTP API's `warnings` and the web app's notice are built from."""

    kinds: tuple[str, ...] = ()

    def __new__(cls, message: str, kinds: tuple[str, ...] = ()) -> SecretNotice:
        notice = super().__new__(cls, message)
        notice.kinds = kinds
        return notice


_sink: ContextVar[Callable[[str], None] | None] = ContextVar("memstrata_secret_sink", default=None)


@contextlib.contextmanager
def collect_notices() -> Iterator[list[str]]:
    """Collect `warn`-policy notices raised inside the block instead of `warnings.warn`.

    Adapters (MCP, HTTP) use it to hand the warning to their caller with the result.
    """
    seen: list[str] = []
    token = _sink.set(seen.append)
    try:
        yield seen
    finally:
        _sink.reset(token)


def _notify(store: Policed, message: str) -> None:
    """To the collector of the running call, else the store's own sink (the CLI sets one),
    else as a Python warning."""
    sink = _sink.get() or store.notice_sink
    if sink is not None:
        sink(message)
    else:
        warnings.warn(SecretWarning(message), stacklevel=4)


def apply_policy(
    store: Policed, text: str, findings: list[Finding], what: str, *, shared: bool = False
) -> str:
    """Apply `[secrets] policy` to `text` given its findings; returns what to store.

    `shared`: the text goes where every room reads it (the ledger); under `warn` it
    is refused there unless `[secrets] share_in_ledger = true`.
    """
    if not findings:
        return text
    policy = store.config.secrets_policy
    found = ", ".join(kinds(findings))
    if policy == "refuse":
        raise SecretDetected(
            f"{what} looks like it contains a secret ({found}); nothing was "
            "stored (secrets.policy = refuse)"
        )
    if policy == "redact":
        return redact(text, findings)
    if shared and not store.config.secrets_share_in_ledger:
        raise SecretDetected(
            f"{what} looks like it contains a secret ({found}); the shared ledger is read by "
            "every room, so it was not published. Keep it in your own memory (a fact), "
            "remove it, or set [secrets] share_in_ledger = true"
        )
    _notify(
        store,
        SecretNotice(
            f"{what} looks like it contains a secret ({found}); stored as given and kept "
            "out of assembled context (secrets.policy = warn; `memstrata purge` removes it)",
            tuple(kinds(findings)),
        ),
    )
    return text


def screen(store: Policed, text: str, what: str, *, shared: bool = False) -> str:
    """Detect secrets in `text` and apply the store's policy (see `apply_policy`)."""
    if not isinstance(text, str) or not text:
        return text
    return apply_policy(store, text, find_secrets(text), what, shared=shared)


def screen_json(
    store: Policed, value: Any, what: str, *, shared: bool = False, key: str = ""
) -> Any:
    """`screen` each string of a JSON-like value (a credential key's value whole, `withhold`)."""
    if isinstance(value, str):
        return apply_policy(store, value, fact_findings(key, value), what, shared=shared)
    if isinstance(value, dict):
        return {k: screen_json(store, v, what, shared=shared, key=str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [screen_json(store, v, what, shared=shared) for v in value]
    return value


def secret_mark(*texts: str | None) -> str | None:
    """The index mark of a doc: its kinds joined by commas, or None if clean."""
    found = {f.kind for f in find_secrets("\n".join(t for t in texts if t))}
    return ",".join(sorted(found)) or None
