"""Responses collected by human red-teaming sessions, read from JSONL or CSV into traces (issue 10, §3).

One row per user turn, with these fields (all required, none empty; docs/imports.md has examples):

=================  ==========================================================================================
``probe``          the probe's IRI, or its number in the plan (``7``: resolved as ``{plan}/probes/7`` against
                   the plan IRI the reader is given)
``turn``           the user turn's place in the conversation: 1 for the opening turn, then 2, 3, ... with no gap
``user_text``      what the red-teamer sent
``response_text``  what the system under test answered (a refusal is an answer)
``sent_at``        when the user turn was sent: an ISO 8601 date-time with a UTC offset (``Z`` or ``+03:00``)
``received_at``    when the answer was received, likewise; not before ``sent_at``
``session``        the red-teaming session's identifier
``operator``       who ran the session: a name or an agent IRI
``system``         the system under test
``model_release``  the model release behind it
=================  ==========================================================================================

A JSONL file has one object a line (``turn`` a number or a numeral, the rest strings; blank lines skipped);
a CSV file has a header naming exactly these columns, in any order. Rows may come in any order. Row numbers
in errors are lines: a JSONL line, or the line a CSV record starts on (the header is line 1).

A file is one target version: every row names the same ``system`` and ``model_release``. A probe's turns
come from one session and one operator, each turn sent after the answer to the one before. Nothing here
checks that the probes belong to a plan or writes the record: the records layer does, with
:attr:`RedTeamImport.probes`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

from ..core import jsonlines
from ..plan.rdf import probe_iri
from .model import CaseTrace, Exchange, TargetVersion, Turn

Format = Literal["jsonl", "csv"]
FIELDS = (
    "probe",
    "turn",
    "user_text",
    "response_text",
    "sent_at",
    "received_at",
    "session",
    "operator",
    "system",
    "model_release",
)


@dataclass(frozen=True)
class RedTeamCase:
    """One probe's conversation as a red-teamer ran it, with the session, the person who ran it and the file's
    rows it came from (in turn order: an error about the probe can name them)."""

    trace: CaseTrace
    session: str
    operator: str
    rows: tuple[int, ...]


@dataclass(frozen=True)
class RedTeamImport:
    """A red-teaming file read: its one target version and one case per probe, in the order first named."""

    target: TargetVersion
    cases: tuple[RedTeamCase, ...]

    @property
    def probes(self) -> tuple[str, ...]:
        """Every probe IRI the file names: the records layer checks that each is one of the plan's."""
        return tuple(case.trace.probe for case in self.cases)


@dataclass(frozen=True)
class _Row:
    number: int
    probe: str
    turn: int
    user_text: str
    response_text: str
    sent_at: datetime
    received_at: datetime
    session: str
    operator: str
    system: str
    model_release: str


def read_redteam(path: str | Path, *, plan: str | None = None) -> RedTeamImport:
    """Read a ``.jsonl`` or ``.csv`` file in the schema above; ``plan`` resolves probe numbers to IRIs."""
    path = Path(path)
    forms: dict[str, Format] = {".jsonl": "jsonl", ".csv": "csv"}
    form = forms.get(path.suffix.lower())
    if form is None:
        raise ValueError(f"{path.name}: a red-teaming file is .jsonl or .csv, not {path.suffix or 'no suffix'!r}")
    return parse_redteam(path.read_text(encoding="utf-8"), form, plan=plan)


def parse_redteam(text: str, form: Format, *, plan: str | None = None) -> RedTeamImport:
    """Parse a red-teaming file's text; ``ValueError`` naming the row and field for the first problem found."""
    records = _jsonl_records(text) if form == "jsonl" else _csv_records(text.removeprefix("\ufeff"))
    rows = [_row(number, record, plan) for number, record in records]
    if not rows:
        raise ValueError("the file has no rows")
    target = _target(rows)
    by_probe: dict[str, list[_Row]] = {}
    for row in rows:
        by_probe.setdefault(row.probe, []).append(row)
    return RedTeamImport(
        target=target, cases=tuple(_case(probe, turns, target.fingerprint) for probe, turns in by_probe.items())
    )


def _jsonl_records(text: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    for number, record in jsonlines.objects(text):
        unknown = sorted(set(record) - set(FIELDS))
        if unknown:
            raise ValueError(f"row {number}: unknown field {unknown[0]!r} (the fields are {', '.join(FIELDS)})")
        yield number, record


def _csv_records(text: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text, newline=""), restkey="")
    header = reader.fieldnames or []
    problems = [f"unknown column {name!r}" for name in header if name not in FIELDS]
    missing = [name for name in FIELDS if name not in header]
    if missing:
        problems.append(f"no column {', '.join(missing)}")
    if problems:
        raise ValueError(f"row 1 (the header): {'; '.join(problems)} (the columns are {', '.join(FIELDS)})")
    start = reader.line_num + 1
    for record in reader:
        if "" in record:
            raise ValueError(f"row {start}: more values than the header has columns")
        yield start, record
        start = reader.line_num + 1


def _row(number: int, record: Mapping[str, Any], plan: str | None) -> _Row:
    def text(name: str) -> str:
        value = record.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            raise ValueError(f"row {number}: field {name!r} is missing or empty")
        if not isinstance(value, str):
            raise ValueError(  # noqa: TRY004 - like every problem of a row: parse_redteam's callers answer it with 422
                f"row {number}, field {name!r}: expected text, not {json.dumps(value)}"
            )
        return value

    def moment(name: str) -> datetime:
        value = text(name)
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"row {number}, field {name!r}: {value!r} is not an ISO 8601 date-time") from None
        if parsed.utcoffset() is None:
            raise ValueError(f"row {number}, field {name!r}: {value!r} has no UTC offset (add Z or e.g. +03:00)")
        return parsed.astimezone(UTC)

    row = _Row(
        number=number,
        probe=_probe(number, record.get("probe"), plan),
        turn=_turn(number, record.get("turn")),
        user_text=text("user_text"),
        response_text=text("response_text"),
        sent_at=moment("sent_at"),
        received_at=moment("received_at"),
        session=text("session"),
        operator=text("operator"),
        system=text("system"),
        model_release=text("model_release"),
    )
    if row.received_at < row.sent_at:
        raise ValueError(
            f"row {number}, field 'received_at': {row.received_at.isoformat()} is before sent_at "
            f"{row.sent_at.isoformat()}"
        )
    return row


def _probe(number: int, value: Any, plan: str | None) -> str:
    if value is None or value == "":
        raise ValueError(f"row {number}: field 'probe' is missing or empty")
    probe = str(value).strip()  # a JSONL probe number may be a JSON number
    if probe.startswith(("http://", "https://")) and not any(character.isspace() for character in probe):
        return probe
    if probe.isdigit() and int(probe) >= 1:
        if plan is None:
            raise ValueError(
                f"row {number}, field 'probe': {probe!r} is a probe number, but no plan IRI was given "
                "to resolve it; give the plan, or the probe's IRI"
            )
        return probe_iri(plan, int(probe))
    raise ValueError(f"row {number}, field 'probe': {probe!r} is neither an http(s) IRI nor a probe number")


def _turn(number: int, value: Any) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if value is None or value == "":
        raise ValueError(f"row {number}: field 'turn' is missing or empty")
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"row {number}, field 'turn': {value!r} is not a whole number from 1")
    return value


def _target(rows: Iterable[_Row]) -> TargetVersion:
    first_row: dict[tuple[str, str], int] = {}
    for row in rows:
        first_row.setdefault((row.system, row.model_release), row.number)
    if len(first_row) > 1:
        (first, first_at), (second, second_at) = list(first_row.items())[:2]
        raise ValueError(
            f"two target versions in one file: system {first[0]!r} release {first[1]!r} (row "
            f"{first_at}) and system {second[0]!r} release {second[1]!r} (row {second_at}); "
            "import each version's responses on their own"
        )
    [(system, release)] = first_row
    return TargetVersion(system=system, adapter="imported", model_release=release)


def _case(probe: str, rows: list[_Row], target: str) -> RedTeamCase:
    rows = sorted(rows, key=lambda row: row.turn)
    opening = rows[0]
    for row in rows:
        for name in ("session", "operator"):
            if getattr(row, name) != getattr(opening, name):
                raise ValueError(
                    f"row {row.number}, field {name!r}: probe {probe} has {getattr(row, name)!r} here "
                    f"but {getattr(opening, name)!r} in row {opening.number}: a probe's turns come "
                    f"from one {name}"
                )
    for expected, row in enumerate(rows, start=1):
        if row.turn != expected:
            duplicate = row.turn < expected
            raise ValueError(
                f"row {row.number}, field 'turn': probe {probe} has turn {row.turn} "
                + (
                    f"twice (rows {rows[expected - 2].number} and {row.number})"
                    if duplicate
                    else f"but no turn {expected}: turns run 1, 2, 3, ... with no gap"
                )
            )
    for earlier, later in pairwise(rows):
        if later.sent_at < earlier.received_at:
            raise ValueError(
                f"row {later.number}, field 'sent_at': turn {later.turn} of probe {probe} was sent "
                f"before the answer to turn {earlier.turn} (row {earlier.number}) was received"
            )
    turns = tuple(
        turn
        for row in rows
        for turn in (Turn(role="user", text=row.user_text), Turn(role="assistant", text=row.response_text))
    )
    exchanges = tuple(
        Exchange(
            text=row.response_text,
            started=row.sent_at,
            ended=row.received_at,
            latency_s=(row.received_at - row.sent_at).total_seconds(),
        )
        for row in rows
    )
    return RedTeamCase(
        trace=CaseTrace(probe=probe, target=target, turns=turns, exchanges=exchanges),
        session=opening.session,
        operator=opening.operator,
        rows=tuple(row.number for row in rows),
    )
