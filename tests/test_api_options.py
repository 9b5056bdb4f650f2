"""The public API around the compiler: LoopPar, CompileOptions, backends,
argument checking of jit calls, builtins usable from plain Python."""

import copy
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

import parpy


def cpu(spec=None, cache_dir=None, **fields):
    opts = parpy.par(dict(spec or {}))
    opts.backend = parpy.CompileBackend.Cpu
    if cache_dir is not None:
        opts.cache_dir = str(cache_dir)
    for k, v in fields.items():
        setattr(opts, k, v)
    return opts


@parpy.jit
def axpy(x, y, a, N):
    parpy.label('i')
    for i in range(N):
        y[i] = y[i] + a * x[i]


@parpy.jit
def copy_first(x, y):
    y[0] = x[0]


# ---------------------------------------------------------------- LoopPar


def test_threads_and_modifiers_are_immutable():
    t = parpy.threads(128)
    t2 = t.tpb(64)
    t3 = t2.par_reduction()
    assert repr(t) == "parpy.threads(128)"
    assert repr(t2) == "parpy.threads(128).tpb(64)"
    assert repr(t3) == "parpy.threads(128).tpb(64).par_reduction()"
    assert t.threads_per_block is None and not t.is_reduction
    assert t2.threads_per_block == 64 and not t2.is_reduction
    assert t3.is_reduction and t3.threads() == t3.nthreads == 128
    assert t.reduce() == t.par_reduction()
    assert t != t2


@pytest.mark.parametrize("n", [0, 1, 33, 100, -32])
def test_tpb_must_be_multiple_of_32(n):
    with pytest.raises(ValueError, match="multiple of 32"):
        parpy.threads(4).tpb(n)


def test_limits_are_checked_when_set():
    # (tpb(2**40) and a cluster of 2**40 blocks were accepted, refused only
    # when compiling for a GPU, or never on Cpu; an empty label too)
    for n in (1056, 2048, 2**40):
        with pytest.raises(ValueError, match=f"of at most 1024 \\(a GPU's largest block\\), got {n}"):
            parpy.threads(4096).tpb(n)
    assert parpy.threads(4096).tpb(1024).threads_per_block == 1024
    o = parpy.CompileOptions()
    for n in (32, 2**40):
        with pytest.raises(ValueError, match=f"power of two of at most 16 \\(CUDA's largest "
                           f"cluster\\), got {n}"):
            o.max_thread_blocks_per_cluster = n
    o.max_thread_blocks_per_cluster = 16
    assert o.max_thread_blocks_per_cluster == 16
    for make in (lambda: parpy.par({'': parpy.threads(4)}),
                 lambda: setattr(o, "parallelize", {'i': parpy.threads(2), '': parpy.threads(4)})):
        with pytest.raises(ValueError, match="the parallel specification has an empty label ''"):
            make()


@pytest.mark.parametrize("n", [0, -1])
def test_threads_must_be_positive(n):
    with pytest.raises(ValueError, match="positive"):
        parpy.threads(n)


@pytest.mark.parametrize("n,exc,words", [
    (2.5, TypeError, "parpy.threads(n) needs an int thread count, got float 2.5"),
    (True, TypeError, "got bool True"),
    ("8", TypeError, "got str '8'"),
    (2 ** 70, ValueError, "parpy.threads(n) needs a thread count that fits in 64 bits"),
])
def test_threads_name_themselves_for_a_count_that_is_not_an_int(n, exc, words):
    # (before: Python's conversion words alone, "'float' object cannot be
    # interpreted as an integer", and `threads(True)` was one thread)
    with pytest.raises(exc) as e:
        parpy.threads(n)
    assert words in str(e.value)
    # integers of other kinds still count (ParPy's tests pass 0-d tensors)
    assert parpy.threads(np.int32(8)) == parpy.threads(8)
    with pytest.raises(TypeError, match=r"LoopPar.tpb\(n\) needs an int"):
        parpy.threads(64).tpb(32.0)


def test_jit_takes_functions_defined_with_def():
    # (before: `jit(5)` was a CompileError about source code, `jit(np.sum)`
    # an AttributeError about `__code__`)
    for bad, words in [(5, "got int 5"), (np.sum, "got _ArrayFunctionDispatcher"), (len, "builtin_function")]:
        with pytest.raises(TypeError, match="parpy.jit takes a Python function defined with `def`") as e:
            parpy.jit(bad)
        assert words in str(e.value)
    with pytest.raises(TypeError, match="not a lambda"):
        parpy.jit(lambda x: x)
    # (print_compiled of a lambda was a CompileError at line 1:1)
    with pytest.raises(TypeError, match="not a lambda"):
        parpy.print_compiled(lambda x: None, [np.zeros(3)], parpy.par({}))

    async def coroutine(x):
        return x
    with pytest.raises(TypeError, match="async def coroutine"):
        parpy.jit(coroutine)


def test_older_reduce_spelling():
    assert parpy.reduce(8) == parpy.threads(8).par_reduction()
    marker = parpy.reduce()
    assert marker.is_reduction and marker.nthreads is None
    opts = cpu({'i': marker})
    x = np.ones(4)
    with pytest.raises(ValueError, match="par_reduction"):
        axpy(x, x.copy(), 1.0, 4, opts=opts)
    # the namespace side of parpy.reduce
    assert parpy.reduce.sum is parpy.operators.sum is parpy.sum
    assert parpy.reduce.max(np.array([1, 5, 2])) == 5


# ---------------------------------------------------------- CompileOptions


def test_defaults():
    o = parpy.CompileOptions()
    assert o.parallelize == {}
    assert o.backend == parpy.CompileBackend.Auto
    assert o.specialize_scalars is True
    assert o.force_int_size is None and o.force_float_size is None
    assert o.includes == [] and o.libs == [] and o.extra_flags == []
    assert o.cache_dir is None
    assert o.max_thread_blocks_per_cluster == 8
    assert o.debug_print is False and o.write_output is False
    assert o.device is None  # unset: the device of the device arguments
    for name in ["verbose_backend_resolution", "use_cuda_thread_block_clusters", "use_cuda_graphs"]:
        assert getattr(o, name) is False
    assert isinstance(o.max_unroll_count, int)


def test_fields_round_trip(tmp_path):
    o = parpy.par({'a': parpy.threads(4)})
    values = dict(
        backend=parpy.CompileBackend.Cpu,
        verbose_backend_resolution=True,
        debug_print=True,
        write_output=True,
        max_unroll_count=4,
        use_cuda_thread_block_clusters=True,
        max_thread_blocks_per_cluster=16,
        use_cuda_graphs=True,
        force_int_size=32,
        force_float_size=32,
        includes=["/usr/include"],
        libs=["m"],
        extra_flags=["-DX=1"],
        specialize_scalars=False,
        device=1,
        cache_dir=str(tmp_path),
    )
    for k, v in values.items():
        setattr(o, k, v)
    for k, v in values.items():
        assert getattr(o, k) == v, k
    assert o.parallelize == {'a': parpy.threads(4)}
    o.parallelize = {'b': parpy.threads(2)}
    assert list(o.parallelize) == ['b']
    o.cache_dir = None
    assert o.cache_dir is None
    o.force_int_size = None
    assert o.force_int_size is None
    o2 = parpy.CompileOptions(**values)
    assert o2.force_float_size == 32 and o2.backend == parpy.CompileBackend.Cpu


@pytest.mark.parametrize("field,value,exc", [
    ("max_thread_blocks_per_cluster", 3, ValueError),
    ("max_thread_blocks_per_cluster", 0, ValueError),
    ("force_int_size", 12, ValueError),
    ("force_int_size", 128, ValueError),
    ("force_float_size", 8, ValueError),
    ("force_float_size", "32", TypeError),
    ("backend", "Cpu", TypeError),
    ("specialize_scalars", 1, TypeError),
    ("includes", "/usr/include", TypeError),
    ("libs", [1], TypeError),
    ("parallelize", {'a': 4}, TypeError),
    ("parallelize", {1: parpy.threads(4)}, TypeError),
    ("parallelize", [('a', parpy.threads(4))], TypeError),
    ("device", -1, ValueError),
    ("device", "cuda:1", TypeError),
    ("device", True, TypeError),
    ("max_unroll_count", -1, ValueError),
    ("no_such_field", 1, AttributeError),
])
def test_invalid_values_are_rejected(field, value, exc):
    o = parpy.CompileOptions()
    before = repr(o)
    with pytest.raises(exc):
        setattr(o, field, value)
    assert repr(o) == before, "a rejected value must not change the options"


@pytest.mark.parametrize("field,value,message", [
    # (it said "must be an int, got int")
    ("max_unroll_count", 2**70,
     "CompileOptions.max_unroll_count is out of range: it must be an int from 0 to 2**63 - 1, "
     f"got {2**70}"),
    ("max_unroll_count", -2**63 - 1,
     "CompileOptions.max_unroll_count is out of range: it must be an int from 0 to 2**63 - 1"),
    ("max_thread_blocks_per_cluster", 2**64,
     "CompileOptions.max_thread_blocks_per_cluster is out of range: it must be a power of two "
     f"from 1 to 16, got {2**64}"),
    ("device", 2**70,
     "CompileOptions.device is out of range: it must be None or an int from 0 to 2**63 - 1, "
     f"got {2**70}"),
    ("force_int_size", 2**70, f"force_int_size must be None or one of 8, 16, 32, 64, got {2**70}"),
    ("force_float_size", -2**70, "force_float_size must be None or one of 16, 32, 64, got "),
])
def test_ints_beyond_64_bits_are_out_of_range_not_of_the_wrong_type(field, value, message):
    o = parpy.CompileOptions()
    with pytest.raises(ValueError) as e:
        setattr(o, field, value)
    assert str(e.value).startswith(message), str(e.value)
    with pytest.raises(ValueError):
        parpy.CompileOptions(**{field: value})
    assert o == parpy.CompileOptions()


def test_device_is_unset_by_default_settable_and_part_of_the_options():
    o = parpy.CompileOptions()
    assert o.device is None
    o.device = 1
    assert o.device == 1
    # an explicit device 0 is another choice than "where the arguments are"
    assert o != parpy.CompileOptions() and parpy.CompileOptions(device=0) != parpy.CompileOptions()
    o.device = None
    assert o.device is None and o == parpy.CompileOptions()
    assert parpy.CompileOptions(device=None).device is None
    with pytest.raises(TypeError, match="CompileOptions.device must be an int or None"):
        o.device = 1.5
    with pytest.raises(ValueError, match="device must be None or >= 0, got -2"):
        o.device = -2
    assert o.copy().device is None
    import pickle
    assert pickle.loads(pickle.dumps(o)).device is None
    o.device = 2
    assert pickle.loads(pickle.dumps(o)).device == 2


def test_par_validates_its_argument():
    with pytest.raises(TypeError, match="LoopPar"):
        parpy.par({'a': 3})
    with pytest.raises(TypeError):
        parpy.par(['a'])


def test_cache_dir_accepts_paths_and_expands_user(tmp_path, monkeypatch):
    o = parpy.CompileOptions()
    o.cache_dir = tmp_path
    assert o.cache_dir == str(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    o.cache_dir = "~/parpy-cache"
    assert o.cache_dir == str(tmp_path / "parpy-cache")
    with pytest.raises(TypeError):
        o.cache_dir = 3


def test_unknown_attribute_read():
    with pytest.raises(AttributeError):
        parpy.CompileOptions().nonexistent


# --------------------------------------------------------------- backends


def test_backend_resolution(capsys, tmp_path):
    assert parpy.CompileBackend.Cpu in parpy.backend.available
    assert parpy.backend.is_enabled(parpy.CompileBackend.Cpu)
    assert parpy.backend.explain(parpy.CompileBackend.Cpu).startswith("Cpu: usable: C compiler")
    assert parpy.backend.explain(parpy.CompileBackend.Metal).startswith("Metal: not usable")
    opts = cpu({'i': parpy.threads(2)}, tmp_path, verbose_backend_resolution=True)
    opts.backend = parpy.CompileBackend.Auto
    x = np.arange(4.0)
    y = np.zeros(4)
    axpy(x, y, 2.0, 4, opts=opts)
    assert np.array_equal(y, 2 * x)
    err = capsys.readouterr().err
    assert "Cpu: usable" in err and "Cuda:" in err and "Metal:" in err


@pytest.mark.skipif(parpy.backend.is_enabled(parpy.CompileBackend.Cuda), reason="has CUDA")
def test_running_on_unavailable_backend_is_a_clear_error(tmp_path):
    opts = cpu({'i': parpy.threads(2)}, tmp_path)
    opts.backend = parpy.CompileBackend.Cuda
    x = np.arange(4.0)
    with pytest.raises(RuntimeError, match="Cuda"):
        axpy(x, x.copy(), 2.0, 4, opts=opts)
    with pytest.raises(RuntimeError, match="Cuda"):
        parpy.compile_string("f", "// parpy-entry: f\n", opts)


# ------------------------------------------------------- argument checking


def test_wrong_argument_count(tmp_path):
    x = np.arange(4.0)
    with pytest.raises(TypeError, match=r"axpy\(\) takes 4 positional arguments \(x, y, a, N\) but 3 were given"):
        axpy(x, x, 1.0, opts=cpu(cache_dir=tmp_path))


def test_missing_opts():
    x = np.arange(4.0)
    with pytest.raises(TypeError, match="missing the keyword argument `opts`") as e:
        axpy(x, x.copy(), 1.0, 4)
    # also a RuntimeError with ParPy's words (ParPy programs catch those)
    assert isinstance(e.value, RuntimeError)
    assert "Missing required keyword argument opts in call to axpy" in str(e.value)


def test_unknown_keyword(tmp_path):
    x = np.arange(4.0)
    with pytest.raises(TypeError, match="unexpected keyword argument `option`"):
        axpy(x, x.copy(), 1.0, 4, option=cpu(cache_dir=tmp_path))
    with pytest.raises(TypeError, match="unexpected keyword argument `extra`"):
        axpy(x, x.copy(), 1.0, 4, opts=cpu(cache_dir=tmp_path), extra=1)


# Both entries of a call: CPython's vectorcall (a call from Python code,
# turned on by the first call) and tp_call (PyObject_Call with a tuple and a
# dict, as functools.partial and C extensions call). They check the same and
# give the same answer; the vectorcall entry keeps no reference.


def test_call_entries_agree(tmp_path):
    import functools
    x = np.arange(4.0)
    opts = cpu({'i': parpy.threads(2)}, tmp_path)
    y = np.zeros(4)
    axpy(x, y, 2.0, 4, opts=opts)  # the first call turns the vectorcall entry on
    assert type(axpy).__flags__ & (1 << 11), "JitFunction has no vectorcall entry"
    y2 = np.zeros(4)
    functools.partial(axpy, opts=opts)(x, y2, 2.0, 4)  # PyObject_Call: tp_call
    y3 = np.zeros(4)
    axpy(*(x, y3), *[2.0, 4], **{'opts': opts})
    assert np.array_equal(y, 2.0 * x) and np.array_equal(y2, y) and np.array_equal(y3, y)
    for call in (lambda **k: axpy(x, y, 1.0, 4, **k),
                 lambda **k: functools.partial(axpy, x, y)(1.0, 4, **k)):
        with pytest.raises(TypeError, match="unexpected keyword argument `extra`"):
            call(opts=opts, extra=1)
        with pytest.raises(TypeError, match="unexpected keyword argument `extra`"):
            call(extra=1, opts=opts)
        with pytest.raises(TypeError, match="missing the keyword argument `opts`"):
            call()
        with pytest.raises(TypeError, match="CompileOptions"):
            call(opts=1)
    with pytest.raises(TypeError, match="takes 4 positional arguments"):
        functools.partial(axpy, x, y)(1.0, opts=opts)
    with pytest.raises(TypeError, match="takes 4 positional arguments"):
        functools.partial(axpy, *([x] * 70))(opts=opts)


def test_cached_calls_keep_no_reference(tmp_path):
    import gc
    import sys
    x = np.arange(4.0)
    y = np.zeros(4)
    opts = cpu({'i': parpy.threads(2)}, tmp_path)
    axpy(x, y, 2.0, 4, opts=opts)
    # (each caught TypeError's traceback holds frames, whose None locals
    # count until the collector frees the cycle: collected before each
    # count, or None's count moved by about 100 when it ran, in CI once)
    gc.collect()
    before = [sys.getrefcount(v) for v in (x, y, opts, None)]
    for _ in range(1000):
        axpy(x, y, 2.0, 4, opts=opts)
    for _ in range(100):
        with pytest.raises(TypeError):
            axpy(x, y, 2.0, 4, opts=opts, extra=1)
    gc.collect()
    after = [sys.getrefcount(v) for v in (x, y, opts, None)]
    assert after[:3] == before[:3]
    assert abs(after[3] - before[3]) < 50  # None: immortal from 3.12 on


def test_opts_of_wrong_type():
    x = np.arange(4.0)
    with pytest.raises(TypeError, match="CompileOptions"):
        axpy(x, x.copy(), 1.0, 4, opts={'i': parpy.threads(2)})


def test_non_contiguous_array(tmp_path):
    x = np.arange(8.0)[::2]
    y = np.zeros(4)
    with pytest.raises(ValueError) as e:
        axpy(x, y, 1.0, 4, opts=cpu(cache_dir=tmp_path))
    assert str(e.value) == (
        "argument `x` of `axpy` is not C-contiguous; pass a C-contiguous array: "
        "np.ascontiguousarray(x) is one, but a copy, so where `axpy` writes `x` its results "
        "go to the copy: pass `t = np.ascontiguousarray(x)`, then copy them back with "
        "`x[...] = t`"
    )


def test_a_non_contiguous_output_is_copied_back_as_the_error_says(tmp_path):
    # (the error suggested np.ascontiguousarray(y): a copy, whose results
    # were lost to `y`)
    x, y = np.arange(4.0), np.zeros(8)[::2]
    with pytest.raises(ValueError, match=r"copy them back with `y\[\.\.\.\] = t`"):
        axpy(x, y, 1.0, 4, opts=cpu(cache_dir=tmp_path))
    t = np.ascontiguousarray(y)
    axpy(x, t, 1.0, 4, opts=cpu(cache_dir=tmp_path))
    y[...] = t
    assert y.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_unaligned_array_hint_is_a_copy(tmp_path):
    # np.ascontiguousarray keeps an unaligned contiguous array as it is
    y = np.zeros(33, np.uint8)[1:].view(np.float64)
    assert y.flags.c_contiguous and not y.flags.aligned
    with pytest.raises(ValueError) as e:
        axpy(np.arange(4.0), y, 1.0, 4, opts=cpu(cache_dir=tmp_path))
    assert str(e.value) == (
        "argument `y` of `axpy` is not aligned; pass an aligned array: y.copy() is one, but "
        "a copy, so where `axpy` writes `y` its results go to the copy: pass `t = y.copy()`, "
        "then copy them back with `y[...] = t`")
    assert y.copy().flags.aligned


def test_read_only_written_array(tmp_path):
    x = np.arange(4.0)
    y = np.zeros(4)
    y.setflags(write=False)
    opts = cpu({'i': parpy.threads(2)}, tmp_path)
    with pytest.raises(ValueError, match="argument `y` of `axpy` is read-only"):
        axpy(x, y, 1.0, 4, opts=opts)
    # read-only but only read: fine (and the check also runs on a cache hit)
    x.setflags(write=False)
    y2 = np.zeros(4)
    axpy(x, y2, 1.0, 4, opts=opts)
    assert np.array_equal(y2, x)
    with pytest.raises(ValueError, match="`y` of `axpy` is read-only"):
        axpy(x, y, 1.0, 4, opts=opts)


@pytest.mark.parametrize("dtype", [np.complex128, np.longdouble, np.complex64, np.datetime64])
def test_unsupported_dtype(tmp_path, dtype):
    x = np.zeros(4, dtype=dtype)
    y = np.zeros(4, dtype=dtype)
    with pytest.raises(TypeError, match=f"argument `x` of `copy_first` has dtype {np.dtype(dtype).name}"):
        copy_first(x, y, opts=cpu(cache_dir=tmp_path))


@pytest.mark.parametrize("value,tname", [([1.0, 2.0], "list"), ("s", "str")])
def test_unsupported_object(tmp_path, value, tname):
    x = np.arange(4.0)
    with pytest.raises(TypeError, match=f"argument `a` of `axpy` has type {tname}"):
        axpy(x, x.copy(), value, 4, opts=cpu(cache_dir=tmp_path))


def test_a_none_argument_that_is_read_is_a_located_type_error(tmp_path):
    # (None is an argument parpy compiles for, tests/test_none_args.py: a
    # read of it, here `a * x[i]`, is the error, pointing at the read)
    x = np.arange(4.0)
    with pytest.raises(TypeError, match="`a` is None here .the argument passed has type NoneType.") as e:
        axpy(x, x.copy(), None, 4, opts=cpu(cache_dir=tmp_path))
    assert "y[i] = y[i] + a * x[i]" in str(e.value)


def test_int_too_large(tmp_path):
    x = np.arange(4.0)
    with pytest.raises(OverflowError, match="`N` of `axpy`"):
        axpy(x, x.copy(), 1.0, 2**70, opts=cpu(cache_dir=tmp_path))


def test_numpy_scalars_are_scalars(tmp_path):
    x = np.arange(4.0)
    y = np.zeros(4)
    axpy(x, y, np.float64(3.0), np.int64(4), opts=cpu({'i': parpy.threads(2)}, tmp_path))
    assert np.array_equal(y, 3 * x)


# ---------------------------------------------------- specialization cache


def test_scalar_specialization_and_fingerprint(tmp_path):
    @parpy.jit
    def scale(x, y, a, N):
        for i in range(N):
            y[i] = a * x[i]

    x = np.arange(5.0)
    y = np.zeros(5)
    spec = cpu(cache_dir=tmp_path)
    for a in [1.0, 2.0, 3.0]:
        scale(x, y, a, 5, opts=spec)
        assert np.array_equal(y, a * x)
    assert scale.cache_size() == 3
    dyn = cpu(cache_dir=tmp_path, specialize_scalars=False)
    for a in [4.0, 5.0, 6.0]:
        scale(x, y, a, 5, opts=dyn)
        assert np.array_equal(y, a * x)
    assert scale.cache_size() == 4
    # a new options object with the same contents reuses the entry
    scale(x, y, 7.0, 5, opts=cpu(cache_dir=tmp_path, specialize_scalars=False))
    assert scale.cache_size() == 4
    # mutating an options object is seen by the next call
    dyn.specialize_scalars = True
    scale(x, y, 8.0, 5, opts=dyn)
    assert np.array_equal(y, 8.0 * x)
    assert scale.cache_size() == 5
    # a new shape or dtype is a new specialization
    scale(np.arange(6.0), np.zeros(6), 8.0, 6, opts=dyn)
    xf = np.arange(5, dtype=np.float32)
    yf = np.zeros(5, dtype=np.float32)
    scale(xf, yf, 8.0, 5, opts=dyn)
    assert np.array_equal(yf, 8.0 * xf)
    assert scale.cache_size() == 7
    parpy.clear_cache()
    assert scale.cache_size() == 0
    scale(x, y, 9.0, 5, opts=dyn)
    assert np.array_equal(y, 9.0 * x)


def test_write_output(tmp_path, capsys):
    opts = cpu({'i': parpy.threads(2)}, tmp_path, write_output=True)
    x = np.arange(4.0)
    axpy(x, x.copy(), 2.5, 4, opts=opts)
    files = list((tmp_path / "generated").glob("axpy-*.c"))
    assert len(files) == 1
    assert "parpy-entry:" in files[0].read_text()
    assert str(files[0]) in capsys.readouterr().err


# --------------------------------------------------------------- jit object


def test_jit_object():
    def f(x, y):
        y[0] = x[0]

    j = parpy.jit(f)
    assert j.py_func is f and j.__wrapped__ is f
    assert j.__name__ == "f"
    assert j.parameters == ["x", "y"]
    assert parpy.jit(j) is j
    assert "f" in repr(j)


def test_decoration_error_is_compile_error():
    with pytest.raises(parpy.CompileError, match="(?i)comprehension"):
        @parpy.jit
        def bad(x, N):
            y = {x[i] for i in range(N)}  # noqa: F841


def test_print_compiled_on_undecorated_function():
    def add_one(x, N):
        parpy.label('i')
        for i in range(N):
            x[i] = x[i] + 1.0

    x = np.zeros(16, dtype=np.float32)
    code = parpy.print_compiled(add_one, [x, 16], parpy.par({'i': parpy.threads(4)}))
    assert "parpy-entry:" in code and "add_one" in code
    with pytest.raises(TypeError, match="takes 2 positional arguments"):
        parpy.print_compiled(add_one, [x], parpy.par({}))
    with pytest.raises(TypeError, match="function"):
        parpy.print_compiled(42, [x, 16], parpy.par({}))


def test_print_compiled_fills_in_the_defaults():
    # (print_compiled took every parameter positionally: a function with
    # defaults was "takes 4 positional arguments but 2 were given")
    def scale(x, N, s=2.0, *, shift=3):
        for i in range(N):
            x[i] = x[i] * s + shift

    x = np.zeros(4)
    code = parpy.print_compiled(scale, [x, 4], parpy.par({}))
    assert "x[i] * 2.0 + 3.0" in code, code
    code = parpy.print_compiled(scale, [x, 4, 5.0, 7], parpy.par({}))
    assert "x[i] * 5.0 + 7.0" in code, code
    with pytest.raises(TypeError, match="takes 4 positional arguments"):
        parpy.print_compiled(scale, [x], parpy.par({}))


def test_unused_label_warns(tmp_path):
    x = np.arange(4.0)
    opts = cpu({'nowhere': parpy.threads(2)}, tmp_path)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        axpy(x, x.copy(), 1.0, 4, opts=opts)
    msgs = [str(x.message) for x in w if issubclass(x.category, parpy.ParpyWarning)]
    assert any("nowhere" in m for m in msgs), [str(x.message) for x in w]


def test_exception_classes():
    assert issubclass(parpy.CompileError, RuntimeError)
    assert issubclass(parpy.CompileTypeError, parpy.CompileError)
    assert issubclass(parpy.CompileTypeError, TypeError)
    assert issubclass(parpy.InternalError, Exception)
    assert issubclass(parpy.ParpyWarning, UserWarning)
    assert not issubclass(parpy.CompileError, parpy.InternalError)


# ------------------------------------------------- builtins in plain Python


def test_builtins_carry_their_names():
    names = {
        parpy.label: "label",
        parpy.gpu: "gpu",
        parpy.sum: "operators.sum",
        parpy.operators.sum: "operators.sum",
        parpy.operators.prod: "operators.prod",
        parpy.operators.max: "operators.max",
        parpy.operators.min: "operators.min",
        parpy.math.sqrt: "math.sqrt",
        parpy.math.atan2: "math.atan2",
        parpy.builtin.convert: "builtin.convert",
        parpy.builtin.maximum: "builtin.maximum",
        parpy.builtin.minimum: "builtin.minimum",
        parpy.builtin.inf: "builtin.inf",
    }
    for obj, name in names.items():
        assert obj.__parpy_builtin__ == name
    assert parpy.types.F32.__parpy_dtype__ == "float32"
    assert parpy.ElemSize.I64 is parpy.types.I64


def test_builtins_work_in_plain_python():
    a = np.array([1.0, 4.0, 9.0])
    assert parpy.operators.sum(a) == 14.0
    assert parpy.sum(a) == 14.0
    assert parpy.operators.prod(a) == 36.0
    assert parpy.operators.max(a) == 9.0 and parpy.operators.min(a) == 1.0
    assert np.array_equal(parpy.math.sqrt(a), [1.0, 2.0, 3.0])
    assert parpy.math.atan2(1.0, 1.0) == pytest.approx(np.pi / 4)
    assert parpy.builtin.maximum(2, 3) == 3 and parpy.builtin.minimum(2, 3) == 2
    assert parpy.builtin.inf == float("inf")
    assert parpy.builtin.convert(1.7, parpy.types.I32) == 1
    assert parpy.builtin.convert(2, np.float32).dtype == np.float32
    assert parpy.label("x") is None
    with parpy.gpu:
        pass
    parpy.sync()
    with pytest.raises(RuntimeError, match="^no$"):
        parpy.builtin.static_fail("no")


def test_the_same_function_runs_as_plain_python(tmp_path):
    @parpy.jit
    def norm_rows(x, y, N):
        parpy.label('r')
        for i in range(N):
            s = parpy.operators.sum(x[i, :])
            y[i, :] = x[i, :] / s

    x = np.random.rand(6, 5) + 0.5
    ref = np.zeros_like(x)
    got = np.zeros_like(x)
    norm_rows.py_func(x, ref, 6)
    norm_rows(x, got, 6, opts=cpu({'r': parpy.threads(3)}, tmp_path))
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    np.testing.assert_allclose(got, x / x.sum(axis=1, keepdims=True), rtol=1e-12)


def test_import_is_light():
    code = "import sys, parpy; assert 'torch' not in sys.modules; assert 'numba' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_import_alias_resolves(tmp_path):
    import parpy as pp

    @pp.jit
    def twice(x, N):
        pp.label('i')
        for i in range(N):
            x[i] = x[i] * 2.0

    x = np.arange(4.0)
    twice(x, 4, opts=cpu({'i': pp.threads(2)}, tmp_path))
    assert np.array_equal(x, [0.0, 2.0, 4.0, 6.0])


SCALE = 3.0


def plain_helper(a, b):
    return a * b


def test_globals_closure_and_helpers_resolve(tmp_path):
    k = 2.0

    @parpy.jit
    def g(x, N):
        parpy.label('i')
        for i in range(N):
            x[i] = plain_helper(x[i], SCALE) + k

    x = np.arange(4.0)
    g(x, 4, opts=cpu({'i': parpy.threads(2)}, tmp_path))
    np.testing.assert_array_equal(x, np.arange(4.0) * 3.0 + 2.0)


class _CountingInt(int):
    """An int that counts how often parpy asks it for a marker attribute
    (each resolution of a name classifies the object it names)."""

    asked = 0

    def __getattr__(self, name):
        if name == "__parpy_dtype__":
            type(self).asked += 1
        raise AttributeError(name)


COUNTED = _CountingInt(3)


def test_a_name_read_many_times_is_resolved_once_per_compile(tmp_path):
    @parpy.jit
    def f(x, N):
        parpy.label('i')
        for i in range(N):
            x[i] = x[i] * COUNTED + COUNTED - COUNTED + COUNTED

    x = np.zeros(4)
    _CountingInt.asked = 0
    parpy.print_compiled(f, [x, 4], cpu({'i': parpy.threads(2)}, tmp_path))
    assert _CountingInt.asked == 1
    # each compile asks again (a value may change between compiles)
    parpy.print_compiled(f, [x, 5], cpu({'i': parpy.threads(2)}, tmp_path))
    assert _CountingInt.asked == 2
    f(x, 4, opts=cpu({'i': parpy.threads(2)}, tmp_path))
    assert _CountingInt.asked == 3
    np.testing.assert_array_equal(x, [3.0] * 4)


def test_the_same_name_in_a_helper_of_another_module_is_its_own(tmp_path):
    # progs_alias's SCALE is 3.0, this module's 3.0 too: its OFFSET (2)
    # against a closure variable of the same name here
    import progs_alias
    OFFSET = 10

    @parpy.jit
    def g(x, y, N):
        progs_alias.scale_offset(x, y, N)
        parpy.label('j')
        for j in range(N):
            y[j] = y[j] + OFFSET

    x, y = np.arange(4.0), np.zeros(4)
    g(x, y, 4, opts=cpu({'N': parpy.threads(2), 'j': parpy.threads(2)}, tmp_path))
    np.testing.assert_array_equal(y, np.arange(4.0) * 3.0 + 2 + 10)


def test_unsupported_global_is_a_compile_error(tmp_path):
    table = [1.0, 2.0]

    @parpy.jit
    def h(x, N):
        for i in range(N):
            x[i] = table

    with pytest.raises(parpy.CompileError, match="list"):
        h(np.zeros(2), 2, opts=cpu(cache_dir=tmp_path))


@pytest.mark.parametrize("value", [
    np.int32(-7), np.int64(-(2 ** 40)), np.float32(1.25), np.float64(-0.1),
    np.bool_(True), np.bool_(False),
])
@pytest.mark.parametrize("specialize", [True, False])
def test_numpy_scalar_arguments_pass_their_value(value, specialize):
    """NumPy scalars (read through NumPy's C API on every call) reach the
    compiled code with their exact value, specialized or not."""
    x = np.ones(4)
    y = np.zeros(4)
    opts = cpu({'i': parpy.threads(2)}, specialize_scalars=specialize)
    want = float(value.item())
    axpy(x, y, value, 4, opts=opts)
    np.testing.assert_array_equal(y, np.full(4, want))
    axpy(x, y, value, np.int32(4), opts=opts)     # the cached call, again
    np.testing.assert_array_equal(y, np.full(4, 2 * want))


def test_parallelize_cannot_be_changed_in_place():
    """`opts.parallelize` is a copy: changing it in place used to be silently
    ignored; now it raises, and assignment is the way."""
    opts = parpy.par({'N': parpy.threads(4)})
    with pytest.raises(TypeError, match=r"opts.parallelize \|= \{'label'"):
        opts.parallelize['M'] = parpy.threads(8)
    opts.parallelize = {**opts.parallelize, 'M': parpy.threads(8)}
    assert set(opts.parallelize) == {'N', 'M'}
    assert opts.parallelize == {'N': parpy.threads(4), 'M': parpy.threads(8)}
    opts.parallelize |= {'K': parpy.threads(2)}
    assert set(opts.parallelize) == {'N', 'M', 'K'}
    # the copy is a mapping the field takes back, and copies of it are dicts
    opts.parallelize = opts.parallelize
    assert type(dict(opts.parallelize)) is dict and type(copy.copy(opts.parallelize)) is dict


@pytest.mark.parametrize("field", ["includes", "libs", "extra_flags"])
def test_list_fields_cannot_be_changed_in_place(field):
    """`opts.includes.append(d)` (and libs, extra_flags) changed a copy and was
    silently lost; now it raises TypeError as `parallelize` does, naming the
    assignment; `+=` and assignment reach the options."""
    opts = parpy.par({})
    for change in [lambda v: v.append("a"), lambda v: v.extend(["a"]),
                   lambda v: v.insert(0, "a"), lambda v: v.__setitem__(slice(0, 0), ["a"]),
                   lambda v: v.clear(), lambda v: v.sort()]:
        with pytest.raises(TypeError, match=rf"opts.{field} \+= \[...\] or opts.{field} = "):
            change(getattr(opts, field))
    assert getattr(opts, field) == []
    v = getattr(opts, field)
    v += ["x"]                      # a new list (as for a tuple): opts unchanged
    assert v == ["x"] and getattr(opts, field) == []
    opts.includes += ["a"]
    opts.libs += ["a"]
    opts.extra_flags += ["a"]
    setattr(opts, field, getattr(opts, field) + ["b"])
    assert getattr(opts, field) == ["a", "b"]
    assert type(list(getattr(opts, field))) is list
    assert type(copy.copy(getattr(opts, field))) is list
    assert pickle.loads(pickle.dumps(opts)) == opts


def test_constructor_unknown_keyword_is_a_type_error():
    """`CompileOptions(bogus=2)` was an AttributeError; an unexpected keyword
    argument is Python's TypeError (setting `opts.bogus` stays an
    AttributeError)."""
    with pytest.raises(TypeError, match=r"CompileOptions\(\) got an unexpected keyword "
                       r"argument 'bogus' \(fields: parallelize, backend, "):
        parpy.CompileOptions(backend=parpy.CompileBackend.Cpu, bogus=2)
    with pytest.raises(AttributeError):
        parpy.CompileOptions().bogus = 2


def test_one_worker_is_a_plain_loop_on_the_cpu():
    """threads(1) asks for one worker: no OpenMP parallel region (waking the
    team cost ~2 us per call), same results."""
    x, y = np.arange(16.0), np.zeros(16)
    one = parpy.print_compiled(axpy, [x, y, 2.0, 16], cpu({'i': parpy.threads(1)}))
    many = parpy.print_compiled(axpy, [x, y, 2.0, 16], cpu({'i': parpy.threads(4)}))
    assert "omp parallel" not in one and "omp parallel" in many
    axpy(x, y, 2.0, 16, opts=cpu({'i': parpy.threads(1)}))
    np.testing.assert_array_equal(y, 2.0 * x)


def test_a_wrapper_another_decorator_made_is_refused_with_a_reason():
    # (getsource gave the wrapped function's text: "f() takes 0 positional
    # arguments () but 2 were given", and errors at the wrapper's lines)
    import functools

    def logged(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)
        return wrapper

    with pytest.raises(parpy.CompileError, match="it is a wrapper made by another decorator"):
        @parpy.jit
        @logged
        def f(x, N):
            for i in range(N):
                x[i] = 2.0


def test_bad_arguments_of_the_api_functions_are_clear_errors():
    # (set_max_loaded(-1) was "can't convert negative int to unsigned";
    # print_compiled of a dict took its keys as the arguments)
    with pytest.raises(ValueError, match="n must be an int of at least 1, got -1"):
        parpy.set_max_loaded(-1)

    def g(x, N):
        for i in range(N):
            x[i] = 1.0

    with pytest.raises(TypeError, match="`args` must be a list of the arguments, not a dict"):
        parpy.print_compiled(g, {'x': np.zeros(2), 'N': 2}, parpy.par({}))
