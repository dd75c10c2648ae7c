"""One module per skill, as seed 002's `core/skills/memory/scripts/`."""
