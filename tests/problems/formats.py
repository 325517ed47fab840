"""Files in other people's formats, written for these tests (not copied from anywhere):
KernelBench level-1 task files as KernelBench lays them out, a GPU-style Triton solution, and
an OpenEvolve problem folder."""

from __future__ import annotations

import textwrap
from pathlib import Path

# KernelBench level 1, the layout of its files: Model, module-level sizes, get_inputs() and
# get_init_inputs(); full sizes, made for a GPU (a 4096 x 393216 float32 input is 6 GiB).
RELU = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs a ReLU activation.
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies ReLU activation to the input tensor.
        """
        return torch.relu(x)

batch_size = 4096
dim = 393216

def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]

def get_init_inputs():
    return []  # No special initialization inputs needed
'''

SOFTMAX = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs a Softmax activation.
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies Softmax activation to the input tensor.
        """
        return torch.softmax(x, dim=1)

batch_size = 4096
dim = 393216

def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]

def get_init_inputs():
    return []  # No special initialization inputs needed
'''

SUM_REDUCTION = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs sum reduction over a specified dimension.
    """
    def __init__(self, dim: int):
        """
        Initializes the model with the dimension to reduce over.
        """
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies sum reduction over the specified dimension.
        """
        return torch.sum(x, dim=self.dim, keepdim=True)

batch_size = 128
dim1 = 4096
dim2 = 4095
reduce_dim = 1

def get_inputs():
    x = torch.rand(batch_size, dim1, dim2)
    return [x]

def get_init_inputs():
    return [reduce_dim]
'''

LEVEL1 = {
    "19_ReLU.py": RELU,
    "23_Softmax.py": SOFTMAX,
    "47_Sum_reduction_over_a_dimension.py": SUM_REDUCTION,
}

# A task written for a GPU, as KernelBench's prompt examples are: its inputs go to the device.
ADD_ON_CUDA = """
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, a, b):
        return a + b

def get_inputs():
    a = torch.randn(1, 128).cuda()
    b = torch.randn(1, 128).cuda()
    return [a, b]

def get_init_inputs():
    return []
"""

# A Triton solution as written for a GPU: no EVOLVE-BLOCK markers, asserts CUDA inputs,
# allocates on the inputs' device.
ADD_TRITON_SOLUTION = """
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def triton_add(x: torch.Tensor, y: torch.Tensor):
    assert x.is_cuda and y.is_cuda, "Tensors must be on CUDA."
    x = x.contiguous()
    y = y.contiguous()
    out = torch.empty_like(x, device="cuda")
    n_elements = x.numel()
    grid = lambda meta: ((n_elements + meta["BLOCK_SIZE"] - 1) // meta["BLOCK_SIZE"],)
    add_kernel[grid](x, y, out, n_elements, BLOCK_SIZE=128)
    return out


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, a, b):
        return triton_add(a, b)
"""


def write_level1(folder: Path) -> Path:
    """The three level-1 tasks above in ``folder`` (a KernelBench-style ``level1``)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in LEVEL1.items():
        (folder / name).write_text(textwrap.dedent(text).lstrip())
    return folder


# --- an OpenEvolve problem folder ----------------------------------------------------------

INITIAL_PROGRAM = '''
"""Find the minimum of a bumpy function of two variables by random search."""
import numpy as np


# EVOLVE-BLOCK-START
def search(iterations=200, bounds=(-4.0, 4.0)):
    rng = np.random.default_rng(1)
    best = rng.uniform(*bounds, size=2)
    best_value = objective(*best)
    for _ in range(iterations):
        candidate = rng.uniform(*bounds, size=2)
        value = objective(*candidate)
        if value < best_value:
            best, best_value = candidate, value
    return float(best[0]), float(best[1]), float(best_value)
# EVOLVE-BLOCK-END


def objective(x, y):
    return np.sin(x) * np.cos(y) + np.sin(x * y) + (x**2 + y**2) / 20


def run_search():
    return search()
'''

# Written as OpenEvolve evaluators are: EvaluationResult from openevolve, the program loaded
# from its path and run several times, a cascade, artifacts.
EVALUATOR = '''
"""Scores a minimiser by running it several times from its file."""
import importlib.util
import time

import numpy as np
from openevolve.evaluation_result import EvaluationResult

TARGET = -1.5187


def _load(program_path):
    spec = importlib.util.spec_from_file_location("candidate_program", program_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _trials(program_path, count):
    module = _load(program_path)
    values, seconds = [], []
    for _ in range(count):
        start = time.time()
        x, y, value = module.run_search()
        seconds.append(time.time() - start)
        values.append(float(value))
    return values, seconds


def evaluate_stage1(program_path):
    values, _ = _trials(program_path, 1)
    return {"runs": 1.0, "value_score": 1.0 / (1.0 + abs(values[0] - TARGET))}


def evaluate(program_path):
    values, seconds = _trials(program_path, 10)
    value_score = 1.0 / (1.0 + abs(float(np.mean(values)) - TARGET))
    speed_score = min(1.0, 0.05 / max(float(np.mean(seconds)), 1e-6))
    return EvaluationResult(
        metrics={
            "value_score": value_score,
            "speed_score": speed_score,
            "combined_score": 0.9 * value_score + 0.1 * speed_score,
        },
        artifacts={"values": ", ".join(f"{v:.4f}" for v in values)},
    )


def evaluate_stage2(program_path):
    return evaluate(program_path)
'''

LITERAL_KEY = "sk-literal-key-that-must-never-be-stored"
CONFIG = f"""
max_iterations: 40
checkpoint_interval: 10
log_level: "INFO"
random_seed: 7
llm:
  primary_model: "llama3.1-8b"
  primary_model_weight: 0.8
  secondary_model: "llama-4-scout"
  secondary_model_weight: 0.2
  api_base: "https://llm.example.invalid/v1"
  api_key: "{LITERAL_KEY}"
  temperature: 0.7
  top_p: 0.95
  max_tokens: 4096
prompt:
  system_message: "You improve a function minimiser; it costs $0 to try."
  num_top_programs: 3
  use_template_stochasticity: true
database:
  population_size: 50
  archive_size: 20
  num_islands: 3
  elite_selection_ratio: 0.2
  exploitation_ratio: 0.7
evaluator:
  timeout: 60
  cascade_evaluation: true
  cascade_thresholds: [0.5, 0.75]
  parallel_evaluations: 2
  use_llm_feedback: false
diff_based_evolution: true
allow_full_rewrites: false
"""


def write_openevolve(folder: Path, *, config: str | None = CONFIG, **files: str) -> Path:
    """An OpenEvolve folder: ``initial_program.py``, ``evaluator.py``, ``config.yaml``, plus
    ``files`` (name -> text; a text replaces the default of the same name)."""
    folder.mkdir(parents=True, exist_ok=True)
    texts = {"initial_program.py": INITIAL_PROGRAM, "evaluator.py": EVALUATOR, **files}
    if config is not None:
        texts.setdefault("config.yaml", config)
    for name, text in texts.items():
        (folder / name).write_text(textwrap.dedent(text).lstrip())
    return folder
