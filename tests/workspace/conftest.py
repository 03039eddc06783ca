"""The records the workspace page tests start from: the worked example served with people who sign in, and the
bed-nets envelope drafted."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from pyoxigraph import Quad

from service.api import create_app
from service.core.outbound import tls_context
from service.core.store import Store

from ..api.workspace import quick_hashes
from ..conftest import Service, restore, restored, settings_for
from ..plan.test_second_domain_plan import draft
from ..servers import AppSlot
from .example_pages import PEOPLE


@pytest.fixture
def example(
    store: Store, tokens: dict[str, str], app_slot: tuple[AppSlot, str], worked_example_quads: list[Quad]
) -> Iterator[Service]:
    """The worked example (accepted, report 1 final) served with :data:`.example_pages.PEOPLE`; the REST client has
    the tokens."""
    restore(store, worked_example_quads)
    slot, url = app_slot
    app = create_app(settings_for(tokens, people=json.dumps(quick_hashes(PEOPLE))), store)
    with slot.serving(app), httpx.Client(base_url=url, timeout=300.0, verify=tls_context()) as http:
        yield Service(http, store, tokens, url)


@pytest.fixture
def drafted(service: Service, snapshots: dict) -> Service:
    """The bed-nets envelope drafted, nothing assessed (:func:`..plan.test_second_domain_plan.draft`)."""
    return restored(service, snapshots, "bed-nets envelope drafted, nothing assessed", draft)
