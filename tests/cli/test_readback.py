"""What the agent reads back at a session start, checked as the agent receives it.

Defects found by reading the contexts of `memstrata bench agent` (ml-wrensong and the
other development scenarios) and by a fresh user's tour, each through the surface it
showed on: the hooks fed Claude Code's JSON (`tests/claude_code.py`; the session-start
context from the `memstrata hook session-start` process), the CLI as a process.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.claude_code import EXE, ClaudeSession

from memstrata import Store
from memstrata.operations.loop import log_tool

OK = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}


def _section(context: str, title: str) -> str:
    """The lines of the context section whose title starts with `title`."""
    for part in context.split("\n## ")[1:]:
        if part.startswith(title):
            return part.split("\n", 1)[1] if "\n" in part else ""
    return ""


def test_a_failed_command_run_again_with_more_arguments_is_not_an_open_error(
    home: Path, tmp_path: Path
) -> None:
    """ml-wrensong: `fetch_weights.py cnn14` failed (a dead link), `fetch_weights.py cnn14
    --url <new link>` worked, `train --seeds 1` ran out of GPU memory and `train --seeds 1 2
    3` ran: the context still listed all of them under "Open errors (nothing later resolved
    them)", five of its six lines already resolved. A dry run of a failed command resolves
    nothing."""
    s = ClaudeSession(home, tmp_path / "proj")
    s.call("user-prompt-submit", s.prompt("Download the CNN14 weights and train it."))
    fetch = "uv run python scripts/fetch_weights.py cnn14"
    s.call(
        "post-tool-use-failure",
        s.tool("Bash", {"command": fetch}, None, failed="Exit code 1\nHTTPError: 404 Not Found"),
    )
    s.call("post-tool-use", s.tool("Bash", {"command": fetch + " --url https://z.org/r/1"}, OK))
    train = "uv run python -m wrensong.train --seeds 1"
    oom = "Exit code 1\ntorch.OutOfMemoryError: CUDA out of memory"
    s.call("post-tool-use-failure", s.tool("Bash", {"command": train}, None, failed=oom))
    s.call("post-tool-use", s.tool("Bash", {"command": train + " 2 3"}, OK))
    apply = "ansible-playbook site.yml --tags backup"
    denied = "Exit code 2\nfatal: restic init: 401 key restricted to bucket web"
    s.call("post-tool-use-failure", s.tool("Bash", {"command": apply}, None, failed=denied))
    s.call("post-tool-use", s.tool("Bash", {"command": apply + " --check --diff"}, OK))
    errors = _section(s.context(), "Open errors (nothing later resolved them)")
    assert "restricted to bucket web" in errors  # a dry run succeeding resolves nothing
    assert "404" not in errors and "out of memory" not in errors, errors


def test_an_ignore_memory_aside_is_not_the_session_goal_or_outcome(
    home: Path, tmp_path: Path
) -> None:
    """ml-wrensong s07: the session's line in "Recent activity" read "user: Ignore memory,
    unrelated: how do I see which process is holding the GPU?; ... outcome: nvidia-smi",
    the aside and its answer, and lost what the session did (the export is 312 MB against a
    20 MB budget). With several prompts that set no goal, the first one frames the session,
    not the last question asked."""
    s = ClaudeSession(home, tmp_path / "proj")
    s.call("user-prompt-submit", s.prompt("The app team wants the model this week."))
    s.call("post-tool-use", s.tool("Bash", {"command": "python export.py"}, OK))
    s.call("user-prompt-submit", s.prompt("How large may the model file be for the app?"))
    s.call("stop", s.answer("The export works, but the model is 312 MB against a 20 MB budget."))
    s.call("user-prompt-submit", s.prompt("Ignore memory, unrelated: how do I list open ports?"))
    s.call("stop", s.answer("ss -tulpn, or lsof -i -P -n."))
    activity = _section(ClaudeSession(home, tmp_path / "proj").context(), "Recent activity")
    line = next(x for x in activity.splitlines() if x.startswith("- "))
    assert "user: The app team wants the model this week." in line, activity
    assert "outcome: The export works, but the model is 312 MB" in line, activity
    assert "open ports" not in activity and "ss -tulpn" not in activity, activity


def test_a_rule_the_user_states_from_now_on_replaces_the_decision_it_names(
    home: Path, tmp_path: Path
) -> None:
    """ml-wrensong s04: the user said "The rare species are what the volunteers care about,
    so from now on we judge models by macro-F1 over the 40 species, not top-1 accuracy."
    Nothing recorded it ("from now on" counted only at a sentence's start), so every later
    context held the replaced "Top-1 accuracy ... is the headline metric" as in force and
    not the user's rule."""
    with Store(home, agent="me") as st:
        old = st.agent().decisions.record(
            "Top-1 accuracy on the validation set is the headline metric for comparing runs"
        )
    s = ClaudeSession(home, tmp_path / "proj")
    said = (
        "I showed the confusion matrix to Dr. Okafor. The rare species are what the volunteers"
        " care about, so from now on we judge models by macro-F1 over the 40 species, not"
        " top-1 accuracy. Keep accuracy only as a side number."
    )
    s.call("user-prompt-submit", s.prompt(said))
    s.call("stop", s.answer("Runs are compared by macro-F1 now."))
    decisions = _section(s.context(), "Decisions and constraints in force")
    assert "so from now on we judge models by macro-F1 over the 40 species" in decisions
    assert "headline metric" not in decisions, decisions
    with Store(home, agent="me") as st:
        history = {e.id: by for e, by in st.agent().decisions.history()}
    assert history[old.id] is not None  # replaced, kept readable in history


def test_an_unknown_command_names_the_one_to_use(home: Path) -> None:
    """A fresh user types `memstrata recall ...` (the MCP tool is recall_memory) and got
    "memstrata: error: memstrata: argument COMMAND: invalid choice: 'recall' (choose from
    'init', 'config', ... 38 names)": the program named twice and no pointer to `search`."""
    env = {**os.environ, "MEMSTRATA_HOME": str(home)}
    for typed, hint in (("recall", "'memstrata search TEXT'"), ("serch", "'memstrata search'")):
        r = subprocess.run(
            [EXE, typed, "the database"], capture_output=True, text=True, env=env, timeout=60
        )
        assert r.returncode == 2
        assert r.stderr == (
            f"memstrata: error: unknown command '{typed}'; did you mean {hint}?"
            " (see 'memstrata --help')\n"
        ), r.stderr


def test_a_question_the_user_asks_is_not_flushed_into_context_md_as_a_decision(
    home: Path, tmp_path: Path
) -> None:
    """ops-lighthouse: the pre-compact flush wrote "- Decision: The Lisbon show asks for
    better sound: can we go from 128 to 192 kbps MP3? We have about 300 listeners at peak
    on Friday nights." into CONTEXT.md, the file the user curates: a question, filed as a
    decision. A statement beside it still counts."""
    s = ClaudeSession(home, tmp_path / "proj")
    s.prompt(
        "The Lisbon show asks for better sound: can we go from 128 to 192 kbps MP3? We have"
        " about 300 listeners at peak on Friday nights."
    )
    s.answer("Yes: 300 listeners at 192 kbps is about 58 Mbit/s, well within the uplink.")
    s.prompt("Decision: we stream the main mount at 192 kbps. Any objections?")
    s.answer("None from me.")
    s.hook("pre-compact", s.payload("PreCompact", trigger="auto"))
    context = (home / "agents" / "me" / "memory" / "CONTEXT.md").read_text()
    assert "we stream the main mount at 192 kbps" in context
    assert "can we go from 128 to 192" not in context, context


def test_a_log_digest_does_not_list_a_replaced_decision_as_one(home: Path) -> None:
    """coding-tidepool: the LOG compaction of day 29 wrote "- Decision: Members want a PDF
    receipt when they return a tool. Let's do that with WeasyPrint, I like HTML templates."
    into LOG.md's digest, two weeks after fpdf2 had replaced WeasyPrint: the digest is what
    LOG.md, recall and the next compaction read. It is kept, marked as replaced."""
    with Store(home, agent="me") as st:
        mem = st.agent()
        mem.log.append(
            "USER_FEEDBACK",
            "Members want a PDF receipt when they return a tool. Let's do that with"
            " WeasyPrint, I like HTML templates.",
            {"event": "user_intent"},
        )
        old = mem.decisions.record("Render PDF receipts with WeasyPrint from a Jinja2 template")
        new = mem.decisions.record(
            "Render PDF receipts with fpdf2 (pure Python) instead of WeasyPrint", replaces=old.id
        )
        mem.log.append("USER_FEEDBACK", "We decided to log in with a signed session cookie.")
    r = subprocess.run(
        [EXE, "--home", str(home), "--agent", "me", "compact", "--force"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    log = (home / "agents" / "me" / "memory" / "LOG.md").read_text()
    digest = log.split("LOG compacted:", 1)[1].split("<!--", 1)[0]
    assert f"- Decision (replaced by {new.id}): Members want a PDF receipt" in digest, digest
    assert "- Decision: Members want" not in digest
    assert "- Decision: We decided to log in with a signed session cookie." in digest


def _two_sessions(home: Path, tmp_path: Path) -> None:
    """An earlier session, then a later one with more than 20 LOG entries."""
    first = ClaudeSession(home, tmp_path / "proj")
    first.call("user-prompt-submit", first.prompt("Set up the nightly backups of stream1."))
    first.call("stop", first.answer("The backup role is written; the dry run shows 3 changes."))
    later = ClaudeSession(home, tmp_path / "proj")
    later.call("user-prompt-submit", later.prompt("Renew the certificate of the stream."))
    with Store(home, agent="me") as st:  # 24 reads, as the PostToolUse hook logs them
        for i in range(24):
            log_tool(st, "me", "Read", {"file_path": f"/p/r{i}.yml"}, OK, session=later.session_id)
    later.call("stop", later.answer("Certificates come from the DNS-01 challenge now."))


def test_memstrata_context_prints_what_the_next_session_gets(home: Path, tmp_path: Path) -> None:
    """The README: "`memstrata context` prints exactly what an agent's next prompt gets".
    It read the newest 20 LOG entries where the hooks and MCP's prompt-context read 200:
    on ops-lighthouse's kept store it showed one session of activity, the SessionStart
    hook ten."""
    _two_sessions(home, tmp_path)
    hook = ClaudeSession(home, tmp_path / "proj").context()
    r = subprocess.run(
        [EXE, "--home", str(home), "--agent", "me", "context", "--workspace", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    for text in (hook, r.stdout):
        activity = _section(text, "Recent activity")
        assert "goal: Set up the nightly backups of stream1." in activity, activity
        assert "Renew the certificate of the stream." in activity


def test_the_api_prompt_context_is_the_one_the_hooks_give(home: Path, tmp_path: Path) -> None:
    """GET /api/agents/{agent}/prompt (the web app's "assembled prompt context") read 20
    LOG entries by default, the hooks 200: its activity missed the earlier session."""
    from tests.web.conftest import start_server, stop_server

    _two_sessions(home, tmp_path)
    served = start_server(home)
    try:
        with served.client() as c:
            text = c.get("/api/agents/me/prompt").json()["text"]
    finally:
        stop_server(served)
    assert "goal: Set up the nightly backups of stream1." in _section(text, "Recent activity")


def test_an_agent_logging_its_own_retry_resolves_the_failure(home: Path) -> None:
    """research-scooters (an MCP-only agent logging its calls with log_activity): after
    `fetch_url(datos.madrid.example/api/patinetes) -> error 429` and `fetch_url(datos.
    madrid.example/api/patinetes, retry) -> ok, 88 KB`, the context still listed the 429
    (its "retry after 60 seconds") under "Open errors (nothing later resolved them)"."""
    env = {**os.environ, "MEMSTRATA_HOME": str(home), "MEMSTRATA_AGENT": "scout"}
    run = [
        ("TOOL_USE", "fetch_url(datos.madrid.example/api/patinetes) -> error 429"),
        ("ERROR", "429 Too Many Requests from the open-data API; retry after 60 seconds"),
        ("TOOL_USE", "fetch_url(datos.madrid.example/api/patinetes, retry) -> ok, 88 KB"),
        ("TOOL_USE", "fetch_pdf(saint-roch.pdf) -> error 403"),
    ]
    with Store(home, agent="scout") as st:
        for kind, text in run:
            st.agent().log.append(kind, text)
    r = subprocess.run([EXE, "context"], capture_output=True, text=True, env=env, timeout=60)
    errors = _section(r.stdout, "Open errors")
    assert "saint-roch.pdf" in errors  # nothing retried it
    assert "patinetes" not in errors and "429" not in errors, errors


def test_a_failure_the_agent_noted_it_fixed_is_not_an_open_error(
    home: Path, tmp_path: Path
) -> None:
    """mobile-fernway s10: "Open errors (nothing later resolved them)" listed the release
    build's `ClassNotFoundException: org.maplibre.android.maps.MapView`, though the agent had
    noted "R8 stripped the MapLibre classes; fixed with keep rules for org.maplibre.**" and
    the build ran: the failed call (reading the crash log) is never run again as it was. A
    note that says it fixed something else, says "fixed" of no fix, or comes after the user's
    next prompt (the first try resolved an AsyncStorage failure of an earlier turn by the
    word "Android"), resolves nothing."""
    s = ClaudeSession(home, tmp_path / "proj")
    s.call("user-prompt-submit", s.prompt("offline pack wont save"))
    row = (
        "Exit code 1\nE ReactNativeJS: Row too big to fit into CursorWindow (Android AsyncStorage)"
    )
    s.call("post-tool-use-failure", s.tool("Bash", {"command": "adb logcat -d"}, None, failed=row))
    s.call("user-prompt-submit", s.prompt("the release build crashes on launch"))
    crash = "Exit code 1\nE AndroidRuntime: java.lang.ClassNotFoundException: org.maplibre.android.maps.MapView"
    s.call(
        "post-tool-use-failure",
        s.tool("Bash", {"command": "adb logcat -d -s AndroidRuntime"}, None, failed=crash),
    )
    pending = "Exit code 1\nApple Developer Program: the enrollment of Fernway Trails is pending"
    s.call(
        "post-tool-use-failure",
        s.tool("Bash", {"command": "eas credentials"}, None, failed=pending),
    )
    env = {**os.environ, "MEMSTRATA_HOME": str(home), "MEMSTRATA_AGENT": "me"}
    for note in (
        "Android release: R8 stripped the MapLibre classes; fixed with keep rules for org.maplibre.**",
        "Styling fixed with NativeWind; the trail list scrolls at 60 fps",  # names no failure
        "The enrollment runs at a fixed hour each day",  # "fixed", but no fix
    ):
        r = subprocess.run(
            [EXE, "log", "append", "THOUGHT", note], capture_output=True, text=True, env=env
        )
        assert r.returncode == 0, r.stderr
    errors = _section(s.context(), "Open errors (nothing later resolved them)")
    assert "enrollment of Fernway Trails is pending" in errors, errors
    assert "ClassNotFoundException" not in errors, errors
    assert (
        "CursorWindow" in errors
    )  # an earlier turn's failure: the note (naming Android) is not about it
