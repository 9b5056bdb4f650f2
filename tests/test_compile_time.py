"""A guard against front-end work that grows faster than the program: a
sum of 1000 array reads took 25 s to compile (each operator's operands
were re-walked per nested prefix: cubic); it takes about 0.01 s. The bound
is loose on purpose (a slow machine must not fail it), tight enough that
a cubic pass does."""

import importlib.util
import time

import numpy as np

import parpy


def test_a_long_sum_of_array_reads_compiles_in_linear_time(tmp_path):
    terms = " + ".join(["x[i]"] * 1000)
    path = tmp_path / "long_sum.py"
    path.write_text(f"def long_sum(x, y, N):\n    for i in range(N):\n        y[i] = {terms}\n")
    spec = importlib.util.spec_from_file_location("long_sum", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.ones(4)
    start = time.perf_counter()
    code = parpy.print_compiled(module.long_sum, [x, np.zeros(4), 4], parpy.par({}))
    assert time.perf_counter() - start < 5.0
    assert code.count("x[i]") == 1000
