"""The package layout, read from the sources with :mod:`ast`: no import cycle among dparse's
modules (imports inside functions and under TYPE_CHECKING included, and a ``.pyx`` file's Python
imports); the shared modules (config, conll, metrics, outputs) reach no parser family, the
config only through the registry of the families' checks (:mod:`dparse.families`), which
checks every family also in a process that imported only dparse.config; and the decoder
registry independent of the parser families whose decoders register in it."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest

from dparse import families, parsers
from dparse.decoders import PROVIDERS, available_decoders, get_decoder

PACKAGE = Path(__file__).resolve().parents[1] / "dparse"
FAMILIES = ("graph", "transition", "undirected", "rerank", "hypergraph", "tagging")
SHARED = ("dparse.config", "dparse.conll", "dparse.metrics", "dparse.outputs")
# The Python-level imports of a Cython module (not its cimports), one per line.
PYX_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(dparse[\w.]*)[ \t]+import[ \t]+([\w, ]+)|import[ \t]+(dparse[\w.]*))",
    re.MULTILINE)


def _module_names() -> dict[str, Path]:
    """Every module of the package (``.py`` and Cython ``.pyx``) by dotted name."""
    names = {}
    for path in sorted(PACKAGE.rglob("*.py")) + sorted(PACKAGE.rglob("*.pyx")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def _targets(modules: dict[str, Path], base: str, names: list[str]) -> set[str]:
    """The modules that ``from base import names`` (``import base`` if no names) loads:
    ``base.name`` where that is a module, else ``base`` itself; with the packages above them."""
    found = {f"{base}.{n}" if f"{base}.{n}" in modules else base for n in names} or {base}
    for name in list(found):
        parts = name.split(".")
        found.update(".".join(parts[:i]) for i in range(1, len(parts)))
    return {name for name in found if name in modules}


def _imports(name: str, path: Path, modules: dict[str, Path]) -> dict[str, int]:
    """The dparse modules that module ``name`` imports anywhere in its source (at its top, in
    functions, under TYPE_CHECKING), each with the line of one such import. A package that
    holds ``name`` is left out: it is imported before ``name`` runs, by Python, not by it."""
    found: dict[str, int] = {}

    def add(base: str, names: list[str], line: int) -> None:
        for target in _targets(modules, base, names):
            found.setdefault(target, line)

    source = path.read_text(encoding="utf-8")
    if path.suffix == ".pyx":
        for m in PYX_IMPORT.finditer(source):
            line = source.count("\n", 0, m.start()) + 1
            if m.group(3):
                add(m.group(3), [], line)
            else:
                add(m.group(1), [n.strip() for n in m.group(2).split(",")], line)
    else:
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(source, str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "dparse":
                        add(alias.name, [], node.lineno)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                if base.split(".")[0] == "dparse":
                    add(base, [alias.name for alias in node.names], node.lineno)
    return {t: line for t, line in found.items()
            if t != name and not name.startswith(t + ".")}


def import_graph() -> dict[str, dict[str, int]]:
    """module -> {imported module: line} over the whole package."""
    modules = _module_names()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, dict[str, int]]) -> list[str] | None:
    """One import cycle (its modules in order, the first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, {})):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def _describe(graph: dict[str, dict[str, int]], cycle: list[str]) -> str:
    return "; ".join(f"{a} imports {b} (line {graph[a][b]})" for a, b in pairwise(cycle))


def test_the_import_graph_sees_imports_in_functions_and_under_type_checking(
        tmp_path: Path) -> None:
    source = tmp_path / "probe.py"
    source.write_text("from typing import TYPE_CHECKING\n"
                      "if TYPE_CHECKING:\n"
                      "    from dparse.config import ExperimentConfig\n"
                      "def f():\n"
                      "    import dparse.graph.model\n"
                      "    from . import metrics\n")
    found = _imports("dparse.probe", source, _module_names())
    assert found == {"dparse.config": 3, "dparse.graph.model": 5, "dparse.graph": 5,
                     "dparse.metrics": 6}
    graph = import_graph()
    # dparse.config imports the family registry inside validate(), and dparse.parsers each
    # family's trainer inside a function; dparse/graph/dd2.pyx imports the decoder registry.
    assert "dparse.families" in graph["dparse.config"]
    assert "dparse.graph.training" in graph["dparse.parsers"]
    assert "dparse.decoders" in graph["dparse.graph.dd2"]
    assert "dparse.hypergraph" in graph["dparse.rerank.model"]  # a package's __init__ runs too


def test_find_cycle_reports_a_cycle_and_only_a_cycle() -> None:
    assert find_cycle({"a": {"b": 1}, "b": {"c": 2}, "c": {}}) is None
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}}
    cycle = find_cycle(graph)
    assert cycle == ["a", "b", "c", "a"]
    assert _describe(graph, cycle) == ("a imports b (line 1); b imports c (line 2); "
                                       "c imports a (line 3)")


def test_dparse_has_no_import_cycle() -> None:
    graph = import_graph()
    cycle = find_cycle(graph)
    assert cycle is None, f"import cycle: {_describe(graph, cycle)}"


def _reached(graph: dict[str, dict[str, int]], start: str, avoid: str) -> dict[str, str]:
    """The modules that ``start`` imports directly or through others (not through ``avoid``),
    each with the module that imports it."""
    seen: dict[str, str] = {}
    todo = [start]
    while todo:
        node = todo.pop()
        for target in graph[node]:
            if target not in seen and target != avoid:
                seen[target] = node
                todo.append(target)
    return seen


@pytest.mark.parametrize("module", SHARED)
def test_shared_modules_import_no_parser_family(module: str) -> None:
    graph = import_graph()
    bad = {t: by for t, by in _reached(graph, module, "dparse.families").items()
           if t.split(".")[1] in FAMILIES}
    assert not bad, f"{module} reaches the parser families' modules {bad} (module: importer)"
    # dparse.config reaches them only through the registry, which validate() imports
    assert module != "dparse.config" or "dparse.families" in graph[module]


def test_families_name_the_parser_types_that_train_and_load() -> None:
    assert set(families.PARSERS) == set(parsers.TRAINERS) == set(parsers.LOADERS)
    assert set(families.CHECKS) <= set(families.PARSERS)


@pytest.mark.parametrize(("override", "message"), [
    ("features.order=3", "decoder.name: a third-order model (features.order: 3) decodes with "
                         "cube or eisner3-outermost, not 'cle'"),
    ("umst.edge_templates=nonsense", "umst.edge_templates: 'nonsense' must be none or a "
                                     "comma-separated subset of"),
    ("shiftreduce.beam=0", "shiftreduce.beam must be at least 1"),
    ("pruner.train_folds=1", "pruner.train_folds must be 0 (no jackknife) or >= 2"),
])
def test_a_fresh_process_that_imports_only_config_checks_every_family(override: str,
                                                                      message: str) -> None:
    code = ("import sys\n"
            "from dparse.config import load_config\n"
            "from dparse.errors import ConfigError\n"
            "try:\n"
            "    load_config(raw={'data': {'train': 'x.conllu'}}, overrides=[sys.argv[1]])\n"
            "except ConfigError as exc:\n"
            "    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code, override], capture_output=True,
                         text=True, check=True).stdout
    assert message in out


def test_registry_imports_no_decoder_family() -> None:
    graph = import_graph()
    assert not {t for t in graph["dparse.decoders"] if t.startswith(PROVIDERS)}
    for provider in PROVIDERS:
        assert "dparse.decoders" in graph[provider]  # each provider registers in the registry
    names = available_decoders()
    assert {"cle", "eisner", "cube", "dd2", "umst", "bgi"} <= set(names)
    assert get_decoder("umst").name == "umst"


# an absolute path of one machine: a home, a scratch or temporary folder, a checkout
MACHINE_PATH = re.compile(r"(?<![\w.~$-])/(?:root|home|tmp|work|scratch|Users|mnt)/")


def test_results_and_readme_name_no_machine_path() -> None:
    """Paths in results/ and the README are relative to the repository or the data root."""
    repo = PACKAGE.parent
    found = [f"{path.relative_to(repo)}:{n}: {line.strip()}"
             for path in [repo / "README.md", *sorted((repo / "results").rglob("*.md"))]
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if MACHINE_PATH.search(line)]
    assert not found, "\n".join(found)
    assert MACHINE_PATH.search("models in /tmp/o3jk") and not MACHINE_PATH.search(
        "../shared/data/en_ewt and /usr/bin/time")
