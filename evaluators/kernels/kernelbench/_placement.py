"""CUDA placement on a host without CUDA: ``.cuda()``, ``device="cuda"`` and ``is_cuda`` refer
to the CPU (imports torch lazily).

KernelBench task files and solutions are written for a GPU: ``get_inputs()`` often ends in
``.cuda()``, solutions ``assert x.is_cuda`` and allocate with ``device="cuda"``. So that they run
unmodified where there is no GPU:

- :class:`CudaRedirect` (a ``TorchFunctionMode``): a factory call with ``device="cuda"``
  creates its tensor on the target device instead, ``tensor.cuda()`` and ``tensor.to("cuda")``
  go there too. The runner makes every input set under it with the CPU as target (it must never
  initialise CUDA before it forks, GPU host or not; the harness moves inputs to the device
  itself), and measures shapes under it with the ``meta`` device as target.
- :func:`report_cpu_as_cuda`: in the candidate's process on a CPU-only host, ``tensor.is_cuda``
  is True, so a solution's ``assert x.is_cuda`` holds for the CPU tensors the Triton interpreter
  works on. ``tensor.device`` still says ``cpu``.

Neither changes a value; correctness is judged on the outputs as always.
"""

from __future__ import annotations

from typing import Any


def _redirect_class() -> type:
    import torch
    from torch.overrides import TorchFunctionMode

    class CudaRedirect(TorchFunctionMode):
        """Send CUDA placements to ``target`` (``"cpu"``, or ``"meta"`` to measure shapes)."""

        def __init__(self, target: str = "cpu") -> None:
            super().__init__()
            self.target = torch.device(target)

        def _swap(self, value: Any) -> Any:
            if isinstance(value, str | torch.device):
                try:
                    if torch.device(value).type == "cuda":
                        return self.target
                except (RuntimeError, TypeError):
                    return value
            return value

        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None):
            kwargs = dict(kwargs or {})
            if "device" in kwargs:
                kwargs["device"] = self._swap(kwargs["device"])
            if func is torch.Tensor.cuda:
                return args[0].to(self.target)
            if func is torch.Tensor.to:
                args = (args[0], *(self._swap(a) for a in args[1:]))
            return func(*args, **kwargs)

    return CudaRedirect


def cuda_redirect(target: str = "cpu") -> Any:
    """A context manager: CUDA placements go to ``target`` inside it (see the module doc)."""
    return _redirect_class()(target)


def report_cpu_as_cuda() -> None:
    """Make ``tensor.is_cuda`` True in this process (a CPU-only candidate's; irreversible)."""
    import torch

    torch.Tensor.is_cuda = property(lambda self: True)
