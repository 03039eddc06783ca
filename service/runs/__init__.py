"""Step 4, talking to the system under test: target versions and adapters, the demonstration chatbot,
and the executor that runs probes as conversations. Writing runs into the record builds on this."""

from .demo import DELIBERATE_FAILURES, DemoChatbot, demo_app
from .executor import execute
from .model import (Boundary, CaseTrace, Conversation, ExecutionError, ExecutionSettings, Exchange, TargetVersion,
                    TokenUsage, Turn)
from .targets import HttpJson, MissingCredential, OpenAICompatible, Target, TargetFailure

__all__ = ["DELIBERATE_FAILURES", "Boundary", "CaseTrace", "Conversation", "DemoChatbot", "ExecutionError",
           "ExecutionSettings", "Exchange", "HttpJson", "MissingCredential", "OpenAICompatible", "Target",
           "TargetFailure", "TargetVersion", "TokenUsage", "Turn", "demo_app", "execute"]
