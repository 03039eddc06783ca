"""A plan's probes as an Inspect AI dataset, and an Inspect eval log back as traces (issue 10, §3).

Export (:func:`export_dataset`, :func:`write_dataset`): one sample per probe, in the JSONL form Inspect's
``json_dataset`` reads: ``id`` the probe IRI, ``input`` the opening turn as one user message, ``metadata``
the probe and plan IRIs, the criterion IRIs, the language tag and the scripted follow-up turns. Follow-ups
are not part of ``input``: a model given several user messages answers once, but a probe needs a reply to
each turn, so a multi-turn probe runs with :func:`scripted_follow_ups` as its solver (plain ``generate()``
is enough for single-turn probes).

Import (:func:`read_inspect_log`): the log is read with ``inspect_ai.log.read_eval_log``; each sample becomes
a :class:`~.model.CaseTrace` (or an :class:`~.model.ExecutionError` when the log says it failed before every
user turn was answered), its replies timed by the log's model events. ``inspect-ai`` is the optional extra
``inspect``, imported only here and only when called. Nothing here checks that the probes belong to a plan
or writes the record: the records layer does, with :attr:`InspectImport.probes`.
"""

from __future__ import annotations

import importlib
import json
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from .model import Boundary, CaseTrace, ErrorKind, Exchange, ExecutionError, TargetVersion, TokenUsage, Turn

if TYPE_CHECKING:
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import EvalLog, EvalSample

    from ..plan.model import Probe

INSPECT_EXTRA = "ob-caie[inspect]"

# Sample metadata keys written by the export and read back by the import.
PROBE_KEY = "probe"
PLAN_KEY = "plan"
CRITERIA_KEY = "criteria"
LANGUAGE_KEY = "language"
FOLLOW_UPS_KEY = "follow_ups"

# Inspect's limits that mean the conversation ran out of time; any other limit is reported as it is.
_TIME_LIMITS = frozenset({"time", "working"})
# Settings of Inspect's client (retries, timeouts, connections, caching), not of what the model is asked:
# left out of the version boundary so that two runs differing only in them stay one version.
_CLIENT_SETTINGS = frozenset(
    {
        "max_retries",
        "timeout",
        "attempt_timeout",
        "stream_idle_timeout",
        "max_connections",
        "adaptive_connections",
        "cache",
        "batch",
        "extra_headers",
    }
)


class InspectNotInstalled(ImportError):
    """``inspect-ai`` is not installed: the optional extra is needed to read Inspect logs or run the solver."""


@dataclass(frozen=True)
class ExportedProbe:
    """What a probe's Inspect sample carries: made from a plan's :class:`~service.plan.model.Probe` by
    :meth:`of`, or directly (this module reads no store)."""

    probe: str
    plan: str
    opening: str
    follow_ups: tuple[str, ...] = ()
    language: str | None = None
    criteria: tuple[str, ...] = ()

    @classmethod
    def of(cls, probe: Probe, plan: str, follow_ups: Sequence[str] = ()) -> ExportedProbe:
        """The probe of ``plan`` with the criteria it exercises (its allocated one first)."""
        criteria = tuple(dict.fromkeys((probe.criterion, *probe.exercises)))
        return cls(
            probe=probe.iri,
            plan=plan,
            opening=probe.opening_prompt,
            follow_ups=tuple(follow_ups),
            language=probe.language,
            criteria=criteria,
        )


def export_dataset(probes: Iterable[ExportedProbe]) -> list[dict[str, Any]]:
    """One Inspect sample (a ``json_dataset`` record) per probe, in the order given."""
    return [
        {
            "id": probe.probe,
            "input": [{"role": "user", "content": probe.opening}],
            "metadata": {
                PROBE_KEY: probe.probe,
                PLAN_KEY: probe.plan,
                CRITERIA_KEY: list(probe.criteria),
                LANGUAGE_KEY: probe.language,
                FOLLOW_UPS_KEY: list(probe.follow_ups),
            },
        }
        for probe in probes
    ]


def write_dataset(probes: Iterable[ExportedProbe], path: str | Path) -> Path:
    """Write :func:`export_dataset` to ``path`` as JSONL (UTF-8, one sample a line); returns the path."""
    path = Path(path)
    with path.open("w", encoding="utf-8") as out:
        for sample in export_dataset(probes):
            out.write(json.dumps(sample, ensure_ascii=False) + "\n")
    return path


def scripted_follow_ups() -> Any:
    """An Inspect solver that plays a probe as the executor does: a reply to the opening turn, then each
    follow-up from the sample's metadata sent after the replies before it, with its own reply."""
    solver_module = _inspect("inspect_ai.solver")
    user_message = _inspect("inspect_ai.model").ChatMessageUser

    def play() -> Any:
        async def solve(state: Any, generate: Any) -> Any:
            state = await generate(state)
            for text in state.metadata.get(FOLLOW_UPS_KEY, ()):
                if state.completed:  # a limit ended the sample: the import reports it as an execution error
                    break
                state.messages.append(user_message(content=text))
                state = await generate(state)
            return state

        return solve

    # applied as a call, not as @: Inspect is imported only when used, so its decorator is untyped here
    return solver_module.solver(name="caie_scripted_follow_ups")(play)()


@dataclass(frozen=True)
class InspectImport:
    """An Inspect log read back: the one target version its samples were answered by, the conversations
    answered to the end, and the samples that failed before that."""

    target: TargetVersion
    traces: tuple[CaseTrace, ...]
    errors: tuple[ExecutionError, ...]

    @property
    def probes(self) -> tuple[str, ...]:
        """Every probe IRI the log names: the records layer checks that each is one of the plan's."""
        return tuple(trace.probe for trace in self.traces) + tuple(error.probe for error in self.errors)


@dataclass(frozen=True)
class _Played:
    """One sample read, before the target version (which needs every sample) is known."""

    name: str
    probe: str
    turns: tuple[Turn, ...]
    exchanges: tuple[Exchange, ...]
    releases: tuple[str, ...]  # the model releases the provider reported in the replies
    failure: tuple[ErrorKind, str, int] | None  # kind, message, attempts: when not every user turn was answered


def read_inspect_log(path: str | Path, *, system: str | None = None) -> InspectImport:
    """Read the Inspect eval log at ``path`` (``.eval`` or ``.json``) with inspect-ai's own reader.

    ``system`` names the system under test (default: the log's model name). The model release is the one
    the provider reported in its replies; the parameters are the log's generate config. Raises
    :class:`InspectNotInstalled` without the extra, ``ValueError`` naming the sample for a sample that names
    no probe IRI, repeats a probe, or lacks a reply it should have.
    """
    reader = _inspect("inspect_ai.log").read_eval_log
    try:
        log: EvalLog = reader(str(path))
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        raise ValueError(f"{path} cannot be read as an Inspect eval log: {error}") from error
    if not log.samples:
        raise ValueError(f"{path} holds no samples (an Inspect log written with log_samples=False has none)")
    played = [_play(sample) for sample in log.samples]
    _refuse_repeated_probes(played)
    releases: dict[str, str] = {}  # release -> the first sample that reported it
    instructions: dict[str | None, str] = {}  # likewise for the system messages
    for case, sample in zip(played, log.samples):
        for release in case.releases:
            releases.setdefault(release, case.name)
        instructions.setdefault(_system_instructions(sample), case.name)
    if len(releases) > 1:
        (first, first_at), (second, second_at) = list(releases.items())[:2]
        raise ValueError(
            f"the log's replies come from two model releases, {first!r} ({first_at}) and "
            f"{second!r} ({second_at}): one import is one target version"
        )
    if len(instructions) > 1:
        (_, first_at), (_, second_at) = list(instructions.items())[:2]
        raise ValueError(f"{first_at} and {second_at} have different system messages: one import is one target version")
    version = TargetVersion(
        system=system or log.eval.model,
        adapter="imported",
        model_release=next(iter(releases), log.eval.model),
        endpoint=log.eval.model_base_url,
        parameters=_parameters(log),
        boundary=Boundary(system_instructions=next(iter(instructions))),
    )
    traces: list[CaseTrace] = []
    errors: list[ExecutionError] = []
    for case in played:
        if case.failure is None:
            traces.append(
                CaseTrace(probe=case.probe, target=version.fingerprint, turns=case.turns, exchanges=case.exchanges)
            )
        else:
            kind, message, attempts = case.failure
            errors.append(
                ExecutionError(
                    probe=case.probe,
                    target=version.fingerprint,
                    kind=kind,
                    message=message,
                    attempts=attempts,
                    turn=len(case.exchanges) + 1,
                    turns=case.turns,
                )
            )
    return InspectImport(target=version, traces=tuple(traces), errors=tuple(errors))


def _inspect(module: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError as missing:
        raise InspectNotInstalled(
            f"Inspect AI logs and datasets need the optional extra: pip install '{INSPECT_EXTRA}' ({missing})"
        ) from missing


def _sample_name(sample: EvalSample) -> str:
    return f"sample {sample.id!r} (epoch {sample.epoch})"


def _probe_of(sample: EvalSample, name: str) -> str:
    probe = sample.metadata.get(PROBE_KEY, sample.id)
    if not isinstance(probe, str) or not probe.startswith(("http://", "https://")):
        raise ValueError(
            f"{name} names no probe IRI: neither its metadata {PROBE_KEY!r} nor its id is an "
            "http(s) IRI (export the plan with export_dataset so that each sample carries its probe)"
        )
    return probe


def _play(sample: EvalSample) -> _Played:
    """The sample's conversation, its replies timed by their model events, and its failure if it has one."""
    name = _sample_name(sample)
    probe = _probe_of(sample, name)
    events: dict[str | None, ModelEvent] = {
        event.output.message.id: event
        for event in sample.events
        if event.event == "model" and event.error is None and event.output.choices
    }
    turns: list[Turn] = []
    exchanges: list[Exchange] = []
    releases: list[str] = []
    answered = 0  # how many turns (a prefix of ``turns``) end with a reply
    for message in sample.messages:
        if message.role == "system":
            continue  # the version boundary's system instructions, not a turn
        if message.role == "user":
            if turns and turns[-1].role == "user":
                raise ValueError(
                    f"{name}: user turns {len(exchanges) + 1} and {len(exchanges) + 2} have no reply "
                    "between them; a probe gets a reply to each turn (use scripted_follow_ups)"
                )
            turns.append(Turn(role="user", text=message.text))
        elif message.role == "assistant" and turns and turns[-1].role == "user":
            event = events.get(message.id) if message.id else None
            if event is None or event.completed is None:
                raise ValueError(
                    f"{name}: reply {len(exchanges) + 1} has no completed model event in the log, so "
                    "when it was made is unknown"
                )
            exchanges.append(_exchange(message.text, event))
            releases.append(event.output.model)
            turns.append(Turn(role="assistant", text=message.text))
            answered = len(turns)
        else:
            raise ValueError(
                f"{name}: a message from {message.role!r} after turn {len(turns)}; a probe is a "
                "conversation of user turns, each followed by the model's reply"
            )
    scripted = sample.metadata.get(FOLLOW_UPS_KEY)
    user_turns = sum(1 for turn in turns if turn.role == "user")
    expected = 1 + len(scripted) if isinstance(scripted, list) else max(1, user_turns)
    if len(exchanges) >= expected:
        return _Played(name, probe, tuple(turns), tuple(exchanges), tuple(releases), None)
    failure = _failure(sample)
    if failure is None:
        raise ValueError(
            f"{name}: {len(exchanges)} of its {expected} user turns have a reply and the log names no "
            "error or limit; run multi-turn probes with the scripted_follow_ups solver"
        )
    return _Played(name, probe, tuple(turns[:answered]), tuple(exchanges), tuple(releases), failure)


def _failure(sample: EvalSample) -> tuple[ErrorKind, str, int] | None:
    if sample.error is not None:
        return "reported", sample.error.message, len(sample.error_retries or ()) + 1
    if sample.limit is not None:
        kind: ErrorKind = "timeout" if sample.limit.type in _TIME_LIMITS else "reported"
        return kind, f"the sample hit its {sample.limit.type} limit of {sample.limit.limit:g}", 1
    return None


def _exchange(text: str, event: ModelEvent) -> Exchange:
    started = _utc(event.timestamp)
    ended = _utc(cast(datetime, event.completed))
    usage = event.output.usage
    return Exchange(
        text=text,
        started=started,
        ended=ended,
        latency_s=event.output.time if event.output.time is not None else (ended - started).total_seconds(),
        usage=None
        if usage is None
        else TokenUsage(
            prompt_tokens=usage.input_tokens, completion_tokens=usage.output_tokens, total_tokens=usage.total_tokens
        ),
        finish_reason=event.output.stop_reason,
        attempts=(event.retries or 0) + 1,
    )


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC)


def _system_instructions(sample: EvalSample) -> str | None:
    texts = [message.text for message in sample.messages if message.role == "system"]
    return "\n\n".join(texts) if texts else None


def _refuse_repeated_probes(played: Sequence[_Played]) -> None:
    first_sample: dict[str, str] = {}
    for case in played:
        if case.probe in first_sample:
            raise ValueError(
                f"{first_sample[case.probe]} and {case.name} both name probe {case.probe} (a log of "
                "several epochs, or a dataset with a probe twice): import one answer per probe"
            )
        first_sample[case.probe] = case.name


def _parameters(log: EvalLog) -> dict[str, Any]:
    """The generate config the model was asked with: the model's own, then the eval's over it."""
    config = log.eval.model_generate_config.merge(log.plan.config)
    return {key: value for key, value in config.model_dump(exclude_none=True).items() if key not in _CLIENT_SETTINGS}
