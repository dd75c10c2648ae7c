"""OpenAI-compatible chat: one stdlib HTTP door, a summariser and an extractor on top.

The same wire format is spoken by OpenAI, Ollama (`/v1`), vLLM, llama.cpp and
most gateways, so one client covers them all. The core has no dependencies, so
requests go through `urllib.request`; `post_json` is the only place that talks
HTTP (the embeddings client reuses it).

Failure policy: every failure is a `ProviderError` whose message names the URL
and the cause, never the API key. Timeouts, connection errors, 429 and 5xx are
retried `max_retries` times (so a call takes at most
`(max_retries + 1) x (timeout + backoff)`); other 4xx, non-JSON bodies and
replies of the wrong shape are not, since asking again will not fix them. The
LLM extractor is all-or-nothing: one malformed item rejects the whole reply.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from memstrata.errors import InvalidInput, MalformedInput, ProviderError
from memstrata.llm.base import ITEM_TYPES, LINE_KINDS, ItemDraft, Usage

MAX_REPLY_BYTES = 64 * 1024 * 1024


class _Transient(Exception):
    def __init__(self, message: str, retry_after: float = 0.5) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def endpoint(base_url: str, path: str) -> str:
    """Join `base_url` (e.g. `http://127.0.0.1:11434/v1`) and `path`, checking the scheme."""
    if not isinstance(base_url, str) or not re.match(r"https?://[^/\s]+", base_url):
        raise MalformedInput(f"base URL must start with http:// or https://, got {base_url!r}")
    return base_url.rstrip("/") + "/" + path.lstrip("/")


def post_json(
    url: str,
    payload: dict[str, Any],
    *,
    api_key: str | None = None,
    timeout: float = 30.0,
    max_retries: int = 1,
) -> dict[str, Any]:
    """POST `payload` as JSON and return the decoded JSON object.

    Raises:
        ProviderError: timeout, unreachable host, HTTP error, non-JSON or non-object body.
    """
    body = json.dumps(payload).encode("utf-8")
    headers = {"Content-Type": "application/json", "User-Agent": "memstrata"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    for attempt in range(max_retries + 1):
        try:
            raw = _post_once(url, body, headers, timeout)
            break
        except _Transient as exc:
            if attempt >= max_retries:
                raise ProviderError(f"{exc} (after {attempt + 1} attempt(s))") from exc
            time.sleep(min(exc.retry_after, 5.0))
    try:
        reply = json.loads(raw)
    except ValueError as exc:
        raise ProviderError(f"{url} did not answer JSON: {_snippet(raw)!r}") from exc
    if not isinstance(reply, dict):
        raise ProviderError(f"{url} answered JSON that is not an object: {_snippet(raw)!r}")
    return reply


def _post_once(url: str, body: bytes, headers: dict[str, str], timeout: float) -> bytes:
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    deadline = time.monotonic() + timeout
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            chunks: list[bytes] = []
            size = 0
            # The socket timeout bounds each read; the deadline bounds a server that trickles.
            while chunk := resp.read(65536):
                size += len(chunk)
                if size > MAX_REPLY_BYTES:
                    raise ProviderError(f"{url} reply larger than {MAX_REPLY_BYTES} bytes")
                if time.monotonic() > deadline:
                    raise _Transient(f"{url} timed out after {timeout}s")
                chunks.append(chunk)
            return b"".join(chunks)
    except urllib.error.HTTPError as exc:
        detail = b""
        with contextlib.suppress(OSError, http.client.HTTPException):
            detail = exc.read(2048)
        msg = f"{url} answered HTTP {exc.code}: {_snippet(detail)!r}"
        if exc.code == 429 or exc.code >= 500:
            raise _Transient(msg, _retry_after(exc.headers.get("Retry-After"))) from exc
        raise ProviderError(msg) from exc
    except TimeoutError as exc:
        raise _Transient(f"{url} timed out after {timeout}s") from exc
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise _Transient(f"{url} timed out after {timeout}s") from exc
        raise _Transient(f"cannot reach {url}: {exc.reason}") from exc
    except (http.client.HTTPException, OSError) as exc:
        raise _Transient(f"{url} connection failed: {exc!r}") from exc


def _retry_after(value: str | None) -> float:
    return float(value) if value and value.replace(".", "", 1).isdigit() else 0.5


def _snippet(raw: bytes, limit: int = 200) -> str:
    return raw[:limit].decode("utf-8", "replace")


def _messages(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


class ChatClient:
    """A `/chat/completions` client with per-client token accounting in `usage`.

    Args:
        base_url: API root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`.
        model: Model name sent with every request.
        api_key_env: Environment variable holding the key (read per call; optional).
        timeout: Seconds per attempt.
        max_retries: Extra attempts after a transient failure.

    Example:
        >>> c = ChatClient("http://127.0.0.1:11434/v1", "llama3.2")  # doctest: +SKIP
        >>> c.complete([{"role": "user", "content": "hi"}]), c.usage.calls  # doctest: +SKIP
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 30.0,
        max_retries: int = 1,
    ) -> None:
        if not model or not isinstance(model, str):
            raise MalformedInput("chat model name must be a non-empty string")
        if timeout <= 0 or max_retries < 0:
            raise InvalidInput("timeout must be > 0 and max_retries >= 0")
        self.url = endpoint(base_url, "chat/completions")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_retries = max_retries
        self.usage = Usage()

    def complete(
        self,
        messages: Sequence[dict[str, str]],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> str:
        """Send `messages` and return the first choice's text.

        Raises:
            ProviderError: transport failure, or a reply without a text choice.
        """
        payload = {"model": self.model, "messages": list(messages), "temperature": temperature}
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        key = os.environ.get(self.api_key_env)
        reply = post_json(
            self.url, payload, api_key=key, timeout=self.timeout, max_retries=self.max_retries
        )
        u = reply["usage"] if isinstance(reply.get("usage"), dict) else {}
        # Recorded before the checks below: a reply that turns out unusable was still billed.
        self.usage.record(_int(u.get("prompt_tokens")), _int(u.get("completion_tokens")))
        choices = reply.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ProviderError(f"{self.url} reply has no choices: {str(reply)[:200]!r}")
        message = choices[0].get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise ProviderError(f"{self.url} reply's first choice has no text content")
        return content


def _fit(text: str, max_chars: int) -> str:
    """Trim `text` to `max_chars`: whole lines if possible, else whole words, else a hard cut."""
    text = text.strip()
    if len(text) <= max_chars:
        return text
    head = text[: max_chars + 1]
    for sep in ("\n", " "):
        cut = head.rfind(sep)
        if cut > 0:
            return head[:cut].rstrip()
    return text[:max_chars]


_SUMMARY_PROMPT = """You condense notes for an AI agent's long-term memory.
Keep names, numbers, decisions and open tasks; drop chatter.
Reply with the summary text only, at most {max_chars} characters."""


class LLMSummarizer:
    """`Summarizer` backed by a chat model; the reply is trimmed to `max_chars` by `_fit`."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client

    def summarize(self, texts: Sequence[str], *, max_chars: int) -> str:
        if max_chars < 1:
            raise InvalidInput(f"max_chars must be >= 1, got {max_chars}")
        parts = [t.strip() for t in texts if t.strip()]
        if not parts:
            return ""
        system = _SUMMARY_PROMPT.format(max_chars=max_chars)
        out = self.client.complete(_messages(system, "\n---\n".join(parts)))
        if not out.strip():
            raise ProviderError(f"{self.client.url} returned an empty summary")
        return _fit(out, max_chars)


_FIELDS = frozenset({"type", "title", "content", "line_number", "confidence"})
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*)\n\s*```\s*$", re.DOTALL)
_EXTRACT_PROMPT = """Extract memory items from the numbered file below.
Reply with a JSON array only. Each element is an object with exactly these keys:
  "type": one of "entity", "claim", "task", "decision", "note"
  "title": a short one-line label (at most 120 characters)
  "content": the statement, self-contained
  "line_number": the 1-based line number it comes from
  "confidence": a number between 0 and 1
Reply [] if there is nothing worth remembering."""


class LLMExtractor:
    """`Extractor` backed by a chat model; every field of every item is validated."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client

    def extract(self, source_file: str, text: str) -> list[ItemDraft]:
        lines = text.splitlines()
        if not any(line.strip() for line in lines):
            return []
        numbered = "\n".join(f"{i:>5}| {line}" for i, line in enumerate(lines, start=1))
        reply = self.client.complete(
            _messages(_EXTRACT_PROMPT, f"File: {source_file}\n\n{numbered}")
        )
        return parse_items(reply, n_lines=len(lines), source=self.client.url)


_CLASSIFY_PROMPT = """You sort lines of an AI agent's work log for a compaction summary.
For each numbered line answer one label:
  "decision"   a choice about the work that was made or approved
  "constraint" a safety rule, prohibition, obligation or warning to respect
  "blocker"    something outside the work that holds it up
  "phase"      a change of phase, stage or milestone
  "objective"  the goal being worked towards
  null         anything else
Reply with a JSON array of exactly {n} labels, in line order, and nothing else."""


class LLMLineClassifier:
    """`LineClassifier` backed by a chat model; the reply must be one label per line."""

    def __init__(self, client: ChatClient, batch: int = 100) -> None:
        self.client = client
        self.batch = batch

    def classify_lines(self, lines: Sequence[str]) -> list[str | None]:
        out: list[str | None] = []
        for start in range(0, len(lines), self.batch):
            part = lines[start : start + self.batch]
            numbered = "\n".join(
                f"{i}| {' '.join(x.split())[:500]}" for i, x in enumerate(part, start=1)
            )
            reply = self.client.complete(_messages(_CLASSIFY_PROMPT.format(n=len(part)), numbered))
            out.extend(parse_labels(reply, len(part), self.client.url))
        return out


def parse_labels(reply: str, n: int, source: str = "LLM") -> list[str | None]:
    """A classifier reply: a JSON array of `n` labels (optionally fenced).

    Raises:
        ProviderError: not a JSON array of `n` known labels or nulls.
    """
    m = _FENCE.match(reply)
    try:
        data = json.loads(m.group(1) if m else reply)
    except ValueError as exc:
        raise ProviderError(f"{source}: classifier reply is not JSON: {reply[:200]!r}") from exc
    if not isinstance(data, list) or len(data) != n:
        raise ProviderError(f"{source}: classifier reply must be a JSON array of {n} labels")
    labels: list[str | None] = []
    for x in data:
        if x is not None and x not in LINE_KINDS:
            raise ProviderError(f"{source}: unknown label {str(x)[:40]!r}")
        labels.append(x)
    return labels


def parse_items(reply: str, *, n_lines: int, source: str = "LLM") -> list[ItemDraft]:
    """Parse an extractor reply (a JSON array, optionally fenced or under `"items"`).

    Raises:
        ProviderError: on the first malformed item; nothing is returned partially.
    """
    m = _FENCE.match(reply)
    try:
        data = json.loads(m.group(1) if m else reply)
    except ValueError as exc:
        raise ProviderError(f"{source}: extractor reply is not JSON: {reply[:200]!r}") from exc
    if isinstance(data, dict) and isinstance(data.get("items"), list):
        data = data["items"]
    if not isinstance(data, list):
        raise ProviderError(f"{source}: extractor reply is not a JSON array")
    out: list[ItemDraft] = []
    for i, obj in enumerate(data):
        if not isinstance(obj, dict) or set(obj) != _FIELDS:
            keys = ", ".join(sorted(_FIELDS))
            raise ProviderError(f"{source}: item {i} must have keys {keys}; got {str(obj)[:200]!r}")
        kind, title, content = obj["type"], obj["title"], obj["content"]
        if kind not in ITEM_TYPES or not isinstance(title, str) or not isinstance(content, str):
            raise ProviderError(f"{source}: item {i} has a bad type, title or content")
        line = obj["line_number"]
        if isinstance(line, int) and not isinstance(line, bool) and line > n_lines:
            raise ProviderError(f"{source}: item {i} line_number {line} > {n_lines} lines")
        try:
            out.append(ItemDraft(kind, title.strip(), content.strip(), line, obj["confidence"]))
        except MalformedInput as exc:
            raise ProviderError(f"{source}: item {i}: {exc}") from exc
    return out


__all__ = [
    "ChatClient",
    "LLMExtractor",
    "LLMLineClassifier",
    "LLMSummarizer",
    "endpoint",
    "parse_items",
    "parse_labels",
    "post_json",
]
