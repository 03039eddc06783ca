"""JSON Lines (https://jsonlines.org/): one JSON object a line, blank lines skipped, read for the importers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def objects(text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each line's object with its line number (from 1); :class:`ValueError` naming the first line that is not a
    JSON object."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            found = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"line {number} is not JSON: {error.msg} at column {error.colno}") from None
        if not isinstance(found, dict):
            raise ValueError(f"line {number} is not a JSON object")  # noqa: TRY004  # bad input, as for bad JSON
        yield number, found
