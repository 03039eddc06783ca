"""The records the workspace is measured on (docs/workspace.md, "Cost"; bench/pages.py): the worked example, and
the worked example with ``extra`` more determinations, each in an on-disk embedded store cached by a digest of its
inputs.

The worked example is what ``make run`` loads (``load_spec_files``, ``load_worked_example``: 1,929 determinations,
a signed and accepted report). The larger record is a copy of it with ``extra`` manual determinations by the domain
expert added as ``bench/determinations.py`` adds them: its ``units`` (each answered probe with each criterion it
exercises, cycled) and ``body`` (the four outcomes in turn), ``batch`` a request, posted to
``POST /evaluations/measles/runs/1/determinations`` (the app in process through Starlette's test client), so each
batch is checked and appended as the service appends any. Neither is measured.

A store is named by a SHA-256 over its parameters and the files that decide what it holds (this file,
``bench/determinations.py``, ``examples/vaccine/caie_vaccine/worked_example.py``, the example's data and judges, the RDF writers), so a
change to any of them makes a new one; a store counts as made once its ``.ready`` file is written, last.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import time
from collections.abc import Callable
from itertools import cycle, islice
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from caie_vaccine.worked_example import EVALUATION_ID, load_worked_example
from determinations import BASE, body, units
from fastapi.testclient import TestClient

from service.api import create_app
from service.composition import build_services
from service.core.bootstrap import load_spec_files
from service.core.config import Settings

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (
    Path(__file__),
    ROOT / "bench" / "determinations.py",
    ROOT / "examples" / "vaccine" / "caie_vaccine" / "worked_example.py",
    *sorted((ROOT / "examples" / "measles").rglob("*.*")),
    *sorted((ROOT / "examples" / "judges").rglob("*.*")),
    *(ROOT / "service" / step / "rdf.py" for step in ("envelope", "plan", "runs", "judgments")),
)
TOKEN = "bench-annie"
Report = Callable[[str], None]


def settings_for(directory: Path, **overrides: object) -> Settings:
    return Settings(base_url=BASE, data_dir=directory, **overrides)  # type: ignore[arg-type]  # overrides are Settings' own fields, passed through


def store_dir(root: Path, extra: int, batch: int) -> Path:
    """Where the record with ``extra`` added determinations is kept under ``root``."""
    digest = hashlib.sha256(f"extra={extra} batch={batch}\n".encode())
    for source in SOURCES:
        digest.update(source.read_bytes())
    name = "worked-example" if extra == 0 else f"worked-example-plus-{extra}"
    return root / f"{name}-{digest.hexdigest()[:16]}"


def worked_example(root: Path, report: Report = print) -> Path:
    """The worked example's store under ``root``, made unless it is there."""
    directory = store_dir(root, 0, 0)
    if not _ready(directory):
        started = time.perf_counter()
        shutil.rmtree(directory, ignore_errors=True)  # what a run that stopped half way left
        services = build_services(settings_for(directory))
        try:
            load_spec_files(services.graphs)
            load_worked_example(services.graphs, lambda line: report(f"  {line}"))
        finally:
            services.close()
        _made(directory)
        report(f"  data: the worked example made in {time.perf_counter() - started:.0f} s")
    return directory


def with_determinations(root: Path, extra: int, batch: int = 1000, report: Report = print) -> Path:
    """The worked example with ``extra`` more determinations (``batch`` a request) under ``root``, made unless it is
    there."""
    directory = store_dir(root, extra, batch)
    if _ready(directory):
        return directory
    source = worked_example(root, report)
    started = time.perf_counter()
    shutil.rmtree(directory, ignore_errors=True)
    shutil.copytree(source, directory)
    settings = settings_for(directory, tokens=f'{{"{TOKEN}": {{"agent": "annie", "roles": ["domain_expert"]}}}}')
    services = build_services(settings)
    try:
        pairs = units(services)
        client = TestClient(create_app(settings, services.store))
        for n in range(extra // batch):
            made = list(islice(cycle(pairs), n * batch, (n + 1) * batch))
            answer = client.post(
                f"/evaluations/{EVALUATION_ID}/runs/1/determinations",
                json=body(made, n * batch),
                headers={"Authorization": f"Bearer {TOKEN}"},
            )
            if answer.status_code != 201:
                raise SystemExit(f"batch {n + 1}: {answer.status_code} {answer.text[:300]}")
            if (n + 1) % 20 == 0:
                report(f"  data: {(n + 1) * batch} determinations added ({time.perf_counter() - started:.0f} s)")
    finally:
        services.close()
    _made(directory)
    return directory


def _ready(directory: Path) -> bool:
    return directory.exists() and directory.with_suffix(".ready").exists()


def _made(directory: Path) -> None:
    directory.with_suffix(".ready").write_text("made\n", encoding="utf-8")
