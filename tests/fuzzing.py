"""What the property tests (hypothesis) over untrusted text share (test_fuzz_rdf_parsing.py,
test_fuzz_sparql_nesting.py, test_fuzz_canonical_literals.py, test_fuzz_iris.py, issue 23 "a fuzzing suite"): their
settings, derandomized (the same run every time) and few enough for ``make test``, the base IRI documents are read
against, and the text the generators build from."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

FUZZ = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
BASE = "http://base.test/"
TURTLE_ALPHABET = "[](){}<>\"'#\\_:.;,@^ \n\tabcp0123456789-+eE/x%"
NOISE_STRINGS = st.sampled_from(["[[[", "((", "{{}", "]]", "a\\\"[b", "<<", ">>", "x", ""])
"""Text inside strings, comments and IRIs, where brackets do not nest."""
