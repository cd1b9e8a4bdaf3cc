"""The package layout: no import cycle among dparse's modules at import time (imports at the
top level of a module, outside ``if TYPE_CHECKING:``), and the decoder registry independent of
the parser families whose decoders register in it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import dparse
from dparse.decoders import PROVIDERS, available_decoders, get_decoder

PACKAGE = Path(dparse.__file__).resolve().parent
CYTHON_IMPORT = re.compile(r"^(?:from|import) (dparse(?:\.\w+)*)", re.M)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_time_imports(path: Path) -> set[str]:
    """The dparse modules ``path`` imports when it is imported (not inside functions, not under
    TYPE_CHECKING); a ``.pyx`` file's unindented Python imports."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".pyx":
        return set(CYTHON_IMPORT.findall(text))
    found: set[str] = set()
    for node in ast.parse(text).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("dparse"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("dparse"))
    return found


def import_graph() -> dict[str, set[str]]:
    files = [*PACKAGE.rglob("*.py"), *PACKAGE.glob("_ext/*.pyx")]
    modules = {module_name(path): path for path in files}
    graph = {}
    for name, path in modules.items():
        targets = {t for t in import_time_imports(path) if t in modules and t != name}
        # importing a.b.c first imports the packages a.b and a
        graph[name] = targets | {t.rsplit(".", i)[0] for t in targets for i in (1, 2)
                                 if t.count(".") >= i and t.rsplit(".", i)[0] in modules
                                 and t.rsplit(".", i)[0] != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of its nodes, or None (depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = 2
        path.pop()
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_find_cycle_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_cycle() -> None:
    graph = import_graph()
    assert {"dparse.graph.model", "dparse.decoders", "dparse._ext.dd2"} <= set(graph)
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_registry_imports_no_decoder_family() -> None:
    graph = import_graph()
    assert not {t for t in graph["dparse.decoders"] if t.startswith(PROVIDERS)}
    for provider in PROVIDERS:
        assert "dparse.decoders" in graph[provider]  # each provider registers in the registry
    names = available_decoders()
    assert {"cle", "eisner", "cube", "dd2", "umst", "bgi"} <= set(names)
    assert get_decoder("umst").name == "umst"
