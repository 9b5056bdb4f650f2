#!/usr/bin/env bash
# The GPU check: on a machine with an NVIDIA GPU (driver installed), Python
# with numpy and torch (CuPy/Triton optional) and no internet, installs a
# parpy wheel built beforehand, runs every Cuda execution test and the GPU
# benchmarks G1-G12, and prints a summary. Exits non-zero when anything fails.
#
#   bash scripts/gpu-check.sh CARRY_DIR [--quick]
#
# Preparing CARRY_DIR on a machine with internet (from the repository root):
#
#   mkdir -p gpu-carry
#   maturin build --release -o gpu-carry                  # parpy-*.whl (abi3)
#   # (tagged manylinux_2_34 on this project's machines: the GPU machine
#   # needs glibc >= 2.34; pip says so if it has less)
#   pip download --no-deps -d gpu-carry "nvidia-cuda-nvrtc>=13,<14"
#   pip download -d gpu-carry pytest                      # if the machine lacks it
#   # for compile_string (nvcc), unless the GPU machine has nvcc on PATH
#   # or in $CUDA_HOME (about 54 MB more):
#   pip download --no-deps -d gpu-carry "nvidia-cuda-nvcc>=13,<14" \
#       "nvidia-cuda-runtime>=13,<14" "nvidia-cuda-cccl>=13,<14"
#
# and carry `gpu-carry` to the GPU machine with the working tree (untracked
# files travel with it; if the folder is git-ignored, name it in the run
# tool's `carry`). The NVRTC wheel alone is 58 MB, so when the
# carry limit is 64 MiB leave the nvcc wheels out and rely on the machine's
# nvcc, or set PARPY_GPU_CHECK_NO_NVCC=1 to skip the compile_string
# comparisons, which the summary then reports as SKIPPED, not passed).
# Wheels already installed on the machine (e.g. torch's own NVRTC 13) are
# used as they are.
#
# Steps: install (pip --no-index --target from CARRY_DIR into a folder put on
# PYTHONPATH), backend check, `pytest -m cuda` (with pytest-xdist workers
# when installed: tests/test_cuda_runtime.py and tests/test_cuda_programs.py,
# every differential program on Cuda, also through print_compiled +
# compile_string), benchmarks/gpu.py. Budget: under 8 minutes on an H200.
# PARPY_GPU_CHECK_LOGDIR=DIR keeps the pytest log, JUnit XML and benchmark
# output there.
set -uo pipefail

cd "$(dirname "$0")/.."
CARRY="${1:?usage: scripts/gpu-check.sh CARRY_DIR [--quick]}"
QUICK="${2:-}"
START=$(date +%s)
declare -a SUMMARY=()
FAILED=0

step() { printf '\n==> %s  (%ss)\n' "$*" "$(( $(date +%s) - START ))"; }
record() { SUMMARY+=("$(printf '%-34s %s' "$1" "$2")"); [ "$2" = PASS ] || [ "$2" = SKIPPED ] || FAILED=1; }
finish() {
    printf '\n==================== gpu-check summary (%ss) ====================\n' "$(( $(date +%s) - START ))"
    for l in "${SUMMARY[@]}"; do echo "$l"; done
    if [ "$FAILED" -ne 0 ]; then echo "GPU CHECK FAILED"; exit 1; fi
    echo "GPU CHECK PASSED"; exit 0
}

PY="${PYTHON:-python3}"
step "environment"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
if ! "$PY" -c "import numpy, torch; assert torch.cuda.is_available(), 'torch sees no GPU'; print('torch', torch.__version__, torch.version.cuda)"; then
    record "numpy + torch with CUDA" FAIL; finish
fi

step "installing parpy from $CARRY"
# Installed into a private folder put first on PYTHONPATH rather than a venv:
# the machine's python3 may itself be a venv (torch lives there), and a venv
# made from it with --system-site-packages would not see torch.
SITE="$(mktemp -d)/site"
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
PIP=("$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SITE")
WHEEL=$(ls "$CARRY"/parpy-*.whl 2>/dev/null | head -1)
if [ -z "$WHEEL" ]; then echo "no parpy-*.whl in $CARRY" >&2; record "install parpy wheel" FAIL; finish; fi
if ! "${PIP[@]}" "$WHEEL"; then
    record "install parpy wheel" FAIL; finish
fi
for w in "$CARRY"/nvidia_cuda_*.whl; do
    [ -e "$w" ] || continue
    "${PIP[@]}" "$w" || { record "install $(basename "$w")" FAIL; finish; }
done
"$PY" -c "import pytest" 2>/dev/null \
    || "$PY" -m pip install -q --no-index --find-links "$CARRY" --target "$SITE" pytest \
    || { record "pytest available" FAIL; finish; }
# nvcc for compile_string: PATH, or the toolkit's usual place
command -v nvcc >/dev/null 2>&1 || { [ -x /usr/local/cuda/bin/nvcc ] && export PATH="$PATH:/usr/local/cuda/bin"; }
record "install" PASS

step "backend resolution"
# the tests import the installed package (the repository root has no parpy/)
if ! "$PY" - <<'PYEOF'
import parpy, sys
from parpy import _cuda
for b in (parpy.CompileBackend.Cuda, parpy.CompileBackend.Cpu):
    print(parpy.backend.explain(b))
print("nvrtc:", _cuda.nvrtc_path(), " nvcc:", _cuda.nvcc_path())
assert "torch" not in sys.modules, "importing parpy imported torch"
sys.exit(0 if parpy.backend.is_enabled(parpy.CompileBackend.Cuda) else 1)
PYEOF
then record "Cuda backend usable" FAIL; finish; fi
record "Cuda backend usable" PASS

NVCC_OK=$("$PY" -c "from parpy import _cuda; print(1 if _cuda.nvcc_path() else 0)")
if [ "$NVCC_OK" != 1 ] && [ "${PARPY_GPU_CHECK_NO_NVCC:-0}" != 1 ]; then
    echo "no nvcc: carry the nvidia-cuda-nvcc/-runtime/-cccl wheels, put nvcc on PATH," >&2
    echo "or set PARPY_GPU_CHECK_NO_NVCC=1 to skip the compile_string comparisons" >&2
    record "nvcc for compile_string" FAIL; finish
fi
KEXPR=""
if [ "$NVCC_OK" != 1 ]; then
    KEXPR="not compile_string and not illegal_address"
    export PARPY_TEST_NO_NVCC=1
    record "compile_string vs JIT (nvcc)" SKIPPED
fi

step "pytest -m cuda"
# LOGDIR (optional): where the full pytest log, JUnit XML and benchmark
# rows are written as well
LOGDIR="${PARPY_GPU_CHECK_LOGDIR:-$(mktemp -d)}"
mkdir -p "$LOGDIR"
PAR=()
"$PY" -c "import xdist" 2>/dev/null && PAR=(-n "${PARPY_GPU_WORKERS:-12}")
"$PY" -c "import pytest_timeout" 2>/dev/null && PAR+=(--timeout=120)
timeout "${PARPY_GPU_TEST_TIMEOUT:-360}" "$PY" -m pytest -q -p no:cacheprovider -m cuda -rfE "${PAR[@]}" \
    --junitxml="$LOGDIR/cuda-tests.xml" \
    tests ${KEXPR:+-k "$KEXPR"} \
    > "$LOGDIR/pytest.log" 2>&1
RC=$?
grep -E '^(FAILED|ERROR)' "$LOGDIR/pytest.log" | head -60
tail -3 "$LOGDIR/pytest.log"
N=$(grep -o -E '[0-9]+ passed' "$LOGDIR/pytest.log" | tail -1 | grep -o -E '[0-9]+' || echo 0)
if [ "$RC" = 0 ] && [ "${N:-0}" -gt 0 ]; then record "pytest -m cuda ($N passed)" PASS; else
    sed -n '/= FAILURES =/,/short test summary/p' "$LOGDIR/pytest.log" | head -200
    record "pytest -m cuda (rc $RC, $N passed)" FAIL
fi

# ParPy's own test suite on Cuda (informational: the compatibility yardstick).
# Carry it as CARRY_DIR/yardstick (ParPy's test/ folder with its data; the
# conftest there may add backends); its result is reported, not judged.
if [ -d "$CARRY/yardstick/test" ]; then
    step "ParPy test suite (yardstick) on Cuda"
    ( cd "$CARRY/yardstick" && timeout "${PARPY_GPU_YARDSTICK_TIMEOUT:-240}" "$PY" -m pytest test -q \
        -p no:cacheprovider "${PAR[@]}" > "$LOGDIR/yardstick.log" 2>&1 )
    tail -1 "$LOGDIR/yardstick.log"
    grep -E '^(FAILED|ERROR)' "$LOGDIR/yardstick.log" | cut -c1-160 | head -40
    SUMMARY+=("$(printf '%-34s %s' "ParPy tests on Cuda (info)" "$(tail -1 "$LOGDIR/yardstick.log" | cut -c1-80)")")
fi

step "differential fuzzer on Cuda"
FUZZ_S="${PARPY_GPU_FUZZ_SECONDS:-90}"
if [ "$FUZZ_S" != 0 ]; then
    timeout $(( FUZZ_S + 120 )) "$PY" -m parpy._fuzz --backend cuda --seconds "$FUZZ_S" \
        --jobs "${PARPY_GPU_FUZZ_JOBS:-8}" --out "$LOGDIR/fuzz" > "$LOGDIR/fuzz.log" 2>&1
    FRC=$?
    tail -8 "$LOGDIR/fuzz.log"
    if [ "$FRC" = 0 ]; then record "fuzzer on Cuda (${FUZZ_S}s)" PASS
    else record "fuzzer on Cuda (rc $FRC, see $LOGDIR/fuzz)" FAIL; fi
fi

step "GPU benchmarks G1-G12"
# G12 reads the HMM data (5mer-model.hdf5, signals.hdf5, 5mer-expected.txt of
# ../shared/data/hmm): carry them as CARRY_DIR/hmm
HMM=()
[ -d "$CARRY/hmm" ] && HMM=(--hmm-data "$CARRY/hmm")
if timeout "${PARPY_GPU_BENCH_TIMEOUT:-300}" "$PY" benchmarks/gpu.py ${QUICK:+--quick} "${HMM[@]}" | tee "$LOGDIR/bench.txt"; then record "benchmarks G1-G12 (results checked)" PASS
else record "benchmarks G1-G12 (results checked)" FAIL; fi

finish
