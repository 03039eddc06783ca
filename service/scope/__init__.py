"""Step 1 of the methodology: an evaluation's scope (test target and version boundary, users, operating
environment, use boundary, out-of-scope areas) over a DSO and its context knowledge graphs."""

from .model import Assumption, OperatingEnvironment, OutOfScope, Scope, TestTarget, UseBoundary, VersionBoundary

__all__ = ["Assumption", "OperatingEnvironment", "OutOfScope", "Scope", "TestTarget", "UseBoundary", "VersionBoundary"]
