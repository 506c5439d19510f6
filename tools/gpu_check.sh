#!/usr/bin/env bash
# GPU check: on a machine with CUDA, run the tests that need CUDA and a small GPU training
# sweep (configs/gpu_check.toml), and keep what was seen in one folder, $OUT (default
# gpu_check_out/): nvidia-smi, torch's view of the device, the pytest output, the result
# JSONs of the sweep and the timings. Where CUDA is absent it stops at once, exit code 3.
#
#   bash tools/gpu_check.sh            # from the repository root, with .venv set up
#   OUT=/tmp/gpu bash tools/gpu_check.sh
#
# The corpus must be prepared (python -m resdecay_lib prepare-corpus): runs never fetch it.
set -u
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY="$(command -v python3)"
OUT="${OUT:-gpu_check_out}"

if ! "$PY" -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    echo "gpu_check: CUDA is not available here (torch.cuda.is_available() is False with $PY);" \
         "run it on a machine with an NVIDIA GPU and a CUDA build of torch" >&2
    exit 3
fi
mkdir -p "$OUT"
status=0
stamp() { date +%s%N; }
secs() { awk "BEGIN { printf \"%.1f\", ($2 - $1) / 1e9 }"; }

{ nvidia-smi || echo "nvidia-smi failed (exit $?)"; } > "$OUT/nvidia-smi.txt" 2>&1
"$PY" - > "$OUT/torch.txt" 2>&1 <<'PYEOF'
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())
for i in range(torch.cuda.device_count()):
    p = torch.cuda.get_device_properties(i)
    print(f"device {i}: {p.name}, {p.total_memory / 2**30:.1f} GiB, capability {p.major}.{p.minor}")
PYEOF

# 1. the tests that skip without CUDA (-rs lists any that still skipped, and why)
t0=$(stamp)
"$PY" -m pytest -q -rs -p no:cacheprovider -k "cuda or gpu" tests > "$OUT/pytest_cuda.txt" 2>&1
rc=$?
t1=$(stamp)
echo "pytest -k 'cuda or gpu': exit $rc, $(secs "$t0" "$t1") s" | tee -a "$OUT/timing.txt"
[ $rc -eq 0 ] || status=1
if grep -q "no tests ran\|deselected" "$OUT/pytest_cuda.txt" && ! grep -q "passed" "$OUT/pytest_cuda.txt"; then
    echo "gpu_check: no CUDA test ran" | tee -a "$OUT/timing.txt"; status=1
fi

# 2. one small GPU sweep, stored under $OUT/sweep (resumable: a rerun skips what is done)
t0=$(stamp)
RESDECAY_CACHE="${RESDECAY_CACHE:-$HOME/.cache/resdecay}" \
    "$PY" -m resdecay_lib sweep configs/gpu_check.toml --root "$OUT/sweep" --workers 1 \
    > "$OUT/sweep_log.txt" 2>&1
rc=$?
t1=$(stamp)
echo "sweep configs/gpu_check.toml: exit $rc, $(secs "$t0" "$t1") s" | tee -a "$OUT/timing.txt"
[ $rc -eq 0 ] || status=1
"$PY" - "$OUT/sweep/gpu_check" >> "$OUT/timing.txt" 2>&1 <<'PYEOF'
import json, sys
from pathlib import Path
files = sorted(Path(sys.argv[1]).glob("*.json"))
print(f"{len(files)} result files")
for p in files:
    r = json.loads(p.read_text())
    final = (r.get("final") or {}).get("val_loss", {}).get("mean")
    print(f"  {p.name}: status {r['status']}, device {r.get('device')}, wall {r.get('wall_time_s')} s, "
          f"final val loss {final}")
sys.exit(0 if len(files) == 4 and all(json.loads(p.read_text())["status"] == "ok" for p in files) else 1)
PYEOF
[ $? -eq 0 ] || status=1

echo "gpu_check: $( [ $status -eq 0 ] && echo passed || echo FAILED ); everything is in $OUT/"
exit $status
