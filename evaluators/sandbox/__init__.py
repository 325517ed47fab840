"""The shared sandbox: every evaluator runs candidates through it.

A candidate runs in a forked child with its own process group, a fresh working directory,
CPU/memory/file-size limits, a wall-clock deadline that kills the whole group, capped output,
no capabilities and (where the host allows) its own mount and network namespaces. The parent
supervises it and returns a typed :class:`SandboxRun`. Every protection, and how a server says
which are on here, is listed in :mod:`evoforge.evaluators.sandbox._report`.

Pieces, for evaluator plugins and the built-in evaluators:

- running jobs: :func:`run_sandboxed` (one job) and :class:`Sandbox` (a pre-forked child per
  job, for fork servers), with :class:`Limits` and :class:`Isolation`;
- the processes that run candidates: :class:`SandboxOptions` (the spec's settings),
  :func:`server_env`, :func:`candidate_user` and the host-side set-up (:func:`harden_server`,
  :func:`enter_network_namespace`, :func:`remove_workdir`, …);
- one-shot trusted runners (a fresh interpreter per job): :func:`call_runner` on the
  evaluator's side; :func:`prepare`, :func:`read_request` and :func:`reply` in the runner;
- the wire format between them: length-prefixed JSON frames (:mod:`evoforge.base.frames`
  carrying :func:`dumps`; :func:`read_frame`, :func:`write_frame`, …).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evaluators.sandbox._cgroup import remove_stale_cgroups as remove_stale_cgroups
    from evoforge.evaluators.sandbox._child import (
        CHANNEL_FD as CHANNEL_FD,
        RESULT_FD as RESULT_FD,
        out_of_disk as out_of_disk,
    )
    from evoforge.evaluators.sandbox._host import (
        PR_SET_PDEATHSIG as PR_SET_PDEATHSIG,
        Workdir as Workdir,
        children as children,
        die_with_parent as die_with_parent,
        enter_network_namespace as enter_network_namespace,
        enter_private_mount_namespace as enter_private_mount_namespace,
        harden_server as harden_server,
        is_subreaper as is_subreaper,
        prctl as prctl,
        remove_workdir as remove_workdir,
        resolve_user as resolve_user,
        unreadable_python_path as unreadable_python_path,
    )
    from evoforge.evaluators.sandbox._options import (
        ENV_NAMES as ENV_NAMES,
        NETWORK_MODES as NETWORK_MODES,
        THREAD_VARIABLES as THREAD_VARIABLES,
        RootRefusedError as RootRefusedError,
        SandboxOptions as SandboxOptions,
        candidate_user as candidate_user,
        server_env as server_env,
    )
    from evoforge.evaluators.sandbox._protocol import (
        MAX_FRAME_BYTES as MAX_FRAME_BYTES,
        ProtocolError as ProtocolError,
        dumps as dumps,
        encode_frame as encode_frame,
        read_frame as read_frame,
        read_frame_async as read_frame_async,
        write_all as write_all,
        write_frame as write_frame,
    )
    from evoforge.evaluators.sandbox._report import (
        ISOLATION_KEYS as ISOLATION_KEYS,
        host_isolation as host_isolation,
    )
    from evoforge.evaluators.sandbox._run import Sandbox as Sandbox, run_sandboxed as run_sandboxed
    from evoforge.evaluators.sandbox._runner import (
        RunnerFailure as RunnerFailure,
        call_runner as call_runner,
        own_python_first as own_python_first,
        prepare as prepare,
        prepare_request as prepare_request,
        read_request as read_request,
        reply as reply,
        reply_result as reply_result,
    )
    from evoforge.evaluators.sandbox._types import (
        DEFAULT_DISK_MB as DEFAULT_DISK_MB,
        Isolation as Isolation,
        Job as Job,
        Limits as Limits,
        SandboxError as SandboxError,
        SandboxRun as SandboxRun,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
