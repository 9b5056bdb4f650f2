"""The user guide's code runs: every ```python block of each docs/ page, in
order, in one fresh process per page (so functions defined in a page are in
its __main__, as in a user's script)."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(p.name for p in DOCS.glob("*.md") if p.name != "README.md")
# (a closing fence is ``` alone on its line: CommonMark does not close a
# block with "``` text", test_code_fences_close)
BLOCK = re.compile(r"^```python\n(.*?)^```[ \t]*$", re.S | re.M)
FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
MARKDOWN = sorted(p.relative_to(ROOT).as_posix() for p in
                  [*DOCS.glob("*.md"), *ROOT.glob("*.md"), *ROOT.glob("examples/**/*.md")])


def blocks(page):
    return BLOCK.findall((DOCS / page).read_text())


def fence_problems(text):
    """(line number, line) of each line inside a fenced code block that
    starts like its closing fence but has text after it (CommonMark, and so
    GitHub, keeps the block open there: the text and what follows render as
    code), and of the opening line of a block never closed."""
    problems = []
    opened = None  # (fence character, its count, line number)
    for no, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if opened is None:
            if m:
                opened = (m.group(2)[0], len(m.group(2)), no)
        elif m and m.group(2)[0] == opened[0] and len(m.group(2)) >= opened[1]:
            if m.group(3).strip():
                problems.append((no, line))
                return problems
            opened = None
    if opened is not None:
        problems.append((opened[2], "(a block opened here is never closed)"))
    return problems


def test_fence_problems_finds_text_after_a_closing_fence():
    assert fence_problems("```python\nx = 1\n```\n\nText.\n") == []
    assert fence_problems("```python\nx = 1\n``` From a shell:\n\n```sh\nls\n```\n") == \
        [(3, "``` From a shell:")]
    assert fence_problems("```python\nx = 1\n") == [(1, "(a block opened here is never closed)")]
    # a longer fence holds shorter ones; ~~~ and ``` do not close each other
    assert fence_problems("````md\n```python\n```\n````\n~~~\n```x\n~~~\n") == []


@pytest.mark.parametrize("page", MARKDOWN)
def test_code_fences_close(page):
    """docs/caching.md had "``` From a shell:" as a closing fence, which
    CommonMark does not close: the rest of the page rendered as code."""
    assert fence_problems((ROOT / page).read_text()) == [], page


CONFLICT = re.compile(r"^(<{7}|>{7}|={7}$|\|{7} )|(<{7}|>{7}) /tmp/", re.M)


@pytest.mark.parametrize("page", MARKDOWN)
def test_no_merge_conflict_markers(page):
    """ARCHITECTURE.md kept a 3-way merge's markers in the middle of a line
    (stop 56): a page with them reads as two versions glued together."""
    text = (ROOT / page).read_text()
    found = [(no, line[:80]) for no, line in enumerate(text.splitlines(), 1)
             if CONFLICT.search(line)]
    assert found == [], page


def test_every_page_is_in_the_index():
    index = (DOCS / "README.md").read_text()
    for page in PAGES:
        assert f"({page})" in index, f"docs/README.md does not link {page}"


@pytest.mark.parametrize("page", PAGES)
def test_page_code_runs(page, tmp_path):
    code = blocks(page)
    assert code, f"{page} has no python block"
    if any("import dask" in c for c in code):
        pytest.importorskip("dask.distributed")
    script = tmp_path / ("doc_" + page.replace(".md", ".py").replace("-", "_"))
    parts = []
    for i, c in enumerate(code):
        parts.append(f"# ---- block {i + 1} of {page}\n{c}")
    script.write_text("\n".join(parts))
    env = dict(os.environ)
    env.setdefault("PARPY_DOCS_TEST", "1")
    r = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True,
                       text=True, timeout=300, env=env)
    assert r.returncode == 0, f"{page}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
