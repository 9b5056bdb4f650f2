"""Checks of a call's arguments and of the objects around a jit function
(probe 103): values an annotated int parameter cannot hold, torch tensors
with the negative bit or that require grad, an external's header edited in
the same process, `parpy.buffer`'s DLPack export, compile_string's keyword
arguments, a jit function as a method, and Python mode's refusal of the
narrowing stores compiled code refuses."""

import ctypes
import gc
import os
import sys

import numpy as np
import pytest

import parpy
from parpy import _pymode
from parpy.types import I8, I32, I64
from conftest import cpu_opts


def opts(**fields):
    return cpu_opts({}, **fields)


@parpy.jit
def store_i32(k: I32, y):
    y[0] = k


@parpy.jit
def store_i8(k: I8, y):
    y[0] = k


@parpy.jit
def store_i64(k: I64, y):
    y[0] = k


# --- 1. an annotated int parameter given a value of 2**63 or more ----------

@pytest.mark.parametrize("fn, k", [
    (store_i64, 2**63), (store_i64, 2**64 - 1), (store_i8, 2**64 - 1), (store_i32, 2**63 + 7),
])
def test_a_python_int_past_int64_does_not_fit_an_annotated_int(fn, k):
    # (its uint64 bits were checked as the int64 -2**63 .. -1: I64 took
    # 2**63 as -9.2e18, I8 took 2**64 - 1 as -1)
    y = np.zeros(1)
    with pytest.raises(parpy.CompileTypeError, match="the value does not fit in int"):
        fn(k, y, opts=opts())
    assert y[0] == 0.0


@pytest.mark.parametrize("specialize", [True, False])
@pytest.mark.parametrize("fn, t, k", [
    (store_i32, "int32", 2**63), (store_i32, "int32", 2**64 - 1),
    (store_i8, "int8", 2**63 + 1), (store_i64, "int64", 2**63),
])
def test_a_uint64_past_int64_is_refused_by_an_annotated_int(fn, t, k, specialize):
    # (np.uint64(2**63) into `k: I32` gave 0; it is passed at run time,
    # so the call checks it)
    y = np.zeros(1)
    with pytest.raises(OverflowError, match=rf"NumPy uint64 value {k} out of bounds for {t}: "
                       rf"the argument `k` of `store_\w+` is passed as an {t} \(its annotation"):
        fn(np.uint64(k), y, opts=opts(specialize_scalars=specialize))
    assert y[0] == 0.0
    fn(np.uint64(5), y, opts=opts(specialize_scalars=specialize))
    assert y[0] == 5.0


@pytest.mark.parametrize("k", [np.int64(2**40 + 7), 2**40 + 7, 2**31, -2**31 - 1])
def test_an_unspecialized_value_an_annotation_narrows_names_the_annotation(k):
    y = np.zeros(1, np.int64)
    what = "Python integer" if isinstance(k, int) else "NumPy int64 value"
    with pytest.raises(OverflowError) as e:
        store_i32(k, y, opts=opts(specialize_scalars=False))
    msg = str(e.value)
    assert msg.startswith(f"{what} {int(k)} out of bounds for int32: the argument `k` of "
                          "`store_i32` is passed as an int32 (its annotation `I32`)"), msg
    assert "force_int_size" not in msg and "Metal" not in msg
    assert y[0] == 0
    store_i32(np.int64(-2**31), y, opts=opts(specialize_scalars=False))
    assert y[0] == -2**31
    # a Python int past int64 unspecialized: refused as before
    with pytest.raises(OverflowError, match="past int64"):
        store_i32(2**63, y, opts=opts(specialize_scalars=False))


def test_force_int_size_names_itself():
    @parpy.jit
    def g(k, y):
        y[0] = k
    with pytest.raises(OverflowError, match=r"is passed as an int32 \(`force_int_size`\)"):
        g(2**40, np.zeros(1, np.int64), opts=opts(specialize_scalars=False, force_int_size=32))


# --- 3. 4. torch tensors with the negative bit, or that require grad -------

@parpy.jit
def scale(x, y, N):
    for i in range(N):
        y[i] = x[i] * 2.0 + 1.0


def test_a_torch_tensor_with_the_negative_bit_is_refused():
    torch = pytest.importorskip("torch")
    # (read as its memory: the probe got 7.0 where torch gives -5.0)
    v = torch.complex(torch.tensor([3.]), torch.tensor([3.])).conj().imag
    assert v.is_neg()
    y = torch.zeros(1)
    with pytest.raises(ValueError, match=r"argument `x` of `scale` is a torch tensor with its "
                       r"negative bit set.*x\.resolve_neg\(\)"):
        scale(v, y, 1, opts=opts())
    assert y.tolist() == [0.0]
    out = torch.zeros(3)._neg_view()
    with pytest.raises(ValueError, match=r"argument `y` of `scale`.*negative bit.*y\.copy_\(t\)"):
        scale(torch.ones(3), out, 3, opts=opts())
    # a 0-d tensor is a scalar: its value is negated too
    with pytest.raises(ValueError, match="argument `N` of `scale`.*negative bit"):
        scale(torch.ones(3), torch.zeros(3), torch.tensor(3)._neg_view(), opts=opts())
    # the fix the message gives
    u = torch.arange(5.)._neg_view()
    y = torch.zeros(5)
    scale(u.resolve_neg(), y, 5, opts=opts())
    assert y.tolist() == (u * 2 + 1).tolist()
    # compile_string's code checks it too
    code = parpy.print_compiled(scale, [torch.ones(5), y, 5], opts())
    f = parpy.compile_string("scale", code, opts())
    with pytest.raises(ValueError, match="negative bit"):
        f(u, y, 5)


def test_a_write_into_a_torch_tensor_that_requires_grad_is_refused():
    torch = pytest.importorskip("torch")
    a = torch.ones(3, requires_grad=True)
    b = a * 2
    c = (b * b).sum()
    x = torch.ones(3)
    # in a graph: autograd would use the overwritten values (a.grad 40, not 8)
    with pytest.raises(RuntimeError, match=r"argument `y` of `scale` is a torch tensor that "
                       r"requires grad, and `scale` writes to it.*y\.detach\(\)"):
        scale(x, b, 3, opts=opts())
    assert b._version == 0 and b.tolist() == [2.0] * 3
    c.backward()
    assert a.grad.tolist() == [8.0] * 3
    # a leaf (torch refuses in-place operations on it)
    leaf = torch.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        scale(x, leaf, 3, opts=opts())
    assert leaf.tolist() == [0.0] * 3
    # read, it is taken; `detach()` writes the same memory outside autograd
    y = torch.zeros(3)
    scale(leaf, y, 3, opts=opts())
    assert y.tolist() == [1.0] * 3
    scale(x, leaf.detach(), 3, opts=opts())
    assert leaf.tolist() == [3.0] * 3
    # compile_string's code: the same
    code = parpy.print_compiled(scale, [x, y, 3], opts())
    f = parpy.compile_string("scale", code, opts())
    with pytest.raises(RuntimeError, match="requires grad"):
        f(x, torch.zeros(3, requires_grad=True), 3)


# --- 5. an external's header edited in the same process --------------------

def test_editing_an_external_header_rebuilds_in_the_same_process(tmp_path):
    d = tmp_path / "inc"
    d.mkdir()
    h = d / "magic_api.h"
    h.write_text("static inline int64_t magic_api(int64_t k) { return k + 100; }\n")

    @parpy.external("magic_api", parpy.CompileBackend.Cpu, parpy.Target.Device,
                    header='"magic_api.h"')
    def magic_api(k: I64) -> I64:
        return k + 100

    @parpy.jit
    def use(y, k):
        y[0] = magic_api(k)

    o = opts(includes=[str(d)])
    y = np.zeros(1, np.int64)
    use(y, 1, opts=o)
    assert y[0] == 101
    h.write_text("static inline int64_t magic_api(int64_t k) { return k + 200; }\n")
    st = h.stat()
    os.utime(h, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))
    use(y, 1, opts=o)
    assert y[0] == 201
    use(y, 2, opts=o)  # the new build is cached
    assert y[0] == 202


# --- 6. parpy.buffer's DLPack export ---------------------------------------

def test_a_host_buffer_exports_dlpack():
    b = parpy.buffer.from_array(np.arange(5.0), parpy.CompileBackend.Cpu)
    assert b.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(b)
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    a[0] = 7.0  # the same memory
    assert b.numpy()[0] == 7.0
    # jit functions still take it in place (not as a DLPack device array)
    y = parpy.buffer.zeros((5,), np.float64, parpy.CompileBackend.Cpu)
    scale(b, y, 5, opts=opts())
    assert y.numpy().tolist() == [15.0, 3.0, 5.0, 7.0, 9.0]
    torch = sys.modules.get("torch")
    if torch is not None:
        assert torch.from_dlpack(b).tolist() == [7.0, 1.0, 2.0, 3.0, 4.0]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def _capsule_tensor(cap):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return _DLTensor.from_address(get(cap, b"dltensor"))


def test_a_cuda_buffer_exports_its_device_memory_through_dlpack():
    # on the CUDA emulator, whose device memory is host memory: the capsule
    # is read as a consumer would, then dropped unconsumed
    from parpy import _cuda_emu
    with _cuda_emu.installed():
        b = parpy.buffer.from_array(np.arange(12, dtype=np.int32).reshape(3, 4),
                                    parpy.CompileBackend.Cuda)
        assert b.__dlpack_device__() == (2, 0)
        row = b[1]
        mem = b.buf.mem
        refs = sys.getrefcount(mem)
        cap = row.__dlpack__()
        t = _capsule_tensor(cap)
        assert (t.device_type, t.device_id, t.ndim) == (2, 0, 1)
        assert (t.code, t.bits, t.lanes, t.byte_offset) == (0, 32, 1, 0)
        assert t.shape[0] == 4 and not t.strides
        assert t.data == b._get_ptr() + 16
        assert np.ctypeslib.as_array(ctypes.cast(t.data, ctypes.POINTER(ctypes.c_int32)),
                                     (4,)).tolist() == [4, 5, 6, 7]
        assert sys.getrefcount(mem) == refs + 1  # the tensor keeps the memory
        del t, cap
        gc.collect()
        assert sys.getrefcount(mem) == refs  # the capsule's destructor freed it
        with pytest.raises(BufferError, match="cannot be exported"):
            b.__dlpack__(dl_device=(1, 0))
        f = parpy.buffer.zeros((2,), np.float32, parpy.CompileBackend.Cuda)
        t = _capsule_tensor(f.__dlpack__())
        assert (t.code, t.bits) == (2, 32)


# --- 7. compile_string's keyword arguments ---------------------------------

def test_compile_string_takes_keyword_arguments():
    x, y = np.arange(4.0), np.zeros(4)
    code = parpy.print_compiled(scale, [x, y, 4], opts(specialize_scalars=False))
    f = parpy.compile_string("scale", code, opts())
    f(x, y=y, N=4)
    assert y.tolist() == [1.0, 3.0, 5.0, 7.0]
    f(N=2, y=y, x=np.ones(4))
    assert y.tolist() == [3.0, 3.0, 5.0, 7.0]
    with pytest.raises(TypeError, match=r"unexpected keyword argument `n`: scale\(x, y, N\)"):
        f(x, y, n=4)
    with pytest.raises(TypeError, match="multiple values for argument `x`"):
        f(x, y, x=x, N=4)
    with pytest.raises(TypeError, match="missing required argument `N`"):
        f(x, y=y)


# --- 8. smaller ones -------------------------------------------------------

class MyFloat(float):
    pass


def test_a_float_subclass_is_a_python_float():
    @parpy.jit
    def put(y, s):
        y[0] = s
    y = np.zeros(1, np.float32)
    put(y, MyFloat(2.5), opts=opts())  # weak: into float32 as a Python float
    assert y[0] == 2.5


def test_a_parameter_named_opts_is_refused_at_decoration():
    def g(x, opts):
        x[0] = opts
    with pytest.raises(TypeError, match="`g` has a parameter named `opts`.*rename"):
        parpy.jit(g)


def test_a_jit_function_on_a_class_is_a_method():
    def m(self, x):
        x[0] = 7.0

    class K:
        pass

    K.m = parpy.jit(m)
    assert K.m is K.__dict__["m"]  # through the class: the function itself
    x = np.zeros(1)
    K.m(x, x, opts=opts())
    assert x[0] == 7.0
    bound = K().m
    assert bound.__func__ is K.__dict__["m"]
    with pytest.raises(parpy.CompileTypeError, match="argument `self` of `m` has type K"):
        bound(x, opts=opts())


def test_set_max_loaded_of_a_non_int_is_a_type_error():
    with pytest.raises(TypeError, match="n must be an int, got 'a'"):
        parpy.set_max_loaded("a")
    with pytest.raises(ValueError, match="at least 1"):
        parpy.set_max_loaded(0)


def test_a_buffer_reshape_infers_minus_one():
    b = parpy.buffer.zeros((2, 3), np.float32, parpy.CompileBackend.Cpu)
    assert b.reshape(-1).shape == (6,)
    assert b.reshape((3, -1)).shape == (3, 2)
    with pytest.raises(ValueError, match="Cannot reshape buffer of shape"):
        b.reshape(4, -1)


@parpy.jit
def double_into(x, y, N):
    for i in range(N):
        y[i] = x[i] * 2.0


def test_python_mode_refuses_the_narrowing_store_compiled_code_refuses():
    x, y = np.ones(3), np.zeros(3, np.float32)
    for backend in (parpy.CompileBackend.Cpu, parpy.CompileBackend.Python):
        o = opts()
        o.backend = backend
        with pytest.raises(parpy.CompileTypeError,
                           match="cannot store a value of type `f64` into a destination of type "
                           "`f32` implicitly"):
            double_into(x, y, 3, opts=o)
    assert y.tolist() == [0.0] * 3
    # a Python number (weak) and a float32 value are stored in both
    o = opts()
    o.backend = parpy.CompileBackend.Python
    double_into(np.ones(3, np.float32), y, 3, opts=o)
    assert y.tolist() == [2.0] * 3


@parpy.jit
def add_whole(x, y, N):
    y += x


@parpy.jit
def add_slice(x, y, N):
    y[:] += x[:]


@parpy.jit
def mul_part(x, y, N):
    y[0:2] *= x[0:2]


@pytest.mark.parametrize("fn", [add_whole, add_slice, mul_part])
def test_python_mode_refuses_a_narrowing_update_in_place_of_a_slice(fn):
    # NumPy's `y += x` on a float32 view computes in float64 and casts into
    # `y` silently: Python mode checks the operation's type first
    for backend in (parpy.CompileBackend.Cpu, parpy.CompileBackend.Python):
        o = opts()
        o.backend = backend
        y = np.ones(3, np.float32)
        with pytest.raises(parpy.CompileTypeError,
                           match="cannot store a value of type `f64` into a destination of type "
                           "`f32` implicitly"):
            fn(np.arange(3.0), y, 3, opts=o)
        assert y.tolist() == [1.0] * 3
    # what widens is stored, into the caller's array
    o = opts()
    o.backend = parpy.CompileBackend.Python
    for x in (np.arange(3, dtype=np.float32), np.arange(3, dtype=np.int8)):
        y = np.ones(3, np.float32)
        fn(x, y, 3, opts=o)
        c = np.ones(3, np.float32)
        fn(x, c, 3, opts=opts())
        assert y.tolist() == c.tolist()


def _look(x, y, N):
    seen = [type(x).__name__, repr(x), type(x.copy()).__name__, type(x[1:]).__name__]
    for act in (lambda: x.foo, lambda: setattr(x, "foo", 1)):
        try:
            act()
        except AttributeError as e:
            seen.append(str(e))
    z = x.copy()  # a copy checks its stores as compiled code's local does
    try:
        z[0] = np.float64(1.0)
    except parpy.CompileTypeError:
        seen.append("copy checked")
    r = np.add(y, y, out=y)
    seen.append(r is y)
    return seen


def test_python_mode_arrays_read_as_numpy_arrays():
    seen = _pymode.run(_look, [np.arange(3, dtype=np.float32), np.ones(2), 2])
    assert seen == [
        "ndarray", "array([0., 1., 2.], dtype=float32)", "ndarray", "ndarray",
        "'numpy.ndarray' object has no attribute 'foo'",
        "'numpy.ndarray' object has no attribute 'foo'",
        "copy checked", True,
    ]
