#!/bin/bash
# The GPU checks, as one command for a lent GPU machine (the device tool's `run`), which has
# torch, triton and pytest but not evoforge's other dependencies and no network; and, with
# --cpu, the same steps on a CPU (the Triton interpreter, torch's CPU build), which CI runs so
# the script cannot rot between devices.
#
# Here, once (wheels for that machine's Python 3.12; .whl/ is ignored by git):
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
#     --platform manylinux2014_x86_64 -d .whl litellm==1.106.12 pydantic pydantic-core \
#     annotated-types typing-inspection typing-extensions sqlite-utils sqlite-fts4 \
#     click-default-group tree-sitter tree-sitter-python tree-sitter-c tree-sitter-cpp \
#     openai jiter distro sniffio jsonschema jsonschema-specifications referencing rpds-py \
#     python-dotenv importlib-metadata fastuuid pydantic-settings
# (pydantic and pydantic-core must be a matching pair: pin both if pip picks others).
# Then: run(command="bash bench/gpu_check.sh", carry=[".whl"], timeout_s=560).
# On a CPU, in evoforge's own environment: bash bench/gpu_check.sh --cpu
#
# Steps, each under its own time limit and writing its own files under $OUT (default: a new
# temporary folder), so a step cut short loses only itself:
#   probe.txt           the CUDA sandbox probe (GPU only)
#   <test file>.txt     each GPU test file, -rA (on a CPU: its GPU tests collected, not run)
#   suite.md/.jsonl     an offline evolution run on kernel_suite --target triton
#   kernelbench.md/...  the same on three KernelBench level-1 tasks (both targets on a GPU)
#   summary.txt         one line per step: exit status, seconds so far
# GPU_CHECK_S is the whole script's time (default 480 s on a GPU, 900 s with --cpu); each
# step has its own limit besides; the exit status is 1 when a step failed or was skipped.
# GPU_CHECK_BUDGET (default 2) is the evaluations per task, the seed's included;
# GPU_CHECK_TASKS how many kernel_suite tasks (default 9 on a GPU, 2 with --cpu).
export PYTHONUNBUFFERED=1 LITELLM_LOCAL_MODEL_COST_MAP=True
cpu=0
[ "${1:-}" = "--cpu" ] && cpu=1
OUT=${OUT:-$(mktemp -d /tmp/gpu-check-XXXXXX)}
mkdir -p "$OUT"
echo "reports in $OUT"
start=$(date +%s)
total=${GPU_CHECK_S:-480}
failed=0
left() { echo $((total - ($(date +%s) - start))); }
# step NAME LIMIT COMMAND...: run COMMAND under min(LIMIT, time left), output to $OUT/NAME.txt
step() {
    local name=$1 limit=$2
    shift 2
    local budget
    budget=$(left)
    [ "$limit" -lt "$budget" ] && budget=$limit
    if [ "$budget" -le 20 ]; then
        echo "$name: skipped, no time left" | tee -a "$OUT/summary.txt"
        failed=1
        return
    fi
    timeout "$budget" "$@" > "$OUT/$name.txt" 2>&1
    local code=$?
    [ $code -eq 0 ] || failed=1
    echo "$name: exit $code after $(( $(date +%s) - start )) s (limit $budget s): $(tail -1 "$OUT/$name.txt")" \
        | tee -a "$OUT/summary.txt"
}

if [ $cpu = 1 ]; then
    python=python
    total=${GPU_CHECK_S:-900}
    budget=${GPU_CHECK_BUDGET:-2}
    suite_tasks=${GPU_CHECK_TASKS:-2}
    targets=triton
    evolve_s=400  # per evolution step: the trusted baseline compiles C++ on the CPU
    collect=--collect-only  # the GPU tests still import and collect here
else
    nvidia-smi -L
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 3
    export PYTHONPATH=/tmp/site:$PWD/src
    python=python3
    budget=${GPU_CHECK_BUDGET:-2}
    suite_tasks=${GPU_CHECK_TASKS:-9}
    targets=triton,cuda
    evolve_s=150
    collect="-rA --tb=short"
    step probe 60 $python bench/cuda_sandbox_probe.py
fi
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD
tests() {  # tests FILE LIMIT [MARKERS]: its tests marked gpu, or those MARKERS selects
    step "$1" "$2" $python -m pytest -m "${3:-gpu}" $collect -p no:cacheprovider -q \
        "tests/evaluators/$1.py"
}
# Cheapest and most telling first; the CUDA extension build (test_cuda) takes minutes.
tests test_anticheat 60
tests test_triton 60
step kernelbench $evolve_s $python bench/gpu_check.py kernelbench --out "$OUT" --budget $budget \
    --targets $targets $([ $cpu = 1 ] && echo --cpu)
step suite $evolve_s $python bench/gpu_check.py suite --out "$OUT" --budget $budget \
    --tasks $suite_tasks $([ $cpu = 1 ] && echo --cpu)
tests test_adapted_kernelbench 120
tests test_kernelbench 90 "not slow"  # no gpu marks: on a GPU every test times on it
tests test_cuda 240
cat "$OUT"/kernelbench.md "$OUT"/suite.md 2>/dev/null
exit $failed
