"""The target adapters against a real chat server: what they send, what they read back, how they fail, and
that the key is sent yet never shown."""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from datetime import UTC

import pytest

from service.runs.http_json import HttpJson
from service.runs.model import Boundary, Turn
from service.runs.targets import MissingCredential, OpenAICompatible, TargetFailure

KEY_ENV = "OBCAIE_TEST_TARGET_KEY"
ASK = (Turn("user", "When is the first dose?"), Turn("assistant", "At 9 months."), Turn("user", "And the second?"))


def reply(target: OpenAICompatible | HttpJson, turns: tuple[Turn, ...] = ASK):
    async def once():
        async with target:
            return await target.reply(turns)

    return asyncio.run(once())


def failure(target: OpenAICompatible | HttpJson, turns: tuple[Turn, ...] = ASK) -> TargetFailure:
    with pytest.raises(TargetFailure) as caught:
        reply(target, turns)
    return caught.value


def test_openai_sends_the_system_instructions_and_every_turn_and_reads_usage(chat_server: str) -> None:
    target = OpenAICompatible(
        f"{chat_server}/v1",
        "echo",
        {"temperature": 0},
        boundary=Boundary(system_instructions="Answer about measles only."),
    )
    exchange = reply(target)
    assert exchange.text == "turn 2; roles system,user,assistant,user; you said: And the second?"
    assert exchange.finish_reason == "stop"
    assert exchange.usage is not None and exchange.usage.total_tokens == (
        exchange.usage.prompt_tokens + exchange.usage.completion_tokens
    )
    assert exchange.started.tzinfo == UTC and exchange.started <= exchange.ended and exchange.latency_s > 0


def test_a_refusal_is_a_reply(chat_server: str) -> None:
    exchange = reply(OpenAICompatible(f"{chat_server}/v1", "refuse"))
    assert exchange.text == "I'm sorry, I can't help with that."


@pytest.mark.parametrize(
    ("model", "kind", "status", "transient"),
    [
        ("broken", "http_status", 500, True),
        ("bad-request", "http_status", 400, False),
        ("malformed", "malformed", None, False),
        ("not-json", "malformed", None, False),
    ],
)
def test_failures_have_their_kind(chat_server: str, model: str, kind: str, status: int | None, transient: bool) -> None:
    caught = failure(OpenAICompatible(f"{chat_server}/v1", model))
    assert (caught.kind, caught.status, caught.transient) == (kind, status, transient)
    assert f"{chat_server}/v1/chat/completions" in caught.message


def test_a_429_says_how_long_to_wait(chat_server: str) -> None:
    caught = failure(OpenAICompatible(f"{chat_server}/v1", "throttled"), (Turn("user", "A unique question?"),))
    assert (caught.kind, caught.status, caught.transient, caught.retry_after_s) == ("http_status", 429, True, 0.05)


def test_a_closed_port_is_unreachable(closed_port_url: str) -> None:
    caught = failure(OpenAICompatible(closed_port_url, "echo"))
    assert (caught.kind, caught.transient) == ("unreachable", True)


def test_the_key_is_read_from_the_environment_at_each_call_and_never_shown(
    chat_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    monkeypatch.setenv(KEY_ENV, first)
    target = OpenAICompatible(f"{chat_server}/v1", "whoami", api_key_env=KEY_ENV)
    assert reply(target).text == hashlib.sha256(first.encode()).hexdigest()
    monkeypatch.setenv(KEY_ENV, second)
    assert reply(target).text == hashlib.sha256(second.encode()).hexdigest()

    echoed = failure(OpenAICompatible(f"{chat_server}/v1", "bad-request", api_key_env=KEY_ENV))
    assert "Bearer [redacted]" in echoed.message and second not in echoed.message
    shown = target.version.canonical() + target.version.fingerprint + repr(target.version)
    assert KEY_ENV not in shown and second not in shown


def test_the_key_can_come_from_a_secret_file(chat_server: str, tmp_path) -> None:
    key = secrets.token_urlsafe(24)
    (tmp_path / "key").write_text(key + "\n")
    target = OpenAICompatible(f"{chat_server}/v1", "whoami", api_key_file=tmp_path / "key")
    assert reply(target).text == hashlib.sha256(key.encode()).hexdigest()


def test_a_missing_key_names_where_it_was_looked_for(
    chat_server: str, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(MissingCredential, match=KEY_ENV):
        reply(OpenAICompatible(f"{chat_server}/v1", "echo", api_key_env=KEY_ENV))
    with pytest.raises(MissingCredential, match="secret file .* cannot be read"):
        reply(OpenAICompatible(f"{chat_server}/v1", "echo", api_key_file=tmp_path / "absent"))
    with pytest.raises(ValueError, match="not both"):
        OpenAICompatible(f"{chat_server}/v1", "echo", api_key_env=KEY_ENV, api_key_file=tmp_path / "absent")


def test_the_fingerprint_is_the_version_boundary() -> None:
    def version(**changes):
        arguments = {"base_url": "http://bot.example/v1/", "model": "m-2026-01", "params": {"temperature": 0}}
        return OpenAICompatible(**{**arguments, **changes}).version

    assert version().fingerprint == version(base_url="http://bot.example/v1").fingerprint
    assert version().fingerprint.startswith("sha256:") and len(version().fingerprint) == 7 + 64
    others = [
        version(model="m-2026-02"),
        version(params={"temperature": 0.7}),
        version(boundary=Boundary(system_instructions="Be brief.")),
        version(boundary=Boundary(retrieval={"index": "who-2026"})),
        version(boundary=Boundary(guardrails={"moderation": "strict"})),
    ]
    assert len({version().fingerprint, *(other.fingerprint for other in others)}) == 1 + len(others)
    with pytest.raises(ValueError, match="'api_key' that looks like a credential"):
        version(params={"api_key": "sk-123"})
    with pytest.raises(ValueError, match="retrieval.store has a key 'password'"):
        Boundary(retrieval={"store": {"password": "x"}})


TEMPLATE = {"conversation": "{{messages}}", "question": {"text": "Q: {{last_user_turn}}"}, "options": [1, "fixed"]}


def test_http_json_fills_the_template_and_follows_the_response_path(chat_server: str) -> None:
    target = HttpJson(
        f"{chat_server}/json/ask",
        TEMPLATE,
        "data.reply",
        system="faq-bot",
        release="3",
        boundary=Boundary(system_instructions="Be brief."),
    )
    assert reply(target).text == "4 messages (system,user,assistant,user); Q: And the second?"
    assert (
        reply(HttpJson(f"{chat_server}/json/ask", TEMPLATE, "data.sources.1", system="faq-bot", release="3")).text
        == "cdc"
    )
    assert (
        target.version.fingerprint
        != HttpJson(
            f"{chat_server}/json/ask", TEMPLATE, "data.answer", system="faq-bot", release="3"
        ).version.fingerprint
    )


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("data.answer", "nothing at data.answer"),
        ("data.sources.5", "nothing at data.sources.5"),
        ("data.sources", "data.sources is list, not a string"),
    ],
)
def test_http_json_without_text_at_the_path_is_malformed(chat_server: str, path: str, problem: str) -> None:
    caught = failure(HttpJson(f"{chat_server}/json/ask", TEMPLATE, path, system="faq-bot", release="3"))
    assert caught.kind == "malformed" and problem in caught.message


def test_http_json_refuses_a_mapping_it_cannot_follow() -> None:
    with pytest.raises(ValueError, match="unknown placeholder {{history}}"):
        HttpJson("http://bot.example/ask", {"h": "{{history}}"}, "reply", system="bot", release="1")
    with pytest.raises(ValueError, match="must be a whole string"):
        HttpJson("http://bot.example/ask", {"h": "all: {{messages}}"}, "reply", system="bot", release="1")
    with pytest.raises(ValueError, match="not a dotted path"):
        HttpJson("http://bot.example/ask", {"q": "{{last_user_turn}}"}, "data..reply", system="bot", release="1")
