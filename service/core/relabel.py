"""RDFC-1.0's blank-node relabelling, in process when it is cheap, else in a child process killed at a time limit.

Relabelling is quick while every blank node has its own first-degree hash (its triples, with itself written
``_:a`` and other blank nodes ``_:z``): RDFC-1.0 labels those nodes in order and needs no N-degree hashing. When
blank nodes look alike (a chain, a ring, a clique), pyoxigraph's ``hash_n_degree_quads`` can take minutes (a chain
of 2,000 nested blank nodes took more than 3 minutes, issue 23 §1), holds the GIL meanwhile, so /health stops
answering, and cannot be interrupted. Such graphs from a request are relabelled by a fresh ``python -m
service.core.relabel`` reading N-Triples on stdin and writing the sorted canonical N-Triples on stdout; the
thread that waits for it releases the GIL, and at the limit it is killed (422 naming the limit).
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from collections.abc import Hashable
from pathlib import Path

from pyoxigraph import BlankNode, CanonicalizationAlgorithm, Dataset, Quad, RdfFormat, Triple, parse, serialize

from .errors import Unprocessable
from .formats import written

_ROOT = Path(__file__).resolve().parents[2]
"""The directory holding the ``service`` package: the child's working directory, so ``-m`` finds it."""
_SELF, _OTHER = "a", "z"


def sorted_canonical(triples: list[Triple], blank: bool) -> bytes:
    """The sorted, distinct canonical N-Triples of ``triples``, blank nodes relabelled by RDFC-1.0 if ``blank``."""
    if blank:
        dataset = Dataset(Quad(t.subject, t.predicate, t.object) for t in triples)
        dataset.canonicalize(CanonicalizationAlgorithm.RDFC_1_0)
        triples = [quad.triple for quad in dataset]
    lines = sorted(set(written(serialize(triples, format=RdfFormat.N_TRIPLES)).splitlines()))
    return b"".join(line + b"\n" for line in lines)


def cheap(triples: list[Triple]) -> bool:
    """Whether RDFC-1.0 relabels ``triples`` without N-degree hashing: every blank node's first-degree
    signature differs from every other's, and no triple is quoted (blank nodes in quoted triples are left to
    the child)."""
    signatures: dict[BlankNode, Counter[tuple[Hashable, ...]]] = {}
    for t in triples:
        subject, value = t.subject, t.object
        if isinstance(subject, Triple) or isinstance(value, Triple):
            return False
        for node in {subject, value}:
            if isinstance(node, BlankNode):
                signatures.setdefault(node, Counter())[
                    (
                        (_SELF if subject == node else _OTHER) if isinstance(subject, BlankNode) else subject,
                        t.predicate,
                        (_SELF if value == node else _OTHER) if isinstance(value, BlankNode) else value,
                    )
                ] += 1
    distinct = {frozenset(signature.items()) for signature in signatures.values()}
    return len(distinct) == len(signatures)


def sorted_canonical_within(triples: list[Triple], time_limit_s: float) -> bytes:
    """:func:`sorted_canonical` of ``triples`` (with blank nodes) in a child process; 422 naming the limit if it
    takes longer than ``time_limit_s`` (the child is killed) or if the child fails."""
    child = subprocess.Popen(
        [sys.executable, "-m", __name__],
        cwd=_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = child.communicate(serialize(triples, format=RdfFormat.N_TRIPLES), timeout=time_limit_s)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        raise Unprocessable(
            f"canonicalizing the graph's blank nodes (RDFC-1.0, for its digest) took longer than "
            f"this deployment allows, {time_limit_s:g} s (CAIE_CANONICALIZE_TIME_LIMIT_S): the "
            "graph has many blank nodes that look alike; name them with IRIs"
        ) from None
    except BaseException:
        child.kill()
        child.communicate()
        raise
    if child.returncode != 0:
        reason = err.decode("utf-8", errors="replace").strip().splitlines()[-1:] or [f"status {child.returncode}"]
        raise Unprocessable(
            f"the graph's blank nodes could not be canonicalized (RDFC-1.0, for its digest): {reason[0]}"
        )
    return out


def main() -> None:
    """The child: N-Triples on stdin, their sorted canonical N-Triples on stdout."""
    triples = [quad.triple for quad in parse(sys.stdin.buffer.read(), format=RdfFormat.N_TRIPLES)]
    sys.stdout.buffer.write(sorted_canonical(triples, blank=True))


if __name__ == "__main__":
    main()
