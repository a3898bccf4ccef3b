"""Read the measured runs for `asc-tui calibrate`: what each msprof directory ran, its figures.

A run is a msprof op output directory (`msprof.read_dir`) paired with the operator, case and
params it ran, from the command line (`parse_run`) or a manifest (`read_manifest`). `Runs` loads
each operator once and re-emulates all of them under any chip model, for the fit (`fit.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...npu.chip import ChipModel
from ...npu.errors import OperatorError
from ...npu.launch import launch
from ..profile.msprof import read_dir
from ..profile.profiler import Profile, profile
from ..run.loader import load_operator
from ..run.runner import prepare
from ..text import params_text

#: Pipes whose per-core mean time enters the fit (the fitted constants in `fit.py` decide them).
FIT_PIPES = ("mte2", "mte3", "vec")


class CalibrationError(OperatorError):
    kind = "calibrate"


@dataclass(frozen=True)
class RunSpec:
    """One measured run: its msprof directory and what it ran."""

    directory: str
    op: str
    case: str | None = None
    params: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        p = params_text(self.params, ",")
        case = f"[{self.case}]" if self.case else ""
        return f"{Path(self.directory).name} ({self.op}{case}{' ' + p if p else ''})"

    def to_dict(self) -> dict:
        return {"directory": self.directory, "op": self.op, "case": self.case, "params": dict(self.params)}


def figures(p: Profile) -> dict[str, float]:
    """The fitted figures of a profile: task duration and per-core mean pipe times (µs)."""
    n = max(len(p.cores), 1)
    out = {"duration": p.time_us}
    for q in FIT_PIPES:
        out[q] = sum(c.busy_us.get(q, 0.0) for c in p.cores) / n
    return out


class Runs:
    """The runs, ready to re-emulate under any chip model (operators loaded once)."""

    def __init__(self, specs: list[RunSpec], root=None):
        self.specs = specs
        self.measured = []
        self.prepared = []
        for s in specs:
            self.measured.append(figures(read_dir(s.directory)))
            op = load_operator(s.op, root)
            setup = prepare(op, s.case, s.params, timing_only=True, seed=0)
            lnch, gm = setup.lnch, setup.gm_args
            self.prepared.append((op, lnch, gm))
        self.evaluations = 0

    def emulate(self, chip: ChipModel, only: list[int] | None = None) -> list[dict[str, float]]:
        out = []
        for i, (op, lnch, gm) in enumerate(self.prepared):
            if only is not None and i not in only:
                out.append({})
                continue
            em = launch(op.kernel, gm, lnch.tiling, lnch.block_dim, chip, numeric=False)
            out.append(figures(profile(em, chip)))
        self.evaluations += 1
        return out

    def residuals(self, got: list[dict], idx: list[int]) -> np.ndarray:
        r = []
        for i in idx:
            m, g = self.measured[i], got[i]
            for k, v in m.items():
                if v > 0:
                    r.append(g[k] / v - 1.0)
        return np.array(r)


def parse_run(tokens: list[str]) -> RunSpec:
    """`DIR OP [CASE] [KEY=VALUE ...]` from the command line."""
    if len(tokens) < 2:
        raise CalibrationError("--run needs DIR OP [CASE] [KEY=VALUE ...]")
    directory, op, rest = tokens[0], tokens[1], tokens[2:]
    case = None
    params: dict = {}
    for t in rest:
        if "=" in t:
            k, v = t.split("=", 1)
            params[k.strip()] = _value(v.strip())
        elif case is None:
            case = t
        else:
            raise CalibrationError(f"--run {directory}: unexpected {t!r} (expected KEY=VALUE)")
    return RunSpec(directory, op, case, params)


def read_manifest(path: str | Path) -> list[RunSpec]:
    """A TOML file of `[[run]]` tables: dir, op, case (optional), params (optional table);
    relative dirs are relative to the file."""
    import tomli

    p = Path(path)
    try:
        data = tomli.loads(p.read_text(encoding="utf-8"))
    except (OSError, tomli.TOMLDecodeError) as exc:
        raise CalibrationError(f"cannot read {p}: {exc}", str(p)) from None
    out = []
    for i, r in enumerate(data.get("run", [])):
        if "dir" not in r or "op" not in r:
            raise CalibrationError(f"{p}: run {i + 1} needs `dir` and `op`", str(p))
        d = Path(r["dir"])
        out.append(
            RunSpec(
                str(d if d.is_absolute() else p.parent / d), r["op"], r.get("case"), dict(r.get("params", {}))
            )
        )
    return out


def _value(v: str):
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return v


__all__ = ["RunSpec", "Runs", "parse_run", "read_manifest", "figures", "FIT_PIPES", "CalibrationError"]
