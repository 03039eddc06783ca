"""The people a deployment knows: who signs in to the workspace pages, as which agent, with which roles.

Configured like bearer tokens (``CAIE_PEOPLE_FILE``, ``CAIE_PEOPLE``): a JSON list of entries
``{"agent", "username", "password" | "password_hash", "roles", "name"?, "organization"?, "languages"?,
"expertise"?, "oidc_subject"?}``. A ``password`` (demo files) is hashed with argon2 as the list is read and
never kept; a ``password_hash`` is argon2's encoded form (production). A person's :attr:`Person.credential` is
the same :class:`Credential` a bearer token gives, so what they do goes through the same domain checks and is
recorded as their agent. docs/workspace-sign-in.md.
"""

from __future__ import annotations

import hmac
import json
import re
import secrets
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import langcodes
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator
from pyoxigraph import NamedNode

from .config import Credential, Settings
from .errors import Misconfigured

AGENT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
_PROCESS_KEY = secrets.token_bytes(32)
_hashed: dict[bytes, str] = {}
_hashed_lock = threading.Lock()
_HASHED_LIMIT = 1024


def _encoded(hasher: PasswordHasher, password: str | None = None) -> str:
    """``password`` hashed by ``hasher`` (``None``: a random one, the stand-in an unknown username is checked
    against), once per process for each password and hasher parameters: a people list read again (each app the
    process builds, a restarted reader) costs no argon2 run, about a quarter second of a core each. The memo is
    keyed by an HMAC under a key of this process only, so no password is kept, even in memory."""
    parameters = repr(
        (hasher.time_cost, hasher.memory_cost, hasher.parallelism, hasher.hash_len, hasher.salt_len, hasher.type)
    ).encode()
    secret = b"\x00stand-in" if password is None else b"\x01" + password.encode()
    tag = hmac.digest(_PROCESS_KEY, parameters + secret, "sha256")
    with _hashed_lock:
        if (found := _hashed.get(tag)) is not None:
            return found
    encoded = hasher.hash(secrets.token_urlsafe(16) if password is None else password)
    with _hashed_lock:
        if len(_hashed) >= _HASHED_LIMIT:
            _hashed.clear()
        return _hashed.setdefault(tag, encoded)


@dataclass(frozen=True)
class Person:
    """Someone who signs in: their agent, roles, and what an annotator's queue is assigned by."""

    agent: str
    roles: frozenset[str]
    username: str | None = None
    name: str | None = None
    organization: str | None = None
    languages: tuple[str, ...] = ()
    """BCP 47 tags of the languages the person reads."""
    expertise: tuple[str, ...] = ()
    """DSO concept IRIs, as plan allocation's ``Annotator.expertise``."""
    oidc_subject: str | None = None
    password_hash: str | None = field(default=None, repr=False)

    @property
    def credential(self) -> Credential:
        """What this person acts with: the credential a bearer token for the same agent would give."""
        return Credential(agent=self.agent, name=self.name, roles=self.roles, organization=self.organization)

    @property
    def display_name(self) -> str:
        return self.name or self.agent


class _Entry(BaseModel):
    """One entry of the people list, as written."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: str = Field(pattern=AGENT_PATTERN)
    username: str | None = Field(None, pattern=r"^\S{1,128}$")
    password: SecretStr | None = Field(None, min_length=1)
    password_hash: str | None = None
    roles: list[str] = Field(min_length=1)
    name: str | None = None
    organization: str | None = None
    languages: list[str] = []
    expertise: list[str] = []
    oidc_subject: str | None = Field(None, min_length=1)

    @field_validator("roles")
    @classmethod
    def _roles_named(cls, roles: list[str]) -> list[str]:
        if any(not role.strip() for role in roles):
            raise ValueError("a role is an empty string")
        return roles

    @field_validator("languages")
    @classmethod
    def _bcp47(cls, tags: list[str]) -> list[str]:
        bad = [tag for tag in tags if not langcodes.tag_is_valid(tag)]
        if bad:
            raise ValueError(f"not BCP 47 language tags: {', '.join(bad)}")
        return tags

    @field_validator("expertise")
    @classmethod
    def _iris(cls, iris: list[str]) -> list[str]:
        for iri in iris:
            try:
                NamedNode(iri)
            except ValueError:
                raise ValueError(f"expertise {iri!r} is not an absolute IRI") from None
        return iris

    @model_validator(mode="after")
    def _signs_in_somehow(self) -> _Entry:
        if self.password is not None and self.password_hash is not None:
            raise ValueError("give a password or a password_hash, not both")
        has_secret = self.password is not None or self.password_hash is not None
        if has_secret != (self.username is not None):
            raise ValueError("a username needs a password or a password_hash, and each needs a username")
        if not has_secret and self.oidc_subject is None:
            raise ValueError(
                "the person cannot sign in: give a username and a password (or password_hash), or an oidc_subject"
            )
        return self


def _where(index: int, raw: object) -> str:
    agent = raw.get("agent") if isinstance(raw, Mapping) else None
    return f"entry {index}" + (f" (agent {agent!r})" if isinstance(agent, str) else "")


def _problem(error: Mapping[str, Any]) -> str:
    """One validation error as ``field: what is wrong`` (``what is wrong`` for the entry as a whole)."""
    field_name = ".".join(str(part) for part in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{field_name}: {message}" if field_name else message


def _person(entry: _Entry, hasher: PasswordHasher, where: str) -> Person:
    encoded = entry.password_hash
    if entry.password is not None:
        encoded = _encoded(hasher, entry.password.get_secret_value())
    elif encoded is not None:
        try:
            hasher.check_needs_rehash(encoded)  # parses it: a hash argon2 cannot read fails here, not at sign-in
        except (InvalidHashError, ValueError):
            raise Misconfigured(f"people: {where}: password_hash is not an argon2 encoded hash") from None
    return Person(
        agent=entry.agent,
        roles=frozenset(entry.roles),
        username=entry.username,
        name=entry.name,
        organization=entry.organization,
        languages=tuple(entry.languages),
        expertise=tuple(entry.expertise),
        oidc_subject=entry.oidc_subject,
        password_hash=encoded,
    )


def _unique(people: list[Person], key: str, fold: bool = False) -> None:
    seen: dict[str, str] = {}
    for person in people:
        value = getattr(person, key)
        if value is None:
            continue
        value = value.casefold() if fold else value
        if value in seen:
            raise Misconfigured(
                f"people: {key} {getattr(person, key)!r} is given twice (agents {seen[value]!r} and {person.agent!r})"
            )
        seen[value] = person.agent


class People:
    """The configured people, found by username (case-insensitively), OIDC subject or agent."""

    def __init__(self, people: Iterable[Person], hasher: PasswordHasher | None = None) -> None:
        self.all = tuple(people)
        for key, fold in (("agent", False), ("username", True), ("oidc_subject", False)):
            _unique(list(self.all), key, fold)
        self._hasher = hasher or PasswordHasher()
        self._by_username = {p.username.casefold(): p for p in self.all if p.username is not None}
        self._by_subject = {p.oidc_subject: p for p in self.all if p.oidc_subject is not None}
        self._by_agent = {p.agent: p for p in self.all}
        # Verified against when the username is unknown, so that an unknown name costs what a known one does.
        self._dummy = _encoded(self._hasher) if self._by_username else None

    @classmethod
    def parse(cls, entries: object, hasher: PasswordHasher | None = None) -> People:
        """People from the decoded JSON list; :class:`Misconfigured` naming the first bad entry."""
        if not isinstance(entries, list):
            raise Misconfigured("people: expected a JSON list of entries")
        hasher = hasher or PasswordHasher()
        people = []
        for index, raw in enumerate(entries):
            where = _where(index, raw)
            try:
                entry = _Entry.model_validate(raw)
            except ValidationError as error:
                raise Misconfigured(f"people: {where}: {'; '.join(map(_problem, error.errors()))}") from None
            people.append(_person(entry, hasher, where))
        return cls(people, hasher)

    @classmethod
    def of(cls, settings: Settings) -> People:
        """The people of ``CAIE_PEOPLE_FILE`` and then ``CAIE_PEOPLE``; none when neither is set."""
        entries: list[object] = []
        for source, text in (("CAIE_PEOPLE_FILE", _read(settings)), ("CAIE_PEOPLE", settings.people)):
            if text is None:
                continue
            try:
                decoded = json.loads(text)
            except json.JSONDecodeError as error:
                raise Misconfigured(f"people: {source} is not JSON: {error}") from None
            if not isinstance(decoded, list):
                raise Misconfigured(f"people: {source} must be a JSON list of entries")
            entries.extend(decoded)
        return cls.parse(entries)

    def __bool__(self) -> bool:
        return bool(self.all)

    @property
    def with_passwords(self) -> bool:
        return bool(self._by_username)

    def verify(self, username: str, password: str) -> Person | None:
        """The person if ``password`` is theirs; ``None`` otherwise, at about the same cost whether the name is known."""
        person = self._by_username.get(username.casefold())
        against = person.password_hash if person and person.password_hash else self._dummy
        if against is None:  # no one here signs in with a password
            return None
        try:
            self._hasher.verify(against, password)
        except (VerificationError, InvalidHashError):
            return None
        return person

    def by_subject(self, subject: str) -> Person | None:
        return self._by_subject.get(subject)

    def by_agent(self, agent: str) -> Person | None:
        return self._by_agent.get(agent)


def person_of_claims(
    people: People, claims: Mapping[str, object], roles_claim: str | None, agent_claim: str
) -> Person | None:
    """Who an OpenID Connect ID token's verified ``claims`` sign in as: the people entry naming its subject; else,
    where the deployment names a roles claim, the agent and roles the token states (never a configured
    person's agent); else no one."""
    subject = claims.get("sub")
    if not isinstance(subject, str):
        return None
    known = people.by_subject(subject)
    if known is not None or roles_claim is None:
        return known
    stated = claims.get(roles_claim)
    roles = stated.split() if isinstance(stated, str) else stated if isinstance(stated, list) else []
    agent, name = claims.get(agent_claim), claims.get("name")
    if (
        not isinstance(agent, str)
        or not re.fullmatch(AGENT_PATTERN, agent)
        or people.by_agent(agent) is not None
        or not roles
        or not all(isinstance(role, str) and role.strip() for role in roles)
    ):
        return None
    return Person(
        agent=agent, roles=frozenset(roles), name=name if isinstance(name, str) else None, oidc_subject=subject
    )


def _read(settings: Settings) -> str | None:
    if settings.people_file is None:
        return None
    try:
        return settings.people_file.read_text(encoding="utf-8")
    except OSError as error:
        raise Misconfigured(
            f"people: cannot read CAIE_PEOPLE_FILE ({settings.people_file}): {error.strerror}"
        ) from None
