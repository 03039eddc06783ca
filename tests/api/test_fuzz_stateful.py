"""Stateful fuzzing (issue 23, "a fuzzing suite"): schemathesis chains operations by the links between them.

Where ``test_openapi.py`` sends each operation alone, here schemathesis's stateful phase builds sequences by the
document's OpenAPI links: from a listing to each operation on an item it lists (an evaluation's ``id``, a plan's,
run's or report's ``number``, a graph's ``kind`` and ``identifier``), and from a plan just made to the operations
on it, so it sends what a client does after a read or a create, with its own hostile data at each step.
schemathesis's own inference guesses links from response schemas the document does not give (it expected
``$response.body#/identifier`` at the top of ``/graphs``), and followed none; the links here say where the
listings hold what, and are added to the document this test hands to schemathesis. Every check is on (``--checks all``:
no 5xx, answers as documented, a created resource readable at once, a deleted one gone). Over the worked example
(envelope signed off, plan 1 approved), so the chains start from a real record. One backend: what is checked
is the HTTP contract; the store's transport is covered elsewhere.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import Quad

from ..conftest import Service, restore
from .test_openapi import passing_schemathesis

pytestmark = pytest.mark.parametrize("store", ["embedded"], indirect=True)

SEED = 23  # fixed: the same chains every run; each failure prints the curl commands that repeat it
EXAMPLES = 12
"""Scenarios (chains) of the stateful phase; with the few steps below, about 15 s on a busy machine."""


LISTINGS = {
    "/evaluations": {"evaluation_id": "#/evaluations/0/id"},
    "/evaluations/{evaluation_id}/plans": {"number": "#/plans/0/number"},
    "/evaluations/{evaluation_id}/runs": {"number": "#/runs/0/number"},
    "/evaluations/{evaluation_id}/reports": {"number": "#/reports/0/number"},
    "/graphs": {"kind": "#/graphs/0/kind", "identifier": "#/graphs/0/identifier"},
}
"""A listing's path, and where in its answer the first item's identifying parameters are."""
CREATED = {
    ("post", "/evaluations/{evaluation_id}/plans"): ("/evaluations/{evaluation_id}/plans", {"number": "#/number"})
}
"""A create, the listing whose items it makes, and where in its answer the new item's parameters are."""


def _path_names(template: str) -> set[str]:
    return set(re.findall(r"\{(\w+)\}", template))


def with_links(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with links from each listing (and create) to every operation on one of its items: the operations
    under the listing's path that take the item's parameters and no others but the listing's own."""
    sources = [("get", path, "200", path, found) for path, found in LISTINGS.items()]
    sources += [(method, path, "201", listing, found) for (method, path), (listing, found) in CREATED.items()]
    for method, path, status, listing, found in sources:
        given = _path_names(listing)
        links = {}
        for template, item in spec["paths"].items():
            needed = _path_names(template)
            if not set(found) <= needed or not needed <= given | set(found):
                continue
            if not template.startswith(listing + "/{"):
                continue
            for operation in item.values():
                parameters = {name: f"$response.body{pointer}" for name, pointer in found.items()}
                parameters |= {name: f"$request.path.{name}" for name in needed - set(found)}
                links[f"To{operation['operationId']}"] = {
                    "operationId": operation["operationId"],
                    "parameters": parameters,
                }
        spec["paths"][path][method]["responses"][status]["links"] = links
    return spec


def test_the_links_reach_the_operations_on_each_listed_item(service: Service) -> None:
    linked = with_links(service.http.get("/openapi.json").json())
    paths = linked["paths"]
    evaluation = {link["operationId"] for link in paths["/evaluations"]["get"]["responses"]["200"]["links"].values()}
    on_plan = {
        link["operationId"]
        for link in paths["/evaluations/{evaluation_id}/plans"]["get"]["responses"]["200"]["links"].values()
    }
    assert paths["/evaluations/{evaluation_id}"]["get"]["operationId"] in evaluation
    assert paths["/evaluations/{evaluation_id}/plans/{number}/approval"]["post"]["operationId"] in on_plan
    assert not on_plan & evaluation  # a plan's number is not an evaluation's operation parameter


def test_schemathesis_stateful_chains_find_no_failure(
    service: Service, worked_example_quads: list[Quad], tmp_path: Path
) -> None:
    restore(service.store, worked_example_quads)
    document = tmp_path / "openapi.json"
    document.write_text(json.dumps(with_links(service.http.get("/openapi.json").json())))
    output = passing_schemathesis(
        service, str(document), "--url", service.url, "--phases", "stateful", examples=EXAMPLES, seed=SEED
    )
    covered = re.search(r"API Links:\s+(\d+) covered", output)
    assert covered and int(covered[1]) >= 10, output[-20_000:]  # the chains followed the links, not only single calls
