"""Programs that a C compiler got wrong with parpy's flags, kept as
differential tests (each compared with plain Python, conftest.run_both).

GCC 12 (Debian 12's gcc 12.2, the CI machine's) at `-O3 -march=native`
if-converts a conditional load (`c ? b[k] : -1.0`) into masked vector
loads and gets the 4 x 16 nest wrong: `y[i, :] = np.where(a[i, :] == 0,
b[i, :], -1.0)` stored zeros and other elements of `b` in the second half of
each row. parpy builds without that if-conversion
(`-fno-tree-loop-if-convert`, parpy-runtime's `cc.rs`).

The same GCC vectorizes the stores into two large local arrays of an
OpenMP thread's function (two buffered sums, `np.sum(x[i, ::-1, 1:])` and
`np.sum(x[i, 1:, ::-1])`, 64 KB each) with 32-byte aligned moves but puts
the second array 16 bytes off: the process crashed. The C backend declares
every local array on the stack with `__attribute__((aligned(64)))`.

On a CPU with AVX512-FP16 (Sapphire Rapids), the same GCC writes a
float16 `max(0.0, v)` stored to memory as a zero-masked `vmovsh` store,
which the assembler refuses ("unsupported masking for `vmovsh'"): the
build failed. Where the assembler refuses the compiler's output, parpy
builds once more without GCC's if-conversion (`cc.rs`, `Compiler::build`).
Elsewhere these tests pass either way.

With 512-bit vectors (`-march=native` on an AVX-512 CPU), the same GCC's
loop distribution split the row loop of two fused stencil sweeps
(`cpu_skew_fuse`: row `i` of the first sweep, then row `i - 2` of the
second, which reads rows of the first up to `i`) into loops that read
rows not yet written: every row after the second was wrong, with one
thread as with many. parpy builds without it
(`-fno-tree-loop-distribution`).

With AVX-512, the same GCC vectorizes a short loop unrolled (straight-line
code, the SLP vectorizer) with a conversion to a narrower float and back
as two vector conversions of equal width, then folds the pair away:
`np.float32(x[i]) == x[i]` of float64 was always True for N = 2..8, and
`np.float16` values widened again kept all their bits. A program that
converts a float to a narrower float is built without the SLP vectorizer
(`#pragma GCC optimize`, the C dialect's `narrowed_floats_prelude`); the
others keep it (a naive matmul is 2.4x slower without it)."""

import subprocess
import sys
import textwrap

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


_TWO_BUFFERS = """
    import numpy as np
    import parpy

    @parpy.jit
    def two_buffered_sums(x, s, t, N):
        parpy.label('i')
        for i in range(N):
            s[i] = np.sum(x[i, ::-1, 1:])
            t[i] = np.sum(x[i, 1:, ::-1])

    x = np.random.default_rng(1).random((3, 300, 100))
    s, t = np.zeros(3), np.zeros(3)
    opts = parpy.par({'i': parpy.threads(3)})
    opts.backend = parpy.CompileBackend.Cpu
    two_buffered_sums(x, s, t, 3, opts=opts)
    assert all(s[i] == np.sum(x[i, ::-1, 1:]) and t[i] == np.sum(x[i, 1:, ::-1])
               for i in range(3))
    print("ok")
"""


def test_two_large_local_arrays_in_one_thread(tmp_path):
    # in a process of its own: the miscompiled program crashed
    src = tmp_path / "two_buffers.py"
    src.write_text(textwrap.dedent(_TWO_BUFFERS))
    r = subprocess.run([sys.executable, str(src)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stderr[-2000:])


@parpy.jit
def float16_max_with_zero(a, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i, i] = max(np.float16(0.0), np.tanh(a[i] * a[i]))
        z[i] = max(0.0, a[i])


def test_a_float16_max_with_zero_stored_builds():
    a = np.linspace(-2, 2, 7).astype(np.float16)
    got = run_both(float16_max_with_zero, [a, np.zeros((7, 7), np.float16),
                                           np.zeros(7, np.float16), 7],
                   cpu_opts({'i': parpy.threads(7)}))
    assert np.array_equal(got[2], np.maximum(a, 0))


@parpy.jit
def two_sweeps(a, b, N):
    parpy.label('i')
    for i in range(1, N - 2):
        for j in range(3):
            b[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, 2 - j]) + 0.5 if j % 3 != 1 else a[i - 1, j]
    parpy.label('i')
    for i in range(1, N - 2):
        for j in range(3):
            a[i, j] = 0.25 * (b[i - 1, j] + b[i, 2 - j] + b[i + 2, j]) + 0.5 if j % 3 != 1 else b[i - 1, j]


@pytest.mark.parametrize("n", [32, 101])
def test_two_fused_stencil_sweeps(n):
    rng = np.random.default_rng(0)
    run_both(two_sweeps, [rng.random((n, 3)), rng.random((n, 3)), n],
             cpu_opts({'i': parpy.threads(1000)}), rtol=0, atol=0)



@parpy.jit
def fits_float32(x, eq, N):
    for i in range(N):
        eq[i] = np.float32(x[i]) == x[i]


@parpy.jit
def through_float16(h, wide, N):
    parpy.label('i')
    for i in range(N):
        wide[i] = np.float16(h[i]) * np.float32(1.0)


@pytest.mark.parametrize("n", [2, 3, 4, 8, 16])
def test_a_float_rounded_to_a_narrower_type_and_widened_again(n):
    x = np.resize([1 / 3, 0.5, 1e40, 16777217.0], n)
    got = run_both(fits_float32, [x, np.zeros(n, bool), n], cpu_opts({}))
    assert np.array_equal(got[1], np.resize([False, True, False, False], n))
    h = np.resize(np.array([1e5, 65519, 2049, 1 / 3], np.float32), n)
    with np.errstate(over="ignore"):
        want = np.float16(h).astype(np.float32)
    got = run_both(through_float16, [h, np.zeros(n, np.float32), n],
                   cpu_opts({'i': parpy.threads(n)}), rtol=0, atol=0)
    assert np.array_equal(got[1], want)
