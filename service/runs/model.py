"""Step 4's values: the target version a run is pinned to, the conversations sent, the replies and traces.

A run talks to exactly one :class:`TargetVersion`; its :attr:`~TargetVersion.fingerprint` goes into every
trace, so that two results are comparable only when they came from the same version boundary (the scope's
``VersionBoundary``, made exact). Secrets never live here: adapters read their keys at call time.
A refusal is an ordinary :class:`Exchange`; only a reply that never arrived is an :class:`ExecutionError`.
Times are timezone-aware UTC datetimes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Role = Literal["system", "user", "assistant"]
# "reported": a failure another tool (an Inspect log) reported in its own words, for an imported run.
ErrorKind = Literal["timeout", "http_status", "malformed", "unreachable", "reported"]
# "imported": replies collected elsewhere (an Inspect eval, red-teaming sessions), not by an adapter here.
AdapterKind = Literal["openai-compatible", "http-json", "demo", "imported"]

# A settings key named like a credential is refused: the fingerprint is published, a key must never be.
_SECRET_KEY = re.compile(
    r"api[_-]?key|secret|password|authori[sz]ation|bearer|^(access[_-]?)?token$|^auth$", re.IGNORECASE
)


def _refuse_secrets(where: str, settings: Mapping[str, Any]) -> None:
    for key, value in settings.items():
        if _SECRET_KEY.search(key):
            raise ValueError(
                f"{where} has a key {key!r} that looks like a credential: give credentials "
                "to the adapter (api_key_env or api_key_file), never in the version boundary"
            )
        if isinstance(value, Mapping):
            _refuse_secrets(f"{where}.{key}", value)


@dataclass(frozen=True)
class Boundary:
    """What the operator declares about the deployment behind the endpoint, beyond the model release.

    ``system_instructions`` are sent as the first (system) message by the adapters; ``retrieval`` and
    ``guardrails`` describe the configuration behind the endpoint (corpus, index, filters, moderation) and
    are declared, not sent: they only make two differently configured deployments different versions.
    """

    system_instructions: str | None = None
    retrieval: Mapping[str, Any] = field(default_factory=dict)
    guardrails: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _refuse_secrets("retrieval", self.retrieval)
        _refuse_secrets("guardrails", self.guardrails)


@dataclass(frozen=True)
class TargetVersion:
    """The identity and version boundary of a system under test, as one run is pinned to it.

    ``system`` names the system under test; ``endpoint`` is the base URL it is reached at (``None`` for
    the in-process demonstration chatbot); ``parameters`` are the generation parameters sent with every
    request (temperature, max_tokens, ...). Not hashable (mappings inside): key by :attr:`fingerprint`.
    """

    system: str
    adapter: AdapterKind
    model_release: str
    endpoint: str | None = None
    parameters: Mapping[str, Any] = field(default_factory=dict)
    boundary: Boundary = field(default_factory=Boundary)

    def __post_init__(self) -> None:
        if not self.system.strip() or not self.model_release.strip():
            raise ValueError("a target version needs a non-empty system name and model release")
        _refuse_secrets("parameters", self.parameters)

    def canonical(self) -> str:
        """The version boundary as canonical JSON (sorted keys, no spaces): what :attr:`fingerprint` hashes."""
        document = {
            "system": self.system,
            "adapter": self.adapter,
            "model_release": self.model_release,
            "endpoint": self.endpoint,
            "parameters": self.parameters,
            "system_instructions": self.boundary.system_instructions,
            "retrieval": self.boundary.retrieval,
            "guardrails": self.boundary.guardrails,
        }
        return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)

    @property
    def fingerprint(self) -> str:
        """``sha256:`` and the hex SHA-256 of :meth:`canonical`: equal exactly when the boundaries are equal."""
        return "sha256:" + hashlib.sha256(self.canonical().encode("utf-8")).hexdigest()


def within_boundary(version: TargetVersion, model_release: str) -> bool:
    """Whether ``version`` is inside a scope's version boundary whose model release is ``model_release``: its own
    model release is that one, character for character (surrounding spaces aside; docs/reports.md)."""
    return version.model_release.strip() == model_release.strip()


@dataclass(frozen=True)
class Turn:
    """One message of a conversation."""

    role: Role
    text: str


@dataclass(frozen=True)
class Conversation:
    """A probe as the executor runs it: its opening turn, then the scripted follow-up user turns.

    Each user turn is sent with every earlier turn (and the target's replies to them) before it.
    """

    probe: str
    opening: str
    follow_ups: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.probe:
            raise ValueError("a conversation needs its probe's IRI")
        for number, text in enumerate(self.user_turns, start=1):
            if not text.strip():
                raise ValueError(f"probe {self.probe}: user turn {number} is empty")

    @property
    def user_turns(self) -> tuple[str, ...]:
        return (self.opening, *self.follow_ups)


@dataclass(frozen=True)
class TokenUsage:
    """Token counts as the target reported them (any may be missing)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None


@dataclass(frozen=True)
class Exchange:
    """One reply of the target: its text, when the request started and the reply ended, and what it reported.

    ``latency_s`` is measured on a monotonic clock (not ``ended - started``); ``finish_reason`` is the
    target's own word, unparsed; ``attempts`` counts the requests it took (retries included).
    """

    text: str
    started: datetime
    ended: datetime
    latency_s: float
    usage: TokenUsage | None = None
    finish_reason: str | None = None
    attempts: int = 1


@dataclass(frozen=True)
class CaseTrace:
    """One probe run to the end: every turn sent and received in order, and one exchange per user turn.

    The system instructions are not among ``turns``: they belong to the target version ``target`` names.
    """

    probe: str
    target: str
    turns: tuple[Turn, ...]
    exchanges: tuple[Exchange, ...]

    @property
    def started(self) -> datetime:
        return self.exchanges[0].started

    @property
    def ended(self) -> datetime:
        return self.exchanges[-1].ended


@dataclass(frozen=True)
class ExecutionError:
    """A probe whose reply never arrived: recorded apart from outcomes, never judged.

    ``turn`` is the 1-based user turn that failed (earlier turns' replies are in ``turns``); ``status`` the
    HTTP status for ``http_status``; ``attempts`` the requests made for that turn before giving up.
    """

    probe: str
    target: str
    kind: ErrorKind
    message: str
    attempts: int
    turn: int
    status: int | None = None
    turns: tuple[Turn, ...] = ()


@dataclass(frozen=True)
class ExecutionSettings:
    """How a run talks to its target; recorded with the run, so each field is a plain number.

    At most ``concurrency`` conversations are in flight at once (so as many requests); request starts are
    spaced to at most ``rate_per_s`` a second (``None``: no limit); a request gets ``timeout_s`` seconds;
    a transient failure is tried again up to ``retries`` times, after ``backoff_s``, then twice that, and so
    on (or the target's ``Retry-After`` when longer), at most ``max_backoff_s``.
    """

    concurrency: int = 8
    rate_per_s: float | None = None
    timeout_s: float = 60.0
    retries: int = 2
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0

    def __post_init__(self) -> None:
        problems = []
        if not isinstance(self.concurrency, int) or self.concurrency < 1:
            problems.append(f"concurrency must be a whole number of at least 1, not {self.concurrency!r}")
        if self.rate_per_s is not None and not self.rate_per_s > 0:
            problems.append(f"rate_per_s must be above 0 (or None for no limit), not {self.rate_per_s!r}")
        if not self.timeout_s > 0:
            problems.append(f"timeout_s must be above 0, not {self.timeout_s!r}")
        if not isinstance(self.retries, int) or self.retries < 0:
            problems.append(f"retries must be a whole number of at least 0, not {self.retries!r}")
        if not 0 <= self.backoff_s <= self.max_backoff_s:
            problems.append(
                f"backoff_s must be from 0 to max_backoff_s ({self.max_backoff_s!r}), not {self.backoff_s!r}"
            )
        if problems:
            raise ValueError("; ".join(problems))

    def backoff_before(self, attempt: int) -> float:
        """Seconds to wait before ``attempt`` (2 for the first retry): exponential, capped."""
        return min(self.max_backoff_s, self.backoff_s * 2.0 ** (attempt - 2))
