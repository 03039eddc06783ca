"""Which outside addresses the service may call: a URL against the deployment's allow-list, compared as parsed parts
(scheme, host, port, path on segment boundaries), never as a text prefix, and never with user-info in it
(``http://allowed@elsewhere/`` names the host ``elsewhere``; docs/protection.md)."""

from __future__ import annotations

import ssl
from collections.abc import Sequence
from functools import cache
from urllib.parse import SplitResult, urlsplit

import httpx

DEFAULT_PORTS = {"http": 80, "https": 443}


@cache
def tls_context() -> ssl.SSLContext:
    """The TLS settings of every outside call (httpx's defaults: certifi's authorities, verification on), made once
    per process and shared by every client: each context loads the certificate bundle again, 30 to 40 ms of CPU,
    which a client per run, per remote store or per sign-in repeated. A context is safe to share between threads."""
    return httpx.create_ssl_context()


def _parts(url: str) -> tuple[SplitResult, int | None]:
    split = urlsplit(url.strip())
    return split, split.port if split.port is not None else DEFAULT_PORTS.get(split.scheme.lower())


def _segments(path: str) -> list[str]:
    return [segment for segment in path.split("/") if segment]


def refusal(url: str, allowlist: Sequence[str]) -> str | None:
    """Why ``url`` may not be called under ``allowlist`` (URL prefixes), or ``None`` when one of them allows it.
    ValueError from a malformed port counts as a refusal too."""
    try:
        split, port = _parts(url)
    except ValueError as error:
        return f"it is not a URL ({error})"
    if split.scheme.lower() not in DEFAULT_PORTS or not split.hostname:
        return "it is not an http or https URL with a host"
    if split.username is not None or split.password is not None or "@" in split.netloc:
        return "it carries user-info (a name before '@'), which would hide the host it calls"
    for allowed in allowlist:
        try:
            prefix, prefix_port = _parts(allowed)
        except ValueError:
            continue
        if (prefix.scheme.lower(), (prefix.hostname or "").lower(), prefix_port) != (
            split.scheme.lower(),
            split.hostname.lower(),
            port,
        ):
            continue
        wanted = _segments(prefix.path)
        if _segments(split.path)[: len(wanted)] == wanted:
            return None
    return "it is under none of the allowed URL prefixes"
