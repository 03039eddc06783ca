"""The scope's population in a plan (issue 22 §3, strategy ``PopulationWeighted``, docs/allocation.md).

The scope declares who uses the system as strata: groups described by scenario facts (a persona, the age group of
the person asked about, a pregnancy) with their share of the users. A criterion's probes are split over the strata
whose members can ask it (the stratum's facts and the criterion's frame leave a value on every facet), in
proportion to their shares by largest remainder (:func:`.allocation.hamilton`), and each probe's asker is drawn
from its stratum. A stratum that has fewer distinct conversations than its quota gives what it lacks to the others
by the same rule, so a criterion still gets its allocation while any stratum can give more. Scenarios outside every
stratum are never drawn: no pregnant 12-year-old unless the scope declares such a group.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeVar

from ..core.errors import Unprocessable
from ..scenarios.engine import Context, Criterion
from ..scenarios.frame import trigger_positions
from ..scope.model import Stratum
from .allocation import OverBudget, hamilton

Item = TypeVar("Item")


@dataclass(frozen=True)
class Box:
    """One stratum within one criterion's frame: per facet, the value positions both allow."""

    stratum: Stratum
    iri: str
    allowed: tuple[frozenset[int], ...]


def stratum_iri(evaluation: str, stratum: Stratum) -> str:
    """The stratum's node in the scope (``{evaluation}/population/{id}``)."""
    return f"{evaluation}/population/{stratum.id}"


def positions(ctx: Context, evaluation: str, stratum: Stratum) -> list[set[int]]:
    """Per facet, the value positions the stratum's facts allow (422 for a facet the DSO does not declare)."""
    return trigger_positions(
        ctx, Criterion(stratum_iri(evaluation, stratum), frozenset(), stratum.facts), defaults=False
    )


def require_disjoint(ctx: Context, evaluation: str, population: Sequence[Stratum]) -> None:
    """422 naming two strata whose facts let one scenario belong to both: a probe's stratum must be one."""
    boxes = [(stratum, positions(ctx, evaluation, stratum)) for stratum in population]
    for k, (first, mine) in enumerate(boxes):
        for second, theirs in boxes[k + 1 :]:
            if all(a & b for a, b in zip(mine, theirs)):
                raise Unprocessable(
                    f"population groups {first.id!r} and {second.id!r} overlap: a scenario can meet the "
                    "facts of both; give them a fact that tells them apart (docs/allocation.md)"
                )


def boxes_for(ctx: Context, evaluation: str, population: Sequence[Stratum], allowed: Sequence[set[int]]) -> list[Box]:
    """The strata whose members can ask a criterion whose frame is ``allowed``, each within that frame."""
    out = []
    for stratum in population:
        both = tuple(frozenset(a & b) for a, b in zip(allowed, positions(ctx, evaluation, stratum)))
        if all(both):
            out.append(Box(stratum, stratum_iri(evaluation, stratum), both))
    return out


def split(
    count: int, boxes: Sequence[Box], pick: Callable[[Box, int, set[Any]], list[Item]], criterion: str
) -> list[tuple[Box, Item]]:
    """``count`` items over ``boxes`` by their strata's shares, ``pick(box, n, taken)`` giving at most ``n`` of a box's
    (the same ones for the same ``n`` and ``taken``, which it adds them to: one set per round, so that boxes do not
    give the same item twice); a box that gives fewer than its quota passes the rest to the others. 422 when the
    strata together cannot give ``count``."""
    if not boxes:
        raise Unprocessable(
            f"no population group of the scope can ask {criterion}: its triggers and every group's "
            "facts exclude each other (docs/allocation.md)"
        )
    order = [box.iri for box in boxes]
    shares = {box.iri: Fraction(box.stratum.share) for box in boxes}
    caps = {box.iri: count for box in boxes}
    while True:
        quotas = hamilton(count, shares, caps, order)
        taken: set[Any] = set()
        picked = {box.iri: pick(box, quotas[box.iri], taken) for box in boxes}
        short = [box for box in boxes if len(picked[box.iri]) < quotas[box.iri]]
        if not short:
            return [(box, item) for box in boxes for item in picked[box.iri]]
        for box in short:
            caps[box.iri] = len(picked[box.iri])
        if sum(caps.values()) < count:
            groups = ", ".join(f"{box.stratum.id} {caps[box.iri]}" for box in boxes)
            raise OverBudget(
                f"the population groups that can ask {criterion} have {sum(caps.values())} distinct "
                f"conversations for it together ({groups}), not {count}"
            )
