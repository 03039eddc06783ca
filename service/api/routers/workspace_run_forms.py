"""The operator's run forms as a browser sends them (text, blank for a default), and the REST routes' request bodies
made of them (:class:`..models_runs.RunBody`, :class:`..models_runs.ContinueBody`): the "Start a run" form, and the
Retry form, which continues a run or retries its errors with the run's own recorded target.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from ...runs.records import RunView

LABELS = {
    "plan": "Plan",
    "kind": "Target",
    "baseUrl": "Endpoint URL",
    "model": "Model",
    "system": "System name",
    "systemInstructions": "System instructions",
    "apiKeyEnv": "Key variable",
    "outsideBoundary": "Outside the boundary",
    "concurrency": "Conversations at once",
    "ratePerSecond": "Requests a second at most",
    "timeoutSeconds": "Timeout (seconds)",
    "retries": "Retries",
    "backoffSeconds": "Backoff (seconds)",
}
"""Each request field by the label its form control has, for naming what a refused form got wrong."""


class SettingsForm(BaseModel):
    """The execution settings as a form sends them: text, blank for the default."""

    concurrency: str = ""
    rate_per_second: str = ""
    timeout_seconds: str = ""
    retries: str = ""
    backoff_seconds: str = ""

    def body(self) -> dict[str, str]:
        sent = {
            "concurrency": self.concurrency,
            "ratePerSecond": self.rate_per_second,
            "timeoutSeconds": self.timeout_seconds,
            "retries": self.retries,
            "backoffSeconds": self.backoff_seconds,
        }
        return {name: value.strip() for name, value in sent.items() if value.strip()}


class StartForm(SettingsForm):
    """The "Start a run" form as sent."""

    plan: str = ""
    kind: str = "demo"
    base_url: str = ""
    model: str = ""
    system: str = ""
    system_instructions: str = ""
    api_key_env: str = ""
    outside_boundary: str = ""

    def body(self) -> dict[str, Any]:
        """The REST route's body: the demonstration chatbot takes no address, an endpoint its fields filled in."""
        target: dict[str, str] = {"kind": self.kind}
        if self.kind != "demo":
            given = {
                "baseUrl": self.base_url,
                "model": self.model,
                "system": self.system,
                "systemInstructions": self.system_instructions,
                "apiKeyEnv": self.api_key_env,
            }
            target |= {name: value.strip() for name, value in given.items() if value.strip()}
        out: dict[str, Any] = {"plan": self.plan.strip(), "target": target, "settings": super().body()}
        return out | ({"outsideBoundary": self.outside_boundary.strip()} if self.outside_boundary.strip() else {})


class ContinueForm(SettingsForm):
    """The Retry form as sent (to continue the run or to retry its errors): the target is the run's own, only where
    its key is read from is chosen."""

    api_key_env: str = ""


def run_target(view: RunView) -> dict[str, Any]:
    """The run's target as its recorded configuration states it."""
    target: dict[str, Any] = json.loads(view.configuration)  # the run's target as the service wrote it: an object
    return target


def continue_defaults(view: RunView) -> ContinueForm:
    """The Retry form filled in with the settings the run was started with."""
    recorded: Mapping[str, Any] = json.loads(view.settings)
    return ContinueForm(
        concurrency=str(recorded.get("concurrency", "")),
        retries=str(recorded.get("retries", "")),
        timeout_seconds=str(recorded.get("timeout_s", "")),
        backoff_seconds=str(recorded.get("backoff_s", "")),
        rate_per_second="" if recorded.get("rate_per_s") is None else str(recorded["rate_per_s"]),
    )


def continuation_body(view: RunView, form: ContinueForm) -> dict[str, Any]:
    """The continuation's body: the run's own target as its recorded configuration states it (so the same version,
    never one typed again), with the key variable and the settings from the form."""
    recorded = run_target(view)
    target: dict[str, Any] = {"kind": recorded["adapter"]}
    if recorded["adapter"] != "demo":
        target |= {
            "baseUrl": recorded["endpoint"],
            "model": recorded["model_release"],
            "system": recorded["system"],
            "parameters": recorded["parameters"],
        }
        if recorded.get("system_instructions"):
            target["systemInstructions"] = recorded["system_instructions"]
        if form.api_key_env.strip():
            target["apiKeyEnv"] = form.api_key_env.strip()
    return {"target": target, "settings": form.body()}
