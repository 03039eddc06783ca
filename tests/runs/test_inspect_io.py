"""A plan exported as an Inspect dataset, run by inspect-ai itself, and its log read back onto the probes.

The evals run in one child process (``python -m tests.runs.test_inspect_io``, the ``__main__`` block below):
``inspect_ai.eval`` sets the root logger's level and adds its handler, which must not leak into other test
files sharing a pytest worker. The model is inspect-ai's own ``mockllm/model`` with replies that echo the last
user turn (token usage given, so it never fetches a tokenizer), and one follow-up that makes it fail.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from service.plan.model import Probe
from service.runs.inspect_io import (
    INSPECT_EXTRA,
    ExportedProbe,
    InspectImport,
    InspectNotInstalled,
    export_dataset,
    read_inspect_log,
    write_dataset,
)

REPO = Path(__file__).resolve().parents[2]
PLAN = "https://example.org/caie/evaluations/e1/plans/1"
RELEASE = "mock-release-2026-11"
FAILING_TURN = "Is the clinic open on Sunday?"  # the mock model fails on this follow-up
PROBES = (
    ExportedProbe(
        f"{PLAN}/probes/1",
        PLAN,
        "When should my baby get the measles vaccine in Kenya?",
        ("And the second dose?",),
        "en",
        (f"{PLAN}#c1", f"{PLAN}#c2"),
    ),
    ExportedProbe(
        f"{PLAN}/probes/2", PLAN, "Mtoto wangu alikutana na mtu mwenye surua. Nifanye nini?", (), "sw", (f"{PLAN}#c3",)
    ),
    ExportedProbe(
        f"{PLAN}/probes/3",
        PLAN,
        "Mon fils a de la fièvre et des boutons, que faire ?",
        ("Dois-je appeler avant d'aller au centre de santé ?", "Et pour sa sœur ?"),
        "fr",
        (f"{PLAN}#c1",),
    ),
    ExportedProbe(
        f"{PLAN}/probes/4", PLAN, "My child was exposed to measles yesterday.", (FAILING_TURN,), "en", (f"{PLAN}#c2",)
    ),
)
ANSWERED = PROBES[:3]


def _reply(text: str) -> str:
    return f"echo: {text}"


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three Inspect logs: the plan under the scripted solver, a multi-turn probe under plain generate(), and a
    dataset that names no probes."""
    directory = tmp_path_factory.mktemp("inspect")
    exported = write_dataset(PROBES, directory / "plan.jsonl")
    multi_turn = write_dataset(PROBES[:1], directory / "multi-turn.jsonl")
    plain = directory / "plain.jsonl"
    plain.write_text(json.dumps({"id": 1, "input": "What is measles?"}) + "\n", encoding="utf-8")
    runs = {"scripted": (exported, "scripted"), "generate": (multi_turn, "generate"), "plain": (plain, "generate")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.runs.test_inspect_io",
            str(directory / "logs"),
            *(f"{dataset}={solver}" for dataset, solver in runs.values()),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(zip(runs, map(Path, json.loads(done.stdout.splitlines()[-1]))))


@pytest.fixture(scope="module")
def imported(logs: dict[str, Path]) -> InspectImport:
    return read_inspect_log(logs["scripted"])


def test_export_has_one_sample_per_probe_carrying_its_iris() -> None:
    samples = export_dataset(PROBES)
    assert [sample["id"] for sample in samples] == [probe.probe for probe in PROBES]
    third = samples[2]
    assert third["input"] == [{"role": "user", "content": PROBES[2].opening}]
    assert third["metadata"] == {
        "probe": f"{PLAN}/probes/3",
        "plan": PLAN,
        "criteria": [f"{PLAN}#c1"],
        "language": "fr",
        "follow_ups": list(PROBES[2].follow_ups),
    }


def test_a_plan_probe_exports_with_every_criterion_it_exercises_once() -> None:
    probe = Probe(
        iri=f"{PLAN}/probes/7",
        number=7,
        criterion=f"{PLAN}#c2",
        exercises=(f"{PLAN}#c1", f"{PLAN}#c2"),
        scenario=f"{PLAN}#s7",
        opening_prompt="Where can I get vaccinated?",
        language="en",
        assigned_to=None,
    )
    exported = ExportedProbe.of(probe, PLAN, ["Today?"])
    assert exported == ExportedProbe(
        f"{PLAN}/probes/7", PLAN, "Where can I get vaccinated?", ("Today?",), "en", (f"{PLAN}#c2", f"{PLAN}#c1")
    )


def test_the_log_comes_back_onto_the_right_probes_with_every_turn_and_reply(imported: InspectImport) -> None:
    assert imported.probes == tuple(probe.probe for probe in PROBES)
    traces = {trace.probe: trace for trace in imported.traces}
    assert set(traces) == {probe.probe for probe in ANSWERED}
    for probe in ANSWERED:
        trace = traces[probe.probe]
        expected = [
            (role, text)
            for user_turn in (probe.opening, *probe.follow_ups)
            for role, text in (("user", user_turn), ("assistant", _reply(user_turn)))
        ]
        assert [(turn.role, turn.text) for turn in trace.turns] == expected
        assert [exchange.text for exchange in trace.exchanges] == [
            _reply(text) for text in (probe.opening, *probe.follow_ups)
        ]
        for exchange in trace.exchanges:
            assert exchange.started <= exchange.ended and exchange.started.utcoffset().total_seconds() == 0
            assert exchange.latency_s >= 0 and exchange.finish_reason == "stop"
            assert (exchange.usage.prompt_tokens, exchange.usage.completion_tokens) == (7, 3)
        assert trace.started <= trace.ended


def test_the_target_version_is_the_logs_model_and_generate_config(imported: InspectImport) -> None:
    target = imported.target
    assert (target.system, target.model_release, target.adapter) == ("mockllm/model", RELEASE, "imported")
    assert target.parameters == {"temperature": 0.2, "max_tokens": 200}
    assert {result.target for result in (*imported.traces, *imported.errors)} == {target.fingerprint}


def test_a_sample_that_failed_on_a_follow_up_is_an_execution_error(imported: InspectImport) -> None:
    [error] = imported.errors
    failed = PROBES[3]
    assert (error.probe, error.kind, error.turn, error.attempts) == (failed.probe, "reported", 2, 1)
    assert "the target dropped the connection" in error.message
    assert [turn.text for turn in error.turns] == [failed.opening, _reply(failed.opening)]


def test_a_multi_turn_probe_run_with_plain_generate_is_refused_naming_the_sample(logs: dict[str, Path]) -> None:
    with pytest.raises(
        ValueError,
        match=rf"sample '{PLAN}/probes/1' \(epoch 1\): 1 of its 2 user turns have a reply"
        ".*scripted_follow_ups",
    ):
        read_inspect_log(logs["generate"])


def test_a_log_whose_samples_name_no_probe_is_refused_naming_the_sample(logs: dict[str, Path]) -> None:
    with pytest.raises(ValueError, match=r"sample 1 \(epoch 1\) names no probe IRI"):
        read_inspect_log(logs["plain"])


def test_a_file_that_is_no_inspect_log_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    path.write_text("not a log", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{path} cannot be read as an Inspect eval log"):
        read_inspect_log(path)


def test_without_the_extra_the_error_names_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # what an install without the extra finds
    with pytest.raises(InspectNotInstalled, match=rf"pip install '{INSPECT_EXTRA}'".replace("[", r"\[")):
        read_inspect_log(tmp_path / "any.eval")


def _mock_reply(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
    """The mock model's reply (``custom_outputs``): an echo of the last user turn, or a failure on one."""
    from inspect_ai.model import ModelOutput, ModelUsage

    last = messages[-1].text
    if last == FAILING_TURN:
        raise RuntimeError("the target dropped the connection")
    output = ModelOutput.from_content(model=RELEASE, content=_reply(last))
    output.usage = ModelUsage(input_tokens=7, output_tokens=3, total_tokens=10)
    return output


def _run_evals(log_dir: str, runs: list[str]) -> None:
    """Run ``dataset=solver`` evals with inspect-ai and print their log locations as one JSON line."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import json_dataset
    from inspect_ai.model import get_model
    from inspect_ai.solver import generate

    from service.runs.inspect_io import scripted_follow_ups

    model = get_model("mockllm/model", custom_outputs=_mock_reply)
    locations = []
    for run in runs:
        dataset, solver = run.rsplit("=", 1)
        task = Task(dataset=json_dataset(dataset), solver=scripted_follow_ups() if solver == "scripted" else generate())
        [log] = inspect_eval(
            task, model=model, log_dir=log_dir, display="none", fail_on_error=False, temperature=0.2, max_tokens=200
        )
        locations.append(log.location)
    print(json.dumps(locations))


if __name__ == "__main__":
    _run_evals(sys.argv[1], sys.argv[2:])
