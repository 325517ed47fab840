#!/bin/bash
# The GPU checks, as one command for a lent GPU machine (the device tool's `run`), which has
# torch, triton and pytest but not evoforge's other dependencies and no network.
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
#
# Each step has its own time limit and writes its own file under $OUT, so a step cut short
# loses only itself. GPU_CHECK_S (default 480) is the time for the test files together.
export PYTHONUNBUFFERED=1 LITELLM_LOCAL_MODEL_COST_MAP=True
OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
start=$(date +%s)
left() { echo $((${GPU_CHECK_S:-480} - ($(date +%s) - start))); }
nvidia-smi -L
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 3
export PYTHONPATH=/tmp/site:$PWD/src
timeout 120 python3 bench/cuda_sandbox_probe.py 2>&1 | tee "$OUT/probe.txt"
# Cheapest first: the CUDA extension build (test_cuda) takes minutes.
for file in test_anticheat test_triton test_adapted_kernelbench test_kernelbench test_cuda; do
    budget=$(left)
    [ "$budget" -gt 30 ] || { echo "$file: no time left" | tee -a "$OUT/summary.txt"; continue; }
    timeout "$budget" python3 -m pytest -m gpu -p no:cacheprovider -rA --tb=short -q \
        "tests/evaluators/$file.py" > "$OUT/$file.txt" 2>&1
    echo "$file: exit $? after $(( $(date +%s) - start )) s: $(tail -1 "$OUT/$file.txt")" \
        | tee -a "$OUT/summary.txt"
done
