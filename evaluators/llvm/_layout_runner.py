"""The ``code_layout`` task: the policy orders each profiled function's blocks.

Same containment as the LLVM tasks (:mod:`evoforge.evaluators.llvm._runner`): the policy runs
in the shared sandbox and answers one frame per function; the runner checks each order (a
permutation with the entry block first) and scores it with Ext-TSP on the cached profile,
which the policy sees only as the features it is sent.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from evoforge.archive import Status
from evoforge.evaluators.llvm._layout import check_order, ext_tsp
from evoforge.evaluators.llvm._profile import apply_layout, load_profile
from evoforge.evaluators.llvm._runner import PolicyFailure, PolicyLink, PolicySandbox
from evoforge.evaluators.sandbox import Isolation


def serve_layout(request: dict[str, Any], isolation: Isolation) -> dict[str, Any]:
    start = time.perf_counter()
    profile = load_profile()
    root = Path(tempfile.mkdtemp(prefix="evoforge-layout-"))
    policy: PolicySandbox | None = None
    link: PolicyLink | None = None
    failure: PolicyFailure | None = None
    score = original = bolt = 0.0
    orders: dict[str, list[int]] = {}
    applied: dict[str, Any] = {}
    try:
        policy = PolicySandbox(request, isolation, root)
        link = PolicyLink(
            policy.accept(min(30.0, float(request["timeout_s"]))),
            float(request.get("decision_timeout_s", 1.0)),
        )
        for function in profile["functions"]:
            features = {k: function[k] for k in ("name", "sizes", "counts", "edges")}
            order = link.ask(features)
            if why := check_order(order, len(function["sizes"])):
                raise PolicyFailure(
                    Status.INCORRECT,
                    f"function {function['name']} (decision {link.decisions}): {why}",
                )
            orders[function["name"]] = order
            score += ext_tsp(function["sizes"], function["edges"], order, function["successors"])
            original += function["original_score"]
            bolt += function["bolt_score"]
        if request.get("apply"):  # the policy has answered everything: close it first
            link.conn.close()
            # and wait for it to end: its sandbox then sweeps this (subreaper) runner's
            # children, which must not include the clang and valgrind of the rebuild
            policy.finish()
            work = root / "apply"
            work.mkdir()
            applied = apply_layout(orders, work)
            applied["i1_misses_original"] = profile["i1_misses_original"]
            applied["i1_misses_bolt"] = profile["i1_misses_bolt"]
    except PolicyFailure as exc:
        failure = exc
    except RuntimeError as exc:  # the rebuild or cachegrind failed for a valid layout
        failure = PolicyFailure(Status.CRASHED, f"applying the layout failed: {exc}")
    finally:
        if link is not None:
            link.conn.close()
        if policy is not None:
            failure = policy.settle(failure)
        shutil.rmtree(root, ignore_errors=True)
    elapsed = time.perf_counter() - start
    policy_s = link.policy_s if link is not None else 0.0
    llvm_s = elapsed - policy_s if applied else 0.0  # clang, lld and cachegrind
    timings = {"stage_s": elapsed, "policy_s": policy_s, "llvm_s": llvm_s}
    artifacts = dict(policy.run.artifacts) if policy is not None and policy.run else {}
    artifacts.pop("error", None)
    if failure is not None:
        return {
            "status": failure.status.value,
            "error": failure.error,
            "artifacts": artifacts,
            "timings": timings,
        }
    measurements = {
        "ext_tsp": score,
        "original": original,
        "bolt": bolt,
        "functions": len(profile["functions"]),
        "blocks": sum(len(f["sizes"]) for f in profile["functions"]),
        **applied,
        **timings,
    }
    return {
        "status": Status.OK.value,
        "measurements": measurements,
        "artifacts": artifacts,
        "timings": timings,
    }
