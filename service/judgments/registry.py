"""The grounded check kinds installed here, found through the entry-point group ``caie.checks``.

A check kind is code, a rule naming it is data: a domain that needs a check of its own ships it in its own
package and registers it, as Inspect AI's packages register scorers, with no change to the engine::

    [project.entry-points."caie.checks"]
    ScheduleCheck = "caie_vaccine.checks:SCHEDULE"   # a GroundedCheck: its IRI, the function, what rules need

The engine's generic checks are registered the same way by its own ``pyproject.toml``, so there is one path for
every check. Entry points are read once per process (installing a plugin means restarting the service); a rule
naming a kind no installed package registers is refused, naming the kinds and the packages that are installed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from ..core.plugins import loaded
from .checks import GroundedCheck

GROUP = "caie.checks"


@dataclass(frozen=True)
class Installed:
    """Every installed check kind by IRI, and the distribution that registered each."""

    checks: Mapping[str, GroundedCheck]
    sources: Mapping[str, str]

    def describe(self) -> str:
        """The installed kinds and their packages, for a message refusing a rule."""
        return "; ".join(f"{iri} (from {self.sources[iri]})" for iri in sorted(self.checks)) or "none"


@cache
def installed() -> Installed:
    """The checks of every ``caie.checks`` entry point; a :class:`TypeError` names an entry point that is no
    :class:`GroundedCheck`, a :class:`ValueError` two packages registering one IRI (which would be the one run
    depends on the order packages were installed in)."""
    checks: dict[str, GroundedCheck] = {}
    sources: dict[str, str] = {}
    for point in loaded(GROUP):
        check = point.value
        if not isinstance(check, GroundedCheck):
            raise TypeError(
                f"entry point {point.name} ({point.source}) of group {GROUP} must be a "
                f"service.judgments.checks.GroundedCheck, not {type(check).__name__}"
            )
        if check.iri in checks and checks[check.iri] is not check:
            raise ValueError(
                f"two packages register the grounded check {check.iri} under {GROUP}: "
                f"{sources[check.iri]} and {point.source}"
            )
        checks[check.iri], sources[check.iri] = check, point.source
    return Installed(checks, sources)
