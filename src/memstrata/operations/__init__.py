"""Whole operations built on the store: purge, transfer, hooks, the agent loop, the manager."""
