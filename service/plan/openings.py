"""Opening user turns in the probe's language, written from template sets kept as data.

A template set (``ontologies/templates/<BCP 47 tag>.ttl``, a ``templates`` graph; docs/templates.md) gives, in
one language, a text per DSO or knowledge-graph concept (``epo:openingText``; ``epo:openingTextAboutOther``
for a state or a question said of the person in one's care). Which facets a turn says, and in what order, is
the DSO's: its facet declarations give an ``epo:openingPosition`` to each facet said as a part (the vaccine DSO:
style, persona, pregnancy, vaccination and infection states, need), and ``epo:openingTextRequired`` where a
value without a text makes the scenario unsayable; a text's ``{name}`` slot is filled with the set's phrase
for the value of the facet of that name (:class:`Grammar`; no code names a facet). Who the states are said of
follows the DSO, as the scenario's RDF does (:func:`..scenarios.facets.describe`): a carer persona asks about
the person they look after, so that person's facets fill the persona's slots and the parts on the person asked
about use the about-other texts; any other persona asks for themself, in the first person. A scenario's
language (an IRI of the DSO or a KG) maps to a tag through the data: a code property of the language
(``languageCode``, ``skos:notation``, ``dcterms:identifier``), else an ISO 639 IRI's code. A language with no
set conforming to the DSO has no probes: :meth:`Openings.lacking` names them for the plan. Nothing is ever
said in another language than the tag says: a required value or a slot the set has no text for makes the
scenario unsayable (``None``), and the plan draws another.

Scripted follow-up turns come from the same set: ``epo:followUpTexts`` on a concept is an ``rdf:List`` of the
user turns sent after the opening turn, in order, when a part of the turn says that concept (the vaccine
templates key them on the information needs). Their slots are filled as the opening's, and may name only slots
the concept's own opening text says, so a conversation is a function of its opening turn and the prompt frame
(:mod:`.frames`) counts conversations exactly. A set without follow-ups for a concept another set has them for
gives none (:attr:`Opening.lacking_follow_ups` names the concept): never another language's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import langcodes
from rdflib import Graph, URIRef
from rdflib.collection import Collection
from rdflib.namespace import DCTERMS, OWL, RDF, RDFS, SKOS
from rdflib.term import Literal

from ..core.errors import Conflict
from ..core.namespaces import EPO
from ..core.rdf import local_name
from ..scenarios.facets import ASKER, BOOLEANS, SUBJECT, Facet, FacetSpec, Schema, asks_about_other, read_specs

ENGLISH = "en"
CODE_PROPERTIES = ("languageCode", str(SKOS.notation), str(DCTERMS.identifier))
"""Where a language's code is read: any property whose IRI ends in ``languageCode``, or these."""
_ISO_IRI = re.compile(r"iso639-?[1-5]?[a-z]?/([a-z]{2,3})$", re.IGNORECASE)
_SLOT = re.compile(r"\{([A-Za-z_][\w-]*)\}")
"""A slot: ``{facet name}``, filled with the set's phrase for that facet's value."""


def normal_tag(code: str) -> str:
    """A language code (ISO 639-1, -2 or -3, or a BCP 47 tag) as its shortest BCP 47 tag: ``ben`` -> ``bn``."""
    try:
        return langcodes.standardize_tag(code.strip())
    except ValueError:  # not a well-formed tag: keep it as written, lower-cased
        return code.strip().lower()


@dataclass(frozen=True)
class TemplateSet:
    """One language's templates, read from its graph."""

    iri: str
    tag: str
    graph: str
    """The templates graph it was read from (pinned with the plan's inputs)."""
    conforms_to: frozenset[str]
    review_status: str | None
    texts: Mapping[str, str]
    about_other: Mapping[str, str]
    follow_ups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Per concept, the follow-up user turns said after an opening turn that says it (``epo:followUpTexts``)."""

    @staticmethod
    def read(graph_iri: str, graph: Graph) -> TemplateSet | None:
        """The set a templates graph declares (``None`` if it declares none, or no language tag)."""
        for node in graph.subjects(RDF.type, URIRef(EPO + "OpeningTemplateSet")):
            declared = graph.value(node, URIRef(EPO + "languageTag"))
            if declared is None:
                continue
            tag = normal_tag(str(declared))
            status = graph.value(node, URIRef(EPO + "reviewStatus"))
            return TemplateSet(
                str(node),
                tag,
                graph_iri,
                frozenset(str(d) for d in graph.objects(node, DCTERMS.conformsTo)),
                str(status) if status else None,
                _texts(graph, "openingText", tag),
                _texts(graph, "openingTextAboutOther", tag),
                _follow_ups(graph, tag),
            )
        return None

    def unsaid_slots(self) -> list[str]:
        """Each follow-up slot its concept's opening text does not say (it would vary the conversation unseen)."""
        problems = []
        for key, turns in sorted(self.follow_ups.items()):
            openings = [said[key] for said in (self.texts, self.about_other) if key in said]
            allowed = set.intersection(*(set(_SLOT.findall(t)) for t in openings)) if openings else set()
            for turn in turns:
                problems += [
                    f"{{{slot}}} in the follow-up {turn!r} of <{key}>"
                    for slot in _SLOT.findall(turn)
                    if slot not in allowed
                ]
        return problems


def _in(tag: str, term: object) -> bool:
    """Whether ``term`` is a literal tagged with the set's own language: never an English text under another tag."""
    return isinstance(term, Literal) and bool(term.language) and normal_tag(str(term.language)) == tag


def _texts(graph: Graph, prop: str, tag: str) -> dict[str, str]:
    """Per concept, its ``epo:{prop}`` text in the set's language."""
    return {str(s): str(o) for s, o in graph.subject_objects(URIRef(EPO + prop)) if _in(tag, o)}


def _follow_ups(graph: Graph, tag: str) -> dict[str, tuple[str, ...]]:
    """Per concept, its follow-up lists in the set's language, in a fixed order (one list per concept is the norm)."""
    found: dict[str, list[tuple[str, ...]]] = {}
    for s, head in graph.subject_objects(URIRef(EPO + "followUpTexts")):
        items = tuple(Collection(graph, head))
        if items and all(_in(tag, i) for i in items):
            found.setdefault(str(s), []).append(tuple(str(i) for i in items))
    return {key: tuple(t for turns in sorted(each) for t in turns) for key, each in found.items()}


@dataclass(frozen=True)
class Opening:
    """An opening turn: its text, the language it is written in and the set it was written from."""

    text: str
    tag: str
    templates: str | None
    """The template set's IRI (``None`` for the label sentence of a DSO no set covers)."""
    follow_ups: tuple[str, ...] = ()
    """The scripted user turns after this one, in order, in the same language."""
    lacking_follow_ups: tuple[str, ...] = ()
    """Concepts the turn says that another set has follow-ups for and this one has none: none are sent for them."""
    review_status: str | None = None
    """The set's ``epo:reviewStatus`` (``None`` for the label sentence): whether the text awaits a native speaker."""

    @property
    def conversation(self) -> tuple[str, ...]:
        """Every user turn, the opening first: what a test input is."""
        return (self.text, *self.follow_ups)


@dataclass(frozen=True)
class Grammar:
    """How a DSO's facets reach an opening turn, read from its facet declarations (docs/templates.md)."""

    parts: tuple[FacetSpec, ...]
    """The facets said as parts of the turn, in their ``epo:openingPosition`` order."""
    language: str | None
    """The facet whose value chooses the template set (the one linked by ``epo:language``)."""
    persona: str | None
    """The facet typing the asker (``rdf:type`` on the asker's node): a carer persona asks about another person."""

    @staticmethod
    def of(specs: Iterable[FacetSpec]) -> Grammar:
        specs = tuple(specs)
        parts = sorted((s for s in specs if s.opening_position is not None), key=lambda s: (s.opening_position, s.name))
        language = next((s.name for s in specs if s.epo_property == URIRef(EPO + "language")), None)
        persona = next((s.name for s in specs if s.node == ASKER and s.dso_property == RDF.type), None)
        return Grammar(tuple(parts), language, persona)


class Openings:
    """The template sets a plan may use for one DSO and its knowledge graphs, and what they say."""

    def __init__(self, dso: Graph, kgs: Sequence[Graph], sets: Iterable[TemplateSet]) -> None:
        self.schema = Schema(dso, kgs)
        self.specs = {spec.name: spec for spec in read_specs(dso)}  # the DSO's facet declarations
        self.grammar = Grammar.of(self.specs.values())
        ontologies = {str(o) for o in dso.subjects(RDF.type, OWL.Ontology)}
        self.sets = {s.tag: s for s in sorted(sets, key=lambda s: s.iri) if s.conforms_to & ontologies}
        for found in self.sets.values():
            if problems := found.unsaid_slots():
                raise Conflict(
                    f"the opening-turn templates <{found.graph}> have follow-up turns with slots their "
                    f"concept's opening text does not say: {'; '.join(problems)} (docs/templates.md)"
                )
        self._followed = frozenset(key for found in self.sets.values() for key in found.follow_ups)
        self._tags: dict[str, str | None] = {}
        # asked for every scenario said (plans, prompt frames): read from the graphs once each
        self._carers: dict[str, bool] = {}
        self._phrases: dict[tuple[str, str, str | None], str | None] = {}

    def tag(self, language: str) -> str | None:
        """The BCP 47 tag of a language IRI, from the data (see the module docstring), or ``None``."""
        if language not in self._tags:
            node = URIRef(language)
            codes = sorted(
                str(o)
                for p, o in self.schema.graph.predicate_objects(node)
                if isinstance(o, Literal) and (str(p).endswith(CODE_PROPERTIES[0]) or str(p) in CODE_PROPERTIES)
            )
            iso = _ISO_IRI.search(language)
            code = codes[0] if codes else iso.group(1) if iso else None
            self._tags[language] = normal_tag(code) if code else None
        return self._tags[language]

    def set_for(self, language: str | None) -> TemplateSet | None:
        """The set a scenario in ``language`` is written from; without a language facet, the English one."""
        tag = self.tag(language) if language else ENGLISH
        return self.sets.get(tag) if tag else None

    def languages(self, allowed: frozenset[str] | None) -> list[str]:
        """Every language a derivation would vary over (the language facet's values within ``allowed``)."""
        spec = self.specs.get(self.grammar.language) if self.grammar.language else None
        if spec is None or not isinstance(spec.value_class, URIRef):
            return []
        found = sorted(str(v) for v in self.schema.instances(spec.value_class))
        return [v for v in found if allowed is None or v in allowed]

    def _sayable(self, language: str) -> bool:
        # a DSO no set covers is said in English (the label sentence), so only English can be said then
        return self.set_for(language) is not None or (not self.sets and self.tag(language) == ENGLISH)

    def lacking(self, allowed: frozenset[str] | None) -> list[str]:
        """The languages within ``allowed`` that have no template set: no probe is made in them."""
        return [language for language in self.languages(allowed) if not self._sayable(language)]

    def with_templates(self, allowed: frozenset[str] | None) -> frozenset[str] | None:
        """``allowed`` narrowed to the languages that have a set (``None`` stays ``None`` when no language lacks one)."""
        languages = self.languages(allowed)
        lacking = set(self.lacking(allowed))
        if not lacking:
            return allowed
        return frozenset(language for language in languages if language not in lacking)

    def opening(self, values: Mapping[str, str], labels: Mapping[str, str]) -> Opening | None:
        """The opening turn of a scenario given its facet values (IRIs, or ``"true"``/``"false"``) by facet name;
        ``None`` when its language has no set or the set lacks a text the scenario needs."""
        language = values.get(self.grammar.language) if self.grammar.language else None
        templates = self.set_for(language)
        if templates is None:
            if self.sets or (language is not None and self.tag(language) != ENGLISH):
                return None
            return Opening(_label_sentence(values, labels), ENGLISH, None)
        persona = values.get(self.grammar.persona) if self.grammar.persona else None
        about_other = persona is not None and self._asks_about_other(persona)
        text = self._say(templates, values, about_other)
        if text is None:
            return None
        keys = [key for _, key in self._said_parts(values) if key in self._followed]
        follow_ups = [self._fill(templates, values, turn) for key in keys for turn in templates.follow_ups.get(key, ())]
        if None in follow_ups:
            return None
        return Opening(
            text,
            templates.tag,
            templates.iri,
            tuple(t.strip() for t in follow_ups if t and t.strip()),
            tuple(key for key in keys if key not in templates.follow_ups),
            templates.review_status,
        )

    def language_of(self, values: Mapping[str, str]) -> str | None:
        """The scenario's language IRI (the value of the DSO's language facet), if it has one."""
        return values.get(self.grammar.language) if self.grammar.language else None

    def triggers(self, facets: Sequence[Facet]) -> tuple[str, ...]:
        """Of ``facets``, those whose values decide how the others are said: the language (which set), the
        persona (whether the states are the asker's or another's) and every part with a text that has a slot
        (which slot facets are said at all). Any other facet's text depends on its own value and these only."""

        def slotted(facet: Facet) -> bool:
            keys = (
                {str(facet.spec.dso_property)} if facet.spec.value_kind == BOOLEANS else {str(v) for v in facet.values}
            )
            return facet.spec.opening_position is not None and (
                any(
                    _SLOT.search(said.get(key, ""))
                    for s in self.sets.values()
                    for said in (s.texts, s.about_other)
                    for key in keys
                )
                or bool(keys & self._followed)
            )  # follow-ups: a value's own turns, so a trigger

        return tuple(f.name for f in facets if f.name in (self.grammar.language, self.grammar.persona) or slotted(f))

    def _asks_about_other(self, persona: str) -> bool:
        if persona not in self._carers:
            self._carers[persona] = asks_about_other(self.schema, URIRef(persona))
        return self._carers[persona]

    def _said_parts(self, values: Mapping[str, str]) -> list[tuple[FacetSpec, str]]:
        """The parts a scenario has, in their declared order, each with the concept its text is keyed by (a
        boolean part: its property, said only when true)."""
        parts = []
        for spec in self.grammar.parts:
            value = values.get(spec.name)
            if value is not None and (spec.value_kind != BOOLEANS or value == "true"):
                parts.append((spec, str(spec.dso_property) if spec.value_kind == BOOLEANS else value))
        return parts

    def _say(self, templates: TemplateSet, values: Mapping[str, str], about_other: bool) -> str | None:
        """The parts in their declared order, slots filled; ``None`` when a required part or a slot has no text.
        About another person, a part on the person asked about is said only with its about-other text; any other
        part takes its about-other text where the set has one. A part that repeats an earlier one is left out
        (a pregnant persona already says the pregnancy)."""
        said: list[str] = []
        for spec, key in self._said_parts(values):
            other = templates.about_other.get(key) if about_other else None
            text = other if other is not None or (about_other and spec.node == SUBJECT) else templates.texts.get(key)
            if text is None:
                if spec.opening_required:
                    return None
                continue
            filled = self._fill(templates, values, text)
            if filled is None:
                return None
            if filled.strip() and filled.strip() not in said:
                said.append(filled.strip())
        return " ".join(said)

    def _fill(self, templates: TemplateSet, values: Mapping[str, str], text: str) -> str | None:
        phrases = {}
        for name in _SLOT.findall(text):
            spec = self.specs.get(name)
            phrase = None if spec is None else self._phrase(templates, spec, values.get(name))
            if phrase is None:
                return None  # a slot the set cannot fill, or that names no facet of the DSO
            phrases[name] = phrase
        return _SLOT.sub(lambda m: phrases[m.group(1)], text)

    def _phrase(self, templates: TemplateSet, spec: FacetSpec, value: str | None) -> str | None:
        """A slot's value as the set says it (kept per set and value: asked for every scenario said)."""
        key = (templates.iri, spec.name, value)
        if key not in self._phrases:
            self._phrases[key] = self._read_phrase(templates, spec, value)
        return self._phrases[key]

    def _read_phrase(self, templates: TemplateSet, spec: FacetSpec, value: str | None) -> str | None:
        """The set's text for the value; else a knowledge graph's label of it in the set's language; else the
        text of a broader value; else the text of no particular value (keyed by the facet's value class)."""
        fallback = templates.texts.get(str(spec.value_class)) if spec.value_class is not None else None
        if value is None:
            return fallback
        if value in templates.texts:
            return templates.texts[value]
        node = URIRef(value)
        for prop in (SKOS.prefLabel, RDFS.label):
            for label in self.schema.graph.objects(node, prop):
                if isinstance(label, Literal) and label.language and normal_tag(label.language) == templates.tag:
                    return str(label)
        broader = sorted(str(b) for b in self.schema.broader(node) if str(b) in templates.texts)
        return templates.texts[broader[0]] if broader else fallback


def _label_sentence(values: Mapping[str, str], labels: Mapping[str, str]) -> str:
    """A plain English sentence naming the facet values by their labels, for a DSO no template set covers."""

    def label(iri: str) -> str:
        return labels.get(iri, local_name(iri))

    return "I have a question (" + ", ".join(f"{name}: {label(value)}" for name, value in sorted(values.items())) + ")."
