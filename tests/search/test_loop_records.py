"""What an agent loop built on the Python API (`AgentLoop` / `MemoryManager.turn`) leaves in
memory comes back for what it is (chatbot-otterbrook, the python surface's blind run):

* a failed tool is logged as a TOOL_USE entry carrying its error (seed 002's "log every
  tool execution"); recall weighs it as the error it is, not as a trace;
* NOW.md's "Task complete: <prompt>" at a turn's end is the prompt again: weighed as the
  user's intent, not as the agent's status;
* the loop logs no trace of memstrata's own memory tools (tests/test_loop.py).
"""

from __future__ import annotations

from pathlib import Path

from memstrata import MemoryManager
from memstrata.search.priors import signal_of


def _uids(m: MemoryManager, query: str) -> list[str]:
    return [h.text for h in m.store.search(query)]


def test_a_failed_tool_of_a_loop_is_recalled_as_the_error(home: Path) -> None:
    m = MemoryManager("brook", home)
    with m.turn("Run the eval suite against the new prompt, all 150 questions") as turn:
        turn.tool_executed(
            "shell",
            {"cmd": "python -m evals.run --suite full"},
            None,
            error="RateLimitError: Error code: 429 - Requests to the deployment have exceeded "
            "the token rate limit of the S0 tier; the evaluation run stopped at question 61",
        )
        turn.final_response("The eval run stopped early; I will retry it with backoff.")
    with m.turn("Add the retry with exponential backoff to the eval runner") as turn:
        turn.tool_executed("apply_patch", {"path": "evals/run.py"}, "patched")
        m.append_log("THOUGHT", "The eval runner needs a backoff on the Azure deployment")
        turn.final_response("Backoff added to evals/run.py.")
    hits = m.store.search("what stopped the evaluation run last time?")
    top = hits[0]
    assert top.kind == "TOOL_USE" and "429" in top.text, [h.text[:80] for h in hits]
    assert signal_of(top).name == "error"
    m.close()


def test_a_turn_end_task_complete_is_the_prompt_not_the_status(home: Path) -> None:
    m = MemoryManager("brook", home)
    m.save_fact(
        "outage_source",
        "Outage data comes from the ops team's incidents feed (incidents.json, polled every "
        "5 minutes)",
        "general",
    )
    with m.turn("Outage lookup today please: where does outage data come from?") as turn:
        turn.final_response("Wired the lookup to the incidents feed.")
    now = [h for h in m.store.search("outage data") if h.layer == "now"]
    assert now and signal_of(now[0]).name == "intent"
    hits = m.store.search("where do we get the outage data from?")
    assert hits[0].layer == "fact", [(h.layer, h.text[:60]) for h in hits]
    m.update_now("Outage lookup wired; next: the postcode check", ["postcode check"])
    state = [h for h in m.store.search("outage lookup postcode") if h.layer == "now"]
    assert state and signal_of(state[0]).name == "status"  # the agent's own NOW is status
    m.close()
