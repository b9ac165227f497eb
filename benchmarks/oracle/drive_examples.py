"""Run a folder of example scripts (numpyro's `examples/`) with tiny settings, one subprocess each.

    python benchmarks/oracle/drive_examples.py EXAMPLES_DIR SECONDS [PER_SCRIPT_SECONDS [SCRIPT ...]]

(all `*.py` of the folder in name order, or only the SCRIPTs named)

Every integer option the script declares (`parser.add_argument("--num-samples", ..., type=int)`)
that sets a sample, warmup, step, epoch or data count is passed a small value; scripts that load a
data set from the network fail at once and are skipped. The recorder follows the subprocesses
(run_all.sh runs this under record.py). matplotlib draws with the Agg backend.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

SMALL = {
    "num-samples": 8, "num-warmup": 8, "num-chains": 1, "num-data": 20, "num-iters": 20, "num-steps": 20,
    "num-svi-steps": 20, "max-iter": 20, "maxiter": 20, "num-epochs": 1, "epochs": 1, "num-supervised": 20,
    "num-unsupervised": 30, "num-sequences": 4, "num-elbo-particles": 2, "num-stein-particles": 3,
    "subsample-size": 10, "batch-size": 8, "hidden-factor": 2, "num-dimensions": 6, "future": 5,
    "thinning": 1, "num-hidden": 3, "num-words": 6,
}
ARG = re.compile(r'add_argument\(\s*((?:"-[a-z]",\s*)?)"--([a-z0-9-]+)"')


def args_for(src: str) -> list[str]:
    out = []
    for m in ARG.finditer(src):
        name = m.group(2)
        if name in SMALL:
            out += [f"--{name}", str(SMALL[name])]
    return out


def main() -> None:
    folder = Path(sys.argv[1])
    deadline = time.time() + float(sys.argv[2])
    per = float(sys.argv[3]) if len(sys.argv) > 3 else 120.0
    env = dict(os.environ, MPLBACKEND="Agg")
    only = set(sys.argv[4:])
    for script in sorted(folder.glob("*.py")):
        if only and script.name not in only:
            continue
        if script.name.startswith("_"):
            continue
        left = deadline - time.time()
        if left < 10:
            break
        src = script.read_text(encoding="utf-8")
        if "load_dataset" in src or "fetch_" in src:
            print(f"{script.name}: skipped (downloads a data set)", flush=True)
            continue
        # the checkout's examples assert the numpyro version they were released with; run them
        # through runpy (the file and its line numbers are unchanged) with that version string set
        ver = re.search(r'numpyro\.__version__\.startswith\("([^"]+)"\)', src)
        boot = (
            "import runpy, sys, numpyro; "
            + (f"numpyro.__version__ = {ver.group(1)!r}; " if ver else "")
            + f"sys.argv = {[str(script), *args_for(src)]!r}; runpy.run_path(sys.argv[0], run_name='__main__')"
        )
        cmd = [sys.executable, "-c", boot]
        t0 = time.time()
        proc = subprocess.Popen(cmd, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            _, err = proc.communicate(timeout=min(per, left))
            rc = proc.returncode
            tail = (err or "").strip().splitlines()[-1:] if rc else []
        except subprocess.TimeoutExpired:
            proc.terminate()  # SIGTERM: the recorder writes what it has
            try:
                proc.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
            rc, tail = "timeout", []
        print(f"{script.name}: rc={rc} in {time.time() - t0:.0f}s {' '.join(args_for(src))} {tail}", flush=True)


if __name__ == "__main__":
    main()
