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
from ...npu.chip import DEFAULT_CHIP, load_chip
from ...npu.errors import BuildError
from ..chips import ARCH_CHIPS
from ..isolated import run_isolated
from ..run.runner import RunRequest
from ..samples.sample import SAMPLE_CASE
from ..text import params_text
from .cache import Outcome
from .families import family
from .session import TuneReport
from .space import Config, SearchSpace, config_key


@dataclass(frozen=True)
class SweepRow:
    params: dict
    time_us: float | None  # total over the launches; None when the config failed
    ok: bool
    reason: str
    stopped: str = ""  # "timeout", or "skipped" when its family timed out (tuner/families.py)
    note: str = ""  # on a timed-out row: what its timeout stopped


@dataclass(frozen=True)
class SweepStep:
    """One configuration finished: the progress stream of a sweep (`done` of `total`)."""

    done: int
    total: int
    row: SweepRow


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


def combinations(values: dict[str, list]) -> list[dict]:
    """Every combination of the values, in the order they were given."""
    names = list(values)
    return [dict(zip(names, c)) for c in itertools.product(*(values[n] for n in names))]


def sweep(
    path, values: dict[str, list], fixed: dict, chip, timeout_s, memory_mb, progress=None, cancel=None
) -> list[SweepRow]:
    """Every combination of `values`, in `itertools.product` order, each a whole run of the
    sample in a worker; a timeout stops its family as in an operator's tune (families.py).
    `progress(SweepStep)` after each row; `cancel` (a tuner `CancelToken`) stops the
    configuration in flight: the rows of those that finished return."""
    s = sample_for(Path(path))
    known = sample_constants(str(s.kernel), str(s.main) if s.main else None, s.defines())
    bad = [k for k in values if k not in known and k not in s.cmake_vars]
    if bad:
        raise BuildError(
            f"sample {s.name} has no constant {', '.join(bad)}; parameters: {', '.join(sorted(known))}",
            str(s.kernel),
            1,
        )
    space = sweep_space(values)
    combos = [c.params for c in space.valid]
    rows: dict[str, SweepRow] = {}
    sent: list[dict] = []

    def requests():
        for c in combos:
            if config_key(c) not in rows:  # not stopped by a timeout meanwhile
                sent.append(c)
                yield RunRequest(str(s.root), chip=chip, params={**fixed, **c}, timeout_s=timeout_s)

    completed = False

    def step(row: SweepRow) -> None:
        rows[config_key(row.params)] = row
        if progress is not None:
            progress(SweepStep(len(rows), len(combos), row))

    for i, res in enumerate(run_isolated(requests(), timeout_s, memory_mb, cancel)):
        c, r = sent[i], res.report  # results come in the order the requests were sent
        if r.passed and r.sample and r.sample.launches:
            step(SweepRow(c, sum(ln["time_us"] for ln in r.sample.launches), True, ""))
            completed = True
            continue
        reason = r.errors[0].message.splitlines()[0] if r.errors else "no launch"
        if not any(e.kind == "timeout" for e in r.errors):
            step(SweepRow(c, None, False, reason))
            completed = True
            continue
        keys, what = family(space, c, completed)
        limit = f"{timeout_s:g} s" if timeout_s is not None else "its limit"
        stop = [k for k in keys if k not in rows and k != config_key(c)]
        note = f"{_fmt(c)} timed out after {limit}: stopped {what}, {len(stop)} more config(s) not run"
        step(SweepRow(c, None, False, reason, "timeout", note))
        by_key = space.by_key()
        for k in stop:
            why = f"not run: {_fmt(c)} timed out after {limit} (stopped {what})"
            step(SweepRow(by_key[k].params, None, False, why, "skipped"))
    return [rows[config_key(c)] for c in combos if config_key(c) in rows]


def sweep_space(values: dict[str, list]) -> SearchSpace:
    """The product of the values as the tuner's search space (no static pruning: a sample has
    no spec to prune with)."""
    names = tuple(values)
    valid = tuple(Config(c, config_key(c), 0) for c in combinations(values))
    return SearchSpace(names, {n: tuple(values[n]) for n in names}, valid, ())


def _fmt(params: dict) -> str:
    return params_text(params)


def tune_report(path, values: dict[str, list], rows: list[SweepRow], chip, seconds: float) -> TuneReport:
    """The sweep as an operator's `TuneReport`, so `tune --json` has one schema whatever it
    tunes: the sample's one case, its current constants, an exhaustive search in one worker."""
    s = sample_for(Path(path))
    space = sweep_space(values)
    outcomes = tuple(
        Outcome(
            config_key(r.params),
            dict(r.params),
            r.time_us if r.ok else None,
            error=None if r.ok else r.reason,
            transient=bool(r.stopped),
            timed_out=r.stopped == "timeout",
            skipped=r.stopped == "skipped",
        )
        for r in rows
    )
    top = best(rows)
    known = sample_constants(str(s.kernel), str(s.main) if s.main else None, s.defines())
    current = {k: _num(known[k].text) if k in known else s.cmake_vars.get(k) for k in values}
    return TuneReport(
        operator=s.name,
        path=str(s.kernel),
        case=SAMPLE_CASE,
        chip=load_chip(chip or ARCH_CHIPS.get(s.arch, DEFAULT_CHIP)).name,
        strategy="exhaustive",
        objective="time",
        workers=1,
        backend="local",
        space_size=space.size,
        invalid=(),
        outcomes=outcomes,
        best=next((o for o in outcomes if top is not None and o.key == config_key(top.params)), None),
        cancelled=False,
        seconds=seconds,
        prune_seconds=0.0,
        current=current,
        order=tuple(c.key for c in space.valid),
        notes=tuple(r.note for r in rows if r.note),
    )


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
