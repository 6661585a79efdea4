"""Shape metrics of the package source, for before/after comparisons of a refactoring.

    python scripts/house_metrics.py [ROOT] [--json]

ROOT is a checkout (default: this one). Everything is counted from the source text and
its syntax tree (no import of the package), so two commits are measured the same way:

* lines and modules per folder (``.py`` files of the package folders: irscale/,
  enumerate/, scales/ and its subfolders, store/);
* kind-dispatch sites: branch points whose condition reads the kind of a measure or of a
  table: an ``if``/``elif``/``while``/conditional expression/``assert``/comprehension
  condition or a boolean operand that mentions one of the attributes
  ``value_kind run_space rb_dependent stratified counts_keyed layout implicit
  strata_kind per_grade_rb``, compares ``.levels`` with 2 (binary or graded),
  compares a ``.name``/``.kernel`` to a string, or calls ``isinstance`` with a class whose
  name ends in Key, Table, Scale or Measure. Each such condition counts once; numba
  kernel modules (``*kernels.py``, whose flags describe array layouts) are left out.
  Sites inside scales/measures (the measures' own wing, where a kind defines itself) are
  counted apart from the sites elsewhere (where a measure's kind leaks into other code);
* function-local imports of the package (``import irscale...`` inside a function);
* imports against the layer order errors < enumerate < scales.measures < scales.tables <
  store < scales.runs < scales.analysis < irscale (the flat scales/ modules of earlier
  commits are mapped to their wing, see :data:`FLAT_SCALES`);
* import cycles: strongly connected components of the module import graph (static
  imports, function-local ones included; ``lazy_module("irscale...")`` counts as an
  import), each listed with its modules.
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import defaultdict
from pathlib import Path

PACKAGE_DIRS = {"irscale": "irscale", "enumerate": "irscale.enumerate", "scales": "irscale.scales",
                "store": "irscale.store"}
KIND_ATTRS = {"value_kind", "run_space", "rb_dependent", "stratified", "counts_keyed", "layout", "implicit",
              "strata_kind", "per_grade_rb"}
KIND_CLASS_SUFFIXES = ("Key", "Table", "Scale", "Measure")

#: Layers of the pipeline, lowest first (a module may import its own layer and lower ones).
LAYERS = ["irscale.errors", "irscale.enumerate", "irscale.scales.measures", "irscale.scales.tables",
          "irscale.store", "irscale.scales.runs", "irscale.scales.analysis", "irscale"]
#: Modules every layer may import (exceptions and the version string).
BASE = {"irscale.errors", "irscale.version"}
#: Where the modules of the flat scales/ folder (before the house issue) belong.
FLAT_SCALES = {
    "measures": ["defs", "measure", "registry", "parse", "keys", "split", "fraction_measure", "truncated_measure",
                 "twist", "utility"],
    "tables": ["build", "certify", "scale", "lookup_kernels", "fraction_table", "formal_table"],
    "runs": ["trec", "transform"],
    "analysis": ["agreement", "significance", "spacing", "spacing_kernels", "axioms", "axioms_kernels", "figures",
                 "report", "analyze"],
}


def layer(module: str) -> int:
    """Index of a module's layer in :data:`LAYERS` (the flat scales/ modules mapped by
    :data:`FLAT_SCALES`; the scales package itself counts as the measures layer)."""
    if module in BASE:
        return 0
    parts = module.split(".")
    if parts[:2] == ["irscale", "scales"] and len(parts) >= 3:
        for wing, names in FLAT_SCALES.items():
            if parts[2] in names:
                module = "irscale.scales." + wing
    if module == "irscale.scales":
        module = "irscale.scales.measures"
    best = -1
    for i, prefix in enumerate(LAYERS):
        if (module == prefix or module.startswith(prefix + ".")) and (best < 0 or len(prefix) > len(LAYERS[best])):
            best = i
    return best


def modules(root: Path) -> dict[str, Path]:
    """Module name -> file, for every .py file of the package folders."""
    out = {}
    for folder, package in PACKAGE_DIRS.items():
        base = root / folder
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            out[".".join([package, *parts])] = path
    return out


def _mentions_kind(node: ast.AST) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr in KIND_ATTRS:
            return True
        if isinstance(sub, ast.Name) and sub.id in KIND_ATTRS:
            return True
        if isinstance(sub, ast.Compare):
            sides = [sub.left, *sub.comparators]
            if any(isinstance(s, ast.Attribute) and s.attr == "levels" for s in sides) and \
                    any(isinstance(s, ast.Constant) and s.value == 2 for s in sides):
                return True                      # binary or graded

            if any(isinstance(s, ast.Attribute) and s.attr in ("name", "kernel") for s in sides) and \
                    any(isinstance(s, ast.Constant) and isinstance(s.value, str) for s in sides):
                return True
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "isinstance" \
                and len(sub.args) == 2:
            classes = sub.args[1].elts if isinstance(sub.args[1], ast.Tuple) else [sub.args[1]]
            for c in classes:
                name = c.attr if isinstance(c, ast.Attribute) else getattr(c, "id", "")
                if name.endswith(KIND_CLASS_SUFFIXES):
                    return True
    return False


def dispatch_sites(tree: ast.AST) -> list[int]:
    """Line numbers of the kind-dispatch conditions of a module (see the docstring)."""
    lines = []
    for node in ast.walk(tree):
        tests = []
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            tests.append(node.test)
        elif isinstance(node, ast.comprehension):
            tests.extend(node.ifs)
        for t in tests:
            if _mentions_kind(t):
                lines.append(t.lineno)
    return sorted(set(lines))


def _imports(tree: ast.AST, module: str, is_package: bool):
    """(imported module, function-local?) for every import of the package in a module."""
    func_spans = [(n.lineno, n.end_lineno) for n in ast.walk(tree)
                  if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]

    def local(lineno):
        return any(a < lineno <= b for a, b in func_spans)

    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("irscale"):
                    out.append((alias.name, local(node.lineno)))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = module.split(".") if is_package else module.split(".")[:-1]
                pkg = pkg[: len(pkg) - node.level + 1]
                base = ".".join(pkg + ([base] if base else []))
            if base.startswith("irscale"):
                for alias in node.names:
                    out.append((f"{base}.{alias.name}", local(node.lineno)))
        elif isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            fname = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            if fname == "lazy_module" and node.args and isinstance(node.args[0], ast.Constant) \
                    and str(node.args[0].value).startswith("irscale"):
                out.append((node.args[0].value, False))
    return out


def _resolve(name: str, known: set[str]) -> str | None:
    """The module an imported name lives in (``irscale.a.b.f`` -> ``irscale.a.b``)."""
    while name:
        if name in known:
            return name
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return None


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _in_measures(path: str) -> bool:
    """Whether a file belongs to the measures' own modules (old flat layout included)."""
    parts = Path(path).parts
    if parts[:2] == ("scales", "measures"):
        return True
    return len(parts) >= 2 and parts[0] == "scales" and (parts[1] == "defs" or Path(parts[1]).stem in
                                                          FLAT_SCALES["measures"])


def measure(root: Path) -> dict:
    mods = modules(root)
    known = set(mods)
    per_folder: dict[str, dict] = defaultdict(lambda: {"modules": 0, "lines": 0})
    sites: dict[str, list[int]] = {}
    local_imports: dict[str, int] = {}
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in mods.items():
        text = path.read_text()
        tree = ast.parse(text)
        folder = str(path.parent.relative_to(root))
        per_folder[folder]["modules"] += 1
        per_folder[folder]["lines"] += len(text.splitlines())
        s = [] if path.name.endswith("kernels.py") else dispatch_sites(tree)
        if s:
            sites[str(path.relative_to(root))] = s
        is_pkg = path.name == "__init__.py"
        n_local = 0
        for target, is_local in _imports(tree, name, is_pkg):
            n_local += is_local
            dep = _resolve(target, known)
            if dep is not None and dep != name:
                graph[name].add(dep)
        if n_local:
            local_imports[str(path.relative_to(root))] = n_local
    upward = sorted(f"{a} -> {b}" for a, deps in graph.items() for b in deps if layer(b) > layer(a))
    return {
        "upward_imports": upward,
        "folders": dict(sorted(per_folder.items())),
        "total_lines": sum(f["lines"] for f in per_folder.values()),
        "total_modules": sum(f["modules"] for f in per_folder.values()),
        "dispatch_sites": sum(len(v) for v in sites.values()),
        "dispatch_files": len(sites),
        "dispatch_outside_measures": sum(len(v) for k, v in sites.items() if not _in_measures(k)),
        "dispatch_files_outside_measures": sum(1 for k in sites if not _in_measures(k)),
        "dispatch_by_file": {k: len(v) for k, v in sorted(sites.items(), key=lambda kv: -len(kv[1]))},
        "local_imports": sum(local_imports.values()),
        "local_imports_by_file": dict(sorted(local_imports.items(), key=lambda kv: -kv[1])),
        "cycles": cycles(graph),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", default=str(Path(__file__).resolve().parents[1]))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    m = measure(Path(args.root))
    if args.json:
        print(json.dumps(m, indent=2))
        return 0
    print(f"{args.root}: {m['total_modules']} modules, {m['total_lines']} lines")
    for folder, f in m["folders"].items():
        print(f"  {folder:28s} {f['modules']:3d} modules {f['lines']:6d} lines")
    print(f"kind-dispatch sites: {m['dispatch_sites']} in {m['dispatch_files']} files; outside the measures' "
          f"own modules: {m['dispatch_outside_measures']} in {m['dispatch_files_outside_measures']} files")
    for f, c in list(m["dispatch_by_file"].items())[:12]:
        print(f"  {c:3d}  {f}")
    print(f"function-local irscale imports: {m['local_imports']}")
    for f, c in list(m["local_imports_by_file"].items())[:8]:
        print(f"  {c:3d}  {f}")
    print(f"imports against the layer order: {len(m['upward_imports'])}")
    for u in m["upward_imports"][:12]:
        print("  " + u)
    print(f"import cycles: {len(m['cycles'])}")
    for c in m["cycles"]:
        print("  " + " <-> ".join(c))
    return 0


if __name__ == "__main__":
    sys.exit(main())
