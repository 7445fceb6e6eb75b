"""No function or class of the analysis package is longer than MAX_LINES: a section that grows past it
is split where its parts are independent (the issue that moved the profile into sections/)."""
import ast
import pathlib

PACKAGE_DIR = pathlib.Path(__file__).resolve().parent.parent / "gpuprobe_analysis"
MAX_LINES = 200


def long_definitions(package_dir: pathlib.Path = PACKAGE_DIR, limit: int = MAX_LINES):
    """(lines, "path:name") of every function or class over `limit` lines, nested ones included."""
    out = []
    for path in sorted(package_dir.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                lines = node.end_lineno - first + 1
                if lines > limit:
                    out.append((lines, f"{path.relative_to(package_dir)}:{node.name}"))
    return sorted(out, reverse=True)


def test_no_function_or_class_is_over_the_limit():
    found = long_definitions()
    assert not found, f"over {MAX_LINES} lines: " + ", ".join(f"{name} ({n})" for n, name in found)


def test_a_long_function_is_found(tmp_path):
    body = "\n".join(f"        x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "m.py").write_text(f"def short():\n    pass\n\n\nclass Long:\n    def f(self):\n{body}\n")
    assert [name for _, name in long_definitions(tmp_path)] == ["m.py:Long", "m.py:f"]


if __name__ == "__main__":
    for n, name in long_definitions(limit=0)[:5]:
        print(f"{n:5d} {name}")
