"""Opening user turns templated from a scenario's facet values: deterministic, no model involved.

Templates are keyed by the DSO concepts' IRIs (vaccine-education, measles first); any other DSO gets
a generic sentence built from its concepts' labels, so a new DSO works without code changes.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..core.namespaces import DSO_VACCINE as VE

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
    VE + "AnxiousStyle": "I'm really worried. ",
    VE + "SkepticalStyle": "I've heard a lot of rumours, so be straight with me. ",
}


def opening_turn(values: Mapping[str, str], labels: Mapping[str, str]) -> str:
    """The user's first message for a scenario, from its facet values by facet name and their labels.

    Facet names are those of :mod:`service.scenarios.facets` (persona, age, vaccination, infection,
    pregnancy, setting, need, disease, style, ...); values are IRIs, or ``"true"``/``"false"``.
    """

    def label(iri: str) -> str:
        return labels.get(iri, iri.rsplit("/", 1)[-1].rsplit("#", 1)[-1])

    need = values.get("need")
    if need not in NEEDS:
        facets = ", ".join(f"{name}: {label(value)}" for name, value in sorted(values.items()))
        return f"I have a question ({facets})."
    persona = PERSONAS.get(values.get("persona", ""), "")
    about_child = persona.startswith("I'm looking after")
    parts = [
        STYLES.get(values.get("style", ""), ""),
        persona.format(age=label(values["age"]).lower() if "age" in values else "young"),
        "I'm pregnant." if values.get("pregnancy") == "true" and values.get("persona") != VE + "PregnantPerson" else "",
        *(STATES[values[name]][about_child] for name in ("vaccination", "infection") if values.get(name) in STATES),
        NEEDS[need].format(
            disease=label(values.get("disease", VE + "Measles")).lower(),
            setting=SETTINGS.get(values.get("setting", ""), "around here"),
        ),
    ]
    return " ".join(part.strip() for part in parts if part.strip())
