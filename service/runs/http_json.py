"""Any JSON-over-HTTP chatbot as a :class:`~.targets.Target`: the request body from a declared template, the
reply's text found by a declared path (:class:`HttpJson`); the HTTP, the key and the failures are those of
:class:`.targets.HttpTarget`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from .model import Boundary, Exchange, TargetVersion, Turn
from .targets import DEFAULT_HTTP_TIMEOUT_S, ApiKey, HttpTarget, TargetFailure, chat_messages, json_kind

_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")
_PLACEHOLDERS = ("messages", "last_user_turn")


class HttpJson(HttpTarget):
    """Any JSON-over-HTTP chatbot, through a declared request and response mapping.

    ``request_template`` is the JSON body to POST to ``url``, with placeholders in its strings:

    - ``"{{messages}}"``, a whole string, becomes the conversation as a list of ``{"role", "content"}``
      objects (the system instructions first, when the boundary has them);
    - ``"{{last_user_turn}}"`` becomes the last user turn's text, as the whole string or inside one
      (``"Question: {{last_user_turn}}"``).

    ``response_path`` finds the reply's text in the answer: keys separated by dots, a number indexing a
    list, e.g. ``"data.reply"`` or ``"choices.0.message.content"``. The answer must hold a string there,
    else the failure is ``malformed``. Both go into the version: another mapping is another version.

    >>> bot = HttpJson("http://bot.example/ask", {"q": "{{last_user_turn}}"}, "answer", system="bot", release="1")
    >>> bot.version.adapter, bot.version.parameters["response_path"]
    ('http-json', 'answer')
    """

    def __init__(
        self,
        url: str,
        request_template: Mapping[str, Any],
        response_path: str,
        *,
        system: str,
        release: str,
        boundary: Boundary | None = None,
        api_key_env: str | None = None,
        api_key_file: str | Path | None = None,
        client: httpx.AsyncClient | None = None,
        timeout_s: float = DEFAULT_HTTP_TIMEOUT_S,
    ) -> None:
        _check_template(request_template)
        self._path = _parse_path(response_path)
        version = TargetVersion(
            system=system,
            adapter="http-json",
            model_release=release,
            endpoint=url,
            parameters={"request_template": request_template, "response_path": response_path},
            boundary=boundary or Boundary(),
        )
        super().__init__(version, ApiKey(api_key_env, api_key_file), client, timeout_s)
        self._url = url
        self._template = request_template

    async def reply(self, turns: Sequence[Turn]) -> Exchange:
        messages = chat_messages(turns, self.version.boundary.system_instructions)
        last_user_turn = next((turn.text for turn in reversed(turns) if turn.role == "user"), "")
        body = _fill(self._template, messages, last_user_turn)
        answer, started, ended, latency = await self._post(self._url, body)
        return Exchange(text=self._find_text(answer), started=started, ended=ended, latency_s=latency)

    def _find_text(self, answer: Any) -> str:
        found, walked = answer, []
        for step in self._path:
            walked.append(str(step))
            in_list = isinstance(step, int) and isinstance(found, list) and -len(found) <= step < len(found)
            if not (in_list or isinstance(step, str) and isinstance(found, dict) and step in found):
                raise TargetFailure(
                    "malformed", f"POST {self._url}: the answer has nothing at {'.'.join(walked)}", transient=False
                )
            found = found[step]
        if not isinstance(found, str):
            raise TargetFailure(
                "malformed",
                f"POST {self._url}: {'.'.join(walked)} is {json_kind(found)}, not a string",
                transient=False,
            )
        return found


def _parse_path(path: str) -> tuple[str | int, ...]:
    steps = path.split(".")
    if not path or any(not step for step in steps):
        raise ValueError(f"response_path {path!r} is not a dotted path such as 'data.reply' or 'choices.0.text'")
    return tuple(int(step) if step.lstrip("-").isdigit() else step for step in steps)


def _check_template(value: Any) -> None:
    """Refuse unknown placeholders and ``{{messages}}`` inside a longer string, where a list cannot go."""
    if isinstance(value, str):
        for match in _PLACEHOLDER.finditer(value):
            name = match.group(1)
            if name not in _PLACEHOLDERS:
                raise ValueError(
                    f"request_template: unknown placeholder {match.group(0)}; "
                    f"known: {', '.join('{{' + known + '}}' for known in _PLACEHOLDERS)}"
                )
            if name == "messages" and match.group(0) != value:
                raise ValueError("request_template: {{messages}} is a list and must be a whole string")
    elif isinstance(value, Mapping):
        for item in value.values():
            _check_template(item)
    elif isinstance(value, list):
        for item in value:
            _check_template(item)


def _fill(value: Any, messages: list[dict[str, str]], last_user_turn: str) -> Any:
    if isinstance(value, str):
        whole = _PLACEHOLDER.fullmatch(value)
        if whole and whole.group(1) == "messages":
            return messages
        return _PLACEHOLDER.sub(lambda _: last_user_turn, value)
    if isinstance(value, Mapping):
        return {key: _fill(item, messages, last_user_turn) for key, item in value.items()}
    if isinstance(value, list):
        return [_fill(item, messages, last_user_turn) for item in value]
    return value
