#!/usr/bin/env bash
# The measurements behind benchmarks/results-gpu.md, as one command for a lent H100/H200
# (about 8 minutes; each part has its own time limit and writes under $OUT as it goes).
#   bash benchmarks/run_gpu.sh            # on the GPU machine, from the repository root
#   SMOKE=1 bash benchmarks/run_gpu.sh    # the same steps at toy sizes, to check the script on any machine
#   PARTS=2,3 bash benchmarks/run_gpu.sh  # only the parts named (1 recurrences, 2 verify --tune, 3 RNN gap)
set -u
OUT=${OUT:-/tmp/jlf-gpu}
mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1 && ! python3 -c "import libcst" 2>/dev/null; then  # libcst travels as a wheel: the GPU image lacks it
    python3 -m pip install -q --no-index --find-links .whl --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site libcst || exit 1
    export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=$PWD:$PWD/benchmarks${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
if [ -n "${SMOKE:-}" ]; then
    LONG=1000 SHORT=40 GAP=30 REPEATS=3 TUNE_T=12
else
    LONG=10000 SHORT=1000 GAP=1000 REPEATS=20 TUNE_T=256
fi
(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true) >"$OUT/device.txt" 2>&1
python3 -c "import jax, jaxlib; print(jax.__version__, jaxlib.__version__, jax.devices())" >>"$OUT/device.txt" 2>&1

PARTS=${PARTS:-1,2,3}
part() { [[ ",$PARTS," == *",$1,"* ]]; }

# 1. Linear recurrences: loop, scan (unroll 1 and 16) and the associative form, forward and gradient.
part 1 && timeout 360 python3 benchmarks/rewrite_speed.py --models gae,returns,diag_ssm --lengths "$SHORT" \
    --scan-only-lengths "$LONG" --unrolls 1,16 --grad --repeats "$REPEATS" --markdown \
    --jsonl "$OUT/recurrences.jsonl" >"$OUT/recurrences.md" 2>"$OUT/recurrences.log"
echo "recurrences: exit $?"

# 2. What `verify --tune` writes for a GAE on this backend, timed on its longest synthesized inputs.
part 2 && timeout "${TUNE_LIMIT:-75}" python3 -m jaxloopfix verify fixtures/recurrences/forms.py::associative_gae \
    --lengths "5,$TUNE_T" --tune --no-grad >"$OUT/tune.txt" 2>&1
echo "tune: exit $?"

# 3. The nonlinear RNN's remaining gap: unroll beyond 16, hoisted input projection, no stacked outputs.
part 3 && timeout "${GAP_LIMIT:-120}" python3 benchmarks/rnn_gap.py --length "$GAP" --repeats "$REPEATS" >"$OUT/rnn_gap.md" 2>"$OUT/rnn_gap.log"
echo "rnn gap: exit $?"
part 3 && timeout "${GAP_LIMIT:-120}" python3 benchmarks/rnn_gap.py --length "$GAP" --repeats "$REPEATS" --grad >"$OUT/rnn_gap_grad.md" 2>"$OUT/rnn_gap_grad.log"
echo "rnn gap gradient: exit $?"
