"""The package layout, read from the sources with :mod:`ast`: no import cycle among dparse's
modules (imports inside functions and under TYPE_CHECKING included, and a ``.pyx`` file's Python
imports); the shared modules (config, conll, metrics, outputs) reach no parser family, the
config only through the registry of the families (:mod:`dparse.families`), which imports no
family module itself and checks every family also in a process that imported only
dparse.config; the family records the only list of the families (no literal collection of two
family names elsewhere), and a new family registered by one line (a toy family, registered at
run time, seen by the config, the trainers, the loaders and the decoders); the decoder
registry independent of the parser families whose decoders register in it; ``dparse.api``
defining only its ``__all__``; and ``import dparse`` cheap."""

from __future__ import annotations

import ast
import importlib
import os
import re
import statistics
import subprocess
import sys
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest

import dparse
from dparse import decoders, families
from dparse.batch.engines import WorkerOptions
from dparse.config import load_config
from dparse.decoders import PROVIDERS, available_decoders, get_decoder
from dparse.errors import ConfigError
from dparse.parsers import check_model_overrides, train_model, train_options

PACKAGE = Path(__file__).resolve().parents[1] / "dparse"
FAMILIES = ("graph", "transition", "undirected", "rerank", "hypergraph", "tagging",
            "tokenizing", "neural")
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
    # dparse.config imports the family registry, and a family's record its trainer inside a
    # function; dparse/graph/dd2.pyx imports the decoder registry.
    assert "dparse.families" in graph["dparse.config"]
    assert "dparse.graph.training" in graph["dparse.graph.family"]
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
    # dparse.config reaches them only through the registry
    assert module != "dparse.config" or "dparse.families" in graph[module]


def _family_packages() -> set[str]:
    """The subpackages of the registered families (``dparse.graph``, ...)."""
    return {module.rpartition(".")[0] for module in families.FAMILY_MODULES}


def test_registry_imports_no_family_module() -> None:
    """The registry imports its family modules by name when first used, so that it stays
    cheap and each family module may import it (for ParserFamily) without a cycle."""
    graph = import_graph()
    inside = [t for t in graph["dparse.families"]
              if any(t == p or t.startswith(p + ".") for p in _family_packages())]
    assert not inside, f"dparse.families imports family modules {inside}"
    for module in families.FAMILY_MODULES:
        assert "dparse.families" in graph[module], module
    names = families.family_names()
    assert len(set(names)) == len(names) >= 6 and {"graph", "tagger"} <= set(names)
    assert all(record.summary and record.train and record.load
               for record in families.families())


def family_lists(source: str, names: set[str]) -> list[tuple[int, list[str]]]:
    """The literal tuples, lists and sets, and the literal dict keys, of ``source`` that hold
    two or more of ``names``: (line, the names it holds)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [key for key in node.keys if key is not None]
        else:
            continue
        held = [item.value for item in items
                if isinstance(item, ast.Constant) and item.value in names]
        if len(held) >= 2:
            found.append((node.lineno, held))
    return found


def test_family_lists_finds_tuples_lists_sets_and_dict_keys() -> None:
    names = {"graph", "easyfirst", "umst"}
    source = ("A = ('graph', 'easyfirst')\n"
              "B = {'umst': 1, 'graph': 2}\n"
              "C = ['graph', 'x']\n"
              "def f(p):\n"
              "    return p in {'umst', 'easyfirst', 'y'} or p in ('graph',)\n"
              "D = {'a': 'graph', 'b': 'umst'}\n")
    assert family_lists(source, names) == [(1, ["graph", "easyfirst"]),
                                           (2, ["umst", "graph"]),
                                           (5, ["umst", "easyfirst"])]


def test_only_the_family_records_list_the_families() -> None:
    """No module outside the registry and the families' own subpackages holds a literal
    collection of two or more family names (a table by parser type): what such a table would
    say belongs in the family records."""
    names = set(families.family_names())
    allowed = [PACKAGE / Path(*p.split(".")[1:]) for p in _family_packages()]
    # UDPipe's REST parameters are named tokenizer, tagger and parser: names, not a table
    udpipe_parameters = PACKAGE / "serve" / "process.py"
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in (PACKAGE / "families.py", udpipe_parameters) or any(
                path.is_relative_to(a) for a in allowed):
            continue
        found += [f"{path.relative_to(PACKAGE.parent)}:{line}: {held}"
                  for line, held in family_lists(path.read_text(encoding="utf-8"), names)]
    assert not found, "lists of families outside their records:\n" + "\n".join(found)


@pytest.mark.parametrize(("override", "message"), [
    ("features.order=3", "decoder.name: a third-order model (features.order: 3) decodes with "
                         "cube or eisner3-outermost, not 'cle'"),
    ("umst.edge_templates=nonsense", "umst.edge_templates: 'nonsense' must be none or a "
                                     "comma-separated subset of"),
    ("shiftreduce.beam=0", "shiftreduce.beam must be at least 1"),
    ("pruner.train_folds=1", "pruner.train_folds must be 0 (no jackknife) or >= 2"),
    ("tokenizing.bits=4", "tokenizing.bits must be 10 to 26"),
    ("neural.loss=softmax", "neural.loss must be one of local, crf, hinge"),
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


TOY_FAMILY = '''
"""A toy parser family: every word attached to the root."""

from dataclasses import dataclass
from pathlib import Path

from dparse.epochs import TrainResult
from dparse.errors import ConfigError
from dparse.families import ParserFamily

CALLS = []


@dataclass
class ToyConfig:
    width: int = 3
    grammar: str = ""


def check_toy(cfg, source):
    if cfg.toy.width < 1:
        raise ConfigError(f"{source}: toy.width must be at least 1")


class ToyModel:
    def write_files(self, directory):
        (Path(directory) / "toy.txt").write_text("toy", encoding="utf-8")


def train(cfg, progress, on_epoch, workers=None, jobs=1):
    CALLS.append((cfg.toy.width, workers, jobs))
    return TrainResult(ToyModel(), 1)


class ToyParser:
    builds_forests = False

    def __init__(self, width):
        self.decoder_name = f"toy-{width}"

    def parse(self, sentences, timer, on_forest=None):
        for sent in sentences:
            yield sent.with_parse([-1] + [0] * len(sent), [""] + ["dep"] * len(sent))


def load(directory, cfg, name):
    return ToyParser(cfg.toy.width)


TOY = ParserFamily(name="toy", summary="toy parsers", train=train, load=load,
                   sections={"toy": ToyConfig}, check=check_toy, parse_time_keys=("toy.width",),
                   trains_on_workers=False, takes_jobs=True, config_references=("toy.grammar",),
                   decoders=("toyfamily.decoders",))
FAMILIES = (TOY,)
'''
TOY_DECODERS = '''
import numpy as np

from dparse.decoders import Decoder, register_decoder


@register_decoder
class FlatDecoder(Decoder):
    name = "toy-flat"
    exact = False
    projective = True

    def _decode(self, arc, single_root, **parts):
        heads = np.zeros(arc.shape[0], dtype=np.int32)
        heads[0] = -1
        return heads
'''


@pytest.fixture
def toy_family(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A family outside dparse, ``toyfamily`` (its record, section, check, trainer, loader and
    a decoder), registered by one line: its module added to the registry's list."""
    package = tmp_path / "toyfamily"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "family.py").write_text(TOY_FAMILY, encoding="utf-8")
    (package / "decoders.py").write_text(TOY_DECODERS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(decoders, "_REGISTRY", dict(decoders._REGISTRY))  # its decoder: here
    monkeypatch.setattr(families, "FAMILY_MODULES",
                        (*families.FAMILY_MODULES, "toyfamily.family"))
    yield importlib.import_module("toyfamily.family")
    for name in [n for n in sys.modules if n.split(".")[0] == "toyfamily"]:
        del sys.modules[name]


def test_a_family_registered_by_one_line_is_seen_everywhere(toy_family, tmp_path: Path
                                                            ) -> None:
    folder = tmp_path / "configs"
    folder.mkdir()
    config = folder / "toy.yaml"
    config.write_text("parser: toy\ndata: {train: train.conllu}\n"
                      "toy: {width: 4, grammar: grammar.yaml}\n", encoding="utf-8")
    # load_config reads its section, resolves its reference, runs its check (validate)
    cfg = load_config(config)
    assert cfg.toy.width == 4 and cfg.toy.grammar == str(folder / "grammar.yaml")
    assert list(cfg.to_dict())[-1] == "toy" and cfg.to_dict()["toy"]["width"] == 4
    with pytest.raises(ConfigError, match="toy.width must be at least 1"):
        load_config(config, ["toy.width=0"])
    with pytest.raises(ConfigError, match="parser must be one of .*toy"):
        load_config(config, ["parser=nothing"])
    # the train options: no workers, its jobs
    with pytest.raises(ConfigError, match=r"--workers trains parsers \(graph, .*\); a toy"):
        train_options(cfg, tmp_path / "m", None, 1, workers=WorkerOptions(2))
    with pytest.raises(ConfigError, match="--fold applies to forest rerankers"):
        train_options(cfg, tmp_path / "m", None, 1, fold=2)
    options = train_options(cfg, tmp_path / "m", None, 3)
    assert options == {"jobs": 3}
    # its trainer trains, the model directory is saved and loads through its loader
    train_model(cfg, tmp_path / "m", options)
    assert toy_family.CALLS == [(4, None, 3)]
    with pytest.raises(ConfigError, match="toy parser.* it takes toy.width"):
        check_model_overrides(tmp_path / "m", ["decoder.name=cle"])
    check_model_overrides(tmp_path / "m", ["toy.width=2"])
    parser = dparse.load(tmp_path / "m", overrides={"toy.width": 2})
    assert parser.decoder == "toy-2"
    assert parser.parse(["a", "b"]).heads.tolist() == [-1, 0, 0]
    # its decoder module is a provider: its decoders are found by name
    assert "toyfamily.decoders" in decoders.PROVIDERS
    assert "toy-flat" in available_decoders()
    assert get_decoder("toy-flat").decode([[0, 0], [0, 0]]).tolist() == [-1, 0]


def test_a_family_or_a_section_registered_twice_is_refused(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    with pytest.raises(ValueError, match="a parser family named 'graph' is registered already"):
        families._collect((*families.FAMILY_MODULES, "dparse.graph.family"))
    (tmp_path / "twice_family.py").write_text(
        "from dparse.families import ParserFamily\n"
        "from dparse.sections import DataConfig\n"
        "FAMILIES = (ParserFamily(name='twice', summary='x', train=print, load=print,\n"
        "                         sections={'data': DataConfig}),)\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match="section 'data' of twice belongs to the core"):
        families._collect((*families.FAMILY_MODULES, "twice_family"))
    sys.modules.pop("twice_family", None)
    assert families.families()[0].name == "graph"


def test_without_its_line_the_family_is_unknown() -> None:
    with pytest.raises(ConfigError, match="unknown section.* toy"):
        load_config(raw={"parser": "toy", "data": {"train": "x"}, "toy": {"width": 4}})
    assert "toy" not in families.family_names()


def public_api_breaches(source: str) -> tuple[list[str], list[str]]:
    """The names a module's source defines at its top that neither its ``__all__`` lists nor
    an underscore starts, and the names of ``__all__`` it neither defines nor imports."""
    tree = ast.parse(source)
    defined: set[str] = set()
    imported: set[str] = set()
    listed: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id == "__all__":
                    listed = [e.value for e in node.value.elts]  # type: ignore[union-attr]
                elif isinstance(target, ast.Name):
                    defined.add(target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            imported.update((a.asname or a.name).split(".")[0] for a in node.names)
    extra = sorted(n for n in defined - set(listed) if not n.startswith("_"))
    missing = sorted(set(listed) - defined - imported)
    return extra, missing


def test_public_api_breaches_finds_public_helpers_and_missing_names() -> None:
    source = ("from x import Imported\n__all__ = ['f', 'Imported', 'gone']\n"
              "def f(): pass\ndef helper(): pass\ndef _private(): pass\nALIAS = int\n"
              "_CONSTANT = 1\nclass Public: pass\n")
    assert public_api_breaches(source) == (["ALIAS", "Public", "helper"], ["gone"])


def test_api_defines_only_its_all() -> None:
    """dparse.api is the public API only: every name it defines is in its ``__all__`` or
    private, and the package exports every one of them (lazily)."""
    import dparse.api  # here: importing it at the top would hide what import dparse costs

    extra, missing = public_api_breaches((PACKAGE / "api.py").read_text(encoding="utf-8"))
    assert not extra, f"dparse/api.py defines {extra} outside its __all__"
    assert not missing, f"dparse/api.py's __all__ names {missing}, which it lacks"
    assert set(dparse.api.__all__) <= set(dparse.__all__)
    assert {dparse._LAZY[name] for name in dparse.api.__all__} == {"dparse.api"}


def dparse_import_microseconds(pycache: Path, runs: int = 7) -> tuple[float, set[str]]:
    """The median over ``runs`` fresh processes of the summed self times of dparse's own
    modules in ``python -X importtime -c "import dparse"``, in microseconds, and every module
    those processes imported. The modules are compiled once first, into ``pycache`` (as an
    installed package is: the time of compiling is not the time of importing, which
    ``PYTHONDONTWRITEBYTECODE`` would otherwise add to every run)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    command = [sys.executable, "-X", f"pycache_prefix={pycache}", "-X", "importtime", "-c",
               "import dparse"]
    subprocess.run(command, capture_output=True, check=True, cwd=PACKAGE.parent, env=env)
    totals = []
    modules: set[str] = set()
    for _ in range(runs):
        err = subprocess.run(command, capture_output=True, text=True, check=True,
                             cwd=PACKAGE.parent, env=env).stderr
        total = 0
        for line in err.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            self_us, _, name = (part.strip() for part in line[len("import time:"):].split("|"))
            modules.add(name)
            if name == "dparse" or name.startswith("dparse."):
                total += int(self_us)
        totals.append(total)
    return statistics.median(totals), modules


def test_import_dparse_is_cheap_and_loads_neither_click_nor_matplotlib(tmp_path: Path) -> None:
    microseconds, modules = dparse_import_microseconds(tmp_path / "pycache")
    assert "dparse" in modules and "dparse.errors" in modules
    assert not {m for m in modules if m.split(".")[0] in ("click", "matplotlib", "numpy")}
    assert microseconds < 5000, f"import dparse: {microseconds:.0f} us of dparse's own modules"


# A Cython-level import: ``from dparse.X cimport ...`` or ``cimport dparse.X``.
CIMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(dparse[\w.]*)[ \t]+cimport\b|cimport[ \t]+(dparse[\w.]*))",
    re.MULTILINE)
EXT = "dparse._ext"


def cython_users() -> dict[str, set[str]]:
    """Each module of dparse/_ext (``.pyx`` or ``.pxd``, by dotted name) -> the modules outside
    dparse/_ext that import or cimport it (Python imports from the import graph, cimports read
    from every ``.pyx`` and ``.pxd``)."""
    ext = {".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts)
           for p in (PACKAGE / "_ext").glob("*.p[yx][xd]")}
    users: dict[str, set[str]] = {name: set() for name in ext}
    for importer, targets in import_graph().items():
        for target in targets:
            if target in users and not importer.startswith(EXT + "."):
                users[target].add(importer)
    for path in sorted(PACKAGE.rglob("*.pyx")) + sorted(PACKAGE.rglob("*.pxd")):
        importer = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        for m in CIMPORT.finditer(path.read_text(encoding="utf-8")):
            target = m.group(1) or m.group(2)
            if target in users and not importer.startswith(EXT + "."):
                users[target].add(importer)
    return users


def area(module: str) -> str:
    """The part of dparse a module belongs to: its family subpackage, or "core"."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 and parts[1] in FAMILIES else "core"


def test_ext_holds_only_what_several_parts_share() -> None:
    """dparse/_ext keeps the Cython that the core (modules outside the family subpackages, which
    every family uses) or two or more families use, directly or through another _ext module;
    what one family alone uses lives beside it."""
    users = cython_users()
    # an _ext module used only by another _ext module counts that module's users as its own
    graph = import_graph()
    for path in sorted((PACKAGE / "_ext").glob("*.p[yx][xd]")):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        text = path.read_text(encoding="utf-8")
        for m in CIMPORT.finditer(text):
            target = m.group(1) or m.group(2)
            if target in users and target != name:
                users[target] |= users[name]
        for target in graph.get(name, {}):
            if target in users and target != name:
                users[target] |= users[name]
    owned = {name: sorted(by) for name, by in users.items()
             if "core" not in {area(u) for u in by} and len({area(u) for u in by}) < 2}
    assert not owned, f"dparse/_ext modules used by one part only (move them beside it): {owned}"


def test_ext_imports_no_family() -> None:
    found = []
    for path in sorted((PACKAGE / "_ext").glob("*.p[yx][xd]")):
        text = path.read_text(encoding="utf-8")
        targets = [m.group(1) or m.group(2) for m in CIMPORT.finditer(text)]
        targets += [m.group(1) or m.group(3) for m in PYX_IMPORT.finditer(text)]
        found += [f"{path.name} imports {t}" for t in targets if area(t) != "core"]
    assert not found, "; ".join(found)


def test_test_modules_have_unique_names() -> None:
    # pytest imports test modules by their file name (the test folders are not packages):
    # two of one name in different folders make the second fail to collect
    names = Counter(path.name for path in (PACKAGE.parent / "tests").rglob("test_*.py"))
    assert sorted(name for name, count in names.items() if count > 1) == []
