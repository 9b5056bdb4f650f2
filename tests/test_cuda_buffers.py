"""parpy.buffer on the Cuda backend (issue 11 item 7): device memory that
parpy owns (`_native.DeviceMemory`) and passes to jit functions in place
through `__cuda_array_interface__`.

Without a GPU, the Python side (views, offsets, reshapes, type changes,
copies, indexing, conversions) runs against a stand-in for DeviceMemory
that keeps its bytes in host memory; the tests marked `cuda` run the real
thing on an NVIDIA GPU (scripts/gpu-check.sh)."""

import numpy as np
import pytest

import parpy
from parpy import _native
from conftest import backend_opts

CUDA = parpy.CompileBackend.Cuda
HAS_GPU = parpy.backend.is_enabled(CUDA)


class FakeDeviceMemory:
    """DeviceMemory's interface over a host byte array (its `ptr` is the
    host address, never dereferenced as a device pointer here)."""

    live = 0

    def __init__(self, nbytes, device):
        self.data = np.zeros(max(nbytes, 1), np.uint8)
        self.nbytes, self.device = nbytes, device
        FakeDeviceMemory.live += 1

    def __del__(self):
        FakeDeviceMemory.live -= 1

    @property
    def ptr(self):
        return self.data.ctypes.data

    def _range(self, off, n):
        if off + n > self.nbytes:
            raise ValueError("outside the buffer")
        return self.data[off:off + n]

    def write(self, off, a):
        self._range(off, a.nbytes)[:] = np.frombuffer(a.tobytes(), np.uint8)

    def read(self, off, a):
        a.reshape(-1).view(np.uint8)[:] = self._range(off, a.nbytes)

    def copy_from(self, off, src, src_off, n):
        self._range(off, n)[:] = src._range(src_off, n)

    def zero(self, off, n):
        self._range(off, n)[:] = 0


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(_native, "DeviceMemory", FakeDeviceMemory)
    return FakeDeviceMemory


def test_from_array_copies_to_the_device_and_back(fake):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    b = parpy.buffer.from_array(a, CUDA)
    assert isinstance(b, parpy.buffer.CudaBuffer) and b.backend == CUDA
    assert b.shape == (2, 3, 4) and b.size() == 96 and b.device == 0
    a[0, 0, 0] = 100.0  # a copy, not a view of `a`
    assert b.numpy()[0, 0, 0] == 0.0
    assert np.array_equal(b.numpy()[1], np.arange(12, 24, dtype=np.float32).reshape(3, 4))
    assert np.array_equal(np.asarray(b), b.numpy())


def test_the_array_interface_points_at_the_data(fake):
    b = parpy.buffer.from_array(np.arange(6, dtype=np.int16).reshape(2, 3), CUDA, device=0)
    cai = b.__cuda_array_interface__
    assert cai["shape"] == (2, 3) and cai["typestr"] == "<i2" and cai["version"] == 3
    assert cai["data"] == (b._get_ptr(), False) and cai["strides"] is None
    # a view starts at its row
    assert b[1].__cuda_array_interface__["data"][0] == b._get_ptr() + 6
    with pytest.raises(AttributeError):
        b.__array_interface__


def test_indexing_views_share_memory(fake):
    a = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    b = parpy.buffer.from_array(a, CUDA)
    assert b[2, 3, 4] == 59.0 and b[-1, 0, 1] == 41.0
    row = b[1]
    assert row.shape == (4, 5) and np.array_equal(row.numpy(), a[1])
    row.copy_from(np.full((4, 5), 7.0))
    assert b[1, 2, 3] == 7.0 and b[0, 0, 0] == 0.0
    with pytest.raises(IndexError):
        b[3]
    with pytest.raises(IndexError):
        b[0, 0, 0, 0]
    with pytest.raises(TypeError):
        b[0:1]


def test_zeros_empty_like_and_copies(fake):
    z = parpy.buffer.zeros((5,), parpy.types.I32, CUDA)
    assert z.numpy().tolist() == [0] * 5
    e = parpy.buffer.empty_like(z)
    assert e.shape == (5,) and e.dtype == z.dtype and e._get_ptr() != z._get_ptr()
    z.copy_from(np.arange(5, dtype=np.int32))
    c = z.copy()
    z.copy_from(np.zeros(5, np.int32))
    assert c.numpy().tolist() == [0, 1, 2, 3, 4]
    e.copy_from(c)
    assert e.numpy().tolist() == [0, 1, 2, 3, 4]
    assert parpy.buffer.zeros_like(c).numpy().tolist() == [0] * 5
    with pytest.raises(ValueError, match="cannot copy"):
        e.copy_from(np.zeros(4, np.int32))


def test_reshape_and_type_changes(fake):
    b = parpy.buffer.from_array(np.arange(6, dtype=np.int32), CUDA)
    r = b.reshape(2, 3)
    assert r.shape == (2, 3) and r[1, 2] == 5 and r._get_ptr() == b._get_ptr()
    with pytest.raises(ValueError, match="Cannot reshape buffer of shape"):
        b.reshape(4, 2)
    u = b.with_type(parpy.types.U32)  # a sign change: the same memory
    assert u._get_ptr() == b._get_ptr() and u.dtype.elem is parpy.types.U32
    f = b.with_type(parpy.types.F64)  # a conversion: new memory
    assert f._get_ptr() != b._get_ptr() and f.numpy().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_one_element_buffers_convert_to_python_numbers(fake):
    assert float(parpy.buffer.from_array(np.array([2.5]), CUDA)) == 2.5
    assert int(parpy.buffer.from_array(np.array(7, np.int64), CUDA)) == 7
    assert bool(parpy.buffer.from_array(np.array([True]), CUDA)) is True
    with pytest.raises(ValueError, match="only a buffer with one element"):
        float(parpy.buffer.zeros((2,), parpy.types.F32, CUDA))


def test_views_keep_the_memory_alive(fake):
    before = fake.live
    b = parpy.buffer.from_array(np.arange(8, dtype=np.float32).reshape(2, 4), CUDA)
    view = b[1]
    del b
    assert fake.live == before + 1 and view.numpy().tolist() == [4.0, 5.0, 6.0, 7.0]
    del view
    assert fake.live == before


def test_metal_buffers_and_raw_device_addresses_are_clear_errors():
    with pytest.raises(RuntimeError, match="Metal backend prints code"):
        parpy.buffer.zeros((2,), parpy.types.F32, parpy.CompileBackend.Metal)
    with pytest.raises(RuntimeError, match="raw device addresses"):
        parpy.buffer.from_raw(0, (2,), parpy.types.F32, CUDA)


@pytest.mark.skipif(HAS_GPU, reason="checks the error without a GPU")
def test_without_a_driver_allocation_is_a_runtime_error():
    with pytest.raises(RuntimeError, match="CUDA"):
        parpy.buffer.zeros((2,), parpy.types.F32, CUDA)


# --------------------------------------------------------------------------
# on an NVIDIA GPU

gpu = [pytest.mark.cuda, pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU")]


@parpy.jit
def add_one_rows(x, N, M):
    parpy.label('i')
    for i in range(N):
        parpy.label('j')
        for j in range(M):
            x[i, j] += 1.0


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU")
def test_jit_calls_update_device_buffers_in_place():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = parpy.buffer.from_array(a, CUDA)
    opts = backend_opts(CUDA, {'i': parpy.threads(3), 'j': parpy.threads(4)})
    for _ in range(3):
        add_one_rows(b, 3, 4, opts=opts)
    assert np.array_equal(b.numpy(), a + 3)
    # a row view, passed as a 1-row array
    add_one_rows(b[1].reshape(1, 4), 1, 4, opts=opts)
    assert np.array_equal(b.numpy()[1], a[1] + 4)


@pytest.mark.cuda
@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU")
def test_device_buffers_on_the_gpu():
    z = parpy.buffer.zeros((4, 5), parpy.types.F64, CUDA)
    assert not z.numpy().any() and float(z[2, 3]) == 0.0
    z.copy_from(np.ones((4, 5)))
    c = z.copy()
    z.copy_from(np.zeros((4, 5)))
    assert c.numpy().sum() == 20.0
    assert c.with_type(parpy.types.F32).numpy().dtype == np.float32
    torch = pytest.importorskip("torch")
    t = c.torch()
    assert t.device == torch.device("cuda", 0) and float(t.sum()) == 20.0
