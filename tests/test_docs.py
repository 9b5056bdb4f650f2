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
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks(page):
    return BLOCK.findall((DOCS / page).read_text())


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
