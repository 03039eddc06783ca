"""The order in which `make test`'s two workers take the test modules: the longest first.

pytest-xdist's ``--dist loadfile`` hands each worker one module at a time, in the order of the collection
(``--no-loadscope-reorder``: by default it sorts them by their number of tests, which put the one-test, 45-second
end-to-end walk last and left one worker running it alone). Longest first, the last modules either worker takes are
short, so the two end close together.

:data:`LONG_MODULES` is the worker time of each module that takes 12 s or more, from
``make test PYTEST_ADDOPTS=--durations=0`` (setup, call and teardown of its tests added up; on a busy machine, so
only their order matters). Update it when a module becomes long or stops being so (a module split into shorter ones
leaves the table); a name that no longer exists fails the run (:func:`longest_first`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

LONG_MODULES: dict[str, float] = {
    "tests/workspace/test_end_to_end.py": 46,
    "tests/api/test_hardening.py": 44,
    "tests/workspace/test_report_signoff_pages.py": 40,
    "tests/api/test_iri_walk.py": 30,
    "tests/test_cli.py": 25,
    "tests/plan/test_pinned_inputs.py": 24,
    "tests/reports/test_page_widths.py": 24,
    "tests/scenarios/test_blocking.py": 22,
    "tests/plan/test_openings.py": 21,
    "tests/runs/test_imports_api.py": 20,
    "tests/api/test_fastlane.py": 20,
    "tests/api/test_openapi.py": 20,
    "tests/api/test_restart.py": 18,
    "tests/api/test_problems.py": 18,
    "tests/api/test_fuzz_stateful.py": 17,
    "tests/workspace/test_annotator_pages.py": 17,
    "tests/metrics/test_recompute_from_export.py": 17,
    "tests/workspace/test_expert_pages_browser.py": 17,
    "tests/api/test_sign_in.py": 17,
    "tests/scenarios/test_derivation.py": 17,
    "tests/workspace/test_home_pages.py": 17,
    "tests/plan/test_plans_api.py": 16,
    "tests/test_new_domain.py": 15,
    "tests/api/test_pages.py": 13,
    "tests/runs/test_run_record.py": 12,
}


def longest_first(items: list[pytest.Item], root: Path) -> None:
    """Reorder ``items`` in place: the modules of :data:`LONG_MODULES`, longest first, then the others in their
    collected order (each module's tests keep theirs)."""
    missing = [name for name in LONG_MODULES if not (root / name).is_file()]
    if missing:
        raise pytest.UsageError(f"tests/scheduling.py names test modules that do not exist: {', '.join(missing)}")

    def worker_time(item: pytest.Item) -> float:
        return -LONG_MODULES.get(item.nodeid.split("::", 1)[0], 0.0)

    items.sort(key=worker_time)  # stable: each module's tests stay together and in order
