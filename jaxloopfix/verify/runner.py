"""Run one verification job in a subprocess with a timeout; the parent never imports user code or jax."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from jaxloopfix.verify.targets import Target


@dataclass
class VerifyOptions:
    lengths: tuple[int, ...] = (5, 9)
    grad: bool = True
    x64: bool = False
    measure: bool = False
    tune_unroll: bool = False
    timeout: float = 300.0
    platform: str | None = None
    # The x64 family's role (x64_policy.REQUIRED/ADVISORY/OFF) and why; None: required.
    x64_family: str | None = None
    x64_evidence: str = ""


def job_for(target: Target, options: VerifyOptions) -> dict[str, Any]:
    return {
        "module_path": str(target.path.resolve()),
        "module_name": target.module_name,
        "sys_path": target.sys_path,
        "function": target.function,
        "owner": target.owner,
        "method_kind": target.method_kind,
        "reads_self": target.reads_self,
        "loops": [list(span) for span in target.loops],
        "rewritten": {str(k): v for k, v in target.rewritten.items()},
        "inputs": {"factory": target.factory, "signature": target.signature, "recorded": target.recorded},
        "lengths": list(options.lengths),
        "grad": options.grad,
        "x64": options.x64,
        "x64_family": options.x64_family or "required",
        "x64_evidence": options.x64_evidence,
        "measure": options.measure or options.tune_unroll,
        "tune_unroll": options.tune_unroll,
        "platform": options.platform,
    }


def _error(message: str) -> dict[str, Any]:
    return {"status": "error", "message": message, "input_source": None, "cases": [], "timings": None, "unroll": None}


def run_target(target: Target, options: VerifyOptions) -> dict[str, Any]:
    """The worker's JSON result for `target` (status "error" for timeouts and worker failures)."""
    if target.skip_reason is not None:
        result = _error(target.skip_reason)
        result["status"] = "unverified"
        return result
    env = dict(os.environ)
    env.setdefault("JAX_PLATFORMS", options.platform or env.get("JAX_PLATFORMS", "cpu"))
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "jaxloopfix.verify.worker"],
            input=json.dumps(job_for(target, options)),
            capture_output=True,
            text=True,
            timeout=options.timeout,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return _error(f"timed out after {options.timeout:g} s (raise it with --timeout)")
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    try:
        result = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        result = None
    if not isinstance(result, dict) or "status" not in result:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        result = _error(f"the verify worker failed (exit {proc.returncode}): " + " | ".join(tail))
    if target.nested:
        result["run_through"] = target.runs
    return result
