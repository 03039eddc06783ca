"""Drawing a plan's probes for a budget, and the largest budget whose probes can all be drawn.

A budget is allocated over the criteria (:mod:`.allocation`, capped by each criterion's prompt frame, :mod:`.frames`),
then each criterion's probes are drawn in turn, highest weight first, each conversation new to the plan. Criteria
whose frames overlap share one pool of opening turns: what an earlier criterion drew, a later one cannot, so a
budget within the frames' sum may still not be drawable (issue 25: 12 was refused naming 8, then 8 and 6 failed on
the shared pool, and only 4 drew). A refusal for too large a budget therefore names the largest budget that does
draw, found by drawing (:meth:`Drawer.largest`): a draw is deterministic for the strategy and seed, so that budget
is then made exactly as drawn here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

from ..core.errors import Unprocessable
from ..scenarios.engine import Context
from ..scenarios.frame import allowed_positions
from ..scenarios.production import Production
from ..scope.model import Stratum
from .allocation import Allocation, Annotator, CriterionDemand, OverBudget, Strategy, allocate
from .openings import Opening
from .sampling import eligible_count, sample_scenarios
from .strata import Box, boxes_for, split

Progress = Callable[[str, int, int], None]
Say = Callable[[int], Opening | None]


def _quiet(stage: str, done: int, total: int) -> None:
    """A progress report that reports nothing (the trial draws of :meth:`Drawer.largest`)."""


@dataclass(frozen=True)
class Pick:
    """One drawn probe: its scenario's index in the frame, its conversation, and its population stratum (if any)."""

    index: int
    opening: Opening
    stratum: str | None = None


@dataclass(frozen=True)
class Draw:
    allocation: Allocation
    picks: list[tuple[CriterionDemand, list[Pick]]]
    """Per criterion, highest weight first (the order probes are numbered in), the probes drawn for it."""


@dataclass
class Drawer:
    """What drawing a plan's probes reads: the compiled scenario tables and the plan's request but its budget."""

    context: Context
    production: Production
    say: Say
    demands: Sequence[CriterionDemand]
    eligible: Mapping[str, int]
    """Per criterion, its eligible scenarios: the most its sampler can draw."""
    identifier: Mapping[str, str]
    """Per criterion IRI, its identifier, which names its random streams."""
    strategy: Strategy
    seed: int
    annotators: Sequence[Annotator] = ()
    excluded: set[int] = field(default_factory=set)
    evaluation: str = ""
    population: tuple[Stratum, ...] = ()
    """The scope's strata, drawn from under strategy PopulationWeighted."""
    allowed: dict[str, list[set[int]]] = field(init=False)
    """Per criterion, where its probes are drawn (its frame, routing defaults applied)."""

    def __post_init__(self) -> None:
        self.allowed = {c.iri: allowed_positions(self.context, c) for c in self.context.criteria}

    def draw(self, budget: int, report: Progress = _quiet) -> Draw:
        """``budget`` probes allocated and drawn; :class:`.allocation.OverBudget` when they cannot all be drawn."""
        allocation = allocate(budget, self.demands, self.strategy, self.annotators)
        said: set[tuple[str, ...]] = set()
        picks: list[tuple[CriterionDemand, list[Pick]]] = []
        ordered = sorted(self.demands, key=lambda d: (-d.weight, d.iri))
        for done, demand in enumerate(ordered):
            report("sampling probes", done, len(ordered))
            picks.append((demand, self._criterion(demand.iri, allocation.probes[demand.iri], said)))
        report("sampling probes", len(ordered), len(ordered))
        return Draw(allocation, picks)

    def _criterion(self, iri: str, count: int, said: set[tuple[str, ...]]) -> list[Pick]:
        if self.strategy is Strategy.POPULATION_WEIGHTED:
            boxes = boxes_for(self.context, self.evaluation, self.population, self.allowed[iri])
            drawn = split(count, boxes, partial(self._pick, said, iri), iri)
            said |= {opening.conversation for _, (_, opening) in drawn}
            return [Pick(index, opening, box.iri) for box, (index, opening) in drawn]

        def draw(n: int) -> list[int]:
            return sample_scenarios(
                self.context.space,
                self.production,
                self.allowed[iri],
                iri,
                n,
                self.seed,
                self.excluded,
                stream=self.identifier[iri],
            )

        return [
            Pick(index, opening)
            for index, opening in distinct_openings(draw, self.say, count, self.eligible[iri], said, iri)
        ]

    def _pick(
        self, said: set[tuple[str, ...]], criterion: str, box: Box, count: int, taken: set[tuple[str, ...]]
    ) -> list[tuple[int, Opening]]:
        """At most ``count`` of the criterion's scenarios from one population stratum (:func:`.strata.split`), with
        conversations new to the plan and to ``taken`` (which gains them); the stratum's own random stream, named by
        the criterion's identifier and the stratum's."""

        def draw(n: int) -> list[int]:
            return sample_scenarios(
                self.context.space,
                self.production,
                box.allowed,
                criterion,
                n,
                self.seed,
                self.excluded,
                stream=f"{self.identifier[criterion]} {box.stratum.id}",
            )

        found = distinct_openings(
            draw,
            self.say,
            count,
            eligible_count(self.production, box.allowed, criterion),
            said | taken,
            criterion,
            partial=True,
        )
        taken |= {opening.conversation for _, opening in found}
        return found

    def largest(self, below: int, report: Progress = _quiet) -> int | None:
        """The largest budget under ``below`` whose probes can all be drawn (``None`` if none can), by bisection:
        a budget that draws is kept and a larger one tried; one over the pool, a smaller; one too small for the
        strategy (fewer probes than criteria to give one each), a larger."""
        low, high = 1, min(below - 1, sum(d.frame for d in self.demands))
        best, step, steps = None, 0, max(1, high).bit_length()  # bisection's most steps, for the progress report
        while low <= high:
            report("finding the budget that fits", step, steps)
            step, middle = step + 1, (low + high) // 2
            try:
                self.draw(middle)
            except OverBudget:
                high = middle - 1
                continue
            except Unprocessable:
                low = middle + 1
                continue
            best, low = middle, middle + 1
        return best

    def refusal(self, refused: OverBudget, budget: int, report: Progress = _quiet) -> Unprocessable:
        """The 422 for a budget that cannot be drawn: why, and the largest budget that can (:meth:`largest`)."""
        fits = self.largest(budget, report)
        how = f"by strategy {self.strategy.value} with seed {self.seed}"
        if fits is None:
            return Unprocessable(f"{refused}; no smaller budget can be drawn {how} either")
        return Unprocessable(
            f"{refused}; {how}, the largest budget whose probes can all be drawn is {fits} (criteria "
            f"that share opening turns draw from one pool of them): lower the budget to at most {fits}"
        )


def distinct_openings(
    draw: Callable[[int], list[int]],
    say: Say,
    count: int,
    frame: int,
    said: set[tuple[str, ...]],
    criterion: str,
    partial: bool = False,
) -> list[tuple[int, Opening]]:
    """``count`` of a criterion's scenarios whose conversations (opening turn and scripted follow-ups) can be said
    and are new to the plan (``said``, which gains them): the sampler's draws in order, passing over a scenario
    whose turns the plan already has, or that its language's templates cannot say; when too few are left, the
    sampler draws twice as many, up to ``frame``, the eligible scenarios there are. Deterministic for a seed, as the
    sampler is. With ``partial``, fewer than ``count`` when no more can be had, rather than a 422."""
    wanted = min(count, frame) if partial else count
    if wanted == 0:
        return []
    while True:
        picked: list[tuple[int, Opening]] = []
        texts = set(said)
        for index in draw(wanted):
            opening = say(index)
            if opening is not None and opening.conversation not in texts:
                texts.add(opening.conversation)
                picked.append((index, opening))
                if len(picked) == count:
                    said |= texts
                    return picked
        if wanted >= frame:
            if partial:
                said |= texts
                return picked
            raise OverBudget(
                f"only {len(picked)} of the scenarios that can probe {criterion} have opening turns that "
                f"differ from each other and from the plan's other probes, not {count}"
            )
        wanted = min(2 * wanted, frame)
