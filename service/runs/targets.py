"""The systems under test as one small protocol, :class:`Target`, and its HTTP adapters over httpx (the
OpenAI-compatible one here, :class:`.http_json.HttpJson` for any JSON-over-HTTP chatbot).

A target answers a conversation with one :class:`~.model.Exchange`. Whatever keeps a reply from arriving
is a :class:`TargetFailure` of one :data:`~.model.ErrorKind`, marked transient when trying again may help
(timeouts, 5xx, 429, connection errors) so that the executor retries those and nothing else. Credentials are
read at call time from an environment variable or a secret file, sent as a bearer token, and kept out of
the target version and of every message (a body that echoes the key back is scrubbed).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self

import httpx

from ..core.outbound import tls_context
from .model import Boundary, ErrorKind, Exchange, TargetVersion, TokenUsage, Turn

DEFAULT_HTTP_TIMEOUT_S = 300.0
"""The adapters' own backstop; the executor's per-request ``timeout_s`` is normally the one that fires."""
_BODY_EXCERPT = 300
_POOL_LIMITS = httpx.Limits(max_connections=None, max_keepalive_connections=None)
"""The executor bounds the requests in flight; the pools keep a connection alive for each (httpx's default keeps
20, so at a higher concurrency every request past them would open and close a TCP connection)."""
_POOLS = 8
"""Clients (connection pools) an adapter spreads its requests over, in turn, when it makes its own. httpcore scans
every connection of a pool, polling each idle socket, when a request starts and when it ends, so one pool of 32
connections costs each request more CPU than the rest of it (bench/runner.py); eight pools of four do not."""


class TargetFailure(Exception):
    """No usable reply: ``kind`` says why, ``status`` is the HTTP status if one came back, ``retry_after_s``
    the wait its ``Retry-After`` header asked for (seconds, on a 429 or 503)."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        transient: bool,
        status: int | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.transient = transient
        self.status = status
        self.retry_after_s = retry_after_s


class MissingCredential(Exception):
    """The configured environment variable or secret file holds no key (names where it looked, never a key)."""


class Target(Protocol):
    """A system under test at one version: :meth:`reply` answers the conversation so far."""

    @property
    def version(self) -> TargetVersion: ...

    async def reply(self, turns: Sequence[Turn]) -> Exchange:
        """The reply to ``turns`` (user and assistant turns, the last a user turn); raises :class:`TargetFailure`."""
        ...


def chat_messages(turns: Sequence[Turn], system_instructions: str | None) -> list[dict[str, str]]:
    """The conversation as OpenAI-style messages, the system instructions first when there are any."""
    system = [{"role": "system", "content": system_instructions}] if system_instructions else []
    return system + [{"role": turn.role, "content": turn.text} for turn in turns]


class ApiKey:
    """Where a key is read from, at each request: an environment variable or a secret file (one, or neither)."""

    def __init__(self, env: str | None = None, file: str | Path | None = None) -> None:
        if env and file:
            raise ValueError("give the key through api_key_env or api_key_file, not both")
        self.env = env
        self.file = Path(file) if file else None

    def read(self) -> str | None:
        if self.env:
            key = os.environ.get(self.env, "").strip()
            if not key:
                raise MissingCredential(
                    f"the environment variable {self.env} that should hold the key is unset or empty"
                )
            return key
        if self.file:
            try:
                key = self.file.read_text(encoding="utf-8").strip()
            except OSError as error:
                raise MissingCredential(f"the secret file {self.file} cannot be read: {error.strerror}") from None
            if not key:
                raise MissingCredential(f"the secret file {self.file} is empty")
            return key
        return None


def _scrub(text: str, key: str | None) -> str:
    return text.replace(key, "[redacted]") if key else text


def _retry_after_s(header: str | None) -> float | None:
    """A ``Retry-After`` in seconds (RFC 9110, section 10.2.3); the HTTP-date form is ignored (backoff applies)."""
    try:
        seconds = float(header) if header else None
    except ValueError:
        return None
    return seconds if seconds is not None and seconds >= 0 else None


def json_kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


class HttpTarget:
    """What both HTTP adapters share: the client, the key, one POST turned into a JSON body or a failure."""

    def __init__(
        self, version: TargetVersion, api_key: ApiKey, client: httpx.AsyncClient | None, timeout_s: float
    ) -> None:
        self._version = version
        self._api_key = api_key
        self._given_client = client
        self._own_clients: list[httpx.AsyncClient] = []
        self._turn = 0
        self._timeout_s = timeout_s

    @property
    def version(self) -> TargetVersion:
        return self._version

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the clients this adapter made (a client given to it stays open)."""
        clients, self._own_clients = self._own_clients, []
        for client in clients:
            await client.aclose()

    def _client(self) -> httpx.AsyncClient:
        """The client given to the adapter, else the next of its own pools (made at the first request)."""
        if self._given_client is not None:
            return self._given_client
        if not self._own_clients:
            self._own_clients = [
                httpx.AsyncClient(timeout=self._timeout_s, limits=_POOL_LIMITS, verify=tls_context())
                for _ in range(_POOLS)
            ]
        self._turn = (self._turn + 1) % len(self._own_clients)
        return self._own_clients[self._turn]

    async def _post(self, url: str, body: Any) -> tuple[Any, datetime, datetime, float]:
        """POST ``body``; the parsed JSON answer, when the request started and ended, and its latency."""
        key = self._api_key.read()
        client = self._client()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        started, clock = datetime.now(UTC), time.perf_counter()
        try:
            response = await client.post(url, json=body, headers=headers)
        except httpx.TimeoutException:
            raise TargetFailure("timeout", f"POST {url}: no reply within {self._timeout_s} s", transient=True) from None
        except httpx.TransportError as error:
            message = _scrub(f"POST {url}: the target cannot be reached ({type(error).__name__}: {error})", key)
            raise TargetFailure("unreachable", message, transient=True) from None
        latency, ended = time.perf_counter() - clock, datetime.now(UTC)
        if response.status_code != 200:
            excerpt = _scrub(response.text, key)[:_BODY_EXCERPT]
            transient = response.status_code == 429 or response.status_code >= 500
            raise TargetFailure(
                "http_status",
                f"POST {url} answered {response.status_code}: {excerpt}",
                transient=transient,
                status=response.status_code,
                retry_after_s=_retry_after_s(response.headers.get("retry-after")),
            )
        try:
            answer = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            excerpt = _scrub(response.text, key)[:_BODY_EXCERPT]
            raise TargetFailure(
                "malformed", f"POST {url}: the body is not JSON: {excerpt!r}", transient=False
            ) from None
        return answer, started, ended, latency


class OpenAICompatible(HttpTarget):
    """A chat-completions endpoint, OpenAI's or any server speaking it: ``POST {base_url}/chat/completions``.

    ``params`` (temperature, max_tokens, seed, ...) go into every request and into the version; the reply is
    ``choices[0].message.content`` (or its ``refusal``, which is a reply too), the usage ``usage``'s counts.
    A missing or mistyped field is a ``malformed`` failure.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        params: Mapping[str, Any] | None = None,
        *,
        system: str | None = None,
        boundary: Boundary | None = None,
        api_key_env: str | None = None,
        api_key_file: str | Path | None = None,
        client: httpx.AsyncClient | None = None,
        timeout_s: float = DEFAULT_HTTP_TIMEOUT_S,
    ) -> None:
        version = TargetVersion(
            system=system or model,
            adapter="openai-compatible",
            model_release=model,
            endpoint=base_url.rstrip("/"),
            parameters=dict(params or {}),
            boundary=boundary or Boundary(),
        )
        super().__init__(version, ApiKey(api_key_env, api_key_file), client, timeout_s)
        self._url = f"{version.endpoint}/chat/completions"

    async def reply(self, turns: Sequence[Turn]) -> Exchange:
        version = self.version
        body = {
            **version.parameters,
            "model": version.model_release,
            "messages": chat_messages(turns, version.boundary.system_instructions),
        }
        answer, started, ended, latency = await self._post(self._url, body)
        text, finish_reason = self._choice(answer)
        return Exchange(
            text=text,
            started=started,
            ended=ended,
            latency_s=latency,
            usage=self._usage(answer),
            finish_reason=finish_reason,
        )

    def _malformed(self, problem: str) -> TargetFailure:
        return TargetFailure("malformed", f"POST {self._url}: {problem}", transient=False)

    def _choice(self, answer: Any) -> tuple[str, str | None]:
        choices = answer.get("choices") if isinstance(answer, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self._malformed("the body has no choices[0] object")
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise self._malformed("choices[0] has no message object")
        text = message.get("content")
        if text is None and isinstance(message.get("refusal"), str):
            text = message["refusal"]
        if not isinstance(text, str):
            raise self._malformed(f"choices[0].message.content is {json_kind(text)}, not a string")
        finish_reason = choices[0].get("finish_reason")
        if finish_reason is not None and not isinstance(finish_reason, str):
            raise self._malformed(f"choices[0].finish_reason is {json_kind(finish_reason)}, not a string")
        return text, finish_reason

    def _usage(self, answer: dict[str, Any]) -> TokenUsage | None:
        usage = answer.get("usage")
        if usage is None:
            return None
        if not isinstance(usage, dict):
            raise self._malformed(f"usage is {json_kind(usage)}, not an object")
        counts: dict[str, int | None] = {}
        for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
            count = usage.get(name)
            if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count < 0):
                raise self._malformed(f"usage.{name} is {count!r}, not a count")
            counts[name] = count
        return TokenUsage(**counts)
