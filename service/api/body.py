"""Reading request bodies under their route's size limit (:mod:`.body_limits`)."""

from __future__ import annotations

from fastapi import Request

from ..core.config import Settings
from .body_limits import Body, BodyTooLarge


async def read_body(request: Request, settings: Settings, kind: Body) -> bytes:
    """The whole body, or 413 (closing the connection) as soon as it exceeds the limit of ``kind``, declared or
    streamed."""
    limit = kind.limit(settings)
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(kind.too_large(settings, f"is {int(declared):,} bytes"))
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(kind.too_large(settings, "is larger"))
        chunks.append(chunk)
    return b"".join(chunks)
