#!/usr/bin/env python3
"""Write the wrong-fix hunt's adversarial programs.

The programs are generated rather than committed so that the corpus stays reviewable as small,
per-category modules (gen_*.py) while the files hunt.py runs are plain, self-contained scripts;
regenerating gives byte-identical files, so results from different runs compare program by program.

    python benchmarks/wrong_fix_hunt/generate.py [--out DIR] [--clean]
"""
from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = Path(tempfile.gettempdir()) / "jlf-hunt" / "progs"
MODULES = ["gen_intred", "gen_dtypechg", "gen_promo", "gen_static", "gen_pyscalar", "gen_shape", "gen_prec",
           "gen_mech1", "gen_mech2", "gen_mech3", "gen_concrete"]


def programs() -> dict[str, str]:
    """name -> program text, from every generator module."""
    sys.dont_write_bytecode = True  # no __pycache__ left in the repository
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    import hunt_common

    for name in MODULES:
        importlib.import_module(name)
    return hunt_common.PROGRAMS


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(DEFAULT_OUT), help=f"folder for the programs (default {DEFAULT_OUT})")
    ap.add_argument("--clean", action="store_true", help="first delete *.py already in --out")
    opts = ap.parse_args()
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    progs = programs()
    if opts.clean:
        for old in out.glob("*.py"):
            old.unlink()
    stale = sorted(p.name for p in out.glob("*.py") if p.stem not in progs)
    for name, text in progs.items():
        (out / f"{name}.py").write_text(text, encoding="utf-8")
    print(f"wrote {len(progs)} programs to {out}")
    if stale:
        print(f"note: {len(stale)} other .py files in {out} (hunt.py will run them too; --clean removes them): "
              + ", ".join(stale[:5]) + (" ..." if len(stale) > 5 else ""))


if __name__ == "__main__":
    main()
