"""The README stays honest: its commands are what CI runs, and its example output is real."""

from __future__ import annotations

import re
from pathlib import Path

from jaxloopfix.config import Settings
from jaxloopfix.engine import apply_fixes, lint_text

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _blocks() -> list[str]:
    return re.findall(r"```(?:\w+)?\n(.*?)```", README, flags=re.S)


def _setup_commands() -> list[str]:
    section = README.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    return [b.strip() for b in re.findall(r"```\n(.*?)```", section, flags=re.S)]


def test_readme_has_exactly_two_setup_commands():
    commands = _setup_commands()
    assert len(commands) == 2
    assert "jaxloopfix check" in commands[0] and "fixtures/" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _setup_commands()[1] in ci


def test_readme_example_is_what_the_tool_reports_and_writes():
    blocks = _blocks()
    seed = next(b for b in blocks if "outputs.append(h)" in b)
    fixed = next(b for b in blocks if "lax.scan(step, h, inputs)" in b)
    report = next(b for b in blocks if b.startswith("seed_rnn.py:"))
    source = "from functools import partial\n\nimport jax\nimport jax.numpy as jnp\n\n\n" + seed
    diagnostics = lint_text(source, "seed_rnn.py", Settings())
    assert len(diagnostics) == 1
    d = diagnostics[0]
    # The README's example file has six lines of imports more than the snippet; compare the message.
    assert report.strip().endswith(f"JLF001 {d.message}")
    # Its fix is unsafe (the carry's shape after one step is not proven), as the README says.
    assert d.fix is not None and d.fix.applicability.value == "unsafe"
    assert "cannot prove the carry `h` keeps its dtype and shape after one step" in d.fix.message
    assert d.fix.message.split("(unsafe: ", 1)[1].rstrip(")") in README.replace("\n", " ")
    assert apply_fixes(source, "seed_rnn.py", Settings())[2] == 0
    new = apply_fixes(source, "seed_rnn.py", Settings(), unsafe=True)[0]
    assert fixed.strip() in new
    assert "from jax import lax" in new
