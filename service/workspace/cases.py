"""A run's cases as the workspace reads them (``queries/workspace-run-cases.rq``), and who reads which language.

A run's cases never change once recorded and are only ever added, so the listing is kept per graph service by the
run and its count of attempts (:class:`~service.runs.records.RunView`): a page reads it once per new case, and again
after a retry, whose new attempt replaces the probe's errored case in the listing (each probe's latest attempt).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from pyoxigraph import NamedNode

from ..core.graphs import GraphService
from ..core.memo import Recent
from ..plan.openings import normal_tag
from ..runs.records import RunView

UNDETERMINED = "und"
"""BCP 47's tag for a language the record does not state."""


@dataclass(frozen=True)
class RunCase:
    """One case of a run: its probe, the text's language, the annotator the plan assigned, the criteria it bears on."""

    case: str
    probe: str
    number: int
    trace: str | None
    """``None``: the case ended in an execution error (never judged)."""
    language: str
    """The BCP 47 tag of the probe's opening turn (``und`` when it has none)."""
    assigned_to: str | None
    criteria: tuple[str, ...]


_KEPT: WeakKeyDictionary[GraphService, Recent[tuple[str, int], tuple[RunCase, ...]]] = WeakKeyDictionary()
_KEPT_LOCK = threading.Lock()


def run_cases(graphs: GraphService, run: RunView) -> tuple[RunCase, ...]:
    """Every case of ``run``, by probe number."""
    with _KEPT_LOCK:
        kept = _KEPT.setdefault(graphs, Recent(32))
    key = (run.iri, run.attempts)
    found = kept.get(key)
    if found is None:
        found = tuple(
            RunCase(
                row["case"].value,
                row["probe"].value,
                int(row["number"].value),
                row["trace"].value if "trace" in row else None,
                row["tag"].value or UNDETERMINED,
                row["assignedTo"].value if "assignedTo" in row else None,
                tuple(sorted(row["exercises"].value.split())),
            )
            for row in graphs.rows("workspace-run-cases", {"run": NamedNode(run.iri), "plan": NamedNode(run.plan)})
        )
        if len(found) == run.cases:  # a case recorded meanwhile: keep the listing only when it is the one counted
            kept.put(key, found)
    return found


def _primary(tag: str) -> str:
    return normal_tag(tag).split("-", 1)[0].lower()


def reads(languages: Iterable[str] | None, tag: str) -> bool:
    """Whether a person who declared ``languages`` (BCP 47 tags or ISO 639 codes) reads text tagged ``tag``:
    the primary subtags compared (``sw`` reads ``sw-KE``, ``swa`` is ``sw``). A person who declared none
    (``None``) is offered every language; text in an undetermined language goes only to them
    (docs/workspace.md, "Languages")."""
    if languages is None:
        return True
    return tag != UNDETERMINED and _primary(tag) in {_primary(language) for language in languages}
