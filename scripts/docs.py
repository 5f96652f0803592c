#!/usr/bin/python3
"""docs.py - the documentation's code is the examples' code, and its links lead somewhere.

The pages are README.md and every docs/**/*.md.  A code block in C or Python
(a fence opened with ```c or ```python) is an example: the line before its
fence is `<!-- example: examples/NAME -->`, and the block holds that file,
byte for byte.  The files are what `make check` builds and runs
(tests/check_examples.c), so an example in the docs cannot drift from the API:
edit the file, then `scripts/docs.py --write` copies it into every page that
shows it.  Blocks of other kinds (sh, text) are commands and figures.

    scripts/docs.py --examples   every example block is its file (exit 1 if not)
    scripts/docs.py --links      every relative link resolves to a file of the
                                 tree, and an #anchor into a page to a heading
    scripts/docs.py --write      rewrite every example block from its file

Run from anywhere; paths are the tree's.
"""
import glob
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = re.compile(r"^<!-- example: (\S+) -->$")
FENCE = re.compile(r"^```(\S*)\s*$")
EXAMPLE_LANGS = ("c", "python")
# A page another change is writing: a link to it is taken as resolving while
# it is not in the tree yet, this name only.
PENDING = {"docs/services.md"}


def pages():
    found = ["README.md"] + sorted(glob.glob("docs/**/*.md", root_dir=TOP, recursive=True))
    return [p for p in found if os.path.isfile(os.path.join(TOP, p))]


def read(rel):
    with open(os.path.join(TOP, rel)) as f:
        return f.read()


def blocks(text):
    """(mark, lang, first, end, body) of each fenced block: mark is the
    example's path or None, first and end the body's line range, 0-based."""
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j] != "```":
            j += 1
        mark = MARK.match(lines[i - 1]) if i > 0 else None
        out.append((mark.group(1) if mark else None, m.group(1), i + 1, j, "\n".join(lines[i + 1:j])))
        i = j + 1
    return out


def check_examples():
    bad = 0
    for page in pages():
        text = read(page)
        marks = sum(1 for l in text.split("\n") if MARK.match(l))
        shown = 0
        for mark, lang, first, end, body in blocks(text):
            where = "%s:%d" % (page, first)
            if mark is None:
                if lang in EXAMPLE_LANGS:
                    print("%s: a %s block that is no example file: put it in examples/ and "
                          "mark it <!-- example: examples/NAME -->" % (where, lang))
                    bad += 1
                continue
            shown += 1
            path = os.path.join(TOP, mark)
            if not mark.startswith("examples/") or not os.path.isfile(path):
                print("%s: %s is not a file under examples/" % (where, mark))
                bad += 1
            elif body + "\n" != read(mark):
                print("%s: the block differs from %s (scripts/docs.py --write copies the file)" % (where, mark))
                bad += 1
        if shown != marks:
            print("%s: %d example marks are not right before a block's fence" % (page, marks - shown))
            bad += 1
    return bad


def write_examples():
    for page in pages():
        text = read(page)
        lines = text.split("\n")
        for mark, lang, first, end, body in reversed(blocks(text)):
            if mark and os.path.isfile(os.path.join(TOP, mark)):
                lines[first:end] = read(mark).rstrip("\n").split("\n")
        new = "\n".join(lines)
        if new != text:
            with open(os.path.join(TOP, page), "w") as f:
                f.write(new)
            print("docs.py: wrote", page)
    return 0


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces
    to hyphens."""
    h = re.sub(r"[`*_]|<[^>]*>", "", heading.strip().lower())
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(rel):
    text = read(rel)
    heads = [l.lstrip("#") for l in text.split("\n") if re.match(r"#{1,6} ", l)]
    return {slug(h) for h in heads}


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def check_links():
    bad = 0
    for page in pages():
        text = re.sub(r"```.*?```", "", read(page), flags=re.S)  # links in code are code
        text = re.sub(r"`[^`\n]*`", "", text)
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue  # http:, https:, mailto:
            path, _, anchor = target.partition("#")
            rel = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if rel.startswith(".."):
                print("%s: %s leaves the tree" % (page, target))
                bad += 1
            elif not os.path.exists(os.path.join(TOP, rel)):
                if rel not in PENDING:
                    print("%s: %s: no such file %s" % (page, target, rel))
                    bad += 1
            elif anchor and rel.endswith(".md") and anchor not in anchors(rel):
                print("%s: %s: %s has no heading #%s" % (page, target, rel, anchor))
                bad += 1
    return bad


def main(argv):
    if argv == ["--write"]:
        return write_examples()
    if argv == ["--examples"]:
        bad = check_examples()
    elif argv == ["--links"]:
        bad = check_links()
    else:
        print(__doc__.strip().split("\n\n")[2], file=sys.stderr)
        return 2
    print("docs.py %s: %d pages, %d problems" % (argv[0], len(pages()), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
