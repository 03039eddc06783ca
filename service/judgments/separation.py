"""The separation rule of formal audits (issue 10 §6): testing and evaluating organizations are kept apart.

With ``CAIE_SEPARATION`` on (``Settings.separation``), the party that ran a run (the run's
``prov:wasAssociatedWith``) may not determine or attest on it, and an attester may not be a party that determined
on the criterion they attest. A party is an organization where both agents' credentials name one
(``Credential.organization``), else the agent alone: two agents of one organization are one party, an agent
without an organization is only itself. Each refusal is a 403 naming the rule. :mod:`.records` and
:mod:`.attestations` call it; with the rule off (the default) it checks nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..core.config import Credential, Settings
from ..core.errors import Forbidden
from ..core.graphs import GraphService
from ..runs.records import RunView

RULE = "the separation rule (CAIE_SEPARATION: testing and evaluating organizations are kept apart in formal audits)"


@dataclass(frozen=True)
class Separation:
    """Whether the rule is on, and the organization each configured agent (by agent IRI) acts for."""

    enabled: bool = False
    organizations: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, settings: Settings, graphs: GraphService) -> Separation:
        """The deployment's rule: ``settings.separation``, organizations from its credentials."""
        return cls(
            settings.separation,
            {graphs.agent_iri(c.agent): c.organization for c in settings.credentials.values() if c.organization},
        )

    def _shared_party(self, graphs: GraphService, credential: Credential, other: str) -> str | None:
        """How ``credential``'s holder and agent IRI ``other`` are one party (``None``: they are not)."""
        mine, theirs = credential.organization, self.organizations.get(other)
        if mine and theirs:
            return f"organization {mine!r}" if mine == theirs else None
        return f"agent {credential.agent!r}" if graphs.agent_iri(credential.agent) == other else None

    def require_apart_from_run(self, graphs: GraphService, run: RunView, credential: Credential, action: str) -> None:
        """403 when the rule is on and ``credential``'s party ran ``run``; ``action``: what was refused."""
        if not self.enabled:
            return
        party = self._shared_party(graphs, credential, run.started_by)
        if party is not None:
            raise Forbidden(f"{RULE}: {party} ran run {run.number} ({run.started_by}), so may not {action} on it")

    def require_apart_from_determiners(
        self, graphs: GraphService, credential: Credential, determiners: Iterable[str], criterion: str
    ) -> None:
        """403 when the rule is on and ``credential``'s party is among the judges who determined on ``criterion``."""
        if not self.enabled:
            return
        for judge in sorted(set(determiners)):
            party = self._shared_party(graphs, credential, judge)
            if party is not None:
                raise Forbidden(
                    f"{RULE}: {party} determined on {criterion} ({judge}), so may not attest it: "
                    "an attester is not one who determined"
                )


NO_SEPARATION = Separation()
"""The rule off: what callers that pass no rule get."""
