"""Run the benchmarks: `python benchmarks/run.py [NAME ...]` (NAME = bench_<NAME>.py).

Each `bench_*.py` module has `main() -> dict` that prints its own figures (medians and ratios
measured side by side in one run) and returns them; this runner prints a JSON summary at the end.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def discover(names: list[str]) -> list[Path]:
    files = sorted(HERE.glob("bench_*.py"))
    if names:
        files = [f for f in files if f.stem.removeprefix("bench_") in names or f.stem in names]
    return files


def main(argv: list[str]) -> int:
    summary = {}
    for path in discover(argv):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        print(f"== {path.stem} ==", flush=True)
        t = time.perf_counter()
        summary[path.stem] = mod.main()
        print(f"   ({time.perf_counter() - t:.1f} s)\n", flush=True)
    print(json.dumps(summary, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
