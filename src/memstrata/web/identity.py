"""Who a request acts as: bearer tokens, browser logins and CSRF tokens for `memstrata serve`.

A request acts as one principal (agent, room); its role always comes from `[roles]`
in the store's config, never from the request. Where the principal comes from:

* **No token anywhere** (the default, loopback only): every request acts as the
  server's `--agent` / `--room`, or, without `--agent`, as the store's owner (admin),
  like the CLI does for the person at the terminal.
* **Tokens** (`--token`, `$MEMSTRATA_MCP_TOKEN`, `[serve] tokens`): every request
  must carry one. `--token` acts as the server's default principal; each
  `[serve] tokens` entry acts as its agent (and room). A browser logs in once with
  its token at `/login` and then carries an HttpOnly, SameSite=Strict session cookie.

Reveal: pages show secrets as `[withheld: <kind>]`; a confirmed reveal (`/reveal`) sets
a cookie signed for the session that shows them in clear for REVEAL_SECONDS.

CSRF: every state-changing web form carries `csrf`, an HMAC of the browser's session
(or of the open server) under a secret made at start; `check_csrf` compares it in
constant time. API calls that authenticate with a bearer header need none (a
browser never attaches one on its own); API calls without one must send JSON
(a cross-site form cannot) or the `X-CSRF-Token` header.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time

from memstrata.values import value_type

SESSION_COOKIE = "memstrata_session"
SESSION_SECONDS = 12 * 3600
MAX_SESSIONS = 10_000
REVEAL_COOKIE = "memstrata_reveal"
REVEAL_SECONDS = 300  # how long a confirmed reveal shows secrets in clear


@value_type(frozen=True)
class Identity:
    """The principal a request acts as (role from the config) and how it was established."""

    agent: str | None
    room: str | None
    via: str  # "open" | "token" | "session"
    session: str | None = None  # the login session id, for the CSRF token


@value_type(frozen=True)
class TokenEntry:
    token: str  # plain, or "sha256:<hex>" of the token
    agent: str | None
    room: str | None

    def matches(self, presented: str) -> bool:
        if self.token.startswith("sha256:"):
            digest = hashlib.sha256(presented.encode("utf-8")).hexdigest()
            return hmac.compare_digest(digest, self.token.removeprefix("sha256:").lower())
        return hmac.compare_digest(presented.encode("utf-8"), self.token.encode("utf-8"))


class Identities:
    """Resolve identities from bearer headers and session cookies; hold login sessions."""

    def __init__(
        self,
        default_agent: str | None,
        default_room: str | None,
        token: str | None,
        entries: tuple[tuple[str, str | None, str | None], ...],
    ) -> None:
        self.default = Identity(default_agent, default_room, "open")
        self.entries = [TokenEntry(token, default_agent, default_room)] if token else []
        self.entries += [TokenEntry(t, a, r) for t, a, r in entries]
        self.secret = secrets.token_bytes(32)
        self._sessions: dict[str, tuple[Identity, float]] = {}
        self._guard = threading.Lock()

    @property
    def open(self) -> bool:
        """True when no token is configured: every request acts as the default principal."""
        return not self.entries

    def by_token(self, presented: str) -> Identity | None:
        # Every entry is compared (no early exit), so timing does not tell which matched.
        found = None
        for e in self.entries:
            if e.matches(presented) and found is None:
                found = Identity(e.agent, e.room, "token")
        return found

    def by_bearer(self, header: bytes | None) -> Identity | None:
        if header is None or not header.isascii():
            return None
        scheme, _, credentials = header.decode("ascii").strip().partition(" ")
        token = credentials.strip()
        if scheme.lower() != "bearer" or not token:
            return None
        return self.by_token(token)

    # -- browser sessions ------------------------------------------------------------
    def login(self, presented: str) -> str | None:
        """A new session id for a valid token, else None."""
        who = self.by_token(presented)
        if who is None:
            return None
        sid = secrets.token_urlsafe(32)
        now = time.monotonic()
        with self._guard:
            if len(self._sessions) >= MAX_SESSIONS:
                self._expire(now, force=True)
            self._sessions[sid] = (
                Identity(who.agent, who.room, "session", sid),
                now + SESSION_SECONDS,
            )
        return sid

    def by_session(self, sid: str | None) -> Identity | None:
        if not sid:
            return None
        with self._guard:
            got = self._sessions.get(sid)
            if got is None:
                return None
            if got[1] < time.monotonic():
                del self._sessions[sid]
                return None
            return got[0]

    def logout(self, sid: str | None) -> None:
        with self._guard:
            self._sessions.pop(sid or "", None)

    def _expire(self, now: float, *, force: bool = False) -> None:
        for sid, (_, until) in list(self._sessions.items()):
            if until < now:
                del self._sessions[sid]
        if force and len(self._sessions) >= MAX_SESSIONS:  # drop the oldest half
            for sid in sorted(self._sessions, key=lambda s: self._sessions[s][1])[
                : MAX_SESSIONS // 2
            ]:
                del self._sessions[sid]

    # -- CSRF ------------------------------------------------------------------------
    def csrf_token(self, who: Identity | None) -> str:
        """The token forms carry for `who` (a login session, or the open server)."""
        key = who.session if who is not None and who.session else "open"
        return hmac.new(self.secret, key.encode(), hashlib.sha256).hexdigest()

    def check_csrf(self, who: Identity | None, presented: str | None) -> bool:
        return bool(presented) and hmac.compare_digest(self.csrf_token(who), str(presented))

    # -- reveal: secrets in clear on the pages, for a while, once confirmed --------------
    def reveal_cookie(self, who: Identity | None, until: int) -> str:
        """The cookie a confirmed reveal sets: until when, signed for this session."""
        return f"{until}.{self._reveal_mac(who, until)}"

    def revealing_until(self, who: Identity | None, cookie: str | None) -> int | None:
        """Until when (epoch seconds) pages show this session secrets in clear, if at all."""
        stamp, _, mac = (cookie or "").partition(".")
        if not stamp.isdigit() or int(stamp) < time.time():
            return None
        return int(stamp) if hmac.compare_digest(self._reveal_mac(who, int(stamp)), mac) else None

    def _reveal_mac(self, who: Identity | None, until: int) -> str:
        key = who.session if who is not None and who.session else "open"
        return hmac.new(self.secret, f"reveal|{key}|{until}".encode(), hashlib.sha256).hexdigest()
