"""The run pipeline: build (import + tiling) → emulate → verify, as one immutable report."""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import numpy as np

from ...config import DEFAULT_WORKER_TIMEOUT
from ...npu.chip import load_chip
from ...npu.errors import BuildError, ErrorInfo, OperatorError, TilingError
from ...npu.launch import launch, make_gm
from ...npu.results import EmulationResult
from ..emulation import Emulation
from ..outcome import Verdict, outcome
from ..precision import InputOverwrite, NonFiniteOrigin, PrecisionReport, compare
from ..pristine import Originals
from ..profile.timing import timing
from ..samples.result import SampleRun
from ..samples.sample import run_sample, time_left
from ..text import size_text
from .inputs import cache_key, cached_inputs, keep_inputs, untouched
from .loader import OperatorModule, line_of, load_operator


@dataclass(frozen=True)
class RunRequest:
    """One run of an operator: `timing_only` picks the emulation (see `emulation.py`)."""

    op: str
    case: str | None = None
    chip: str | None = None
    params: dict = field(default_factory=dict)
    timing_only: bool = False
    seed: int = 0
    timeout_s: float | None = DEFAULT_WORKER_TIMEOUT
    root: str | None = None


@dataclass(frozen=True)
class Stage:
    name: str
    seconds: float
    ok: bool
    detail: str = ""


@dataclass(frozen=True)
class RunReport:
    """Everything `asc-tui run` knows about one run; `to_dict()` is the `--json` shape."""

    operator: str
    path: str | None
    case: str | None
    chip: str | None
    params: dict
    block_dim: int | None
    stages: tuple[Stage, ...]
    emulation: EmulationResult | None
    precision: PrecisionReport | None
    errors: tuple[ErrorInfo, ...]
    source_hash: str | None = None
    shapes: dict = field(default_factory=dict)
    flops: float = 0.0
    io_bytes: int = 0
    baseline: str | None = None
    sample: SampleRun | None = None  # a sample directory's run (devkit/samples/sample.py)
    nonfinite: NonFiniteOrigin | None = None  # where the first NaN/Inf the golden lacks came from

    @property
    def verdict(self) -> Verdict:
        """PASS, WARN, FAIL, ERROR or RAN: `devkit.outcome`'s rule, the one every front end shows."""
        return outcome(self)

    @property
    def ok(self) -> bool:
        """The run's figures count (bench, tune): `Verdict.usable`."""
        return self.verdict.usable

    @property
    def emulation_kind(self) -> Emulation | None:
        """Full or timing-only (None when the run never reached the emulator)."""
        return Emulation.of_result(self.emulation) if self.emulation is not None else None

    @property
    def passed(self) -> bool:
        """A check run succeeds (`Verdict.ok`: PASS, or RAN when nothing was checked)."""
        return self.verdict.ok

    def to_dict(self) -> dict[str, Any]:
        em = self.emulation
        d: dict[str, Any] = {
            "operator": self.operator,
            "path": self.path,
            "case": self.case,
            "chip": self.chip,
            "params": self.params,
            "block_dim": self.block_dim,
            "source_hash": self.source_hash,
            "shapes": self.shapes,
            "emulation": self.emulation_kind,
            "stages": [
                {"name": s.name, "seconds": s.seconds, "ok": s.ok, "detail": s.detail} for s in self.stages
            ],
            "time_us": em.time_us if em else None,
            "kernel_us": em.kernel_us if em else None,
            "cycles": em.kernel_cycles if em else None,
            "launch_us": em.launch_overhead_us if em else None,
            "timing": timing(em).to_dict() if em else None,
            "pipes": ({k: v.to_dict(em.cores_used) for k, v in em.pipe_stats().items()} if em else {}),
            "bytes": {"gm_read": em.gm_read if em else 0, "gm_write": em.gm_write if em else 0},
            "flops": self.flops,
            "precision": self.precision.to_dict() if self.precision else None,
            "nonfinite_origin": self.nonfinite.to_dict() if self.nonfinite else None,
            "warnings": [w.to_dict() for w in em.warnings] if em else [],
            "log": [
                {
                    "time_us": e.time_us,
                    "block": e.block,
                    "file": e.file,
                    "line": e.line,
                    "text": e.text,
                    "level": e.level,
                }
                for e in em.log
            ]
            if em
            else [],
            "errors": [e.to_dict() for e in self.errors],
            "verdict": self.verdict.value,
            "passed": self.passed,
        }
        if self.sample is not None:
            d["sample"] = self.sample.to_dict()
        return d


def _seed_for(op: str, case: str, seed: int) -> int:
    return zlib.crc32(f"{op}/{case}/{seed}".encode())


class Setup(tuple):
    """One run, ready to launch: `(case, params, specs, lnch, arrays, gm_args)` (callers unpack
    the six), and `originals`, what the golden needs of the inputs (None when timing-only)."""

    def __new__(cls, case, params, specs, lnch, arrays: dict, gm_args: list, originals: Originals | None):
        self = super().__new__(cls, (case, params, specs, lnch, arrays, gm_args))
        self.originals = originals
        return self

    def __getnewargs__(self):  # (pickle and copy rebuild it through __new__)
        return (*self, self.originals)

    case = property(itemgetter(0))
    params = property(itemgetter(1))
    specs = property(itemgetter(2))
    lnch = property(itemgetter(3))
    arrays = property(itemgetter(4))  # name -> array (none when timing-only)
    gm_args = property(itemgetter(5))


def prepare(op: OperatorModule, case_name: str | None, params: dict, timing_only: bool, seed: int) -> Setup:
    """Case, params, launch, GM arguments and input arrays (none when `timing_only`) for one run."""
    case = op.case(case_name)
    p = op.resolve_params(params)
    bad = op.constraint_violations(case, p)
    if bad:
        raise TilingError(
            f"parameters {dict(p)} violate: {'; '.join(bad)}",
            op.spec_path,
            line_of(op.spec_path, "CONSTRAINTS"),
        )
    specs = op.tensors(case)
    lnch = op.launch(case, p)
    rng_seed = _seed_for(op.name, case.name, seed)
    key = None if timing_only else cache_key(specs.specs, rng_seed)
    kept = cached_inputs(key)
    rng = np.random.default_rng(rng_seed) if kept is None else None
    arrays: dict[str, np.ndarray] = {}
    gm_args = []
    for name, spec in specs.specs.items():
        data = None
        try:
            if not timing_only:
                if spec.is_output:
                    arr = np.zeros(spec.shape, spec.np_dtype)
                elif kept is not None:
                    arr = kept[name]
                else:
                    arr = spec.generate(rng)
                arrays[name] = arr
                data = arr.reshape(-1)
            gm_args.append(make_gm(name, spec.np_dtype, spec.count, data))
        except MemoryError:
            file, line = spec.where
            raise BuildError(
                f"tensor {name!r} ({spec.describe()}, {size_text(spec.nbytes)}) does not fit in memory",
                file or op.path,
                line,
                hint="use a smaller case, or raise worker_memory_mb in the config",
            ) from None
    if kept is None:
        keep_inputs(key, {n: a for n, a in arrays.items() if not specs.specs[n].is_output})
    originals = (
        None if timing_only else Originals.before_launch(specs.inputs, arrays, untouched(key), rng_seed)
    )
    return Setup(case, p, specs, lnch, arrays, gm_args, originals)


def run(request: RunRequest, op: OperatorModule | None = None, sanitizer=None, configure=None) -> RunReport:
    """Run the whole pipeline; never raises for the user's mistakes (they become `errors`)."""
    if op is None and is_sample_ref(request.op):
        rep = run_sample(request, sanitizer=sanitizer, configure=configure)
        rep["stages"] = tuple(Stage(*st) for st in rep["stages"])
        return RunReport(**rep)
    stages: list[Stage] = []
    errors: list[ErrorInfo] = []
    t0 = time.perf_counter()
    numeric = not request.timing_only
    case = params = lnch = specs = None
    arrays: dict = {}
    chip = None
    try:
        chip = load_chip(request.chip)
        if op is None:
            op = load_operator(request.op, request.root)
        setup = prepare(op, request.case, request.params, request.timing_only, request.seed)
        case, params, specs, lnch, arrays, gm_args = setup
        originals = setup.originals
        stages.append(
            Stage(
                "build", time.perf_counter() - t0, True, f"{op.name} [{case.name}] block_dim={lnch.block_dim}"
            )
        )
    except OperatorError as exc:
        errors.append(exc.info())
        stages.append(Stage("build", time.perf_counter() - t0, False, exc.message))
        return _report(request, op, case, chip, params, lnch, stages, None, None, errors, specs)
    t1 = time.perf_counter()
    emulation = None
    watch = getattr(sanitizer, "watch_inputs", None)
    if watch is not None:
        watch({g.buffer: n for g, (n, s) in zip(gm_args, specs.specs.items()) if not s.is_output})
    try:
        emulation = launch(
            op.kernel,
            gm_args,
            lnch.tiling,
            lnch.block_dim,
            chip,
            numeric,
            sanitizer=sanitizer,
            timeout_s=time_left(request.timeout_s, t0),
            configure=configure,
        )
        stages.append(
            Stage("emulate", time.perf_counter() - t1, True, f"{emulation.instructions} instructions")
        )
    except OperatorError as exc:
        errors.append(exc.info())
        stages.append(Stage("emulate", time.perf_counter() - t1, False, exc.message))
        return _report(request, op, case, chip, params, lnch, stages, None, None, errors, specs)
    precision = None
    if numeric:
        t2 = time.perf_counter()
        try:
            precision = verify(op, case, specs, arrays, originals.restore(arrays))
            stages.append(Stage("verify", time.perf_counter() - t2, True, precision.verdict))
        except OperatorError as exc:
            errors.append(exc.info())
            stages.append(Stage("verify", time.perf_counter() - t2, False, exc.message))
    return _report(request, op, case, chip, params, lnch, stages, emulation, precision, errors, specs)


def is_sample_ref(ref) -> bool:
    """Whether a run reference names a sample: its directory, or a kernel file inside one."""
    from pathlib import Path

    from ...cxx.files import CXX_SUFFIXES, sample_for

    if not isinstance(ref, str):
        return False
    p = Path(ref)
    if not (p.is_dir() or (p.suffix in CXX_SUFFIXES and p.is_file())):
        return False
    s = sample_for(p)
    return s is not None and (p.is_dir() or p.resolve() == s.kernel.resolve())


def verify(
    op: OperatorModule, case, specs, arrays: dict, overwritten: tuple[InputOverwrite, ...] = ()
) -> PrecisionReport:
    """The outputs against golden() of the inputs as they were before the launch (the caller
    restored them: `Originals.restore`, whose notes `overwritten` are, each a FAIL)."""
    inputs = {k: arrays[k] for k in specs.inputs}
    want = op._call("golden", case, *inputs.values())
    outs = list(specs.outputs)
    if isinstance(want, dict):
        missing = [k for k in outs if k not in want]
        if missing:
            raise OperatorError(
                f"golden() returned no {', '.join(missing)}", op.path, _golden_return_line(op)
            )
    else:
        if not isinstance(want, (tuple, list)):
            want = (want,)
        if len(want) != len(outs):
            raise OperatorError(
                f"golden() returned {len(want)} array(s) for {len(outs)} output(s)",
                op.path,
                _golden_return_line(op),
            )
        want = dict(zip(outs, want))
    overrides = getattr(op.module, "PRECISION", None)
    results = []
    for name in outs:
        got = arrays[name]
        w = np.asarray(want[name])
        if w.size != got.size:
            spec = specs.outputs[name]
            out_file, out_line = spec.where
            declared = f" (declared at line {out_line})" if out_line and out_file == op.path else ""
            raise OperatorError(
                f"golden() output {name!r} has {w.size} elements {tuple(w.shape)}, the kernel's "
                f"{name} has {got.size} {spec.describe()}{declared}",
                op.path,
                _golden_return_line(op),
                hint="make golden() return the shape tensors() declares for this output",
            )
        results.append(compare(name, got.reshape(-1), w.reshape(-1).astype(got.dtype), overrides))
    return PrecisionReport(tuple(results), tuple(overwritten))


def _golden_return_line(op: OperatorModule) -> int | None:
    """The `return` of golden() (else its `def`): where a wrong golden shape is made."""
    import inspect

    try:
        lines, start = inspect.getsourcelines(op.module.golden)
    except (OSError, TypeError):
        return None
    for i, text in enumerate(lines):
        if text.strip().startswith("return"):
            return start + i
    return start


def _report(request, op, case, chip, params, lnch, stages, emulation, precision, errors, specs):
    shapes = {k: v.describe() for k, v in specs.specs.items()} if specs else {}
    flops = 0.0
    if op is not None and case is not None:
        try:
            flops = op.flops(case)
        except OperatorError as exc:
            errors.append(exc.info())
    return RunReport(
        operator=op.name if op else str(request.op),
        path=op.path if op else None,
        case=case.name if case else request.case,
        chip=chip.name if chip else request.chip,
        params=dict(params) if params is not None else dict(request.params),
        block_dim=lnch.block_dim if lnch else None,
        stages=tuple(stages),
        emulation=emulation,
        precision=precision,
        errors=tuple(errors),
        source_hash=op.source_hash if op else None,
        shapes=shapes,
        flops=flops,
        io_bytes=sum(s.nbytes for s in specs.specs.values()) if specs else 0,
        baseline=getattr(op.module, "BASELINE", None) if op else None,
    )
