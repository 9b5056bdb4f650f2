"""A local re-bound to a value of a wider integer type (ParPy's HMM forward
kernel: `pred = convert(0, I16)`, then `pred = state` in every branch).
Python re-binds the name; parpy keeps one variable and gives it the join
of the types assigned to it, which holds every value exactly. Checked
against the plain-Python run."""

import numpy as np
import pytest

import parpy
from conftest import cpu_opts, run_both

I16, I64 = parpy.types.I16, parpy.types.I64


@parpy.jit
def rebind_in_branches(x, y, N):
    parpy.label('i')
    for i in range(N):
        p = parpy.builtin.convert(0, I16)
        if i % 3 == 0:
            p = parpy.builtin.convert(i, I64) * 100000
        elif i % 3 == 1:
            p = x[i]
        y[i] = p


@parpy.jit
def rebind_chain(x, y, N):
    parpy.label('i')
    for i in range(N):
        a = x[i]
        b = a
        b = parpy.builtin.convert(i, I64) * 70000
        a = b
        y[i] = a + 1


@parpy.jit
def widened_helper(v, k):
    q = v
    q = k * 40000
    return q


@parpy.jit
def calls_helper(x, y, N):
    parpy.label('i')
    for i in range(N):
        y[i] = widened_helper(x[i], parpy.builtin.convert(i, parpy.types.I32))


@parpy.jit
def uint_widening(x, y, N):
    for i in range(N):
        s = x[i]
        s = parpy.builtin.convert(i, parpy.types.U32) * 1000000
        y[i] = s


def test_rebinding_in_branches_keeps_every_value():
    x = np.arange(9, dtype=np.int16) - 4
    y = run_both(rebind_in_branches, [x, np.zeros(9, np.int64), 9],
                 cpu_opts({'i': parpy.threads(4)}))[1]
    assert y[3] == 300000 and y[6] == 600000  # beyond int16


def test_rebinding_chains_widen_each_local():
    x = np.arange(6, dtype=np.int8)
    y = run_both(rebind_chain, [x, np.zeros(6, np.int64), 6],
                 cpu_opts({'i': parpy.threads(2)}))[1]
    assert y[5] == 350001


def test_rebinding_inside_an_inlined_helper():
    x = np.arange(5, dtype=np.int8)
    y = run_both(calls_helper, [x, np.zeros(5, np.int32), 5],
                 cpu_opts({'i': parpy.threads(2)}))[1]
    assert y[4] == 160000


def test_unsigned_locals_widen_to_a_wider_unsigned():
    x = np.arange(5, dtype=np.uint8)
    y = run_both(uint_widening, [x, np.zeros(5, np.uint32), 5], cpu_opts())[1]
    assert y[4] == 4000000


def test_the_widened_local_is_visible_in_the_generated_code():
    code = parpy.print_compiled(rebind_in_branches,
                                [np.zeros(4, np.int16), np.zeros(4, np.int64), 4],
                                cpu_opts({'i': parpy.threads(4)}))
    assert "int64_t p" in code and "int16_t p" not in code, code


@parpy.jit
def float32_then_float64(a, b, y):
    t = a[0]
    y[0] = t / 3
    t = b[0]
    y[1] = t / 3


@parpy.jit
def int8_then_big_int(a, y):
    v = a[0]
    if v > 0:
        v = 1000
    y[0] = v


def test_a_local_re_bound_to_a_type_it_cannot_hold_says_to_use_a_new_name():
    # (the messages suggested a lossy conversion, and NumPy's OverflowError,
    # where Python only re-binds the name)
    # (re-bound after its last read, `t` is a new variable, as in Python:
    # syntax::webs)
    run_both(float32_then_float64, [np.ones(1, np.float32), np.ones(1), np.zeros(2)], cpu_opts())
    with pytest.raises(TypeError) as e:
        int8_then_big_int(np.array([5], np.int8), np.zeros(1, np.int64), opts=cpu_opts())
    text = str(e.value)
    assert "assigns the Python int 1000, which `int8` cannot hold" in text
    assert "use a new name for this value" in text and "OverflowError" not in text
