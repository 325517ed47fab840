"""``qemu:<arch>``: a cross-compiled build run under qemu-user, its instructions counted by
a TCG plugin.

Debian's qemu-user (7.2) is built with plugin support but ships no plugins (no
``libinsn.so``), and no ``qemu-plugin.h``. :data:`PLUGIN_SOURCE` is a minimal ``insn``
plugin written against QEMU's plugin API version 1 (the handful of functions it uses are
declared here): at each translation block's translation it adds an inline counter increment
of the block's instruction count, so the count is exact for a single-threaded guest and the
same on every run (emulation is deterministic; no sampling). It is compiled in the job's
working directory (a fraction of a second) so nothing outside the sandbox is needed.

The candidate is cross-compiled by clang-19 (``--target=<arch>-linux-gnu -static
-fuse-ld=lld``, Debian's cross C library and libgcc/libstdc++), so the guest needs no
sysroot at run time; its tests run under qemu-<arch> too.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from typing import Any

PLUGIN_SOURCE = r"""
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
__attribute__((visibility("default"))) int qemu_plugin_version = 1;
extern void qemu_plugin_register_vcpu_tb_trans_cb(
    qemu_plugin_id_t, void (*)(qemu_plugin_id_t, struct qemu_plugin_tb *));
extern void qemu_plugin_register_vcpu_tb_exec_inline(
    struct qemu_plugin_tb *, enum qemu_plugin_op, void *, uint64_t);
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
extern void qemu_plugin_register_atexit_cb(
    qemu_plugin_id_t, void (*)(qemu_plugin_id_t, void *), void *);
extern void qemu_plugin_outs(const char *);
static uint64_t count;
static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    qemu_plugin_register_vcpu_tb_exec_inline(
        tb, QEMU_PLUGIN_INLINE_ADD_U64, &count, qemu_plugin_tb_n_insns(tb));
}
static void finished(qemu_plugin_id_t id, void *unused) {
    char line[64];
    snprintf(line, sizeof line, "evoforge-insn %llu\n", (unsigned long long)count);
    qemu_plugin_outs(line);
}
__attribute__((visibility("default"))) int qemu_plugin_install(
    qemu_plugin_id_t id, const void *info, int argc, char **argv) {
    qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
    qemu_plugin_register_atexit_cb(id, finished, NULL);
    return 0;
}
"""
PLUGIN = "./libinsn.so"
SLOWDOWN = 20
"""How much longer than a native run a run under qemu may take (its tests' and measure's)."""
_COUNT = re.compile(r"^evoforge-insn (\d+)$", re.M)


def cross_flags(arch: str) -> list[str]:
    """clang-19's flags for a static ``arch`` Linux build (``riscv64``, ``aarch64``)."""
    return [f"--target={arch}-linux-gnu", "-static", "-fuse-ld=lld"]


def launcher(arch: str) -> list[str]:
    """The command prefix that runs an ``arch`` binary here."""
    return [f"qemu-{arch}"]


def build_plugin() -> str:
    """Compile :data:`PLUGIN_SOURCE` into the working directory; "" or why it failed."""
    with open("insn.c", "w") as f:
        f.write(PLUGIN_SOURCE)
    proc = subprocess.run(
        ["clang-19", "-shared", "-fPIC", "-O2", "insn.c", "-o", PLUGIN],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    return "" if proc.returncode == 0 else f"building the qemu plugin: {proc.stderr[:1500]}"


def counting_argv(arch: str, log: str, program: str) -> list[str]:
    """qemu-``arch`` running ``program`` with the counting plugin, its count to ``log``."""
    return [*launcher(arch), "-plugin", PLUGIN, "-d", "plugin", "-D", log, program]


def read_count(log: str) -> int:
    """The instruction count the plugin wrote to ``log``.

    Raises:
        ValueError: no count there (the plugin did not load, or the guest never exited).
    """
    with open(log) as f:
        text = f.read()
    found = _COUNT.findall(text)
    if not found:
        raise ValueError(f"qemu wrote no instruction count ({text[-300:] or 'empty log'})")
    return int(found[-1])


def qemu_metrics(counts: Sequence[int]) -> dict[str, Any]:
    """The measure's metrics: guest instructions summed over the measure inputs."""
    return {"instructions": float(sum(counts))}
