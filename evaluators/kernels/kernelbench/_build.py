"""Building a candidate's CUDA C++ (``torch.utils.cpp_extension.load_inline``), in its sandbox.

:class:`BuildHooks` replaces ``load_inline`` and ``load`` in the candidate's process before its
code runs, so every build is timed and a failing build becomes ``compile_error`` with the
compiler's output as an artifact (:class:`CompileFailed`).

Where there is no GPU (or torch is a CPU build, which has no CUDA toolchain support) but
``nvcc`` is present, builds are *compile-only*: the CUDA sources go through ``nvcc -cubin``
for one architecture (:data:`COMPILE_ONLY_ARCH`: the front end checks host and device code,
ptxas assembles the device code; the host compiler's own pass is skipped) and the C++ sources
(with the generated pybind11 module) through ``c++ -fsyntax-only``, with the flags and
implicit headers ``load_inline`` would use; nothing is linked or loaded. The module
the candidate gets back raises :class:`NotRun` when one of its functions is called, and the
evaluation says "compiled; not run: no CUDA GPU".

The evaluator process uses :func:`find_nvcc` without importing torch.
"""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
import sysconfig
import time
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

NOT_RUN = "compiled; not run: no CUDA GPU"
COMPILE_ONLY_ARCH = "sm_90"
"""The architecture compile-only builds target (Hopper: H100, H200)."""
_NVCC_FLAGS = (
    "-D__CUDA_NO_HALF_OPERATORS__",
    "-D__CUDA_NO_HALF_CONVERSIONS__",
    "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
    "-D__CUDA_NO_HALF2_OPERATORS__",
    "--expt-relaxed-constexpr",
)
_OUTPUT_TAIL = 6000


class CompileFailed(Exception):  # noqa: N818 - a verdict about the candidate
    """The candidate's C++/CUDA did not compile; ``output`` is what the compiler said."""

    def __init__(self, message: str, output: str) -> None:
        super().__init__(message)
        self.output = output


class NotRun(RuntimeError):
    """A compile-only build's function was called: there is no GPU to run it on."""


def find_nvcc() -> str | None:
    """The nvcc to use: ``$CUDA_HOME/bin/nvcc`` when set, else the one on ``PATH``."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home and os.access(os.path.join(home, "bin", "nvcc"), os.X_OK):
        return os.path.join(home, "bin", "nvcc")
    return shutil.which("nvcc")


class BuildHooks:
    """Wraps the candidate's extension builds; :attr:`builds` records each one.

    Args:
        compile_only: check that the sources compile instead of building and loading them.
        workdir: where compile-only builds write their files (the sandbox's directory).
    """

    def __init__(self, *, compile_only: bool, workdir: str) -> None:
        self.compile_only = compile_only
        self.workdir = workdir
        self.builds: list[dict[str, Any]] = []

    def install(self) -> BuildHooks:
        import torch.utils.cpp_extension as ext

        original_inline, original_load = ext.load_inline, ext.load
        hooks = self

        def load_inline(*args: Any, **kwargs: Any) -> Any:
            bound = inspect.signature(original_inline).bind(*args, **kwargs)
            bound.apply_defaults()
            if hooks.compile_only:
                return hooks._compile_inline(bound.arguments)
            return hooks._build(original_inline, bound.arguments)

        def load(*args: Any, **kwargs: Any) -> Any:
            bound = inspect.signature(original_load).bind(*args, **kwargs)
            bound.apply_defaults()
            if hooks.compile_only:
                return hooks._compile_files(bound.arguments)
            return hooks._build(original_load, bound.arguments)

        ext.load_inline, ext.load = load_inline, load
        return self

    # -----------------------------------------------------------------------------------------

    def _build(self, function: Any, arguments: dict[str, Any]) -> Any:
        arguments["verbose"] = False  # the compiler output then lands in the exception
        start = time.perf_counter()
        try:
            module = function(**arguments)
        except Exception as exc:
            raise CompileFailed(
                f"building extension {arguments.get('name')!r} failed", str(exc)[-_OUTPUT_TAIL:]
            ) from None
        self.builds.append(
            {"name": str(arguments.get("name")), "seconds": time.perf_counter() - start}
        )
        return module

    def _compile_inline(self, a: dict[str, Any]) -> types.ModuleType:
        name = str(a["name"])
        folder = self._folder(name)
        cpp = _as_list(a.get("cpp_sources"))
        cuda = _as_list(a.get("cuda_sources"))
        implicit = not a.get("no_implicit_headers", False)
        if implicit:
            cpp.insert(0, "#include <torch/extension.h>")
        functions = a.get("functions")
        if functions is not None:
            if isinstance(functions, str):
                functions = [functions]
            if isinstance(functions, list):
                functions = {f: f for f in functions}
            wrap = a.get("with_pytorch_error_handling", True)
            cpp.append("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {")
            for function, doc in functions.items():
                bound = f"torch::wrap_pybind_function({function})" if wrap else function
                cpp.append(f'm.def("{function}", {bound}, "{doc}");')
            cpp.append("}")
        cpp_files = [folder / "main.cpp"]
        cpp_files[0].write_text("\n".join(cpp))
        cu_files = []
        if cuda:
            if implicit:
                cuda[:0] = [
                    "#include <torch/types.h>",
                    "#include <cuda.h>",
                    "#include <cuda_runtime.h>",
                ]
            cu_files.append(folder / "cuda.cu")
            cu_files[0].write_text("\n".join(cuda))
        return self._compile(name, folder, cpp_files, cu_files, a)

    def _compile_files(self, a: dict[str, Any]) -> types.ModuleType:
        name = str(a["name"])
        sources = [Path(s) for s in _as_list(a.get("sources"))]
        cu_files = [s for s in sources if s.suffix in (".cu", ".cuh")]
        cpp_files = [s for s in sources if s not in cu_files]
        return self._compile(name, self._folder(name), cpp_files, cu_files, a)

    def _compile(
        self,
        name: str,
        folder: Path,
        cpp_files: Sequence[Path],
        cu_files: Sequence[Path],
        a: dict[str, Any],
    ) -> types.ModuleType:
        import torch.utils.cpp_extension as ext

        nvcc = find_nvcc()
        if cu_files and nvcc is None:
            raise CompileFailed(
                f"cannot compile extension {name!r}", "nvcc not found (set CUDA_HOME or PATH)"
            )
        includes = [
            f"-I{p}" for p in [*ext.include_paths(), *_as_list(a.get("extra_include_paths"))]
        ]
        includes.append(f"-I{sysconfig.get_paths()['include']}")
        defines = [f"-DTORCH_EXTENSION_NAME={name}", "-DTORCH_API_INCLUDE_EXTENSION_H"]
        # -cubin for one architecture: the front end (host and device code) and ptxas, without
        # the host compiler's pass over the torch headers (a third of the time).
        cuda_flags = _without_arch([str(f) for f in _as_list(a.get("extra_cuda_cflags"))])
        commands = [
            [nvcc or "nvcc", "-cubin", f"-arch={COMPILE_ONLY_ARCH}", str(cu), "-std=c++20"]
            + ["-o", str(folder / f"{cu.stem}.cubin"), *_NVCC_FLAGS, *defines, *includes]
            + cuda_flags
            for cu in cu_files
        ]
        commands += [
            [os.environ.get("CXX", "c++"), "-fsyntax-only", "-std=c++20", "-fPIC", str(cpp)]
            + [*defines, *includes, *(str(f) for f in _as_list(a.get("extra_cflags")))]
            for cpp in cpp_files
        ]
        start = time.perf_counter()
        # Concurrently: each compile of the torch headers takes tens of seconds.
        procs = [
            subprocess.Popen(
                cmd,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=folder,
            )
            for cmd in commands
        ]
        outputs = [p.communicate()[0].decode("utf-8", "replace") for p in procs]
        failed = [
            (cmd, out) for cmd, out, p in zip(commands, outputs, procs, strict=True) if p.returncode
        ]
        if failed:
            text = "\n".join(f"$ {' '.join(cmd[:3])} ...\n{out}" for cmd, out in failed)
            raise CompileFailed(
                f"extension {name!r} does not compile ({len(failed)} of {len(commands)} "
                "compiler runs failed)",
                text[-_OUTPUT_TAIL:],
            )
        self.builds.append(
            {
                "name": name,
                "seconds": time.perf_counter() - start,
                "mode": f"compile-only: nvcc -cubin -arch={COMPILE_ONLY_ARCH} and c++ "
                "-fsyntax-only; not linked or loaded",
                "files": [p.name for p in (*cu_files, *cpp_files)],
            }
        )
        return _not_run_module(name)

    def _folder(self, name: str) -> Path:
        folder = Path(self.workdir, f"build-{name}-{len(self.builds)}")
        folder.mkdir(parents=True, exist_ok=True)
        return folder


def _not_run_module(name: str) -> types.ModuleType:
    module = types.ModuleType(name)

    def __getattr__(attribute: str) -> Any:
        if attribute.startswith("__"):
            raise AttributeError(attribute)

        def not_run(*args: Any, **kwargs: Any) -> Any:
            raise NotRun(f"{name}.{attribute}: {NOT_RUN}")

        return not_run

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    return module


def _without_arch(flags: list[str]) -> list[str]:
    """``flags`` without architecture choices (``-cubin`` takes exactly one, ours)."""
    kept, skip = [], False
    for flag in flags:
        if skip:
            skip = False
            continue
        if flag in ("-arch", "-gencode", "--generate-code", "--gpu-architecture", "-code"):
            skip = True
            continue
        if flag.startswith(("-arch=", "-gencode=", "--generate-code=", "--gpu-architecture=")):
            continue
        if flag.startswith("-code="):
            continue
        kept.append(flag)
    return kept


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str | os.PathLike):
        return [value]
    return list(value)
