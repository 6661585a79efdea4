"""The shape of the package, checked so that it stays true (the house issue):

* imports go one way, errors < enumerate < scales.measures < scales.tables < store <
  scales.runs < scales.analysis < irscale (API, CLI, service), with no cycle (``from
  package import submodule`` counts as importing the package too, so a module of a package
  whose ``__init__`` imports it must import its siblings directly) and no function-local
  import of the package;
* numba kernel modules are loaded lazily on the measures' path, so naming measures and
  ``irscale --help`` / ``irscale measures`` load neither numba nor pandas nor h5py;
* measure families are discovered (every module of families/ defines one) and no module
  outside a family's own tests a measure's name;
* every public function has type hints for its arguments and its return value;
* no module is over :data:`MAX_MODULE_LINES` lines (one that grows holds two concepts).
"""
from __future__ import annotations

import ast
import subprocess
import sys
import tempfile
from pathlib import Path

import irscale
from irscale.scales.measures.registry import families

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"irscale": "irscale", "enumerate": "irscale.enumerate", "scales": "irscale.scales",
            "store": "irscale.store"}
#: Layers, lowest first; a module may import modules of its own layer and lower ones.
LAYERS = ["irscale.enumerate", "irscale.scales.measures", "irscale.scales.tables", "irscale.store",
          "irscale.scales.runs", "irscale.scales.analysis", "irscale"]
BASE = {"irscale.errors", "irscale.version"}          # every layer may use these
MAX_MODULE_LINES = 600


def _modules() -> dict[str, Path]:
    out = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = [p for p in path.relative_to(ROOT / folder).with_suffix("").parts if p != "__init__"]
            out[".".join([package, *parts])] = path
    return out


def _layer(module: str) -> int:
    if module in BASE:
        return -1
    if module == "irscale.scales":
        return 1
    best, length = None, -1
    for i, prefix in enumerate(LAYERS):
        if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
            best, length = i, len(prefix)
    assert best is not None, module
    return best


def _imports(path: Path, module: str):
    """(imported irscale module or name, line, function-local?) of a module, with the
    modules it loads through ``lazy_module("...")``."""
    tree = ast.parse(path.read_text())
    spans = [(n.lineno, n.end_lineno) for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    is_pkg = path.name == "__init__.py"
    for node in ast.walk(tree):
        local = any(a < getattr(node, "lineno", 0) <= b for a, b in spans)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("irscale"):
                    yield alias.name, node.lineno, local
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = module.split(".") if is_pkg else module.split(".")[:-1]
                base = ".".join(pkg[: len(pkg) - node.level + 1] + ([base] if base else []))
            if base.startswith("irscale"):
                # "from package import submodule" runs the package's __init__ first: an edge to
                # the package too (a module its package imports, importing a sibling through the
                # package, is a cycle)
                yield base, node.lineno, local
                for alias in node.names:
                    yield f"{base}.{alias.name}", node.lineno, local
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "lazy_module":
            # not third-party modules (joblib), nor names given at run time (a family's kernels)
            if isinstance(node.args[0], ast.Constant) and node.args[0].value.startswith("irscale"):
                yield node.args[0].value, node.lineno, False


def _resolve(name: str, known) -> str:
    while name not in known:
        assert "." in name, name
        name = name.rsplit(".", 1)[0]
    return name


def _graph():
    mods = _modules()
    graph, problems = {}, []
    for module, path in mods.items():
        deps = set()
        for name, line, local in _imports(path, module):
            dep = _resolve(name, mods)
            if dep == module:
                continue
            deps.add(dep)
            where = f"{path.relative_to(ROOT)}:{line}"
            if local:
                problems.append(f"{where}: function-local import of {dep}")
            if _layer(dep) > _layer(module):
                problems.append(f"{where}: {module} (layer {LAYERS[_layer(module)]}) imports {dep} "
                                f"(layer {LAYERS[_layer(dep)]})")
        graph[module] = deps
    return graph, problems


def test_imports_follow_the_layer_order():
    _, problems = _graph()
    assert not problems, "\n".join(problems)


def test_no_import_cycles():
    graph, _ = _graph()
    seen, stack, on_stack, cycles = {}, [], set(), []

    def visit(v):                                     # Tarjan's strongly connected components
        seen[v] = low = len(seen)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in seen:
                low = min(low, visit(w))
            elif w in on_stack:
                low = min(low, seen[w])
        if low == seen[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))
        return low

    for v in sorted(graph):
        if v not in seen:
            visit(v)
    assert not cycles, cycles


def _loaded_by(code: str) -> set[str]:
    """Top-level modules loaded by ``code`` in a fresh interpreter (run outside the source
    tree, so that the installed package is imported)."""
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True, cwd=tempfile.gettempdir()).stdout.split()
    return {m.split(".")[0] for m in out}


def test_naming_measures_and_help_load_no_heavy_module():
    heavy = {"numba", "pandas", "h5py", "scipy", "matplotlib", "fastapi", "pyarrow", "joblib"}
    assert not heavy & _loaded_by("import irscale; irscale.parse_measure('nDCG(b=2)@10'); irscale.families()")
    assert not heavy & _loaded_by("from irscale.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n"
                                  "    pass")
    assert not heavy & _loaded_by("from irscale.cli import main\nmain(['measures'])")
    assert "numba" in _loaded_by("import irscale; irscale.scale('P@3')")      # the check can fail


def test_families_are_discovered_one_module_each():
    fams = families()
    folder = ROOT / "scales" / "measures" / "families"
    modules = {p.stem for p in folder.glob("*.py") if p.stem != "__init__" and not p.stem.endswith("_kernels")}
    assert {cls.__module__.rsplit(".", 1)[1] for cls in fams.values()} == modules
    for p in folder.glob("*_kernels.py"):                  # a family's own kernels, beside it
        assert p.stem.removesuffix("_kernels") in modules, p.name
    for name, cls in fams.items():
        assert cls.name == name and irscale.parse_measure(cls.example()).name == name


def test_no_measure_name_tested_outside_its_family():
    names = set(families())
    offenders = []
    for module, path in _modules().items():
        if module.startswith("irscale.scales.measures.families."):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                consts = [s.value for s in sides if isinstance(s, ast.Constant)]
                consts += [e.value for s in sides if isinstance(s, (ast.Tuple, ast.Set, ast.List))
                           for e in s.elts if isinstance(e, ast.Constant)]
                if any(isinstance(s, ast.Attribute) and s.attr == "name" for s in sides) and names & set(consts):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, offenders


def _public_functions(tree: ast.AST, public: bool = True, in_function: bool = False):
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if public and not in_function and not node.name.startswith("_"):
                yield node
            yield from _public_functions(node, False, True)
        elif isinstance(node, ast.ClassDef):
            yield from _public_functions(node, public and not node.name.startswith("_"), in_function)
        else:
            yield from _public_functions(node, public, in_function)


def test_public_functions_have_type_hints():
    missing = []
    for module, path in _modules().items():
        if path.name.endswith("kernels.py") or any(p.startswith("_") and p != "__init__" for p in module.split(".")):
            continue        # numba kernels take what their callers pass; private modules
        for fn in _public_functions(ast.parse(path.read_text())):
            args = [a for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs if a.arg not in ("self", "cls")]
            args += [a for a in (fn.args.vararg, fn.args.kwarg) if a is not None]
            untyped = [a.arg for a in args if a.annotation is None]
            if untyped or fn.returns is None:
                what = ", ".join(untyped + ([] if fn.returns else ["return"]))
                missing.append(f"{path.relative_to(ROOT)}:{fn.lineno} {fn.name}: {what}")
    assert not missing, f"{len(missing)} public functions without type hints:\n" + "\n".join(missing)


def test_no_module_is_over_600_lines():
    lines = {name: len(path.read_text().splitlines()) for name, path in _modules().items()}
    long = {name: n for name, n in lines.items() if n > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines (two concepts each?): {long}"
