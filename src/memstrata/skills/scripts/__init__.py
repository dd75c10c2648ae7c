"""One module per skill, as AgentOS's `core/skills/memory/scripts/`."""
