"""`memstrata context` starts on every agent session (issue 21 item 7: <= 150 ms): it
loads no module it does not use. Speed itself is `memstrata bench ops`' (the cold start
against `python -c pass`); this test keeps out what was cut from it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memstrata import Store

RUN_CONTEXT = (
    "sys.argv = ['memstrata', '--home', sys.argv[1], '--agent', 'finn', 'context']\n"
    "runpy.run_module('memstrata', run_name='__main__', alter_sys=True)\n"
)


def _context(probe: str, home: Path) -> subprocess.CompletedProcess[str]:
    """`memstrata --home home --agent finn context` run by `probe` (which patches what it
    counts and reports it on stderr at exit) in a fresh interpreter."""
    code = probe + RUN_CONTEXT
    r = subprocess.run(
        [sys.executable, "-c", code, str(home)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ},
    )
    assert r.returncode == 0, r.stderr
    return r


def _reported(r: subprocess.CompletedProcess[str], tag: str) -> str:
    """The one line of `r`'s stderr the probe printed starting with `tag`."""
    (line,) = [x for x in r.stderr.splitlines() if x.startswith(tag)]
    return line


PROBE = (
    "import atexit, runpy, sys\n"
    "atexit.register(lambda: print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr))\n"
)
NOT_FOR_CONTEXT = {
    "dataclasses": "value classes are `memstrata.values.value_type`: no class built by exec",
    "inspect": "dataclasses' import of it (with ast, dis, tokenize): 67M instructions",
    "argparse": "a plain context line is read by `cli.quick`; argparse reads any other",
    "gettext": "argparse's import of it (with locale)",
    "logging": "only when a background job or trigger fails",
    "difflib": "only to suggest a name or a config key",
    "tempfile": "only for a private copy of the index (a full disk)",
    "shutil": "argparse's help width, given (`cli.parser._help_width`); zlib, bz2, lzma with it",
    "memstrata.search.priors": "ranking rules: the context ranks nothing",
    "memstrata.search.engine": "the search engine: the context searches nothing",
    "memstrata.assembly.ignore": "ignore-memory rules: only for a prompt or transcript talk",
    "memstrata.lifecycle.moot": "moot rules: only for an agent with an open error",
    "memstrata.lifecycle.statements": "statement readers: only for prompts or transcript talk",
    "memstrata.reading.english": "English rules (a dozen regexes): only for statements",
    "memstrata.assembly.predecessor": "other rooms' ledger: only with a brief or a room",
    "memstrata.lifecycle.flushed": "flushed copies: only when CONTEXT.md holds a flush",
    "memstrata.search.copies": "the same",
    "memstrata.search.query": "search's value types: the context searches nothing",
    "memstrata.layers.items": "project items: the context reads none",
    "memstrata.layers.rooms": "room handles: only for a store with rooms, or to publish",
}


def test_context_loads_neither_ranking_rules_nor_error_path_modules(home: Path) -> None:
    with Store(home, agent="finn") as store:
        mem = store.agent()
        mem.now.update("Ship the importer", ["write the tests"])
        mem.log.append("THOUGHT", "Chose SQLite for the index")
        store.ledger.publish("decision", "Redis for session storage")
    r = _context(PROBE, home)
    assert "Ship the importer" in r.stdout  # the context itself came back
    line = _reported(r, "MODULES ")
    loaded = set(line.split()[1:])
    assert "memstrata.assembly.context" in loaded
    assert not {m: why for m, why in NOT_FOR_CONTEXT.items() if m in loaded}


LAZY_PROBE = (
    "import atexit, runpy, sys\n"
    "from memstrata.reading.patterns import LazyPattern\n"
    "def report():\n"
    "    found = []\n"
    "    for name in ('memstrata.layers.durable', 'memstrata.lifecycle.statements'):\n"
    "        for value in vars(sys.modules.get(name, sys)).values():\n"
    "            items = value if isinstance(value, list) else [value]\n"
    "            for v in items:\n"
    "                v = v[0] if isinstance(v, tuple) else v\n"
    "                if isinstance(v, LazyPattern):\n"
    "                    found.append(v._compiled is not None)\n"
    "    print('LAZY', len(found), sum(found), file=sys.stderr)\n"
    "atexit.register(report)\n"
)


def test_context_compiles_none_of_the_write_side_rules_it_imports(home: Path) -> None:
    """The durable-fact exclusions are imported by the context (through the layers) but
    compiled only when a write runs them (`memstrata.reading.patterns.LazyPattern`); the
    statement readers, when a process loads them, compile theirs as lazily (a context
    no longer loads them: `NOT_FOR_CONTEXT`)."""
    with Store(home, agent="finn") as store:
        store.agent().now.update("Ship the importer", ["write the tests"])
    r = _context(LAZY_PROBE, home)
    assert "Ship the importer" in r.stdout
    line = _reported(r, "LAZY ")
    patterns, compiled = map(int, line.split()[1:])
    assert patterns >= 10 and compiled == 0


def test_a_lazy_pattern_compiles_once_and_matches_as_re_does() -> None:
    import re

    from memstrata.reading.patterns import LazyPattern

    lazy = LazyPattern(r"\b(iteration|step) #?(\d+)\b", re.I)
    assert lazy._compiled is None
    text = "Step 3 passed, iteration #12 failed"
    real = re.compile(r"\b(iteration|step) #?(\d+)\b", re.I)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
    compiled = lazy._compiled
    assert compiled is not None
    assert lazy.findall(text) == real.findall(text)
    assert lazy.sub("N", text) == real.sub("N", text)
    assert lazy.split(text) == real.split(text)
    assert lazy.search(text) is not None and lazy.match(text) is not None
    assert lazy._compiled is compiled


DROPPED_PROBE = (
    "import atexit, runpy, sys\n"
    "from memstrata.lifecycle import moot\n"
    "calls = []\n"
    "real = moot.dropped\n"
    "moot.dropped = lambda *a: calls.append(1) or real(*a)\n"
    "atexit.register(lambda: print('DROPPED', len(calls), file=sys.stderr))\n"
)


def test_context_reads_each_decision_once_for_all_the_facts_it_may_replace(home: Path) -> None:
    """A fact a later decision dropped is shown as replaced (`lifecycle.retired`): each
    decision's dropped names are read once, not once per fact (read per fact, 300 facts
    before 500 decisions cost the context 3.2 to 4.0 s of CPU; read once, 0.17 s)."""
    with Store(home, agent="finn") as store:
        mem = store.agent()
        mem.facts.set("db_engine", "SQLite, one tidepool.db file")
        for i in range(29):
            mem.facts.set(f"service{i}_port", f"Gateway{i} listens on port {8000 + i}")
        mem.decisions.record("Move to PostgreSQL 16 instead of SQLite")
        for i in range(9):
            mem.decisions.record(f"Parse format{i} with Module{i}; no Cache{i}")
    r = _context(DROPPED_PROBE, home)
    assert "- db_engine (" in r.stdout and "[replaced: see mem-" in r.stdout, r.stdout
    line = _reported(r, "DROPPED ")
    assert 1 <= int(line.split()[1]) <= 10  # read per fact: 30 x 10


def test_context_reads_each_record_once_for_all_the_warnings_it_may_retire(home: Path) -> None:
    """A warning a later record fixed or dropped is left out of the rules in force
    (`lifecycle.retired`): each later record is read once for all the warnings, not once
    per warning (20 warnings before 500 decisions: 1,000 readings of a record, now 50)."""
    with Store(home, agent="finn") as store:
        store.ledger.publish("warning", "Polling GET /orders hits the 429 rate limit")
        for i in range(9):
            store.ledger.publish("warning", f"Gateway{i} drops idle sockets after {60 + i} s")
        store.agent().decisions.record("Orders come by webhook; no polling")
        for i in range(9):
            store.agent().decisions.record(f"Parse format{i} with Module{i}; no Cache{i}")
    r = _context(DROPPED_PROBE, home)
    assert "no longer in force (history keeps them): warning mem-" in r.stdout, r.stdout
    line = _reported(r, "DROPPED ")
    assert 1 <= int(line.split()[1]) <= 20  # read per warning: about 10 x 10


SIGNATURE_PROBE = (
    "import atexit, inspect, runpy, sys\n"
    "calls = []\n"
    "real = inspect.signature\n"
    "inspect.signature = lambda *a, **k: calls.append(a[0]) or real(*a, **k)\n"
    "atexit.register(lambda: print('SIGNATURES', *calls, file=sys.stderr))\n"
)


def test_context_builds_no_dataclass_signature(home: Path) -> None:
    """A dataclass without a docstring gets one from `inspect.signature` when its module
    is imported (14 of those a context imports, Config's of 77 fields among them): each
    value type the context loads says what it is instead."""
    with Store(home, agent="finn") as store:
        store.agent().now.update("Ship the importer", ["write the tests"])
    r = _context(SIGNATURE_PROBE, home)
    assert "Ship the importer" in r.stdout
    line = _reported(r, "SIGNATURES")
    assert line == "SIGNATURES"


HISTORY_PROBE = (
    "import atexit, runpy, sys\n"
    "from memstrata.layers.decisions import Decisions\n"
    "calls = []\n"
    "real = Decisions.history\n"
    "Decisions.history = lambda *a, **k: calls.append(1) or real(*a, **k)\n"
    "atexit.register(lambda: print('HISTORY', len(calls), file=sys.stderr))\n"
)


def test_context_asks_for_the_decisions_history_once_when_there_is_none(home: Path) -> None:
    """The sections share what they read, an empty answer included: with facts and LOG
    entries but no decision, the history of decisions was asked of the index twice."""
    with Store(home, agent="finn") as store:
        mem = store.agent()
        mem.facts.set("db_engine", "SQLite")
        mem.log.append("THOUGHT", "Chose SQLite for the index")
    r = _context(HISTORY_PROBE, home)
    assert "db_engine" in r.stdout
    line = _reported(r, "HISTORY ")
    assert line == "HISTORY 1"


TEXTS_PROBE = (
    "import atexit, runpy, sys\n"
    "from memstrata.layers.versions import Versions\n"
    "asked = []\n"
    "real = Versions.texts\n"
    "def texts(self, path, ids):\n"
    "    ids = list(ids)\n"
    "    asked.extend(ids)\n"
    "    return real(self, path, ids)\n"
    "Versions.texts = texts\n"
    "atexit.register(lambda: print('TEXTS', len(asked), file=sys.stderr))\n"
)


def test_context_reads_the_first_and_last_now_of_a_session_only(home: Path) -> None:
    """A session with no prompt in LOG.md is told by the objectives NOW.md had in its span
    (the first as its goal, the last as its outcome): those two texts are read, not every
    version between (a NOW.md updated 12 times: 2 texts read, and parsed, instead of 12)."""
    with Store(home, agent="finn") as store:
        mem = store.agent()
        for i in range(12):
            mem.now.update(f"Objective {i}", ["measure"])
            mem.log.append("TOOL_USE", f"ran step {i}")
    r = _context(TEXTS_PROBE, home)
    assert "goal: Objective 1; outcome: NOW: Objective 11" in r.stdout
    line = _reported(r, "TEXTS ")
    assert line == "TEXTS 2"


def test_context_of_a_store_with_a_plain_config_file_imports_no_tomllib(home: Path) -> None:
    """A usual config file (tables, strings, booleans, numbers) is read by
    `config.quicktoml`; `tomllib`'s import cost a context more than the file's reading."""
    with Store(home, agent="finn") as store:
        store.agent().now.update("Ship the importer", ["write the tests"])
    (home / "config.toml").write_text("[log]\nauto_compact = false  # kept\n", encoding="utf-8")
    r = _context(PROBE, home)
    assert "Ship the importer" in r.stdout
    loaded = set(_reported(r, "MODULES ").split()[1:])
    assert "memstrata.config.quicktoml" in loaded and "tomllib" not in loaded
