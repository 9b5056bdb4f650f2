"""ParPy's own test suite is the yardstick of compatibility (issue 11): the
behaviours changed so that what its tests check (the exception class, the
key words of the message) also holds here, each with parpy's own located
diagnostic."""

import warnings

import numpy as np
import pytest

import parpy
from conftest import backend_opts, cpu_opts

types = parpy.types
CPU = parpy.CompileBackend.Cpu
METAL = parpy.CompileBackend.Metal


# --------------------------------------------------------------------------
# an option given a value it cannot take


def test_option_value_errors_are_value_errors_and_compile_errors():
    opts = parpy.CompileOptions()
    with pytest.raises(parpy.CompileValueError) as e:
        opts.max_thread_blocks_per_cluster = 3
    assert isinstance(e.value, ValueError) and isinstance(e.value, RuntimeError)
    assert "number of thread blocks per cluster must be a power of two" in str(e.value)
    with pytest.raises(parpy.CompileValueError, match="max_unroll_count"):
        parpy.CompileOptions(max_unroll_count=-1)
    # a value of the wrong type stays a plain TypeError
    with pytest.raises(TypeError) as e:
        opts.max_thread_blocks_per_cluster = "8"
    assert not isinstance(e.value, parpy.CompileError)
    opts.max_thread_blocks_per_cluster = 8
    assert opts.max_thread_blocks_per_cluster == 8


# --------------------------------------------------------------------------
# names without a value: NameError


def test_undefined_name_is_a_name_error():
    @parpy.jit
    def reads_nothing(x):
        with parpy.gpu:
            x[0] = not_defined_anywhere  # noqa: F821

    with pytest.raises(NameError) as e:
        reads_nothing(np.zeros(1), opts=cpu_opts())
    assert isinstance(e.value, parpy.CompileNameError)
    assert "name `not_defined_anywhere` is not defined" in str(e.value)


# --------------------------------------------------------------------------
# a shape symbol no annotation of its function uses: NameError at decoration


def test_shape_symbol_no_annotation_uses_is_a_name_error_at_decoration():
    N = types.symbol()
    M = types.symbol()
    with pytest.raises(NameError) as e:
        @parpy.jit
        def zero_n(x: types.buffer(types.F32, [M])):
            for i in range(N):
                x[i] = 0.0
    assert isinstance(e.value, parpy.CompileNameError)
    assert isinstance(e.value, parpy.CompileError)
    msg = str(e.value)
    assert "Found reference to unused shape variable N" in msg
    assert "for i in range(N):" in msg  # located
    assert "zero_n" in msg

    # symbols the annotations use have their values
    @parpy.jit
    def zero_m(x: types.buffer(types.F32, [M])):
        for i in range(M):
            x[i] = 0.0

    x = np.ones(3, np.float32)
    zero_m(x, opts=cpu_opts())
    np.testing.assert_array_equal(x, np.zeros(3, np.float32))


# --------------------------------------------------------------------------
# an element-type annotation is a scalar's


def test_element_type_annotation_refuses_an_array():
    @parpy.jit
    def add_scalar(x: types.F32, y):
        with parpy.gpu:
            y[:] += x

    y = np.zeros(4, np.float32)
    with pytest.raises(parpy.CompileTypeError) as e:
        add_scalar(np.zeros(4, np.float32), y, opts=cpu_opts())
    msg = str(e.value)
    assert ("Parameter x was annotated with type types.F32 which is incompatible "
            "with argument type float32[4] (an array)") in msg
    assert "`buffer(types.F32, [...])` (parpy.types.buffer)" in msg
    add_scalar(np.float32(1.5), y, opts=cpu_opts())
    np.testing.assert_array_equal(y, np.full(4, 1.5, np.float32))


# --------------------------------------------------------------------------
# a helper's parpy.types.buffer annotations, checked at each call


S = types.symbol()
E = types.type_var()


@parpy.jit
def add_rows(x: types.buffer(types.F32, [S]), y: types.buffer(types.F32, [S])):
    parpy.label('S')
    x[:] += y[:]


@parpy.jit
def copy_row(x: types.buffer(E, [S]), y: types.buffer(E, [S])):
    for i in range(4):
        x[i] = y[i]


def test_helper_buffer_annotations_are_checked_at_each_call():
    @parpy.jit
    def inlined(a, b, n):
        parpy.label('N')
        for i in range(n):
            add_rows(a[i], b[i])

    opts = cpu_opts({'N': parpy.threads(4), 'S': parpy.threads(4)})
    with pytest.raises(parpy.CompileTypeError) as e:
        parpy.print_compiled(inlined, [np.zeros((4, 8), np.float32),
                                       np.zeros((4, 9), np.float32), 4], opts)
    msg = str(e.value)
    assert ("Parameter y was annotated with type types.buffer(types.F32, [S]) which is "
            "incompatible with argument type float32[9] (an array)") in msg
    assert "the same shape symbol is 8 in parameter `x`" in msg
    assert "add_rows(a[i], b[i])" in msg  # the call's argument

    a = np.ones((4, 8), np.float32)
    inlined(a, np.ones((4, 8), np.float32), 4, opts=opts)
    np.testing.assert_array_equal(a, np.full((4, 8), 2.0, np.float32))

    @parpy.jit
    def called(a, b):
        with parpy.gpu:
            copy_row(a, b)

    def message(*args):
        with pytest.raises(parpy.CompileTypeError) as e:
            called(*args, opts=cpu_opts())
        return str(e.value)

    f4 = np.zeros(4, np.float32)
    assert "the same shape symbol is 4 in parameter `x`" in message(f4, np.zeros(5, np.float32))
    assert "element type variable is float32" in message(f4, np.zeros(4, np.float64))
    assert "the annotation has 1 dimension, the argument 2" in message(
        np.zeros((4, 2), np.float32), f4)
    b = np.arange(4, dtype=np.float32)
    called(f4, b, opts=cpu_opts())
    np.testing.assert_array_equal(f4, b)


# --------------------------------------------------------------------------
# parpy.external: Python's int and float name no width


def test_external_python_number_annotations_are_rejected():
    for ann, fixed in [(int, "parpy.types.I64"), (float, "parpy.types.F32")]:
        with pytest.raises(parpy.CompileTypeError) as e:
            @parpy.external("ext_n", CPU, parpy.Target.Device)
            def ext_n(x: ann) -> types.I32:
                return 0
        # a TypeError here, a RuntimeError as ParPy raises it
        assert isinstance(e.value, TypeError) and isinstance(e.value, RuntimeError)
        msg = str(e.value)
        assert f"Unsupported parameter type annotation {ann.__name__}" in msg
        assert "parameter `x`" in msg and fixed in msg

    with pytest.raises(parpy.CompileTypeError, match="Unsupported return type annotation float"):
        @parpy.external("ext_r", CPU, parpy.Target.Device)
        def ext_r(x: types.F32) -> float:
            return x

    # fixed-width types are fine: parpy's, NumPy's, and bool
    @parpy.external("ext_ok", CPU, parpy.Target.Device)
    def ext_ok(x: np.float32, b: bool, n: types.I64) -> types.F32:
        return x


# --------------------------------------------------------------------------
# an external declared for another backend only


def test_external_of_another_backend_is_an_unknown_function_and_a_type_error():
    @parpy.external("_zero", parpy.CompileBackend.Cuda, parpy.Target.Device)
    def zero() -> types.I32:
        return 0

    @parpy.jit
    def fill(x):
        with parpy.gpu:
            x[0] = zero()

    with pytest.raises(TypeError) as e:
        fill(np.ones(2, np.int32), opts=cpu_opts())
    assert isinstance(e.value, parpy.CompileError)
    msg = str(e.value)
    assert "Call to unknown function `zero` on the Cpu backend" in msg
    assert "external function for Cuda, not for the Cpu backend" in msg


# --------------------------------------------------------------------------
# a host external reached through helpers inside parallel code


@parpy.external("host_add", CPU, parpy.Target.Host)
def host_add(x: types.F32, y: types.F32) -> types.F32:
    return x + y


@parpy.external("host_log", CPU, parpy.Target.Host)
def host_log(x: types.F32):
    pass


@parpy.external("dev_add", CPU, parpy.Target.Device, header='"dev_add.h"')
def dev_add(x: types.F32, y: types.F32) -> types.F32:
    return x + y


@parpy.jit
def adds_on_host(a, b):
    return a + host_add(a, b)


@parpy.jit
def through_two(a, b):
    return adds_on_host(a, b) * 2.0


@parpy.jit
def logs_on_host(a):
    host_log(a)


@parpy.jit
def adds_on_device(a, b):
    return dev_add(a, b) + 1.0


def test_host_external_through_helpers_in_parallel_code():
    @parpy.jit
    def rows(x, n):
        parpy.label('N')
        for i in range(n):
            x[i] = through_two(x[i], 1.0)

    with pytest.raises(parpy.CompileError) as e:
        parpy.print_compiled(rows, [np.zeros(4, np.float32), 4], cpu_opts({'N': parpy.threads(4)}))
    msg = str(e.value)
    assert ("the host external function `host_add` is called inside a parallel loop "
            "(through `through_two`)") in msg
    assert "x[i] = through_two(x[i], 1.0)" in msg  # the call in the loop
    assert "return a + host_add(a, b)" in msg      # and the host call itself
    assert "Host function returning a non-void value cannot be called from parallel code" in msg

    @parpy.jit
    def logs(x, n):
        parpy.label('N')
        for i in range(n):
            logs_on_host(x[i])

    # a call whose value is not used is a statement: the loop runs in order
    # in host code (ParPy's rule), no error
    code = parpy.print_compiled(logs, [np.zeros(4, np.float32), 4],
                                cpu_opts({'N': parpy.threads(4)}))
    assert "#pragma omp" not in code

    # device externals through helpers are fine, and so is host code
    @parpy.jit
    def dev_rows(x, n):
        parpy.label('N')
        for i in range(n):
            x[i] = adds_on_device(x[i], 1.0)

    code = parpy.print_compiled(dev_rows, [np.zeros(4, np.float32), 4],
                                cpu_opts({'N': parpy.threads(4)}))
    assert "dev_add(" in code

    @parpy.jit
    def on_host(x, y):
        y[0] = through_two(x[0], 1.0)

    code = parpy.print_compiled(on_host, [np.zeros(1, np.float32), np.zeros(1, np.float32)],
                                cpu_opts())
    assert "host_add(" in code


# --------------------------------------------------------------------------
# a static_fail the program reaches is its own verdict, before Metal's
# float64 argument check


T_any = types.type_var()
N_any = types.symbol()


@parpy.jit
def by_type(x: types.buffer(T_any, [N_any])):
    with parpy.gpu:
        if parpy.builtin.static_types_eq(T_any, types.F32):
            x[0] = 1.0
        elif (parpy.builtin.static_backend_eq(parpy.CompileBackend.Cuda)
              and parpy.builtin.static_types_eq(T_any, types.F64)):
            x[0] = 2.0
        else:
            parpy.builtin.static_fail("by_type: not for this element type")


@parpy.jit
def plain_copy(x, y):
    with parpy.gpu:
        y[0] = x[0]


def test_static_fail_comes_before_metal_float64_arguments():
    with pytest.raises(parpy.CompileError, match="by_type: not for this element type") as e:
        parpy.print_compiled(by_type, [np.zeros(2, np.float64)], backend_opts(METAL))
    assert "double-precision" not in str(e.value)
    # without a static_fail, the float64 argument is still named
    with pytest.raises(TypeError, match="does not support double-precision"):
        parpy.print_compiled(plain_copy, [np.zeros(2), np.zeros(2)], backend_opts(METAL))
    assert parpy.print_compiled(by_type, [np.zeros(2, np.float32)], backend_opts(METAL))


# --------------------------------------------------------------------------
# label warnings: a function of `with parpy.gpu:` blocks without labels is
# sequential by design


@parpy.jit
def gpu_block_sum(x, y):
    with parpy.gpu:
        y[0] = parpy.operators.sum(x[:])


@parpy.jit
def unlabelled_loop(x, y, n):
    for i in range(n):
        y[i] = x[i]


def test_shared_spec_is_quiet_for_sequential_gpu_block_functions():
    x = np.arange(6, dtype=np.float32)
    y = np.zeros(1, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gpu_block_sum(x, y, opts=cpu_opts({'N': parpy.threads(8)}))
    assert y[0] == 15.0
    # a loop without a label and a spec: probably a forgotten label, still
    # a warning with the help to add it
    with pytest.warns(parpy.ParpyWarning, match="has no labels"):
        unlabelled_loop(x, np.zeros(6, np.float32), 6, opts=cpu_opts({'N': parpy.threads(8)}))


# --------------------------------------------------------------------------
# a slice assigned to a name


def test_slice_assigned_to_a_name_is_numpys_view():
    # ParPy refuses `y = x[:]` ("Slice statements cannot have more slice
    # dimensions than their target"); in Python it names a view of x, and
    # so it does in parpy: a store through it reaches x
    @parpy.jit
    def to_name(x):
        with parpy.gpu:
            y = x[:]
            y[1] = 5.0

    x = np.zeros(4, np.float32)
    to_name(x, opts=cpu_opts())
    assert x.tolist() == [0.0, 5.0, 0.0, 0.0]
