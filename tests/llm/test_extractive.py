"""The deterministic defaults: extractive summaries and rule-based extraction."""

from __future__ import annotations

import dataclasses

import pytest

from memstrata.errors import InvalidInput, MalformedInput
from memstrata.llm import chat_client, make_extractor, make_summarizer
from memstrata.llm.base import Extractor, ItemDraft, Summarizer
from memstrata.llm.extractive import ExtractiveSummarizer, RuleExtractor
from memstrata.llm.openai_compat import LLMExtractor, LLMSummarizer

NOTES = """# Billing service

The billing service uses Postgres for invoices.
ok
Invoices are generated nightly by the billing service.
lol
The billing service requires a Stripe key in production.
Lunch was good today.
Postgres invoices are backed up hourly by the billing cron.
"""

SESSION = """Fixed the flaky login test.
The login test depended on wall-clock time.
We now freeze time in the login test fixture.
Coffee machine is broken again.
"""


def lines_of(*texts: str) -> list[str]:
    return [ln.strip() for t in texts for ln in t.splitlines() if ln.strip()]


def test_summary_respects_max_chars_keeps_whole_lines_and_order() -> None:
    s = ExtractiveSummarizer()
    source = lines_of(NOTES, SESSION)
    for max_chars in range(1, 400, 7):
        out = s.summarize([NOTES, SESSION], max_chars=max_chars)
        assert len(out) <= max_chars
        picked = out.split("\n") if out else []
        assert all(line in source for line in picked)  # whole input lines, never cut
        positions = [source.index(line) for line in picked]
        assert positions == sorted(positions)  # source order
    # When everything fits, everything is kept.
    assert s.summarize([NOTES, SESSION], max_chars=10_000) == "\n".join(source)


def test_summary_prefers_informative_lines() -> None:
    out = ExtractiveSummarizer().summarize([NOTES], max_chars=120)
    assert "billing" in out.lower()
    assert "Lunch was good today." not in out
    assert "ok" not in out.split("\n")


def test_summary_is_stable_and_skips_duplicates() -> None:
    s = ExtractiveSummarizer()
    text = "alpha beta gamma\nalpha beta gamma\nAlpha, beta; gamma!\ndelta epsilon\n"
    first = s.summarize([text], max_chars=200)
    assert (
        first
        == s.summarize([str(text)], max_chars=200)
        == ExtractiveSummarizer().summarize([text], max_chars=200)
    )
    assert first == "alpha beta gamma\ndelta epsilon"


def test_summary_splits_only_lines_that_cannot_fit_whole() -> None:
    para = (
        "Memstrata keeps files as the source of truth. The SQLite index is derived. "
        "Vectors are stored beside it. Nothing else matters here."
    )
    out = ExtractiveSummarizer().summarize([para], max_chars=60)
    assert 0 < len(out) <= 60
    assert all(sentence in para for sentence in out.split("\n"))
    assert all(sentence.endswith(".") for sentence in out.split("\n"))


def test_summary_edges() -> None:
    s = ExtractiveSummarizer()
    assert s.summarize([], max_chars=50) == ""
    assert s.summarize(["", "   \n\n", "---"], max_chars=50) == ""
    assert s.summarize(["a line far longer than the budget allows"], max_chars=5) == ""
    with pytest.raises(InvalidInput):
        s.summarize(["x"], max_chars=0)
    with pytest.raises(InvalidInput):
        s.summarize("not a list", max_chars=10)  # type: ignore[arg-type]


MARKDOWN = """# Payments Gateway

Some intro text without a rule.

## Open questions

Decision: use SQLite for the local index
We decided to ship weekly on Thursdays.
- [ ] write the migration guide
- [x] set up CI
* TODO: rotate the API keys
The gateway uses Stripe for card payments.
It is fast.
Is the gateway stateless?

```python
# TODO: this is code, not a task
Decision: neither is this
```
`memstrata` requires Python 3.11.
"""


def test_rule_extractor_finds_typed_items_with_line_numbers() -> None:
    items = RuleExtractor().extract("notes/payments.md", MARKDOWN)
    got = [(i.type, i.line_number, i.title) for i in items]
    assert got == [
        ("entity", 1, "Payments Gateway"),
        ("note", 5, "Open questions"),
        ("decision", 7, "use SQLite for the local index"),
        ("decision", 8, "We decided to ship weekly on Thursdays"),
        ("task", 9, "write the migration guide"),
        ("task", 11, "rotate the API keys"),
        ("claim", 12, "The gateway uses Stripe for card payments"),
        ("claim", 20, "`memstrata` requires Python 3.11"),
    ]
    lines = MARKDOWN.splitlines()
    for item in items:
        assert 0.0 < item.confidence <= 1.0
        assert item.title.split()[0].strip("`") in lines[item.line_number - 1]
    assert items[0].content == "Payments Gateway: Some intro text without a rule."
    assert items[2].confidence > items[3].confidence  # an explicit label beats a phrasing
    assert RuleExtractor().extract("notes/payments.md", MARKDOWN) == items


def test_rule_extractor_on_plain_text_and_empty_input() -> None:
    assert RuleExtractor().extract("empty.txt", "") == []
    items = RuleExtractor().extract("log.txt", "FIXME(ana): flaky test\nThe cache is cold.\n")
    assert [(i.type, i.line_number) for i in items] == [("task", 1), ("claim", 2)]
    long_line = "Decision: " + "word " * 500
    (item,) = RuleExtractor().extract("x.md", long_line)
    assert len(item.title) <= 81 and item.title.endswith("…")


def test_item_draft_validates_every_field() -> None:
    ok = ItemDraft("claim", "t", "c", 1, 1)
    assert ok.confidence == 1.0 and isinstance(ok.confidence, float)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ok.title = "x"  # type: ignore[misc]
    bad = [
        ("fact", "t", "c", 1, 0.5),
        ("claim", "", "c", 1, 0.5),
        ("claim", "a\nb", "c", 1, 0.5),
        ("claim", "t", "c", 0, 0.5),
        ("claim", "t", "c", True, 0.5),
        ("claim", "t", "c", 1, 1.5),
        ("claim", "t", "c", 1, "0.5"),
        ("claim", "t" * 201, "c", 1, 0.5),
        ("claim", "t", None, 1, 0.5),
    ]
    for args in bad:
        with pytest.raises(MalformedInput):
            ItemDraft(*args)  # type: ignore[arg-type]


def test_factories(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(make_summarizer(), ExtractiveSummarizer)
    assert isinstance(make_summarizer("extractive"), Summarizer)
    assert isinstance(make_extractor("rules"), RuleExtractor)
    assert isinstance(make_extractor(), Extractor)
    s = make_summarizer("openai:llama3.2@http://127.0.0.1:11434/v1")
    assert isinstance(s, LLMSummarizer)
    assert s.client.url == "http://127.0.0.1:11434/v1/chat/completions"
    assert s.client.model == "llama3.2"
    assert s.client.api_key_env == "OPENAI_API_KEY"
    with pytest.raises(MalformedInput):
        make_extractor("openai")  # no model, no base URL
    monkeypatch.setenv("MEMSTRATA_LLM_BASE_URL", "http://10.1.2.3:8000/v1")
    monkeypatch.setenv("MEMSTRATA_LLM_MODEL", "qwen2.5")
    monkeypatch.setenv("MEMSTRATA_LLM_API_KEY", "k")
    e = make_extractor("openai")
    assert isinstance(e, LLMExtractor)
    assert (e.client.url, e.client.model) == ("http://10.1.2.3:8000/v1/chat/completions", "qwen2.5")
    assert e.client.api_key_env == "MEMSTRATA_LLM_API_KEY"
    assert chat_client("openai:other").model == "other"
    for bad in ("gpt", "anthropic:x@http://h", "openai:m@file:///etc"):
        with pytest.raises(MalformedInput):
            make_summarizer(bad)
