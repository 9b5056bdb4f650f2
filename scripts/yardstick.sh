#!/usr/bin/env bash
# ParPy's own test suite against this parpy: the compatibility yardstick of
# issues 11 and 12. ParPy's tests are not part of this repository: give the
# folder of a ParPy checkout (github.com/larshum/ParPy; its test/ folder with
# test/code and test/data is what runs). They run unmodified on a copy, with
# one conftest.py of ours that chooses the backends:
#
#   scripts/yardstick.sh PARPY_DIR cpu        # also run the execution tests on Cpu
#   scripts/yardstick.sh PARPY_DIR cuda-emu   # Cuda on parpy's CUDA emulator
#                                             # (no GPU needed; tests that need
#                                             # torch CUDA tensors or nvcc fail)
#   scripts/yardstick.sh PARPY_DIR cuda       # Cuda on this machine's GPU
#
# The tests import torch (CPU torch is enough for cpu and cuda-emu). Extra
# arguments go to pytest (e.g. -n 2, -k axpy, --deselect ...). Prints
# pytest's summary; the log is in $YARDSTICK_LOG (default
# /tmp/parpy-yardstick-MODE.log). The figure counts executed tests: passed /
# (passed + failed).
set -uo pipefail

if [ $# -lt 2 ]; then
    sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
SRC="$1"
MODE="$2"
shift 2
if [ ! -d "$SRC/test" ]; then
    echo "no test/ folder in $SRC" >&2
    exit 2
fi
PY="${PYTHON:-python3}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/parpy-yardstick.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
cp -r "$SRC/test" "$WORK/test"
LOG="${YARDSTICK_LOG:-/tmp/parpy-yardstick-$MODE.log}"

case "$MODE" in
    cpu) cat > "$WORK/test/conftest.py" <<'EOF'
# the yardstick on Cpu: ParPy's execution tests also run on the Cpu backend
import parpy
import parpy.backend

if parpy.CompileBackend.Cpu not in parpy.backend.backends:
    parpy.backend.backends.append(parpy.CompileBackend.Cpu)
EOF
    ;;
    cuda-emu) cat > "$WORK/test/conftest.py" <<'EOF'
# the yardstick on Cuda without a GPU: the Cuda backend runs on parpy's
# CUDA emulator (parpy._cuda_emu)
import parpy
import parpy.backend
from parpy import _cuda_emu

_cuda_emu.install(seed=1)
parpy.backend.backends[:] = [parpy.CompileBackend.Cuda, parpy.CompileBackend.Metal]
EOF
    ;;
    cuda) : > "$WORK/test/conftest.py" ;;
    *) echo "mode must be cpu, cuda-emu or cuda, not $MODE" >&2; exit 2 ;;
esac

# the tests name their data by relative paths (test/code, test/data)
( cd "$WORK" && "$PY" -m pytest test -q -p no:cacheprovider -rf "$@" ) > "$LOG" 2>&1
RC=$?
tail -1 "$LOG"
P=$(grep -o -E '[0-9]+ passed' "$LOG" | tail -1 | grep -o -E '[0-9]+' || echo 0)
F=$(grep -o -E '[0-9]+ failed' "$LOG" | tail -1 | grep -o -E '[0-9]+' || echo 0)
if [ $(( P + F )) -gt 0 ]; then
    awk -v p="$P" -v f="$F" 'BEGIN { printf "yardstick (%s): %d of %d executed tests pass (%.1f%%)\n", "'"$MODE"'", p, p + f, 100 * p / (p + f) }'
fi
echo "log: $LOG"
exit $RC
