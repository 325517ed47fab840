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

from evoforge.evaluators.sandbox._cgroup import remove_stale_cgroups
from evoforge.evaluators.sandbox._child import CHANNEL_FD, RESULT_FD, out_of_disk
from evoforge.evaluators.sandbox._host import (
    PR_SET_PDEATHSIG,
    Workdir,
    children,
    die_with_parent,
    enter_network_namespace,
    enter_private_mount_namespace,
    harden_server,
    is_subreaper,
    prctl,
    remove_workdir,
    resolve_user,
    unreadable_python_path,
)
from evoforge.evaluators.sandbox._options import (
    ENV_NAMES,
    NETWORK_MODES,
    THREAD_VARIABLES,
    RootRefusedError,
    SandboxOptions,
    candidate_user,
    server_env,
)
from evoforge.evaluators.sandbox._protocol import (
    MAX_FRAME_BYTES,
    ProtocolError,
    dumps,
    encode_frame,
    read_frame,
    read_frame_async,
    write_all,
    write_frame,
)
from evoforge.evaluators.sandbox._report import ISOLATION_KEYS, host_isolation
from evoforge.evaluators.sandbox._run import Sandbox, run_sandboxed
from evoforge.evaluators.sandbox._runner import (
    RunnerFailure,
    call_runner,
    own_python_first,
    prepare,
    prepare_request,
    read_request,
    reply,
    reply_result,
)
from evoforge.evaluators.sandbox._types import (
    DEFAULT_DISK_MB,
    Isolation,
    Job,
    Limits,
    SandboxError,
    SandboxRun,
)

__all__ = [
    # running jobs
    "CHANNEL_FD",
    "RESULT_FD",
    "Isolation",
    "Job",
    "Limits",
    "DEFAULT_DISK_MB",
    "Sandbox",
    "SandboxError",
    "SandboxRun",
    "run_sandboxed",
    # the processes that run candidates
    "NETWORK_MODES",
    "PR_SET_PDEATHSIG",
    "THREAD_VARIABLES",
    "Workdir",
    "SandboxOptions",
    "candidate_user",
    "children",
    "die_with_parent",
    "enter_network_namespace",
    "enter_private_mount_namespace",
    "harden_server",
    "is_subreaper",
    "prctl",
    "remove_workdir",
    "remove_stale_cgroups",
    "resolve_user",
    "server_env",
    "unreadable_python_path",
    "host_isolation",
    "ISOLATION_KEYS",
    "RootRefusedError",
    "ENV_NAMES",
    # one-shot trusted runners
    "RunnerFailure",
    "call_runner",
    "own_python_first",
    "out_of_disk",
    "prepare",
    "prepare_request",
    "read_request",
    "reply",
    "reply_result",
    # wire format
    "MAX_FRAME_BYTES",
    "ProtocolError",
    "dumps",
    "encode_frame",
    "read_frame",
    "read_frame_async",
    "write_all",
    "write_frame",
]
