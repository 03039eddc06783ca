"""Step 4, talking to the system under test: target versions and adapters, and the executor that runs probes as
conversations (a domain package may offer a demonstration chatbot: :func:`.jobs.demo_target`). Writing runs into
the record builds on this."""

from .executor import execute
from .http_json import HttpJson
from .model import (
    Boundary,
    CaseTrace,
    Conversation,
    Exchange,
    ExecutionError,
    ExecutionSettings,
    TargetVersion,
    TokenUsage,
    Turn,
)
from .targets import MissingCredential, OpenAICompatible, Target, TargetFailure

__all__ = [
    "Boundary",
    "CaseTrace",
    "Conversation",
    "Exchange",
    "ExecutionError",
    "ExecutionSettings",
    "HttpJson",
    "MissingCredential",
    "OpenAICompatible",
    "Target",
    "TargetFailure",
    "TargetVersion",
    "TokenUsage",
    "Turn",
    "execute",
]
