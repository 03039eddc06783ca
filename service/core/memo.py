"""Results kept on disk by the digest of their inputs, shared by every process that uses one directory.

Two results are worth keeping across processes: a derivation's compiled scenario tables
(:mod:`service.scenarios.cache`) and a knowledge graph's validation against its DSO
(:func:`service.core.validation.validate_kg`). Each takes seconds of owlrl and pySHACL, depends only on the
content of its input graphs and on the code that computes it, and is asked for again by every process that
loads the same graphs (a restarted service, the replicas of one store, the ``caie`` commands, test workers).

With ``CAIE_CACHE_DIR`` set (the ``caie`` commands default it to ``$XDG_CACHE_HOME/ob-caie``), a result is kept
as ``{kind}/{key}.pickle`` under it, the key being a digest of the inputs and of the code version
(:func:`source_version`), so a result of other inputs or other code is never read. One process computes a key
while the others wait on a file lock; a file is written whole or not at all. The directory is the service's
own, and trusted as its data directory is: pickles are code. Unset, nothing is kept.

:class:`Recent` keeps a few values in process only, by a key naming their inputs' content (an evaluation's head graph
read and its envelope, by the graph's catalog digest: :mod:`service.envelope.records`).
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

CACHE_DIR_ENV = "CAIE_CACHE_DIR"
"""The directory results are kept in, shared by the processes that use it; unset: nowhere."""
_log = logging.getLogger(__name__)
T = TypeVar("T")


def source_version(*sources: Path) -> str:
    """A short SHA-256 over the named files and over every ``.py`` file in the named directories."""
    digest = hashlib.sha256()
    files = sorted(f for source in sources for f in ([source] if source.is_file() else source.glob("*.py")))
    for file in files:
        digest.update(file.name.encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:16]


def kept(kind: str, key: str, build: Callable[[], T], expected: type[T]) -> T:
    """The result of ``key`` kept under ``$CAIE_CACHE_DIR/{kind}``, else ``build()`` (kept there for the next
    process). A file that cannot be read, or holds something other than an ``expected``, is built again."""
    directory = os.environ.get(CACHE_DIR_ENV)
    if not directory:
        return build()
    path = Path(directory) / kind / f"{key}.pickle"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.with_suffix(".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():
            try:
                with path.open("rb") as file:
                    found = pickle.load(file)
                if isinstance(found, expected):
                    return found
            except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError) as error:
                _log.warning("kept result %s unreadable (%s): computing it again", path, error)
        built = build()
        partial = path.with_suffix(f".{os.getpid()}.partial")
        try:
            with partial.open("wb") as out:
                pickle.dump(built, out, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(partial, path)  # whole or absent: a reader never sees half a file
        except (OSError, pickle.PicklingError, TypeError, AttributeError) as error:
            partial.unlink(missing_ok=True)
            _log.warning("result not kept in %s: %s", path.parent, error)
        return built


K = TypeVar("K")


class Recent(Generic[K, T]):
    """A few values kept in this process by a key that names their inputs' content (e.g. a graph's catalog digest),
    the least recently used dropped first. What it hands out is shared: callers never mutate it."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._values: OrderedDict[K, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> T | None:
        with self._lock:
            if key not in self._values:
                return None
            self._values.move_to_end(key)
            return self._values[key]

    def put(self, key: K, value: T) -> None:
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self._size:
                self._values.popitem(last=False)
