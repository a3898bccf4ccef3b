"""The search space of one tune: the operator's PARAMS values, statically pruned.

A config is rejected *before any emulation* when
1. an operator CONSTRAINT fails (strings, `Constraint`s or callables),
2. the host `tiling(case, params)` refuses it (TilingError),
3. its local buffers cannot fit: the operator's optional `local_memory(case, params)` hook
   (bytes per memory, or a list of buffer sizes rounded up to the chip's alignment) is checked
   against the chip's UB/L1/L0A/L0B/L0C capacity; without the hook, a *dry run* executes the
   kernel's set-up of block 0 and stops at its first data instruction, so TPipe.InitBuffer's own
   capacity/alignment/event-id checks speak — no instruction is ever timed.

The dry run also measures the size of the first DMA (bytes), which the analytical model uses as
the config's transfer granularity.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...npu.chip import ChipModel
from ...npu.errors import OperatorError
from ...npu.launch import launch, make_gm
from ...npu.results import KIND_WORK
from ..run.loader import OperatorModule

MEMORIES = ("ub", "l1", "l0a", "l0b", "l0c")


def config_key(params: Mapping[str, Any]) -> str:
    """Canonical text of a config: the cache key and the identity used everywhere."""
    return json.dumps(dict(sorted(params.items())), separators=(",", ":"), default=str)


@dataclass(frozen=True)
class Config:
    """One valid point of the space, with what the static pass learnt about it."""

    params: dict
    key: str
    block_dim: int
    memory: dict = field(default_factory=dict)  # bytes per local memory (peak, per core)
    first_dma_bytes: int = 0  # size of block 0's first data transfer (0 if unknown)
    multi_buffered: float | None = None  # share of the kernel's queues with >= 2 buffers
    launch: str | None = None  # block_dim + tiling data: equal launches emulate identically


@dataclass(frozen=True)
class Pruned:
    """A config rejected statically, with the reason and where it comes from."""

    params: dict
    key: str
    reason: str
    file: str | None = None
    line: int | None = None

    def to_dict(self) -> dict:
        return {"params": self.params, "invalid_reason": self.reason, "file": self.file, "line": self.line}


@dataclass(frozen=True)
class SearchSpace:
    """All configs of a tune: `valid` (in enumeration order) and `invalid` (with reasons)."""

    names: tuple[str, ...]
    values: dict  # name -> tuple of candidate values
    valid: tuple[Config, ...]
    invalid: tuple[Pruned, ...]

    @property
    def size(self) -> int:
        return len(self.valid) + len(self.invalid)

    def by_key(self) -> dict[str, Config]:
        return {c.key: c for c in self.valid}


class _DryRunStop(BaseException):
    """Raised by the dry-run probe at the first data instruction (BaseException: the launcher
    must not wrap it as a kernel error)."""


class _DryRunProbe:
    """Stands in for a sanitizer: notes the first transfer's size, then stops the launch."""

    def __init__(self):
        self.first_bytes = 0
        self.stopped = False
        self.multi_buffered: float | None = None

    def access(self, core, tensor, start, count, is_write, frame, span=False):
        self.multi_buffered = _queue_depths(frame)
        work = [r for r in core.rec[-4:] if r[7] == KIND_WORK]
        if work:  # bytes the instruction moved (a strided access spans more than it moves)
            self.first_bytes = int(work[-1][6])
        else:
            itemsize = getattr(getattr(tensor, "dtype", None), "itemsize", 0) or 0
            self.first_bytes = int(count) * int(itemsize)
        self.stopped = True
        raise _DryRunStop

    def __getattr__(self, name):  # set_flag, wait_flag, barrier, end_block, later hooks
        return _noop


def _noop(*args, **kwargs):
    return None


def _queue_depths(frame, levels: int = 6) -> float | None:
    """Share of the TQues visible from the kernel's frames (locals and `self.` attributes)
    that have two or more buffers: how much copy/compute overlap the config allows."""
    from ...ascendc.memory.queue import TQue

    found: dict[int, int] = {}
    f = frame
    for _ in range(levels):
        if f is None:
            break
        values = list(f.f_locals.values())
        me = f.f_locals.get("self")
        if me is not None and hasattr(me, "__dict__"):
            values += list(vars(me).values())
        for v in values:
            if isinstance(v, TQue) and v.slots:
                found[id(v)] = len(v.slots)
        f = f.f_back
    if not found:
        return None
    return sum(1 for n in found.values() if n >= 2) / len(found)


def build_space(
    op: OperatorModule,
    case_name: str | None,
    chip: ChipModel,
    fixed: Mapping[str, Any] | None = None,
    probe_timeout_s: float | None = None,
) -> SearchSpace:
    """Enumerate PARAMS (`fixed` pins a parameter to a value or a subset of values) and prune
    invalid configs with reasons."""
    case = op.case(case_name)
    fixed = dict(fixed or {})
    names = tuple(op.params)
    values = {}
    for name in names:
        if name in fixed:
            values[name] = tuple(
                dict.fromkeys(op.resolve_params({name: v})[name] for v in _choices(fixed[name]))
            )
        else:
            values[name] = tuple(op.params[name].space())
    unknown = [k for k in fixed if k not in op.params]
    if unknown:
        op.resolve_params({unknown[0]: fixed[unknown[0]]})  # raises BuildError naming the file
    gm_args = _shadow_args(op, case)
    valid: list[Config] = []
    invalid: list[Pruned] = []
    for combo in itertools.product(*(values[n] for n in names)):
        params = dict(zip(names, combo))
        key = config_key(params)
        verdict = check_config(op, case, chip, params, gm_args, probe_timeout_s)
        if isinstance(verdict, Pruned):
            invalid.append(Pruned(params, key, verdict.reason, verdict.file, verdict.line))
        else:
            valid.append(Config(params, key, *verdict))
    return SearchSpace(names, values, tuple(valid), tuple(invalid))


def _choices(value: Any) -> list:
    """A pinned value, or a subset: `--param tile_m=64,128` / a list."""
    if isinstance(value, str) and "," in value:
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def check_config(
    op: OperatorModule,
    case,
    chip: ChipModel,
    params: dict,
    gm_args=None,
    probe_timeout_s: float | None = None,
):
    """Either a `Pruned` (with reason) or (block_dim, memory, first_dma_bytes, multi_buffered,
    launch signature) for a valid one."""
    p = op.resolve_params(params)
    bad = op.constraint_violations(case, p)
    if bad:
        return Pruned(params, "", "constraint: " + "; ".join(bad), op.spec_path, _line_of_constraints(op))
    try:
        lnch = op.launch(case, p)
    except OperatorError as exc:
        return Pruned(params, "", f"tiling: {exc.message}", exc.file, exc.line)
    hook = getattr(op.module, "local_memory", None)
    if hook is not None:
        try:
            declared = hook(case, p)
        except Exception as exc:  # the operator's own hook failed: say where
            from ...npu.errors import location_from_traceback

            file, line = location_from_traceback(exc.__traceback__)
            return Pruned(params, "", f"local_memory() raised {type(exc).__name__}: {exc}", file, line)
        memory, reason = fit_declared(declared, chip)
        if reason:
            return Pruned(params, "", reason, op.path, _line_of(op, "def local_memory"))
        return lnch.block_dim, memory, 0, None, launch_signature(lnch)
    if gm_args is None:
        gm_args = _shadow_args(op, case)
    probe = _DryRunProbe()
    runs = []

    def setup(run):
        run.l2_enabled = False  # no L2 pre-pass: it would run the whole kernel
        runs.append(run)

    try:
        launch(
            op.kernel,
            gm_args,
            lnch.tiling,
            lnch.block_dim,
            chip,
            numeric=False,
            sanitizer=probe,
            timeout_s=probe_timeout_s,
            configure=setup,
        )
    except _DryRunStop:
        pass
    except OperatorError as exc:
        return Pruned(params, "", f"{exc.kind}: {exc.message}", exc.file, exc.line)
    memory = dict(runs[0].peak) if runs else {}
    return (lnch.block_dim, memory, probe.first_bytes, probe.multi_buffered, launch_signature(lnch))


def launch_signature(lnch) -> str | None:
    """Text of (block_dim, tiling data) when it identifies the launch (None for objects whose
    repr is not their value). Two configs with the same signature run the same kernel on the
    same data, so one evaluation answers both (e.g. block_dim capped at the tile count)."""
    text = repr((lnch.block_dim, lnch.tiling))
    return None if " at 0x" in text else text


def fit_declared(declared: Mapping[str, Any], chip: ChipModel) -> tuple[dict, str | None]:
    """Check an operator-declared footprint {mem: bytes | [buffer bytes...]} against the chip."""
    memory: dict[str, int] = {}
    problems = []
    for mem, amount in declared.items():
        mem = str(mem).lower()
        align = max(chip.alignment.get(mem, 32), 32)
        sizes = list(amount) if isinstance(amount, Iterable) else [amount]
        total = sum(-(-int(s) // align) * align for s in sizes)
        memory[mem] = total
        cap = chip.usable.get(mem)
        if cap is None:
            problems.append(f"{mem.upper()}: {chip.name} has no such memory")
        elif total > cap:
            problems.append(f"{mem.upper()} needs {total} B, {chip.name} has {cap} B")
    return memory, ("does not fit: " + "; ".join(problems)) if problems else None


def _shadow_args(op: OperatorModule, case):
    specs = op.tensors(case)
    return [make_gm(name, s.np_dtype, s.count, None) for name, s in specs.specs.items()]


def _line_of(op: OperatorModule, needle: str) -> int | None:
    from ..run.loader import line_of

    return line_of(op.spec_path, needle)


def _line_of_constraints(op: OperatorModule) -> int | None:
    return _line_of(op, "CONSTRAINTS")
