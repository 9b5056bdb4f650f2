"""0-d arrays (`np.zeros(())`, `np.array(2.0)`). Where the function only
reads one, it is a number of its dtype, specialized on its value. Where the
function updates it in place (`z += v`), indexes it (`z[()] = v`, `z[...]
+= v`, `z[()]`) or passes it to a helper, Python writes the caller's array,
and so does parpy: the 0-d array is passed as an array
(`FunctionDef::in_place_params`). Before, `z += v` changed a copy and the
caller's array kept its value, silently."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts


def _sum_into(z, x, N):
    for i in range(N):
        z += x[i]


def _store_item(z, x, N):
    z[()] = x[N - 1]
    z[...] += 1.0


def _read_item(z, x, N):
    for i in range(N):
        x[i] = x[i] * z[()]


def _add(z, v):
    z += v


def _through_helper(z, x, N):
    for i in range(N):
        _add(z, x[i])


def _rebound(z, x, N):
    # Python: `z * 2` is a new number; `z += 1` then changes the local
    z = z * 2
    z += 1
    x[0] = z


def _read_and_update(z, x, N):
    z += N
    parpy.label('i')
    for i in range(N):
        x[i] = z * i


def _count(c, x, N):
    for i in range(N):
        if x[i] > 1.0:
            c += 1


CASES = [
    (_sum_into, lambda: np.zeros(())),
    (_store_item, lambda: np.zeros(())),
    (_read_item, lambda: np.array(2.5)),
    (_through_helper, lambda: np.zeros(())),
    (_rebound, lambda: np.array(3.0)),
    (_read_and_update, lambda: np.array(1.5)),
    (_count, lambda: np.array(0, np.int32)),
]


@pytest.mark.parametrize("fn, zero_d", CASES, ids=[c[0].__name__ for c in CASES])
def test_a_zero_d_array_is_written_as_python_writes_it(fn, zero_d):
    x = np.arange(5.0)
    z1, x1 = zero_d(), x.copy()
    z2, x2 = zero_d(), x.copy()
    spec = {'i': parpy.threads(5)} if fn is _read_and_update else {}
    parpy.jit(fn)(z1, x1, 5, opts=cpu_opts(spec))
    fn(z2, x2, 5)
    assert z1.shape == () and z1.dtype == z2.dtype
    np.testing.assert_array_equal(z1, z2)
    np.testing.assert_array_equal(x1, x2)


def test_in_place_parameters_are_found_in_the_source():
    f = parpy.jit(_sum_into)
    # a NumPy scalar at the same parameter is a number: `z += v` is local
    z = np.float64(2.0)
    f(z, np.arange(3.0), 3, opts=cpu_opts())
    assert z == 2.0
    code = parpy.print_compiled(f, [np.zeros(()), np.arange(3.0), 3], cpu_opts())
    assert "double *z" in code and "z[0] = z[0] + x[i]" in code
    # only read: a number, specialized on its value
    g = parpy.jit(_rebound)
    code = parpy.print_compiled(g, [np.array(3.0), np.zeros(2), 2], cpu_opts())
    assert "double *z" not in code


def test_a_read_only_zero_d_array_is_refused_when_written():
    z = np.zeros(())
    z.flags.writeable = False
    with pytest.raises(ValueError, match="`z` of `_sum_into` is read-only"):
        parpy.jit(_sum_into)(z, np.arange(3.0), 3, opts=cpu_opts())


def test_a_parallel_update_of_a_zero_d_array_is_a_race_or_a_reduction():
    def psum(z, x, N):
        parpy.label('i')
        for i in range(N):
            z += x[i]

    x = np.arange(100.0)
    with pytest.raises(parpy.CompileError, match="updates the same element of `z`"):
        parpy.jit(psum)(np.zeros(()), x, 100, opts=cpu_opts({'i': parpy.threads(4)}))
    z = np.zeros(())
    parpy.jit(psum)(z, x, 100, opts=cpu_opts({'i': parpy.threads(4).par_reduction()}))
    assert z == x.sum()


T = parpy.types.type_var()


def _times(a, v):
    return a * v


def _scaled(alpha: T, x, y, N):
    for i in range(N):
        y[i] = _times(alpha, x[i])


def test_a_parameter_annotated_as_a_number_stays_one():
    # passed to a helper, but `alpha: T` says it is a number (ParPy's
    # programs pass 0-d tensors so: test_callbacks.py's gemm)
    x = np.arange(4, dtype=np.float32)
    y = np.zeros(4, np.float32)
    parpy.jit(_scaled)(np.array(1.5, np.float32), x, y, 4, opts=cpu_opts())
    np.testing.assert_array_equal(y, x * np.float32(1.5))


@parpy.jit
def _dims_of(x, y):
    y[0] = x.ndim * 100 + x.size


def test_ndim_and_size_of_a_zero_d_array_argument():
    # (read as its number, it was "only `.T`, `.shape[k]`, `.size` and
    # `.ndim` are supported on arrays")
    for x in (np.zeros(()), np.float32(2.5), np.int64(3)):
        y = np.zeros(1, np.int64)
        _dims_of(x, y, opts=cpu_opts())
        assert y[0] == 1
        assert x.ndim * 100 + x.size == 1
