"""The layers of docs/architecture.md, enforced: pyproject.toml's import-linter contracts, and no import cycle
between modules of ``service`` (imports inside functions count: grimp reads every import statement)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_are_kept() -> None:
    # lint-imports names each broken contract and the import chain that breaks it, with line numbers.
    lint_imports = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def module_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The import graph's strongly connected components of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, imported = work[-1]
            step = next(imported, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph.find_modules_directly_imported_by(step)))))
                elif step in on_stack:
                    low[module] = min(low[module], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def describe(graph: grimp.ImportGraph, cycle: list[str]) -> str:
    """Each import inside one cycle, with its line, so that the message says what to break."""
    members = set(cycle)
    lines = []
    for importer in cycle:
        for imported in sorted(members & graph.find_modules_directly_imported_by(importer)):
            details = graph.get_import_details(importer=importer, imported=imported)
            numbers = ", ".join(f"l.{detail['line_number']}" for detail in details)
            lines.append(f"  {importer} -> {imported} ({numbers})")
    return "\n".join(lines)


def test_no_import_cycle_between_modules() -> None:
    graph = grimp.build_graph("service", cache_dir=None)
    cycles = module_cycles(graph)
    assert not cycles, "import cycles:\n" + "\n\n".join(describe(graph, cycle) for cycle in cycles)


def test_module_cycles_finds_a_cycle_through_three_modules() -> None:
    # The check itself can fail: a cycle a -> b -> c -> a, beside an acyclic d -> a.
    graph = grimp.ImportGraph()
    for importer, imported in [("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.d", "p.a")]:
        graph.add_import(importer=importer, imported=imported)
    assert module_cycles(graph) == [["p.a", "p.b", "p.c"]]
