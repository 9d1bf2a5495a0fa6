#!/usr/bin/env python3
"""Import circles between a crate's top-level modules.

Usage: scripts/module-cycles.py [SRC_DIR ...]   (default: crates/chef/src)

Reads every .rs file under SRC_DIR, finds the paths it names through `crate::` and
`super::` (in `use` lines and in code, comments and string literals left out), and maps
each to the top-level module it reaches (`crate::session::Chef` from `events.rs` is an
edge events -> session). Prints each strongly connected group of modules with, per edge,
one place that makes it, and exits 1 when there is any; `--edges` prints the whole graph.
Text-based: macros that build paths, and `#[path]` attributes, are not followed.
"""

import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip(text):
    """The source with comments and string/char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "r" and re.match(r'r(#*)"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append(' ""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]) or (c == "'" and text.startswith("'\\", i)):
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            if m:
                out.append("' '")
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def module_path(src, path):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return rel


def use_tree(text, i):
    """The paths of the use tree (or plain path) starting at `text[i]`, and where it ends."""
    paths = []
    i = skip_space(text, i)
    if text[i:i + 1] == "{":
        i += 1
        while True:
            i = skip_space(text, i)
            if text[i:i + 1] == "}":
                return paths, i + 1
            sub, i = use_tree(text, i)
            paths.extend(sub)
            i = skip_space(text, i)
            if text[i:i + 1] == ",":
                i += 1
            elif text[i:i + 1] != "}":
                return paths, i
    m = re.match(IDENT + "|\\*", text[i:])
    if not m:
        return [[]], i
    head, i = m.group(0), i + m.end()
    j = skip_space(text, i)
    if text.startswith("::", j):
        sub, i = use_tree(text, j + 2)
        return [[head] + rest for rest in sub], i
    alias = re.match(r"\s+as\s+(" + IDENT + ")", text[i:])
    if alias:
        return [[head, "as " + alias.group(1)]], i + alias.end()
    return [[head]], i


def skip_space(text, i):
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def root_exports(src):
    """Names `lib.rs` re-exports from a module (`pub use crate::{session::Chef}`): name -> module."""
    lib = os.path.join(src, "lib.rs")
    if not os.path.exists(lib):
        return {}
    text = strip(open(lib, encoding="utf-8").read())
    out = {}
    for m in re.finditer(r"pub\s+use\s+crate\s*::", text):
        for path in use_tree(text, m.end())[0]:
            if len(path) >= 2:
                name = path[-1][3:] if path[-1].startswith("as ") else path[-1]
                out.setdefault(name, path[0])
    return out


def edges_of(src, path):
    text = strip(open(path, encoding="utf-8").read())
    base = module_path(src, path)
    # Inline modules (`mod tests { … }`) deepen the path `super::` starts from.
    inline = []  # (brace depth at which it closes, name)
    depth = 0
    found = []
    line_no = 1
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line_no += 1
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            while inline and inline[-1][0] > depth:
                inline.pop()
        m = re.match(r"mod\s+(" + IDENT + r")\s*\{", text[i:]) if c == "m" else None
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            inline.append((depth + 1, m.group(1)))
        if c in "cs" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_:")):
            m = re.match(r"(crate|(?:super\s*::\s*)+)\s*::\s*", text[i:]) if c == "c" else re.match(r"((?:super\s*::\s*)+)", text[i:])
            if m:
                here = base + [name for _, name in inline]
                if m.group(1) == "crate":
                    prefix = []
                else:
                    ups = m.group(1).count("super")
                    prefix = here[: max(len(here) - ups, 0)] if ups <= len(here) else None
                rest = i + m.end()
                if prefix is not None:
                    if prefix:
                        heads = [prefix[0]]
                    else:
                        heads = [p[0] for p in use_tree(text, rest)[0] if p]
                    for head in heads:
                        found.append((head, line_no))
                i = rest
                continue
        i += 1
    return found


def sccs(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, {})):
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
            out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main(argv):
    show_edges = "--edges" in argv
    srcs = [a for a in argv if not a.startswith("--")] or ["crates/chef/src"]
    status = 0
    for src in srcs:
        modules = set()
        graph = {}
        exports = root_exports(src)
        for root, _, files in os.walk(src):
            for f in sorted(files):
                if f.endswith(".rs"):
                    path = os.path.join(root, f)
                    mp = module_path(src, path)
                    if mp:
                        modules.add(mp[0])
        for root, _, files in os.walk(src):
            for f in sorted(files):
                if not f.endswith(".rs"):
                    continue
                path = os.path.join(root, f)
                mp = module_path(src, path)
                if not mp:
                    continue
                for head, line in edges_of(src, path):
                    head = head if head in modules else exports.get(head, head)
                    if head in modules and head != mp[0]:
                        place = f"{os.path.relpath(path)}:{line}"
                        graph.setdefault(mp[0], {}).setdefault(head, place)
        if show_edges:
            for a in sorted(graph):
                for b in sorted(graph[a]):
                    print(f"{src}: {a} -> {b}  ({graph[a][b]})")
        circles = [c for c in sccs(graph) if len(c) > 1]
        for comp in circles:
            status = 1
            print(f"{src}: circle among {', '.join(comp)}")
            for a in comp:
                for b in sorted(graph.get(a, {})):
                    if b in comp:
                        print(f"  {a} -> {b}  ({graph[a][b]})")
        if not circles:
            print(f"{src}: no import circle between {len(modules)} top-level modules")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
