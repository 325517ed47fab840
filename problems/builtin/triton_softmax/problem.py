"""Row-wise softmax as a Triton kernel (a KernelBench-format task), faster than PyTorch's.

The task (``task.py``) is KernelBench's: ``Model`` is ``torch.softmax(x, dim=-1)`` on a
4096 x 4093 float32 matrix; candidates define ``ModelNew`` with a Triton kernel (``seed.py``).

On a CUDA GPU the ``triton`` evaluator checks each candidate on 5 hidden-seed inputs and
times it against eager PyTorch and ``torch.compile`` (CUDA events, L2 flushed, interleaved):
the run maximises ``speedup_vs_eager``. Without a GPU, candidates run in the Triton
interpreter on reduced shapes (``get_inputs_small``): correctness only, the speedups are
unmeasurable, and the run is correctness-only (every correct program scores ``passed = 1``;
an error within tolerance is a pass, never a score: ``max_abs_error`` stays a metric). Every
program stored gets a verdict: ok, incorrect (with the reason: wrong values, out-of-bounds
access, modified inputs, precision below float32, ...), or the error it raised.
"""

name = "triton_softmax"
evaluator = "triton"
objectives = {"speedup_vs_eager": "maximize", "speedup_vs_compile": "maximize"}
timeout_s = 120  # per candidate in the interpreter (the GPU default is gpu_timeout_s)
memory_mb = 4096  # address space of the CPU-interpreter candidate (torch and triton loaded)
preload = []
seed_file = "seed.py"
options = {
    "task_file": "task.py",
    "trials": 5,
    "small_inputs": "get_inputs_small",
}


def evaluate(metrics):
    """The evaluator's measurements are this problem's metrics, unchanged."""
    return metrics
