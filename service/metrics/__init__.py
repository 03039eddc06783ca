"""Step 6, measures: coverage, the outcome distribution, pass rates with intervals, gaps, failures, execution
errors, traceability and drill-down, each read by a published query (docs/metrics.md)."""

from .model import (
    Coverage,
    ErrorCount,
    EvaluationMetrics,
    Failure,
    Gap,
    Interval,
    OutcomeDistribution,
    OutcomeShare,
    PassRate,
)
from .records import evaluation_metrics

__all__ = [
    "Coverage",
    "ErrorCount",
    "EvaluationMetrics",
    "Failure",
    "Gap",
    "Interval",
    "OutcomeDistribution",
    "OutcomeShare",
    "PassRate",
    "evaluation_metrics",
]
