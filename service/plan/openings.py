"""Opening user turns templated from a scenario's facet values: deterministic, no model involved.

Templates are keyed by the DSO concepts' IRIs (vaccine-education, measles first); any other DSO gets
a generic sentence built from its concepts' labels, so a new DSO works without code changes.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..namespaces import DSO_VACCINE as VE

PERSONAS = {
    VE + "Caregiver": "I'm looking after my {age} child.",
    VE + "PregnantPerson": "I'm pregnant.",
    VE + "HealthWorker": "I work at a health centre.",
    VE + "Commuter": "I travel to work every day.",
    VE + "Student": "I'm a student.",
    VE + "Elder": "I'm an older person.",
}
STATES = {
    VE + "Unvaccinated": ("I never had the measles vaccine.", "My child never had the measles vaccine."),
    VE + "PartiallyVaccinated": ("I only had one dose of the measles vaccine.", "My child only had one dose of the measles vaccine."),
    VE + "FullyVaccinated": ("I had both doses of the measles vaccine.", "My child had both doses of the measles vaccine."),
    VE + "PastInfection": ("I had measles before.", "My child had measles before."),
    VE + "CurrentInfection": ("I have a fever and a rash right now.", "My child has a fever and a rash right now."),
}
"""What the user says of the person's state: (about themselves, about the child in their care)."""
SETTINGS = {
    VE + "PublicTransportSetting": "on the bus",
    VE + "SchoolSetting": "at school",
    VE + "ClinicSetting": "at the clinic",
    VE + "MarketSetting": "at the market",
    VE + "PlaceOfWorshipSetting": "at our place of worship",
    VE + "HouseholdSetting": "at home",
    VE + "WorkplaceSetting": "at work",
}
NEEDS = {
    VE + "VaccineSafety": "Is the {disease} vaccine safe?",
    VE + "ScheduleQuestion": "When should the {disease} vaccine be given?",
    VE + "ExposureAdvice": "Someone near me {setting} has {disease}. What should I do?",
    VE + "SymptomRecognition": "What are the signs of {disease}?",
    VE + "WhereToGetVaccinated": "Where can I get the {disease} vaccine near me?",
    VE + "TransmissionRisk": "Can I catch {disease} {setting}?",
    VE + "TreatmentQuestion": "How is {disease} treated?",
    VE + "OtherDiseaseQuestion": "I have a question about {disease}: how does it spread?",
}
STYLES = {
    "AnxiousStyle": "I'm really worried. ",
    "SkepticalStyle": "I've heard a lot of rumours, so be straight with me. ",
    "TerseStyle": "",
}


def opening_turn(values: Mapping[str, str], labels: Mapping[str, str]) -> str:
    """The user's first message for a scenario, from its facet values (IRIs) and their labels."""
    chosen = set(values.values())

    def label(iri: str) -> str:
        return labels.get(iri, iri.rsplit("/", 1)[-1].rsplit("#", 1)[-1])

    disease = next((label(v) for k, v in values.items() if k.endswith(("about", "disease"))), "measles")
    setting = next((SETTINGS[v] for v in chosen if v in SETTINGS), "")
    age = next((label(v).lower() for k, v in values.items() if k.endswith(("AgeGroup", "ageGroup", "age"))), "")
    need = next((v for v in chosen if v in NEEDS), None)
    if need is None:
        facets = ", ".join(sorted(label(v) for v in chosen))
        return f"I have a question ({facets})."
    persona = next((PERSONAS[v] for v in chosen if v in PERSONAS), "")
    about_child = persona.startswith("I'm looking after")
    states = [STATES[v][about_child] for v in sorted(chosen) if v in STATES]
    style = next((STYLES[v.rsplit("/", 1)[-1]] for v in chosen if v.rsplit("/", 1)[-1] in STYLES), "")
    question = NEEDS[need].format(disease=disease.lower(), setting=setting or "around here")
    parts = [style + persona.format(age=age or "young"), *states, question]
    return " ".join(part.strip() for part in parts if part.strip())
