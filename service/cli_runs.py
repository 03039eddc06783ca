"""``caie run``: run (or continue) a plan's probes against a target from the command line, with a progress bar.

A new run is started on the approved plan; ``--run N`` continues run N where it stopped (the same target
version, or 409). The target is the demonstration chatbot, or an OpenAI-compatible endpoint whose key is read
from the environment variable ``--api-key-env`` names (never from the command line, never stored).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import timedelta

from .core.config import Credential
from .core.errors import BadRequest

CommandAdder = Callable[[argparse.ArgumentParser], argparse.ArgumentParser]


def _number_or_text(value: str) -> int | float | str:
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def _parameters(items: list[str]) -> dict[str, int | float | str]:
    """``--param temperature=0`` and the like as the request's generation parameters (numbers as numbers)."""
    out: dict[str, int | float | str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise BadRequest(f"a --param is name=value, not {item!r}")
        out[name] = _number_or_text(value)
    return out


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .composition import command_services
    from .runs.jobs import TargetSpec, build_target
    from .runs.model import ExecutionSettings
    from .runs.records import run_view, start_run
    from .runs.runner import continue_run

    if args.openai_base_url:
        spec = TargetSpec(
            "openai-compatible",
            base_url=args.openai_base_url,
            model=args.model,
            parameters=_parameters(args.param),
            api_key_env=args.api_key_env,
        )
        # the operator names the target, and the variable holding its key, on their own machine
        target = build_target(spec, [args.openai_base_url], [args.api_key_env] if args.api_key_env else [])
    else:
        target = build_target(TargetSpec("demo"), [])
    settings = ExecutionSettings(concurrency=args.concurrency, timeout_s=args.timeout, retries=args.retries)
    operator = Credential(agent=args.agent, roles=frozenset({"evaluation_operator"}))
    services = command_services(args)
    try:
        graphs = services.graphs
        view = (
            run_view(graphs, args.evaluation, args.run_number)
            if args.run_number
            else start_run(
                graphs,
                args.evaluation,
                args.plan,
                target.version,
                settings,
                operator,
                outside_boundary=args.outside_boundary,
            )
        )
        print(f"run {view.number}: {view.iri}  target {view.fingerprint}", flush=True)
        console = Console(stderr=True)
        columns = (TextColumn(f"run {view.number}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=console) as bar:
            task = bar.add_task("cases", total=view.probes, completed=view.cases)

            def progress(recorded: int, probes: int) -> None:
                bar.update(task, completed=recorded, total=probes)
                if not console.is_terminal:  # a log gets a line per write instead of a bar
                    console.print(f"run {view.number}: {recorded}/{probes} cases recorded")

            lease = timedelta(seconds=args.lease) if args.lease else None
            done = continue_run(
                graphs,
                args.evaluation,
                view.number,
                target,
                settings,
                operator,
                on_progress=progress,
                claim_size=args.claim,
                lease=lease,
            )
    finally:
        services.close()
    after = done.run
    print(
        f"ran {done.ran}, recorded {done.recorded}; run {after.number}: {after.cases} of {after.probes} probes, "
        f"{after.traces} traces, {after.errors} execution errors",
        flush=True,
    )
    return 0 if after.done else 1


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser], with_store: CommandAdder) -> None:
    sub = with_store(
        commands.add_parser("run", help="run an approved plan's probes against a target (or continue a run)")
    )
    sub.add_argument("evaluation")
    sub.add_argument("--plan", type=int, default=1, help="the approved plan to run (a new run)")
    sub.add_argument("--run", type=int, dest="run_number", help="continue this run instead of starting one")
    sub.add_argument("--openai-base-url", help="an OpenAI-compatible endpoint (default: the demonstration chatbot)")
    sub.add_argument("--model", help="the model to ask at that endpoint")
    sub.add_argument("--param", action="append", default=[], help="a generation parameter, name=value (repeatable)")
    sub.add_argument("--api-key-env", help="the environment variable holding the endpoint's key")
    sub.add_argument("--concurrency", type=int, default=8)
    sub.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
    sub.add_argument("--retries", type=int, default=2, help="retries of a transient failure")
    sub.add_argument("--claim", type=int, help="probes claimed at a time (default: four per concurrent conversation)")
    sub.add_argument(
        "--lease",
        type=float,
        help="seconds a claim holds (default: what a batch can take at worst; "
        "shorter risks another runner running a probe again)",
    )
    sub.add_argument("--agent", default="operator", help="the evaluation operator running it")
    sub.add_argument(
        "--outside-boundary",
        metavar="REASON",
        help="run a target outside the scope's version boundary on purpose, recording why (docs/reports.md)",
    )
    sub.set_defaults(run=run)
