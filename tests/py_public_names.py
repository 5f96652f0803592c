"""py_public_names.py - the public names of the Python package, read from its
source (nothing is imported, so no library is loaded): check_man compares
them with man/shmam-python.7.

A name is public if python/shmam/__init__.py puts it in __all__ (assigned or
added to) or binds it at top level without a leading "_": a def, a class, an
assignment, or a `from .module import name`; `from .module import *` brings
that module's __all__, or its public top-level names.  Top-level `if` and
`try` blocks count too.  Plain `import module` binds a module, no API.
Prints the names, one a line, sorted."""
import ast
import os
import sys

PKG = sys.argv[1] if len(sys.argv) > 1 else "python/shmam"


def public(module):
    path = os.path.join(PKG, module + ".py")
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    bound, listed = set(), set()

    def strings(node):
        return {s for s in ast.literal_eval(node)}

    def walk(nodes):
        for n in nodes:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(n.name)
            elif isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                for g in n.targets if isinstance(n, ast.Assign) else [n.target]:
                    if isinstance(g, ast.Name) and g.id == "__all__":
                        listed.update(strings(n.value))
                    elif isinstance(g, ast.Name):
                        bound.add(g.id)
            elif isinstance(n, ast.Expr) and isinstance(n.value, ast.Call):
                f = n.value.func  # __all__.append("x"), __all__.extend([...])
                if (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                        and f.value.id == "__all__" and n.value.args):
                    v = ast.literal_eval(n.value.args[0])
                    listed.update([v] if isinstance(v, str) else v)
            elif isinstance(n, ast.ImportFrom):
                for a in n.names:
                    if a.name == "*" and n.level == 1:
                        bound.update(public(n.module))
                    else:
                        bound.add(a.asname or a.name)
            elif isinstance(n, ast.If):
                walk(n.body)
                walk(n.orelse)
            elif isinstance(n, ast.Try):
                walk(n.body)
                walk(n.orelse)
                walk(n.finalbody)
                for h in n.handlers:
                    walk(h.body)

    walk(tree.body)
    if module != "__init__" and listed:
        return listed
    return listed | {b for b in bound if not b.startswith("_")}


print("\n".join(sorted(public("__init__"))))
