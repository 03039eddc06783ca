"""Who determined what in an evaluation, as the workspace's pages read it on every request: kept in this process
and brought up to date from the judgments batches appended since it was last read.

Judgments batches are numbered, append-only graphs (``{evaluation}/judgments/{n}``, :mod:`service.judgments.records`):
once catalogued a batch never changes and the next number is the next batch. So the first read costs every
determination of the evaluation (``queries/workspace-determinations.rq``; about 5 s at 100,000 on Oxigraph, where
``judge-human-units.rq`` takes half a minute), and each later read costs the batches appended since: the highest
number (one catalog lookup) and those batches' determinations. What is kept per criterion and case (its trace):
each determiner's latest word on each reply and the latest of all; and per unit (criterion and reply) what agreement
with people compares (:class:`~service.judgments.agreement.LatestWords`).
The record read is checked on every use by the catalog digest of the last batch read: another store, or a record
rebuilt behind the service, starts the reading again. ``caie serve`` reads every evaluation once at startup, in the
background (:func:`warm`), so that the first page after a restart does not wait for it (a page asked for meanwhile
waits for that evaluation's reading, never reads it twice).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from weakref import WeakKeyDictionary

from pyoxigraph import NamedNode

from ..core.catalog import GraphKind
from ..core.graph_edits import GraphRef
from ..core.graphs import GraphService
from ..core.store import Row
from ..envelope import JudgeAgreement
from ..judgments.agreement import HumanAgreement, LatestWords, Said, instant
from ..judgments.model import AUTOMATIC, MANUAL

_log = logging.getLogger(__name__)

BATCHES_PER_REQUEST = 8
"""Judgments batches read in one request: a batch holds up to a few thousand determinations, and a remote store
caps the rows of an answer (Virtuoso's 10,000)."""


@dataclass
class Pair:
    """The determinations on one criterion in one case: each determiner's latest word on each of the case's replies
    (a later determination by the same person, or the same judge version, on the same reply replaces the earlier)."""

    words: dict[tuple[str, str, str | None, str], Said] = field(default_factory=dict)
    """(mode, judge, version (automated only), response) to the latest determination."""
    latest: Said | None = None
    """The latest determination of any judge and mode."""

    def add(self, mode: str, judge: str, version: str | None, response: str, said: Said) -> None:
        key = (mode, judge, version, response)
        self.words[key] = max(self.words.get(key, said), said)
        self.latest = max(self.latest or said, said)

    @property
    def people(self) -> frozenset[str]:
        """Who determined it by hand (agent IRIs)."""
        return frozenset(judge for mode, judge, _, _ in self.words if mode == MANUAL)

    @property
    def judges(self) -> frozenset[tuple[str, str]]:
        """The automated (judge, version)s that determined it."""
        return frozenset((judge, version) for mode, judge, version, _ in self.words if mode == AUTOMATIC and version)

    @property
    def determinations(self) -> tuple[str, ...]:
        """The IRIs of the latest words, in IRI order."""
        return tuple(sorted(said[1] for said in self.words.values()))


class Judged:
    """An evaluation's determinations as read so far (module docstring); use it through :func:`judged`."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._forget()

    def _forget(self) -> None:
        """Back to nothing read (the lock stays: another thread may be waiting on it)."""
        self.read = 0
        """The highest batch number read."""
        self.digest: str | None = None
        """That batch's catalog digest when it was read."""
        self.pairs: dict[tuple[str, str], Pair] = {}
        """(criterion, trace) to the determinations on it."""
        self.words = LatestWords()
        self._agreements: dict[JudgeAgreement, tuple[int, tuple[HumanAgreement, ...]]] = {}
        self._trusted: dict[JudgeAgreement, tuple[int, frozenset[tuple[str, str, str]]]] = {}

    def pair(self, criterion: str, trace: str) -> Pair:
        return self.pairs.get((criterion, trace)) or Pair()

    def agreements(self, threshold: JudgeAgreement, criterion: str | None = None) -> list[HumanAgreement]:
        """Each automated judge version's agreement with people (on ``criterion`` only, when given); computed
        only when a batch was read since (every coefficient: 20 ms at 100,000 determinations)."""
        kept = self._agreements.get(threshold)
        if kept is None or kept[0] != self.read:
            kept = (self.read, tuple(self.words.agreements(threshold)))
            self._agreements[threshold] = kept
        return [a for a in kept[1] if criterion is None or a.criterion == criterion]

    def trusted(self, threshold: JudgeAgreement) -> frozenset[tuple[str, str, str]]:
        """(judge, version, criterion) of every automated judge version that may decide the criterion alone;
        recomputed only when a batch was read since."""
        kept = self._trusted.get(threshold)
        if kept is None or kept[0] != self.read:
            kept = (
                self.read,
                frozenset((a.judge, a.version, a.criterion) for a in self.agreements(threshold) if a.trusted_alone),
            )
            self._trusted[threshold] = kept
        return kept[1]

    def needs_person(self, criterion: str, trace: str, trusted: frozenset[tuple[str, str, str]]) -> bool:
        """No person determined the criterion on the case, and no judge version trusted alone did
        (``cases-needing-people`` in docs/judgments.md)."""
        pair = self.pairs.get((criterion, trace))
        return pair is None or (not pair.people and not any((*judge, criterion) in trusted for judge in pair.judges))

    def _refresh(self, graphs: GraphService, record: GraphRef) -> None:
        highest = int(graphs.next_batch(record, "judgments").key) - 1
        if self.read:
            last = graphs.find(_batch(graphs, record, self.read))
            if highest < self.read or last is None or last.digest != self.digest:
                self._forget()  # another record than the one read: read it afresh
        if highest <= self.read:
            return
        batches = [(NamedNode(_batch(graphs, record, n).iri.value),) for n in range(self.read + 1, highest + 1)]
        self._add(graphs.rows_over("workspace-determinations", ("batch",), batches, chunk=BATCHES_PER_REQUEST))
        entry = graphs.find(_batch(graphs, record, highest))
        self.read, self.digest = highest, entry.digest if entry is not None else None

    def _add(self, rows: Sequence[Row]) -> None:
        versions = {row["determination"].value: row["version"].value for row in rows if "version" in row}
        for row in rows:
            if "criterion" not in row:
                continue  # a version's own row
            determination, criterion = row["determination"].value, row["criterion"].value
            mode, judge, version = row["mode"].value, row["judge"].value, versions.get(determination)
            said = (instant(row["at"].value), determination, row["outcome"].value)
            self.pairs.setdefault((criterion, row["trace"].value), Pair()).add(
                mode, judge, version, row["response"].value, said
            )
            self.words.add(
                criterion,
                row["response"].value,
                mode,
                (judge, version) if version else None,
                row["at"].value,
                determination,
                row["outcome"].value,
            )


def _batch(graphs: GraphService, record: GraphRef, number: int) -> GraphRef:
    return graphs.member(GraphKind.EVALUATION, f"{record.identifier}/judgments/{number}")


_KEPT: WeakKeyDictionary[GraphService, dict[str, Judged]] = WeakKeyDictionary()
"""Per graph service (one per store), per evaluation record: what was read."""
_KEPT_LOCK = threading.Lock()


@contextmanager
def judged(graphs: GraphService, evaluation_id: str) -> Iterator[Judged]:
    """The evaluation's determinations, up to date, held for the caller alone until the ``with`` block ends."""
    record = graphs.member(GraphKind.EVALUATION, evaluation_id)
    with _KEPT_LOCK:
        index = _KEPT.setdefault(graphs, {}).setdefault(record.iri.value, Judged())
    with index.lock:
        index._refresh(graphs, record)
        yield index


def warm(graphs: GraphService, stopping: threading.Event) -> None:
    """Read every evaluation once, until ``stopping`` is set: what ``caie serve`` runs in a background thread at
    startup. A failure is logged and left to the pages, which would meet it as they read."""
    from ..scope.records import list_evaluations  # the scope's listing imports nothing of the workspace

    try:
        for summary in list_evaluations(graphs):
            if stopping.is_set():
                return
            with judged(graphs, summary.id):
                pass
    except Exception as error:  # noqa: BLE001  # logged; a page reading the record reports it to its reader
        if not stopping.is_set():
            _log.warning("reading the evaluations' determinations at startup failed: %s", error)
