"""Config is validated on load: every problem is named, none takes the store down."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.config import SETTINGS, commented_template, load_config
from memstrata.errors import MalformedInput
from memstrata.store.view import Store


def _load(home: Path, text: str, name: str = "config.toml"):  # type: ignore[no-untyped-def]
    home.mkdir(parents=True, exist_ok=True)
    (home / name).write_text(text)
    return load_config(home, env={})


def test_unknown_section_gets_did_you_mean(tmp_path: Path) -> None:
    cfg = _load(tmp_path, '[serch]\nembedder = "fake"\n')
    assert cfg.embedder is None
    assert any("[serch]" in p and "did you mean 'search'" in p for p in cfg.problems)


def test_unknown_key_named_with_suggestion(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "[log]\ncompact_entrys = 5\n")
    assert cfg.log_compact_entries == 100
    assert any("compact_entrys" in p and "compact_entries" in p for p in cfg.problems)


def test_string_no_is_not_true(tmp_path: Path) -> None:
    cfg = _load(tmp_path, '[tools.memory]\nenabled = "no"\n')
    assert cfg.memory_tools_enabled is True  # the default, not bool("no")
    assert any("enabled" in p and "true or false" in p for p in cfg.problems)


def test_wrong_types_and_ranges(tmp_path: Path) -> None:
    cfg = _load(
        tmp_path,
        '[log]\ncompact_bytes = "big"\n[sessions]\nretention_days = -1\n'
        '[search]\nfusion = "max"\n[kinds]\ndecision = "soon"\n',
    )
    assert (cfg.log_compact_bytes, cfg.session_retention_days, cfg.fusion) == (
        51200,
        30,
        "zsum",
    )
    text = "\n".join(cfg.problems)
    for needle in ("compact_bytes", "retention_days", "fusion", "decision"):
        assert needle in text


def test_invalid_toml_keeps_defaults_and_says_so(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "[log\ncompact_bytes = 1\n")
    assert cfg.log_compact_bytes == 51200
    assert len(cfg.problems) == 1 and "config.toml" in cfg.problems[0]
    with pytest.raises(MalformedInput):
        load_config(tmp_path, strict=True, env={})


def test_store_opens_with_a_broken_config(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text("not toml at all [[[")
    with Store(home, agent="finn") as s:
        s.agent().log.append("THOUGHT", "still works")
        assert s.config.problems


def test_seed_003_config_yaml(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "tools:\n  memory:\n    enabled: false\n", name="config.yaml")
    assert cfg.memory_tools_enabled is False
    assert cfg.origins["tools.memory.enabled"] == "config.yaml"
    assert cfg.problems == ()


def test_origins_and_env_override(tmp_path: Path) -> None:
    _load(tmp_path, '[search]\nembedder = "fake"\nfusion = "rrf"\n')
    cfg = load_config(tmp_path, env={"MEMSTRATA_EMBEDDER": "local"})
    rows = {name: (value, origin) for name, value, origin in cfg.effective()}
    assert rows["search.embedder"] == ("local", "env MEMSTRATA_EMBEDDER")
    assert rows["search.fusion"] == ("rrf", "config.toml")
    assert rows["log.compact_bytes"] == (51200, "default")


def test_commented_template_is_valid_and_complete(tmp_path: Path) -> None:
    text = commented_template()
    for s in SETTINGS:
        assert f"# {s.key} = " in text
    uncommented = "\n".join(
        line[2:] if (line.startswith("# ") and "=" in line) or line.startswith("# [") else ""
        for line in text.splitlines()
    )
    cfg = _load(
        tmp_path, "\n".join(x.split("    #")[0].split("  #")[0] for x in uncommented.splitlines())
    )
    assert cfg.problems == (), cfg.problems
