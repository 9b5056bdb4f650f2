#!/usr/bin/env bash
# Sets up and runs every test of parpy: Rust formatting, clippy (warnings
# denied), the Rust tests, then the pytest suite against the installed package,
# then its GPU tests on the CUDA emulator.
#
#   bash scripts/test.sh
#
# Needs Rust (cargo), Python >= 3.10 with pip and a C compiler. Outside an
# active virtual environment it creates and uses .venv in the repository.
set -euo pipefail

cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

if [ -z "${VIRTUAL_ENV:-}" ]; then
    if [ ! -x .venv/bin/python ]; then
        step "creating .venv"
        python3 -m venv .venv
    fi
    # shellcheck disable=SC1091
    . .venv/bin/activate
fi

step "installing parpy and the test dependencies"
python -m pip install --quiet ".[test]"
# the suite's own needs, in case the package's [test] extra lacks them
python -m pip install --quiet numpy pytest
# the Cuda backend's compilers (NVRTC in-process, nvcc for compile_string):
# the CUDA tests that need no GPU compile with them (Linux x86_64/aarch64)
if [ "$(uname -s)" = Linux ]; then
    python -m pip install --quiet "nvidia-cuda-nvrtc>=13,<14" "nvidia-cuda-nvcc>=13,<14" \
        "nvidia-cuda-runtime>=13,<14" "nvidia-cuda-cccl>=13,<14"
fi
# CUDA code generation checks without a GPU (tests/test_cuda_codegen.py):
# NVRTC and nvcc from the PyPI wheels
python -m pip install --quiet "nvidia-cuda-nvrtc==13.*" "nvidia-cuda-nvcc==13.*" \
    "nvidia-cuda-cccl==13.*" "nvidia-cuda-runtime==13.*"

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (warnings denied)"
cargo clippy --workspace --all-targets -- -D warnings

step "cargo test"
cargo test --workspace

step "pytest"
# tests import the installed package (the repository root has no parpy/ folder)
rc=0
python -m pytest tests -q -p no:cacheprovider "$@" || rc=$?
if [ "$rc" -eq 5 ]; then
    echo "pytest collected no tests: that is a failure" >&2
    exit 1
fi
if [ "$rc" -ne 0 ]; then
    echo "pytest failed (exit code $rc)" >&2
    exit "$rc"
fi

# The GPU tests (-m cuda) without a GPU: the Cuda backend's call path (launch
# plan, staging, temporaries, bounds record, CUDA graphs) with its kernels
# run by the CUDA emulator (parpy._cuda_emu, one fiber per GPU thread; needs
# a C++ compiler). Tests that need the driver itself skip.
if command -v "${CXX:-c++}" >/dev/null 2>&1; then
    step "pytest -m cuda on the CUDA emulator"
    PARPY_TEST_EMULATED_GPU=1 python -m pytest tests -q -p no:cacheprovider -m cuda "$@"
else
    echo "no C++ compiler (${CXX:-c++}): the GPU tests on the CUDA emulator are not run" >&2
fi
step "all tests passed"
