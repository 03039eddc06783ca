"""A report's failure-point map over real HTTP (issue 24 §6): the envelope's requirement tree with every criterion
once, under its requirement, with the outcome the report states for it and its weight.

What the map shows is checked against what other routes answer, never against the map's own code: the tree against
the envelope's JSON (``GET …/envelope``), each outcome and weight against the report's JSON standings
(``GET …/reports/{n}``), the report's named failed and untested criteria against ``/sparql``.

On the bed-nets run (tests/reports/test_reports_api.py: R1 hanging 3 and washing 2, R2 where 1; washing failed,
where passed, hanging untested) and on the worked example (requirements refining others, an out-of-scope criterion,
two criteria attested cannot tell).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

from pyoxigraph import Quad

from ..conftest import EMBEDDED_ONLY, Service, restore
from .test_reports_api import BODY, ID

pytestmark = EMBEDDED_ONLY
SHOWN = {"passed": "pass", "failed": "fail", "cantTell": "cannot tell", "untested": "untested"}
"""The word the map shows for each outcome the report's JSON names."""
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Tile:
    """A criterion as the map shows it: the requirements it sits under (outermost first), its class and text."""

    requirements: tuple[str, ...]
    classes: str
    text: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)

    @property
    def words(self) -> str:
        return " ".join(" ".join(self.text).split())


class MapPage(HTMLParser):
    """The map's requirements (each with the requirements it sits under) and criterion tiles, by identifier; a
    tile's text as a screen reader reads it (without what is ``aria-hidden``, the outcome's sign)."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.stack: list[tuple[str, str | None, str | None, bool]] = []  # (tag, requirement id, tile id, hidden)
        self.requirements: dict[str, tuple[str, ...]] = {}
        self.tiles: dict[str, Tile] = {}
        self.repeated: list[str] = []
        self.feed(html)

    def _under(self) -> tuple[str, ...]:
        return tuple(requirement for _, requirement, _, _ in self.stack if requirement)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return
        found = dict(attrs)
        classes, ident = (found.get("class") or "").split(), found.get("id") or ""
        requirement = tile = None
        if tag == "li" and "requirement" in classes:
            requirement = ident.removeprefix("requirement-")
            self.requirements[requirement] = self._under()
        if tag == "li" and "tile" in classes:
            tile = ident.removeprefix("criterion-")
            if tile in self.tiles:
                self.repeated.append(tile)
            self.tiles[tile] = Tile(self._under(), " ".join(classes))
        inside = next((t for _, _, t, _ in reversed(self.stack) if t), None)
        if tag == "a" and inside and found.get("href"):
            self.tiles[inside].links.append(found["href"] or "")
        self.stack.append((tag, requirement, tile, found.get("aria-hidden") == "true"))

    def handle_endtag(self, tag: str) -> None:
        while self.stack and self.stack.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        tile = next((t for _, _, t, _ in reversed(self.stack) if t), None)
        if tile and not any(hidden for *_, hidden in self.stack):
            self.tiles[tile].text.append(data)


def _map(service: Service, evaluation: str, number: int) -> MapPage:
    page = service.http.get(f"/evaluations/{evaluation}/reports/{number}/failure-map", headers={"Accept": "text/html"})
    assert page.status_code == 200, page.text
    assert page.headers["content-type"].startswith("text/html")
    return MapPage(page.text)


def _check_against_routes(service: Service, evaluation: str, number: int) -> tuple[MapPage, dict, dict]:
    """The map of report ``number`` has every criterion of the report's envelope once, under its requirement and
    the requirements that requirement refines, with the report's outcome and weight; the map, the envelope's JSON
    and the report's JSON are returned."""
    shown = _map(service, evaluation, number)
    report = service.http.get(
        f"/evaluations/{evaluation}/reports/{number}", headers={"Accept": "application/json"}
    ).json()
    envelope = service.http.get(f"/evaluations/{evaluation}/envelope", headers={"Accept": "application/json"}).json()
    assert envelope["@id"] == report["envelope"]
    parents = {r["id"]: r.get("parent") for r in envelope["requirements"]}

    def chain(requirement: str) -> tuple[str, ...]:
        return (*chain(parents[requirement]), requirement) if parents[requirement] else (requirement,)

    assert shown.repeated == []
    assert {r: (*under, r) for r, under in shown.requirements.items()} == {r: chain(r) for r in parents}
    standings = {st["identifier"]: st for st in report["standings"]}
    assert sorted(shown.tiles) == sorted(c["id"] for c in envelope["criteria"])
    for criterion in envelope["criteria"]:
        tile = shown.tiles[criterion["id"]]
        assert tile.requirements == chain(criterion["requirement"]), criterion["id"]
        if criterion["inScope"]:
            standing = standings[criterion["id"]]
            word, weight = SHOWN[standing["outcome"]], standing["weight"]
            assert f"tile-{standing['outcome']}" in tile.classes.split(), (criterion["id"], tile.classes)
        else:
            assert criterion["id"] not in standings  # the report counts it nowhere
            word, weight = "not applicable", format(criterion["weight"], "g")
        assert tile.words.startswith(f"{word} {criterion['id']} weight {weight} "), (criterion["id"], tile.words)
        assert criterion["statement"] in tile.words
    return shown, envelope, report


def test_the_map_shows_every_criterion_once_under_its_requirement_with_the_reports_outcome_and_weight(
    attested: Service,
) -> None:
    made = attested.http.post(f"/evaluations/{ID}/reports", json=BODY, headers=attested.auth("theo"))
    assert made.status_code == 201, made.text
    shown, _, report = _check_against_routes(attested, ID, 1)
    # worked by hand (tests/reports/test_reports_api.py): washing failed, where passed, hanging untested
    assert {c: t.words.split(" weight")[0] for c, t in shown.tiles.items()} == {
        "washing": "fail washing",
        "where": "pass where",
        "hanging": "untested hanging",
    }
    assert [
        (t.requirements, t.words.split(" weight ")[1].split()[0])
        for t in (shown.tiles["hanging"], shown.tiles["washing"], shown.tiles["where"])
    ] == [(("R1",), "3"), (("R1",), "2"), (("R2",), "1")]
    # the criteria the report names as failed and untested, as /sparql reads them from the report's graph
    named = attested.http.get(
        "/sparql",
        headers={"Accept": "application/sparql-results+json"},
        params={
            "query": f"""
        PREFIX epo: <https://w3id.org/ob-caie/epo/>
        PREFIX dcterms: <http://purl.org/dc/terms/>
        SELECT ?id ?role WHERE {{ GRAPH <{report['report']}> {{
          {{ <{report['report']}> epo:failedCriterion ?c BIND("fail" AS ?role) }}
          UNION {{ <{report['report']}> epo:hasGap/epo:gapCriterion ?c BIND("untested" AS ?role) }}
          ?c dcterms:identifier ?id }} }}"""
        },
    ).json()["results"]["bindings"]
    assert {(row["id"]["value"], row["role"]["value"]) for row in named} == {
        ("washing", "fail"),
        ("hanging", "untested"),
    }
    assert all(shown.tiles[row["id"]["value"]].words.startswith(row["role"]["value"]) for row in named)

    page = attested.http.get(f"/evaluations/{ID}/reports/1/page")
    assert f'href="/evaluations/{ID}/reports/1/failure-map"' in page.text  # the report page links its map
    missing = attested.http.get(f"/evaluations/{ID}/reports/9/failure-map", headers={"Accept": "text/html"})
    assert missing.status_code == 404 and "no report 9" in missing.text


def test_the_worked_examples_map_nests_refinements_and_marks_cannot_tell_and_not_applicable(
    service: Service, worked_example_quads: list[Quad]
) -> None:
    restore(service.store, worked_example_quads)
    shown, envelope, report = _check_against_routes(service, "measles", 1)
    refining = {r["id"]: r["parent"] for r in envelope["requirements"] if r.get("parent")}
    assert refining and all(shown.requirements[r] == (parent,) for r, parent in refining.items())
    out_of_scope = [c["id"] for c in envelope["criteria"] if not c["inScope"]]
    assert out_of_scope and all(shown.tiles[c].words.startswith("not applicable") for c in out_of_scope)
    cannot_tell = sorted(st["identifier"] for st in report["standings"] if st["outcome"] == "cantTell")
    assert cannot_tell == ["c08", "c10"]  # the worked example's limitations name them
    assert sorted(c for c, t in shown.tiles.items() if t.words.startswith("cannot tell")) == cannot_tell
    # each applicable criterion leads to its evidence in the report's run, the out-of-scope one to its definition
    for criterion, tile in shown.tiles.items():
        if criterion in out_of_scope:
            assert tile.links == [f"/evaluations/measles/envelope/v1/criteria/{criterion}"]
            continue
        evidence, definition = tile.links
        assert evidence == f"/evaluations/measles/workspace/criteria/{criterion}?run=1"
        assert definition == f"/evaluations/measles/envelope/v1/criteria/{criterion}"
        page = service.http.get(evidence, headers={"Accept": "text/html"})
        assert page.status_code == 200 and f"Criterion {criterion}" in page.text, (evidence, page.status_code)


def test_a_report_made_before_standings_shows_only_its_named_failed_and_untested_criteria(attested: Service) -> None:
    """A report graph without ``epo:criterionStanding`` (as reports were made before issue 22) names only its
    failed criteria and gaps: the map shows those, and says the others' outcomes are not stated."""
    made = attested.http.post(f"/evaluations/{ID}/reports", json=BODY, headers=attested.auth("theo"))
    assert made.status_code == 201, made.text
    attested.store.run_update(f"""
        PREFIX epo: <https://w3id.org/ob-caie/epo/>
        DELETE {{ GRAPH ?g {{ ?r epo:criterionStanding ?s . ?s ?p ?o }} }}
        WHERE {{ GRAPH ?g {{ ?r epo:criterionStanding ?s . ?s ?p ?o }} VALUES ?g {{ <{made.json()['report']}> }} }}""")
    assert (
        attested.http.get(f"/evaluations/{ID}/reports/1", headers={"Accept": "application/json"}).json()["standings"]
        == []
    )
    shown = _map(attested, ID, 1)
    assert {c: t.words.split(" weight")[0] for c, t in shown.tiles.items()} == {
        "washing": "fail washing",
        "where": "not stated where",
        "hanging": "untested hanging",
    }
