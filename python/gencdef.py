#!/usr/bin/python3
"""gencdef.py - the Python package's cffi declarations, made from include/shmam.h.

    gencdef.py include/shmam.h > python/shmam/_cdef.py   (make does it)

One fact once: the package declares nothing by hand.  The header is run
through the C preprocessor (its #include lines dropped: cffi knows the
standard integer types), so its #if blocks and macros are the compiler's;
the result is parsed with pycparser (cffi's own parser) and every
declaration is written back out but function bodies (a static inline
function cffi cannot take) and static objects (no symbol in the library).
Its integer object-like macros (AM_MAX_ARGS ...) become cdef #defines.
Whatever declarations the header gains come along unchanged.
"""

import os
import re
import subprocess
import sys
import tempfile

from pycparser import c_ast, c_generator, c_parser

# Types cffi knows but pycparser must be told are types, to parse the header.
KNOWN = ["size_t", "ssize_t", "ptrdiff_t", "intptr_t", "uintptr_t", "wchar_t", "bool"]
KNOWN += [f"{u}int{n}_t" for u in ("", "u") for n in (8, 16, 32, 64)]
PRELUDE = "".join(f"typedef int {t};\n" for t in KNOWN)
# GCC's extensions a declaration may carry, which neither parser takes.
EXTENSIONS = ["-D__attribute__(x)=", "-D__extension__=", "-D__asm__(x)=", "-D__inline__=inline",
              "-D__restrict=restrict"]
CONSTANT = re.compile(r"^#define\s+(AM_\w+)\s+(-?(?:0x[0-9a-fA-F]+|\d+))[uUlL]*\s*$")


def preprocess(text, *flags):
    """The header through `cc -E` (CC from the environment), includes dropped."""
    body = re.sub(r"^\s*#\s*include\b.*$", "", text, flags=re.M)
    cc = os.environ.get("CC", "cc")
    out = subprocess.run([cc, "-E", "-P", "-xc", *EXTENSIONS, *flags, "-"], input=body, text=True,
                         capture_output=True, check=True)
    return out.stdout


def constants(text):
    """The header's integer object-like AM_ macros, as cdef #define lines."""
    macros = preprocess(text, "-dM").splitlines()
    return sorted(f"#define {m.group(1)} {m.group(2)}" for m in map(CONSTANT.match, macros) if m)


def wanted(node):
    """A declaration the library can serve: no function body, nothing static,
    no compile-time assertion."""
    if isinstance(node, (c_ast.FuncDef, getattr(c_ast, "StaticAssert", c_ast.FuncDef))):
        return False
    return not (isinstance(node, c_ast.Decl) and "static" in node.storage)


def system_types(path, body):
    """typedefs for the system's integer types the header uses that cffi does
    not know (pid_t, uid_t, off_t...): the size and signedness the compiler
    gives them, asked of it with the header's own includes."""
    names = sorted(set(re.findall(r"\b([A-Za-z_]\w*_t)\b", body)) - set(KNOWN)
                   - {n for n in re.findall(r"\b\w+\b", body) if n.lower().startswith("am_")})
    if not names:
        return []
    prints = "".join(f'printf("%zu %d\\n", sizeof({n}), ({n})-1 < ({n})0);\n' for n in names)
    with tempfile.TemporaryDirectory() as d:
        c, exe = os.path.join(d, "t.c"), os.path.join(d, "t")
        with open(c, "w") as f:
            f.write(f'#include <stdio.h>\n#include "{os.path.abspath(path)}"\n'
                    f"int main(void)\n{{\n{prints}return 0;\n}}\n")
        subprocess.run([os.environ.get("CC", "cc"), c, "-o", exe], check=True)
        rows = subprocess.run([exe], capture_output=True, text=True, check=True).stdout.split()
    sizes = zip(rows[0::2], rows[1::2])
    return [f"typedef {'' if int(neg) else 'u'}int{8 * int(n)}_t {name};"
            for name, (n, neg) in zip(names, sizes)]


def declarations(path, text):
    """The header's declarations, one per line group, as C text cffi takes:
    first the system types it uses (system_types)."""
    body = preprocess(text)
    extra = system_types(path, body)
    ast = c_parser.CParser().parse(PRELUDE + "\n".join(extra) + "\n" + body, "shmam.h")
    gen = c_generator.CGenerator()
    return extra + [gen.visit(n) + ";" for n in ast.ext[len(KNOWN) + len(extra):] if wanted(n)]


def generate(path):
    """The text of _cdef.py for the header at path."""
    with open(path) as f:
        text = f.read()
    cdef = "\n".join(constants(text) + declarations(path, text))
    return ('"""_cdef.py - made by python/gencdef.py from include/shmam.h: do not edit."""\n\n'
            f"CDEF = r'''\n{cdef}\n'''\n")


if __name__ == "__main__":
    sys.stdout.write(generate(sys.argv[1]))
