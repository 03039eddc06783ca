"""Issue 27: a batch of automatic determinations signed by its judge's own key, over real HTTP. A model judge
(against tests/runs/chat_server.py) records its determinations as one batch; the batch's credential,
``{batch}/credential``, states the batch graph's digest (one signature however many determinations), signed by the
judge's ``did:key``; digitalbazaar's verifier (under Node, offline) accepts it, its digest is the record's, and a
determination changed in the store behind the service's back no longer matches the signed digest."""

from __future__ import annotations

from pathlib import Path

from pyoxigraph import NamedNode

from service.api import create_app
from service.core.digest import graph_digest

from ..conftest import EMBEDDED_ONLY, Service, settings_for
from ..plan.test_second_domain_plan import ID
from .test_attestation_credentials import EARL, PROV, node_verifies

pytestmark = EMBEDDED_ONLY
EPO = "https://w3id.org/ob-caie/epo/"


def test_a_judges_batch_is_signed_by_the_judge_as_its_digest(
    judged: Service, chat_server: str, app_slot, tmp_path: Path
) -> None:
    slot, _ = app_slot
    target = {"kind": "openai-compatible", "base_url": f"{chat_server}/v1", "model": "judge-ok"}
    with slot.serving(create_app(settings_for(judged.tokens, run_target_allowlist=[chat_server]), judged.store)):
        made = judged.http.post(
            f"/evaluations/{ID}/runs/1/model-judgments",
            json={"target": target, "criteria": ["hanging"]},
            headers=judged.auth("theo"),
        )
        assert made.status_code == 201, made.text
        determinations = made.json()["determinations"]
        batch = determinations[0].rsplit("/determinations/", 1)[0]
        number = batch.rsplit("/", 1)[1]
        credential = judged.http.get(f"/evaluations/{ID}/judgments/{number}/credential").json()
        listed = judged.http.get(f"/evaluations/{ID}/determinations").json()["determinations"]

    subject = credential["credentialSubject"]
    (judge,) = subject[PROV + "wasAttributedTo"]
    assert subject["id"] == batch and credential["id"] == f"{batch}/credential"
    assert {d["judge"] for d in listed if d["determination"] in determinations} == {judge["id"]}  # the model's
    assert len(determinations) > 1  # one credential for the batch, not one per determination
    ((signed_digest,),) = [[v["@value"] for v in subject[EPO + "graphDigest"]]]
    assert signed_digest == graph_digest(judged.store.graph_triples(NamedNode(batch)))  # the record's
    assert node_verifies(credential, tmp_path) == {"verified": True, "errors": [], "statuses": {}}

    # a determination's outcome changed in the store: the signed digest no longer matches the batch
    judged.store.run_update(
        f"DELETE {{ GRAPH <{batch}> {{ ?r <{EARL}outcome> ?o }} }} "
        f"INSERT {{ GRAPH <{batch}> {{ ?r <{EARL}outcome> <{EARL}cantTell> }} }} "
        f"WHERE {{ GRAPH <{batch}> {{ ?r <{EARL}outcome> ?o . FILTER(?o != <{EARL}cantTell>) }} }}"
    )
    assert signed_digest != graph_digest(judged.store.graph_triples(NamedNode(batch)))
