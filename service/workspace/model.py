"""What the experts' workspace shows, as typed values: each evaluation's stage in the lifecycle, what waits for
whom, the annotator's queue and one case as an annotator sees it, and the evidence for attesting one criterion.

IRIs are absolute strings, times ``xsd:dateTime`` lexical forms, outcomes EARL IRIs. Nothing here reads the store:
:mod:`.records`, :mod:`.annotation` and :mod:`.evidence` fill these (docs/workspace.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ..envelope.model import ApprovalRecord, Criterion, Envelope, EnvelopeStatus, Requirement
from ..judgments.agreement import HumanAgreement
from ..judgments.attestations import AttestationView


class Stage(Enum):
    """How far an evaluation's record has come (docs/workspace.md, "Stages"), in lifecycle order: each stage's
    condition holds of the record for the current envelope content, and the stage is the furthest that holds."""

    SCOPED = "scoped"
    ENVELOPE_DRAFTED = "envelope-drafted"
    ENVELOPE_ASSESSED = "envelope-assessed"
    ENVELOPE_SIGNED_OFF = "envelope-signed-off"
    PLANNED = "planned"
    PLAN_APPROVED = "plan-approved"
    RUNNING = "running"
    RAN = "ran"
    JUDGED = "judged"
    ATTESTED = "attested"
    REPORTED = "reported"
    SIGNED_OFF = "signed-off"
    ACCEPTED = "accepted"

    @property
    def label(self) -> str:
        return STAGE_LABELS[self]

    @property
    def step(self) -> int:
        """The lifecycle step (DESIGN.md's table, 1 to 6) the stage belongs to."""
        return STAGE_STEPS[self]


STAGE_LABELS = {
    Stage.SCOPED: "scoped",
    Stage.ENVELOPE_DRAFTED: "envelope drafted",
    Stage.ENVELOPE_ASSESSED: "envelope assessed",
    Stage.ENVELOPE_SIGNED_OFF: "envelope signed off",
    Stage.PLANNED: "plan made",
    Stage.PLAN_APPROVED: "plan approved",
    Stage.RUNNING: "running",
    Stage.RAN: "run complete",
    Stage.JUDGED: "judged",
    Stage.ATTESTED: "attested",
    Stage.REPORTED: "reported",
    Stage.SIGNED_OFF: "report signed off",
    Stage.ACCEPTED: "accepted",
}
STAGE_STEPS = {
    Stage.SCOPED: 1,
    Stage.ENVELOPE_DRAFTED: 2,
    Stage.ENVELOPE_ASSESSED: 2,
    Stage.ENVELOPE_SIGNED_OFF: 2,
    Stage.PLANNED: 3,
    Stage.PLAN_APPROVED: 3,
    Stage.RUNNING: 4,
    Stage.RAN: 4,
    Stage.JUDGED: 5,
    Stage.ATTESTED: 5,
    Stage.REPORTED: 6,
    Stage.SIGNED_OFF: 6,
    Stage.ACCEPTED: 6,
}


class Waiting(Enum):
    """What can wait for a person (docs/workspace.md, "What waits for whom"), with the role that acts on it."""

    DSO_APPROPRIATENESS = "dso-appropriateness"
    RELEVANCE = "relevance"
    ENVELOPE_APPROPRIATENESS = "envelope-appropriateness"
    ENVELOPE_SIGN_OFF = "envelope-sign-off"
    PLAN_APPROVAL = "plan-approval"
    ATTESTATION = "attestation"
    REPORT_SIGN_OFF = "report-sign-off"
    ANNOTATION = "annotation"
    RUN_START = "run-start"
    RUN_ERRORS = "run-errors"
    RUN_IN_PROGRESS = "run-in-progress"
    REPORT_ACCEPTANCE = "report-acceptance"


@dataclass(frozen=True)
class WaitingItem:
    """One thing waiting for a person of ``role``: ``item`` is the IRI of what to act on (a criterion, the
    envelope, a plan, a run, a report, the DSO), ``path`` the workspace page that acts on it."""

    kind: Waiting
    role: str
    evaluation: str
    """The evaluation's identifier."""
    item: str
    label: str
    path: str
    count: int = 1
    """How many things the item stands for (the cases of an annotation item; 1 otherwise)."""


@dataclass(frozen=True)
class EvaluationOverview:
    """An evaluation as the home page lists it: its stage, the numbers of the envelope version, plan, run and
    report the stage rests on (``None`` before each exists), and how many things wait of each kind, for anyone."""

    evaluation: str
    identifier: str
    title: str
    stage: Stage
    envelope_version: int | None
    plan: int | None
    run: int | None
    report: int | None
    waiting: tuple[tuple[Waiting, int], ...]


@dataclass(frozen=True)
class QueueItem:
    """A case waiting in an annotator's queue: one conversation of a run and the criteria still to determine on it."""

    run: int
    probe: int
    probe_iri: str
    case: str
    language: str
    """The BCP 47 tag the case's text is in (``und`` when the record does not say)."""
    criteria: tuple[str, ...]
    """The criteria (IRIs) the agent is to determine on the case."""
    assigned: bool
    """The plan assigned the probe to the agent."""
    matches_expertise: bool
    """One of the criteria bears on a concept (or dimension, category) in the agent's expertise."""
    path: str


@dataclass(frozen=True)
class Queue:
    """An annotator's queue: the first ``items`` in order, how many cases wait in all, and the agent's progress:
    ``determined`` of ``total`` (criterion, case) pairs in scope for them (their assignment when the plan assigns
    probes, else what they determined and what waits for them)."""

    items: tuple[QueueItem, ...]
    waiting: int
    determined: int
    total: int


@dataclass(frozen=True)
class Verdict:
    """A determination as a reader of the evidence sees it."""

    determination: str
    criterion: str
    turn: int
    outcome: str
    mode: str
    judge: str
    judge_kind: str
    """``person``, ``rule`` or ``model`` (the determination's judging method)."""
    judge_name: str
    version: str | None
    rationale: str
    pointer: tuple[int, int] | None
    at: str


@dataclass(frozen=True)
class Turn:
    index: int
    text: str | None
    response: str | None
    reply: str | None


@dataclass(frozen=True)
class CriterionText:
    """A criterion as a person judging or attesting reads it."""

    iri: str
    identifier: str
    statement: str
    expected: str | None
    weight: str | None
    dimension: str
    category: str
    concepts: tuple[str, ...]

    @property
    def topics(self) -> frozenset[str]:
        """What an annotator's expertise is matched with: its concepts, dimension and category (as a plan's
        expertise matching does)."""
        return frozenset(self.concepts) | {self.dimension, self.category}


@dataclass(frozen=True)
class CriterionOnCase:
    """One criterion a case bears on, blind by default: ``others`` (every other person's and judge's verdicts) is
    ``None`` until the agent has determined the criterion on the case (``own`` non-empty)."""

    criterion: CriterionText
    own: tuple[Verdict, ...]
    others: tuple[Verdict, ...] | None

    @property
    def determined(self) -> bool:
        return bool(self.own)


@dataclass(frozen=True)
class CaseView:
    """One case of a run as an annotator reads it: the conversation and each criterion it bears on."""

    evaluation: str
    run: int
    probe: int
    probe_iri: str
    case: str
    trace: str | None
    """``None``: the case ended in an execution error and is not judged."""
    language: str
    turns: tuple[Turn, ...]
    criteria: tuple[CriterionOnCase, ...]

    @property
    def determined(self) -> bool:
        """The agent determined every criterion the case bears on."""
        return all(c.determined for c in self.criteria)


@dataclass(frozen=True)
class ReferenceFact:
    """One statement of the grading reference about a concept the criterion bears on (docs/domain.md)."""

    concept: str
    graph: str
    property: str
    property_label: str | None
    value: str
    value_label: str | None


@dataclass(frozen=True)
class Conversation:
    """A conversation bearing on the criterion, with its turns and each determiner's latest verdict on the
    criterion on each of its replies."""

    probe: int
    case: str
    language: str
    turns: tuple[Turn, ...]
    verdicts: tuple[Verdict, ...]


@dataclass(frozen=True)
class CriterionEvidence:
    """What a domain expert reads to attest one criterion for one run (docs/workspace.md, "Evidence")."""

    evaluation: str
    run: int
    criterion: CriterionText
    reference: tuple[ReferenceFact, ...]
    conversations: tuple[Conversation, ...]
    """One page of the run's answered conversations that bear on the criterion, by probe number."""
    total: int
    """How many answered conversations bear on it in all."""
    outcomes: tuple[tuple[str, str, int], ...]
    """(``person``, ``automated`` or ``semi-automatic``, outcome, verdicts) over every conversation bearing on the
    criterion in the run: each determiner's latest verdict on each reply."""
    attestations: tuple[AttestationView, ...]
    """Every attestation of the criterion for the run, oldest first: the current one and what it superseded."""
    agreement: tuple[HumanAgreement, ...]
    """Each automated judge version's agreement with people on the criterion."""
    proposed: str | None = None
    """What the declared aggregation rule (:data:`service.judgments.attestations.AGGREGATION`) gives over the verdicts
    it counts, each determiner's latest on each reply: where an attestation starts (``earl:untested`` when it counts
    none; ``None`` without a verdict). An attestation records the rule's result over every determination, earlier
    words included."""

    @property
    def current(self) -> AttestationView | None:
        return next((a for a in reversed(self.attestations) if a.current), None)


@dataclass(frozen=True)
class CriterionState:
    """Where a criterion of a run stands for its domain expert (:mod:`.criteria`)."""

    criterion: CriterionText
    conversations: int
    """How many of the run's answered conversations bear on it."""
    outcomes: tuple[tuple[str, str, int], ...]
    """As :attr:`CriterionEvidence.outcomes`."""
    proposed: str | None
    """As :attr:`CriterionEvidence.proposed`."""
    current: AttestationView | None
    waiting: str | None
    """Why it waits for an attestation (none yet, or a determination since); ``None``: it does not."""


@dataclass(frozen=True)
class Assessed:
    """The assessments of one thing (the DSO, a criterion, the envelope): the latest of its present content
    (``None``: none yet) and how many others there are (earlier ones, or of other content)."""

    latest: ApprovalRecord | None
    others: int


@dataclass(frozen=True)
class RequirementNode:
    """A requirement of the envelope, each of its criteria with its IRI and relevance assessments, and the
    requirements refining it."""

    requirement: Requirement
    iri: str
    criteria: tuple[tuple[Criterion, str, Assessed], ...]
    refinements: tuple[RequirementNode, ...]


@dataclass(frozen=True)
class EnvelopeReview:
    """An evaluation's envelope as its experts review it (:mod:`.envelope_review`); without an envelope yet, the
    DSO's assessments alone."""

    evaluation: str
    dso: str
    dso_assessed: Assessed
    envelope: Envelope | None
    status: EnvelopeStatus | None
    """Where the envelope stands on its way to sign-off: the DSO's and the envelope's present assessments."""
    tree: tuple[RequirementNode, ...]
    appropriateness: Assessed
    sign_off: Assessed
    dso_changed: bool = False
    """Whether the DSO's present content is not the one the envelope's sign-off pinned (``False`` before it): then an
    assessment of it counts toward the next version's sign-off."""
