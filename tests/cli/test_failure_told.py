"""Issue 19, what a failure leaves in memory, through Claude Code's hooks (firmware-larkspur's
blind run, docs/misses/firmware-larkspur.md section 10).

- A long tool failure was stored by its head: the ERROR entry's text (indexed, what
  `store.get` returns) was "Error: tool Bash failed: Exit code 101 Compiling proc-macro2 ...",
  the cause ("rust-lld: error: cannot find linker script linkall.x") only in metadata.
- "Open errors" showed a banner ("connected to barn.local:1883 as larkspur"), not the
  failure ("no uplink from node 4 ... in the last 60 min": no "error" word in it).
- The pre-compact flush wrote the user's request for the day's work into CONTEXT.md as
  "- Constraint: Battery voltage and the payload today. Keep it small, ...".
"""

from __future__ import annotations

from pathlib import Path

from tests.claude_code import ClaudeSession, section

from memstrata import Store

CRATES = [f"crate-{i} v0.{i}.0" for i in range(45)]
CARGO = (
    "Exit code 101\n"
    + "".join(f"   Compiling {c}\n" for c in CRATES)
    + "error: linking with `rust-lld` failed: exit status: 1\n"
    "  |\n"
    '  = note: LC_ALL="C" "rust-lld" "-flavor" "gnu" "/tmp/rustc/symbols.o" "--gc-sections"\n'
    "  = note: rust-lld: error: cannot find linker script linkall.x\n"
    "          rust-lld: error: undefined symbol: _stack_start_cpu0\n\n"
    'error: could not compile `larkspur` (bin "larkspur") due to 1 previous error\n'
)
UPLINKS = (
    "Exit code 2\nconnected to barn.local:1883 as larkspur\n"
    "no uplink from node 4 (0x3a22) in the last 60 min; last seen seq 211 rssi -117\n"
)


def _errors(home: Path) -> list[str]:
    with Store(home, agent="me") as s:
        entries = s.agent().log.entries()
        return [s.get(f"log:me:{e.id}").text for e in entries if e.entry_type == "ERROR"]


def test_a_long_build_failure_is_stored_by_what_went_wrong(home: Path, tmp_path: Path) -> None:
    s = ClaudeSession(home, tmp_path / "proj")
    s.hook("user-prompt-submit", s.prompt("Build the firmware."))
    s.hook("post-tool-use-failure", s.tool("Bash", {"command": "cargo build"}, None, failed=CARGO))
    (text,) = _errors(home)
    assert "cannot find linker script linkall.x" in text, text
    assert "Compiling crate-0" not in text and "Exit code 101" in text
    assert len(text) <= 340  # the same bound as before: a line, not the output
    with Store(home, agent="me") as st:  # the whole output stays in the entry's metadata
        (entry,) = [e for e in st.agent().log.entries() if e.entry_type == "ERROR"]
        assert "Compiling crate-44" in entry.metadata["error"]
        hits = st.search("linker script linkall.x", k=3)
        assert hits and hits[0].uid.endswith(entry.id), hits


def test_an_output_longer_than_the_hook_keeps_keeps_its_last_lines(
    home: Path, tmp_path: Path
) -> None:
    """A build log past the hook's size bound: its end (the error) is what is kept."""
    s = ClaudeSession(home, tmp_path / "proj")
    long = (
        "Exit code 1\n"
        + "".join(f"   Compiling c{i} v1.0.{i}\n" for i in range(900))
        + ("error[E0433]: failed to resolve: use of undeclared crate `esp_hal`\n")
    )
    assert len(long) > 20_000
    s.hook("post-tool-use-failure", s.tool("Bash", {"command": "cargo build"}, None, failed=long))
    (text,) = _errors(home)
    assert "undeclared crate `esp_hal`" in text, text
    with Store(home, agent="me") as st:
        (entry,) = [e for e in st.agent().log.entries() if e.entry_type == "ERROR"]
        assert entry.metadata["error"].rstrip().endswith("undeclared crate `esp_hal`")


def test_open_errors_tell_the_failure_not_the_banner(home: Path, tmp_path: Path) -> None:
    s = ClaudeSession(home, tmp_path / "proj")
    s.hook("user-prompt-submit", s.prompt("Is node 4 heard?"))
    cmd = {"command": "python tools/check_uplinks.py --node 4 --since 60m"}
    s.hook("post-tool-use-failure", s.tool("Bash", cmd, None, failed=UPLINKS))
    errors = section(ClaudeSession(home, tmp_path / "proj").context(), "Open errors")
    assert "no uplink from node 4 (0x3a22) in the last 60 min" in errors, errors
    assert "connected to barn.local" not in errors


BATTERY = "Battery voltage and the payload today. Keep it small, every byte is airtime at SF10."
RULE = "From the gateway on, never forward the raw GPS fix: at most the field's cell id."


def test_the_flush_does_not_file_a_request_for_the_work_as_a_constraint(
    home: Path, tmp_path: Path
) -> None:
    s = ClaudeSession(home, tmp_path / "proj")
    s.hook("user-prompt-submit", s.prompt(BATTERY))
    s.hook("stop", s.answer("Payload is 9 bytes now: battery mV, moisture, seq."))
    s.hook("user-prompt-submit", s.prompt(RULE))
    s.hook("stop", s.answer("Understood, the gateway drops the GPS fix."))
    s.hook("pre-compact", s.payload("PreCompact", trigger="auto"))
    memory = (home / "agents" / "me" / "memory" / "CONTEXT.md").read_text()
    assert "Battery voltage and the payload today" not in memory, memory
    assert "never forward the raw GPS fix" in memory  # a rule the user gave is still kept
