"""`memstrata context` starts on every agent session (issue 21 item 7: <= 150 ms): it
loads no module it does not use. Speed itself is `memstrata bench ops`' (the cold start
against `python -c pass`); this test keeps out what was cut from it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memstrata import Store

PROBE = (
    "import atexit, runpy, sys\n"
    "atexit.register(lambda: print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr))\n"
    "sys.argv = ['memstrata', '--home', sys.argv[1], '--agent', 'finn', 'context']\n"
    "runpy.run_module('memstrata', run_name='__main__', alter_sys=True)\n"
)
NOT_FOR_CONTEXT = {
    "logging": "only when a background job or trigger fails",
    "difflib": "only to suggest a name or a config key",
    "tempfile": "only for a private copy of the index (a full disk)",
    "memstrata.search.priors": "ranking rules: the context ranks nothing",
    "memstrata.search.engine": "the search engine: the context searches nothing",
}


def test_context_loads_neither_ranking_rules_nor_error_path_modules(home: Path) -> None:
    with Store(home, agent="finn") as store:
        mem = store.agent()
        mem.now.update("Ship the importer", ["write the tests"])
        mem.log.append("THOUGHT", "Chose SQLite for the index")
        store.ledger.publish("decision", "Redis for session storage")
    r = subprocess.run(
        [sys.executable, "-c", PROBE, str(home)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ},
    )
    assert r.returncode == 0, r.stderr
    assert "Ship the importer" in r.stdout  # the context itself came back
    (line,) = [x for x in r.stderr.splitlines() if x.startswith("MODULES ")]
    loaded = set(line.split()[1:])
    assert "memstrata.assembly.context" in loaded
    assert not {m: why for m, why in NOT_FOR_CONTEXT.items() if m in loaded}
