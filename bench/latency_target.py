"""An OpenAI-compatible chat endpoint that answers every request after a fixed latency: bench/runner.py's target.

``POST /v1/chat/completions`` waits ``BENCH_TARGET_LATENCY_S`` seconds (0.1 by default), then answers with a
short completion that echoes the last user turn, and usage counts. ``POST /stats/reset`` reports how many
requests it answered, how many of them opened a conversation (one user turn) and how many distinct openings it
saw, and the most requests it held at once, since the last reset, and starts counting again: the bench checks
that no probe was asked twice and how busy the runner kept its concurrency. ``GET /stats`` reports the same without resetting.

Run: ``python -m uvicorn bench.latency_target:app --port PORT --no-access-log``.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

LATENCY_S = float(os.environ.get("BENCH_TARGET_LATENCY_S", "0.1"))


class _Counts:
    """What the target saw, for ``GET /stats``."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.answered = 0
        self.in_flight = 0
        self.most_in_flight = 0
        self.opened = 0
        self.openings: set[str] = set()


counts = _Counts()


async def completions(request: Request) -> JSONResponse:
    body: dict[str, Any] = await request.json()
    last = body["messages"][-1]["content"]
    counts.in_flight += 1
    counts.most_in_flight = max(counts.most_in_flight, counts.in_flight)
    try:
        await asyncio.sleep(LATENCY_S)
    finally:
        counts.in_flight -= 1
    counts.answered += 1
    if sum(message["role"] == "user" for message in body["messages"]) == 1:
        counts.opened += 1
        counts.openings.add(last)
    text = f"You asked: {last[:200]}. Please call your health facility before going."
    return JSONResponse({"id": "chatcmpl-bench", "object": "chat.completion", "model": body.get("model", "bench"),
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": text}}],
                         "usage": {"prompt_tokens": len(last.split()), "completion_tokens": len(text.split()),
                                   "total_tokens": len(last.split()) + len(text.split())}})


async def stats(request: Request) -> JSONResponse:
    seen = JSONResponse({"answered": counts.answered, "opened": counts.opened,
                         "distinct_openings": len(counts.openings),
                         "most_in_flight": counts.most_in_flight, "latency_s": LATENCY_S})
    if request.method == "POST":
        counts.reset()
    return seen


app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"]),
                        Route("/stats", stats), Route("/stats/reset", stats, methods=["POST"])])
