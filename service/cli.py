"""``caie``: serve, load, query and validate from the command line."""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Self

from .cli_reports import add_commands as add_report_commands
from .cli_runs import add_command as add_run_command
from .cli_serve import run_until_signalled
from .core.errors import ServiceError

if TYPE_CHECKING:
    from rich.progress import TaskID


DEMO_ROLES = {
    "admin": ["admin"],
    "annie": ["domain_expert"],
    "theo": ["evaluation_operator"],
    "dana": ["organizational_expert"],
    "ada": ["annotator"],
}
DEMO_LANGUAGES = {"ada": ["en", "fr"]}
"""The languages a demo person reads (an annotator's queue is assigned by them)."""


def _demo_tokens(data_dir: Path) -> Path:
    """A tokens file of random tokens for the demo agents, made once per data directory."""
    path = data_dir / "tokens.json"
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        tokens = {secrets.token_urlsafe(24): {"agent": agent, "roles": roles} for agent, roles in DEMO_ROLES.items()}
        path.write_text(json.dumps(tokens, indent=2), encoding="utf-8")
        path.chmod(0o600)
    return path


def _demo_people(data_dir: Path) -> Path:
    """A people file with one demo person per role and random passwords, made once per data directory."""
    path = data_dir / "people.json"
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        people = [
            {
                "agent": agent,
                "username": agent,
                "password": secrets.token_urlsafe(12),
                "roles": roles,
                "name": agent.capitalize(),
                **({"languages": DEMO_LANGUAGES[agent]} if agent in DEMO_LANGUAGES else {}),
            }
            for agent, roles in DEMO_ROLES.items()
        ]
        path.touch(mode=0o600)  # never readable by others, not even for a moment
        path.write_text(json.dumps(people, indent=2), encoding="utf-8")
    return path


def serve(args: argparse.Namespace) -> int:
    from .api import create_app
    from .composition import command_settings
    from .core.bootstrap import load_spec_files
    from .core.plugins import worked_examples

    settings = command_settings(args)
    if not args.base_url and "base_url" not in settings.model_fields_set:
        host = "localhost" if args.host in ("127.0.0.1", "0.0.0.0", "::") else args.host
        settings = settings.model_copy(update={"base_url": f"http://{host}:{args.port}/"})
    # tokens, people and the engine's ontologies with or without --examples: a domain of one's own needs them too
    if settings.data_dir and settings.tokens is None and settings.tokens_file is None:
        settings = settings.model_copy(update={"tokens_file": _demo_tokens(settings.data_dir)})
    if settings.data_dir and settings.people is None and settings.people_file is None:
        settings = settings.model_copy(update={"people_file": _demo_people(settings.data_dir)})
    app = create_app(settings)
    examples = worked_examples() if args.examples else ()  # each installed domain package's (caie.examples)
    count = load_spec_files(app.state.graphs, print, examples=args.examples)
    print(f"specification files: {count} loaded, the rest unchanged")
    for worked in examples:
        worked.load(app.state.graphs, print, signer=app.state.services.signer)  # the people's own keys
    url = f"http://{args.host}:{args.port}"
    print(f"\nOB-CAIE is serving at {url}/  (store: {settings.store}, {settings.data_dir or 'in memory'})")
    print(f"  catalog      {url}/graphs")
    print(f"  EPO          {url}/epo   e.g. {url}/epo/AcceptanceCriterion")
    print(f"  SPARQL       {url}/sparql?query=...")
    print(f"  API docs     {url}/docs")
    for worked in examples:
        example = f"{url}/evaluations/{worked.evaluation_id}"
        print(f"  example      {example}   (scope and envelope; {example}/envelope for its digest and sign-off)")
        print(f"  scenarios    {example}/scenarios?status=blocked   and   ?status=eligible")
        print(f"  plan         {example}/plans/1   and   {example}/plans/1/probes")
        print(
            f"  run          {example}/runs/1   (the demonstration chatbot's replies, by SPARQL: queries/run-traces.rq)"
        )
        print(f"  judgments    {example}/determinations   and   {example}/attestations")
        print(f"  report       {example}/reports/1   (signed off; {example}/reports/1/verify recomputes it)")
        print(f"  metrics      {example}/metrics   and   {example}/drill-down")
    if settings.tokens_file:
        print(f"  write tokens {settings.tokens_file} (agent and roles per token)")
    if settings.people_file:
        print(f"  people       {settings.people_file} (username and password per person: sign in at {url}/sign-in)")
    run_until_signalled(app, args.host, args.port)
    return 0


def load(args: argparse.Namespace) -> int:
    from .api.shapes import catalog_entry_json
    from .composition import command_services, command_settings
    from .core.bootstrap import SYSTEM
    from .core.formats import rdf_format_for_path
    from .core.graphs import WriteMode
    from .envelope.unread import unread_graphs

    settings = command_settings(args)
    services = command_services(args, settings)
    try:
        graphs = services.graphs
        graph = args.graph.removeprefix(settings.base_url).removeprefix("graphs/")  # an IRI, or KIND/ID
        kind, _, identifier = graph.partition("/")
        ref = graphs.ref(kind, identifier)
        path = Path(args.file)
        mode = WriteMode.APPEND if args.append else WriteMode.REPLACE
        result = graphs.write(
            ref, path.read_bytes(), rdf_format_for_path(path.name), SYSTEM, mode=mode, title=args.title, dso=args.dso
        )
        # as the /graphs write answers: a shapes or judges graph that nothing will read is said so now
        unread = [graph.describe() for graph in unread_graphs(graphs, [result.entry.graph])]
        print(json.dumps({**catalog_entry_json(result.entry), "warnings": unread}, indent=2))
        for warning in unread:
            print(f"caie load: warning: {warning}", file=sys.stderr)
    finally:
        services.close()
    return 0


def query(args: argparse.Namespace) -> int:
    from .composition import command_services
    from .core.formats import GRAPH_FORMATS, RESULT_FORMATS
    from .core.sparql import has_dataset_clause, query_form

    services = command_services(args)
    store = services.store
    try:
        text = Path(args.query[1:]).read_text(encoding="utf-8") if args.query.startswith("@") else args.query
        media = args.format or ("text/turtle" if query_form(text).returns_graph else "text/tab-separated-values")
        if media not in (*GRAPH_FORMATS, *RESULT_FORMATS):
            raise SystemExit(f"unknown format {media}")
        # the query's FROM/FROM NAMED when it has them, else the union, as on /sparql
        sys.stdout.write(store.answer(text, media, union=not has_dataset_clause(text)).body.decode("utf-8"))
    finally:
        services.close()
    return 0


class StageProgress:
    """The domain's ``(stage, done, total)`` progress reports as rich progress bars on stderr, one per stage."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._progress = Progress(
            TextColumn("{task.description:<20}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
        )
        self._tasks: dict[str, TaskID] = {}

    def __enter__(self) -> Self:
        self._progress.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._progress.stop()

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage not in self._tasks:
            self._tasks[stage] = self._progress.add_task(stage, total=total)
        self._progress.update(self._tasks[stage], completed=done, total=total)


def derive(args: argparse.Namespace) -> int:
    from .composition import command_services
    from .core.rdf import local_name
    from .plan.testplan import planning_input
    from .scenarios.derive import derive as run_derivation

    services = command_services(args)
    graphs = services.graphs
    try:
        with StageProgress() as progress:
            progress("deriving scenarios", 0, 1)
            planning = planning_input(graphs, args.evaluation, args.seed, args.sample)
            derivation = run_derivation(planning.derivation)
            progress("deriving scenarios", 1, 1)
    finally:
        services.close()
    counts = derivation.counts
    print(f"candidates {counts.total:,}   eligible {counts.eligible:,}   blocked {counts.blocked:,}")
    for count in counts.per_criterion:
        print(
            f"  {planning.identifiers[count.criterion]:<8} in frame {count.in_frame:>12,}   eligible {count.eligible:>12,}"
        )
    blocked = [s for s in derivation.scenarios if not s.eligible]
    print(f"sample of {len(derivation.scenarios)} (seed {args.seed}): {len(blocked)} blocked")
    for scenario in blocked[: args.show]:
        for block in scenario.blocks:
            print(f"  scenario {scenario.index}: {block.message}  [{local_name(block.rule)}]")
    return 0


def plan(args: argparse.Namespace) -> int:
    from .composition import command_services
    from .core.config import Credential
    from .plan.allocation import Strategy
    from .plan.model import PlanRequest
    from .plan.testplan import create_plan

    services = command_services(args)
    graphs = services.graphs
    operator = Credential(agent=args.agent, roles=frozenset({"evaluation_operator"}))
    try:
        request = PlanRequest(Strategy(args.strategy), args.budget, args.seed, review_sample=args.sample)
        with StageProgress() as progress:
            summary = create_plan(
                graphs, args.evaluation, request, operator, progress, max_budget=services.settings.max_plan_budget
            )
    finally:
        services.close()
    print(f"plan {summary.number}: {summary.iri}  digest {summary.digest}")
    print(f"candidates {summary.total:,}   eligible {summary.eligible:,}")
    for criterion, probes in sorted(summary.allocation.probes.items(), key=lambda item: -item[1]):
        print(
            f"  {summary.identifiers[criterion]:<8} {probes:>5} probes   eligible frame {summary.frames[criterion]:>12,}"
        )
    return 0


def init(args: argparse.Namespace) -> int:
    from .scaffold import ScaffoldError, scaffold

    try:
        written = scaffold(args.domain, Path(args.directory or args.domain))
    except ScaffoldError as error:
        print(f"caie init: {error}", file=sys.stderr)
        return 1
    print("\n".join(str(path) for path in written))
    print(f"next: edit them, then follow {written[-1]} (docs/new-domain.md explains each step)")
    return 0


def validate(args: argparse.Namespace) -> int:
    import rdflib

    from .api.shapes import validation_json
    from .core import validation
    from .core.kg_shapes import kg_shapes, repository_shapes

    kg, dso = rdflib.Graph().parse(args.kg), rdflib.Graph().parse(args.dso)
    outcome = validation.validate_kg(kg, dso, kg_shapes(dso, repository_shapes))  # the shapes the DSO declares
    print(json.dumps(validation_json(outcome), indent=2))
    return 0 if outcome.conforms else 1


def parser() -> argparse.ArgumentParser:
    main_parser = argparse.ArgumentParser(prog="caie", description="OB-CAIE linked-data service")
    commands = main_parser.add_subparsers(dest="command", required=True)

    def with_store(sub: argparse.ArgumentParser) -> argparse.ArgumentParser:
        sub.add_argument("--data-dir", help="embedded store directory (default: CAIE_DATA_DIR, else in memory)")
        sub.add_argument("--base-url", help="deployment base URL (default: CAIE_BASE_URL)")
        return sub

    serve_parser = with_store(commands.add_parser("serve", help="run the HTTP service"))
    serve_parser.add_argument("--host", default="127.0.0.1")
    serve_parser.add_argument("--port", type=int, default=8000)
    serve_parser.add_argument(
        "--examples",
        action="store_true",
        help="also load the vaccine-education domain and its worked example (idempotent)",
    )
    serve_parser.set_defaults(run=serve)

    load_parser = with_store(commands.add_parser("load", help="load an RDF file into a named graph"))
    load_parser.add_argument("file")
    load_parser.add_argument("--graph", required=True, help="graph IRI under the base, or KIND/ID (e.g. kg/kenya)")
    load_parser.add_argument("--title")
    load_parser.add_argument("--dso", help="identifier of the DSO a knowledge graph is checked against")
    load_parser.add_argument("--append", action="store_true", help="append instead of replacing")
    load_parser.set_defaults(run=load)

    query_parser = with_store(
        commands.add_parser("query", help="run a read-only SPARQL query ('@file.rq' reads a file)")
    )
    query_parser.add_argument("query")
    query_parser.add_argument("--format", help="result media type (default TSV, or Turtle for graphs)")
    query_parser.set_defaults(run=query)

    derive_parser = with_store(
        commands.add_parser("derive", help="derive and check an evaluation's scenarios; print the frame")
    )
    derive_parser.add_argument("evaluation", help="evaluation identifier (its envelope signed off)")
    derive_parser.add_argument("--seed", type=int, default=0)
    derive_parser.add_argument("--sample", type=int, default=500, help="candidates to sample and check")
    derive_parser.add_argument("--show", type=int, default=10, help="blocked scenarios to print")
    derive_parser.set_defaults(run=derive)

    plan_parser = with_store(commands.add_parser("plan", help="make a test plan for an evaluation"))
    plan_parser.add_argument("evaluation")
    plan_parser.add_argument(
        "--strategy", default="HighestWeightFirst", choices=["ProportionalToWeight", "HighestWeightFirst", "Equal"]
    )
    plan_parser.add_argument("--budget", type=int, required=True)
    plan_parser.add_argument("--seed", type=int, default=0)
    plan_parser.add_argument("--sample", type=int, default=500, help="candidates kept for expert review")
    plan_parser.add_argument("--agent", default="operator", help="the evaluation operator making the plan")
    plan_parser.set_defaults(run=plan)

    add_run_command(commands, with_store)
    add_report_commands(commands, with_store)

    init_parser = commands.add_parser("init", help="scaffold a new domain's files in a folder (docs/new-domain.md)")
    init_parser.add_argument("domain", help="the domain's name: lower-case letters, digits and '-'")
    init_parser.add_argument("directory", nargs="?", help="the folder to write them in (default: DOMAIN)")
    init_parser.set_defaults(run=init)

    validate_parser = commands.add_parser("validate", help="check a knowledge graph file against a DSO file")
    validate_parser.add_argument("kg")
    validate_parser.add_argument("--dso", required=True)
    validate_parser.set_defaults(run=validate)
    return main_parser


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return int(args.run(args))
    except ServiceError as error:
        print(f"caie: {error.message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
