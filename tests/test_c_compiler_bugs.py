"""Programs that a C compiler got wrong with parpy's flags, kept as
differential tests (each compared with plain Python, conftest.run_both).

GCC 12 (Debian 12's gcc 12.2, the CI machine's) at `-O3 -march=native`
if-converts a conditional load (`c ? b[k] : -1.0`) into masked vector
loads and gets the 4 x 16 nest wrong: `y[i, :] = np.where(a[i, :] == 0,
b[i, :], -1.0)` stored zeros and other elements of `b` in the second half of
each row. parpy builds without that if-conversion
(`-fno-tree-loop-if-convert`, parpy-runtime's `cc.rs`)."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both


@parpy.jit
def select_loads(a, b, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.where(a[i, :] == 0, b[i, :], -1.0)


@parpy.jit
def select_loads_sequential(a, b, y, N):
    for i in range(N):
        for j in range(a.shape[1]):
            y[i, j] = b[i, j] if a[i, j] == 0.0 else -1.0


@pytest.mark.parametrize("m", [8, 16, 17, 32, 100])
@pytest.mark.parametrize("fn", [select_loads, select_loads_sequential],
                         ids=["labelled", "sequential"])
def test_a_select_with_a_conditional_load(fn, m):
    a = np.where(np.arange(4 * m) % 5 == 0, 0.0, np.arange(4 * m) + 1.0).reshape(4, m)
    b = np.arange(4 * m, dtype=np.float64).reshape(4, m) + 100
    got = run_both(fn, [a, b, np.zeros((4, m)), 4], cpu_opts({'i': parpy.threads(4)}))
    assert np.array_equal(got[2], np.where(a == 0, b, -1.0))
