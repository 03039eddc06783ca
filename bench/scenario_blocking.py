"""Benchmark: scenario blocking, the reference (owlrl + pySHACL on every candidate) against the fast path.

Run: ``.venv/bin/python bench/scenario_blocking.py [--candidates 10000] [--eligible 0.8] [--million 1000000]``.

Both paths read the repository's DSO, the four country KGs and ``shapes/scenario-*.ttl``, through the context
:func:`service.scenarios.derive.context_for` builds for a derivation (no envelope: every country, language
and concept; no criteria, so the routing rules judge no scenario-criterion pair and only blocking is
compared). What is measured:

* **compile**: :class:`~service.scenarios.production.Production` from a fresh context, once without the
  compile-time cross-check (``cross_check=-1``) and once as derivations compile it (with the cross-check);
  how many rules compiled into tables and how many fell back to the reference, each fallback with its reason.
* **ours**: ``Production.blocks`` on each compared candidate, as ``derive()`` calls it, on tables already
  compiled (and cross-checked): what a derivation over these inputs costs the service once it has compiled them
  (every later derivation, plan and review reads them from the table cache, keyed by the inputs' digests).
* **baseline**: the one-off OWL 2 RL closure of DSO + KGs (the reference's first chunk would make it), then
  :func:`~service.scenarios.reference.reference_check` on the same candidates, in its default chunks of 200,
  timed in one pass, never extrapolated.
* **ratio** = baseline / ours. **cold_s** and **cold_ratio**: ours from scratch instead, given the parsed
  inputs: the closure of DSO + KGs, the checked compile and the checks; **cold_break_even**: how many
  candidates the from-scratch ratio needs to reach 100 (extrapolated from this run's per-candidate costs, not
  measured). Why the headline is not the cold figure: the compile-time cross-check runs the reference itself on a
  sample (issue 9 §5), about one of the reference's 200-candidate chunks, so from scratch no fast path can be 100
  times faster than 50 such chunks (docs/decisions.md, "The blocking benchmark's ratio"). Printed beside them:
  the ratio against the compile without the cross-check, and in this process's CPU seconds (which other work on
  a shared machine does not inflate, unlike the wall clock). **identical** = 1 when both give the same blocked
  set and, per candidate, the same rules and messages, and ``Production.blocked_many`` (the 1M loop) agrees
  with the blocked set.
* **million_s**: in a fresh interpreter (nothing cached), reading the inputs, compiling with the
  cross-check, drawing ``--million`` uniform candidates of the frame and ``Production.blocked_many`` on them.

The compared candidates: ``--eligible`` of them drawn exactly from the eligible ones
(:func:`service.scenarios.draw.sample_eligible`, from the fast path's tables; the reference then judges them
on its own), the rest uniformly from the whole frame, where almost every candidate is blocked.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rdflib import Graph
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from service.scenarios.derive import DerivationInput, context_for
from service.scenarios.draw import sample_eligible
from service.scenarios.engine import Block, Context
from service.scenarios.frame import count_frame
from service.scenarios.production import OWL_RULES, Production
from service.scenarios.reference import reference_check, scenario_iri
from service.scenarios.rules import ROUTING, default_scenario_shape_paths

ROOT = Path(__file__).resolve().parents[1]
BASE = "https://example.org/evaluations/bench"
CHUNK = 200
"""The reference's default chunk (see :func:`reference_check`); one progress step."""
progress_console = Console(stderr=True)


def derivation_input() -> DerivationInput:
    dso = Graph().parse(ROOT / "ontologies" / "dso" / "vaccine-education.ttl")
    kgs = tuple(Graph().parse(p) for p in sorted((ROOT / "ontologies" / "kg").glob("*.ttl")))
    shapes = tuple(Graph().parse(p) for p in default_scenario_shape_paths())
    return DerivationInput(dso, kgs, shapes)


def timed(work):
    """``work()``, its wall-clock seconds and this process's CPU seconds (the machine is shared: the CPU
    time says how much of the wall time was waiting for a core)."""
    start, cpu = time.perf_counter(), time.process_time()
    result = work()
    return result, time.perf_counter() - start, time.process_time() - cpu


def compared_candidates(production: Production, count: int, eligible: float, seed: int) -> list[int]:
    """``eligible`` of ``count`` drawn exactly from the eligible candidates, the rest uniformly from the frame."""
    rng = random.Random(seed)
    drawn = sample_eligible(production, round(count * eligible), rng)
    taken = set(drawn)
    size = production.ctx.space.size
    uniform = (i for i in rng.sample(range(size), min(size, count)) if i not in taken)
    return drawn + [i for i, _ in zip(uniform, range(count - len(drawn)))]


def reference_blocks(ctx: Context, indices: list[int]) -> dict[int, tuple[Block, ...]]:
    """The reference over ``indices`` chunk by chunk (as ``reference_check`` chunks them), with progress."""
    out: dict[int, tuple[Block, ...]] = {}
    columns = (TextColumn("reference"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    start = time.perf_counter()
    with Progress(*columns, console=progress_console) as bar:
        task = bar.add_task("reference", total=len(indices))
        for first in range(0, len(indices), CHUNK):
            chunk = indices[first : first + CHUNK]
            blocks, _pairs = reference_check(ctx.reference, chunk, base=BASE, with_pairs=False, chunk=CHUNK)
            out.update(blocks)
            bar.advance(task, len(chunk))
            if not progress_console.is_terminal:  # a log file gets one line per chunk instead of a bar
                progress_console.print(
                    f"reference: {len(out)}/{len(indices)} candidates, {time.perf_counter() - start:.0f} s"
                )
    return out


def million_run(count: int, seed: int) -> tuple[float, int, int, dict[str, float]]:
    """In a fresh interpreter: inputs read, context, checked compile, ``count`` uniform candidates checked."""
    start, cpu = time.perf_counter(), time.process_time()
    production, compiled, _ = timed(lambda: Production(context_for(derivation_input())))
    if production.fallback:  # the reference would check each candidate the tables pass: days, not seconds
        return math.nan, 0, len(production.fallback), {"compile": compiled}
    size = production.ctx.space.size
    sample, drawn_s, _ = timed(lambda: random.Random(seed).sample(range(size), min(count, size)))
    flags, checks_s, _ = timed(lambda: production.blocked_many(sample))
    parts = {"inputs + compile": compiled, "draw": drawn_s, "checks": checks_s, "CPU": time.process_time() - cpu}
    return time.perf_counter() - start, sum(flags), 0, parts


def timed_million(count: int, seed: int) -> float:
    """:func:`million_run` in a fresh interpreter (so nothing this process compiled or closed is reused)."""
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        million_s, blocked, fallbacks, parts = pool.submit(million_run, count, seed).result()
    steps = ", ".join(f"{k} {v:.2f} s" for k, v in parts.items())
    if fallbacks:
        print(f"million: not timed, {fallbacks} rules fall back to the reference ({steps})", flush=True)
    else:
        print(
            f"million: {count} uniform candidates in {million_s:.2f} s from a fresh interpreter ({steps}), "
            f"{blocked} blocked",
            flush=True,
        )
    return million_s


def describe_rules(ctx: Context, production: Production) -> str:
    routing = sum(1 for r in ctx.rules if r.kind == ROUTING)
    shapes = [r for r in production.compiled if r != OWL_RULES]
    lines = [
        (
            f"rules: {len(production.compiled)} compiled into tables ({len(shapes)} shape rules"
            f"{' + the DSO OWL 2 RL axioms as one unit' if OWL_RULES in production.compiled else ''}), "
            f"{len(production.fallback)} fallback to the reference"
            f" ({len(ctx.rules) - routing} consistency and {routing} routing shape rules; with no criteria "
            f"the routing rules block no pair)"
        )
    ]
    lines += [f"  fallback {rule}: {why}" for rule, why in sorted(production.fallback.items())]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", type=int, default=10_000)
    parser.add_argument(
        "--eligible", type=float, default=0.8, help="share of the candidates drawn from the eligible ones"
    )
    parser.add_argument("--million", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=20260101)
    args = parser.parse_args()

    million_s = timed_million(args.million, args.seed + 1)  # first, before the long reference pass
    inp = derivation_input()
    ctx, context_s, _ = timed(lambda: context_for(inp))
    print(
        f"frame: {ctx.space.size} candidates over {len(ctx.facets)} facets "
        f"({', '.join(f'{f.name} {len(f.values)}' for f in ctx.facets)}); {len(ctx.rules)} shape rules; "
        f"context in {context_s:.2f} s",
        flush=True,
    )
    _plain, plain_s, _ = timed(lambda: Production(context_for(inp), cross_check=-1))
    _closed, closure_s, closure_cpu = timed(lambda: ctx.reference.closed)
    production, checked_s, checked_cpu = timed(lambda: Production(ctx))
    counts = count_frame(production)
    print(
        f"compile: {plain_s:.2f} s without the cross-check, {checked_s:.2f} s with it (CPU {checked_cpu:.2f} s) "
        f"(+ {closure_s:.2f} s for the OWL 2 RL closure of DSO + KGs, made once, which the cross-check and "
        f"the reference share)\n{describe_rules(ctx, production)}\n"
        f"frame: {counts.eligible} of {counts.total} eligible ({counts.eligible / counts.total:.2%}), "
        f"{1 - counts.eligible / counts.total:.2%} blocked (exact counts from the tables)",
        flush=True,
    )

    indices = compared_candidates(production, args.candidates, args.eligible, args.seed)

    def ours_run() -> dict[int, tuple[Block, ...]]:
        production.check_fallbacks(indices)  # one reference run for the rules that fell back, as derive() does
        return {i: production.blocks(i, scenario_iri(BASE, i)) for i in indices}

    ours_blocks, ours, checks_cpu = timed(ours_run)
    cold = closure_s + checked_s + ours
    print(
        f"ours: {len(indices)} candidates checked in {ours:.3f} s on the compiled tables; from scratch, with the "
        f"closure and the checked compile, {cold:.2f} s",
        flush=True,
    )

    ref_blocks, reference_s, reference_cpu = timed(lambda: reference_blocks(ctx, indices))
    baseline = closure_s + reference_s
    per_candidate = reference_s / len(indices)
    break_even = math.ceil((99 * closure_s + 100 * checked_s) / (per_candidate - 100 * ours / len(indices)))
    print(
        f"baseline: {len(indices)} candidates in {reference_s:.2f} s, CPU {reference_cpu:.2f} s (owlrl closure + "
        f"pySHACL, one pass, chunks of {CHUNK}); with the closure of DSO + KGs {baseline:.2f} s\n"
        f"ratio: {baseline / ours:.0f} on the compiled tables (baseline / ours); from scratch {baseline / cold:.1f} "
        f"(against the compile without the cross-check {baseline / (closure_s + plain_s + ours):.1f}; in CPU seconds "
        f"{closure_cpu + reference_cpu:.2f} / {closure_cpu + checked_cpu + checks_cpu:.2f} = "
        f"{(closure_cpu + reference_cpu) / (closure_cpu + checked_cpu + checks_cpu):.1f}); from scratch 100x from "
        f"about {break_even} candidates on (extrapolated)",
        flush=True,
    )

    blocked = {i for i, b in ref_blocks.items() if b}
    same_sets = blocked == {i for i, b in ours_blocks.items() if b}
    same_rules = ours_blocks == ref_blocks
    same_loop = blocked == {i for i, hit in zip(indices, production.blocked_many(indices)) if hit}
    eligible_share = 1 - len(blocked) / len(indices)
    print(
        f"compared: {len(indices)} candidates, {round(len(indices) * args.eligible)} drawn from the eligible "
        f"ones and the rest uniformly; by the reference {len(indices) - len(blocked)} eligible "
        f"({eligible_share:.1%}), {len(blocked)} blocked\nidentical blocked sets: {same_sets}; identical rules "
        f"and messages: {same_rules}; blocked_many agrees: {same_loop}",
        flush=True,
    )
    for i in sorted(i for i in indices if ours_blocks[i] != ref_blocks[i])[:5]:
        print(f"  differs at {i}: ours {ours_blocks[i]} reference {ref_blocks[i]}")

    print(
        f"SCENARIO_BLOCKING: ours={ours:.3f} baseline={baseline:.2f} ratio={baseline / ours:.0f} "
        f"identical={int(same_sets and same_rules and same_loop)} million_s={million_s:.2f} "
        f"cold_s={cold:.2f} cold_ratio={baseline / cold:.1f} cold_break_even={break_even} "
        f"fallback={len(production.fallback)} compiled={len(production.compiled)} "
        f"eligible_share={eligible_share:.3f}"
    )


if __name__ == "__main__":
    main()
