"""The worked example served (``example``, the workspace tests' fixture, shared rather than copied): its report's
presentation is what an auditor of the example checks."""

from __future__ import annotations

from ..workspace.conftest import example

__all__ = ["example"]
