"""What the interop tests share: caie-spec's files, read at ../shared (never copied here), and an import over HTTP."""

from __future__ import annotations

from pathlib import Path

import httpx

from ..conftest import Service, shared_path

CAIE_SPEC = ("interop", "caie-spec")
MEASLES = (*CAIE_SPEC, "explorer", "data", "measles-evaluation.ttl")
TURTLE = "text/turtle"


def spec_file(*parts: str) -> Path:
    """A caie-spec file under ../shared/interop/caie-spec, or skip saying it is absent."""
    return shared_path(*CAIE_SPEC, *parts)


def post_record(service: Service, body: bytes, evaluation_id: str, agent: str = "theo") -> httpx.Response:
    return service.http.post(
        "/evaluations/imports",
        params={"id": evaluation_id},
        content=body,
        headers={"Content-Type": TURTLE, **service.auth(agent)},
    )
