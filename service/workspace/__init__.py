"""The experts' workspace (issue 24): what its pages read, above every lifecycle step (docs/workspace.md).

Each evaluation's stage and what waits for whom (:mod:`.records`), the annotator's queue and one case seen blind
(:mod:`.annotation`), the evidence for attesting one criterion (:mod:`.evidence`). The functions take plain
parameters (an agent's name, roles, the languages they read, their expertise), so they serve any sign-in; only
``service.api`` imports this package.
"""

from .annotation import annotation_queue, case_view
from .cases import reads
from .evidence import criterion_evidence
from .model import (
    CaseView,
    CriterionEvidence,
    CriterionOnCase,
    CriterionText,
    EvaluationOverview,
    Queue,
    QueueItem,
    ReferenceFact,
    Stage,
    Verdict,
    Waiting,
    WaitingItem,
)
from .records import evaluations_for, standings, waiting_for

__all__ = [
    "CaseView",
    "CriterionEvidence",
    "CriterionOnCase",
    "CriterionText",
    "EvaluationOverview",
    "Queue",
    "QueueItem",
    "ReferenceFact",
    "Stage",
    "Verdict",
    "Waiting",
    "WaitingItem",
    "annotation_queue",
    "case_view",
    "criterion_evidence",
    "evaluations_for",
    "reads",
    "standings",
    "waiting_for",
]
