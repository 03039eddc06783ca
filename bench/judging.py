"""Benchmark: the grounded rule judges on a 2,000-probe run, against the rule judges of 4c0fccf (issue 22).

Run: ``.venv/bin/python bench/judging.py [--probes 2000] [--repeat 1] [--store DIR] [--inputs DIR]``.

Issue 22 asks for the grounded judges at no more than twice the time of the rule judges before them, on the same
run. The setup (not measured) is ``bench/runner.py``'s: the measles worked example and an approved plan of
``--probes`` probes in an on-disk embedded store (:func:`bench.runner.approved_plan`), then a run of it against
the demonstration chatbot in process (``continue_run``). Every answered case of the run is written to
``cases.json`` beside the knowledge it is judged against: each probe's IRI, language tag, country knowledge graph
(a file), the scope's other knowledge graphs, scenario facts, exercised criteria (identifier to IRI) and its
turns, as :func:`service.judgments.automated.probe_contexts` and ``answered_cases`` give them at HEAD; the DSO and
the knowledge graphs are written as N-Triples from the same graphs. ``--inputs DIR`` keeps that input and reuses
it on the next call (no setup, no run).

Both sides are judged the same way: a fresh process runs this file with ``--worker``, with the code under test
first on ``PYTHONPATH``; it parses the graphs and builds each probe's ``ProbeContext`` (not timed), then times
**reading the rules** (``parse_rules`` on the judges file) **and judging every case** (``judge`` on each case's
turns, as ``judge_run`` calls it), from the first to the last: neither the run nor any store write is timed.

* **ours**: the code and ``examples/judges/measles-rule-judges.ttl`` of this work tree (HEAD), with the grounded
  checks: its contexts carry the scenario facts and other knowledge graphs the rules' ``epo:expectedFacts`` read.
* **baseline**: the code and judges file of commit 4c0fccf, from a worktree at ``/tmp/judging-baseline`` (added
  if absent, reused if at that commit). Its ``ProbeContext`` has no facts or other graphs, so its contexts are
  built without them; everything else is the same input.
* **ratio** = ours / baseline (wall clock); ``met=1`` when at most 2. ``--repeat N`` runs each side N times in
  fresh processes, alternating, and takes each side's median. Each side's CPU seconds and determinations
  (by outcome, and by criterion) are printed beside it.
* **digest**: SHA-256 over every determination (probe, criterion, judge and its version, turn, outcome,
  rationale, pointer): two versions of the code with the same digest on the same input made the same
  determinations (how a speed change is checked to change no outcome).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINE_COMMIT = "4c0fccf"
BASELINE_TREE = Path("/tmp/judging-baseline")
RULES = Path("examples/judges/measles-rule-judges.ttl")
RULES_BASE = "https://caie.example/"
CASES = "cases.json"


# ------------------------------------------------------------------------------------------ the input (HEAD's code)


def make_inputs(probes: int, store: Path, out: Path) -> None:
    """Build the plan, run it on the demonstration chatbot and write every answered case and its knowledge to
    ``out`` (``bench/runner.py``'s setup; nothing here is timed)."""
    sys.path.insert(0, str(REPO))
    from caie_vaccine.demo import DemoChatbot
    from caie_vaccine.worked_example import EVALUATION_ID, THEO

    from bench.runner import approved_plan
    from service.composition import build_services
    from service.core.config import Settings
    from service.judgments.automated import probe_contexts
    from service.judgments.records import answered_cases
    from service.runs.model import ExecutionSettings
    from service.runs.records import start_run
    from service.runs.runner import continue_run

    clock = time.perf_counter()
    services = build_services(Settings(data_dir=store))
    try:
        graphs = services.graphs
        number = approved_plan(services, probes, store)
        settings = ExecutionSettings(concurrency=8)
        run = start_run(graphs, EVALUATION_ID, number, DemoChatbot().version, settings, THEO)
        continue_run(graphs, EVALUATION_ID, run.number, DemoChatbot(), settings, THEO)
        cases = answered_cases(graphs, run.iri)
        contexts = probe_contexts(graphs, EVALUATION_ID, run.plan, set(cases))
    finally:
        services.close()
    out.mkdir(parents=True, exist_ok=True)
    files: dict[int, str] = {}

    def file_of(graph: object) -> str:
        if id(graph) not in files:
            name = f"graph-{len(files)}.nt"
            graph.serialize(out / name, format="nt", encoding="utf-8")  # type: ignore[attr-defined]  # an rdflib Graph, typed object where the judges' inputs are walked
            files[id(graph)] = name
        return files[id(graph)]

    written = [
        {
            "probe": probe,
            "language": context.language,
            "dso": file_of(context.dso),
            "country": file_of(context.country),
            "others": [file_of(graph) for graph in context.others],
            "facts": {prop: sorted(value.n3() for value in values) for prop, values in context.facts.items()},
            "criteria": dict(context.criteria),
            "turns": [list(turn) for turn in cases[probe].turns],
        }
        for probe, context in contexts.items()
    ]
    (out / CASES).write_text(json.dumps({"plan": run.plan, "run": run.iri, "cases": written}), encoding="utf-8")
    print(
        f"setup: plan {number} of {probes} probes, run {run.number} on the demonstration chatbot, "
        f"{len(written)} answered cases written to {out} ({time.perf_counter() - clock:.1f} s, not measured)"
    )


# ------------------------------------------------------------------------------------------ the worker (either code)


def worker(inputs: Path, rules_file: Path, root: Path) -> None:
    """Judge every case of ``inputs`` with the ``service`` package on ``PYTHONPATH`` (which must be ``root``'s);
    print what it took and made as one JSON object."""
    from rdflib import Graph
    from rdflib.util import from_n3

    import service
    from service.judgments.model import ProbeContext
    from service.judgments.rules import judge, parse_rules
    from service.runs.model import Turn

    if not Path(service.__file__).resolve().is_relative_to(root.resolve()):
        raise SystemExit(f"the service package came from {service.__file__}, not from {root}")
    data = json.loads((inputs / CASES).read_text(encoding="utf-8"))
    graphs: dict[str, Graph] = {}

    def graph(name: str) -> Graph:
        if name not in graphs:
            graphs[name] = Graph().parse(inputs / name, format="nt")
        return graphs[name]

    grounded = {f.name for f in dataclasses.fields(ProbeContext)} >= {"facts", "others"}  # 4c0fccf's has neither
    work = []
    for case in data["cases"]:
        facts = {prop: frozenset(from_n3(value) for value in values) for prop, values in case["facts"].items()}
        extra = {"facts": facts, "others": tuple(graph(name) for name in case["others"])} if grounded else {}
        context = ProbeContext(
            case["probe"], case["language"], graph(case["country"]), graph(case["dso"]), case["criteria"], **extra
        )
        turns = [t for sent, reply in case["turns"] for t in (Turn("user", sent), Turn("assistant", reply))]
        work.append((turns, context))

    clock, cpu = time.perf_counter(), time.process_time()
    rules = parse_rules(rules_file.read_bytes(), RULES_BASE)
    rules_s = time.perf_counter() - clock
    determinations = []
    for turns, context in work:
        determinations += judge(turns, context, rules)
    seconds, cpu_s = time.perf_counter() - clock, time.process_time() - cpu

    by_criterion: dict[str, Counter[str]] = {}
    for d in determinations:
        by_criterion.setdefault(d.criterion.rsplit("/", 1)[-1], Counter())[d.outcome.rsplit("#", 1)[-1]] += 1
    digest = hashlib.sha256(
        json.dumps(
            sorted(
                (
                    d.probe,
                    d.criterion,
                    d.judge.iri,
                    d.judge.version,
                    d.turn,
                    d.outcome,
                    d.rationale,
                    (d.pointer.start, d.pointer.end) if d.pointer else None,
                )
                for d in determinations
            )
        ).encode()
    ).hexdigest()
    print(
        json.dumps(
            {
                "seconds": seconds,
                "cpu_s": cpu_s,
                "rules_s": rules_s,
                "rules": len(rules),
                "cases": len(work),
                "determinations": len(determinations),
                "digest": digest[:16],
                "outcomes": dict(Counter(d.outcome.rsplit("#", 1)[-1] for d in determinations)),
                "by_criterion": {key: dict(counts) for key, counts in sorted(by_criterion.items())},
            }
        )
    )


def judged(inputs: Path, root: Path) -> dict:
    """One fresh worker process judging ``inputs`` with ``root``'s code and judges file."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker", str(inputs), "--root", str(root)],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the worker on {root} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def baseline_tree() -> Path:
    """The worktree of :data:`BASELINE_COMMIT` at :data:`BASELINE_TREE`, added if absent, reused if at that commit."""
    if not BASELINE_TREE.exists():
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(BASELINE_TREE), BASELINE_COMMIT],
            check=True,
            capture_output=True,
        )
    head = subprocess.run(
        ["git", "-C", str(BASELINE_TREE), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    wanted = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", BASELINE_COMMIT], check=True, capture_output=True, text=True
    ).stdout.strip()
    if head != wanted:
        raise SystemExit(f"{BASELINE_TREE} is at {head}, not {BASELINE_COMMIT}: remove it (git worktree remove)")
    return BASELINE_TREE


# ------------------------------------------------------------------------------------------ main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--probes", type=int, default=2000, help="probes in the plan")
    parser.add_argument("--repeat", type=int, default=1, help="fresh worker processes per side (median taken)")
    parser.add_argument("--store", type=Path, help="keep the store here and reuse its plan (default: a temp dir)")
    parser.add_argument("--inputs", type=Path, help="keep the judging input here and reuse it (no setup, no run)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.root / RULES, args.root)
        return
    with tempfile.TemporaryDirectory(prefix="bench-judging-") as scratch:
        inputs = args.inputs or Path(scratch) / "inputs"
        if not (inputs / CASES).exists():
            store = args.store or Path(scratch) / "store"
            store.mkdir(parents=True, exist_ok=True)
            make_inputs(args.probes, store, inputs)
        else:
            print(f"setup: the judging input in {inputs} reused (not measured)")
        measure(inputs, args.repeat)


def measure(inputs: Path, repeat: int) -> None:
    """Judge ``inputs`` with each side's code ``repeat`` times, alternating, and print the figures."""
    sides = {"ours": REPO, "baseline": baseline_tree()}
    results: dict[str, list[dict]] = {side: [] for side in sides}
    print(f"load average before: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    for _ in range(repeat):
        for side, root in sides.items():
            results[side].append(judged(inputs, root))
    print(f"load average after: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    median = {side: statistics.median(r["seconds"] for r in runs) for side, runs in results.items()}
    ours, baseline = results["ours"][0], results["baseline"][0]
    print(f"{'':12}{'ours (HEAD)':>24}{'baseline (' + BASELINE_COMMIT + ')':>24}")
    for label, key in (("seconds", "seconds"), ("cpu seconds", "cpu_s"), ("rules read", "rules_s")):
        print(
            f"{label:12}{', '.join(f'{r[key]:.2f}' for r in results['ours']):>24}"
            f"{', '.join(f'{r[key]:.2f}' for r in results['baseline']):>24}"
        )
    for label, key in (("rules", "rules"), ("cases", "cases"), ("determined", "determinations"), ("digest", "digest")):
        print(f"{label:12}{ours[key]:>24}{baseline[key]:>24}")
    for outcome in ("passed", "failed", "cantTell", "inapplicable"):
        print(f"{outcome:12}{ours['outcomes'].get(outcome, 0):>24}{baseline['outcomes'].get(outcome, 0):>24}")
    for criterion in sorted(set(ours["by_criterion"]) | set(baseline["by_criterion"])):

        def counts(result: dict, criterion: str = criterion) -> str:  # this iteration's, bound
            found = result["by_criterion"].get(criterion, {})
            return " ".join(f"{k[0] if k != 'cantTell' else 'c'}{v}" for k, v in sorted(found.items())) or "-"

        print(f"  {criterion:10}{counts(ours):>24}{counts(baseline):>24}")
    ratio = median["ours"] / median["baseline"]
    cases = ours["cases"]
    if baseline["cases"] != cases:
        raise SystemExit(f"the sides judged {cases} and {baseline['cases']} cases")
    print(
        f"JUDGING: ours={median['ours']:.2f} baseline={median['baseline']:.2f} ratio={ratio:.2f} cases={cases} "
        f"met={1 if ratio <= 2 else 0}"
    )


if __name__ == "__main__":
    main()
