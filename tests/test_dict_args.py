"""Dict arguments (issue 11 item 4): a dict of arrays and scalars (nested
dicts too) passed as one argument, read by constant string keys inside the
function and passed whole to helpers; specialized on its keys and the types
and shapes of its values. Differential against Python mode (the function
run as plain Python) on Cpu, NVRTC and a dry run for Cuda, clang for Metal.
"""

import copy

import numpy as np
import pytest

import parpy
from conftest import backend_opts, cpu_opts, python_opts
from parpy import _native
from test_cuda_codegen import check_nvrtc, needs_nvrtc
from test_metal_codegen import assert_clang_ok, needs_clang

CPU = parpy.CompileBackend.Cpu


def run_both(fn, args, opts):
    """`fn` in Python mode and compiled, each on a deep copy of `args`
    (dicts included); every array must agree. Returns the compiled copy."""
    ref, got = copy.deepcopy(args), copy.deepcopy(args)
    fn(*ref, opts=python_opts(opts))
    fn(*got, opts=opts)

    def arrays(v, path):
        if isinstance(v, dict):
            for k, x in v.items():
                yield from arrays(x, f"{path}[{k!r}]")
        elif isinstance(v, np.ndarray):
            yield path, v

    for (path, r), (_, g) in zip(arrays(ref, "args"), arrays(got, "args")):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6, err_msg=path)
    return got


@parpy.jit
def spmv(A, x, y):
    parpy.label('row')
    for row in range(A['nrows']):
        for i in range(A['rows'][row], A['rows'][row + 1]):
            y[row] += A['values'][i] * x[A['cols'][i]]


def csr(n, m, seed, index=np.int64):
    rng = np.random.default_rng(seed)
    dense = rng.standard_normal((n, m)).astype(np.float32)
    dense *= rng.random((n, m)) < 0.2
    rows = np.zeros(n + 1, index)
    cols, vals = [], []
    for r in range(n):
        nz = np.nonzero(dense[r])[0]
        cols += nz.tolist()
        vals += dense[r, nz].tolist()
        rows[r + 1] = rows[r] + len(nz)
    A = {'values': np.array(vals, np.float32), 'rows': rows,
         'cols': np.array(cols, index), 'nrows': n}
    return A, dense


def test_spmv_with_a_dict_matches_python_and_numpy():
    A, dense = csr(40, 70, 1)
    x = np.random.default_rng(2).standard_normal(70).astype(np.float32)
    got = run_both(spmv, [A, x, np.zeros(40, np.float32)],
                   cpu_opts({'row': parpy.threads(40)}))
    np.testing.assert_allclose(got[2], dense @ x, rtol=1e-5, atol=1e-5)


@parpy.jit
def dot_row(m, i):
    # a helper given a whole (nested) dict
    s = 0.0
    for j in range(m['cols']):
        s += m['w'][i, j] * m['x'][j]
    return s + m['bias']


@parpy.jit
def scale_rows(P, out):
    # a helper with a label is inlined; it takes the dict too
    parpy.label('j')
    for j in range(P['layer']['cols']):
        out[j] = out[j] * P['scale']


@parpy.jit
def layer(P, out):
    parpy.label('i')
    for i in range(P['layer']['rows']):
        out[i] = dot_row(P['layer'], i) * P['scale']
    scale_rows(P, out)


def layer_args(rows=6, cols=6, scale=0.5):
    rng = np.random.default_rng(3)
    P = {'scale': scale,
         'layer': {'w': rng.standard_normal((rows, cols)).astype(np.float32),
                   'x': rng.standard_normal(cols).astype(np.float32),
                   'bias': np.float32(0.25), 'rows': rows, 'cols': cols}}
    return [P, np.zeros(rows, np.float32)]


def test_nested_dict_passed_to_helpers():
    spec = {'i': parpy.threads(6), 'j': parpy.threads(6)}
    got = run_both(layer, layer_args(), cpu_opts(spec))
    P = layer_args()[0]['layer']
    expect = (P['w'] @ P['x'] + P['bias']) * 0.5 * 0.5
    np.testing.assert_allclose(got[1], expect, rtol=1e-5)


def test_specialized_on_keys_types_and_shapes():
    @parpy.jit
    def first(d, y):
        with parpy.gpu:
            y[0] = d['a'][0] + d['b']
    opts = cpu_opts()
    y = np.zeros(1, np.float64)
    first({'a': np.ones(3, np.float32), 'b': 2.0}, y, opts=opts)
    first({'a': np.ones(3, np.float32), 'b': 5.0}, y, opts=opts)  # a new value
    assert y[0] == 6.0
    n = first.cache_size()
    first({'a': np.ones(3, np.float32), 'b': 5.0}, y, opts=opts)
    assert first.cache_size() == n  # same keys, types, shapes, value: a hit
    first({'b': 5.0, 'a': np.ones(3, np.float32)}, y, opts=opts)  # key order
    first({'a': np.ones(4, np.float32), 'b': 5.0}, y, opts=opts)  # shape
    first({'a': np.ones(4, np.int16), 'b': 5.0}, y, opts=opts)  # dtype
    first({'a': np.ones(4, np.int16), 'b': 5.0, 'c': 1}, y, opts=opts)  # a key
    assert first.cache_size() == n + 4
    assert y[0] == 6.0
    spec = first.specializations()[-1]["args"]
    assert spec["d['a']"] == "int16[4]" and "d['c']" in spec


def test_entry_arrays_written_and_read_only_checks():
    @parpy.jit
    def fill(d):
        parpy.label('i')
        for i in range(d['n']):
            d['out'][i] = d['src'][i] * 2.0
    src = np.arange(5, dtype=np.float32)
    d = {'n': 5, 'src': src, 'out': np.zeros(5, np.float32)}
    fill(d, opts=cpu_opts({'i': parpy.threads(5)}))
    np.testing.assert_array_equal(d['out'], src * 2)
    ro = np.zeros(5, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match=r"argument `d\['out'\]` of `fill` is read-only"):
        fill({'n': 5, 'src': src, 'out': ro}, opts=cpu_opts({'i': parpy.threads(5)}))


def test_torch_cpu_tensors_and_0d_scalars_in_a_dict():
    torch = pytest.importorskip("torch")

    @parpy.jit
    def axpy_d(p, y):
        parpy.label('i')
        for i in range(p['n']):
            y[i] = p['a'] * p['x'][i] + y[i]
    p = {'a': torch.tensor(0.5), 'x': torch.arange(8, dtype=torch.float32),
         'n': torch.tensor(8)}
    y = torch.ones(8)
    axpy_d(p, y, opts=cpu_opts({'i': parpy.threads(8)}))
    assert torch.allclose(y, 0.5 * torch.arange(8.0) + 1)


# -- errors -----------------------------------------------------------------

@parpy.jit
def pick(a, y):
    with parpy.gpu:
        y[0] = a['x'] + a['y']


def test_non_string_key_is_a_type_error_naming_the_argument():
    # (as in ParPy: jit code names entries by string keys)
    with pytest.raises(parpy.CompileTypeError) as e:
        pick({'x': 2, 'y': 4, 3: 5}, np.zeros(1), opts=cpu_opts())
    assert isinstance(e.value, TypeError) and isinstance(e.value, RuntimeError)
    assert "argument `a` of `pick`" in str(e.value) and "non-string key 3" in str(e.value)
    with pytest.raises(TypeError, match=r"non-string key \(1, 2\)"):
        pick({'x': 2, 'y': {(1, 2): 1}}, np.zeros(1), opts=cpu_opts())


def test_entries_compiled_code_cannot_take_are_left_out_until_read():
    # a config dict carries a name, tags, None: Python runs while the
    # function does not read them (they were TypeErrors)
    for extra in ({'name': 'run1'}, {'tags': [1, 2], 'none': None, 'shape': (3, 4)}):
        y = np.zeros(1)
        pick({'x': 2, 'y': 4, **extra}, y, opts=cpu_opts())
        assert y[0] == 6
    # (the type of such an entry is part of the specialization)
    assert pick.cache_size() >= 1
    with pytest.raises(parpy.CompileTypeError) as e:
        pick({'x': 2, 'y': [1, 2]}, np.zeros(1), opts=cpu_opts())
    assert isinstance(e.value, TypeError)
    text = str(e.value)
    assert text.splitlines()[0] == "error: `a['y']` is a list, which compiled code cannot read"
    assert "y[0] = a['x'] + a['y']" in text
    with pytest.raises(TypeError, match=r"`a\['y'\]\['s'\]` is a str"):
        pick_nested({'y': {'s': 'text'}}, np.zeros(1), opts=cpu_opts())


@parpy.jit
def pick_nested(a, y):
    with parpy.gpu:
        y[0] = a['y']['s']


def test_a_dict_holding_itself_is_an_error():
    d = {'x': 1}
    d['y'] = d
    with pytest.raises(TypeError, match="nests dicts more than"):
        pick(d, np.zeros(1), opts=cpu_opts())


def test_missing_key_points_at_the_source():
    @parpy.jit
    def typo(A, y):
        with parpy.gpu:
            y[0] = A['valeus'][0]
    with pytest.raises(parpy.CompileError) as e:
        typo({'values': np.ones(2), 'rows': np.ones(2)}, np.zeros(1), opts=cpu_opts())
    msg = str(e.value)
    assert "the dict `A` has no key 'valeus'" in msg
    assert "did you mean 'values'?" in msg and "its keys are 'values', 'rows'" in msg
    assert "test_dict_args.py" in msg and "A['valeus'][0]" in msg


def test_key_must_be_a_string_literal():
    @parpy.jit
    def by_int(a, y):
        with parpy.gpu:
            y[0] = a[2]
    with pytest.raises(parpy.CompileError, match="can only be indexed by a constant string key"):
        by_int({'x': 2}, np.zeros(1), opts=cpu_opts())


def test_entries_cannot_be_rebound():
    @parpy.jit
    def store(a, y):
        with parpy.gpu:
            a['x'] = a['y']
            y[0] = a['x']
    with pytest.raises(parpy.CompileError, match=r"cannot assign to `a\['x'\]`"):
        store({'x': 2, 'y': 4}, np.zeros(1), opts=cpu_opts())


def test_whole_dict_as_a_value_is_an_error():
    @parpy.jit
    def whole(a, y):
        with parpy.gpu:
            y[0] = a + 1
    with pytest.raises(parpy.CompileError, match="`a` is a dict, not a value"):
        whole({'x': 2}, np.zeros(1), opts=cpu_opts())


def test_python_mode_takes_dicts():
    A, dense = csr(8, 9, 4)
    x = np.ones(9, np.float32)
    y = np.zeros(8, np.float32)
    spmv(A, x, y, opts=python_opts(cpu_opts({'row': parpy.threads(8)})))
    np.testing.assert_allclose(y, dense @ x, rtol=1e-5, atol=1e-6)


# -- Cuda and Metal code ----------------------------------------------------

SPMV_SPEC = {'row': parpy.threads(40)}


@needs_nvrtc
def test_cuda_code_with_dicts_compiles():
    A, _ = csr(40, 70, 1)
    args = [A, np.ones(70, np.float32), np.zeros(40, np.float32)]
    opts = backend_opts(parpy.CompileBackend.Cuda, SPMV_SPEC)
    code = parpy.print_compiled(spmv, args, opts)
    assert "// parpy-param: A['values'] f32[" in code
    check_nvrtc(code, "spmv")
    spec = {'i': parpy.threads(6), 'j': parpy.threads(6)}
    check_nvrtc(parpy.print_compiled(layer, layer_args(),
                                     backend_opts(parpy.CompileBackend.Cuda, spec)), "layer")


@needs_nvrtc
def test_cuda_dry_run_with_a_dict():
    A, _ = csr(40, 70, 1)
    args = [A, np.ones(70, np.float32), np.zeros(40, np.float32)]
    opts = backend_opts(parpy.CompileBackend.Cuda, SPMV_SPEC)
    names, launches, size = _native._cuda_dry_run(spmv, args, opts, 90)
    assert len(names) == 1 and size > 0


@needs_clang
def test_metal_code_with_dicts_parses():
    A, _ = csr(40, 70, 1, index=np.int32)
    args = [A, np.ones(70, np.float32), np.zeros(40, np.float32)]
    opts = backend_opts(parpy.CompileBackend.Metal, SPMV_SPEC)
    assert_clang_ok(parpy.print_compiled(spmv, args, opts), "spmv")
    spec = {'i': parpy.threads(6), 'j': parpy.threads(6)}
    P, out = layer_args()
    assert_clang_ok(parpy.print_compiled(layer, [P, out],
                                         backend_opts(parpy.CompileBackend.Metal, spec)), "layer")


@parpy.jit
def nested_array_as_scalar(x, y):
    with parpy.gpu:
        y[0] = x['a']['b']


def test_an_array_of_a_nested_dict_used_as_a_scalar_says_where_it_is():
    x = {'a': {'b': np.array([3], np.int64)}}
    with pytest.raises(parpy.CompileError) as e:
        nested_array_as_scalar(x, np.zeros(1, np.int64), opts=cpu_opts())
    text = str(e.value)
    assert "array `x['a']['b']` is used as a scalar value" in text
    assert "is an array in a nested dictionary argument" in text


@parpy.jit
def shift_in_dict(d, z, N):
    for i in range(1, N):
        d["y"][i] = d["x"][i - 1] + 1.0
    for i in range(N):
        z[i] = d["x"][i] * 2.0


def test_one_array_under_two_keys_is_one_array_as_in_python():
    # (it was refused as "views of one buffer" that overlap: the same array
    # passed as two parameters was already one array)
    for same in ("keys", "key and parameter"):
        a = np.zeros(5)
        want = np.zeros(5)
        if same == "keys":
            d, z, dw, zw = {'x': a, 'y': a}, np.zeros(5), {'x': want, 'y': want}, np.zeros(5)
        else:
            d, z, dw, zw = {'x': a, 'y': np.zeros(5)}, a, {'x': want, 'y': np.zeros(5)}, want
        shift_in_dict.py_func(dw, zw, 5)
        shift_in_dict(d, z, 5, opts=cpu_opts())
        assert np.array_equal(a, want) and np.array_equal(d['y'], dw['y']), same


def test_a_sparse_torch_tensor_rides_along_in_a_dict_and_is_named_as_an_argument():
    # (torch's "Cannot access data pointer of Tensor that doesn't have
    # storage", a RuntimeError naming no argument)
    torch = pytest.importorskip("torch")

    @parpy.jit
    def row_sums(A, y, N):
        for i in range(N):
            y[i] = A['values'][i]

    d = torch.eye(4).to_sparse_csr()
    y = torch.zeros(4)
    row_sums({'original': d, 'values': d.values()}, y, 4, opts=cpu_opts())
    assert y.tolist() == [1.0] * 4
    with pytest.raises(TypeError, match=r"argument `x` of `copy_of` is a sparse torch tensor \(torch.sparse_csr\)"):
        @parpy.jit
        def copy_of(x, y, N):
            for i in range(N):
                y[i] = x[i]
        copy_of(d, y, 4, opts=cpu_opts())
