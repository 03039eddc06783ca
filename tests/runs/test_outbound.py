"""Which systems a run or a model judge may call (issue 23 §4): a URL is compared with the deployment's allow-list as
parsed scheme, host, port and path segments, and a URL with user-info is refused. At 4c0fccf the check was a text
prefix, and ``http://127.0.0.1:8798@127.0.0.1:8799/v1`` passed an allow-list of ``http://127.0.0.1:8798``: the run
sent its 300 requests to port 8799."""

from __future__ import annotations

import pytest

from service.core.errors import Unprocessable
from service.core.outbound import refusal
from service.runs.jobs import TargetSpec, build_target
from service.runs.targets import OpenAICompatible

ALLOWED = ["http://127.0.0.1:8798", "https://api.example.org/v1"]


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1:8798@127.0.0.1:8799/v1", "user-info"),  # the host is 127.0.0.1:8799
        ("http://user:secret@127.0.0.1:8798/v1", "user-info"),
        ("http://127.0.0.1:87989/v1", "not a URL"),  # a port past 65535
        ("http://127.0.0.1:8799/v1", "none of the allowed"),
        ("http://127.0.0.10:8798/v1", "none of the allowed"),  # a text prefix of the allowed host
        ("https://api.example.org/v10/chat", "none of the allowed"),  # /v10 is not under /v1
        ("https://api.example.org.evil.example/v1", "none of the allowed"),
        ("http://api.example.org/v1", "none of the allowed"),  # another scheme, so another port
        ("file:///etc/passwd", "not an http or https URL"),
    ],
)
def test_a_url_outside_the_allow_list_is_refused_naming_why(url: str, why: str) -> None:
    assert why in (refusal(url, ALLOWED) or "allowed")
    with pytest.raises(Unprocessable, match="not among the targets"):
        build_target(TargetSpec("openai-compatible", url, "m"), ALLOWED)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8798/v1",
        "http://127.0.0.1:8798",
        "HTTP://127.0.0.1:8798/v1/chat",
        "https://api.example.org/v1",
        "https://api.example.org:443/v1/",
        "https://API.example.org/v1/chat/completions",
    ],
)
def test_a_url_under_an_allowed_prefix_is_called(url: str) -> None:
    assert refusal(url, ALLOWED) is None
    assert isinstance(build_target(TargetSpec("openai-compatible", url, "m"), ALLOWED), OpenAICompatible)


def test_a_key_is_read_only_from_a_variable_the_deployment_lists() -> None:
    """At 4c0fccf any variable could be named, and a model-judge call sent a planted SECRET_PW as a bearer token."""
    spec = TargetSpec("openai-compatible", "http://127.0.0.1:8798/v1", "m", api_key_env="SECRET_PW")
    with pytest.raises(Unprocessable, match="api_key_env 'SECRET_PW' is not among .*TARGET_KEY"):
        build_target(spec, ALLOWED, ["TARGET_KEY"])
    with pytest.raises(Unprocessable, match="none: set CAIE_KEY_ENVS"):
        build_target(spec, ALLOWED)
    listed = TargetSpec("openai-compatible", "http://127.0.0.1:8798/v1", "m", api_key_env="TARGET_KEY")
    assert isinstance(build_target(listed, ALLOWED, ["TARGET_KEY"]), OpenAICompatible)
