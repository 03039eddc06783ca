"""People's determinations and attestations from a file (issue 22 §6), as a person recorded them away from the
service (a spreadsheet, a review meeting), imported as that person: JSON Lines or CSV, one step a line.

    {"kind": "about", "statement": "what this file is, e.g. demonstration data"}
    {"kind": "determination", "by": "annie", "probe": 41, "criterion": "c06", "turn": 1, "outcome": "failed",
     "quote": "a dose of measles vaccine within 72 hours", "rationale": "..."}
    {"kind": "attestation", "by": "annie", "criterion": "c06", "outcome": "failed", "sufficiency": "sufficient",
     "appropriateness": "appropriate", "rationale": "...", "supersedesCurrent": false, "reason": null}

CSV has the same names as columns (``supersedesCurrent`` as ``true``/``false``). The probe is its number in the
run's plan, the criterion its identifier; the quote, when given, must be text of the reply to that turn: it becomes
the determination's pointer, so a rationale rests on what the reply said. A line naming someone other than the
importer is refused (403): nobody records another person's judgment. Everything is checked before anything is
recorded (422 naming each bad line); the determinations are one batch, each attestation its own record, in file
order, through the same functions as the REST calls (:func:`.records.record_rulings`, :func:`.attestations.attest`):
given the deployment's :class:`~service.credentials.signing.Signer`, each attestation is signed by the key of the
person it is recorded as, as one recorded over REST is (docs/trust.md).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass

from ..core import jsonlines
from ..core.config import Credential
from ..core.errors import BadRequest, Forbidden, Unprocessable
from ..core.graphs import GraphService
from ..core.namespaces import EARL
from ..credentials.signing import Signer
from ..plan.rdf import probe_iri
from ..runs.records import run_view
from .attestations import attest, attestations
from .records import Answered, Ruling, answered_cases, plan_criteria, record_rulings
from .separation import NO_SEPARATION, Separation

KINDS = ("about", "determination", "attestation")
OUTCOMES = ("passed", "failed", "cantTell", "inapplicable")
MEDIA = {
    "application/jsonl": "jsonl",
    "application/x-ndjson": "jsonl",
    "application/x-jsonlines": "jsonl",
    "text/csv": "csv",
}
"""The media types a file of steps may come as, and how each is read."""


@dataclass(frozen=True)
class Step:
    """One person's determination or attestation, as a line of the file (``line`` its number, from 1)."""

    line: int
    kind: str
    by: str
    criterion: str
    outcome: str
    rationale: str
    probe: int | None = None
    turn: int = 1
    quote: str | None = None
    sufficiency: str | None = None
    appropriateness: str | None = None
    supersedes_current: bool = False
    reason: str | None = None


@dataclass(frozen=True)
class StepsFile:
    about: str | None
    """What the file says it is (its ``about`` line)."""
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Imported:
    determinations: tuple[str, ...]
    attestations: tuple[str, ...]


def _records(data: bytes, form: str) -> Iterator[tuple[int, dict[str, object]]]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BadRequest(f"the file is not UTF-8 text: {error}") from error
    if form == "csv":
        for number, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
            yield number, {k: v for k, v in row.items() if k and v not in (None, "")}
        return
    try:
        yield from jsonlines.objects(text)
    except ValueError as error:
        raise BadRequest(str(error)) from None


def read_steps(data: bytes, form: str) -> StepsFile:
    """The steps of a file (``form`` ``jsonl`` or ``csv``): 400 when it cannot be read, 422 naming each bad line."""
    about, steps, problems = None, [], []
    for number, found in _records(data, form):
        kind = found.get("kind")
        if kind == "about":
            about = str(found.get("statement", "")) or None
            continue
        try:
            steps.append(_step(number, kind, found))
        except (ValueError, TypeError) as error:
            problems.append(f"line {number}: {error}")
    if problems:
        raise Unprocessable("; ".join(problems), detail=problems)
    if not steps:
        raise Unprocessable("the file has no determination or attestation")
    return StepsFile(about, tuple(steps))


def _step(number: int, kind: object, found: dict[str, object]) -> Step:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    missing = [name for name in ("by", "criterion", "outcome", "rationale") if not str(found.get(name, "")).strip()]
    if kind == "determination" and found.get("probe") is None:
        missing.append("probe")
    if kind == "attestation":
        missing += [name for name in ("sufficiency", "appropriateness") if not found.get(name)]
    if missing:
        raise ValueError(f"a {kind} needs {', '.join(missing)}")
    if (outcome := str(found["outcome"])) not in OUTCOMES:
        raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}, not {outcome!r}")
    supersedes = found.get("supersedesCurrent", False)
    return Step(
        number,
        str(kind),
        str(found["by"]),
        str(found["criterion"]),
        outcome,
        str(found["rationale"]),
        probe=int(str(found["probe"])) if found.get("probe") is not None else None,
        turn=int(str(found.get("turn", 1))),
        quote=str(found["quote"]) if found.get("quote") else None,
        sufficiency=str(found["sufficiency"]) if found.get("sufficiency") else None,
        appropriateness=str(found["appropriateness"]) if found.get("appropriateness") else None,
        supersedes_current=supersedes is True or str(supersedes).lower() == "true",
        reason=str(found["reason"]) if found.get("reason") else None,
    )


def import_steps(
    graphs: GraphService,
    evaluation_id: str,
    run_number: int,
    found: StepsFile,
    credential: Credential | None,
    *,
    separation: Separation = NO_SEPARATION,
    supersede_role: str | None = None,
    signer: Signer | None = None,
) -> Imported:
    """Record the file's steps on run ``run_number`` as ``credential``'s (see the module docstring)."""
    if credential is None:
        raise Forbidden(
            "importing determinations and attestations needs a credential: they are recorded as its person's"
        )
    if others := sorted({s.by for s in found.steps} - {credential.agent}):
        raise Forbidden(
            f"the file records decisions by {', '.join(others)}, and it is imported by {credential.agent}: "
            "each person imports their own"
        )
    run = run_view(graphs, evaluation_id, run_number)
    criteria = plan_criteria(graphs, run.plan).by_identifier()
    cases = answered_cases(graphs, run.iri)
    rulings, problems = [], []
    for step in found.steps:
        if step.criterion not in criteria:
            problems.append(f"line {step.line}: no criterion {step.criterion!r} in the run's plan")
            continue
        if step.kind == "determination":
            try:
                rulings.append(_ruling(step, probe_iri(run.plan, step.probe or 0), criteria[step.criterion], cases))
            except ValueError as error:
                problems.append(f"line {step.line}: {error}")
    if problems:
        raise Unprocessable("; ".join(problems), detail=problems)
    made = (
        record_rulings(graphs, evaluation_id, run_number, rulings, credential, separation=separation) if rulings else []
    )
    attested = []
    for step in (s for s in found.steps if s.kind == "attestation"):
        criterion = criteria[step.criterion]
        current = (
            next(
                (a.iri for a in attestations(graphs, evaluation_id, criterion=criterion, run=run.iri) if a.current),
                None,
            )
            if step.supersedes_current
            else None
        )
        attested.append(
            attest(
                graphs,
                evaluation_id,
                run_number,
                criterion,
                EARL + step.outcome,
                step.rationale,
                step.sufficiency or "",
                step.appropriateness or "",
                credential,
                supersedes=current,
                reason=step.reason,
                separation=separation,
                supersede_role=supersede_role,
                signer=signer,
            ).iri
        )
    return Imported(tuple(made), tuple(attested))


def _ruling(step: Step, probe: str, criterion: str, cases: dict[str, Answered]) -> Ruling:
    case = cases.get(probe)
    if case is None:
        raise ValueError(f"probe {step.probe} has no answered case in the run")
    if not 1 <= step.turn <= len(case.turns):
        raise ValueError(f"probe {step.probe} has {len(case.turns)} turns, not a turn {step.turn}")
    pointer = None
    if step.quote is not None:
        reply = case.turns[step.turn - 1][1]
        start = reply.find(step.quote)
        if start < 0:
            raise ValueError(f"the quote {step.quote!r} is not in the reply to turn {step.turn} of probe {step.probe}")
        pointer = (start, start + len(step.quote))
    return Ruling(probe, criterion, step.turn, EARL + step.outcome, step.rationale, pointer)
