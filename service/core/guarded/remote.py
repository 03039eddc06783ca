"""A client's query to a remote store under its limits: the time limit as the request's timeout, the answer
read as a stream and dropped at the result-size limit, so the service never holds more than that.

A disconnect is noticed between chunks, or at the time limit at the latest (a blocked read cannot be
interrupted from another thread). The engine's own query timeout (``oxigraph serve --timeout-s``, Virtuoso's
``MaxQueryExecutionTime``) should be set a little above ``CAIE_QUERY_TIME_LIMIT_S``, so the engine stops the
query too once the service has given up on it.
"""

from __future__ import annotations

from typing import Any

import httpx

from .limits import QueryLimits


def limited_request(client: httpx.Client, method: str, url: str, limits: QueryLimits, **kwargs: Any) -> httpx.Response:
    """The response, its body read whole, or :class:`QueryLimitExceeded`/:class:`Cancelled` once a limit is hit.

    ``httpx.TimeoutException`` at the time limit becomes the time-limit error; other transport errors propagate.
    """
    try:
        with client.stream(method, url, timeout=max(limits.remaining(), 0.001), **kwargs) as response:
            parts, size = [], 0
            for part in response.iter_bytes():  # decoded: the limit counts what is kept
                size += len(part)
                if size > limits.max_bytes:
                    raise limits.too_large()
                parts.append(part)
                limits.check()
    except httpx.TimeoutException:
        raise limits.timed_out() from None
    headers = [
        (name, value)
        for name, value in response.headers.multi_items()
        if name not in ("content-encoding", "content-length")
    ]
    return httpx.Response(response.status_code, headers=headers, content=b"".join(parts), request=response.request)
