"""The rules every read and write passes: who may (scope) and what may be kept (secrets)."""
