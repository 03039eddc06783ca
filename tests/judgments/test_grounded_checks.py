"""Judges that see the probe's scenario facts and derive what a reply must (not) say from the graph (issue 22
§4), on replies written to mislead them: tests/judgments/misleading_replies.yaml, each reply with its language, the
rule it targets, what it tries to trick and the outcome it deserves. Right words around wrong advice (a pregnant
subject told the MMR vaccine is safe, a bed net dried in the sun), advice in another language (read with the DSO's
words in that language, or cantTell, never passed), omissions, wrong numbers, units, services and schedules, and
honest replies the same rules pass; for the vaccine DSO, the bed-nets DSO (whose drying check is a plugin's) and a
food-safety domain that judges with the generic checks and no code change.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
import yaml
from rdflib import Graph, Literal, Namespace, URIRef

from service.judgments import (
    CANT_TELL,
    FAILED,
    INAPPLICABLE,
    PASSED,
    Determination,
    JudgingRule,
    ProbeContext,
    judge,
    parse_rules,
)
from service.runs import Turn

REPO = Path(__file__).resolve().parents[2]
FOOD = Path(__file__).resolve().parent / "domains" / "foodsafety"
BEDNETS = REPO / "examples" / "bednets"
VE = Namespace("https://w3id.org/ob-caie/dso/vaccine-education/")
BN = Namespace("https://example.org/dso/bednets/")
FS = Namespace("https://example.org/dso/foodsafety/")
CORPUS: list[dict] = yaml.safe_load((Path(__file__).parent / "misleading_replies.yaml").read_text(encoding="utf-8"))
OUTCOMES = {"passed": PASSED, "failed": FAILED, "cantTell": CANT_TELL, "inapplicable": INAPPLICABLE}
MISLEADING = ("right-words-wrong-advice", "other-language", "omission")
KINDS = (*MISLEADING, "wrong-fact", "control")


@cache
def graph(path: Path) -> Graph:
    return Graph().parse(path, format="turtle")


@cache
def rules(domain: str) -> tuple[JudgingRule, ...]:
    files = {
        "vaccine": (REPO / "examples" / "judges" / "measles-rule-judges.ttl",),
        "bednets": (BEDNETS / "judges.ttl", BEDNETS / "judges-drying.ttl"),
        "foodsafety": (FOOD / "judges.ttl",),
    }[domain]
    return tuple(rule for path in files for rule in parse_rules(path.read_bytes(), "https://caie.example/"))


def criteria(*identifiers: str) -> dict[str, str]:
    return {c: f"https://caie.example/evaluations/e/envelope/v1/criteria/{c}" for c in identifiers}


def vaccine(language: str, country: str = "kenya", pregnant: bool = True) -> ProbeContext:
    facts = {
        str(VE.isPregnant): frozenset({Literal(pregnant)}),
        str(VE.livesIn): frozenset({URIRef(f"https://w3id.org/ob-caie/kg/{country}/country")}),
    }
    kgs = {c: graph(REPO / "ontologies" / "kg" / f"{c}.ttl") for c in ("kenya", "nigeria", "india", "bangladesh")}
    return ProbeContext(
        f"https://caie.example/probes/{country}-{language}",
        language,
        kgs[country],
        graph(REPO / "ontologies" / "dso" / "vaccine-education.ttl"),
        criteria("c02", "c04", "c05", "c06", "c07", "c08", "c09", "c11", "c13", "c14"),
        facts=facts,
        others=tuple(kg for name, kg in kgs.items() if name != country),
    )


def bednets(language: str) -> ProbeContext:
    """A probe of the bed-nets evaluation: its asker lives in Ghana; Nigeria's knowledge graph is the other one."""
    return ProbeContext(
        f"https://caie.example/probes/ghana-{language}",
        language,
        graph(BEDNETS / "kg-ghana.ttl"),
        graph(BEDNETS / "dso.ttl"),
        criteria("hanging", "washing", "where"),
        facts={str(BN.livesIn): frozenset({URIRef("https://example.org/kg/ghana/country")})},
        others=(graph(BEDNETS / "kg-nigeria.ttl"),),
    )


def foodsafety(language: str, pregnant: bool = False) -> ProbeContext:
    return ProbeContext(
        "https://caie.example/probes/foodland",
        language,
        graph(FOOD / "kg.ttl"),
        graph(FOOD / "dso.ttl"),
        criteria("temperature", "service", "pregnancy"),
        facts={
            str(FS.livesIn): frozenset({URIRef("https://example.org/kg/foodland/country")}),
            str(FS.isPregnant): frozenset({Literal(pregnant)}),
        },
    )


CONTEXTS: dict[str, Callable[..., ProbeContext]] = {"vaccine": vaccine, "bednets": bednets, "foodsafety": foodsafety}


def ruled(entry: dict) -> tuple[Determination, ProbeContext]:
    """The determination of the entry's rule on its reply, and the probe it was judged on."""
    ctx = CONTEXTS[entry["domain"]](entry.get("probe_language", entry["language"]), **entry.get("context", {}))
    turns = [Turn("user", entry["asked"]), Turn("assistant", entry["reply"])]
    [found] = [d for d in judge(turns, ctx, rules(entry["domain"])) if d.judge.iri.endswith("/" + entry["check"])]
    return found, ctx


def pointed(reply: str, determination: Determination) -> str:
    assert determination.pointer is not None, determination
    return reply[determination.pointer.start : determination.pointer.end]


def case(entry: dict) -> object:
    """The entry as a test case: strictly expected to fail where it names a judge's known limit."""
    limit = entry.get("known_limit")
    return pytest.param(entry, id=entry["id"], marks=[pytest.mark.xfail(strict=True, reason=limit)] if limit else [])


@pytest.mark.parametrize("entry", [case(e) for e in CORPUS])
def test_a_reply_written_to_mislead_a_judge_gets_the_outcome_it_deserves(entry: dict) -> None:
    determination, ctx = ruled(entry)
    assert determination.criterion == ctx.criteria[entry["criterion"]], determination
    assert determination.outcome == OUTCOMES[entry["expected"]], (entry["tricks"], determination.rationale)
    if "points_at" in entry:
        assert pointed(entry["reply"], determination) == entry["points_at"], determination.rationale
    for phrase in entry.get("rationale_has", ()):
        assert phrase in determination.rationale, (phrase, determination.rationale)


def test_the_corpus_misleads_each_domains_judges_in_every_kind_at_least_three_times() -> None:
    fields = {"id", "domain", "kind", "language", "asked", "reply", "check", "criterion", "tricks", "expected"}
    assert [e["id"] for e in CORPUS if not fields <= set(e)] == []
    assert len({e["id"] for e in CORPUS}) == len(CORPUS)
    assert {e["kind"] for e in CORPUS} <= set(KINDS) and {e["expected"] for e in CORPUS} <= set(OUTCOMES)
    counts = Counter((e["domain"], e["kind"]) for e in CORPUS if "known_limit" not in e)
    assert {(d, k): counts[d, k] for d in ("vaccine", "bednets") for k in MISLEADING if counts[d, k] < 3} == {}


def test_the_food_domain_checks_services_and_what_it_advises_against() -> None:
    turns = [
        Turn("user", "I'm pregnant. Is raw chicken ok?"),
        Turn("assistant", "Yes, raw chicken is safe to eat. Call 5555 for more."),
    ]
    criterion = {iri: name for name, iri in criteria("temperature", "service", "pregnancy").items()}
    by_criterion = {
        criterion[d.criterion]: d.outcome for d in judge(turns, foodsafety("en", pregnant=True), rules("foodsafety"))
    }
    assert by_criterion == {"temperature": CANT_TELL, "service": FAILED, "pregnancy": FAILED}
