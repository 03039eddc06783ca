"""The composition root: the one place that builds the store and the services over it.

``create_app``, the CLI and the tests all start here, so each runs the same wiring (the catalog's
crash recovery included) and nothing else constructs a store or a service.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from .core.catalog import Catalog
from .core.config import Settings
from .core.graphs import Clock, GraphService
from .core.memo import CACHE_DIR_ENV
from .core.rdf_limits import RdfLimits
from .core.store import RemoteStore, Store, open_store
from .credentials.keys import KeyRing
from .credentials.signing import Signer
from .publishing import Publisher
from .runs.jobs import Jobs

if TYPE_CHECKING:
    import argparse


@dataclass
class Services:
    """What a running deployment is made of; ``owns_store`` says whether :meth:`close` closes the store."""

    settings: Settings
    store: Store
    catalog: Catalog
    graphs: GraphService
    publisher: Publisher
    jobs: Jobs
    signer: Signer
    """Signs people's decisions as Verifiable Credentials with each agent's key (docs/trust.md)."""
    owns_store: bool = True

    @property
    def clock(self) -> Clock:
        """What dates the records the services write: the graph service's, which every domain step is given."""
        return self.graphs.clock

    @clock.setter
    def clock(self, clock: Clock) -> None:
        self.graphs.clock = clock

    def close(self) -> None:
        if self.owns_store:
            self.store.close()


def build_services(settings: Settings, store: Store | None = None, *, recover: bool = True) -> Services:
    """The services for ``settings``; ``store`` (kept open on close) replaces the configured one.

    ``recover`` rolls back bulk loads that were abandoned: their lease lapsed (see :meth:`Catalog.recover`).
    """
    owns = store is None
    backend = store if store is not None else open_store(settings)
    catalog = Catalog(backend, settings.base_url, lease_s=settings.bulk_lease_s)
    if recover:
        catalog.recover()
    backend.attach_catalog(catalog.graph)
    remote = isinstance(backend, RemoteStore)
    graphs = GraphService(
        backend,
        catalog,
        bulk_threshold=settings.bulk_threshold,
        skolemize=remote,
        max_update_triples=settings.remote_max_update_triples if remote else None,
        max_graphs_per_write=settings.remote_max_graphs_per_write if remote else None,
        rdf_limits=RdfLimits.of(settings),
    )
    return Services(
        settings,
        backend,
        catalog,
        graphs,
        Publisher(backend, catalog),
        Jobs(settings.max_running_runs),
        Signer(KeyRing(settings.keys_dir or (settings.data_dir / "keys" if settings.data_dir else None))),
        owns_store=owns,
    )


class _CommandOverrides(TypedDict, total=False):
    """What a command's arguments set over the environment's settings (only those given)."""

    data_dir: Path
    base_url: str


def command_settings(args: argparse.Namespace) -> Settings:
    """The settings of a ``caie`` command: the environment's, with its ``--data-dir`` and ``--base-url`` over them."""
    overrides: _CommandOverrides = {}
    if getattr(args, "data_dir", None):
        overrides["data_dir"] = Path(args.data_dir)
    if getattr(args, "base_url", None):
        overrides["base_url"] = args.base_url
    settings = Settings(**overrides)
    # Compiled scenario tables and KG validations outlive the process (keyed by content and code, so any data
    # directory may share them): a restart does not compute them again. Not in the data directory, which is the
    # store's own.
    user_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    os.environ.setdefault(CACHE_DIR_ENV, str(user_cache / "ob-caie"))
    return settings


def command_services(args: argparse.Namespace, settings: Settings | None = None) -> Services:
    """The store a ``caie`` command's arguments name and the services over it (``settings``: those
    :func:`command_settings` gives for ``args``, when the command has them already)."""
    return build_services(settings if settings is not None else command_settings(args))
