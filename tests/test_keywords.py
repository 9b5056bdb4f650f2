"""Keyword arguments and parameter defaults (natural Python).

A jit function is called as Python calls it: arguments by name, parameters
left out take their defaults. Inside jit code, helpers take keyword
arguments and defaults too, and NumPy functions and methods take the
keywords people write (`np.round(v, decimals=2)`, `s.var(ddof=1)`,
`axis=None`, `out=None`). Each program runs as plain Python (the reference)
and compiled (conftest.run_both)."""

import numpy as np
import pytest

import parpy
from conftest import check_gpu_code, cpu_opts, python_opts, run_both


@parpy.jit
def scale_rows(x, y, N, scale=2.0, shift=0):
    parpy.label('i')
    for i in range(N):
        y[i, :] = x[i, :] * scale + shift


def test_call_by_name_and_defaults():
    x = np.arange(12.0).reshape(3, 4)
    opts = cpu_opts({'i': parpy.threads(3)})
    ref = x * 2.0
    for call in (lambda y: scale_rows(x, y, 3, opts=opts),
                 lambda y: scale_rows(x, y=y, N=3, opts=opts),
                 lambda y: scale_rows(N=3, y=y, x=x, opts=opts),
                 lambda y: scale_rows(x, y, 3, 2.0, opts=opts),
                 lambda y: scale_rows(x, y, 3, shift=0, opts=opts)):
        y = np.zeros_like(x)
        call(y)
        assert np.array_equal(y, ref)
    y = np.zeros_like(x)
    scale_rows(x, y, 3, shift=1.5, opts=opts)
    assert np.array_equal(y, x * 2.0 + 1.5)


def test_defaults_are_read_at_each_call():
    x = np.arange(4.0).reshape(1, 4)
    opts = cpu_opts({'i': parpy.threads(1)})
    saved = scale_rows.py_func.__defaults__
    try:
        scale_rows.py_func.__defaults__ = (3.0, 0)
        y = np.zeros_like(x)
        scale_rows(x, y, 1, opts=opts)
        assert np.array_equal(y, x * 3.0)
    finally:
        scale_rows.py_func.__defaults__ = saved


def test_a_call_by_name_reuses_the_specialization():
    @parpy.jit
    def axpy(a, x, y, N):
        parpy.label('i')
        for i in range(N):
            y[i] = a * x[i] + y[i]

    x = np.arange(8.0)
    opts = cpu_opts({"i": parpy.threads(2)})
    y1, y2 = np.zeros(8), np.zeros(8)
    axpy(2.0, x, y1, 8, opts=opts)
    axpy(y=y2, x=x, N=8, a=2.0, opts=opts)
    assert np.array_equal(y1, y2) and axpy.cache_size() == 1


@pytest.mark.parametrize("call,match", [
    (lambda f, x, y, o: f(x, y, 3, bogus=1, opts=o), r"unexpected keyword argument `bogus`"),
    (lambda f, x, y, o: f(x, y, 3, x=x, opts=o), r"multiple values for argument `x`"),
    (lambda f, x, y, o: f(x, y, scale=1.0, opts=o), r"missing required argument `N`"),
    (lambda f, x, y, o: f(x, opts=o), r"missing required arguments `y`, `N`"),
    (lambda f, x, y, o: f(x, y, 3, 1.0, 2.0, 3.0, opts=o), r"takes 5 positional arguments"),
])
def test_call_errors_name_the_parameter(call, match):
    x = np.ones((3, 4))
    with pytest.raises(TypeError, match=match) as e:
        call(scale_rows, x, np.zeros_like(x), cpu_opts({'i': parpy.threads(3)}))
    assert "scale_rows(x, y, N, scale, shift, opts=...)" in str(e.value) or "positional" in str(e.value)


@parpy.jit
def blend(a, b, *, w=0.25, bias):
    return a * w + b * (1.0 - w) + bias


@parpy.jit
def blend_rows(x, y, N, *, w, bias=0.0):
    parpy.label('i')
    for i in range(N):
        y[i] = blend(x[i, 0], x[i, 1], w=w, bias=bias) + blend(x[i, 1], x[i, 0], bias=1.0)


def test_keyword_only_parameters():
    # the parameters after `*` go by name, in the entry and in helpers,
    # with their own defaults (`__kwdefaults__`)
    x = np.arange(8.0).reshape(4, 2)
    opts = cpu_opts({'i': parpy.threads(4)})
    for kw in ({'w': 0.5}, {'w': 0.75, 'bias': 2.0}):
        y, ref = np.zeros(4), np.zeros(4)
        blend_rows(x, y, 4, **kw, opts=opts)
        blend_rows.py_func(x, ref, 4, **kw)
        assert np.array_equal(y, ref)
    y = np.zeros(4)
    blend_rows(x, y, N=4, w=0.75, bias=2.0, opts=python_opts(opts))
    assert np.array_equal(y, ref)
    with pytest.raises(TypeError, match=r"takes 3 positional arguments but 4 were given: "
                       r"blend_rows\(x, y, N, \*, w, bias, opts=...\)"):
        blend_rows(x, y, 4, 0.5, opts=opts)
    with pytest.raises(TypeError, match=r"missing required argument `w`"):
        blend_rows(x, y, 4, opts=opts)


def test_a_keyword_only_parameter_of_a_helper_given_by_position_is_an_error():
    @parpy.jit
    def bad(x, y, N):
        for i in range(N):
            y[i] = blend(x[i, 0], x[i, 1], 0.5, bias=0.0)

    x = np.ones((2, 2))
    with pytest.raises(parpy.CompileError, match=r"`blend` takes 2 positional arguments but 3 were given"):
        bad(x, np.zeros(2), 2, opts=cpu_opts({}))


@parpy.jit
def weigh(a, b, /, c=2.0):
    return a + b * c


@parpy.jit
def weigh_rows(x, y, /, N, *, c=3.0):
    parpy.label('i')
    for i in range(N):
        y[i] = weigh(x[i, 0], x[i, 1], c=c) + weigh(x[i, 1], x[i, 0])


def test_positional_only_parameters():
    # the parameters before `/` go by position: naming one is Python's
    # TypeError (parpy bound it by name)
    x = np.arange(8.0).reshape(4, 2)
    opts = cpu_opts({'i': parpy.threads(4)})
    y, ref = np.zeros(4), np.zeros(4)
    weigh_rows(x, y, N=4, c=0.5, opts=opts)
    weigh_rows.py_func(x, ref, N=4, c=0.5)
    assert np.array_equal(y, ref)
    with pytest.raises(TypeError, match=r"positional-only arguments passed as keyword arguments: "
                       r"`y`: weigh_rows\(x, y, /, N, \*, c, opts=...\)"):
        weigh_rows(x, y=y, N=4, opts=opts)

    @parpy.jit
    def bad(x, y, N):
        for i in range(N):
            y[i] = weigh(x[i, 0], b=x[i, 1])

    with pytest.raises(parpy.CompileError, match=r"`weigh` takes `b` by position only"):
        bad(x, np.zeros(4), 4, opts=cpu_opts({}))


@parpy.jit
def affine(a, scale=3, shift=0.5, clamp=True):
    v = a * scale + shift
    if clamp:
        v = min(v, 10.0)
    return v


@parpy.jit
def helpers_by_name(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = affine(x[i, 0])
        y[i, 1] = affine(x[i, 1], shift=-1.0)
        y[i, 2] = affine(shift=2, a=x[i, 2], clamp=False)
        y[i, 3] = affine(x[i, 3], 2, clamp=False)


def test_helpers_take_keywords_and_defaults():
    x = np.random.default_rng(3).random((5, 4)) * 8
    run_both(helpers_by_name, [x, np.zeros((5, 4)), 5], cpu_opts({'i': parpy.threads(5)}))


@parpy.jit
def inlined_by_name(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = parpy.builtin.inline(affine(x[i], clamp=False, scale=2))


def test_inlined_helper_takes_keywords():
    x = np.arange(6.0)
    got = run_both(inlined_by_name, [x, np.zeros(6), 6], cpu_opts({'i': parpy.threads(6)}))
    assert np.array_equal(got[1], x * 2 + 0.5)


OFFSET = 4.0


@parpy.jit
def shifted(a, by=OFFSET):
    return a + by


@parpy.jit
def uses_non_literal_default(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = shifted(x[i])


@parpy.jit
def passes_non_literal_default(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = shifted(x[i], by=1.0)


def test_a_non_literal_default_must_be_passed_in_jit_code():
    x = np.arange(3.0)
    with pytest.raises(parpy.CompileError, match="default value of `by` in `shifted` is not a literal"):
        uses_non_literal_default(x, np.zeros(3), 3, opts=cpu_opts({'i': parpy.threads(3)}))
    run_both(passes_non_literal_default, [x, np.zeros(3), 3], cpu_opts({'i': parpy.threads(3)}))


@parpy.jit
def numpy_keywords(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i, 0] = np.round(x[i, 0], decimals=2)
        y[i, 1] = round(x[i, 1], ndigits=1)
        y[i, 2] = np.var(x[i, :], ddof=1)
        y[i, 3] = x[i, :].std(ddof=1)
        y[i, 4] = np.std(x[i, :], None, None, None, 2)
        y[i, 5] = x[i, :].sum(axis=None, keepdims=False) + np.max(x[i, :], axis=None, out=None)
        y[i, 6] = np.clip(x[i, 0], a_min=None, a_max=0.5) + np.clip(x[i, 1], 0.25, None)
        y[i, 7] = sum(x[i, :], 0) + np.mean(x[i, :], dtype=None)
        y[i, 8] = np.sqrt(x[i, 2], out=None) + np.dot(x[i, :], x[i, :], out=None)
        y[i, 9] = np.round(x[i, 3], 0) + round(x[i, 3], None)
        for k, v in enumerate(x[i, :], start=1):
            y[i, 10] += k * v


def test_numpy_keywords():
    x = np.random.default_rng(4).random((6, 5))
    got = run_both(numpy_keywords, [x, np.zeros((6, 11)), 6], cpu_opts({'i': parpy.threads(3)}))
    assert np.allclose(got[1][:, 2], x.var(axis=1, ddof=1))
    assert np.allclose(got[1][:, 4], x.std(axis=1, ddof=2))


@parpy.jit
def ddof_past_the_count(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = np.var(x[i, :], ddof=3)


def test_ddof_at_or_past_the_count_divides_by_zero_as_numpy_does():
    x = np.random.default_rng(5).random((2, 3))
    got = run_both(ddof_past_the_count, [x, np.zeros(2), 2], cpu_opts({'i': parpy.threads(2)}))
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        ref = x.var(axis=1, ddof=3)
    assert np.array_equal(got[1], ref)


@parpy.jit
def astype_rows(x, y, z, N):
    parpy.label('i')
    for i in range(N):
        y[i, :] = (x[i, :] * 10).astype(np.int32)
        z[i] = x[i, 0].astype(np.float32) * np.float32(3)


def test_astype():
    x = np.random.default_rng(6).random((4, 5)) - 0.5
    got = run_both(astype_rows, [x, np.zeros((4, 5), np.int32), np.zeros(4, np.float32), 4],
                   cpu_opts({'i': parpy.threads(4)}))
    assert np.array_equal(got[1], (x * 10).astype(np.int32))


def test_keywords_compile_for_cuda_and_metal():
    x = np.random.default_rng(7).random((6, 5)).astype(np.float32)
    check_gpu_code(numpy_keywords, lambda b: [x, np.zeros((6, 11), np.float32), 6],
                   {'i': parpy.threads(6)}, "numpy_keywords")
    check_gpu_code(helpers_by_name, lambda b: [x[:, :4].copy(), np.zeros((6, 4), np.float32), 6],
                   {'i': parpy.threads(6)}, "helpers_by_name")
