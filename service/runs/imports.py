"""Responses collected elsewhere, into the record as a run of an approved plan; the plan out as an Inspect
dataset (issue 10, §3).

An import is read first (:mod:`.inspect_io`, :mod:`.redteam`: a file's problem is a 422 naming its sample, or
its row and field), then checked against the plan and written by :func:`.cases.record_imported_run`: the
run, pinned to the one target version the file was answered by, and every case in one transaction, so that
any refusal (a probe the plan does not have, named with its rows; a plan not approved now; a caller who is no
evaluation operator) stores nothing. The run records what it was imported from: the file's kind, media type
and SHA-256 (``epo:importedFrom``).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Literal

from ..core.auth import require
from ..core.config import Credential
from ..core.errors import Unprocessable, UnsupportedMediaType
from ..core.graphs import GraphService
from ..plan.approval import plan_ref
from .cases import record_imported_run
from .inspect_io import ExportedProbe, InspectNotInstalled, export_dataset, read_inspect_log
from .rdf import ImportSource
from .records import RUNNERS, RunView, plan_probes
from .redteam import parse_redteam

ImportFormat = Literal["inspect", "jsonl", "csv"]
"""What an uploaded file is: an Inspect AI eval log (``.eval`` or ``.json``), or red-teaming rows."""

_ZIP_MAGIC = b"PK\x03\x04"  # an Inspect .eval log is a zip archive; a .json log is JSON text
_REDTEAM_TYPES = {"jsonl": "application/jsonl", "csv": "text/csv"}


def import_upload(
    graphs: GraphService,
    evaluation_id: str,
    plan_number: int,
    data: bytes,
    form: ImportFormat,
    credential: Credential | None,
) -> RunView:
    """An uploaded file, as :func:`import_inspect_log` or :func:`import_redteam` by ``form``; a red-teaming
    file must be UTF-8 (422 naming the first byte that is not)."""
    if form == "inspect":
        return import_inspect_log(graphs, evaluation_id, plan_number, data, credential)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Unprocessable(
            f"the {form} file is not UTF-8 text: byte {error.start} is {data[error.start : error.start + 1]!r}"
        ) from None
    return import_redteam(graphs, evaluation_id, plan_number, text, form, credential)


def import_inspect_log(
    graphs: GraphService, evaluation_id: str, plan_number: int, log: str | Path | bytes, credential: Credential | None
) -> RunView:
    """An Inspect AI eval log (a path, or the file's bytes) as a new run of plan ``plan_number``; 415 when this
    deployment lacks the ``inspect`` extra that reads logs."""
    require(credential, *RUNNERS)  # before the file is read: reading a large log is the expensive part
    data, name = (log, "the uploaded file") if isinstance(log, bytes) else (Path(log).read_bytes(), str(log))
    with tempfile.TemporaryDirectory(prefix="caie-inspect-") as directory:
        # inspect-ai tells a .eval log (a zip archive) from a .json one by the file's suffix
        path = Path(directory) / ("log.eval" if data.startswith(_ZIP_MAGIC) else "log.json")
        path.write_bytes(data)
        try:
            imported = read_inspect_log(path)
        except InspectNotInstalled as missing:
            raise UnsupportedMediaType(f"this deployment cannot read Inspect logs: {missing}") from None
        except ValueError as problem:
            raise Unprocessable(str(problem).replace(str(path), name)) from None  # not our temporary copy's
    media_type = "application/zip" if data.startswith(_ZIP_MAGIC) else "application/json"
    source = ImportSource("Inspect AI eval log", media_type, hashlib.sha256(data).hexdigest())
    return record_imported_run(
        graphs, evaluation_id, plan_number, imported.target, (*imported.traces, *imported.errors), source, credential
    )


def import_redteam(
    graphs: GraphService,
    evaluation_id: str,
    plan_number: int,
    text: str,
    form: Literal["jsonl", "csv"],
    credential: Credential | None,
) -> RunView:
    """Red-teaming rows (docs/imports.md) as a new run of plan ``plan_number``; a probe number in the file is
    the plan's probe of that number, and a probe the plan does not have is named with its rows."""
    require(credential, *RUNNERS)
    plan = plan_ref(graphs, evaluation_id, plan_number).iri.value
    try:
        imported = parse_redteam(text, form, plan=plan)
    except ValueError as problem:
        raise Unprocessable(str(problem)) from None
    rows = {
        case.trace.probe: ("row " if len(case.rows) == 1 else "rows ") + ", ".join(map(str, case.rows))
        for case in imported.cases
    }
    source = ImportSource(
        f"red-teaming sessions ({form.upper()})", _REDTEAM_TYPES[form], hashlib.sha256(text.encode("utf-8")).hexdigest()
    )
    return record_imported_run(
        graphs,
        evaluation_id,
        plan_number,
        imported.target,
        [case.trace for case in imported.cases],
        source,
        credential,
        where=rows,
    )


def inspect_dataset(graphs: GraphService, evaluation_id: str, plan_number: int) -> str:
    """The plan's probes as an Inspect dataset in JSONL (one sample a line, as ``json_dataset`` reads it); 404
    for no such plan. Each sample carries its probe's scripted follow-up turns, as the runner sends them."""
    plan = plan_ref(graphs, evaluation_id, plan_number).iri.value
    samples = export_dataset(
        ExportedProbe.of(probe, plan, probe.follow_ups) for probe in plan_probes(graphs, evaluation_id, plan)
    )
    return "".join(json.dumps(sample, ensure_ascii=False) + "\n" for sample in samples)
