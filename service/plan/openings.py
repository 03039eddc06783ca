"""Opening user turns in the probe's language, written from template sets kept as data.

A template set (``ontologies/templates/<BCP 47 tag>.ttl``, a ``templates`` graph; docs/templates.md) gives, in
one language, a text per DSO or knowledge-graph concept (``epo:openingText``; ``epo:openingTextAboutOther``
for a state or a question said of the person in one's care). A scenario's opening turn is its style, persona,
pregnancy, states and need, each the set's text for the value, with ``{age}``, ``{disease}`` and ``{setting}``
filled in. Who the states are said of follows the DSO, as the scenario's RDF does (:func:`..scenarios.facets.describe`):
a carer persona (``ve:Caregiver``) asks about the person they look after, so the age group fills the persona's
``{age}`` and the pregnancy and states are that person's (the about-other texts); any other persona asks for
themself, so they are said in the first person. A scenario's language (an IRI of the DSO or a KG) maps to a tag through the data: a code property of the
language (``languageCode``, ``skos:notation``, ``dcterms:identifier``), else an ISO 639 IRI's code. A
language with no set conforming to the DSO has no probes: :meth:`Openings.lacking` names them for the plan.
Nothing is ever said in another language than the tag says: a value whose text the set lacks makes the
scenario unsayable (``None``), and the plan draws another.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import langcodes
from rdflib import Graph, URIRef
from rdflib.namespace import DCTERMS, OWL, RDF, RDFS, SKOS
from rdflib.term import Literal

from ..core.namespaces import EPO
from ..scenarios.facets import Schema, asks_about_other, read_specs

ENGLISH = "en"
STATE_FACETS = ("vaccination", "infection")
"""The person's states an opening turn tells (in this order); the others never reach the prompt."""
CODE_PROPERTIES = ("languageCode", str(SKOS.notation), str(DCTERMS.identifier))
"""Where a language's code is read: any property whose IRI ends in ``languageCode``, or these."""
_ISO_IRI = re.compile(r"iso639-?[1-5]?[a-z]?/([a-z]{2,3})$", re.IGNORECASE)
_SLOT = re.compile(r"\{(age|disease|setting)\}")


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

    @staticmethod
    def read(graph_iri: str, graph: Graph) -> TemplateSet | None:
        """The set a templates graph declares (``None`` if it declares none, or no language tag)."""
        for node in graph.subjects(RDF.type, URIRef(EPO + "OpeningTemplateSet")):
            tag = graph.value(node, URIRef(EPO + "languageTag"))
            if tag is None:
                continue
            tag = normal_tag(str(tag))

            def texts(prop: str) -> dict[str, str]:
                # only texts tagged with the set's own language count: never an English text under another tag
                return {str(s): str(o) for s, o in graph.subject_objects(URIRef(EPO + prop))
                        if isinstance(o, Literal) and o.language and normal_tag(o.language) == tag}

            status = graph.value(node, URIRef(EPO + "reviewStatus"))
            return TemplateSet(str(node), tag, graph_iri, frozenset(str(d) for d in graph.objects(node, DCTERMS.conformsTo)),
                               str(status) if status else None, texts("openingText"), texts("openingTextAboutOther"))
        return None


@dataclass(frozen=True)
class Opening:
    """An opening turn: its text, the language it is written in and the set it was written from."""

    text: str
    tag: str
    templates: str | None
    """The template set's IRI (``None`` for the label sentence of a DSO no set covers)."""


class Openings:
    """The template sets a plan may use for one DSO and its knowledge graphs, and what they say."""

    def __init__(self, dso: Graph, kgs: Sequence[Graph], sets: Iterable[TemplateSet]) -> None:
        self.schema = Schema(dso, kgs)
        self.specs = {spec.name: spec for spec in read_specs(dso)}  # the DSO's facet declarations
        ontologies = {str(o) for o in dso.subjects(RDF.type, OWL.Ontology)}
        self.sets = {s.tag: s for s in sorted(sets, key=lambda s: s.iri) if s.conforms_to & ontologies}
        self._tags: dict[str, str | None] = {}
        # asked for every scenario said (plans, prompt frames): read from the graphs once each
        self._carers: dict[str, bool] = {}
        self._settings: dict[tuple[str, str | None], str | None] = {}

    def tag(self, language: str) -> str | None:
        """The BCP 47 tag of a language IRI, from the data (see the module docstring), or ``None``."""
        if language not in self._tags:
            node = URIRef(language)
            codes = sorted(str(o) for p, o in self.schema.graph.predicate_objects(node)
                           if isinstance(o, Literal) and (str(p).endswith(CODE_PROPERTIES[0]) or str(p) in CODE_PROPERTIES))
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
        spec = self.specs.get("language")
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
        language = values.get("language")
        templates = self.set_for(language)
        if templates is None:
            if self.sets or (language is not None and self.tag(language) != ENGLISH):
                return None
            return Opening(_label_sentence(values, labels), ENGLISH, None)
        pregnancy = self.specs.get("pregnancy")
        persona = values.get("persona")
        about_other = persona is not None and self._asks_about_other(persona)
        text = _say(templates, values, self._setting_phrase(templates, values.get("setting")),
                    str(pregnancy.dso_property) if pregnancy else "", about_other)
        return None if text is None else Opening(text, templates.tag, templates.iri)

    def _asks_about_other(self, persona: str) -> bool:
        if persona not in self._carers:
            self._carers[persona] = asks_about_other(self.schema, URIRef(persona))
        return self._carers[persona]

    def _setting_phrase(self, templates: TemplateSet, setting: str | None) -> str | None:
        """The setting as the set says it: its own text; else the KG's label in the set's language; else the
        text of a broader setting; else the text of no particular setting (keyed by the setting facet's class)."""
        key = (templates.iri, setting)
        if key not in self._settings:
            self._settings[key] = self._read_setting_phrase(templates, setting)
        return self._settings[key]

    def _read_setting_phrase(self, templates: TemplateSet, setting: str | None) -> str | None:
        spec = self.specs.get("setting")
        fallback = templates.texts.get(str(spec.value_class)) if spec else None
        if setting is None:
            return fallback
        if setting in templates.texts:
            return templates.texts[setting]
        node = URIRef(setting)
        for prop in (SKOS.prefLabel, RDFS.label):
            for label in self.schema.graph.objects(node, prop):
                if isinstance(label, Literal) and label.language and normal_tag(label.language) == templates.tag:
                    return str(label)
        broader = sorted(str(b) for b in self.schema.broader(node) if str(b) in templates.texts)
        return templates.texts[broader[0]] if broader else fallback


def _say(templates: TemplateSet, values: Mapping[str, str], setting: str | None, pregnancy_property: str,
         about_other: bool) -> str | None:
    """The opening turn; ``pregnancy_property`` keys the pregnancy texts; ``about_other``: the persona asks about
    the person in their care, whose age group fills ``{age}`` and whose pregnancy and states are said with the
    about-other texts (a question too, where the set words it for the other person)."""
    texts = templates.texts
    own = templates.about_other if about_other else texts

    def fill(text: str | None) -> str | None:
        if text is None:
            return None
        slots = {"age": texts.get(values.get("age", "")), "disease": texts.get(values.get("disease", "")),
                 "setting": setting}
        if any(slots[name] is None for name in _SLOT.findall(text)):
            return None
        return _SLOT.sub(lambda m: slots[m.group(1)] or "", text)

    need_iri = values.get("need", "")
    need = (templates.about_other.get(need_iri) if about_other else None) or texts.get(need_iri)
    persona = texts.get(values.get("persona", ""), "")
    if need is None or (values.get("persona") and not persona):
        return None
    pregnant = values.get("pregnancy") == "true"
    pregnancy = own.get(pregnancy_property) if pregnant else ""
    states = [own.get(values.get(name, ""), "") for name in STATE_FACETS]
    parts = [texts.get(values.get("style", ""), ""), fill(persona), "" if pregnancy == persona else pregnancy,
             *states, fill(need)]
    if any(part is None for part in parts):
        return None  # the set cannot say it (a pregnancy of the person cared for with no about-other text)
    return " ".join(part.strip() for part in parts if part and part.strip())


def _label_sentence(values: Mapping[str, str], labels: Mapping[str, str]) -> str:
    """A plain English sentence naming the facet values by their labels, for a DSO no template set covers."""
    def label(iri: str) -> str:
        return labels.get(iri, iri.rsplit("/", 1)[-1].rsplit("#", 1)[-1])

    return "I have a question (" + ", ".join(f"{name}: {label(value)}" for name, value in sorted(values.items())) + ")."
