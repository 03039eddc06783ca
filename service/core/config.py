"""Settings, read once from the environment (prefix ``CAIE_``) and injected where needed."""

from __future__ import annotations

import json
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Credential(BaseModel):
    """Who a bearer token speaks for and which roles it holds."""

    agent: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    name: str | None = None
    roles: frozenset[str] = frozenset()
    organization: str | None = None
    """The organization the agent acts for; the separation rule (``Settings.separation``) compares these."""


def read_secret(value: SecretStr | None, file: Path | None, name: str) -> str | None:
    """A secret from configuration or from its file (never echoed: errors name the setting only)."""
    if value is not None:
        return value.get_secret_value()
    if file is None:
        return None
    try:
        return file.read_text(encoding="utf-8").rstrip("\r\n")
    except OSError as error:
        raise ValueError(f"cannot read CAIE_{name.upper()}_FILE ({file}): {error.strerror}") from None


class Settings(BaseSettings):
    """Deployment configuration. Every field is an environment variable ``CAIE_<FIELD>``."""

    model_config = SettingsConfigDict(env_prefix="CAIE_", extra="ignore")

    base_url: str = "http://localhost:8000/"
    store: Literal["embedded", "remote"] = "embedded"
    data_dir: Path | None = None
    """Directory of the embedded store; ``None`` keeps it in memory (tests)."""
    keys_dir: Path | None = None
    """Directory of the signing keys, a file of mode 0600 per agent (service/credentials/keys.py, docs/trust.md);
    by default ``{data_dir}/keys``; with neither, keys are kept in memory (tests). Set it for a remote store."""
    remote_query_url: str | None = None
    remote_update_url: str | None = None
    remote_store_url: str | None = None
    """SPARQL 1.1 Graph Store Protocol endpoint of the remote store."""
    remote_timeout_s: float = 60.0
    remote_max_update_triples: int = Field(default=500, ge=1)
    """The most triples one SPARQL Update request to the remote store carries; larger content is staged in
    chunks and committed by one small request (Virtuoso 7 refuses INSERT DATA of about 2,000 triples)."""
    remote_max_graphs_per_write: int = Field(default=16, ge=1)
    """The most graphs a runner writes in one conditional write to the remote store (its claims, its cases): a
    write names each graph's catalog entry and token, and Virtuoso 7 refuses one naming 128 (SP031, its generated
    SQL past 10,000 lines)."""
    tokens: str | None = None
    """JSON object mapping bearer tokens to credentials: ``{"token": {"agent": "annie", "roles": [...]}}``."""
    tokens_file: Path | None = None
    public_reads: bool = True
    people: str | None = None
    """JSON list of the people who sign in to the workspace pages (service/core/people.py, docs/workspace-sign-in.md)."""
    people_file: Path | None = None
    session_idle_s: float = Field(30 * 60.0, gt=0)
    """A signed-in session ends after this long without a request."""
    session_max_age_s: float = Field(12 * 3600.0, gt=0)
    """A signed-in session ends this long after sign-in, however busy."""
    session_max_count: int = Field(10_000, ge=1)
    """Sessions kept at once (in the main process's memory); one more evicts the least recently used."""
    session_cookie_secure: bool = True
    """Cookies are ``Secure`` with the ``__Host-`` prefix. Off only for plain-http development on another host than
    localhost (browsers treat http://localhost and http://127.0.0.1 as secure)."""
    sign_in_max_failures: int = Field(5, ge=1)
    """Failed sign-ins one username may have within ``sign_in_failure_window_s``; then 429 until the oldest ages out."""
    sign_in_max_failures_per_address: int = Field(20, ge=1)
    """Failed sign-ins one client address may have within ``sign_in_failure_window_s`` (any usernames)."""
    sign_in_failure_window_s: float = Field(15 * 60.0, gt=0)
    oidc_issuer: str | None = None
    """An OpenID Connect issuer people may sign in with instead of (or beside) local passwords; its metadata is read
    from ``{issuer}/.well-known/openid-configuration``."""
    oidc_client_id: str | None = None
    oidc_client_secret: SecretStr | None = None
    oidc_client_secret_file: Path | None = None
    """A file holding the client secret (a mounted secret); read at start, trailing newline dropped."""
    oidc_scope: str = "openid profile email"
    oidc_roles_claim: str | None = None
    """An ID-token claim listing roles: a subject no people entry names signs in with those roles as the agent of
    ``oidc_agent_claim``. Unset: only subjects named by a people entry's ``oidc_subject`` may sign in."""
    oidc_agent_claim: str = "preferred_username"
    oidc_label: str = "single sign-on"
    """What the sign-in page calls the OpenID Connect provider ("Sign in with ...")."""
    cors_origins: list[str] = ["*"]
    """Origins whose pages may call the service from a browser (CORS); JSON list, ``["*"]`` for any. Credentials
    (cookies) are never allowed cross-origin: callers send bearer tokens in ``Authorization``."""
    max_body_bytes: int = Field(512 * 1024 * 1024, ge=1)
    """The largest RDF body a graph upload or an import reads (Turtle, N-Triples, RDF/XML, JSON-LD, ...); more is 413."""
    query_max_body_bytes: int = Field(1024 * 1024, ge=1)
    """The largest body of a SPARQL query or update (``POST /sparql``, form or direct); more is 413 before it is read
    whole, so one anonymous client cannot make the main process hold a big body (issue 23 §2)."""
    json_max_body_bytes: int = Field(16 * 1024 * 1024, ge=1)
    """The largest JSON body of any other operation (determinations, attestations, runs, envelopes); more is 413."""
    form_max_body_bytes: int = Field(64 * 1024, ge=1)
    """The largest body of a form anyone may send without a credential (the workspace's sign-in); more is 413."""
    query_max_nesting: int = Field(128, ge=1)
    """The deepest nesting of braces, parentheses and brackets a SPARQL query or update may have; deeper is 400
    before it is parsed: the parser recurses, and 3,000 levels overflowed a worker's stack (issue 23 §5)."""
    rdf_max_nesting: int = Field(256, ge=1)
    """The deepest nesting of blank-node property lists and collections (``[ [ ... ] ]``, ``( ( ... ) )``) and of
    RDF/XML or JSON-LD elements an RDF body may have; deeper is 413 before it is parsed (issue 23 §1)."""
    rdf_max_triples: int = Field(10_000_000, ge=1)
    """The most triples one RDF body may hold; more is 413, counted while parsing (nothing is stored)."""
    rdf_max_literal_bytes: int = Field(8 * 1024 * 1024, ge=1)
    """The largest literal an RDF body may hold, in UTF-8 bytes; larger is 413 naming it (issue 23 §6)."""
    canonicalize_time_limit_s: float = Field(20.0, gt=0)
    """Wall time the canonicalization of untrusted RDF (RDFC-1.0, for its digest) may take, in a separate process
    killed at the limit; past it the request is refused with 422 naming the limit (issue 23 §1)."""
    idempotency_ttl_s: float = Field(24 * 3600.0, gt=0)
    """How long a recorded POST's answer is kept for replays with the same ``Idempotency-Key`` (issue 23 §8)."""
    front_ready_deadline_s: float = Field(15.0, gt=0)
    """How long a fast-lane front may take to become ready after it is forked; one that is not ready by then is
    killed and replaced, so a restart after kill -9 always answers (issue 23 §9)."""
    spec_record_max_triples: int = Field(10_000, ge=1)
    """The largest record in caie-spec's vocabulary an import checks against caie-spec's shapes, in triples: their
    checks take time that grows with the square of a record's size (about 4 minutes at 33,000 triples)."""
    max_plan_budget: int = Field(10_000, ge=1)
    """The most probes one test plan may have: planning time and the plan's size grow with the budget."""
    bulk_threshold: int = 100_000
    """Loads into a new graph at least this many triples use the journaled bulk path."""
    bulk_lease_s: float = 120.0
    """How long a bulk load stays safe from other replicas' recovery without renewal (renewed every third)."""
    remote_auth: Literal["basic", "digest", "bearer"] | None = None
    """How the service authenticates to the remote store. Unset: with a user and password, Basic or Digest as the
    store's challenge asks; else a bearer token if one is given. Secrets never appear in a repr, log or error."""
    remote_user: str | None = None
    remote_password: SecretStr | None = None
    remote_password_file: Path | None = None
    """A file holding the remote store's password (a mounted secret); read at start, trailing newline dropped."""
    remote_token: SecretStr | None = None
    remote_token_file: Path | None = None
    remote_page_size: int = Field(5_000, ge=1)
    """Triples per page when a whole graph is read from the remote store by SPARQL (below its row cap)."""
    remote_row_cap: int | None = Field(None, ge=2)
    """The remote store's result row limit (Virtuoso: ResultSetMaxRows, 10,000 by default); an answer that long is
    refused as possibly cut short."""
    query_time_limit_s: float = Field(30.0, gt=0)
    """Wall time a client's SPARQL query (``/sparql``) may run; it is stopped there with a 500 naming the limit."""
    query_max_result_bytes: int = Field(100_000_000, ge=1)
    """The largest serialized answer to a client's query; a larger one is an error, never a cut answer."""
    query_memory_limit_mb: int = Field(2048, ge=16)
    """Memory a client's query may take on the embedded store, above its worker's size at fork (``RLIMIT_AS``)."""
    query_workers: int = Field(8, ge=1)
    """Forked query workers kept ready between client queries on the embedded store. As many as may run at once
    (``query_max_concurrent``): with fewer, a burst forks and then kills a worker per query (3x the CPU per lookup)."""
    query_max_concurrent: int = Field(8, ge=1)
    """Client queries running at once (embedded: one forked worker each); more wait, holding no thread, until
    one ends or their time limit passes (then 429)."""
    query_max_per_client: int = Field(2, ge=1)
    """Client queries one client (a token's agent, or an address without a token) may run at once; more get 429."""
    service_allowlist: list[str] = []
    """SPARQL endpoints a client's query may call with ``SERVICE`` (JSON list of IRIs); any other is refused with 400."""
    run_target_allowlist: list[str] = []
    """URL prefixes of the systems under test a run started over REST may call (JSON list, e.g.
    ``["https://api.example.org/v1"]``); any other target is refused with 422. The demonstration chatbot runs
    in process and needs none."""
    supersede_role: str | None = None
    """A role whose holders may supersede another domain expert's attestation (a lead expert, a panel), the reason
    recorded; without it only the expert who attested supersedes their own (issue 23 §7)."""
    key_envs: list[str] = []
    """Environment variables a run's target or a model judge named in a request may read its key from (JSON list,
    e.g. ``["TARGET_API_KEY"]``); any other is refused with 422, so no request can send another of the service's
    secrets to a target. The configured model judge's ``model_judge_api_key_env`` is allowed with it."""
    model_judge_base_url: str | None = None
    """The model judge's OpenAI-compatible endpoint (Ollama, vLLM, a hosted API; still under
    ``run_target_allowlist``), used when a model-judgments request names no target."""
    model_judge_model: str | None = None
    """The model the configured model judge asks."""
    model_judge_api_key_env: str | None = None
    """The environment variable holding the configured model judge's key (never the key itself)."""
    max_running_runs: int = Field(4, ge=1)
    """Runs executing at once in one service process; one more is refused with 429."""
    separation: bool = False
    """The separation rule of formal audits (issue 10 §6, docs/judgments.md): testing and evaluating parties are
    kept apart, so whoever ran a run may not determine or attest on it, and an attester may not be one who
    determined. Parties are organizations where both credentials name one, else agents. Off: no such check."""
    fast_lane_processes: int | None = Field(None, ge=0)
    """Fast-lane processes ``caie serve`` forks beside itself on the embedded store: each answers plain
    ``GET /sparql?query=…`` lookups from a copy of the store and hands everything else to the main process
    (docs/performance.md). Unset: one per CPU; 0: none."""
    fast_lane_budget_s: float = Field(1.0, gt=0)
    """How long a fast-lane process may run one request, or wait on something while at it (not counting time spent
    waiting for a core), before handing it, unanswered, to the main process, which runs it under the query limits;
    never more than ``query_time_limit_s``, which also bounds the request's wall time in the fast lane. 1 s: an
    analytic query of a few hundred ms stays in the lane (at 0.25 s it was run twice, and the analytic bench fell
    to 0.57x of ``oxigraph serve``), while a runaway holds a front for at most a second."""
    fast_lane_memory_mb: int = Field(128, ge=1)
    """Memory a query may take in a fast-lane process before it is handed to the main process likewise; never more
    than half of ``query_memory_limit_mb``."""

    @field_validator("base_url")
    @classmethod
    def _ends_with_slash(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("base_url must be an absolute http(s) URL")
        return value if value.endswith("/") else value + "/"

    @cached_property
    def credentials(self) -> dict[str, Credential]:
        """Bearer token to credential; empty when no tokens are configured (then every write is refused)."""
        raw: dict[str, object] = {}
        if self.tokens_file is not None:
            raw.update(json.loads(self.tokens_file.read_text(encoding="utf-8")))
        if self.tokens:
            raw.update(json.loads(self.tokens))
        return {token: Credential.model_validate(value) for token, value in raw.items()}
