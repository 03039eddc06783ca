"""What sign-in keeps in the main process's memory: sessions, failed sign-ins, and the key that signs tokens.

Everything here is bounded, and only a successful sign-in adds a session, so an anonymous caller can make the
service keep no more than one failure counter per username and per address it tries (each at most
``sign_in_max_failures`` timestamps, at most :data:`MAX_COUNTERS` counters). :mod:`.sessions` uses it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass

from ..core.config import Settings
from ..core.people import Person

MAX_COUNTERS = 10_000
"""Failure counters kept per kind (usernames, addresses); one more forgets the one least recently failed."""


@dataclass
class Session:
    """A signed-in person; ``csrf`` is the synchronizer token every form of theirs carries."""

    person: Person
    csrf: str
    created: float
    seen: float


def _key(session_id: str) -> bytes:
    # Kept by digest: a lookup's timing then says nothing of the ids held.
    return hashlib.sha256(session_id.encode("utf-8", "surrogateescape")).digest()


class Sessions:
    """Sessions by id, ended after ``session_idle_s`` without a request or ``session_max_age_s`` after sign-in;
    at ``session_max_count`` a new one evicts the least recently used. ``clock`` (seconds, monotonic) is what
    their ages are read from: tests move one forward instead of waiting."""

    def __init__(self, settings: Settings, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.idle_s = settings.session_idle_s
        self.max_age_s = settings.session_max_age_s
        self.max_count = settings.session_max_count
        self._held: OrderedDict[bytes, Session] = OrderedDict()  # least recently seen first
        self._lock = threading.Lock()

    def _expired(self, session: Session, now: float) -> bool:
        return now - session.seen > self.idle_s or now - session.created > self.max_age_s

    def create(self, person: Person) -> tuple[str, Session]:
        """A new session for ``person``: its id (for the cookie only) and the session."""
        now = self.clock()
        session_id = secrets.token_urlsafe(32)
        session = Session(person, secrets.token_urlsafe(32), now, now)
        with self._lock:
            while self._held and (
                self._expired(next(iter(self._held.values())), now) or len(self._held) >= self.max_count
            ):
                self._held.popitem(last=False)
            self._held[_key(session_id)] = session
        return session_id, session

    def get(self, session_id: str | None) -> Session | None:
        """The live session of ``session_id``, marked as seen now; ``None`` (and forgotten) once expired."""
        if not session_id:
            return None
        key, now = _key(session_id), self.clock()
        with self._lock:
            session = self._held.get(key)
            if session is None:
                return None
            if self._expired(session, now):
                del self._held[key]
                return None
            session.seen = now
            self._held.move_to_end(key)
            return session

    def end(self, session_id: str | None) -> None:
        if session_id:
            with self._lock:
                self._held.pop(_key(session_id), None)

    def __len__(self) -> int:
        return len(self._held)


class _Failures:
    """Recent failure times per key, each with the other party (the address for a username, and back)."""

    def __init__(self, limit: int, window_s: float) -> None:
        self.limit = limit
        self.window_s = window_s
        self._by_key: OrderedDict[str, deque[tuple[float, str]]] = OrderedDict()

    def retry_after(self, key: str, now: float) -> int | None:
        """Seconds until ``key`` may try again, if it is at its limit now."""
        recent = [t for t, _ in self._by_key.get(key, ()) if now - t < self.window_s]
        if len(recent) < self.limit:
            return None
        return max(1, math.ceil(recent[-self.limit] + self.window_s - now))

    def add(self, key: str, other: str, now: float) -> None:
        failures = self._by_key.pop(key, None) or deque(maxlen=self.limit)
        failures.append((now, other))
        self._by_key[key] = failures
        while len(self._by_key) > MAX_COUNTERS:
            self._by_key.popitem(last=False)

    def forgive(self, key: str, other: str) -> None:
        """Forget ``key``'s failures with ``other`` only: a person's own typos, never another party's attempts."""
        failures = self._by_key.get(key)
        if failures is not None:
            kept = deque(((t, o) for t, o in failures if o != other), maxlen=self.limit)
            if kept:
                self._by_key[key] = kept
            else:
                del self._by_key[key]


class SignInLimits:
    """Failed sign-ins per username and per client address within a sliding window; at the limit, refused.

    A success forgets only the failures of that username from that address, so signing in to one's own account
    does not reset the counter of another username, or of another address trying this one. ``clock`` as for
    :class:`Sessions`."""

    def __init__(self, settings: Settings, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        window = settings.sign_in_failure_window_s
        self._users = _Failures(settings.sign_in_max_failures, window)
        self._addresses = _Failures(settings.sign_in_max_failures_per_address, window)
        self._lock = threading.Lock()

    def retry_after(self, username: str, address: str) -> int | None:
        """Seconds to wait before this username or address may try again; ``None`` if both may now."""
        now = self.clock()
        with self._lock:
            waits = [
                w
                for w in (self._users.retry_after(username.casefold(), now), self._addresses.retry_after(address, now))
                if w is not None
            ]
        return max(waits) if waits else None

    def failed(self, username: str, address: str) -> None:
        now, user = self.clock(), username.casefold()
        with self._lock:
            self._users.add(user, address, now)
            self._addresses.add(address, user, now)

    def succeeded(self, username: str, address: str) -> None:
        user = username.casefold()
        with self._lock:
            self._users.forgive(user, address)
            self._addresses.forgive(address, user)


class Signer:
    """Signs short values with a key made at start (HMAC-SHA256); what it signed is checked without storing it."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)

    def _mac(self, payload: str) -> str:
        digest = hmac.new(self._key, payload.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def sign(self, payload: str) -> str:
        """``payload`` with the time and a signature; ``payload`` must not contain ``~``."""
        stamped = f"{int(time.time())}~{payload}"
        return f"{stamped}~{self._mac(stamped)}"

    def unsign(self, token: str | None, max_age_s: float) -> str | None:
        """The payload of a token this signer made within ``max_age_s``; ``None`` for anything else."""
        if not token or token.count("~") < 2:
            return None
        stamped, _, mac = token.rpartition("~")
        issued, _, payload = stamped.partition("~")
        if not hmac.compare_digest(mac.encode(), self._mac(stamped).encode()) or not issued.isdigit():
            return None
        return payload if 0 <= time.time() - int(issued) <= max_age_s else None
