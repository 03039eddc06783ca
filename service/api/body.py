"""Reading request bodies under the deployment's size limit."""

from __future__ import annotations

from fastapi import Request

from ..core.errors import PayloadTooLarge


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, or 413 as soon as it exceeds ``limit`` bytes (declared or streamed)."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"the body is {declared} bytes; this deployment accepts at most {limit}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"the body exceeds this deployment's limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
