#!/usr/bin/env python3
"""Import circles between the Rust files of the workspace.

    python scripts/module_cycles.py        # prints the circles; exit 1 if any

A file names another when it uses a path into it (`use crate::ir::visit::..`,
`crate::ir::eval::f(..)`, `super::..`, grouped `use` trees included). A path
names the deepest module file it reaches (an item re-exported by a folder's
mod.rs names that mod.rs). A folder's mod.rs naming files of its own folder
does not count; lib.rs gets no exemption; test code (`tests.rs`,
`testutil.rs`, `#[cfg(test)]` modules at the end of a file) is left out.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def module_of(src: pathlib.Path, f: pathlib.Path) -> tuple:
    parts = list(f.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return tuple(parts)


def strip(text: str) -> str:
    text = re.sub(r"//[^\n]*", "", text)
    cut = re.search(r"#\[cfg\(test\)\]\s*(pub(\([a-z]+\))?\s+)?mod\s+\w+\s*\{", text)
    if cut:
        text = text[: cut.start()]
    return text


def use_paths(tree: str, prefix: list) -> list:
    """Expands a `use` tree (`a::{b, c::{d}}`) into paths."""
    tree = tree.strip()
    i = tree.find("{")
    if i < 0:
        return [prefix + [p for p in tree.split(" as ")[0].split("::") if p]]
    head = [p for p in tree[:i].split("::") if p]
    body = tree[i + 1: tree.rfind("}")]
    out, depth, start = [], 0, 0
    for k, c in enumerate(body + ","):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            part = body[start:k].strip()
            if part:
                out += use_paths(part, prefix + head)
            start = k + 1
    return out


def paths_in(text: str) -> list:
    paths = []
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        paths += use_paths(m.group(1), [])
    for m in re.finditer(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)", text):
        paths.append(m.group(1).split("::"))
    return paths


def resolve(path: list, here: tuple, is_dir_module: bool, modules: dict):
    if not path:
        return None
    if path[0] == "crate":
        base, rest = (), path[1:]
    elif path[0] in ("super", "self"):
        base = here if is_dir_module else here[:-1]
        rest = path
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
    else:
        return None
    best = modules.get(base)
    cur = base
    for p in rest:
        cur = cur + (p,)
        if cur in modules:
            best = modules[cur]
        else:
            break
    return best


def cycles_of_crate(src: pathlib.Path) -> list:
    files = [f for f in src.rglob("*.rs") if f.name not in ("tests.rs", "testutil.rs")]
    modules = {module_of(src, f): f for f in files}
    edges = {f: set() for f in files}
    for f in files:
        here = module_of(src, f)
        is_dir = f.name in ("mod.rs", "lib.rs")
        for p in paths_in(strip(f.read_text())):
            g = resolve(p, here, is_dir, modules)
            if g is None or g == f:
                continue
            if f.name == "mod.rs" and f.parent in g.parents:
                continue  # a folder's mod.rs naming its own files
            edges[f].add(g)
    # strongly connected components (Tarjan)
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
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
                out.append(sorted(str(c.relative_to(ROOT)) for c in comp))

    sys.setrecursionlimit(10000)
    for v in files:
        if v not in index:
            visit(v)
    return out


def main() -> int:
    circles = []
    for src in sorted(ROOT.glob("crates/*/src")):
        circles += cycles_of_crate(src)
    for c in circles:
        print("circle:", " <-> ".join(c))
    print(f"module_cycles: {len(circles)}")
    return 1 if circles else 0


if __name__ == "__main__":
    sys.exit(main())
