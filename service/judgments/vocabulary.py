"""The words rule judges read in a reply, from the DSO (docs/judgments.md "Vocabulary"): SKOS labels of concepts,
per language, that the DSO's ontology node names for each role (``epo:unitConcept``, ``epo:ordinalConcept``,
``epo:alternativeCue``, ``epo:rangeCue``, ``epo:rangeStartCue``, ``epo:listCue``, ``epo:withinCue``), and the
quantities a text states with them ("within 72 hours", "9 to 12 months", "saa 72", "9 and 18 months").

Only the labels in the reply's language (and untagged ones, such as "-") are read: a language the DSO has no
words for states nothing a check can read, and the check says cantTell.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import OWL, RDF
from rdflib.term import Identifier, Node

from ..core.namespaces import EPO
from ..plan.openings import normal_tag
from .expected import label_values, per_graphs


@lru_cache(maxsize=256)
def _primary(tag: str) -> str:
    return normal_tag(tag).split("-")[0]


def words(graphs: Sequence[Graph], concept: Node, tag: str | None) -> tuple[str, ...]:
    """``concept``'s labels in ``tag``'s language and untagged ones (every language's when ``tag`` is None),
    longest first so that a regular expression prefers "do not" to "not"."""
    primary = None if tag is None else _primary(tag)
    memo = per_graphs(graphs, _words_memo)
    if (concept, primary) not in memo:
        found = {
            str(value)
            for graph in graphs
            for value in label_values(graph, concept)
            if isinstance(value, Literal)
            and (primary is None or not value.language or _primary(value.language) == primary)
        }
        memo[(concept, primary)] = tuple(sorted(found, key=lambda word: (-len(word), word)))
    return memo[(concept, primary)]


def _words_memo(*_: Graph) -> dict[tuple[Node, str | None], tuple[str, ...]]:
    return {}


def alternation(items: Iterable[str]) -> str:
    """A regular expression matching any of ``items`` as whole words (spaces as any whitespace); a word that
    starts or ends with a letter or digit must not be part of a longer word."""
    return _alternation(tuple(items))


@lru_cache(maxsize=1024)
def _alternation(items: tuple[str, ...]) -> str:
    parts = []
    for item in items:
        body = r"\s+".join(re.escape(piece) for piece in item.split())
        parts.append(("(?<!\\w)" if item[:1].isalnum() else "") + body + ("(?!\\w)" if item[-1:].isalnum() else ""))
    return "|".join(parts) if parts else r"(?!x)x"


_DIGIT = re.compile(r"\d")


@dataclass(frozen=True)
class Quantity:
    """A quantity a text states: ``low`` to ``high`` (equal for one number) in ``unit``, at ``span``; ``hedged``
    when the text gives alternatives ("9 or 12 months")."""

    low: float
    high: float
    unit: str
    span: tuple[int, int]
    hedged: bool = False


@dataclass(frozen=True)
class Vocabulary:
    """The words of one DSO in one language."""

    language: str
    units: Mapping[str, tuple[str, ...]]
    factors: Mapping[str, float]
    ordinals: Mapping[str, int]
    alternative_words: tuple[str, ...]
    range_words: tuple[str, ...]
    range_start_words: tuple[str, ...]
    list_words: tuple[str, ...]
    within_words: tuple[str, ...]

    def unit_of(self, word: str) -> str:
        folded = " ".join(word.casefold().split())
        return next(
            unit for unit, names in self.units.items() if folded in {" ".join(n.casefold().split()) for n in names}
        )

    @cached_property
    def _pattern(self) -> re.Pattern[str]:
        number = r"\d+(?:\.\d+)?"
        joins = alternation((*self.alternative_words, *self.range_words, *self.list_words))
        unit = alternation(word for names in self.units.values() for word in names)
        within, start = alternation(self.within_words), alternation(self.range_start_words)
        after = (
            rf"(?:(?:{within})\s+)?(?:(?P<start>{start})\s+)?(?P<nums>{number}(?:\s*(?:{joins})\s*{number})*)"
            rf"\s*-?\s*(?P<unit>{unit})"
        )
        before = rf"(?:(?:{within})\s+)?(?P<unit2>{unit})\s*(?P<nums2>{number}(?:\s*(?:{joins})\s*{number})*)"
        return re.compile(rf"(?<!\d)(?<!\d\.){after}|{before}(?!\d|\.\d)", re.IGNORECASE)

    def quantities(self, text: str) -> list[Quantity]:
        """Every quantity ``text`` states in a unit the vocabulary has words for, in order."""
        if not _DIGIT.search(text):  # every quantity has a number: most clauses have none, and the pattern is long
            return []
        found = []
        for match in self._pattern.finditer(text):
            unit_word = match["unit"] or match["unit2"]
            numbers = match["nums"] if match["nums"] is not None else match["nums2"]
            offset = match.start("nums") if match["nums"] is not None else match.start("nums2")
            found += self._read(text, match, self.unit_of(unit_word), numbers, offset, match["start"] is not None)
        return found

    def _read(
        self, text: str, match: re.Match[str], unit: str, numbers: str, offset: int, ranged: bool
    ) -> list[Quantity]:
        values = [(float(m[0]), offset + m.start(), offset + m.end()) for m in re.finditer(r"\d+(?:\.\d+)?", numbers)]
        joins = [numbers[values[i][2] - offset : values[i + 1][1] - offset] for i in range(len(values) - 1)]

        def joined(kind: tuple[str, ...]) -> bool:
            return any(re.fullmatch(rf"\s*(?:{alternation(kind)})\s*", join, re.IGNORECASE) for join in joins)

        span = match.span()
        if joined(self.alternative_words):
            return [Quantity(values[0][0], values[-1][0], unit, span, hedged=True)]
        if len(values) == 2 and (joined(self.range_words) or ranged):
            return [Quantity(values[0][0], values[1][0], unit, span)]
        if len(values) == 1:
            return [Quantity(values[0][0], values[0][0], unit, span)]
        head = [Quantity(value, value, unit, (start, end)) for value, start, end in values[:-1]]
        return head + [Quantity(values[-1][0], values[-1][0], unit, (values[-1][1], span[1]))]


def _ontology(dso: Graph) -> Node | None:
    return next(iter(sorted(s for s in dso.subjects(RDF.type, OWL.Ontology) if isinstance(s, Identifier))), None)


def _role(dso: Graph, role: str) -> list[Identifier]:
    node = _ontology(dso)
    if node is None:
        return []
    return sorted(o for o in dso.objects(node, URIRef(EPO + role)) if isinstance(o, Identifier))


@lru_cache(maxsize=64)
def _vocabulary(dso: Graph, tag: str) -> Vocabulary:
    graphs = (dso,)

    def cue(role: str) -> tuple[str, ...]:
        return tuple(word for concept in _role(dso, role) for word in words(graphs, concept, tag))

    units = {str(unit): names for unit in _role(dso, "unitConcept") if (names := words(graphs, unit, tag))}
    factors = {
        str(unit): float(value.toPython())
        for unit in _role(dso, "unitConcept")
        if isinstance(value := dso.value(unit, URIRef(EPO + "conversionFactor")), Literal)
    }
    ordinals = {
        word.casefold(): int(value.toPython())
        for concept in _role(dso, "ordinalConcept")
        if isinstance(value := dso.value(concept, RDF.value), Literal)
        for word in words(graphs, concept, tag)
    }
    return Vocabulary(
        tag,
        units,
        factors,
        ordinals,
        cue("alternativeCue"),
        cue("rangeCue"),
        cue("rangeStartCue"),
        cue("listCue"),
        cue("withinCue"),
    )


def vocabulary(dso: Graph, tag: str) -> Vocabulary:
    """The DSO's judging words in the language ``tag`` (kept per DSO graph object and language)."""
    return _vocabulary(dso, _primary(tag))
