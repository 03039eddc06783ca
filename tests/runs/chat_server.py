"""A small OpenAI-compatible chat server the run tests start as a real process on loopback.

Its behaviour is chosen per request: by a marker such as ``[slow]`` in the last user turn, else by the
model's name. ``echo`` (the default) answers with the turn count and the roles it received; ``hold`` does so
after 0.1 s (to overlap requests); ``slow`` after 0.3 s (to time out); ``shared`` after 0.2 s (runners
sharing a run); ``flaky`` answers 500 the first time
it sees a last user turn, then like ``echo``, and ``throttled`` likewise with 429 and ``Retry-After: 0.05``;
``broken`` always answers 500; ``malformed`` sends JSON with
no choice, ``not-json`` sends HTML; ``bad-request`` answers 400 and echoes the Authorization header back
(to check that the client scrubs it); ``refuse`` refuses (OpenAI's ``refusal`` field, no content);
``whoami`` answers the SHA-256 of the bearer token it got. As a model judge
(:mod:`service.judgments.model_judge`'s prompt): ``judge-ok`` answers a strict verdict, passed, quoting the first
words of the reply it was asked about (cantTell, quoting nothing, on an empty reply); ``judge-garbled`` answers
prose. A model named ``outage-…`` is down for every other conversation (by its opening turn, in the order they
first arrive: 503) until ``POST /recover/{model}``, then answers like ``echo`` (a target that fails some probes and
recovers, for retrying execution errors). ``GET /stats/{behaviour}`` reports the most
requests of that behaviour in flight at once, ``GET /asked/{behaviour}`` how many requests ended with each
last user turn. ``POST /json/ask`` is a non-OpenAI JSON endpoint, and
``/demo`` serves the demonstration chatbot (:func:`caie_vaccine.demo.demo_app`).

Run: ``python -m uvicorn tests.runs.chat_server:app --port PORT``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections import Counter
from typing import Any

from caie_vaccine.demo import demo_app
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse
from starlette.routing import Mount, Route

_JUDGED_REPLY = re.compile(r"The chatbot replied:\n<<<\n(.*)\n>>>\n", re.DOTALL)
DELAYS_S = {"hold": 0.1, "slow": 0.3, "shared": 0.2}
_MARKER = re.compile(r"\[([a-z-]+)\]")

in_flight: Counter[str] = Counter()
most_in_flight: Counter[str] = Counter()
seen_turns: Counter[str] = Counter()
asked: dict[str, Counter[str]] = {}
"""Per behaviour, how many requests ended with each last user turn (runners sharing a run must ask each once)."""
outages: dict[str, dict[str, bool]] = {}
"""Per ``outage-…`` model, per opening turn, whether its conversation fails while the outage lasts."""
recovered: set[str] = set()


def _echo(messages: list[dict[str, Any]]) -> JSONResponse:
    roles = [message["role"] for message in messages]
    last = messages[-1]["content"]
    text = f"turn {roles.count('user')}; roles {','.join(roles)}; you said: {last}"
    prompt_words = sum(len(message["content"].split()) for message in messages)
    return _completion(
        {"role": "assistant", "content": text},
        usage={
            "prompt_tokens": prompt_words,
            "completion_tokens": len(text.split()),
            "total_tokens": prompt_words + len(text.split()),
        },
    )


def _completion(message: dict[str, Any], usage: dict[str, int] | None = None) -> JSONResponse:
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "test",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }
    if usage is not None:
        body["usage"] = usage
    return JSONResponse(body)


async def chat_completions(request: Request) -> Any:
    body = await request.json()
    messages = body["messages"]
    last = messages[-1]["content"]
    marker = _MARKER.search(last)
    behaviour = marker.group(1) if marker else body["model"]
    in_flight[behaviour] += 1
    asked.setdefault(behaviour, Counter())[last] += 1
    most_in_flight[behaviour] = max(most_in_flight[behaviour], in_flight[behaviour])
    try:
        await asyncio.sleep(DELAYS_S.get(behaviour, 0.0))
        return _answer(behaviour, messages, request.headers.get("authorization", ""))
    finally:
        in_flight[behaviour] -= 1


def _answer(behaviour: str, messages: list[dict[str, Any]], authorization: str) -> Any:
    if behaviour.startswith("outage") and behaviour not in recovered:
        seen = outages.setdefault(behaviour, {})
        opening = next(m["content"] for m in messages if m["role"] == "user")
        if seen.setdefault(opening, len(seen) % 2 == 0):
            return PlainTextResponse("service unavailable", status_code=503)
    if behaviour in ("flaky", "throttled"):
        seen_turns[messages[-1]["content"]] += 1
        if seen_turns[messages[-1]["content"]] == 1 and behaviour == "flaky":
            return PlainTextResponse("temporarily broken", status_code=500)
        if seen_turns[messages[-1]["content"]] == 1:
            return PlainTextResponse("slow down", status_code=429, headers={"Retry-After": "0.05"})
    if behaviour == "broken":
        return PlainTextResponse("internal error", status_code=500)
    if behaviour == "malformed":
        return JSONResponse({"choices": []})
    if behaviour == "not-json":
        return HTMLResponse("<html><body>gateway page</body></html>")
    if behaviour == "bad-request":
        return JSONResponse({"error": "bad request", "you_sent": authorization}, status_code=400)
    if behaviour == "refuse":
        return _completion({"role": "assistant", "content": None, "refusal": "I'm sorry, I can't help with that."})
    if behaviour == "judge-ok":
        return _completion({"role": "assistant", "content": _verdict(messages[-1]["content"])})
    if behaviour == "judge-garbled":
        return _completion({"role": "assistant", "content": "Looks fine to me: the reply passes, I would say."})
    if behaviour == "whoami":
        token = authorization.removeprefix("Bearer ")
        return _completion({"role": "assistant", "content": hashlib.sha256(token.encode()).hexdigest()})
    return _echo(messages)


def _verdict(prompt: str) -> str:
    found = _JUDGED_REPLY.search(prompt)
    reply = found.group(1) if found else ""
    quote = " ".join(reply.split(" ")[:4])
    return json.dumps(
        {
            "outcome": "passed" if quote else "cantTell",
            "quote": quote,
            "rationale": f"the reply opens with {quote!r}" if quote else "the reply is empty",
        }
    )


async def json_ask(request: Request) -> JSONResponse:
    """A chatbot with its own JSON shape: the conversation and the question in, ``data.reply`` out."""
    body = await request.json()
    conversation, question = body.get("conversation"), body.get("question", {}).get("text")
    if not isinstance(conversation, list) or not isinstance(question, str):
        return JSONResponse(
            {"error": "conversation (a list) and question.text (a string) are required"}, status_code=400
        )
    roles = ",".join(message["role"] for message in conversation)
    return JSONResponse(
        {"data": {"reply": f"{len(conversation)} messages ({roles}); {question}", "sources": ["who", "cdc"]}}
    )


async def stats(request: Request) -> JSONResponse:
    return JSONResponse({"max_in_flight": most_in_flight[request.path_params["behaviour"]]})


async def asked_counts(request: Request) -> JSONResponse:
    return JSONResponse(dict(asked.get(request.path_params["behaviour"], Counter())))


async def recover(request: Request) -> PlainTextResponse:
    recovered.add(request.path_params["model"])
    return PlainTextResponse("recovered")


async def health(request: Request) -> PlainTextResponse:
    return PlainTextResponse("ok")


app = Starlette(
    routes=[
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/json/ask", json_ask, methods=["POST"]),
        Route("/stats/{behaviour}", stats),
        Route("/asked/{behaviour}", asked_counts),
        Route("/recover/{model}", recover, methods=["POST"]),
        Route("/health", health),
        Mount("/demo", demo_app()),
    ]
)
