"""A guard against front-end work that grows faster than the program: a
sum of 1000 array reads took 25 s to compile (each operator's operands
were re-walked per nested prefix: cubic); it takes about 0.01 s. The bound
is loose on purpose (a slow machine must not fail it), tight enough that
a cubic pass does."""

import importlib.util
import time

import numpy as np

import parpy


def _load(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def test_a_long_sum_of_array_reads_compiles_in_linear_time(tmp_path):
    terms = " + ".join(["x[i]"] * 1000)
    long_sum = _load(
        tmp_path, "long_sum", f"def long_sum(x, y, N):\n    for i in range(N):\n        y[i] = {terms}\n"
    )
    x = np.ones(4)
    start = time.perf_counter()
    code = parpy.print_compiled(long_sum, [x, np.zeros(4), 4], parpy.par({}))
    assert time.perf_counter() - start < 5.0
    assert code.count("x[i]") == 1000


def test_many_row_slice_stores_in_a_parallel_loop_compile_quickly(tmp_path):
    # 40 stores into overlapping parts of row i: the race check compared
    # each pair by a brute-force search over the slices' counters (about 1
    # ms a pair: 16 s in all) although the row index alone keeps two
    # iterations apart; it now solves that dimension first
    body = "".join(f"        y[i, {k % 3}:{k % 3 + 64}] = x[i, :] * {k}.0\n" for k in range(40))
    rows = _load(
        tmp_path,
        "rows",
        f"import parpy\ndef rows(x, y, N):\n    parpy.label('i')\n    for i in range(N):\n{body}",
    )
    x, y = np.ones((8, 64)), np.zeros((8, 68))
    opts = parpy.par({"i": parpy.threads(8)})
    start = time.perf_counter()
    code = parpy.print_compiled(rows, [x, y, 8], opts)
    assert time.perf_counter() - start < 5.0
    assert "y" in code
    parpy.jit(rows)(x, y, 8, opts=opts)
    expected = np.zeros((8, 68))
    for k in range(40):
        expected[:, k % 3 : k % 3 + 64] = x * float(k)
    assert np.array_equal(y, expected)
