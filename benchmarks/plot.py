"""Draws benchmark results as PNG files: for each workload, parpy's time as a
ratio to the best peer measured in the same run (log scale; below 1 means
parpy is faster).

    python benchmarks/run.py > cpu.jsonl
    python benchmarks/gpu.py > gpu.jsonl
    python benchmarks/plot.py cpu.jsonl gpu.jsonl --out benchmarks/plots

Reads the JSON lines both runners print (other lines are ignored) and writes
one PNG per input file (`cpu.png`, `gpu.png`, named after the input) into
--out. Workloads without a peer in the file are left out of the picture and
listed on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Dict, List, Optional, Tuple


def read_rows(path: str) -> List[dict]:
    """The timing rows of a run, the last one of each (bench, system): run.py
    prints a row per round, each with the samples pooled so far."""
    rows: Dict[Tuple[str, str], dict] = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "bench" in row and "system" in row:
                rows[(row["bench"], row["system"])] = row
    return list(rows.values())


def value_of(row: dict) -> Optional[float]:
    for k in ("median_s", "value"):
        if isinstance(row.get(k), (int, float)):
            return float(row[k])
    return None


def ratios(rows: List[dict]) -> Tuple[List[Tuple[str, float, str]], List[str]]:
    """[(workload, parpy / best peer, best peer's name)], [workloads without a peer].
    Rows that are not timings of one workload (first-call rows, labelled
    variants of parpy such as "parpy (specialized: recompiles)") keep their
    own system name: only the plain "parpy" row (or the fastest "parpy ..."
    row when there is no plain one) is compared."""
    by_bench: Dict[str, List[dict]] = {}
    for r in rows:
        if value_of(r) is not None and r.get("unit") != "first call":
            by_bench.setdefault(r["bench"], []).append(r)
    out, alone = [], []
    for bench in sorted(by_bench, key=lambda b: (b[0], int("".join(c for c in b if c.isdigit()) or 0))):
        rs = by_bench[bench]
        mine = [r for r in rs if r["system"] == "parpy"] or \
            [r for r in rs if r["system"].startswith("parpy")]
        peers = [r for r in rs if not r["system"].startswith("parpy")]
        if not mine or not peers:
            alone.append(bench)
            continue
        p = min(value_of(r) for r in mine)
        best = min(peers, key=value_of)
        out.append((bench, p / value_of(best), best["system"]))
    return out, alone


def draw(points: List[Tuple[str, float, str]], title: str, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * len(points) + 1.5), 4.0))
    names = [b for b, _, _ in points]
    vals = [v for _, v, _ in points]
    colors = ["#2a9d8f" if v <= 1.0 else "#e76f51" for v in vals]
    bars = ax.bar(names, vals, color=colors)
    ax.set_yscale("log")
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_ylabel("parpy time / best peer (log)")
    ax.set_title(title)
    for bar, (_, v, peer) in zip(bars, points):
        ax.annotate(f"{v:.2f}x\nvs {peer}", (bar.get_x() + bar.get_width() / 2, v),
                    ha="center", va="bottom" if v >= 1 else "top", fontsize=7,
                    xytext=(0, 3 if v >= 1 else -3), textcoords="offset points")
    lo, hi = min(vals + [1.0]), max(vals + [1.0])
    ax.set_ylim(lo / 2.0, hi * 2.0)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+", help="JSON-lines output of run.py or gpu.py")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "plots"))
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    status = 0
    for path in a.inputs:
        points, alone = ratios(read_rows(path))
        stem = os.path.splitext(os.path.basename(path))[0]
        if not points:
            print(f"{path}: no workload with a peer to compare", file=sys.stderr)
            status = 1
            continue
        png = os.path.join(a.out, f"{stem}.png")
        draw(points, f"parpy vs best peer, same run ({stem})", png)
        print(f"{png}: " + ", ".join(f"{b} {v:.2f}x" for b, v, _ in points))
        if alone:
            print(f"  without a peer: {', '.join(alone)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
