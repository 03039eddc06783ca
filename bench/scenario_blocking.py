"""Benchmark: scenario blocking, reference (owlrl + pySHACL on every candidate) against the fast path.

Run: ``.venv/bin/python bench/scenario_blocking.py [--candidates 10000] [--million 1000000]``. Both paths see
the repository's DSO, the four country KGs and ``shapes/scenario-*.ttl``; the candidates are a seeded
sample of the full frame: most of them (``--eligible``, default 80 %) drawn exactly from the eligible
candidates (:mod:`service.scenarios.draw`), the rest uniformly from the whole frame, since almost every
candidate of the frame is blocked. The reference is timed in one pass, never extrapolated, in its default
chunks of 200 candidates (pySHACL is quadratic in the candidates of one data graph; see
service/scenarios/reference.py). The fast path's times include compiling its rule tables from scratch,
with the compile-time cross-check against the reference; it reports how many rules compiled and how many
fell back to the reference.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rdflib import Graph  # noqa: E402

from service.scenarios.draw import sample_eligible  # noqa: E402
from service.scenarios.engine import Context  # noqa: E402
from service.scenarios.facets import Schema, build_facets  # noqa: E402
from service.scenarios.production import Production  # noqa: E402
from service.scenarios.reference import reference_check, scenario_iri  # noqa: E402
from service.scenarios.rules import default_scenario_shape_paths, load_rule_shapes  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BASE = "https://example.org/evaluations/bench"


def context() -> Context:
    dso = Graph().parse(ROOT / "ontologies" / "dso" / "vaccine-education.ttl")
    kgs = [Graph().parse(p) for p in sorted((ROOT / "ontologies" / "kg").glob("*.ttl"))]
    return Context(dso, kgs, build_facets(Schema(dso, kgs)), load_rule_shapes(default_scenario_shape_paths()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--candidates", type=int, default=10_000)
    parser.add_argument("--million", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=20260101)
    parser.add_argument("--eligible", type=float, default=0.8, help="share of the candidates drawn from the eligible ones")
    args = parser.parse_args()
    ctx = context()
    print(f"frame: {ctx.space.size} candidates over {len(ctx.facets)} facets; {len(ctx.rules)} shape rules")

    start = time.perf_counter()
    production = Production(ctx)
    compiled = time.perf_counter() - start
    print(f"compiled in {compiled:.2f} s: {len(production.compiled)} rules from tables "
          f"(the DSO's OWL 2 RL axioms as one), {len(production.fallback)} fallback to the reference"
          + "".join(f"\n  fallback {rule}: {why}" for rule, why in sorted(production.fallback.items())), flush=True)
    rng = random.Random(args.seed)
    n_eligible = round(args.candidates * args.eligible)
    indices = sample_eligible(production, n_eligible, rng)
    indices += [i for i in rng.sample(range(ctx.space.size), args.candidates) if i not in set(indices)][
        :args.candidates - n_eligible]
    start = time.perf_counter()
    ours_blocks = {i: production.blocks(i, scenario_iri(BASE, i)) for i in indices}
    ours = compiled + time.perf_counter() - start
    print(f"production: {args.candidates} candidates in {ours:.2f} s (tables compiled from scratch)", flush=True)

    start = time.perf_counter()
    ref_blocks, _pairs = reference_check(ctx.reference, indices, base=BASE, with_pairs=False)
    baseline = time.perf_counter() - start
    print(f"reference: {args.candidates} candidates in {baseline:.2f} s (owlrl closure + pySHACL, one pass, chunks of 200)", flush=True)

    identical_sets = {i for i, b in ours_blocks.items() if b} == {i for i, b in ref_blocks.items() if b}
    identical_rules = ours_blocks == ref_blocks
    blocked = sum(1 for b in ref_blocks.values() if b)
    print(f"blocked: {blocked} of {args.candidates}, eligible {args.candidates - blocked}; identical blocked sets: {identical_sets}; "
          f"identical rules and messages: {identical_rules}")

    start = time.perf_counter()
    million = Production(context())
    sample = random.Random(args.seed + 1).sample(range(million.ctx.space.size), args.million)
    flags = million.blocked_many(sample)
    million_s = time.perf_counter() - start
    print(f"production: {args.million} candidates in {million_s:.2f} s "
          f"(context + tables + sampling + checks), {sum(flags)} blocked")
    ratio = baseline / ours
    print(f"SCENARIO_BLOCKING: ours={ours:.2f} baseline={baseline:.2f} ratio={ratio:.0f} "
          f"identical={int(identical_sets and identical_rules)} million_s={million_s:.2f}")


if __name__ == "__main__":
    main()
