"""The dependencies handlers declare: settings, store, domain services, credentials."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request

from ..core.auth import authenticate, require
from ..core.catalog import Catalog
from ..core.config import Credential, Settings
from ..core.graphs import GraphService
from ..core.store import Store


def settings(request: Request) -> Settings:
    return request.app.state.settings


def store(request: Request) -> Store:
    return request.app.state.store


def catalog(request: Request) -> Catalog:
    return request.app.state.catalog


def graphs(request: Request) -> GraphService:
    return request.app.state.graphs


def credential(
    config: Annotated[Settings, Depends(settings)],
    authorization: Annotated[str | None, Header()] = None,
) -> Credential | None:
    return authenticate(config, authorization)


def writer(found: Annotated[Credential | None, Depends(credential)]) -> Credential:
    """Any valid credential may write graphs; role-specific actions check roles themselves."""
    return require(found)


def reader(
    config: Annotated[Settings, Depends(settings)],
    found: Annotated[Credential | None, Depends(credential)],
) -> Credential | None:
    """Reads are public unless the deployment says otherwise."""
    return found if config.public_reads else require(found)


SettingsDep = Annotated[Settings, Depends(settings)]
StoreDep = Annotated[Store, Depends(store)]
CatalogDep = Annotated[Catalog, Depends(catalog)]
GraphsDep = Annotated[GraphService, Depends(graphs)]
WriterDep = Annotated[Credential, Depends(writer)]
ReaderDep = Annotated[Credential | None, Depends(reader)]
