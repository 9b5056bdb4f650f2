"""The HMM forward algorithm (examples/hmm_forward.py, ParPy's headline
benchmark) against the expected output of ParPy's data: the shortest reads,
k = 3 and k = 5, on Cpu; its Cuda (NVRTC) and Metal (clang) code; its Cuda
program run through the Cuda call path on the CUDA emulator.

Needs h5py and the data files (PARPY_HMM_DATA, default
/work/shared/data/hmm); skipped, saying which, without them.
"""

import os
import pathlib
import shutil
import sys

import numpy as np
import pytest

import parpy
from conftest import backend_opts
from test_cuda_codegen import check_nvrtc, needs_nvrtc
from parpy import _cuda_emu, _native
from test_metal_codegen import assert_clang_ok, needs_clang

h5py = pytest.importorskip("h5py", reason="h5py is not installed (pip install h5py)")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "examples"))
import hmm_forward as hf  # noqa: E402

DATA = pathlib.Path(os.environ.get("PARPY_HMM_DATA", "/work/shared/data/hmm"))
if not (DATA / "signals.hdf5").exists():
    pytest.skip(f"the HMM data is not in {DATA} (set PARPY_HMM_DATA)", allow_module_level=True)


def shortest_reads(n):
    with h5py.File(DATA / "signals.hdf5", "r") as f:
        lengths = [len(f[key]["Raw"]["Signal"]) for key in f.keys()]
    return sorted(np.argsort(lengths, kind="stable")[:n].tolist())


@pytest.mark.parametrize("k,n_reads", [(3, 4), (5, 1)])
def test_forward_matches_the_expected_output(k, n_reads):
    which = shortest_reads(n_reads)
    model = hf.load_model(DATA / f"{k}mer-model.hdf5")
    data, lens = hf.load_signals(DATA / "signals.hdf5", which)
    got = hf.run_forward(model, data, lens)
    expected = hf.read_expected(DATA / f"{k}mer-expected.txt")[which]
    np.testing.assert_allclose(got, expected, rtol=1e-4)


def forward_args():
    model = hf.load_model(DATA / "3mer-model.hdf5")
    data, lens = hf.load_signals(DATA / "signals.hdf5", shortest_reads(2))
    n, states = data.shape[0], 16 * 4 ** model["k"]
    alpha = np.zeros((n, states), np.float32)
    return [model["init"], model["trans1"], model["trans2"], model["out_prob"],
            model["gamma"], model["synthetic_248"], data, lens, data.shape[1],
            np.zeros(n, np.float32), alpha, alpha.copy(), states, n]


SPEC = {'inst': parpy.threads(2), 'state': parpy.threads(256)}


@needs_nvrtc
def test_forward_cuda_compiles():
    opts = backend_opts(parpy.CompileBackend.Cuda, SPEC)
    check_nvrtc(parpy.print_compiled(hf.forward, forward_args(), opts), "forward")


def test_forward_cuda_dry_run():
    """The Cuda miss path up to the cubin and the launch plan (the plain
    Python reference would take minutes here)."""
    opts = backend_opts(parpy.CompileBackend.Cuda, SPEC)
    names, launches, size = _native._cuda_dry_run(hf.forward, forward_args(), opts, 90)
    assert len(names) == len(launches) == 1 and size > 0


@needs_clang
def test_forward_metal_parses():
    args = forward_args()
    args[7] = args[7].astype(np.int32)  # Metal has 32-bit integers
    opts = backend_opts(parpy.CompileBackend.Metal, SPEC)
    assert_clang_ok(parpy.print_compiled(hf.forward, args, opts), "forward")


@pytest.mark.cuda
@pytest.mark.parametrize("k,n_reads", [(3, 4), (5, 1)])
def test_forward_on_cuda(k, n_reads):
    if not parpy.backend.is_enabled(parpy.CompileBackend.Cuda):
        pytest.skip("needs an NVIDIA GPU (scripts/gpu-check.sh)")
    which = shortest_reads(n_reads)
    model = hf.load_model(DATA / f"{k}mer-model.hdf5")
    data, lens = hf.load_signals(DATA / "signals.hdf5", which)
    got = hf.run_forward(model, data, lens, backend=parpy.CompileBackend.Cuda)
    expected = hf.read_expected(DATA / f"{k}mer-expected.txt")[which]
    np.testing.assert_allclose(got, expected, rtol=1e-4)


@pytest.mark.skipif(shutil.which("c++") is None, reason="needs a C++ compiler")
def test_forward_on_emulated_cuda():
    # the kernel (one block per read, a barrier per time step) and the
    # launch plan, without a GPU: the expected output to the last bit
    which = shortest_reads(1)
    model = hf.load_model(DATA / "3mer-model.hdf5")
    data, lens = hf.load_signals(DATA / "signals.hdf5", which)
    with _cuda_emu.installed(0):
        got = hf.run_forward(model, data, lens, backend=parpy.CompileBackend.Cuda)
    expected = hf.read_expected(DATA / "3mer-expected.txt")[which]
    np.testing.assert_allclose(got, expected, rtol=1e-6)
