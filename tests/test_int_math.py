"""Python's integer functions of the `math` module inside jit code:
`math.factorial`, `math.comb`, `math.perm` and `math.isqrt`, of Python ints
and NumPy integers, each a Python int with Python's value, Python's
`ValueError` for a negative argument and an `OverflowError` where Python's
int would grow past parpy's int (int64; int32 with `force_int_size=32`)."""

import math

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both


@parpy.jit
def int_functions(n, k, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = math.factorial(k[i] % 21)
        y[i, 1] = math.comb(n[i], k[i])
        y[i, 2] = math.perm(n[i] % 25, k[i] % 25)
        y[i, 3] = math.isqrt(n[i])
        y[i, 4] = math.perm(k[i] % 21)


def python_values(n, k):
    return [[math.factorial(b % 21), math.comb(a, b), math.perm(a % 25, b % 25),
             math.isqrt(a), math.perm(b % 21)] for a, b in zip(n.tolist(), k.tolist())]


def test_values_computed_at_run_time_are_pythons():
    n = np.array([0, 1, 5, 10, 30, 40, 60, 66, 15, 16, 17, 99, 10**6, 10**12, 2**62,
                  2**63 - 1, 10**18, 10**18 - 1, 3037000499**2, 3037000499**2 - 1], np.int64)
    k = np.array([0, 0, 2, 5, 15, 7, 30, 33, 16, 3, 20, 1, 2, 1, 0, 1, 1, 0, 1, 1], np.int64)
    y = np.zeros((len(n), 5), np.int64)
    got = run_both(int_functions, [n, k, y, len(n)], cpu_opts({'i': parpy.threads(4)}))
    assert got[2].tolist() == python_values(n, k)


@parpy.jit
def of_numpy_integers(a, b, c, y):
    y[0] = math.comb(a[0], b[0])
    y[1] = math.factorial(c[0])
    y[2] = math.isqrt(a[0]) + math.comb(True, False) + math.perm(b[0], True)


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                np.uint64], ids=lambda t: t.__name__)
def test_numpy_integers_are_their_python_ints(dt):
    a, b, c = np.array([100], dt), np.array([3], dt), np.array([12], dt)
    got = run_both(of_numpy_integers, [a, b, c, np.zeros(3, np.int64)], cpu_opts({}))
    assert got[3].tolist() == [math.comb(100, 3), math.factorial(12), 10 + 1 + 3]


@parpy.jit
def comb_of(n, k, y):
    y[0] = math.comb(n, k)


@parpy.jit
def factorial_of(n, y):
    y[0] = math.factorial(n)


@parpy.jit
def isqrt_of(n, y):
    y[0] = math.isqrt(n)


@parpy.jit
def perm_of(n, k, y):
    y[0] = math.perm(n, k)


def run_time(**fields):
    o = cpu_opts({}, **fields)
    o.specialize_scalars = False
    return o


@pytest.mark.parametrize("fn, args, exc, message", [
    (comb_of, (-1, 2), ValueError, "n must be a non-negative integer"),
    (comb_of, (3, -1), ValueError, "k must be a non-negative integer"),
    (perm_of, (-3, 1), ValueError, "n must be a non-negative integer"),
    (perm_of, (3, -1), ValueError, "k must be a non-negative integer"),
    (factorial_of, (-1,), ValueError, "factorial() not defined for negative values"),
    (isqrt_of, (-4,), ValueError, "isqrt() argument must be nonnegative"),
])
def test_negative_arguments_raise_pythons_value_error(fn, args, exc, message):
    with pytest.raises(exc) as python:
        fn.__wrapped__(*args, np.zeros(1, np.int64))
    assert str(python.value) == message
    # at run time, where the call runs
    with pytest.raises(exc, match=rf"`{fn.__name__}`: {message.replace('(', '[(]').replace(')', '[)]')} \(at "):
        fn(*args, np.zeros(1, np.int64), opts=run_time())
    # known when compiling: a located error of the same class
    with pytest.raises(exc, match="raises ValueError") as compiled:
        fn(*args, np.zeros(1, np.int64), opts=cpu_opts({}))
    assert isinstance(compiled.value, parpy.CompileError)


@pytest.mark.filterwarnings("ignore::parpy.ParpyWarning")
@pytest.mark.parametrize("fn, args", [
    (factorial_of, (21,)), (comb_of, (67, 33)), (comb_of, (10**18, 3)), (perm_of, (62, 31)),
    (comb_of, (2**62, 2**61)), (perm_of, (10**18, 10**17)),
])
def test_a_result_past_int64_is_an_overflow_error_and_ends_the_loop(fn, args):
    """Python's int would hold these; parpy's is an int64. The loop stops
    at the first partial product past it (`comb(2**62, 2**61)` would
    otherwise run 2**61 steps)."""
    with pytest.raises(OverflowError, match="does not fit in an int64"):
        fn(*args, np.zeros(1, np.int64), opts=run_time())
    with pytest.raises(OverflowError, match="does not fit in an int64"):
        fn(*args, np.zeros(1, np.int64), opts=cpu_opts({}))


def test_the_largest_results_that_fit():
    y = np.zeros(1, np.int64)
    for fn, args in [(comb_of, (66, 33)), (factorial_of, (20,)), (isqrt_of, (2**63 - 1,)),
                     (comb_of, (10**18, 10**18 - 1)), (perm_of, (10**18, 1)), (comb_of, (5, 9))]:
        fn(*args, y, opts=run_time())
        assert y[0] == getattr(math, fn.__name__.split("_")[0])(*args), fn.__name__


def test_with_32_bit_python_ints_the_limit_is_int32():
    y = np.zeros(1, np.int64)
    factorial_of(12, y, opts=run_time(force_int_size=32))
    assert y[0] == math.factorial(12)
    with pytest.raises(OverflowError, match="does not fit in an int32"):
        factorial_of(13, y, opts=run_time(force_int_size=32))


@parpy.jit
def known_lengths(x, y):
    y[:math.comb(4, 2)] = x[math.isqrt(15):math.factorial(3) + math.isqrt(15)] * 2.0
    for i in range(math.perm(3, 2)):
        y[i] += 1.0


def test_arguments_known_when_compiling_give_a_known_int():
    x = np.arange(10.0)
    got = run_both(known_lengths, [x, np.zeros(8)], cpu_opts({}))
    want = np.zeros(8)
    want[:6] = x[3:9] * 2.0 + 1.0
    assert got[1].tolist() == want.tolist()


@parpy.jit
def of_a_float(x, y):
    y[0] = math.factorial(x[0])


def test_a_float_is_pythons_type_error():
    with pytest.raises(TypeError, match="'numpy.float64' object cannot be interpreted as an integer") as e:
        of_a_float(np.array([3.0]), np.zeros(1, np.int64), opts=cpu_opts({}))
    assert isinstance(e.value, parpy.CompileError)


@parpy.jit
def comb_under_a_condition(n, k, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = math.comb(n[i], k[i]) if n[i] >= 0 else -1


def test_a_call_that_does_not_run_raises_nothing():
    n = np.array([-5, 6, -1, 4], np.int64)
    k = np.array([1, 3, 0, 2], np.int64)
    got = run_both(comb_under_a_condition, [n, k, np.zeros(4, np.int64), 4],
                   cpu_opts({'i': parpy.threads(4)}))
    assert got[2].tolist() == [-1, 20, -1, 6]


def test_gpu_code_compiles():
    def args(backend):
        n = np.zeros(4, np.int32 if backend == parpy.CompileBackend.Metal else np.int64)
        return [n, n.copy(), np.zeros((4, 5), n.dtype), 4]
    check_gpu_code(int_functions, args, {'i': parpy.threads(4)}, "int_functions")
    check_gpu_code(pow_mod, lambda b: args(b)[:2] + [args(b)[0], args(b)[0], 4],
                   {'i': parpy.threads(4)}, "pow_mod")


@parpy.jit
def number_methods(x, k, y, b):
    parpy.label('i')
    for i in range(4):
        y[i] = float(x[i]).is_integer() + x[i].is_integer() + np.float16(x[i]).is_integer()
        b[i, 0] = int(k[i]).bit_length()
        b[i, 1] = (i - 2).bit_length() + True.bit_length()
        b[i, 2] = k[i].is_integer()


@pytest.mark.filterwarnings("ignore::parpy.ParpyWarning")
def test_bit_length_and_is_integer():
    x = np.array([1.0, 2.5, np.inf, np.nan])
    k = np.array([0, 5, -2**63, 2**63 - 1], np.int64)
    got = run_both(number_methods, [x, k, np.zeros(4), np.zeros((4, 3), np.int64)],
                   cpu_opts({'i': parpy.threads(4)}))
    assert got[2].tolist() == [3.0, 0.0, 0.0, 0.0]
    assert got[3].tolist() == [[0, 3, 1], [3, 2, 1], [64, 1, 1], [63, 2, 1]]
    y = np.zeros(1, np.int64)
    for n in [0, 1, -1, 255, -256, 2**62, -2**63]:
        bit_length_of(n, y, opts=run_time())
        assert y[0] == n.bit_length(), n
        bit_length_of(n, y, opts=cpu_opts({}))
        assert y[0] == n.bit_length(), n


@parpy.jit
def bit_length_of(n, y):
    y[0] = n.bit_length()


@parpy.jit
def bit_length_of_numpy(k, y):
    y[0] = k[0].bit_length()


def test_a_numpy_integer_has_no_bit_length():
    with pytest.raises(parpy.CompileError, match="'numpy.int64' object has no attribute 'bit_length'"):
        bit_length_of_numpy(np.ones(1, np.int64), np.zeros(1, np.int64), opts=cpu_opts({}))


@parpy.jit
def pow_mod(a, b, m, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = pow(int(a[i]), int(b[i]), int(m[i]))


def pow_cases():
    rng = np.random.default_rng(7)
    cases = [(3, -1, 7), (-3, 5, 7), (3, 5, -7), (0, 0, 5), (3, 0, 1), (0, -1, 1), (5, 3, -1),
             (2**63 - 2, 2**63 - 3, 2**63 - 1), (-(2**63) + 1, 12345, 2**62 + 3),
             (123456789, -7, 10**18 + 9), (7, 2**62, 3037000499), (7, 2**62, 3037000500),
             (2, 10, 1024), (10**17, 3, -(2**63) + 1)]
    for _ in range(60):
        m = int(rng.integers(1, 2**63 - 1)) >> int(rng.integers(0, 62))
        m = m or 1
        cases.append((int(rng.integers(-2**63, 2**63 - 1)), int(rng.integers(0, 2**20)),
                      -m if rng.random() < 0.2 else m))
    return cases


def test_pow_with_a_modulus_is_pythons():
    cases = pow_cases()
    a, b, m = (np.array(col, np.int64) for col in zip(*cases))
    got = run_both(pow_mod, [a, b, m, np.zeros(len(cases), np.int64), len(cases)],
                   cpu_opts({'i': parpy.threads(4)}))
    assert got[3].tolist() == [pow(*c) for c in cases]


@pytest.mark.parametrize("args, message", [
    ((2, -1, 4), "base is not invertible for the given modulus"),
    ((2, 3, 0), "pow() 3rd argument cannot be 0"),
])
def test_pow_raises_pythons_value_error(args, message):
    with pytest.raises(ValueError) as python:
        pow(*args)
    assert str(python.value) == message
    a, b, m = (np.array([v], np.int64) for v in args)
    with pytest.raises(ValueError, match=message.replace("(", "[(]").replace(")", "[)]")):
        pow_mod(a, b, m, np.zeros(1, np.int64), 1, opts=cpu_opts({'i': parpy.threads(1)}))


@parpy.jit
def pow_of_numpy_ints(a, y):
    y[0] = pow(a[0], 2, 5)


def test_pow_with_a_modulus_of_numpy_integers_is_a_type_error():
    with pytest.raises(TypeError, match="`pow` with a modulus takes Python ints"):
        pow_of_numpy_ints(np.ones(1, np.int64), np.zeros(1, np.int64), opts=cpu_opts({}))
