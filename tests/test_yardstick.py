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
