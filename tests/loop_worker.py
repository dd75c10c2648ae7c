"""A real agent process for the seed 002 Amnesia test (run as a script).

    python loop_worker.py HOME AGENT work     # research step, then waits to be killed
    python loop_worker.py HOME AGENT resume   # "Continue": prints the context it reads, as JSON

`work` prints RESEARCH_DONE (flushed) once the research step is logged and NOW.md
says what comes next, then blocks on stdin: the test SIGKILLs it mid-task.
"""

from __future__ import annotations

import json
import sys

from memstrata.operations.loop import AgentLoop


def main() -> None:
    home, agent, mode = sys.argv[1:4]
    loop = AgentLoop.open(agent, home)
    if mode == "work":
        with loop.turn("Research Python decorators and outline a blog post") as turn:
            turn.before_llm_call()
            turn.tool_executed(
                "web_search",
                {"query": "python decorators"},
                {"results": ["functools.wraps", "PEP 318"]},
                0.4,
            )
            loop.store.agent(agent).now.update(
                "Outline the blog post on Python decorators",
                ["Write the outline from the research notes"],
                phase="research done",
            )
            sys.stdout.write("RESEARCH_DONE\n")
            sys.stdout.flush()
            sys.stdin.readline()  # the outline step never finishes: the process is killed here
    else:
        with loop.turn("Continue") as turn:
            context = turn.before_llm_call()
            now = loop.store.agent(agent).now.state()
            sys.stdout.write(
                json.dumps(
                    {
                        "context": context,
                        "objective": now.objective,
                        "next_steps": list(now.next_steps),
                    }
                )
                + "\n"
            )
            turn.final_response("Outline written")
    loop.close()


if __name__ == "__main__":
    main()
