"""Signed records (issue 27): people's decisions as W3C Verifiable Credentials 2.0 with ``eddsa-rdfc-2022`` Data
Integrity proofs, each signed by its agent's Ed25519 key (a ``did:key``), verifiable without the service with the
contexts shipped here. Step-independent: it reads core only; docs/trust.md."""
