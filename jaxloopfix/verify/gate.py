"""`check --fix --verify`: let through only the fixes whose functions verified equivalent."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from jaxloopfix.config import Settings
from jaxloopfix.diagnostics import Diagnostic, FileError
from jaxloopfix.verify.notebook_module import NOTE, write_module
from jaxloopfix.verify.runner import VerifyOptions, run_target
from jaxloopfix.verify.targets import collect_targets
from jaxloopfix.verify.variants import ASSOCIATIVE_VARIANT, HOISTED_VARIANTS, variant_form, variant_name
from jaxloopfix.verify.x64_policy import x64_policy


@dataclass
class FixGate:
    accept: Callable[[Diagnostic], bool]
    settings: Settings
    notes: list[FileError] = field(default_factory=list)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Per function found equivalent: what was verified, on which inputs (said after the run).
    verified: list[FileError] = field(default_factory=list)


def verify_file(
    path: Path,
    text: str,
    settings: Settings,
    options: VerifyOptions,
    *,
    unsafe: bool = False,
    function: str | None = None,
    factory: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """(`name` or `Class.name`, worker result) for every function with fixable loops in `path`."""
    if options.x64_family is None:
        policy = x64_policy(settings.x64, settings.project_root or path.resolve().parent, settings.exclude)
        options = replace(options, x64_family=policy.family, x64_evidence=policy.evidence)
    notebook_dir: Path | None = None
    if path.suffix == ".ipynb":
        # Verified as a module of the notebook's imports and definitions (see `notebook_module`);
        # the analysis and the fix read the joined cells, as `check` does.
        notebook_dir = path.resolve().parent
        path, text = write_module(path, text)
    unrolls = (1, 2, 4, 8, 16, ASSOCIATIVE_VARIANT, *HOISTED_VARIANTS) if options.tune_unroll else (1,)
    out = []
    try:
        for target in collect_targets(path, text, settings, function=function, unsafe=unsafe, unrolls=unrolls, factory=factory):
            if notebook_dir is not None and str(notebook_dir) not in target.sys_path:
                target.sys_path.append(str(notebook_dir))  # modules beside the notebook (`from utils import ...`)
            if progress is not None:
                progress(target.label)
            result = run_target(target, options)
            if notebook_dir is not None:
                result["notebook"] = NOTE
            out.append((target.qualified, result))
    finally:
        if notebook_dir is not None:
            shutil.rmtree(path.parent, ignore_errors=True)
    return out


def by_name(found: list[tuple[str, dict[str, Any]]]) -> dict[str, str]:
    """One status per function name as diagnostics carry it (`Class.name` -> `name`).

    Two classes' methods of one name share it, so the name counts as equivalent only when every one is.
    """
    statuses: dict[str, str] = {}
    for qualified, result in found:
        name = qualified.rsplit(".", 1)[-1]
        status = str(result.get("status"))
        if statuses.get(name, "equivalent") == "equivalent":
            statuses[name] = status
    return statuses


def admitted(diagnostic: Diagnostic, status: str | None) -> bool:
    """A safe fix is proven and goes in unless `verify` saw it differ; an unsafe fix goes in only
    when `verify` found its function equivalent (verification settles the assumption it names)."""
    if diagnostic.fix is None:
        return False
    if diagnostic.fix.applicability.value == "safe":
        return status != "mismatch"
    return status == "equivalent"


def gate_fixes(path: Path, text: str, settings: Settings, options: VerifyOptions, *, unsafe: bool = True) -> FixGate:
    """Verify every function with a fix (unsafe ones too) and admit fixes by `admitted`."""
    statuses: dict[str, str] = {}
    overrides: list[tuple[str, int]] = []
    forms: list[tuple[str, str]] = []
    gate = FixGate(accept=lambda d: admitted(d, statuses.get(str(d.extra.get("function")))), settings=settings)
    found = verify_file(path, text, settings, options, unsafe=unsafe)
    statuses.update(by_name(found))
    for qualified, result in found:
        function = qualified.rsplit(".", 1)[-1]
        gate.results[qualified] = result
        if statuses[function] == "equivalent":
            gate.verified.append(FileError(str(path), f"`{qualified}` fixed: {verified_on(result)}"))
            tuned = result.get("unroll") or {}
            choice = tuned.get("choice")
            if isinstance(choice, int):
                forms.append((function, variant_form(choice)))
                if abs(choice) != 1 and choice != ASSOCIATIVE_VARIANT:
                    overrides.append((function, abs(choice)))
                gate.notes.append(FileError(str(path), f"`{qualified}`: {tuned_choice(tuned)}"))
            for advisory in result.get("advisories") or []:
                gate.notes.append(FileError(str(path), f"`{qualified}` fixed (verified equal); {advisory}"))
        else:
            gate.notes.append(
                FileError(
                    str(path),
                    f"`{qualified}` left unfixed{'' if statuses[function] == 'mismatch' else ' unless its fix is safe'}: "
                    f"verify says {result.get('status')}: {result.get('message', '')}",
                )
            )
    if overrides or forms:
        gate.settings = replace(settings, unroll_overrides=tuple(overrides), form_overrides=tuple(forms))
    return gate


def verified_on(result: dict[str, Any]) -> str:
    """What `verify` compared for a function it found equivalent, and on which inputs."""
    cases = result.get("cases") or []
    source = result.get("input_source") or "synthesized"
    shown = "; ".join(f"{c.get('label')}: {c.get('inputs')}" for c in cases[:2] if c.get("inputs"))
    more = f"; and {len(cases) - 2} more" if len(cases) > 2 else ""
    return f"equal to the loop on {source} inputs ({shown}{more}); {result.get('message', '')}"


def tuned_choice(tuned: dict[str, Any]) -> str:
    """What `--tune` wrote and why: each variant's median run time on these inputs."""
    runs = tuned.get("runs") or {}
    timings = ", ".join(
        f"{variant_name(int(k))} {float(r['run_median_s']) * 1e3:.3g} ms" for k, r in sorted(runs.items(), key=lambda kv: int(kv[0]))
    )
    text = f"wrote {variant_name(int(tuned['choice']))}, the fastest on this backend ({timings})"
    if tuned.get("excluded"):
        text += f"; {tuned['excluded']}"
    return text
