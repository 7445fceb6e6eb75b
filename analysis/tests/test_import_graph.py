"""The analysis package's import graph has no cycle: nothing imports upward.

The graph is read from the source (ast), not from a running interpreter, so that an import deferred into
a function body (the usual way to hide a cycle from Python) is an edge like any other. Edges:
- every `import` / `from ... import` anywhere in a module, relative or absolute, into the package; a
  name imported from a package is an edge to its submodule when one of that name exists, else to the
  package's __init__;
- a package whose __init__ imports its modules by discovery (pkgutil.iter_modules + importlib, as
  sections/ does in load()): a module outside it that imports it depends on each of those modules,
  since calling into the package is what imports them. The package's own modules import its registry
  (register, FamilySection) and are not made to depend on each other that way.
A package's submodule does not depend on the package's __init__ merely by being in it (Python runs
the __init__ first; that is containment, not a layer).

Run as a script to print the layering: python3 analysis/tests/test_import_graph.py
"""
from __future__ import annotations

import ast
import pathlib
import sys
from typing import Dict, List, Set

PACKAGE_DIR = pathlib.Path(__file__).resolve().parent.parent / "gpuprobe_analysis"


def _modules(package_dir: pathlib.Path) -> Dict[str, pathlib.Path]:
    """Dotted name relative to the package ('' for its __init__, 'sections' for sections/__init__.py)."""
    out = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_package(name: str, modules: Dict[str, pathlib.Path]) -> bool:
    return modules[name].name == "__init__.py"


def _discovers_modules(tree: ast.AST) -> bool:
    """An __init__ that imports its package's modules by name: pkgutil.iter_modules and importlib."""
    called = {n.func.attr for n in ast.walk(tree)
              if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    return {"iter_modules", "import_module"} <= called


def import_graph(package_dir: pathlib.Path = PACKAGE_DIR) -> Dict[str, Set[str]]:
    """module -> the package's modules it imports (see the module's docstring for what is an edge)."""
    modules = _modules(package_dir)
    root = package_dir.name
    graph: Dict[str, Set[str]] = {m: set() for m in modules}
    discovering = set()
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        own_package = name if _is_package(name, modules) else name.rpartition(".")[0]
        if _is_package(name, modules) and _discovers_modules(tree):
            discovering.add(name)
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [(a.name, None) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = own_package.split(".") if own_package else []
                    up = node.level - 1
                    if up > len(base):
                        raise ValueError(f"{path}: relative import above the package")
                    base = base[:len(base) - up]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                    if target != root and not target.startswith(root + "."):
                        continue
                    target = target[len(root) + 1:] if target != root else ""
                targets = [(target, [a.name for a in node.names])]
            for target, names in targets:
                if isinstance(node, ast.Import):
                    if target != root and not target.startswith(root + "."):
                        continue
                    target = target[len(root) + 1:] if target != root else ""
                if target not in modules:
                    raise ValueError(f"{path}: imports {target!r}, which is no module of the package")
                subs = [f"{target}.{n}" if target else n for n in (names or [])]
                found = [s for s in subs if s in modules]
                graph[name].update(found)
                if len(found) < len(subs) or not names:  # names defined in the target itself
                    graph[name].add(target)
    for pkg in discovering:
        members = [m for m in modules if m.startswith(pkg + ".") and not m.rpartition(".")[2].startswith("_")]
        for name, deps in graph.items():
            if pkg in deps and not (name == pkg or name.startswith(pkg + ".")):
                deps.update(members)
    for name in graph:
        graph[name].discard(name)
    return graph


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    out: List[List[str]] = []
    counter = [0]

    def visit(v: str):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(1000, 10 * len(graph)))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def layers(graph: Dict[str, Set[str]]) -> Dict[str, int]:
    """Layer 0: imports no module of the package; else one above the highest module it imports. Needs
    an acyclic graph."""
    out: Dict[str, int] = {}

    def layer(v: str) -> int:
        if v not in out:
            out[v] = 1 + max((layer(w) for w in graph[v]), default=-1)
        return out[v]

    for v in graph:
        layer(v)
    return out


def layering_text(graph: Dict[str, Set[str]]) -> str:
    by_layer: Dict[int, List[str]] = {}
    for m, n in layers(graph).items():
        by_layer.setdefault(n, []).append(m or "__init__")
    return "\n".join(f"layer {n}: {', '.join(sorted(ms))}" for n, ms in sorted(by_layer.items()))


def test_no_import_cycle():
    graph = import_graph()
    found = cycles(graph)
    assert not found, "modules of gpuprobe_analysis import each other in a cycle:\n" + "\n".join(
        " <-> ".join(c) + "\n  " + "\n  ".join(f"{m} imports {sorted(graph[m] & set(c))}" for m in c) for c in found)
    print("\n" + layering_text(graph))


# The layers (docs/analysis.md): the report and the commands on top; the sections (sections/) below them;
# everything else at the bottom (formatting, figure primitives, fits, levels, TLB fitting, records,
# results, families, ceilings, the roofline's arithmetic).
TOP = {"report", "cli", "__main__", "compare", "audit"}


def layer_of(module: str) -> str:
    if module in TOP:
        return "top"
    return "sections" if module == "sections" or module.startswith("sections.") else "bottom"


def upward_imports(graph: Dict[str, Set[str]]) -> List[str]:
    """Every import of a module from a layer above its own, as "module (layer) imports module (layer)"."""
    rank = {"bottom": 0, "sections": 1, "top": 2}
    return [f"{m} ({layer_of(m)}) imports {d} ({layer_of(d)})" for m in sorted(graph) for d in sorted(graph[m])
            if rank[layer_of(d)] > rank[layer_of(m)]]


def test_nothing_imports_upward():
    found = upward_imports(import_graph())
    assert not found, "imports from a higher layer:\n" + "\n".join(found)


def test_an_upward_import_is_found(tmp_path):
    pkg = _write(tmp_path, {
        "__init__.py": "", "report.py": "from . import plots\n",
        "plots.py": "def f():\n    from .sections import tensor  # a figure primitive reaching up\n",
        "sections/__init__.py": "", "sections/tensor.py": "from ..report import x\n",
    })
    assert upward_imports(import_graph(pkg)) == ["plots (bottom) imports sections.tensor (sections)",
                                                 "sections.tensor (sections) imports report (top)"]


def _write(root: pathlib.Path, files: Dict[str, str]) -> pathlib.Path:
    pkg = root / "pkg"
    for rel, text in files.items():
        p = pkg / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return pkg


def test_a_cycle_through_a_deferred_import_is_found(tmp_path):
    pkg = _write(tmp_path, {
        "__init__.py": "",
        "low.py": "def f():\n    from .high import g  # deferred: still an edge\n",
        "high.py": "from . import low\n",
        "top.py": "from pkg.high import g\n",
    })
    graph = import_graph(pkg)
    assert graph["top"] == {"high"}
    assert cycles(graph) == [["high", "low"]]


def test_a_cycle_through_a_discovering_package_is_found(tmp_path):
    discovering_init = ("import importlib, pkgutil\n"
                        "def register(x):\n    pass\n"
                        "def load():\n"
                        "    for m in pkgutil.iter_modules(__path__):\n"
                        "        importlib.import_module(f'{__name__}.{m.name}')\n")
    pkg = _write(tmp_path, {
        "__init__.py": "",
        "figures.py": "from . import core\n",
        "core.py": "def f():\n    from .sections import load\n",  # the core calls up into the sections
        "sections/__init__.py": discovering_init,
        "sections/one.py": "from . import register\nfrom .. import figures\n",
        "sections/_private.py": "",
    })
    graph = import_graph(pkg)
    assert graph["sections.one"] == {"sections", "figures"}  # its registry, not the other sections
    assert graph["core"] == {"sections", "sections.one"}     # load() imports sections.one, not _private
    assert cycles(graph) == [["core", "figures", "sections.one"]]
    # Without the upward call the same package is layered.
    (pkg / "core.py").write_text("")
    graph = import_graph(pkg)
    assert cycles(graph) == []
    assert layers(graph)["sections.one"] == 2


if __name__ == "__main__":
    g = import_graph(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE_DIR)
    c = cycles(g)
    for comp in c:
        print("cycle:", " <-> ".join(comp))
    if not c:
        print(layering_text(g))
    sys.exit(1 if c else 0)
