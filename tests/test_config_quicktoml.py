"""`config.quicktoml` reads the plain subset of TOML as `tomllib` does and declines the
rest (None), so a config file means the same whichever reads it."""

from __future__ import annotations

import itertools
import random
import tomllib
from pathlib import Path

import pytest

from memstrata.config import commented_template, load_config, quicktoml

VALUES = [
    '"fake"',
    '""',
    '"tab\there é ✓"',
    "'C:\\path\\x'",
    "''",
    "true",
    "false",
    "0",
    "-0",
    "+7",
    "42",
    "-12345678901234567890",
    "0.5",
    "-0.0",
    "+3.25",
]
DECLINED = [
    'a = "esc\\n"',
    "a = [1, 2]",
    "a = {x = 1}",
    "a = 1_000",
    "a = 0x1f",
    "a = 1e3",
    "a = inf",
    "a = 1979-05-27",
    'a = """x"""',
    "a.b = 1",
    '"quoted" = 1',
    "[a]\n[a]",
    "a = 1\na = 2",
    "a = 1\n[a]",
    "[a.b]\n[a]",
    "[ a ]",
    "a = 01",
    "a = 1.",
    "a =",
    "a = truex",
    "a = 1 # bell \x07",
    "a = 'line\rbreak'",
    "[[array]]",
    "\ufeffa = 1",
]


def _agrees(text: str) -> None:
    got = quicktoml.loads(text)
    try:
        want = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        assert got is None, text
        return
    assert got is None or got == want, text
    if got is not None:  # types too: True is not 1, 0.0 is not 0
        assert repr(got) == repr(want), text


def test_every_plain_line_shape_reads_as_tomllib_reads_it() -> None:
    read = 0
    for value, space, comment, ending in itertools.product(
        VALUES, ("", " ", "\t "), ("", "# a note", " #x", "#"), ("\n", "\r\n", "")
    ):
        text = (
            f"[search]{space}{comment}{ending}key_1-x{space}={space}{value}{space}{comment}{ending}"
        )
        _agrees(text)
        read += quicktoml.loads(text) is not None
    assert read >= 450  # the subset is read, not declined (45 texts join two lines)


def test_other_toml_is_declined_or_refused() -> None:
    for text in DECLINED:
        assert quicktoml.loads(text) is None, text
        _agrees(text)


def test_random_files_of_plain_lines_agree_with_tomllib() -> None:
    rng = random.Random(21)
    lines = [
        "[search]",
        "[log]",
        "[tools.memory]",
        "[tools]",
        "# comment",
        "",
        "  ",
        *[f"{k} = {v}" for k in ("a", "b", "embedder", "2") for v in VALUES[:8]],
    ]
    for _ in range(3000):
        _agrees("\n".join(rng.choice(lines) for _ in range(rng.randint(0, 8))))


def test_the_init_template_and_a_usual_config_skip_tomllib() -> None:
    template = commented_template()
    assert quicktoml.loads(template) == tomllib.loads(template)
    usual = '[search]\nembedder = "fake"\n\n[log]\nauto_compact = false  # bench\n'
    assert quicktoml.loads(usual) == tomllib.loads(usual)


@pytest.mark.parametrize(
    "body", ["[log]\nauto_compact = false\n", "[search]\nembedder = 'fake'\n", "x = [1]\n"]
)
def test_load_config_gives_the_config_tomllib_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str
) -> None:
    (tmp_path / "config.toml").write_text(body, encoding="utf-8")
    quick = load_config(tmp_path, env={})
    monkeypatch.setattr(quicktoml, "loads", lambda text: None)
    assert load_config(tmp_path, env={}) == quick
