"""The `[serve] tokens` setting's value parser: bearer tokens, each acting as one agent."""

from __future__ import annotations

from typing import Any


def serve_tokens(v: Any) -> tuple[tuple[str, str | None, str | None], ...]:
    """`{agent = "token"}` or `[{token = "...", agent = "finn", room = "room-042"}]` ->
    ((token, agent, room), ...); a token may be given as "sha256:<hex>" of itself."""
    rows: list[tuple[str, str | None, str | None]] = []
    if isinstance(v, dict):
        entries: list[Any] = [{"agent": a, "token": t} for a, t in v.items()]
    elif isinstance(v, list):
        entries = v
    else:
        raise ValueError(
            'must be a table {agent = "token"} or a list of {token = ..., agent = ..., room = ...}'
        )
    for e in entries:
        if not isinstance(e, dict) or not isinstance(e.get("token"), str) or not e["token"]:
            raise ValueError(f"each token entry needs a non-empty string token, got {e!r}")
        extra = set(e) - {"token", "agent", "room"}
        if extra:
            raise ValueError(
                f"unknown key {sorted(extra)[0]!r} in a token entry (keys: token, agent, room)"
            )
        for key in ("agent", "room"):
            if e.get(key) is not None and not isinstance(e[key], str):
                raise ValueError(f"{key} must be a string, got {e[key]!r}")
        rows.append((e["token"], e.get("agent") or None, e.get("room") or None))
    if len({t for t, _, _ in rows}) != len(rows):
        raise ValueError("the same token is given twice")
    return tuple(rows)
