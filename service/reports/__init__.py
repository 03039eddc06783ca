"""Step 6: reports anyone can recompute. A report is a named graph ``{evaluation}/reports/{n}`` stating the
figures the published metric queries give over one run (:mod:`service.metrics`), what they rest on (scope,
plan, envelope, target version, judges, the digests of the graphs and queries read), and its authors' limitations,
recommendations and fitness; the domain expert signs it and the organizational expert accepts it, each in a graph
of its own (:mod:`.signoffs`); :mod:`.verify` recomputes every figure and digest from the record.
"""
