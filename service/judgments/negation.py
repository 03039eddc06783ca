"""Negation in a reply (docs/judgments.md "Negation"), read with a rule's negation words: the labels, in the reply's
language, of its ``epo:negationCue`` concepts. A match is negated by a negation word before it in its clause, at
most ``epo:negationReach`` words before it with no punctuation between (anywhere before it in the clause when the
rule gives no reach): "there is no need to tie or tuck it" says neither, "never in the sun" advises against the
sun. No word is named here; a rule without negation cues reads every match as stated.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rdflib import URIRef

from .checks import Clause
from .model import JudgingRule, ProbeContext
from .vocabulary import alternation, words

_WORD = re.compile(r"[\w'’]+")
_PUNCTUATION = re.compile(r"[,;:.!?]")


def close(between: str, reach: int | None) -> bool:
    """Whether the text ``between`` a negation and what it negates keeps them together: any text without a
    reach, else at most ``reach`` words and no punctuation."""
    return reach is None or (len(_WORD.findall(between)) <= reach and not _PUNCTUATION.search(between))


@dataclass(frozen=True)
class Negation:
    """A rule's negation words in one language (``pattern`` ``None`` when there are none) and its reach;
    ``unreadable`` when the rule declares negation cues and the language has no words for them."""

    pattern: re.Pattern[str] | None
    reach: int | None
    unreadable: bool

    def word_before(self, text: str, clauses: Sequence[Clause], start: int) -> str | None:
        """The negation word that negates what ``text`` says at ``start``, if one does."""
        clause = next((c for c in clauses if c.start <= start < c.end), None)
        if self.pattern is None or clause is None:
            return None
        head = text[clause.start : start]
        return next((m[0] for m in self.pattern.finditer(head) if close(head[m.end() :], self.reach)), None)

    def matches(
        self, regex: re.Pattern[str], text: str, clauses: Sequence[Clause]
    ) -> tuple[list[re.Match[str]], list[tuple[re.Match[str], str]]]:
        """``regex``'s matches in ``text``: those stated, and those negated with the word negating each."""
        stated, negated = [], []
        for match in regex.finditer(text):
            word = self.word_before(text, clauses, match.start())
            if word is None:
                stated.append(match)
            else:
                negated.append((match, word))
        return stated, negated


def negation(rule: JudgingRule, context: ProbeContext, tag: str) -> Negation:
    """The rule's negation words in the language ``tag``, from the DSO and the probe's knowledge graph."""
    found = [word for cue in rule.negation_cues for word in words((context.dso, context.country), URIRef(cue), tag)]
    return Negation(
        re.compile(alternation(found), re.IGNORECASE) if found else None,
        rule.negation_reach,
        bool(rule.negation_cues) and not found,
    )
