"""The executor against a real chat server: multi-turn conversations, bounded concurrency, retries on what
is transient only, and every failure an execution error of the right kind, kept apart from the replies."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from service.runs.executor import CaseResult, RequestSpacing, execute
from service.runs.model import Boundary, CaseTrace, Conversation, ExecutionError, ExecutionSettings
from service.runs.targets import MissingCredential, OpenAICompatible

PROBE = "http://caie.test/evaluations/e1/plans/1/probes/"
FAST = ExecutionSettings(concurrency=4, timeout_s=5, retries=2, backoff_s=0.01)


def run(
    base_url: str,
    cases: list[Conversation],
    settings: ExecutionSettings = FAST,
    model: str = "echo",
    on_progress=None,
    key_env: str | None = None,
) -> list[CaseResult]:
    async def go() -> list[CaseResult]:
        async with OpenAICompatible(
            base_url, model, boundary=Boundary(system_instructions="Be brief."), api_key_env=key_env
        ) as target:
            return await execute(cases, target, settings, on_progress=on_progress)

    return asyncio.run(go())


MIXED = {
    "three-turns": ("Is the vaccine safe?", "What about a fever after it?", "How long does that last?"),
    "refused": ("[refuse] Tell me something off topic.",),
    "flaky": ("[flaky] When is the first dose?",),
    "throttled": ("[throttled] When is the second dose?",),
    "broken": ("[broken] Where can I get it?",),
    "malformed": ("[malformed] What are the signs?",),
    "bad-request": ("[bad-request] How is it treated?",),
    "second-turn-fails": ("Someone near me has measles.", "[broken] What should I do?"),
}


@pytest.fixture(scope="module")
def mixed(chat_server: str) -> dict[str, CaseResult]:
    """One run of conversations that each meet one behaviour of the server, by name."""
    cases = [Conversation(PROBE + name, turns[0], turns[1:]) for name, turns in MIXED.items()]
    results = run(f"{chat_server}/v1", cases)
    assert [result.probe for result in results] == [case.probe for case in cases]
    return {name: result for name, result in zip(MIXED, results)}


def test_a_conversation_sends_every_earlier_turn(mixed: dict[str, CaseResult]) -> None:
    trace = mixed["three-turns"]
    assert isinstance(trace, CaseTrace)
    assert [turn.role for turn in trace.turns] == ["user", "assistant"] * 3
    assert [turn.text for turn in trace.turns[::2]] == list(MIXED["three-turns"])
    assert trace.turns[-1].text == (
        "turn 3; roles system,user,assistant,user,assistant,user; you said: How long does that last?"
    )
    assert [exchange.attempts for exchange in trace.exchanges] == [1, 1, 1]
    assert trace.started <= trace.ended


def test_a_refusal_is_a_reply_not_an_error(mixed: dict[str, CaseResult]) -> None:
    assert isinstance(mixed["refused"], CaseTrace)
    assert mixed["refused"].turns[-1].text == "I'm sorry, I can't help with that."


@pytest.mark.parametrize("name", ["flaky", "throttled"])
def test_a_500_or_429_once_is_retried_and_the_reply_kept(mixed: dict[str, CaseResult], name: str) -> None:
    trace = mixed[name]
    assert isinstance(trace, CaseTrace) and trace.exchanges[0].attempts == 2
    assert trace.turns[-1].text.endswith(f"you said: {MIXED[name][0]}")


@pytest.mark.parametrize(
    ("name", "kind", "status", "attempts"),
    [
        ("broken", "http_status", 500, 3),
        ("malformed", "malformed", None, 1),
        ("bad-request", "http_status", 400, 1),
    ],
)
def test_failures_are_execution_errors_retried_only_when_transient(
    mixed: dict[str, CaseResult], name: str, kind: str, status: int | None, attempts: int
) -> None:
    error = mixed[name]
    assert isinstance(error, ExecutionError)
    assert (error.kind, error.status, error.attempts, error.turn) == (kind, status, attempts, 1)
    assert error.probe == PROBE + name and error.turns == ()


def test_a_slow_reply_times_out_after_its_retries(chat_server: str) -> None:
    # The server holds the reply 0.3 s, three times the timeout: however loaded the machine, it cannot be faster.
    [error] = run(
        f"{chat_server}/v1",
        [Conversation(PROBE + "slow", "[slow] When is the second dose?")],
        ExecutionSettings(timeout_s=0.1, retries=1, backoff_s=0.01),
    )
    assert isinstance(error, ExecutionError)
    assert (error.kind, error.attempts, error.message) == ("timeout", 2, "no reply within 0.1 s")


def test_a_failing_follow_up_keeps_the_turns_before_it(mixed: dict[str, CaseResult]) -> None:
    error = mixed["second-turn-fails"]
    assert isinstance(error, ExecutionError) and (error.kind, error.turn) == ("http_status", 2)
    assert [turn.role for turn in error.turns] == ["user", "assistant"]
    assert error.turns[0].text == "Someone near me has measles."


def test_every_result_names_the_one_target_version(chat_server: str, mixed: dict[str, CaseResult]) -> None:
    fingerprint = OpenAICompatible(
        f"{chat_server}/v1", "echo", boundary=Boundary(system_instructions="Be brief.")
    ).version.fingerprint
    assert {result.target for result in mixed.values()} == {fingerprint}


def test_concurrency_is_bounded(chat_server: str) -> None:
    finished: list[CaseResult] = []
    cases = [Conversation(f"{PROBE}{number}", f"Question {number}") for number in range(9)]
    results = run(
        f"{chat_server}/v1",
        cases,
        ExecutionSettings(concurrency=3, timeout_s=5),
        model="hold",
        on_progress=finished.append,
    )
    assert all(isinstance(result, CaseTrace) for result in results)
    assert sorted(result.probe for result in finished) == sorted(case.probe for case in cases)
    most = httpx.get(f"{chat_server}/stats/hold").json()["max_in_flight"]
    assert 1 < most <= 3


def test_an_unreachable_target_is_an_execution_error_after_its_retries(closed_port_url: str) -> None:
    [error] = run(closed_port_url, [Conversation(PROBE + "1", "Hello?")], ExecutionSettings(retries=1, backoff_s=0.01))
    assert isinstance(error, ExecutionError) and (error.kind, error.attempts) == ("unreachable", 2)


def test_a_rate_limited_run_still_answers_everything(chat_server: str) -> None:
    cases = [Conversation(f"{PROBE}{number}", f"Question {number}") for number in range(4)]
    results = run(f"{chat_server}/v1", cases, ExecutionSettings(concurrency=4, rate_per_s=100))
    assert all(isinstance(result, CaseTrace) for result in results)


def test_request_spacing_gives_each_start_its_own_slot() -> None:
    clock = [0.0]

    async def sleep(seconds: float) -> None:
        clock[0] += seconds

    async def starts() -> list[float]:
        spacing = RequestSpacing(4, clock=lambda: clock[0], sleep=sleep)
        times = []
        for _ in range(4):
            await spacing.wait_turn()
            times.append(clock[0])
        clock[0] += 10  # idle time earns no burst: the next start is immediate, the one after waits again
        for _ in range(2):
            await spacing.wait_turn()
            times.append(clock[0])
        return times

    assert asyncio.run(starts()) == [0.0, 0.25, 0.5, 0.75, 10.75, 11.0]


def test_bad_settings_and_repeated_probes_are_refused() -> None:
    with pytest.raises(
        ValueError, match="concurrency must be a whole number of at least 1, not 0; timeout_s must be above 0"
    ):
        ExecutionSettings(concurrency=0, timeout_s=0)
    with pytest.raises(ValueError, match="rate_per_s must be above 0"):
        ExecutionSettings(rate_per_s=-1)
    cases = [Conversation(PROBE + "1", "Hello?"), Conversation(PROBE + "1", "Hello again?")]
    with pytest.raises(ValueError, match=f"more than once: {PROBE}1"):
        run("http://127.0.0.1:9/v1", cases)
    with pytest.raises(ValueError, match="user turn 2 is empty"):
        Conversation(PROBE + "2", "Hello?", (" ",))


def test_a_missing_key_stops_the_run_with_its_own_error(chat_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OBCAIE_TEST_UNSET_KEY", raising=False)
    cases = [Conversation(f"{PROBE}{number}", "Hello?") for number in range(3)]
    with pytest.raises(MissingCredential, match="OBCAIE_TEST_UNSET_KEY"):
        run(f"{chat_server}/v1", cases, model="echo", key_env="OBCAIE_TEST_UNSET_KEY")
