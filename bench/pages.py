"""Each workspace page's server time (issue 24: p95 within 300 ms at 100,000 determinations), beside the JSON route
that gives the same records.

The records (bench/_workspace_data.py, cached under ``--cache`` by a digest of their inputs, not measured): the
worked example (1,929 determinations), and the same with 100,000 more (``bench/determinations.py``'s shape: the
domain expert's manual determinations, 1,000 a request through the API). Each is copied to a temporary directory
and served by a real ``caie serve`` process (its fast lane as deployed) on a free loopback port, with one demo
person per role (``service.cli``'s demo people, random passwords) given in ``CAIE_PEOPLE``; session cookies are
sent without ``Secure`` (``CAIE_SESSION_COOKIE_SECURE=false``) since the bench speaks plain HTTP.

For each page of the contract in docs/workspace.md (:data:`PAGES`), the person the page is for signs in through the
real ``/sign-in`` form; then, with that session, the page (``Accept: text/html``) and its baseline, the REST route
giving the same records (``Accept: application/json``, or JSON-LD for a case, which has no other JSON), are each
requested once unmeasured (``first``: a process's first read of an evaluation's determinations lands there), then
in turns, ``--repeat`` (30) times each, or fewer once that route's requests (the first included) took
``--budget-s`` (60) seconds. Times are the client's wall clock per request, the whole body read, on loopback: the
server's time plus the loopback round trip. p50 and p95 (nearest rank) are over the timed requests, or the first
alone when it took the whole budget (``n`` 0). A request still unanswered after ``--budget-s`` is given up
(``timeout``, counted as the budget: a lower bound) and the server started afresh, so that what it was still
computing does not slow the pages measured after it: ``GET …/cases-needing-people`` at 100,000 determinations had
not answered after 50 minutes.

A page that answers 404 is not built yet: printed as missing and counted (``missing``), never skipped; any other
answer but 200, or none within the budget, counts in ``failed``. Printed last, for the largest record::

    PAGES: ours=<worst page p95 ms> baseline=<its baseline's p95 ms> ratio=<ours/baseline> pages=<measured>
           within_300ms=<1|0> size=<added determinations> missing=<n> failed=<n> met=<1|0> example_worst=<ms>

``within_300ms``: every measured page's p95 at most 300 ms; ``met``: that, with no page missing or failed;
``example_worst``: the worst page p95 on the worked example.

    .venv/bin/python bench/pages.py [--cache DIR] [--sizes 0,100000] [--repeat 30] [--budget-s 60]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import httpx
from pyoxigraph import NamedNode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _workspace_data import BASE, settings_for, with_determinations, worked_example
from caie_vaccine.worked_example import EVALUATION_ID
from metrics_1m import serve

from service.cli import _demo_people
from service.composition import build_services
from service.envelope import envelope_at, iris_for
from service.runs.records import run_view
from service.workspace.cases import reads, run_cases

BUDGET_MS = 300
TIMEOUT = -1
"""A :class:`Series` status: a request was given up unanswered after the budget."""
HTML, JSON, JSON_LD = "text/html", "application/json", "application/ld+json"
E = f"/evaluations/{EVALUATION_ID}"


@dataclass(frozen=True)
class Page:
    """A workspace page, the person it is for, and its baseline: the JSON route giving the same records. Paths may
    name ``{probe}`` (a case the annotator reads), ``{case}`` (its path), ``{criterion}`` and ``{run}``
    (IRIs, query-encoded)."""

    name: str
    path: str
    person: str
    baseline: str
    baseline_accept: str = JSON


PAGES = (
    Page("home", "/", "admin", "/evaluations"),
    Page("evaluation", E, "annie", E),
    Page("envelope", f"{E}/workspace/envelope", "annie", f"{E}/envelope"),
    Page("scenarios", f"{E}/workspace/scenarios", "annie", f"{E}/scenarios"),
    Page("plans", f"{E}/workspace/plans", "annie", f"{E}/plans"),
    Page("plan", f"{E}/workspace/plans/1", "annie", f"{E}/plans/1"),
    Page("runs", f"{E}/workspace/runs", "theo", f"{E}/runs"),
    Page("run", f"{E}/workspace/runs/1", "theo", f"{E}/runs/1"),
    Page("annotate", f"{E}/workspace/annotate?run=1", "ada", f"{E}/runs/1/cases-needing-people"),
    Page("annotate case", f"{E}/workspace/annotate/1/{{probe}}", "ada", "{case}", JSON_LD),
    Page("criteria", f"{E}/workspace/criteria", "annie", f"{E}/attestations"),
    Page(
        "criterion",
        f"{E}/workspace/criteria/c04?run=1",
        "annie",
        f"{E}/determinations?criterion={{criterion}}&run={{run}}",
    ),
    Page("reports", f"{E}/workspace/reports", "dana", f"{E}/reports"),
    Page("report", f"{E}/reports/1/page", "dana", f"{E}/reports/1"),
    Page("failure map", f"{E}/reports/1/failure-map", "dana", f"{E}/metrics"),
)


@dataclass
class Series:
    """One route's requests: the first (unmeasured) and the timed ones, in milliseconds."""

    path: str
    accept: str
    status: int = 0
    """The first answer's status; :data:`TIMEOUT` when a request got none within the budget."""
    first: float = 0.0
    times: list[float] = field(default_factory=list)

    def take(self, client: httpx.Client) -> None:
        started = time.perf_counter()
        try:
            answer = client.get(self.path, headers={"Accept": self.accept})
        except httpx.TimeoutException:
            spent = 1000 * (time.perf_counter() - started)
            if self.status:
                self.times.append(spent)
            else:
                self.first = spent
            self.status = TIMEOUT
            return
        spent = 1000 * (time.perf_counter() - started)
        if not self.status:
            self.status, self.first = answer.status_code, spent
        elif answer.status_code != self.status:
            raise SystemExit(f"GET {self.path}: {answer.status_code} after {self.status}: {answer.text[:300]}")
        else:
            self.times.append(spent)

    def due(self, repeat: int, budget_s: float) -> bool:
        return self.status in (0, 200) and len(self.times) < repeat and self.first + sum(self.times) < 1000 * budget_s

    @property
    def samples(self) -> list[float]:
        """The timed requests; the first alone when it took the whole budget (n is then 0)."""
        return self.times or [self.first]

    @property
    def p50(self) -> float:
        return statistics.median(self.samples)

    @property
    def p95(self) -> float:
        return sorted(self.samples)[math.ceil(0.95 * len(self.samples)) - 1]


def measure(
    client: httpx.Client, page: Page, targets: dict[str, str], repeat: int, budget_s: float
) -> tuple[Series, Series]:
    """The page and its baseline, first each once, then in turns."""
    ours, base = (
        Series(page.path.format(**targets), HTML),
        Series(page.baseline.format(**targets), page.baseline_accept),
    )
    while ours.due(repeat, budget_s) or base.due(repeat, budget_s):
        for series in (ours, base):
            if series.due(repeat, budget_s):
                series.take(client)
    return ours, base


def sign_in(url: str, username: str, password: str, timeout_s: float) -> httpx.Client:
    """A client holding ``username``'s session, signed in through the sign-in form as a browser posts it; each of
    its requests given up after ``timeout_s``."""
    client = httpx.Client(base_url=url, timeout=timeout_s)
    form = client.get("/sign-in").text
    token = re.search(r'name="csrf_token" value="([^"]+)"', form)
    if token is None:
        raise SystemExit("the sign-in page has no csrf_token field")
    answer = client.post(
        "/sign-in", data={"csrf_token": token.group(1), "next": "/", "username": username, "password": password}
    )
    if answer.status_code != 303:
        raise SystemExit(f"signing in as {username}: {answer.status_code} {answer.text[:300]}")
    return client


def targets_of(directory: Path, people: list[dict]) -> tuple[dict[str, str], int]:
    """What the paths name, read in process before the server opens the store: run 1's first answered case in a
    language the annotator reads (the same on every record: at 100,000 determinations the domain expert has
    determined every case, so the annotator's queue is empty), the run's IRI, criterion c04's IRI in the current
    envelope; and how many determinations the evaluation has."""
    services = build_services(settings_for(directory))
    try:
        languages = next(p for p in people if p["agent"] == "ada").get("languages")
        run = run_view(services.graphs, EVALUATION_ID, 1)
        first = next(c for c in run_cases(services.graphs, run) if c.trace is not None and reads(languages, c.language))
        envelope, _ = envelope_at(services.graphs, EVALUATION_ID)
        iris = iris_for(services.graphs, EVALUATION_ID)
        determinations = len(services.graphs.rows("determinations", {"evaluation": NamedNode(iris.evaluation)}))
        return {
            "probe": str(first.number),
            "case": first.case.removeprefix(BASE.rstrip("/")),
            "criterion": quote(iris.criterion(envelope.version, "c04"), safe=""),
            "run": quote(run.iri, safe=""),
        }, determinations
    finally:
        services.close()


@dataclass
class Result:
    """One record's measurements: each page's and its baseline's series, by page name."""

    size: int
    determinations: int
    series: dict[str, tuple[Series, Series]]

    def measured(self) -> dict[str, tuple[Series, Series]]:
        return {name: pair for name, pair in self.series.items() if pair[0].status == 200}

    def count(self, missing: bool) -> int:
        return sum((ours.status == 404) == missing and ours.status != 200 for ours, _ in self.series.values())

    def worst(self) -> tuple[str, Series, Series] | None:
        measured = self.measured()
        if not measured:
            return None
        name = max(measured, key=lambda n: measured[n][0].p95)
        return name, *measured[name]


def run(directory: Path, size: int, repeat: int, budget_s: float) -> Result:
    """Serve a copy of the store at ``directory`` and measure every page of :data:`PAGES` on it."""
    with tempfile.TemporaryDirectory(prefix="caie-pages-") as tmp:
        store = Path(tmp) / "store"
        shutil.copytree(directory, store)
        people = json.loads(_demo_people(Path(tmp)).read_text(encoding="utf-8"))
        targets, determinations = targets_of(store, people)
        os.environ.update({"CAIE_PEOPLE": json.dumps(people), "CAIE_SESSION_COOKIE_SECURE": "false"})
        log = (Path(tmp) / "server.log").open("wb")
        server, url = serve(store, log)
        try:
            series = {}
            for page in PAGES:
                person = next(p for p in people if p["agent"] == page.person)
                with closing(sign_in(url, person["username"], person["password"], budget_s)) as client:
                    series[page.name] = measure(client, page, targets, repeat, budget_s)
                print(f"  {page.name}: {describe(*series[page.name])}", flush=True)
                if any(s.status == TIMEOUT for s in series[page.name]):  # drop what the server still computes
                    stop(server)
                    server, url = serve(store, log)
        finally:
            stop(server)
            log.close()
            errors = [
                line
                for line in (Path(tmp) / "server.log").read_text(errors="replace").splitlines()
                if line.startswith(("Traceback", "ERROR")) or "Error:" in line
            ]
            if errors:
                print(f"  the server logged {len(errors)} error line(s), the last: {errors[-1][:200]}", flush=True)
    return Result(size, determinations, series)


def stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    server.wait(timeout=60)


def describe(ours: Series, base: Series) -> str:
    if ours.status != 200:
        return "missing (404)" if ours.status == 404 else f"failed ({answer(ours)})"
    if base.status == TIMEOUT:
        return f"p95 {ours.p95:.0f} ms, baseline {answer(base)}"
    return f"p95 {ours.p95:.0f} ms, baseline p95 {base.p95:.0f} ms" if base.status == 200 else f"p95 {ours.p95:.0f} ms"


def answer(series: Series) -> str:
    return f"no answer within {series.first / 1000:.0f} s" if series.status == TIMEOUT else f"answered {series.status}"


def table(result: Result) -> None:
    print(
        f"\n{result.determinations} determinations (worked example + {result.size}), milliseconds, "
        f"client wall clock on loopback"
    )
    print(
        f"{'page':<14} {'p50':>6} {'p95':>6} {'n':>3} {'first':>7}   {'baseline route':<48} {'p50':>6} {'p95':>6} "
        f"{'n':>3} {'first':>7}"
    )
    for page in PAGES:
        ours, base = result.series[page.name]
        route = page.baseline.split("?")[0].removeprefix(E) or page.baseline
        route = route.replace("{case}", "case IRI (JSON-LD)") or "/evaluations/{id}"
        if ours.status != 200:
            print(f"{page.name:<14} {describe(ours, base)}   ({ours.path})")
            continue
        left = f"{page.name:<14} {ours.p50:>6.0f} {ours.p95:>6.0f} {len(ours.times):>3} {ours.first:>7.0f}"
        right = (
            f"{base.p50:>6.0f} {base.p95:>6.0f} {len(base.times):>3} {base.first:>7.0f}"
            if base.status == 200
            else answer(base)
        )
        flag = "  over 300 ms" if ours.p95 > BUDGET_MS else ""
        print(f"{left}   {route:<48} {right}{flag}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(os.environ.get("CAIE_BENCH_CACHE", "/tmp/ob-caie-bench")),
        help="where the records are kept, by a digest of their inputs (default %(default)s)",
    )
    parser.add_argument("--sizes", default="0,100000", help="determinations added to the worked example, per record")
    parser.add_argument("--repeat", type=int, default=30, help="timed requests per route")
    parser.add_argument("--budget-s", type=float, default=60.0, help="stop timing a route after this many seconds")
    args = parser.parse_args()
    sizes = sorted(int(size) for size in args.sizes.split(","))
    results = []
    for size in sizes:
        started = time.perf_counter()
        directory = worked_example(args.cache) if size == 0 else with_determinations(args.cache, size)
        print(
            f"data: {directory} (ready in {time.perf_counter() - started:.0f} s, not measured); "
            f"load average {' '.join(f'{n:.1f}' for n in os.getloadavg())}",
            flush=True,
        )
        results.append(run(directory, size, args.repeat, args.budget_s))
    for result in results:
        table(result)
    print(f"load average at the end: {' '.join(f'{n:.1f}' for n in os.getloadavg())}")
    last, example = results[-1], results[0].worst()
    worst = last.worst()
    if worst is None:
        raise SystemExit("no page answered 200")
    name, ours, base = worst
    print(f"worst page at {last.size}: {name} ({ours.path}), baseline {base.path}")
    within = all(o.p95 <= BUDGET_MS for o, _ in last.measured().values())
    missing, failed = last.count(missing=True), last.count(missing=False)
    print(
        f"PAGES: ours={ours.p95:.0f} baseline={base.p95:.0f} ratio={ours.p95 / base.p95:.2f} pages={len(last.measured())} "
        f"within_300ms={int(within)} size={last.size} missing={missing} failed={failed} "
        f"met={int(within and not missing and not failed)} example_worst={example[1].p95 if example else 0:.0f}"
    )


if __name__ == "__main__":
    main()
