"""The shrink rule on task files of every shape pattern KernelBench uses (our own corpus in
``kernelbench_corpus/``): sizes as expressions, tuples, unpacked and chained assignments and
literals, 4-D and 5-D inputs, convolutions and poolings whose kernel, stride, padding and
dilation bound the spatial sizes, group counts that must keep dividing channels."""

from __future__ import annotations

import ast
import asyncio
import sys
import textwrap
import types
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from evoforge.evaluators.kernels.kernelbench._sizes import find_sizes, rewrite
from tests.evaluators.kernel_helpers import NO_GPU, needs_torch

CORPUS = Path(__file__).resolve().parent / "kernelbench_corpus"
TASKS = sorted(p for p in CORPUS.glob("*.py") if not p.name.startswith("_"))


def _load(path):
    from evoforge.evaluators.kernels.kernelbench._harness import load_task

    return load_task(path)


def _shrink(path):
    from evoforge.evaluators.kernels.kernelbench._shrink import shrink_task

    shrunk = shrink_task(path, _load(path))
    assert shrunk is not None, f"{path.name} has GPU-sized shapes: it must be shrunk"
    return shrunk


def _run(module):
    """The task's Model on real CPU tensors of the shrunk shapes."""
    import torch

    torch.manual_seed(0)
    inputs = module.get_inputs()
    return inputs, module.Model(*module.get_init_inputs())(*inputs)


# --- the sizes a task file declares (pure ast) -----------------------------------------------


def test_every_written_form_of_a_size_is_found_and_the_rest_left_alone():
    tree = ast.parse(
        textwrap.dedent(
            """
            import torch
            batch_size = 16
            N = 2048 * 2
            height = width = 128
            D, H, W = 16, 32, 32
            input_shape = (32768,)
            kernel_size = (3, 5)
            stride = 2
            out_channels = 64
            dim = N // 2
            bias_shape = (out_channels, 1, 1)
            image = (batch_size, 3, 256)
            scale = 0.5
            flag = True

            def get_inputs():
                x = torch.rand(batch_size, 3, D, H, W)
                return [x, torch.rand(height, width, 224), torch.rand(image)]
            """
        )
    )
    sizes = {s.label: (s.full, s.shapes_input) for s in find_sizes(tree)}
    assert sizes == {
        "batch_size": (16, True),
        "N": (4096, False),  # only large constants that no input uses
        "height/width": (128, True),
        "D": (16, True),
        "H": (32, True),
        "W": (32, True),
        "input_shape[0]": (32768, False),
        "out_channels": (64, False),
        "image literal #1": (256, True),  # inside a derived constant get_inputs uses
        "get_inputs literal #1": (224, True),  # the 3 channels stay as written
    }
    found = {s.label: s for s in find_sizes(tree)}
    values = {found["N"]: 64, found["H"]: 8, found["input_shape[0]"]: 4, found["height/width"]: 2}
    values[found["image literal #1"]] = 16
    namespace: dict = {}
    # Only the module-level sizes are checked (get_inputs is not called): a stand-in torch
    # keeps this pure-ast test runnable without torch (the minimum-versions venv has none).
    with mock.patch.dict(sys.modules, {"torch": types.ModuleType("torch")}):
        exec(compile(rewrite(tree, values), "t", "exec"), namespace)
    assert (namespace["N"], namespace["dim"]) == (64, 32)  # derived: recomputed
    assert (namespace["D"], namespace["H"], namespace["W"]) == (16, 8, 32)
    assert namespace["input_shape"] == (4,) and namespace["kernel_size"] == (3, 5)
    assert namespace["height"] == namespace["width"] == 2
    assert namespace["bias_shape"] == (64, 1, 1) and namespace["flag"] is True
    assert namespace["image"] == (16, 3, 16)  # batch_size 16 from its own assignment


# --- the corpus -----------------------------------------------------------------------------


@needs_torch
@pytest.mark.parametrize("task", TASKS, ids=lambda p: p.stem)
def test_each_corpus_task_is_shrunk_into_the_budget_and_its_model_runs(task):
    from evoforge.evaluators.kernels.kernelbench._shrink import MAX_ELEMENTS, MAX_TOTAL, measure

    original = _load(task)
    shrunk = _shrink(task)
    largest, total = measure(shrunk.module)
    assert largest <= MAX_ELEMENTS and total <= MAX_TOTAL
    assert "checked on the meta device" in shrunk.note
    _run(shrunk.module)  # for real, on the CPU: the meta device's verdict holds
    for name in ("kernel_size", "stride", "padding", "output_padding", "dilation", "groups"):
        if hasattr(original, name):
            assert getattr(shrunk.module, name) == getattr(original, name), name
    changed = [label for label, (full, now) in shrunk.sizes.items() if now < full]
    assert changed


@needs_torch
def test_expression_sizes_shrink_a_matmul_with_a_huge_k():
    shrunk = _shrink(CORPUS / "matmul_large_k.py")
    assert shrunk.sizes == {"M": (256, 128), "N": (256, 128), "K": (524288, 128)}


@needs_torch
def test_a_derived_size_follows_the_size_it_is_derived_from():
    module = _shrink(CORPUS / "derived_sizes.py").module
    assert module.dim == module.batch // 2 and module.batch < 4096
    assert module.scale == 0.5


@needs_torch
def test_a_size_in_a_tuple_is_shrunk_inside_the_tuple():
    shrunk = _shrink(CORPUS / "tuple_scan.py")
    assert shrunk.module.input_shape == (128,) and shrunk.module.dim == 1
    assert shrunk.sizes["input_shape[0]"] == (32768, 128)


@needs_torch
def test_a_4d_norm_reaches_the_budget_with_its_groups_still_dividing():
    module = _shrink(CORPUS / "groupnorm_4d.py").module
    (x,), _ = _run(module)
    assert x.numel() <= 16_384 and x.dim() == 4
    assert module.num_groups == 8 and module.features % module.num_groups == 0
    assert min(x.shape) >= 2


@needs_torch
def test_a_5d_conv_and_dilated_pool_keep_every_output_dimension():
    shrunk = _shrink(CORPUS / "conv3d_pool3d.py")
    (x,), out = _run(shrunk.module)
    assert x.numel() <= 16_384 and x.shape[1] == 3  # 3 input channels: not a size
    assert all(d >= 2 for d in out.shape)  # the pooling still has positions to get wrong
    assert "would shrink from" in " ".join(shrunk.stopped.values())
    assert shrunk.sizes["batch_size"][1] <= 8


@needs_torch
def test_a_strided_grouped_transposed_conv_keeps_its_parameters_valid():
    shrunk = _shrink(CORPUS / "conv_transpose2d_strided.py")
    module = shrunk.module
    assert module.height == module.width and "height/width" in shrunk.sizes
    assert module.in_channels % module.groups == 0 and module.out_channels % module.groups == 0
    (x,), out = _run(module)
    assert out.shape[2] == (x.shape[2] - 1) * 2 - 2 + 3 + 1  # output_padding still applies


@needs_torch
def test_a_dilated_conv_stops_where_the_dilated_kernel_needs_it_and_says_so():
    shrunk = _shrink(CORPUS / "conv1d_dilated.py")
    length = shrunk.module.length
    assert length >= 9 * (5 - 1) + 1 and length < 131072
    assert shrunk.stopped["length"].startswith(f"length stays at {length}:")
    assert "Kernel size" in shrunk.stopped["length"]


@needs_torch
def test_a_reduction_keeps_its_axis_and_something_to_reduce():
    module = _shrink(CORPUS / "argmax_reduction.py").module
    assert module.reduce_dim == 1 and module.dim1 >= 2
    (x,), out = _run(module)
    assert out.shape == (x.shape[0], x.shape[2])


@needs_torch
def test_a_fused_level2_task_recomputes_its_bias_shape_from_the_shrunk_channels():
    module = _shrink(CORPUS / "fused_conv_gemm.py").module
    assert module.bias_shape == (module.out_channels, 1, 1)
    assert module.out_channels % module.num_groups == 0 and module.hidden < 4096
    _run(module)


@needs_torch
def test_literal_sizes_inside_get_inputs_are_shrunk_and_small_literals_kept():
    shrunk = _shrink(CORPUS / "literal_shapes.py")
    (x,), out = _run(shrunk.module)
    assert x.shape[1] == 3 and 11 <= x.shape[2] < 224
    assert min(out.shape) >= 2


@needs_torch
def test_sizes_that_must_stay_equal_are_halved_together():
    shrunk = _shrink(CORPUS / "matched_sizes.py")
    assert shrunk.sizes["batch_size"][1] == shrunk.sizes["input_shape[0]"][1] < 32768
    assert not shrunk.stopped


@needs_torch
def test_parameters_the_rule_cannot_shrink_do_not_stop_a_task_whose_inputs_fit():
    from evoforge.evaluators.kernels.kernelbench._shrink import MAX_ELEMENTS, measure

    shrunk = _shrink(CORPUS / "fixed_width_mlp.py")
    assert measure(shrunk.module)[0] <= MAX_ELEMENTS
    assert shrunk.module.input_shape == (64, 224)  # the layer fixes the width: batch only
    assert "224 X" not in shrunk.note and "input_shape literal #1" in shrunk.stopped
    assert "over the budget as small as it goes" in shrunk.note
    assert "parameters" in shrunk.note
    _run(shrunk.module)


# --- any convolution or pooling configuration -----------------------------------------------

_CONV_TASK = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cin, cout, k, s, p, d, g):
        super().__init__()
        self.op = nn.{op}(cin, cout, k, stride=s, padding=p, dilation=d, groups=g)

    def forward(self, x):
        return self.op(x)


batch_size = {batch}
cin = {cin}
cout = {cout}
k, s, p, d, g = {k}, {s}, {p}, {d}, {g}
{spatial_names} = {spatial}


def get_inputs():
    return [torch.rand(batch_size, cin, {spatial_names})]


def get_init_inputs():
    return [cin, cout, k, s, p, d, g]
"""


@needs_torch
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    dims=st.integers(1, 3),
    transposed=st.booleans(),
    k=st.integers(1, 7),
    s=st.integers(1, 3),
    d=st.integers(1, 3),
    g=st.sampled_from([1, 2, 4]),
    padded=st.booleans(),
    batch=st.integers(1, 256),
    channels=st.sampled_from([32, 64, 128]),
    extent=st.integers(64, 4096),
)
def test_any_valid_convolution_is_shrunk_to_a_valid_one_within_the_budget(
    tmp_path, dims, transposed, k, s, d, g, padded, batch, channels, extent
):
    from evoforge.evaluators.kernels.kernelbench._shrink import (
        MAX_ELEMENTS,
        ShrinkError,
        _run_on_meta,
        measure,
        shrink_task,
    )

    p = (k - 1) * d // 2 if padded else 0  # unpadded: the input must cover the kernel
    names = ", ".join(["x1", "x2", "x3"][:dims])
    spatial = ", ".join(str(max(32, extent >> i)) for i in range(dims))
    op = f"Conv{'Transpose' if transposed else ''}{dims}d"
    source = _CONV_TASK.format(
        op=op, batch=batch, cin=channels, cout=channels, k=k, s=s, p=p, d=d, g=g,
        spatial_names=names, spatial=spatial,
    )  # fmt: skip
    task = tmp_path / f"{op}_{k}_{s}_{d}_{g}_{batch}_{extent}.py"
    task.write_text(source)
    try:
        shrunk = shrink_task(task, _load(task))
    except ShrinkError as refused:  # only where even the floors are over the budget: say why
        assert "stays at" in str(refused) or "floor" in str(refused)
        return
    if shrunk is None:  # it fits as written
        assert measure(_load(task))[0] <= MAX_ELEMENTS
        return
    assert measure(shrunk.module)[0] <= MAX_ELEMENTS
    assert (shrunk.module.k, shrunk.module.s, shrunk.module.d) == (k, s, d)
    _, out = _run(shrunk.module)  # valid for real, not only on the meta device
    (full,) = _run_on_meta(_load(task)).shapes
    assert all(n >= 2 for n, m in zip(out.shape, full, strict=True) if m >= 2)


# --- end to end: the untouched seed judged correct on this CPU ------------------------------


@needs_torch
@pytest.mark.slow
@pytest.mark.skipif(not NO_GPU, reason="checks the CPU path; a GPU runs the full shapes")
def test_every_corpus_seed_is_judged_correct_by_the_triton_evaluator(tmp_path, monkeypatch):
    from evoforge.evaluators import Status
    from evoforge.evaluators.kernels.kernelbench._triton import TritonEvaluator
    from evoforge.evolve import measurable_problem, resolve

    monkeypatch.setenv("EVOFORGE_CACHE", str(tmp_path / "cache"))

    async def judge(task):
        (problem,) = resolve(str(task), target="triton").problems
        measurable, _ = measurable_problem(problem, TritonEvaluator)
        async with TritonEvaluator(measurable, workers=1) as evaluator:
            return await evaluator.evaluate(problem.seed_source)

    for task in TASKS:
        result = asyncio.run(judge(task))
        assert result.status is Status.OK, (task.name, result.artifacts)
        assert "shrunk for the Triton interpreter" in result.metrics["inputs"], task.name


# --- a later runner of the same task reuses the sizes ---------------------------------------


@needs_torch
def test_a_record_of_the_sizes_is_applied_without_a_search(monkeypatch):
    from evoforge.evaluators.kernels.kernelbench import _shrink as rule

    task = CORPUS / "conv3d_pool3d.py"
    first = _shrink(task)
    record = first.record
    assert record["sizes"] == {label: new for label, (_, new) in first.sizes.items()}

    def no_search(self):
        raise AssertionError("searched although the record applies")

    monkeypatch.setattr(rule._Search, "run", no_search)
    again = rule.shrink_task(task, _load(task), record)
    assert again.sizes == first.sizes and again.note == first.note
    assert again.stopped == first.stopped and again.record == record


@needs_torch
@pytest.mark.parametrize(
    "tamper",
    [
        lambda r: {**r, "sha256": "0" * 64},  # another version of the task file
        lambda r: {**r, "sizes": {**r["sizes"], "D": 16, "H": 64, "W": 64}},  # over budget
        lambda r: {**r, "sizes": {"batch_size": 1}},  # not this task's sizes
        lambda r: {**r, "sizes": {**r["sizes"], "D": True}},  # not a size
        lambda r: {**r, "sizes": {**r["sizes"], "D": 10**9}},  # above the task's own
    ],
    ids=["hash", "budget", "labels", "bool", "larger"],
)
def test_a_record_that_does_not_fit_the_task_is_ignored(tamper):
    task = CORPUS / "conv3d_pool3d.py"
    first = _shrink(task)
    from evoforge.evaluators.kernels.kernelbench._shrink import shrink_task

    again = shrink_task(task, _load(task), tamper(first.record))
    assert again.sizes == first.sizes  # searched afresh, same rule, same result


@needs_torch
@pytest.mark.skipif(not NO_GPU, reason="checks the CPU path; a GPU runs the full shapes")
def test_the_evaluator_hands_the_runner_s_sizes_to_the_next_runner(tmp_path, monkeypatch):
    from evoforge.evaluators import Status
    from evoforge.evaluators.kernels.kernelbench._triton import TritonEvaluator
    from evoforge.evolve import measurable_problem, resolve

    monkeypatch.setenv("EVOFORGE_CACHE", str(tmp_path / "cache"))
    (problem,) = resolve(str(CORPUS / "groupnorm_4d.py"), target="triton").problems
    measurable, _ = measurable_problem(problem, TritonEvaluator)

    async def twice():
        async with TritonEvaluator(measurable, workers=1) as evaluator:
            first = await evaluator.evaluate(problem.seed_source)
            record = evaluator._shrunk
            assert record is not None
            # marked, so that the second runner's note shows it applied the record
            evaluator._shrunk = {**record, "checked": "checked on the meta device (reused)"}
            second = await evaluator.evaluate(problem.seed_source)
            return first, record, second

    first, record, second = asyncio.run(twice())
    assert first.status is Status.OK and second.status is Status.OK, second.artifacts
    assert record["sizes"]["features"] == 8
    assert "(reused)" in second.metrics["inputs"] and "(reused)" not in first.metrics["inputs"]
    assert second.metrics["shapes"][0] == first.metrics["shapes"][0]
