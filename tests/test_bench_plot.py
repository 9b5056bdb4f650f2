"""benchmarks/plot.py: ratios to the best peer of the same run, drawn as PNG."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import plot  # noqa: E402


ROWS = [
    {"bench": "C3", "system": "parpy", "median_s": 2.0e-3},
    {"bench": "C3", "system": "numpy", "median_s": 8.0e-3},
    {"bench": "C3", "system": "numba", "median_s": 4.0e-3},
    {"bench": "C1", "system": "parpy (specialize_scalars=True)", "median_s": 5e-7},
    {"bench": "C1", "system": "parpy (specialize_scalars=False)", "median_s": 6e-7},
    {"bench": "C1", "system": "numba", "median_s": 4e-7},
    {"bench": "C2", "system": "parpy (empty cache)", "median_s": 0.07, "unit": "first call"},
    {"bench": "C2", "system": "numba (empty cache)", "median_s": 1.0, "unit": "first call"},
    {"bench": "G10", "system": "parpy", "value": 0.025, "unit": "ms"},
    {"bench": "G10", "system": "cuSPARSE", "value": 0.040, "unit": "ms"},
    {"bench": "G3", "system": "parpy", "value": 1.9, "unit": "ms"},
]


def test_ratios_to_the_best_peer():
    pts, alone = plot.ratios(ROWS)
    got = {b: (round(v, 6), peer) for b, v, peer in pts}
    assert got == {"C1": (1.25, "numba"), "C3": (0.5, "numba"), "G10": (0.625, "cuSPARSE")}
    assert [b for b, _, _ in pts] == ["C1", "C3", "G10"]
    assert sorted(alone) == ["G3"]


def test_plot_writes_png(tmp_path):
    pytest.importorskip("matplotlib")
    src = tmp_path / "cpu.jsonl"
    src.write_text("not json\n" + "\n".join(json.dumps(r) for r in ROWS) + "\n| table |\n")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "plot.py"), str(src),
                        "--out", str(tmp_path / "out")], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    png = tmp_path / "out" / "cpu.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "C3 0.50x" in r.stdout


def test_the_last_row_of_each_system_counts(tmp_path):
    # run.py prints one row per round, each pooling the samples so far
    src = tmp_path / "rounds.jsonl"
    rounds = [
        {"bench": "C7", "system": "parpy", "median_s": 0.020},
        {"bench": "C7", "system": "numba", "median_s": 0.040},
        {"bench": "C7", "system": "parpy", "median_s": 0.030},
        {"bench": "C7", "system": "numba", "median_s": 0.030},
    ]
    src.write_text("\n".join(json.dumps(r) for r in rounds) + "\n")
    rows = plot.read_rows(str(src))
    assert [(r["system"], r["median_s"]) for r in rows] == [("parpy", 0.030), ("numba", 0.030)]
    pts, _ = plot.ratios(rows)
    assert pts == [("C7", 1.0, "numba")]
