"""`--fix` keeps every byte outside the rewritten loop: encoding, tabs, trailing spaces, comments, final newline."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from jaxloopfix.cli import main

ORIGINAL = (
    b"# -*- coding: cp1252 -*-\n# caf\xe9 \xa9\nimport jax\nimport jax.numpy as jnp\n\n\n@jax.jit\n"
    b"def f(xs: jax.Array):\n\th = jnp.zeros(xs.shape[1])   \n\touts = []\n"
    b"\tfor t in range(xs.shape[0]):  # over time\n\t\th = jnp.tanh(h + xs[t])  # caf\xe9\n"
    b"\t\touts.append(h)\n\treturn jnp.stack(outs)"
)
EXPECTED = (
    b"# -*- coding: cp1252 -*-\n# caf\xe9 \xa9\nimport jax\nimport jax.numpy as jnp\nfrom jax import lax\n\n\n"
    b"@jax.jit\ndef f(xs: jax.Array):\n\th = jnp.zeros(xs.shape[1])   \n\n"
    b"\tdef step(h, xs_t):  # over time\n\t\th = jnp.tanh(h + xs_t)  # caf\xe9\n\t\treturn h, h\n\n"
    b"\th, outs = lax.scan(step, h, xs)\n\treturn outs"
)


def _fix(tmp_path: Path, data: bytes) -> bytes:
    path = tmp_path / "model.py"
    path.write_bytes(data)
    # `--unsafe-fixes`: these loops add `xs[t]` (shape unknown) to the carry, so their fixes are unsafe.
    result = CliRunner().invoke(main, ["check", "--fix", "--unsafe-fixes", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return path.read_bytes()


def test_cp1252_tabs_trailing_space_and_no_final_newline(tmp_path):
    assert _fix(tmp_path, ORIGINAL) == EXPECTED


def test_crlf_everywhere(tmp_path):
    crlf = ORIGINAL.replace(b"\n", b"\r\n")
    assert _fix(tmp_path, crlf) == EXPECTED.replace(b"\n", b"\r\n")


def test_fixing_twice_changes_nothing(tmp_path):
    once = _fix(tmp_path, ORIGINAL)
    assert _fix(tmp_path, once) == once


def test_comments_inside_the_body_move_into_the_step(tmp_path):
    text = (
        "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(xs: jax.Array):\n"
        "    h = jnp.zeros(xs.shape[1])\n    outs = []  # collected states\n"
        "    # loop over time\n    for t in range(xs.shape[0]):\n"
        "        x_t = xs[t]  # this step's input\n        # update\n        h = jnp.tanh(h + x_t)\n"
        "        outs.append(h)  # keep it\n    return jnp.stack(outs)\n"
    )
    fixed = _fix(tmp_path, text.encode()).decode()
    for comment in ("# collected states", "# loop over time", "# this step's input", "# update", "# keep it"):
        assert comment in fixed, comment


def test_comments_inside_dropped_code_are_kept(tmp_path):
    text = (
        "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(xs: jax.Array):\n    h = jnp.zeros(3)\n"
        "    outs = []\n    for t in range(  # the time axis\n            xs.shape[0]):\n"
        "        h = h * 0.5 + xs[t]\n        outs.append(  # collected\n            h)\n"
        "    res = jnp.stack(  # stacked\n        outs)\n    return res\n"
    )
    fixed = _fix(tmp_path, text.encode()).decode()
    assert "lax.associative_scan" in fixed and "for t in" not in fixed  # a linear recurrence's default form
    for comment in ("# the time axis", "# collected", "# stacked"):
        assert fixed.count(comment) == 1, comment
