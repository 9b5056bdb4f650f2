"""No import circles between the Rust files of the workspace
(scripts/module_cycles.py; the layer order itself is
crates/parpy-core/tests/layers.rs)."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_no_import_circles_between_files():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "module_cycles.py")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith("module_cycles: 0"), r.stdout
