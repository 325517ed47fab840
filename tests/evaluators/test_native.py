"""The native evaluator: every way a C/C++ candidate fails ends as a typed status, and each
measure's figure matches the tool run directly."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import shutil
import socket
import subprocess
import textwrap
from pathlib import Path

import pytest

from evoforge.archive import Status
from evoforge.evaluators.native import (
    NativeEvaluator,
    cache_metrics,
    event_totals,
    measure_unavailable,
    o3_flags,
    qemu_unavailable,
    read_settings,
)
from evoforge.evaluators.native._tools import tool
from evoforge.evaluators.sandbox import server_env
from evoforge.problems import ProblemSpecError, load_problem

pytestmark = pytest.mark.skipif(
    shutil.which("clang-19") is None or shutil.which("valgrind") is None,
    reason="needs clang-19 and valgrind (apt-get install -y clang-19 llvm-19 valgrind)",
)

SEED = """\
#include <stdio.h>
int main(void) {
    long n, s = 0, x;
    if (scanf("%ld", &n) != 1) return 1;
    // EVOLVE-BLOCK-START
    for (long i = 0; i < n; i++) { if (scanf("%ld", &x) != 1) return 2; s += x; }
    // EVOLVE-BLOCK-END
    printf("%ld\\n", s);
    return 0;
}
"""
TESTS = [("3\n1 2 3\n", "6\n"), ("2\n5 5\n", "10\n")]


def make_problem(
    tmp_path: Path, measure: str = "callgrind", objective: str = "instructions", extra: str = ""
) -> Path:
    folder = tmp_path / "problem"
    folder.mkdir(exist_ok=True)
    (folder / "seed.c").write_text(SEED)
    (folder / "problem.py").write_text(
        textwrap.dedent(f"""\
        name = "sum_numbers"
        evaluator = "native"
        language = "c"
        seed_file = "seed.c"
        measure = {measure!r}
        objectives = {{{objective!r}: "minimize"}}
        tests = {TESTS!r}
        compile_flags = ["-O2"]
        timeout_s = 20
        options = {{"timing_repeats": 3, "timing_warmups": 0, "test_timeout_s": 2,
                    "output_mb": 1}}

        def evaluate(metrics):
            return metrics
        """)
        + extra
    )
    return folder


def body(statement: str) -> str:
    """The seed with its block's loop replaced by ``statement``."""
    return re.sub(r"    for \(long i.*\n", lambda _: f"    {statement}\n", SEED)


def evaluate(folder: Path, *sources: str) -> list:
    async def run():
        async with NativeEvaluator(load_problem(folder)) as evaluator:
            settings = evaluator.settings
            return [
                await evaluator._measured(s, settings, "evaluate", ratios=False) for s in sources
            ]

    return asyncio.run(run())


def test_failures_are_typed(tmp_path):
    folder = make_problem(tmp_path)
    compile_error, wrong, timeout, crash, flood, exit_code = evaluate(
        folder,
        SEED.replace("s += x;", "s += x"),
        SEED.replace("s += x;", "s += x + 1;"),
        body("for (;;) {}"),
        body("volatile int *p = 0; *p = 1;"),
        body('for (;;) fputs("flood flood flood\\n", stdout);'),
        body("return 7;"),
    )
    assert compile_error.status is Status.COMPILE_ERROR
    assert "expected ';'" in compile_error.artifacts["error"]
    assert wrong.status is Status.INCORRECT
    assert (wrong.artifacts["expected"], wrong.artifacts["actual"]) == ("6\n", "9\n")
    assert wrong.artifacts["input"] == TESTS[0][0]
    assert timeout.status is Status.TIMEOUT
    assert crash.status is Status.CRASHED and "SIGSEGV" in crash.artifacts["error"]
    assert flood.status is Status.RUNTIME_ERROR and "output flood" in flood.artifacts["error"]
    assert exit_code.status is Status.RUNTIME_ERROR and "code 7" in exit_code.artifacts["error"]


def test_hostile_candidate_is_contained(tmp_path):
    outside = tmp_path / "outside.txt"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    hostile = SEED.replace(
        "#include <stdio.h>",
        textwrap.dedent(f"""\
        #include <stdio.h>
        #include <unistd.h>
        #include <arpa/inet.h>
        #include <sys/socket.h>
        static int escaped(void) {{
            int bad = 0;
            FILE *f = fopen("{outside}", "w");
            if (f) {{ fputs("escaped", f); fclose(f); bad = 1; }}
            int s = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a = {{0}};
            a.sin_family = AF_INET; a.sin_port = htons({port});
            a.sin_addr.s_addr = htonl(0x7f000001);
            if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0) bad = 1;
            int forks = 0;
            while (forks < 10000) {{
                pid_t child = fork();
                if (child == 0) {{ pause(); _exit(0); }}
                if (child < 0) break;
                forks++;
            }}
            if (forks >= 10000) bad = 1;
            return bad;
        }}
        """),
    ).replace('printf("%ld\\n", s);', 'if (escaped()) s = -1; printf("%ld\\n", s);')
    folder = make_problem(tmp_path)
    (result,) = evaluate(folder, hostile)
    assert result.status in (Status.OK, Status.INCORRECT, Status.RUNTIME_ERROR, Status.CRASHED)
    assert result.status is Status.OK, result.artifacts  # every attempt was refused
    assert not outside.exists()
    with pytest.raises(BlockingIOError):
        listener.accept()
    listener.close()


def test_reads_of_the_problem_folder_are_refused(tmp_path):
    folder = make_problem(tmp_path)
    leak = SEED.replace(
        'printf("%ld\\n", s);',
        f'if (fopen("{folder / "problem.py"}", "r")) s = -1; printf("%ld\\n", s);',
    )
    (result,) = evaluate(folder, leak)
    assert result.status is Status.OK, result.artifacts


def callgrind_directly(binary: Path, stdin: str, cwd: Path) -> int:
    out = cwd / "direct.out"
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--quiet", str(binary)],
        input=stdin.encode(),
        check=True,
        capture_output=True,
        cwd=cwd,
        env=server_env(),  # the environment candidates get (ld.so's start-up reads it)
    )
    return event_totals(out.read_text())["Ir"]


def test_callgrind_matches_a_direct_run_and_profiles(tmp_path):
    folder = make_problem(tmp_path)
    (result,) = evaluate(folder, SEED)
    assert result.status is Status.OK, result.artifacts
    binary = tmp_path / "prog"
    subprocess.run(
        ["clang-19", "-O2", "-g", "-x", "c", "-", "-o", str(binary), "-lm"],
        input=SEED.encode(),
        check=True,
    )
    each = [callgrind_directly(binary, stdin, tmp_path) for stdin, _ in TESTS]
    direct = sum(each)
    assert abs(result.metrics["instructions"] - direct) / direct < 0.01
    per_test = result.metrics["test_instructions"]  # per-instance scores, test by test
    assert list(per_test) == [str(i) for i in range(len(TESTS))]
    assert sum(per_test.values()) == result.metrics["instructions"]
    for counted, measured in zip(per_test.values(), each, strict=True):
        assert abs(counted - measured) / measured < 0.01
    assert "main" in result.artifacts["profile"]
    assert "EVOLVE-BLOCK-START" in result.artifacts["profile"]  # source lines annotated


def test_ratios_to_the_seed_and_o3(tmp_path):
    folder = make_problem(tmp_path)

    async def run():
        async with NativeEvaluator(load_problem(folder)) as evaluator:
            seed = await evaluator.evaluate(SEED)
            return seed, await evaluator.references()

    seed, references = asyncio.run(run())
    assert seed.metrics["speedup_vs_seed"] == pytest.approx(1.0)
    assert seed.metrics["speedup_vs_O3"] == pytest.approx(
        references["O3"]["instructions"] / seed.metrics["instructions"]
    )


def test_cachegrind_cycle_estimate(tmp_path):
    folder = make_problem(tmp_path, "cachegrind", "cycles")
    (result,) = evaluate(folder, SEED)
    assert result.status is Status.OK, result.artifacts
    m = result.metrics
    assert m["cycles"] >= m["instructions"] > 0
    assert m["ll_misses"] <= m["d1_misses"] + m["i1_misses"]


def test_cache_formula_on_known_totals():
    totals = {
        "Ir": 100,
        "I1mr": 4,
        "ILmr": 1,
        "Dr": 50,
        "D1mr": 6,
        "DLmr": 2,
        "Dw": 10,
        "D1mw": 0,
        "DLmw": 0,
    }
    metrics = cache_metrics(totals)
    # ram 3, ll hits 10 - 3 = 7, l1 hits 160 - 7 - 3 = 150
    assert metrics["cycles"] == 150 + 5 * 7 + 35 * 3
    assert metrics["ll_misses"] == 3 and metrics["d1_misses"] == 6


@pytest.mark.skipif(shutil.which("llvm-mca-19") is None, reason="needs llvm-mca-19 (llvm-19)")
def test_mca_estimate_matches_llvm_mca(tmp_path):
    extra = 'hot_functions = ["add_all"]\n'
    folder = make_problem(tmp_path, "mca:znver4", "mca_cycles", extra)
    source = SEED.replace(
        "int main(void) {",
        "long add_all(const long *a, long n) {\n"
        "    long s = 0; for (long i = 0; i < n; i++) s += a[i] * 3;\n"
        "    return s;\n}\nint main(void) {",
    )
    (result,) = evaluate(folder, source)
    assert result.status is Status.OK, result.artifacts
    assert "add_all" in result.artifacts["profile"]
    assert result.metrics["mca_cycles"] > 0 and result.metrics["mca_ipc"] > 0


def test_wall_against_the_seed(tmp_path):
    folder = make_problem(tmp_path, "wall", "wall_s")
    (result,) = evaluate(folder, SEED)
    assert result.status is Status.OK, result.artifacts
    assert result.metrics["wall_s"] > 0
    assert {"speedup_vs_seed", "speedup_vs_O3", "significant_vs_seed"} <= set(result.metrics)
    assert "wall_vs_seed" in result.artifacts


def test_qemu_without_qemu_is_device_unavailable(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if "qemu" in name else "/x")
    why = measure_unavailable("c", "qemu:riscv64")
    assert why.startswith("device unavailable") and "qemu-user" in why
    folder = make_problem(tmp_path, "qemu:riscv64", "instructions")
    problem = load_problem(folder)
    assert NativeEvaluator.unmeasurable(problem) == {"instructions": why}
    assert NativeEvaluator.correctness_only(problem) == why


def test_settings_errors_name_the_fix(tmp_path):
    folder = make_problem(tmp_path, "callgrind", "cycles")
    with pytest.raises(ProblemSpecError, match="cycles is not measured by 'callgrind'"):
        read_settings(load_problem(folder))
    folder = make_problem(tmp_path, "perf", "instructions")
    with pytest.raises(ProblemSpecError, match="measure: found 'perf'"):
        read_settings(load_problem(folder))


def test_o3_flags_replace_the_level():
    assert o3_flags(["-O2", "-march=native"]) == ("-march=native", "-O3")
    assert o3_flags(["-Os"]) == ("-O3",)


def test_registered_as_a_plugin():
    from evoforge.evaluators import evaluator_class

    assert evaluator_class("native") is NativeEvaluator
    assert os.path.isfile(Path(__file__).parent.parent.parent / "evaluators/native/__main__.py")


@pytest.mark.skipif(
    bool(qemu_unavailable("riscv64") or qemu_unavailable("aarch64")),
    reason=f"qemu measure unavailable here: {qemu_unavailable('riscv64')}",
)
@pytest.mark.parametrize("arch", ["riscv64", "aarch64"])
def test_qemu_counts_guest_instructions(tmp_path, arch):
    """The count checked by hand: a loop of exactly two guest instructions per iteration
    (``addi``/``bnez`` on riscv64, ``subs``/``b.ne`` on aarch64), run 10^6 and 2*10^6 times
    (inputs of the same length, so parsing costs the same): the counts differ by 2*10^6."""
    loop = {
        "riscv64": "1: addi %0, %0, -1\\n\\tbnez %0, 1b",
        "aarch64": "1: subs %0, %0, #1\\n\\tb.ne 1b",
    }[arch]
    source = body(f'long k = n; __asm__ volatile("{loop}" : "+r"(k)); s = n - k;')
    folder = make_problem(tmp_path, f"qemu:{arch}", "instructions")
    problem = load_problem(folder)

    async def run():
        async with NativeEvaluator(problem) as evaluator:
            counts = []
            for n in (1_000_000, 2_000_000):
                settings = dataclasses.replace(
                    evaluator.settings, tests=((f"{n}\n", f"{n}\n"),), measure_inputs=()
                )
                result = await evaluator._measured(source, settings, "evaluate", ratios=False)
                assert result.status is Status.OK, result.artifacts
                counts.append(result.metrics["instructions"])
            again = await evaluator._measured(source, settings, "evaluate", ratios=False)
            return counts, again.metrics["instructions"]

    (small, large), repeat = asyncio.run(run())
    assert large - small == pytest.approx(2_000_000, rel=1e-3)
    assert repeat == large  # deterministic


@pytest.mark.skipif(bool(qemu_unavailable("riscv64")), reason="qemu measure unavailable here")
def test_qemu_runs_the_tests_under_emulation(tmp_path):
    folder = make_problem(tmp_path, "qemu:riscv64", "instructions")
    seed, wrong = evaluate(folder, SEED, SEED.replace("s += x;", "s += x + 1;"))
    assert seed.status is Status.OK, seed.artifacts
    assert seed.objectives["instructions"] > 0
    assert "qemu-riscv64 guest instructions" in seed.artifacts["profile"]
    assert wrong.status is Status.INCORRECT and wrong.artifacts["actual"] == "9\n"


RUST_SEED = """\
use std::io::Read;
fn main() {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).unwrap();
    let mut numbers = input.split_whitespace().map(|t| t.parse::<i64>().unwrap());
    let n = numbers.next().unwrap() as usize;
    // EVOLVE-BLOCK-START
    let total: i64 = numbers.take(n).sum();
    // EVOLVE-BLOCK-END
    println!("{}", total);
}
"""


# Found with the real HOME (tests run with a HOME of their own, where ~/.cargo/bin is not)
RUSTC = tool("rustc")


@pytest.mark.skipif(RUSTC is None, reason="needs rustc (https://rustup.rs)")
def test_a_rust_candidate_compiles_in_the_sandbox_and_is_measured(tmp_path, monkeypatch):
    """rustup's toolchain lives under ~/.rustup, outside the minimal root: it is bound in,
    and rustc's own process spawning (a seqpacket socketpair) passes the seccomp filter."""
    assert RUSTC is not None
    monkeypatch.setenv("PATH", f"{Path(RUSTC).parent}{os.pathsep}{os.environ['PATH']}")
    folder = tmp_path / "rust"
    folder.mkdir()
    (folder / "seed.rs").write_text(RUST_SEED)
    (folder / "problem.py").write_text(
        textwrap.dedent(f"""\
        name = "rust_sum"
        evaluator = "native"
        language = "rust"
        seed_file = "seed.rs"
        measure = "callgrind"
        objectives = {{"instructions": "minimize"}}
        tests = {TESTS!r}
        timeout_s = 60

        def evaluate(metrics):
            return metrics
        """)
    )
    ok, wrong, broken = evaluate(
        folder,
        RUST_SEED,
        RUST_SEED.replace(".sum();", ".sum::<i64>() + 1;"),
        RUST_SEED.replace(".sum();", ".sum()"),
    )
    assert ok.status is Status.OK, ok.artifacts
    assert ok.metrics["instructions"] > 0
    assert wrong.status is Status.INCORRECT
    assert broken.status is Status.COMPILE_ERROR


def test_rust_flags_default_to_opt_level_2_and_the_baseline_to_3():
    assert o3_flags(["-C", "opt-level=2", "-g"], "rust") == ("-g", "-C", "opt-level=3")
    assert o3_flags(["-O", "-Copt-level=1"], "rust") == ("-C", "opt-level=3")
