"""ParPy compatibility (issue 11): the names, exception classes and argument
kinds that programs written for ParPy use. Each block says which item."""

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import parpy
from conftest import cpu_opts

CPU = parpy.CompileBackend.Cpu


# --------------------------------------------------------------------------
# 1. names


def test_backend_list_and_is_enabled_verbose(capsys):
    assert parpy.CompileBackend.Cuda in parpy.backend.backends
    assert parpy.CompileBackend.Metal in parpy.backend.backends
    assert isinstance(parpy.backend.backends, list)
    assert parpy.backend.is_enabled(CPU, verbose=True)
    capsys.readouterr()
    # Metal never runs here (code generation only): verbose says why
    assert not parpy.backend.is_enabled(parpy.CompileBackend.Metal, verbose=True)
    assert "Metal" in capsys.readouterr().out
    assert CPU in parpy.backend_available()


def test_element_type_conversions():
    assert parpy.types.F32.to_numpy() == np.dtype(np.float32)
    assert parpy.types.U16.to_numpy() == np.dtype(np.uint16)
    assert parpy.types.I64.size() == 8 and parpy.types.F16.size() == 2
    assert parpy.ElemSize.I8 is parpy.types.I8


def test_parpy_parpy_module_and_scalar_sizes():
    from parpy.parpy import ElemSize, ScalarSizes

    opts = parpy.CompileOptions()
    opts.backend = parpy.CompileBackend.Metal
    s = ScalarSizes(opts)
    assert (s.int, s.float) == (ElemSize.I32, ElemSize.F32)
    opts.backend = CPU
    assert (ScalarSizes(opts).int, ScalarSizes(opts).float) == (ElemSize.I64, ElemSize.F64)
    opts.force_int_size = parpy.types.U8
    assert ScalarSizes(opts).int is parpy.types.U8


def test_top_level_names():
    lp = parpy.par_reduction()
    assert lp.is_reduction and lp.threads() is None
    assert parpy.Target.Host != parpy.Target.Device
    parpy.sync(CPU)  # nothing to wait for
    parpy.sync()


def test_debug_callbacks_option():
    opts = parpy.CompileOptions()
    assert opts.debug_callbacks is False
    opts.debug_callbacks = True
    assert opts.debug_callbacks is True
    assert opts != parpy.CompileOptions()
    with pytest.raises(TypeError):
        opts.debug_callbacks = 1


@parpy.jit
def _keep_scalar(x, y):
    with parpy.gpu:
        y[0] = x


def test_force_sizes_take_element_types_or_bits():
    opts = cpu_opts()
    opts.force_int_size = parpy.types.I32
    assert opts.force_int_size is parpy.types.I32
    assert "int32_t x" in parpy.print_compiled(_keep_scalar, [1, np.zeros(1, np.int64)], opts)
    opts.force_int_size = parpy.types.U16
    assert "uint16_t x" in parpy.print_compiled(_keep_scalar, [1, np.zeros(1, np.int64)], opts)
    opts.force_int_size = 16  # our spelling, read back as given
    assert opts.force_int_size == 16
    assert "int16_t x" in parpy.print_compiled(_keep_scalar, [1, np.zeros(1, np.int64)], opts)
    opts.force_float_size = parpy.types.F32
    assert "float x" in parpy.print_compiled(_keep_scalar, [1.5, np.zeros(1)], opts)
    with pytest.raises(ValueError, match="force_float_size"):
        opts.force_float_size = parpy.types.I32
    with pytest.raises(ValueError, match="force_int_size"):
        opts.force_int_size = parpy.types.F64
    with pytest.raises(ValueError, match="8, 16, 32, 64"):
        opts.force_int_size = 12


# --------------------------------------------------------------------------
# 2. exception classes


def test_compile_error_is_a_runtime_error():
    assert issubclass(parpy.CompileError, RuntimeError)
    assert issubclass(parpy.CompileTypeError, parpy.CompileError)
    assert issubclass(parpy.CompileTypeError, TypeError)


@parpy.jit
def _bitand(y, a, b):
    with parpy.gpu:
        y[0] = a[0] & b[0]


def test_type_errors_are_type_errors_with_source():
    x = np.ones(1, np.float32)
    with pytest.raises(TypeError) as e:
        _bitand(x, x, x, opts=cpu_opts())
    assert isinstance(e.value, parpy.CompileError)
    assert "test_parpy_compat.py" in str(e.value)


@parpy.jit
def _returns(x):
    with parpy.gpu:
        return x[0]


def test_main_function_return_message():
    with pytest.raises(TypeError, match="Main function _returns cannot return a value"):
        _returns(np.ones(1), opts=cpu_opts())


def test_metal_double_precision_message():
    opts = parpy.par({})
    opts.backend = parpy.CompileBackend.Metal
    with pytest.raises(TypeError, match="does not support double-precision floating-point"):
        parpy.print_compiled(_keep_scalar, [1.0, np.zeros(1)], opts)


def _host_store(x, y):
    parpy.label('N')
    y[:] = x[:]


def test_host_access_on_gpu_names_missing_parallelism():
    opts = parpy.par({})
    opts.backend = parpy.CompileBackend.Cuda
    x = np.zeros(4, np.float32)
    with pytest.raises(RuntimeError) as e:
        parpy.print_compiled(_host_store, [x, x.copy()], opts)
    assert e.match("does not contain any parallelism")
    assert e.match("Data cannot be accessed outside parallel code")


# --------------------------------------------------------------------------
# 3 and 5. torch tensors in host memory; 0-d arrays as scalars


def _scale(x, a, y):
    parpy.label('N')
    for i in range(4):
        y[i] = x[i] * a


def test_zero_d_numpy_array_is_a_scalar():
    f = parpy.jit(_scale)
    x = np.arange(4, dtype=np.float32)
    y = np.zeros(4, np.float32)
    opts = cpu_opts({'N': parpy.threads(4)})
    f(x, np.array(0.5, np.float32), y, opts=opts)
    np.testing.assert_array_equal(y, x * 0.5)
    f(x, np.array(3.0, np.float32), y, opts=opts)  # cached: the new value
    np.testing.assert_array_equal(y, x * 3.0)
    code = parpy.print_compiled(f, [x, np.array(2, np.int8), y], cpu_opts({"N": parpy.threads(4)}))
    assert "int8_t a" in code  # strong, like np.int8(2)


_FAKE_TORCH = textwrap.dedent('''
    # A stand-in for torch (not installed in CI): the attributes parpy reads.
    import sys, types
    import numpy as np

    class dtype:
        def __init__(self, name): self.name = name
        def __str__(self): return "torch." + self.name

    class Tensor:
        def __init__(self, a, device=-1):
            self.a = a; self.dev = device
        def get_device(self): return self.dev
        @property
        def dtype(self): return DTYPES[self.a.dtype.name]
        @property
        def shape(self): return tuple(self.a.shape)
        def data_ptr(self): return self.a.ctypes.data
        def is_contiguous(self): return self.a.flags.c_contiguous
        def is_neg(self): return False
        requires_grad = False

    DTYPES = {n: dtype(n) for n in ["float32", "float64", "int32", "int64", "complex64"]}
    torch = types.ModuleType("torch"); torch.Tensor = Tensor
    sys.modules["torch"] = torch
''')


def _run_child(body):
    code = _FAKE_TORCH + textwrap.dedent(body)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_host_tensors_in_place_with_numpys_checks(tmp_path):
    src = tmp_path / "prog.py"
    src.write_text(
        "import parpy\n"
        "def scale(x, a, y):\n"
        "    parpy.label('N')\n"
        "    for i in range(4):\n"
        "        y[i] = x[i] * a\n"
    )
    out = _run_child(f'''
        sys.path.insert(0, {str(tmp_path)!r})
        import parpy, prog
        f = parpy.jit(prog.scale)
        opts = parpy.par({{'N': parpy.threads(4)}})
        opts.backend = parpy.CompileBackend.Cpu
        opts.cache_dir = {str(tmp_path / "cache")!r}
        x = np.arange(4, dtype=np.float32); y = np.zeros(4, np.float32)
        f(Tensor(x), Tensor(np.array(0.5, np.float32)), Tensor(y), opts=opts)
        print(y.tolist())
        print("float *x" in parpy.print_compiled(f, [Tensor(x), 2.0, Tensor(y)], opts))
        for bad in [Tensor(np.arange(8, dtype=np.float32)[::2]),
                    Tensor(np.zeros(4, np.complex64))]:
            try:
                f(bad, 1.0, Tensor(y), opts=opts)
            except (ValueError, TypeError) as e:
                print(type(e).__name__, str(e).split(";")[0])
    ''')
    lines = out.splitlines()
    assert lines[0] == "[0.0, 0.5, 1.0, 1.5]"
    assert lines[1] == "True"
    # (a ValueError, and ParPy's RuntimeError)
    assert lines[2] == "CompileValueError argument `x` of `scale` is not contiguous"
    assert lines[3].startswith("TypeError argument `x` of `scale` has dtype torch.complex64")


def test_real_torch_cpu_tensors():
    torch = pytest.importorskip("torch")
    f = parpy.jit(_scale)
    x = torch.arange(4, dtype=torch.float32)
    y = torch.zeros(4)
    f(x, torch.tensor(0.5), y, opts=cpu_opts({'N': parpy.threads(4)}))
    assert y.tolist() == [0.0, 0.5, 1.0, 1.5]


# --------------------------------------------------------------------------
# 6. annotations: an int annotated with an integer type takes that type


@parpy.jit
def _annotated(n: parpy.types.I32, y):
    with parpy.gpu:
        y[0] = n + 1


def test_int_converted_to_annotated_int_type():
    y = np.zeros(1, np.int32)
    _annotated(41, y, opts=cpu_opts())
    assert y[0] == 42
    _annotated(np.int64(9), y, opts=cpu_opts())
    assert y[0] == 10
    assert "int32_t n" in parpy.print_compiled(_annotated, [41, y], cpu_opts())
    with pytest.raises(TypeError, match="Parameter n was annotated with type parpy.types.I32"):
        _annotated(2**40, y, opts=cpu_opts())
    with pytest.raises(TypeError, match="incompatible with argument type float64"):
        _annotated(1.5, y, opts=cpu_opts())
    with pytest.raises(TypeError) as e:
        _annotated(2**40, y, opts=cpu_opts())
    assert "the value does not fit in int32" in str(e.value)


@parpy.jit
def _annotated_f32(a: parpy.types.F32, y):
    with parpy.gpu:
        y[0] = a * 3.0


@pytest.mark.parametrize("specialize", [True, False])
def test_float_converted_to_annotated_float_type(specialize):
    # (a Python float for an F32 parameter was "incompatible with argument
    # type float64"; ParPy converts it, as it does ints)
    y = np.zeros(1, np.float32)
    opts = cpu_opts()
    opts.specialize_scalars = specialize
    _annotated_f32(0.1, y, opts=opts)
    assert y[0] == np.float32(0.1) * np.float32(3.0)
    assert "float a" in parpy.print_compiled(_annotated_f32, [0.1, y], opts) or specialize


# --------------------------------------------------------------------------
# 8. label warnings: a shared specification is quiet about absent labels


def test_shared_spec_quiet_but_useless_spec_warns():
    f = parpy.jit(_scale)
    x = np.arange(4, dtype=np.float32)
    y = np.zeros(4, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(x, 1.0, y, opts=cpu_opts({'N': parpy.threads(4), 'M': parpy.threads(8)}))
    with pytest.warns(parpy.ParpyWarning, match="`M`"):
        f(x, 1.0, y, opts=cpu_opts({'M': parpy.threads(8)}))


# --------------------------------------------------------------------------
# 6. value annotations: buffer(T, [N]), symbol(), type_var()

N = parpy.types.symbol()
T = parpy.types.type_var()


def _annot_add(x: parpy.types.buffer(parpy.types.F32, [N]),
               y: parpy.types.buffer(parpy.types.F32, [N])):
    parpy.label('N')
    x[:] += y[:]


def _annot_tv(x: parpy.types.buffer(T, [N, 2]), y: parpy.types.buffer(T, [N, 2])):
    parpy.label('N')
    x[:, :] = y[:, :]


def test_buffer_annotations_check_shapes_and_types():
    f = parpy.jit(_annot_add)
    opts = cpu_opts({'N': parpy.threads(4)})
    x = np.ones(4, np.float32)
    f(x, np.ones(4, np.float32), opts=opts)
    np.testing.assert_array_equal(x, 2.0)
    with pytest.raises(TypeError, match=r"Parameter y was annotated with type parpy.types.buffer\(parpy.types.F32, \[N\]\) "
                                        r"which is incompatible with argument type float32\[5\]"):
        f(x, np.ones(5, np.float32), opts=opts)
    with pytest.raises(parpy.CompileTypeError, match="its elements are int32, not float32"):
        f(x, np.ones(4, np.int32), opts=opts)
    with pytest.raises(TypeError, match="it is not an array"):
        parpy.print_compiled(f, [x, 1.0], opts)


def test_type_variables_must_agree():
    f = parpy.jit(_annot_tv)
    opts = cpu_opts({'N': parpy.threads(4)})
    f(np.zeros((3, 2), np.int32), np.ones((3, 2), np.int32), opts=opts)
    with pytest.raises(TypeError, match="Parameter y was annotated with type parpy.types.buffer.T, .N, 2..."):
        f(np.zeros((3, 2), np.int32), np.ones((3, 2), np.float32), opts=opts)


def test_annotation_objects_reject_bad_parts():
    with pytest.raises(TypeError, match="elem must be"):
        parpy.types.buffer(np.float32, [N])
    with pytest.raises(TypeError, match="shape must hold"):
        parpy.types.buffer(parpy.types.F32, ["N"])


# --------------------------------------------------------------------------
# 7. parpy.buffer in host memory


def test_host_buffers_share_memory_and_convert():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = parpy.buffer.from_array(a, CPU)
    assert b.buf.src is a and b.shape == (2, 3) and b.size() == 24
    assert b.dtype == parpy.buffer.DataType.from_elem_size(parpy.types.F32)
    assert b[1, 2] == 5.0 and np.array_equal(b[1].numpy(), a[1])
    with pytest.raises(IndexError):
        b[2]
    z = parpy.buffer.zeros_like(b)
    assert z._get_ptr() != b._get_ptr() and not z.numpy().any()
    assert float(parpy.buffer.from_array(np.array(2.5), None)) == 2.5
    assert int(parpy.buffer.from_array(np.array(7, np.int32), CPU)) == 7
    with pytest.raises(ValueError, match="only a buffer with one element"):
        float(b)
    with pytest.raises(ValueError, match="Cannot reshape buffer of shape"):
        b.reshape(4, 2)
    u = parpy.buffer.zeros((3,), parpy.types.I32, CPU).with_type(parpy.types.U32)
    assert u.dtype.elem is parpy.types.U32 and u.size() == 12
    with pytest.raises(ValueError, match="unknown backend 5"):
        parpy.buffer.from_array(a, 5)
    with pytest.raises(RuntimeError, match="not available"):
        parpy.buffer.zeros((2,), parpy.types.F32, parpy.CompileBackend.Metal)
    r = parpy.buffer.from_raw(a.ctypes.data, (6,), parpy.types.F32, CPU)
    assert r.numpy().tolist() == list(range(6))


def _add_one(x):
    parpy.label('N')
    for i in range(3):
        x[i] += 1.0


def test_jit_functions_take_host_buffers():
    a = np.zeros((2, 3), np.float32)
    b = parpy.buffer.from_array(a, CPU)
    parpy.jit(_add_one)(b[1], opts=cpu_opts({'N': parpy.threads(3)}))
    assert a.tolist() == [[0, 0, 0], [1, 1, 1]]


def test_a_buffers_backend_compares_equal_and_is_callable_as_in_parpy():
    b = parpy.buffer.from_array(np.zeros(3, np.float32), CPU)
    assert b.backend == CPU and b.backend() is CPU and not (b.backend != CPU)
    assert b.backend != parpy.CompileBackend.Cuda and str(b.backend) == str(CPU)
    assert hash(b.backend) == hash(CPU)
    assert b.backend() in parpy.backend.backends or CPU not in parpy.backend.backends
    assert parpy.buffer.from_array(np.zeros(2), None).backend is None
    # ParPy's callbacks choose the backend of a nested call by `a.backend()`;
    # ours may pass the attribute itself
    for pick in (lambda a: a.backend(), lambda a: a.backend):
        opts = parpy.CompileOptions()
        opts.backend = pick(b)
        assert opts.backend == CPU
    assert parpy.buffer.zeros_like(b).backend == CPU


def test_compile_string_takes_host_buffers():
    x = np.arange(3, dtype=np.float32)
    opts = cpu_opts({'N': parpy.threads(3)})
    code = parpy.print_compiled(_add_one, [x], opts)
    fn = parpy.compile_string("_add_one", code, opts)
    fn(parpy.buffer.from_array(x, CPU))
    assert x.tolist() == [1.0, 2.0, 3.0]


M = parpy.types.symbol()


def _fill_rows(x: parpy.types.buffer(parpy.types.F32, [M])):
    parpy.label('N')
    for i in range(M):
        x[i] = 2.0


def test_shape_symbols_have_their_values_in_the_body():
    f = parpy.jit(_fill_rows)
    x = np.zeros(5, np.float32)
    f(x, opts=cpu_opts({'N': parpy.threads(5)}))
    assert x.tolist() == [2.0] * 5
    y = np.zeros(3, np.float32)
    f(y, opts=cpu_opts({'N': parpy.threads(5)}))  # another shape: another value
    assert y.tolist() == [2.0] * 3


def test_shape_symbols_in_python_mode():
    # Python mode reads a symbol the annotations bind as its value too.
    f = parpy.jit(_fill_rows)
    x = np.zeros(4, np.float32)
    opts = cpu_opts({'N': parpy.threads(4)})
    opts.backend = parpy.CompileBackend.Python
    f(x, opts=opts)
    assert x.tolist() == [2.0] * 4


# A type variable read in the body denotes the element type the annotations
# bind it to: static_types_eq branches on it, convert converts to it.
S = parpy.types.type_var()
K = parpy.types.symbol()


def _code_by_type(x: parpy.types.buffer(S, [K]), y: parpy.types.buffer(S, [K])):
    parpy.label('K')
    for i in range(K):
        if parpy.builtin.static_types_eq(S, parpy.types.F32):
            y[i] = x[i] * 2.0
        elif parpy.builtin.static_types_eq(S, parpy.types.U8):
            y[i] = x[i] + parpy.builtin.convert(300, S)
        elif parpy.builtin.static_types_eq(parpy.types.I64, S):
            y[i] = x[i] - 1
        else:
            parpy.builtin.static_fail("no code for this type")


@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.int64])
def test_type_variables_in_the_body(run_both, dtype):
    f = parpy.jit(_code_by_type)
    x = np.arange(6).astype(dtype)
    out = run_both(f, [x, np.zeros_like(x)], cpu_opts({'K': parpy.threads(6)}))
    expect = {np.float32: x * 2, np.uint8: x + np.uint8(44), np.int64: x - 1}[dtype]
    np.testing.assert_array_equal(out[1], expect)


def test_type_variable_branch_to_static_fail():
    f = parpy.jit(_code_by_type)
    x = np.zeros(3, np.int32)
    with pytest.raises(parpy.CompileError, match="no code for this type"):
        f(x, x.copy(), opts=cpu_opts({'K': parpy.threads(3)}))


def test_unbound_type_variable_is_named():
    other = parpy.types.type_var()

    @parpy.jit
    def conv(x: parpy.types.buffer(S, [K])):
        with parpy.gpu:
            x[0] = parpy.builtin.convert(1.0, other)

    with pytest.raises(RuntimeError, match="unresolved type variable"):
        parpy.print_compiled(conv, [np.zeros(1, np.float32)], cpu_opts())


# Implicit shape labels (ParPy's default): a loop over range(N), or a slice
# statement reading N, where N is a shape symbol of the annotations, carries
# the label 'N'; opts.implicit_shape_labels = False turns this off.
def _implicit(x: parpy.types.buffer(parpy.types.F32, [K]),
              y: parpy.types.buffer(parpy.types.F32, [K])):
    for i in range(K):
        x[i] = x[i] * 2.0
    y[:K] += x[:K]


def test_implicit_shape_labels(run_both):
    f = parpy.jit(_implicit)
    x = np.arange(8, dtype=np.float32)
    opts = cpu_opts({'K': parpy.threads(8)})
    assert opts.implicit_shape_labels is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code = parpy.print_compiled(f, [x, x.copy()], opts)
        assert code.count("#pragma omp parallel for") == 2
        run_both(f, [x, np.ones(8, np.float32)], opts)
    opts.implicit_shape_labels = False
    with pytest.warns(parpy.ParpyWarning, match="matches no statement"):
        code = parpy.print_compiled(f, [x, x.copy()], opts)
    assert "#pragma omp parallel" not in code


def test_implicit_shape_labels_only_for_symbols():
    # a plain int global or a local named like a spec label is no label
    def g(x: parpy.types.buffer(parpy.types.F32, [K]), n):
        L = n
        for i in range(L):
            x[i] = 1.0

    opts = cpu_opts({'K': parpy.threads(8), 'L': parpy.threads(8)})
    with pytest.warns(parpy.ParpyWarning):
        code = parpy.print_compiled(parpy.jit(g), [np.zeros(8, np.float32), 8], opts)
    assert "#pragma omp parallel" not in code


def test_slice_shape_mismatch_is_a_type_error():
    # ParPy programs catch TypeError and match "incompatible shapes"
    @parpy.jit
    def add(x, y, out):
        with parpy.gpu:
            out[0] = parpy.reduce.sum(x[:, :] * y[:])

    args = [np.zeros((10, 12), np.float32), np.zeros(10, np.float32), np.zeros(1, np.float32)]
    with pytest.raises(TypeError, match="incompatible shapes") as e:
        parpy.print_compiled(add, args, cpu_opts())
    assert isinstance(e.value, parpy.CompileError)
    assert "(10, 12) and (10,)" in str(e.value)


def test_rejected_compound_statements_name_their_lines():
    # ParPy's messages name a rejected statement's lines ("lines A-B")
    src = textwrap.dedent('''\
        import parpy

        def f(x, N):
            i = 0
            try:
                i += 1
            except ValueError:
                x[0] = 1.0
        ''')
    code = compile(src, "<compat>", "exec")
    ns = {}
    exec(code, ns)
    import linecache
    linecache.cache["<compat>"] = (len(src), None, src.splitlines(True), "<compat>")
    try:
        with pytest.raises(RuntimeError, match=r"`try` statements(.|\n)*lines 5-8"):
            parpy.jit(ns["f"])
    finally:
        del linecache.cache["<compat>"]


def test_with_over_a_non_path_is_rejected_at_decoration():
    with pytest.raises(RuntimeError, match=r"but `parpy.gpu`(.|\n)*lines"):
        @parpy.jit
        def with_five():
            with 5:
                pass


def test_zero_range_step_is_rejected_at_decoration():
    with pytest.raises(RuntimeError, match="step size must be non-zero"):
        @parpy.jit
        def zero_step(x, N):
            for i in range(0, N, 0):
                x[i] = i


# A helper's parameters annotated with one type variable must agree at each
# call (an inlined helper too); each call binds it anew, a weak literal adapts.
def _tv_helpers():
    tv = parpy.types.type_var()  # local: not a free variable of the helpers

    @parpy.jit
    def add(x: tv, y: tv) -> tv:
        return x + y

    @parpy.jit
    def rows(x, y, N):
        parpy.label('N')
        for i in range(N):
            x[i] = add(x[i], y[i])

    @parpy.jit
    def sliced(x, y):
        parpy.label('N')
        x[:] = add(x[:], y[:])

    @parpy.jit
    def two_types(x, k):
        with parpy.gpu:
            x[0] = add(x[0], 1.5)
            k[0] = add(k[0], k[1])

    return rows, sliced, two_types


def test_type_variables_of_helpers_must_agree():
    rows, sliced, _ = _tv_helpers()
    x, y = np.zeros(4, np.float32), np.zeros(4, np.int32)
    for f, args in [(rows, [x, y, 4]), (sliced, [x, y])]:
        with pytest.raises(TypeError, match="Parameter y was annotated with type tv which is "
                                            "incompatible with argument type int32") as e:
            parpy.print_compiled(f, args, cpu_opts({'N': parpy.threads(4)}))
        assert "`tv` is float32 from an earlier parameter" in str(e.value)


def test_type_variables_of_helpers_bind_per_call(run_both):
    rows, sliced, two_types = _tv_helpers()
    x = np.arange(4, dtype=np.float32)
    run_both(rows, [x, x * 2, 4], cpu_opts({'N': parpy.threads(4)}))
    run_both(sliced, [x, x * 3], cpu_opts({'N': parpy.threads(4)}))
    run_both(two_types, [x, np.array([3, 4], np.int64)], cpu_opts())


# --------------------------------------------------------------------------
# ParPy's names a probe of ParPy programs missed: parpy.builtin.label /
# gpu, parpy.reduce as a module, the LoopPar builder, opts.libs as ParPy's
# library directories, the exception classes of a bad call, parpy.parpy.Target.

import parpy.builtin as pb  # noqa: E402
from parpy.builtin import gpu as _on_device, label as _lab  # noqa: E402


@parpy.jit
def _builtin_module_names(x, N):
    pb.label('N')
    for i in range(N):
        x[i] = x[i] + 1.0
    with pb.gpu:
        x[0] = 2.0 * x[0]


@parpy.jit
def _builtin_names_aliased(x, N):
    _lab('N')
    for i in range(N):
        x[i] = x[i] + 1.0
    with _on_device:
        x[0] = 2.0 * x[0]


def test_builtin_label_and_gpu_are_parpys(run_both):
    # (before: parpy.builtin had neither; `pb.label` was "not defined" and
    # `with pb.gpu:` an unsupported context manager)
    assert pb.label is parpy.label and pb.gpu is parpy.gpu
    assert "label" in pb.__all__ and "gpu" in pb.__all__
    for f in (_builtin_module_names, _builtin_names_aliased):
        x = np.arange(5.0)
        run_both(f, [x, 5], cpu_opts({'N': parpy.threads(5)}))
        f(x, 5, opts=cpu_opts({'N': parpy.threads(5)}))
        assert x.tolist() == [2.0, 2.0, 3.0, 4.0, 5.0]
        code = parpy.print_compiled(f, [x, 5], cpu_opts({'N': parpy.threads(5)}))
        assert "#pragma omp parallel for" in code


import parpy.reduce as _pr  # noqa: E402
from parpy.reduce import max as _rmax, sum as _rsum  # noqa: E402


@parpy.jit
def _reduce_module_rows(x, out, N):
    parpy.label('N')
    for i in range(N):
        out[i] = _rsum(x[i, :]) + _pr.max(x[i, :]) + _rmax(x[i, :])


def test_reduce_is_a_module(run_both):
    # (before: parpy.reduce was an attribute only: `import parpy.reduce`
    # raised ModuleNotFoundError)
    import importlib
    import types as pytypes

    assert _pr is parpy.reduce and sys.modules["parpy.reduce"] is parpy.reduce
    assert importlib.import_module("parpy.reduce") is parpy.reduce
    assert isinstance(parpy.reduce, pytypes.ModuleType)
    assert _rsum is parpy.reduce.sum and _rmax is parpy.reduce.max
    assert parpy.reduce.sum is parpy.operators.sum is parpy.sum
    assert parpy.reduce.min(np.array([3, 1, 2])) == 1
    # still callable: the older spelling of par_reduction
    assert parpy.reduce(8) == parpy.threads(8).par_reduction()
    assert parpy.reduce() == parpy.par_reduction()
    x = np.arange(12.0).reshape(3, 4)
    out = run_both(_reduce_module_rows, [x, np.zeros(3), 3], cpu_opts({'N': parpy.threads(3)}))[1]
    np.testing.assert_allclose(out, x.sum(axis=1) + 2 * x.max(axis=1))


def test_loop_par_builder():
    # (before: LoopPar() needed a count, `.threads` was a read-only
    # property, `par_reduction().threads(64)` called None, no is_parallel)
    for lp in (parpy.LoopPar(), parpy.parpy.LoopPar()):
        assert not lp.is_parallel() and lp.threads() is None and lp.nthreads is None
        assert not lp.is_reduction and repr(lp) == "parpy.LoopPar()"
    assert parpy.LoopPar().threads(4) == parpy.threads(4) == parpy.LoopPar(4)
    assert parpy.threads(4).is_parallel() and parpy.threads(1).is_parallel()
    lp = parpy.par_reduction().threads(64)
    assert lp == parpy.threads(64).par_reduction() and lp.threads() == lp.nthreads == 64
    assert parpy.LoopPar().tpb(64).threads(128) == parpy.threads(128).tpb(64)
    with pytest.raises(RuntimeError, match="can only be set once") as e:
        parpy.threads(4).threads(5)
    assert isinstance(e.value, ValueError) and isinstance(e.value, parpy.CompileValueError)
    with pytest.raises(RuntimeError, match="positive thread count"):
        parpy.LoopPar().threads(0)
    with pytest.raises(TypeError, match=r"LoopPar.threads\(n\) needs an int"):
        parpy.LoopPar().threads(2.0)
    import pickle
    for p in (parpy.LoopPar(), lp.tpb(64), parpy.par_reduction()):
        assert pickle.loads(pickle.dumps(p)) == p


def test_a_loop_par_without_a_count_in_a_spec_says_so():
    x = np.zeros(4)
    with pytest.raises(ValueError, match=r"label 'N': parpy.LoopPar\(\) without a thread count"):
        _reduce_module_rows(np.zeros((4, 2)), x, 4, opts=cpu_opts({'N': parpy.LoopPar()}))


def test_external_takes_parpys_default_loop_par():
    # ParPy's default `parallelize=parpy.LoopPar()`: not parallel
    def host_fn(x: parpy.types.F64) -> parpy.types.F64:
        return x
    parpy.external("fabs", CPU, parpy.Target.Host, header="<math.h>",
                   parallelize=parpy.LoopPar())(host_fn)
    assert host_fn.__parpy_external__[CPU].threads is None
    with pytest.raises(RuntimeError, match="Host externals cannot be parallel"):
        parpy.external("fabs", CPU, parpy.Target.Host, header="<math.h>",
                       parallelize=parpy.LoopPar().threads(4))


def test_thread_count_errors_are_runtime_and_value_errors():
    # (before: a plain ValueError; ParPy raises RuntimeError)
    for make, words in [(lambda: parpy.threads(10).tpb(33), "multiple of 32"),
                        (lambda: parpy.threads(0), "positive"),
                        (lambda: parpy.threads(-1), "positive")]:
        with pytest.raises(RuntimeError, match=words) as e:
            make()
        assert isinstance(e.value, ValueError) and isinstance(e.value, parpy.CompileValueError)


@parpy.jit
def _fill_ones(x, N):
    parpy.label('N')
    for i in range(N):
        x[i] = 1.0


@pytest.mark.parametrize("call,words", [
    (lambda: _fill_ones(np.zeros(4), 4, opts=cpu_opts({'N': parpy.threads(4)}), foo=1),
     "got an unexpected keyword argument `foo`"),
    (lambda: _fill_ones(np.zeros(4), 4, opts=None), "`opts` must be a parpy.CompileOptions"),
    (lambda: _fill_ones(np.zeros(4), 4, opts={'N': parpy.threads(4)}),
     "`opts` must be a parpy.CompileOptions"),
    (lambda: _fill_ones([0.0] * 4, 4, opts=cpu_opts({'N': parpy.threads(4)})), "has type list"),
    (lambda: _fill_ones(None, 4, opts=cpu_opts({'N': parpy.threads(4)})), "has type NoneType"),
    (lambda: _fill_ones(np.zeros(4), "4", opts=cpu_opts({'N': parpy.threads(4)})),
     "argument `N` of `_fill_ones` has type str"),
    (lambda: _fill_ones(np.zeros(4), 4, N=4, opts=cpu_opts({'N': parpy.threads(4)})),
     "got multiple values for argument `N`"),
])
def test_call_errors_are_type_and_runtime_errors(call, words):
    # (before: a plain TypeError; ParPy raises RuntimeError for these)
    with pytest.raises(RuntimeError, match=words) as e:
        call()
    assert isinstance(e.value, TypeError) and isinstance(e.value, parpy.CompileTypeError)


def _build_library(tmp_path):
    """A tiny shared library (libparpytwice.so) and its header, built by
    the C compiler the tests build with."""
    import os
    src = tmp_path / "twice.c"
    src.write_text("double parpy_test_twice(double x) { return 2.0 * x; }\n")
    (tmp_path / "parpy_twice.h").write_text("double parpy_test_twice(double x);\n")
    lib = tmp_path / "libparpytwice.so"
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-o", str(lib), str(src)],
                   check=True)
    return lib


@parpy.external("parpy_test_twice", CPU, parpy.Target.Device, header='"parpy_twice.h"')
def _twice(x: parpy.types.F64) -> parpy.types.F64:
    return 2.0 * x


@parpy.jit
def _twice_all(x, N):
    parpy.label('N')
    for i in range(N):
        x[i] = _twice(x[i])


def test_libs_take_directories_files_and_names(tmp_path):
    # (before: each entry was `-l<entry>`: a directory, as ParPy passes
    # them, was "cannot find -l/tmp")
    lib = _build_library(tmp_path)
    for libs in ([str(tmp_path), "parpytwice"],  # ParPy's directory, then the name
                 [str(lib)]):                    # the library file itself
        opts = cpu_opts({'N': parpy.threads(4)})
        opts.includes = [str(tmp_path)]
        opts.libs = libs
        x = np.arange(4.0)
        _twice_all(x, 4, opts=opts)
        assert x.tolist() == [0.0, 2.0, 4.0, 6.0], libs
    # a directory alone links nothing more (ParPy's case of the probe)
    opts = cpu_opts({'N': parpy.threads(4)})
    opts.libs = [str(tmp_path), "m"]
    x = np.arange(4.0)
    _fill_ones(x, 4, opts=opts)
    assert x.tolist() == [1.0] * 4


def test_target_in_parpy_parpy():
    # (before: parpy.parpy had no Target)
    from parpy.parpy import Target
    assert Target is parpy.Target and parpy.parpy.Target.Device == parpy.Target.Device


def test_no_labels_on_a_gpu_backend_is_ParPys_error():
    # implicit_shape_labels = False and no labels: nothing is parallel, and
    # on a GPU backend the arrays cannot be touched from the host (ParPy's
    # "does not contain any parallelism"); on Cpu it runs in order
    opts = parpy.par({'K': parpy.threads(8)})
    opts.backend = parpy.CompileBackend.Cuda
    opts.implicit_shape_labels = False
    x = np.zeros(8, np.float32)
    with pytest.raises(RuntimeError, match="does not contain any parallelism"):
        parpy.print_compiled(parpy.jit(_implicit), [x, x.copy()], opts)


def test_a_non_contiguous_tensor_is_a_value_and_runtime_error():
    # (before: a plain ValueError; ParPy raises RuntimeError)
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="is not contiguous; pass x.contiguous()") as e:
        _fill_ones(torch.zeros(4, 2, dtype=torch.float64)[:, 0], 4,
                   opts=cpu_opts({'N': parpy.threads(4)}))
    assert isinstance(e.value, ValueError) and isinstance(e.value, parpy.CompileValueError)
