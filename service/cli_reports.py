"""``caie report`` and ``caie verify``: make a draft report on a run from the command line (printing where it is
and its headline figures, coverage apart from the outcome distribution), and recompute a report's figures and
digests from the record (exit 0 when every one holds, 1 when any differs, printing the verification as JSON). ``caie
compare`` compares two reports (docs/comparison.md). ``caie verify-credentials FILE`` checks a credential or a
presentation offline, with nothing but the file (docs/trust.md).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from .core.config import Credential

CommandAdder = Callable[[argparse.ArgumentParser], argparse.ArgumentParser]


def report(args: argparse.Namespace) -> int:
    from .composition import command_services
    from .core.rdf import local_name
    from .reports.model import canon
    from .reports.records import make_report

    author = Credential(agent=args.agent, roles=frozenset({"evaluation_operator"}))
    services = command_services(args)
    try:
        made = make_report(
            services.graphs,
            args.evaluation,
            args.run_number,
            args.limitation,
            args.recommendation,
            args.fitness,
            author,
        )
    finally:
        services.close()
    f = made.figures
    print(f"report {made.number}: {made.iri}  ({made.status}, as of {made.as_of})")
    value = "undefined" if f.coverage.value is None else canon(f.coverage.value)
    print(
        f"coverage {value} ({canon(f.coverage.covered_weight)} of {canon(f.coverage.applicable_weight)} weight; "
        f"{f.coverage.covered} of {f.coverage.applicable} criteria)"
    )
    print("outcomes " + ", ".join(f"{local_name(s.outcome)} {s.count}" for s in f.distribution))
    print(
        f"failed: {' '.join(i.identifier for i in f.failed) or 'none'}   "
        f"untested: {' '.join(i.identifier for i in f.untested) or 'none'}"
    )
    return 0


def verify(args: argparse.Namespace) -> int:
    from .api.report_shapes import verification_json
    from .composition import command_services
    from .reports.records import get_report
    from .reports.verify import verify as verify_report

    services = command_services(args)
    try:
        checked = verify_report(
            services.graphs, args.evaluation, get_report(services.graphs, args.evaluation, args.number)
        )
    finally:
        services.close()
    print(json.dumps(verification_json(checked), indent=2))
    return 0 if checked.holds else 1


def verify_credentials(args: argparse.Namespace) -> int:
    """Each credential of the file (a credential, or a presentation of several) checked offline: one JSON line per
    credential; exit 0 when every one verifies, 1 when any does not (or the file holds none)."""
    from pathlib import Path

    from .credentials.presentations import check, credentials_in, statuses

    try:
        found = credentials_in(json.loads(Path(args.file).read_text(encoding="utf-8")))
    except (OSError, ValueError) as error:
        print(json.dumps({"file": args.file, "verified": False, "problems": [str(error)]}))
        return 1
    checks = [check(credential) for credential in found]
    status = statuses(found)  # read from a status list the file carries (the report's presentation does)
    for checked in checks:
        line = {"credential": checked.credential, "signer": checked.signer, "verified": checked.verified}
        said = {"status": status[checked.credential]} if checked.credential in status else {}
        print(json.dumps(line | said | {"problems": list(checked.problems)}))
    return 0 if checks and all(c.verified for c in checks) else 1


def compare(args: argparse.Namespace) -> int:
    """Print the comparison's JSON (exit 0), or the incompatibilities that refuse it (exit 1)."""
    from .api.report_shapes import comparison_json
    from .composition import command_services
    from .core.errors import Conflict
    from .reports.compare import compare as compare_reports
    from .reports.compare import side

    services = command_services(args)
    try:
        current = side(services.graphs, args.evaluation, args.number)
        found = compare_reports(args.kind, current, side(services.graphs, args.reference_evaluation, args.reference))
    except Conflict as refused:
        print(json.dumps({"compatible": False, "errors": refused.detail}, indent=2))
        return 1
    finally:
        services.close()
    iri = f"{current.report.iri}/comparisons/{args.kind}/{args.reference_evaluation}/{args.reference}"
    print(json.dumps(comparison_json(iri, found), indent=2))
    return 0


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser], with_store: CommandAdder) -> None:
    sub = with_store(commands.add_parser("report", help="make a draft report on a run; print where it is"))
    sub.add_argument("evaluation")
    sub.add_argument("--run", type=int, dest="run_number", required=True, help="the run the report covers")
    sub.add_argument("--fitness", required=True, choices=["FitToDeploy", "FitWithConditions", "NotFit"])
    sub.add_argument("--limitation", action="append", default=[], help="a limitation of the evidence (repeatable)")
    sub.add_argument("--recommendation", action="append", default=[], help="a recommendation (repeatable)")
    sub.add_argument("--agent", default="operator", help="the evaluation operator making it")
    sub.set_defaults(run=report)

    sub = with_store(commands.add_parser("verify", help="recompute a report's figures and digests from the record"))
    sub.add_argument("evaluation")
    sub.add_argument("number", type=int, help="the report's number")
    sub.set_defaults(run=verify)

    sub = commands.add_parser(
        "verify-credentials", help="check a Verifiable Credential or Presentation file offline (docs/trust.md)"
    )
    sub.add_argument("file", help="a credential or presentation, JSON-LD (e.g. GET …/reports/{n}/credentials)")
    sub.set_defaults(run=verify_credentials)

    sub = with_store(
        commands.add_parser("compare", help="compare a report with a reference report (docs/comparison.md)")
    )
    sub.add_argument("evaluation")
    sub.add_argument("number", type=int, help="the report's number")
    sub.add_argument("reference_evaluation", help="the reference report's evaluation")
    sub.add_argument("reference", type=int, help="the reference report's number")
    sub.add_argument("--kind", choices=["version", "baseline"], required=True)
    sub.set_defaults(run=compare)
