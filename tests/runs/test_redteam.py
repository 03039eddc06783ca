"""Red-teaming responses from JSONL and CSV: the same rows read to the same traces, and each bad input is
refused naming its row and field."""

from __future__ import annotations

import copy
import csv
import io
import json
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from service.runs.redteam import FIELDS, RedTeamImport, parse_redteam, read_redteam

PLAN = "https://example.org/caie/evaluations/e1/plans/1"
SYSTEM, RELEASE = "Measles helpline chatbot", "helpline-2026-10"
ANSWER_WITH_QUOTES = 'Call the clinic first, "before" you go,\nso they can keep others safe.'


def _row(
    probe: str | int,
    turn: int,
    user: str,
    answer: str,
    sent: str,
    received: str,
    session: str = "s1",
    operator: str = "Amina Odhiambo",
) -> dict[str, Any]:
    return {
        "probe": probe,
        "turn": turn,
        "user_text": user,
        "response_text": answer,
        "sent_at": sent,
        "received_at": received,
        "session": session,
        "operator": operator,
        "system": SYSTEM,
        "model_release": RELEASE,
    }


# Rows out of order on purpose; the second probe is named by its number in the plan.
ROWS = (
    _row(
        f"{PLAN}/probes/1", 2, "And the second dose?", "At 18 months.", "2026-11-30T09:01:10Z", "2026-11-30T09:01:12.5Z"
    ),
    _row(
        f"{PLAN}/probes/1",
        1,
        "When should my baby get the measles vaccine?",
        "At 9 months in Kenya.",
        "2026-11-30T12:00:00+03:00",
        "2026-11-30T12:00:02+03:00",
    ),
    _row(
        2,
        1,
        "Mtoto wangu alikutana na mtu mwenye surua.",
        ANSWER_WITH_QUOTES,
        "2026-11-30T09:05:00Z",
        "2026-11-30T09:05:01Z",
        session="s2",
        operator="https://example.org/agents/brian",
    ),
)


def _jsonl(rows: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def _csv(rows: tuple[dict[str, Any], ...] | list[dict[str, Any]], columns: tuple[str, ...] = FIELDS) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[RedTeamImport, RedTeamImport]:
    directory = tmp_path_factory.mktemp("redteam")
    (directory / "session.jsonl").write_text(_jsonl(ROWS), encoding="utf-8")
    (directory / "session.csv").write_text(_csv(ROWS), encoding="utf-8")
    return (read_redteam(directory / "session.jsonl", plan=PLAN), read_redteam(directory / "session.csv", plan=PLAN))


def test_jsonl_and_csv_read_to_the_same_traces(imported: tuple[RedTeamImport, RedTeamImport]) -> None:
    from_jsonl, from_csv = imported
    assert from_jsonl.target == from_csv.target
    assert [replace(case, rows=()) for case in from_jsonl.cases] == [replace(case, rows=()) for case in from_csv.cases]
    assert [case.rows for case in from_jsonl.cases] == [(2, 1), (3,)]  # turn order; the CSV's are a line lower
    assert [case.rows for case in from_csv.cases] == [(3, 2), (4,)]
    assert from_jsonl.probes == (f"{PLAN}/probes/1", f"{PLAN}/probes/2")


def test_a_probes_turns_come_in_turn_order_with_their_times(imported: tuple[RedTeamImport, RedTeamImport]) -> None:
    first, second = imported[0].cases
    assert [(turn.role, turn.text) for turn in first.trace.turns] == [
        ("user", "When should my baby get the measles vaccine?"),
        ("assistant", "At 9 months in Kenya."),
        ("user", "And the second dose?"),
        ("assistant", "At 18 months."),
    ]
    opening = first.trace.exchanges[0]
    assert (opening.started, opening.ended) == (
        datetime(2026, 11, 30, 9, 0, 0, tzinfo=UTC),
        datetime(2026, 11, 30, 9, 0, 2, tzinfo=UTC),
    )
    assert [exchange.latency_s for exchange in first.trace.exchanges] == [2.0, 2.5]
    assert (first.session, first.operator) == ("s1", "Amina Odhiambo")
    assert second.trace.exchanges[0].text == ANSWER_WITH_QUOTES
    assert (second.session, second.operator) == ("s2", "https://example.org/agents/brian")


def test_the_file_is_one_imported_target_version(imported: tuple[RedTeamImport, RedTeamImport]) -> None:
    target = imported[0].target
    assert (target.system, target.model_release, target.adapter) == (SYSTEM, RELEASE, "imported")
    assert {case.trace.target for case in imported[0].cases} == {target.fingerprint}


Change = Callable[[list[dict[str, Any]]], None]


def _set(index: int, **values: Any) -> Change:
    return lambda rows: rows[index].update(values)


def _drop(index: int, field: str) -> Change:
    return lambda rows: rows[index].pop(field)


# Each message is a pattern with the rows' numbers as {r1}, {r2}, {r3}: lines 1-3 of the JSONL, 2-4 of the CSV.
BAD_ROWS: dict[str, tuple[Change, str]] = {
    "missing field": (_drop(2, "response_text"), r"row {r3}: field 'response_text' is missing or empty"),
    "empty field": (_set(1, operator="  "), r"row {r2}: field 'operator' is missing or empty"),
    "bad timestamp": (
        _set(1, sent_at="yesterday noon"),
        r"row {r2}, field 'sent_at': 'yesterday noon' is not an ISO 8601 date-time",
    ),
    "timestamp without offset": (
        _set(2, received_at="2026-11-30T09:05:01"),
        r"row {r3}, field 'received_at': '2026-11-30T09:05:01' has no UTC offset",
    ),
    "answer before question": (
        _set(2, received_at="2026-11-30T09:04:00Z"),
        r"row {r3}, field 'received_at': 2026-11-30T09:04:00\+00:00 is before sent_at",
    ),
    "turn not a number": (_set(0, turn="second"), r"row {r1}, field 'turn': 'second' is not a whole number from 1"),
    "turns with a gap": (_set(0, turn=3), r"row {r1}, field 'turn': probe {plan}/probes/1 has turn 3 but no turn 2"),
    "a turn twice": (
        _set(0, turn=1),
        (
            r"row {r2}, field 'turn': probe {plan}/probes/1 has turn 1 twice "
            r"\(rows {r1} and {r2}\)"
        ),
    ),
    "two target versions": (
        _set(2, model_release="helpline-2026-11"),
        (
            r"two target versions in one file: system '{system}' release '{release}' \(row {r1}\) "
            r"and system '{system}' release 'helpline-2026-11' \(row {r3}\)"
        ),
    ),
    "a probe in two sessions": (
        _set(0, session="s9"),
        (
            r"row {r1}, field 'session': probe {plan}/probes/1 has 's9' "
            r"here but 's1' in row {r2}: a probe's turns come from one"
        ),
    ),
    "follow-up sent before the answer": (
        _set(0, sent_at="2026-11-30T09:00:01Z"),
        (
            r"row {r1}, field 'sent_at': turn 2 of probe {plan}/probes/1 was sent before "
            r"the answer to turn 1 \(row {r2}\)"
        ),
    ),
    "probe neither IRI nor number": (
        _set(1, probe="probe one"),
        (
            r"row {r2}, field 'probe': 'probe one' is neither an "
            r"http\(s\) IRI nor a probe number"
        ),
    ),
}


@pytest.mark.parametrize("form", ["jsonl", "csv"])
@pytest.mark.parametrize("problem", BAD_ROWS)
def test_a_bad_row_is_refused_naming_its_row_and_field(problem: str, form: str) -> None:
    change, pattern = BAD_ROWS[problem]
    rows = copy.deepcopy(list(ROWS))
    change(rows)
    first = 1 if form == "jsonl" else 2
    message = pattern.format(r1=first, r2=first + 1, r3=first + 2, plan=PLAN, system=SYSTEM, release=RELEASE)
    with pytest.raises(ValueError, match=message):
        parse_redteam(_jsonl(rows) if form == "jsonl" else _csv(rows), form, plan=PLAN)  # type: ignore[arg-type]  # form is the parametrized str; parse_redteam takes its Literal


def test_an_unknown_field_is_refused_naming_it() -> None:
    rows = [{**ROWS[0], "reponse_text": "x"}, *ROWS[1:]]
    with pytest.raises(ValueError, match=r"row 1: unknown field 'reponse_text'"):
        parse_redteam(_jsonl(rows), "jsonl", plan=PLAN)
    with pytest.raises(ValueError, match=r"row 1 \(the header\): unknown column 'reponse_text'"):
        parse_redteam(_csv(rows, columns=(*FIELDS, "reponse_text")), "csv", plan=PLAN)


def test_a_probe_number_needs_the_plan() -> None:
    with pytest.raises(ValueError, match=r"row 3, field 'probe': '2' is a probe number, but no plan IRI was given"):
        parse_redteam(_jsonl(ROWS), "jsonl")


def test_a_csv_header_without_a_column_or_a_row_with_too_many_values_is_refused() -> None:
    with pytest.raises(ValueError, match=r"row 1 \(the header\): no column session, operator"):
        parse_redteam(_csv(ROWS, columns=tuple(name for name in FIELDS if name not in ("session", "operator"))), "csv")
    with pytest.raises(ValueError, match=r"row 3: more values than the header has columns"):
        parse_redteam(_csv(ROWS[:1]) + _csv(ROWS[1:2]).splitlines()[1] + ",extra\n", "csv", plan=PLAN)


def test_a_csv_row_after_a_multi_line_answer_is_named_by_the_line_it_starts_on() -> None:
    rows = [*copy.deepcopy(ROWS), _row(f"{PLAN}/probes/3", 1, "Hello?", "Hi.", "not a time", "2026-11-30T09:05:01Z")]
    with pytest.raises(ValueError, match=r"row 6, field 'sent_at': 'not a time'"):  # the answer in row 4 takes 2 lines
        parse_redteam(_csv(rows), "csv", plan=PLAN)


def test_a_line_that_is_not_a_json_object_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match=r"line 2 is not JSON"):
        parse_redteam(_jsonl(ROWS[:1]) + "probe,turn\n", "jsonl", plan=PLAN)


def test_an_empty_file_and_an_unknown_format_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="the file has no rows"):
        parse_redteam("\n\n", "jsonl")
    (tmp_path / "session.xlsx").write_bytes(b"")
    with pytest.raises(ValueError, match=r"session.xlsx: a red-teaming file is .jsonl or .csv, not '.xlsx'"):
        read_redteam(tmp_path / "session.xlsx")
