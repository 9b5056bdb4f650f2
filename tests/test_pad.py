"""`np.pad(v, pad_width, mode, ...)` of a 1-D slice, array or array
expression inside jit code: NumPy's elements bit for bit, in the input's
dtype, for the modes 'constant' (`constant_values` cast as NumPy stores
them), 'edge', 'wrap', 'reflect' and 'symmetric', widths larger than the
array included (NumPy pads those chunk by chunk); the undecorated function
on NumPy arrays is the reference. Misuse is a located error, of NumPy's
class where NumPy raises."""

import importlib.util
import pathlib
import tempfile

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, run_both, same_bits

N = 3
MODES = ["constant", "edge", "wrap", "reflect", "symmetric"]
DTYPES = [np.float64, np.float32, np.int32, np.bool_]


def _par():
    return cpu_opts({'i': parpy.threads(N)})


def _widths(n):
    """The pad widths tried for a length `n`, 0..10 on each side (over the
    lengths, every `before` and `after` comes up), and the other spellings
    of `pad_width` (fewer statements: `check_races` compares each store
    with every other of the body, element by element)."""
    pairs = [((5 * n + 2 * k) % 11, (3 * n + 7 * k) % 11) for k in range(5)]
    return [f"({b}, {a})" for b, a in pairs] + [["0", "10", "(5,)", "((2, 9),)", "[4, 1]", "7"][n - 1]]


def _program(mode, extra):
    """Source of a jit function padding `x[i, :n]` for n in 1..6 by every
    width of `_widths(n)`, each into its own columns of `y`; its width."""
    lines, at = [], 0
    for n in range(1, 7):
        for w in _widths(n):
            m = n + sum(np.broadcast_to(np.array(eval(w)).ravel(), (2,)))
            lines.append(f"        y[i, {at}:{at + m}] = np.pad(x[i, :{n}], {w}, '{mode}'{extra})")
            at += m
    src = "import numpy as np\nimport parpy\n\n\ndef pads(x, y, N):\n    parpy.label('i')\n" \
          "    for i in range(N):\n" + "\n".join(lines) + "\n"
    return src, at


_DIR = pathlib.Path(tempfile.mkdtemp(prefix="parpy_pad_"))
_EXTRAS = {"constant": ["", ", constant_values=2.7", ", constant_values=(-1.5, 0.5)"],
           "reflect": ["", ", reflect_type='even'"]}


def _jit(mode, extra):
    src, width = _program(mode, extra)
    path = _DIR / f"pads_{MODES.index(mode)}_{len(extra)}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return parpy.jit(mod.pads), width


def _data(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    return (rng.standard_normal(shape) * 100).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("mode,extra", [(m, e) for m in MODES for e in _EXTRAS.get(m, [""])])
def test_pads_are_numpys(mode, extra, dtype):
    fn, width = _jit(mode, extra)
    x = _data(dtype, (N, 6), 3)
    y = run_both(fn, [x, np.zeros((N, width), dtype), N], _par())[1]
    want = np.zeros((N, width), dtype)
    fn.py_func(x, want, N)
    same_bits(y, want, _par())


@parpy.jit
def pads_in_expressions(x, y, z, s, t, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.pad(x[i, 1:5], 1)
        z[i, :] = np.pad(x[i, :4], (1, 3), constant_values=2.5) * 2.0 + \
            np.pad(x[i, 2:] - 1.0, ((3, 1),), mode='symmetric')
        s[i] = np.pad(x[i, :], (2, 0), mode='edge').sum()
        t[i] = np.max(np.pad(x[i, ::2], 9, 'reflect') * x[i, 0]) + np.sum(np.pad(x[i, 3:], (0, 2), 'wrap'))


def test_pads_in_expressions_and_reductions_are_numpys():
    x = _data(np.float64, (N, 6), 5)
    outs = [np.zeros((N, 6)), np.zeros((N, 8)), np.zeros(N), np.zeros(N)]
    got = run_both(pads_in_expressions, [x, *outs, N], _par())
    want = [o.copy() for o in outs]
    pads_in_expressions.py_func(x, *want, N)
    for g, w in zip(got[1:-1], want):
        same_bits(g, w, _par())


@parpy.jit
def pad_by_scalars(x, y, b, a, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.pad(x[i, :], (b, a), 'wrap')


def test_scalar_widths_are_specialized():
    x = _data(np.int32, (N, 4), 7)
    for b, a in [(0, 9), (6, 2)]:
        y = run_both(pad_by_scalars, [x, np.zeros((N, 4 + b + a), np.int32), b, a, N], _par())[1]
        same_bits(y, np.stack([np.pad(r, (b, a), 'wrap') for r in x]), _par())


@parpy.jit
def pad_in_place(x, N):
    parpy.label('i')
    for i in range(N):
        x[i, :] = np.pad(x[i, 1:4], (2, 1), 'reflect')


def test_a_pad_written_over_what_it_reads_reads_it_all_first():
    x = _data(np.float64, (N, 6), 9)
    got = run_both(pad_in_place, [x, N], _par())[0]
    want = x.copy()
    pad_in_place.py_func(want, N)
    same_bits(got, want, _par())


def test_pads_compile_for_cuda_and_metal():
    check_gpu_code(pads_in_expressions, lambda backend: [
        np.zeros((N, 6), np.float32), np.zeros((N, 6), np.float32), np.zeros((N, 8), np.float32),
        np.zeros(N, np.float32), np.zeros(N, np.float32), N], {'i': parpy.threads(N)}, "pads")


@parpy.jit
def pad_mode(x, y, N):
    for i in range(N):
        y[i, :] = np.pad(x[i, :], 1, 'mean')


@parpy.jit
def pad_odd(x, y, N):
    for i in range(N):
        y[i, :] = np.pad(x[i, :], 1, 'reflect', reflect_type='odd')


@parpy.jit
def pad_2d(x, y, N):
    for i in range(N):
        y[:, :] = np.pad(x[:, :], 1)


@parpy.jit
def pad_keyword(x, y, N):
    for i in range(N):
        y[i, :] = np.pad(x[i, :], 1, 'edge', constant_values=3)


@parpy.jit
def pad_negative(x, y, N):
    for i in range(N):
        y[i, :] = np.pad(x[i, :], (2, -1))


@parpy.jit
def pad_float_width(x, y, N):
    for i in range(N):
        y[i, :] = np.pad(x[i, :], 1.0)


@parpy.jit
def pad_three_widths(x, y, N):
    for i in range(N):
        y[i, :] = np.pad(x[i, :], (1, 2, 3))


@parpy.jit
def pad_unknown_mode(x, y, N):
    for i in range(N):
        y[i, :] = np.pad(x[i, :], 1, 'circular')


@parpy.jit
def pad_callable_mode(x, y, N):
    for i in range(N):
        y[i, :] = np.pad(x[i, :], 1, np.sum)


@parpy.jit
def pad_empty_edge(x, y, N):
    for i in range(N):
        y[i, :] = np.pad(x[i, :0], 1, 'wrap')


@parpy.jit
def pad_nan_into_int(x, y, N):
    for i in range(N):
        y[i, :] = np.pad(x[i, :], 1, constant_values=float('nan'))


@parpy.jit
def pad_none_constant(x, y, N):
    for i in range(N):
        y[i, :] = np.pad(x[i, :], 1, constant_values=None)


@parpy.jit
def pad_none_mode(x, y, N):
    for i in range(N):
        y[i, :] = np.pad(x[i, :], 1, None)


@pytest.mark.parametrize("fn,shape,dtype,cls,message", [
    # (before: 0 where NumPy pads with NaN; the default mode)
    (pad_none_constant, (N, 6), np.float64, parpy.CompileError, r"constant_values=None"),
    (pad_none_mode, (N, 6), np.float64, parpy.CompileValueError, r"mode 'None' is not supported"),
    (pad_mode, (N, 6), np.float64, parpy.CompileError, r"mode 'mean' is not supported"),
    (pad_odd, (N, 6), np.float64, parpy.CompileError, r"reflect_type='even'"),
    (pad_2d, (N, 6), np.float64, parpy.CompileError, r"of an array of 2 dimensions"),
    (pad_keyword, (N, 6), np.float64, parpy.CompileValueError,
     r"unsupported keyword arguments for mode 'edge'"),
    (pad_negative, (N, 5), np.float64, parpy.CompileValueError,
     r"index can't contain negative values"),
    (pad_float_width, (N, 6), np.float64, parpy.CompileTypeError,
     r"`pad_width` must be of integral type"),
    (pad_three_widths, (N, 10), np.float64, parpy.CompileValueError, r"`pad_width`"),
    (pad_unknown_mode, (N, 6), np.float64, parpy.CompileValueError,
     r"mode 'circular' is not supported"),
    (pad_callable_mode, (N, 6), np.float64, parpy.CompileError, r"string literal"),
    (pad_empty_edge, (N, 2), np.float64, parpy.CompileValueError, r"can't extend empty axis"),
    (pad_nan_into_int, (N, 6), np.int32, parpy.CompileValueError,
     r"cannot convert float NaN to integer"),
])
def test_what_pad_cannot_do_is_a_located_error(fn, shape, dtype, cls, message):
    x = np.zeros((N, 4), dtype)
    with pytest.raises(cls, match=message) as info:
        fn(x, np.zeros(shape, dtype), N, opts=cpu_opts())
    assert "test_pad.py" in str(info.value), str(info.value)
    try:
        fn.py_func(x, np.zeros(shape, dtype), N)
    except (ValueError, TypeError) as e:
        assert isinstance(info.value, type(e)) or cls is parpy.CompileError, (e, info.value)


def test_a_width_must_be_known_when_compiling():
    opts = _par()
    opts.specialize_scalars = False
    with pytest.raises(parpy.CompileError, match=r"known when compiling"):
        parpy.print_compiled(pad_by_scalars, [np.zeros((N, 4)), np.zeros((N, 7)), 1, 2, N], opts)


@parpy.jit
def pads_of_nothing(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = np.pad(x[i, :0], (2, 1), constant_values=(7, -3))
        z[i, :] = np.pad(x[i, 2:2], 0, 'wrap') + 1


def test_a_pad_of_an_empty_slice_is_numpys():
    x = _data(np.int32, (N, 4), 11)
    y, z = run_both(pads_of_nothing, [x, np.zeros((N, 3), np.int32), np.zeros((N, 0), np.int32),
                                      N], _par())[1:3]
    same_bits(y, np.tile(np.array([7, 7, -3], np.int32), (N, 1)), _par())
    assert z.shape == (N, 0)
