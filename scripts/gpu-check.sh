#!/usr/bin/env bash
# The GPU check: on a machine with an NVIDIA GPU (driver installed), Python
# with numpy and torch (CuPy/Triton optional) and no internet, installs a
# parpy wheel built beforehand, runs every Cuda execution test and the GPU
# benchmarks G1-G7, and prints a summary. Exits non-zero when anything fails.
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
# Steps: install (pip --no-index from CARRY_DIR, into a venv that sees the
# system packages), backend check, `pytest -m cuda` split into parallel
# shards (tests/test_cuda_runtime.py and tests/test_cuda_programs.py: every
# differential program on Cuda, also through print_compiled + compile_string),
# benchmarks/gpu.py. Budget: under 8 minutes on an H200.
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
VENV="$(mktemp -d)/venv"
if "$PY" -m venv --system-site-packages "$VENV" >/dev/null 2>&1; then
    PY="$VENV/bin/python"
    PIP=("$PY" -m pip install)
else
    # no venv module: install into a folder put first on PYTHONPATH
    SITE="$(mktemp -d)/site"
    export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
    PIP=("$PY" -m pip install --target "$SITE")
fi
WHEEL=$(ls "$CARRY"/parpy-*.whl 2>/dev/null | head -1)
if [ -z "$WHEEL" ]; then echo "no parpy-*.whl in $CARRY" >&2; record "install parpy wheel" FAIL; finish; fi
if ! "${PIP[@]}" --no-index --no-deps --force-reinstall -q "$WHEEL"; then
    record "install parpy wheel" FAIL; finish
fi
for w in "$CARRY"/nvidia_cuda_*.whl; do
    [ -e "$w" ] || continue
    "${PIP[@]}" --no-index --no-deps -q "$w" || { record "install $(basename "$w")" FAIL; finish; }
done
"$PY" -c "import pytest" 2>/dev/null \
    || "${PIP[@]}" --no-index --find-links "$CARRY" -q pytest \
    || { record "pytest available" FAIL; finish; }
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

step "pytest -m cuda (parallel shards)"
SHARDS=${PARPY_GPU_SHARDS:-8}
LIST=$(mktemp)
"$PY" -m pytest -q -p no:cacheprovider -m cuda --collect-only \
    tests/test_cuda_runtime.py tests/test_cuda_programs.py ${KEXPR:+-k "$KEXPR"} 2>/dev/null \
    | grep '::' > "$LIST"
N=$(wc -l < "$LIST")
echo "$N cuda tests in $SHARDS shards"
if [ "$N" -eq 0 ]; then record "pytest -m cuda" FAIL; finish; fi
LOGS=$(mktemp -d)
PIDS=()
for i in $(seq 0 $((SHARDS - 1))); do
    awk -v i="$i" -v n="$SHARDS" '(NR - 1) % n == i' "$LIST" > "$LOGS/ids.$i"
    [ -s "$LOGS/ids.$i" ] || continue
    ( xargs -a "$LOGS/ids.$i" -d '\n' "$PY" -m pytest -q -p no:cacheprovider -m cuda -rfE \
        > "$LOGS/log.$i" 2>&1; echo $? > "$LOGS/rc.$i" ) &
    PIDS+=($!)
done
for p in "${PIDS[@]}"; do wait "$p"; done
PYTEST_OK=1
for i in $(seq 0 $((SHARDS - 1))); do
    [ -f "$LOGS/rc.$i" ] || continue
    tail -1 "$LOGS/log.$i"
    if [ "$(cat "$LOGS/rc.$i")" != 0 ]; then
        PYTEST_OK=0
        grep -E '^(FAILED|ERROR)' "$LOGS/log.$i" | head -40
    fi
done
if [ "$PYTEST_OK" = 1 ]; then record "pytest -m cuda ($N tests)" PASS; else
    for i in $(seq 0 $((SHARDS - 1))); do [ -f "$LOGS/log.$i" ] && grep -q -E '^(FAILED|ERROR)' "$LOGS/log.$i" && sed -n '/= FAILURES =/,/short test summary/p' "$LOGS/log.$i" | head -150; done
    record "pytest -m cuda ($N tests)" FAIL
fi

step "GPU benchmarks G1-G7"
if "$PY" benchmarks/gpu.py ${QUICK:+--quick}; then record "benchmarks G1-G7 (results checked)" PASS
else record "benchmarks G1-G7 (results checked)" FAIL; fi

finish
