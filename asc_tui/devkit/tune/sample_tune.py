"""Sweeping a sample's parameters (`asc-tui tune DIR --param-values NAME=a,b,c`).

A sample has no spec, so no declared search space: the user gives the values — on the command
line (`--param-values`), in a sidecar `asc-tui.toml` next to the sample (`[tune]` NAME = [a, b]),
or in the project config's `[tune]` table (for the constants a sample has), in that order of
precedence (`tune_values`). Every combination
runs the whole loop (gen_data, main(), verify) in the worker; a configuration counts only when it
ran and verified (or ran with no golden). The objective is the total device time of its launches.
`--apply` writes the best values into the C++ literals (cxx/apply.py's `literal_edits`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

from ...cxx.apply import FileEdit, literal_edits
from ...cxx.files import sample_for
from ...cxx.host.run import sample_constants
from ...npu.errors import BuildError
from ..isolated import run_isolated
from ..run.runner import RunRequest


@dataclass(frozen=True)
class SweepRow:
    params: dict
    time_us: float | None  # total over the launches; None when the config failed
    ok: bool
    reason: str


def is_sample(path) -> bool:
    """A sample directory (or its kernel file) rather than an operator."""
    return sample_for(Path(path)) is not None


def parse_values(items: list[str]) -> dict[str, list]:
    """`NAME=a,b,c` → {NAME: [a, b, c]} (numbers where they parse)."""
    out = {}
    for it in items:
        name, _, vals = it.partition("=")
        if not vals:
            raise ValueError(f"--param-values {it!r}: expected NAME=a,b,c")
        out[name.strip()] = [_num(v.strip()) for v in vals.split(",") if v.strip()]
    return out


#: The sample's own config file: `[tune]` gives the values to sweep (config.py validates it).
SIDECAR = "asc-tui.toml"


def tune_values(path, given: dict[str, list], project: dict | None = None) -> dict[str, list]:
    """What to sweep: `given` (the command line) over the sample's sidecar `[tune]` over the
    project config's `[tune]` (only the names this sample has). A bad sidecar raises ConfigError
    with its file:line."""
    from ...config import load_config

    s = sample_for(Path(path))
    out: dict[str, list] = {}
    if project:
        known = set(sample_constants(str(s.kernel), str(s.main) if s.main else None, s.defines()))
        out.update({k: list(v) for k, v in project.items() if k in known or k in s.cmake_vars})
    side = s.root / SIDECAR
    if side.is_file():
        out.update({k: list(v) for k, v in load_config(side).tune.items()})
    out.update(given)
    return out


def sweep(path, values: dict[str, list], fixed: dict, chip, timeout_s, memory_mb) -> list[SweepRow]:
    s = sample_for(Path(path))
    known = sample_constants(str(s.kernel), str(s.main) if s.main else None, s.defines())
    bad = [k for k in values if k not in known and k not in s.cmake_vars]
    if bad:
        raise BuildError(
            f"sample {s.name} has no constant {', '.join(bad)}; parameters: {', '.join(sorted(known))}",
            str(s.kernel),
            1,
        )
    names = list(values)
    combos = [dict(zip(names, c)) for c in itertools.product(*(values[n] for n in names))]
    reqs = [RunRequest(str(s.root), chip=chip, params={**fixed, **c}, timeout_s=timeout_s) for c in combos]
    rows = []
    for c, res in zip(combos, run_isolated(reqs, timeout_s, memory_mb)):
        r = res.report
        if r.passed and r.sample and r.sample.launches:
            rows.append(SweepRow(c, sum(ln["time_us"] for ln in r.sample.launches), True, ""))
        else:
            reason = r.errors[0].message.splitlines()[0] if r.errors else "no launch"
            rows.append(SweepRow(c, None, False, reason))
    return rows


def best(rows: list[SweepRow]) -> SweepRow | None:
    good = [r for r in rows if r.ok]
    return min(good, key=lambda r: r.time_us) if good else None


def apply_edits(path, params: dict) -> list[FileEdit]:
    s = sample_for(Path(path))
    known = sample_constants(str(s.kernel), str(s.main) if s.main else None, s.defines())
    return literal_edits({k: known[k] for k in params if k in known}, params)


def _num(v: str):
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v
