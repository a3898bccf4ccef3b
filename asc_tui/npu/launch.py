"""Launch a kernel on `block_dim` blocks of the emulated chip and collect the timeline.

Blocks map onto cores round-robin in waves (block b → core b mod N, wave b div N); a block starts
when its core finished the previous one. HBM bandwidth is shared moment by moment by every GM
transfer in flight (npu/memory/hbm.py): the first pass prices each transfer as if the wave's cores ran
in lockstep (npu/memory/lockstep.py), exact when they did; otherwise timing-only passes follow the
shared-HBM durations (npu/memory/shared_hbm.py). A kernel whose code may wait for other blocks
(SyncAll, all-core cross-core flags) runs its blocks as cooperative threads (npu/coop.py); the
others run one after another in the launching thread.

Over 400 lines; the seam to split on: the guards around a launch (_gc_paused, _numbers_done,
_deadline) from the launch itself.
"""

from __future__ import annotations

import gc
import os
import re
import signal
import threading
import weakref
from dataclasses import dataclass
from functools import partial

from . import state
from .chip import ChipModel, wave_cores
from .columns import ClosedBlock, timelines
from .coop import Blocks, may_wait
from .core import Core
from .cores import CoreType
from .errors import KernelError, KernelException, OperatorError, internal_error, location_from_traceback
from .memory.gm import GM_ADDR, GmBuffer
from .memory.lockstep import Groups
from .memory.shared_hbm import share_hbm, transfers_unless_lockstep
from .mix import run_group
from .numbers.offload import numbers
from .pipes import PIPE_NAMES
from .replay.blockindex import tmax, tmin, trange
from .replay.cubetrace import CubeTrace
from .replay.numtrace import NumTrace, Pending
from .replay.replay import Replayer, Template
from .results import EmulationResult, LogEntry, Mode, in_log_order, retimed_log


@dataclass(frozen=True)
class RunWarning:
    kind: str
    message: str
    file: str
    line: int
    block: int
    count: int = 1

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "block": self.block,
            "count": self.count,
        }


class KernelTimeout(OperatorError):
    kind = "timeout"


class Run:
    """Per-launch context shared by all blocks (log, warnings, sanitizer, L2 state).

    Every attribute is declared here. A `configure` callback given to `launch` may change the
    switches (L2, lineage, sanitizer) or hand in an HCCL context before any block runs; the
    kernel API keeps its per-launch state here (`hccl`, `mmad_widened`, `wide`).
    """

    __slots__ = (
        "chip",
        "numeric",
        "block_dim",
        "core_type",
        "san",
        "log",
        "_warnings",
        "peak",
        "l2",
        "l2_counts",
        "l2_record",
        "l2_tally",
        "l2_enabled",
        "mmad_widened",
        "lineage",
        "wide",
        "hccl",
        "cores_made",
        "hbm_plan",
        "hbm_shared",
        "hbm_passes",
        "groups",
        "hbm_xf",
        "replay",
        "extrapolate",
        "blocks",
        "learned",
        "known",
        "clock_read",
        "read_data",
    )

    def __init__(
        self, chip: ChipModel, numeric: bool, block_dim: int, sanitizer=None, core_type=CoreType.AIV
    ):
        self.chip = chip
        self.numeric = numeric
        self.block_dim = block_dim
        self.core_type = CoreType(core_type)
        self.san = sanitizer
        self.log: list[tuple] = []
        self._warnings: dict = {}
        self.peak: dict[str, int] = {}
        # the L2 model of cube launches (npu/memory/l2.py): the model, the pre-pass read counts, whether
        # this launch is the counting pre-pass itself, whether it counts its own reads too (its
        # counts are guessed: npu/memory/l2guess.py), and a switch to turn L2 off
        self.l2 = None
        self.l2_counts = None
        self.l2_record = False
        self.l2_tally = False
        self.l2_enabled = True
        # Mmad operands widened in this launch, reused when their raw fractals recur
        # (ascendc/mmad_numbers.py)
        self.mmad_widened = None
        # keep cube operands in L1/L0 as GM lineage rather than bytes (ascendc/lineage.py), and
        # the fp32 twins of GM buffers they are read from: (buffer id, dtype, version) ->
        # (twin, grids widened so far) (ascendc/mmad_numbers.wide_grid)
        self.lineage = True
        self.wide = None
        # this rank's collective context (ascendc/hccl.HcclContext): handed in by a multi-rank
        # run (devkit/debug/deadlock.py), else made on first GetHcclContext as a world of one
        self.hccl = None
        # the shared HBM (npu/memory/hbm.py): cores made so far (a core's index into `hbm_plan`), the
        # per-core transfer durations this pass follows (None: uncontended), whether to share
        # HBM at all, the passes it took, and each finished core's (owner, transfers)
        self.cores_made = 0
        self.hbm_plan = None
        self.hbm_shared = True
        self.hbm_passes = 1
        self.groups = Groups()  # the blocks in lockstep groups, as they close (npu/memory/lockstep.py)
        self.hbm_xf = None  # (hbm.Transfers, their durations this pass, per-block offsets)
        # copy the records of blocks that provably repeat a template's stream (npu/replay/replay.py);
        # False runs every block step by step (the reference the replay tests compare against)
        self.replay = True
        # extrapolate loops whose scheduler state repeats up to a time shift (npu/extrapolate/periodic.py);
        # False runs every iteration step by step
        self.extrapolate = True
        # the blocks as cooperative threads (npu/coop.py) when they may wait for each other
        # (SyncAll, all-core CrossCoreSetFlag): set by the launcher for multi-block launches
        self.blocks = None
        # the guards of this launch's templates by block (`learned`); a timing-only rerun under
        # the shared HBM gets the first pass's (`known`, npu/memory/shared_hbm.py) unless the kernel
        # read the clock (`clock_read`, GetSystemCycle: its path may change with the times) or
        # data into its Python (`read_data`, GetValue or a C++ `*p` of real data: the rerun
        # reads shadows, so its path may differ)
        self.learned: dict = {}
        self.known: dict | None = None
        self.clock_read = False
        self.read_data = False

    def warn(self, kind: str, message: str, fr) -> None:
        key = (kind, fr.f_code.co_filename, fr.f_lineno)
        w = self._warnings.get(key)
        if w is None:
            block = state.core.block if state.core is not None else -1
            self._warnings[key] = [kind, message, fr.f_code.co_filename, fr.f_lineno, block, 1]
        else:
            w[5] += 1

    def warnings(self) -> tuple[RunWarning, ...]:
        return tuple(RunWarning(*w) for w in self._warnings.values())

    def log_entry(self, core, fr, text: str, level: str) -> None:
        self.log.append((core.ts, core.block, "scalar", fr.f_code.co_filename, fr.f_lineno, text, level))


def make_gm(name: str, dtype, count: int, data=None) -> GM_ADDR:
    """Wrap an operator input/output as a GM_ADDR (data=None for a shadow tensor)."""
    return GM_ADDR(GmBuffer(name, dtype, count, data))


def launch(
    kernel,
    gm_args: list[GM_ADDR],
    tiling,
    block_dim: int,
    chip: ChipModel,
    numeric: bool = True,
    sanitizer=None,
    timeout_s: float | None = None,
    configure=None,
) -> EmulationResult:
    """Run every block of the kernel; raise an OperatorError naming the user's line on failure.

    A template run (npu/replay/replay.py) that raises starts the launch over with every block step by
    step: an error is reported as a step-by-step run reports it, and a kernel that refuses a
    tainted block index (`isinstance(idx, int)`) still runs. A timing-only launch run on
    guessed L2 counts that read otherwise runs again on the counts it found; a full one is
    re-timed if need be (npu/l2guess.check_full).
    """
    args = (kernel, gm_args, tiling, block_dim, chip, numeric, sanitizer, timeout_s)
    try:
        return _launch(*args, configure)
    except _StepByStep:

        def step_by_step(run):
            if configure is not None:
                configure(run)
            run.replay = False

        return launch(*args, step_by_step)
    except _Misguessed as miss:  # the launch counted other L2 reads than guessed: run again
        found = miss.counts

        def counted(run):
            if configure is not None:
                configure(run)
            run.l2_counts = found

        return launch(*args, counted)


class _StepByStep(BaseException):
    """A template run raised: not an Exception, so no handler of the kernel's errors wraps it."""


class _Misguessed(BaseException):
    """A launch run on guessed L2 counts (npu/memory/l2guess.py) tallied others: `counts`, which a
    pre-pass would have found."""

    def __init__(self, counts):
        super().__init__()
        self.counts = counts


def _template_run(fn, gm_args, tiling, core) -> None:
    """Run a template block; if it raises, start the launch over step by step — unless it was a
    full run's template and the error is the kernel API's own (what a step-by-step run reports
    at the same place: the run is not repeated, with its side effects), or the template already
    wrote GM (running again from that state could differ: an in-place or atomic kernel)."""
    try:
        fn(*gm_args, tiling)
    except KernelTimeout:
        raise
    except Exception as exc:
        if core.numeric and (isinstance(exc, OperatorError) or _wrote_gm(core)):
            raise
        raise _StepByStep from None


def _user_error(kernel, exc: Exception, suffix: str) -> OperatorError:
    """What the user sees for an exception out of a block: the kernel's own words for it (a C++
    kernel's `explain`: C++ words, not Python's), "internal error in asc-tui" when asc-tui's code
    raised, else the user's Python exception at its line."""
    explain = getattr(kernel, "explain", None)
    err = explain(exc) if explain is not None else None
    if err is None:
        err = internal_error(exc, doing="while running the kernel")
    if err is None:
        file, line = location_from_traceback(exc.__traceback__)
        err = KernelException(f"{type(exc).__name__}: {exc}", file, line, hint=_python_hint(exc))
    err.message += suffix
    return err


_DTYPE_CALLED = re.compile(r"'numpy\.dtypes\.(\w+)DType' object is not callable")


def _python_hint(exc: Exception) -> str | None:
    """A hint for a Python kernel's own mistake that reads like asc-tui's (a twin dtype called
    like the C++ functional cast `half(x)`)."""
    m = _DTYPE_CALLED.search(str(exc))
    if m:
        name = m.group(1).lower()
        return f"the kernel API's types are numpy dtypes: write np.{name}(x) (or dtype.type(x)) for a value"
    return None


def _wrote_gm(core) -> bool:
    return core.gm_write > 0 or any(r is not None and r[3] == "SetValue(GM)" for r in core.rec)


def _launch(
    kernel, gm_args, tiling, block_dim: int, chip: ChipModel, numeric, sanitizer, timeout_s, configure
) -> EmulationResult:
    if block_dim < 1:
        raise KernelError(f"block_dim must be at least 1, got {block_dim}")
    # a kernel entry (`ascendc.kernel`) carries its function and core type; a plain function
    # runs on vector cores
    fn = getattr(kernel, "fn", kernel)
    core_type = CoreType(getattr(kernel, "core_type", CoreType.AIV))
    if core_type != CoreType.MIX:
        chip = chip.single_unit  # the 256 B UB reserve is a mix kernel's only
    run = Run(chip, numeric, block_dim, sanitizer, core_type)
    if configure is not None:
        configure(run)
    handed_hccl = run.hccl is not None
    n_cores = chip.aic if core_type in (CoreType.AIC, CoreType.MIX) else chip.aiv
    if core_type != CoreType.AIV and numeric and run.lineage and sanitizer is None:
        run.wide = {}
    guessed = None
    if core_type != CoreType.AIV and not run.l2_record and run.l2_counts is None:
        from .memory.l2 import l2_enabled

        if l2_enabled(run):  # cube launches: count GM re-reads first (see npu/memory/l2.py)
            guessed = _l2_counts(run, kernel, gm_args, tiling, block_dim, chip, timeout_s)
    mix = core_type == CoreType.MIX
    core_free = [0.0] * n_cores
    closed = []
    ops: dict[str, int] = {}
    lines: dict[tuple[str, int], int] = {}
    gm_read = gm_write = 0
    coop = run.blocks = (
        Blocks(block_dim, n_cores) if (block_dim > 1 or mix) and _waits(kernel, tiling) else None
    )
    replayer = Replayer(block_dim) if _may_replay(run, mix, coop) else None
    pending = Pending()  # replayed blocks of a full run whose numbers are still to run
    with _deadline(timeout_s), _gc_paused(), _numbers_done(numeric), _stopped(coop):
        for b in range(block_dim):
            core_id = b % n_cores
            wave = b // n_cores
            n_active = wave_cores(block_dim, wave, n_cores)
            if coop is not None:  # the block before this one on its core must have ended
                coop.need_core(b, core_id, b - n_cores if b >= n_cores else None)
            t0 = core_free[core_id]
            if replayer is not None:
                plan = run.hbm_plan
                plan = plan[run.cores_made] if plan is not None and run.cores_made < len(plan) else None
                tpl = replayer.find(b, t0, n_active, plan, timed=not run.l2_record)
                if tpl is not None and numeric and not tpl.program.in_bounds(b):
                    tpl = None  # (the template's guards keep its GM views in bounds: defensive)
                if tpl is not None:  # the same stream as a block already run: copy its records
                    run.cores_made += 1  # it stands for a core (its index into `hbm_plan`)
                    if tpl.columns is not None:
                        closed.append(
                            ClosedBlock(b, core_id, wave, t0, tpl.t_end, tpl.issued, dict(tpl.columns))
                        )
                        run.groups.add(core_id, tpl.xfers, closed[-1])
                    core_free[core_id] = max(core_free[core_id], tpl.t_end)
                    gm_read += tpl.gm_read
                    gm_write += tpl.gm_write
                    for key, times in tpl.warned.items():
                        run._warnings[key][5] += times
                    if run.l2 is not None:
                        run.l2.repeat(tpl.guards.l2, b)
                    if numeric:  # its numbers: the template's trace, run in a batch (numtrace.py)
                        pending.add(tpl.program, b)
                    continue
                pending.flush()  # blocks run step by step come after the replayed ones before them
            group = None
            core = None if mix else Core(run, b, core_id, wave, t0, n_active)
            guards = None
            symbolic = False  # GetBlockIdx() returns a `BlockIndex` (npu/replay/replay.py)
            if replayer is not None and core.dma_is_local and replayer.tracing:
                # a shared-HBM rerun's template whose first-pass run derived its guards runs
                # with its plain index on them: it re-times the same stream (npu/memory/shared_hbm.py)
                guards = run.known.get(b) if run.known is not None else None
                if guards is None:
                    core.block_index, guards = replayer.index(b)
                    symbolic = True
                if numeric:  # vector ops' effects, or a cube core's tile jobs (cubetrace.py)
                    cube = core_type == CoreType.AIC
                    core.trace = CubeTrace(chip.memory.get("l0c", 0), block_dim) if cube else NumTrace()
                warned = {k: w[5] for k, w in run._warnings.items()}
                logged = len(run.log)
            state.core = core
            installed = _install_range(fn) if symbolic else ()
            ended = [(core_id, (core,), False)]  # (core id, its cores, the sanitizer saw its end)
            try:
                if mix and coop is None:  # 1 AIC + its AIVs, cooperatively (npu/mix.py)
                    group = run_group(
                        run, fn, (*gm_args, tiling), b, core_id, wave, core_free[core_id], n_active
                    )
                    ended = [(core_id, group, False)]
                elif guards is None and coop is not None:  # blocks that may wait for each other
                    args = (run, fn, (*gm_args, tiling), b, core_id, wave, core_free[core_id], n_active)
                    coop.start(b, core, partial(run_group, *args) if mix else partial(fn, *gm_args, tiling))
                    if b == block_dim - 1:  # (the last block is never a copy when blocks wait:
                        coop.finish()  # only template runs are copied, and they never wait)
                    ended = [_ended(coop, x) for x in coop.take_done()]
                elif guards is None:
                    fn(*gm_args, tiling)
                else:
                    _template_run(fn, gm_args, tiling, core)
            except OperatorError as exc:
                bad = coop.failed[0] if coop is not None and coop.failed else b
                exc.message = f"block {bad}: {exc.message}" if block_dim > 1 else exc.message
                raise
            except KernelTimeout:
                raise
            except RecursionError as exc:
                file, line = location_from_traceback(exc.__traceback__)
                raise KernelException("RecursionError in the kernel", file, line) from None
            except Exception as exc:  # the user's kernel code raised, or asc-tui's
                bad = coop.failed[0] if coop is not None and coop.failed else b
                raise _user_error(kernel, exc, f" (block {bad})" if block_dim > 1 else "") from None
            finally:
                state.core = None
                for name in installed:
                    del fn.__globals__[name]
            done = None
            for cid, subs, seen in ended:
                if run.l2_record:  # the L2 pre-pass only counts GM reads: no timelines to build
                    for sub in subs:
                        core_free[cid] = max(core_free[cid], sub.end_time())
                for sub in () if run.l2_record else subs:
                    if sanitizer is not None and not seen:  # block threads (coop.py) end their own
                        sanitizer.end_block(sub)
                    done = sub.close(ops, lines)
                    run.groups.add(sub.core_id, sub.xfers, done)
                    closed.append(done)
                    if done.t_end > core_free[cid]:
                        core_free[cid] = done.t_end
                    gm_read += sub.gm_read
                    gm_write += sub.gm_write
            program = None
            if guards is not None and numeric:
                if not guards.pinned and done is not None and core.lazy is None:
                    program = core.trace.compile(done.columns, b)
                # drop the trace now: kernel objects (TPipe -> core) form cycles that only the
                # garbage collector frees, and it is paused during a launch (Core.close)
                core.trace = None
                # a trace refused, or a template pinned, is the kernel's code (an op no trace
                # describes, a read of data, an int() of the block index): the launch's other
                # blocks would do the same, so they run plain, without the template's costs
                replayer.tracing = program is not None
            if (
                guards is not None
                and len(run.log) == logged
                and run.hccl is None
                and (program or not numeric)
            ):
                if not guards.pinned:  # (a pin may be this pass's own: L2 in loop extrapolation)
                    run.learned[b] = guards
                replayer.learn(
                    Template(
                        guards,
                        t0,
                        n_active,
                        core.end_time() if done is None else done.t_end,
                        0.0 if done is None else done.issued,
                        None if done is None else dict(done.columns),
                        core.gm_read,
                        core.gm_write,
                        {
                            k: w[5] - warned.get(k, 0)
                            for k, w in run._warnings.items()
                            if w[5] != warned.get(k, 0)
                        },
                        core.xfers,
                        core.plan,
                        program,
                    )
                )
        pending.flush()
        if coop is not None:  # blocks that waited for each other end out of order
            closed.sort(key=lambda c: c.block)
        retimed = None  # a full launch's timeline on the pre-pass's counts, if not the guessed
        if guessed is not None:
            retimed = _check_guess(run, kernel, gm_args, tiling, block_dim, chip, timeout_s, *guessed)
        # the shared HBM (npu/memory/hbm.py): exact already when the wave's cores ran in lockstep
        # (npu/memory/lockstep.py); else every transfer, read from the columns before they are joined.
        # Blocks that wait for each other (coop.py) keep the lockstep prices: their threads make
        # sub-cores in an order a plan could not follow.
        if run.hbm_shared and not handed_hccl and coop is None and len(run.groups) and retimed is None:
            run.hbm_xf = transfers_unless_lockstep(run, block_dim, n_cores)
        run.groups = None
        rerun = run.hbm_xf is not None and run.hbm_plan is None
        if not rerun:  # (a rerun's timeline replaces this one's: built below if none holds)
            records, blocks = timelines(closed)
            del closed
    # the jobs are done: free the widened operands now, not when the garbage collector finds
    # the launch's kernel objects (cycles) — a later launch then gets their memory back from
    # the allocator instead of fresh pages (a page fault per 4 KB: 1024³ fp16 full emulation
    # took ~1,650 faults a launch, ~4 µs each in the benchmark VM, against ~130 now)
    run.wide = run.mmad_widened = None
    # the records' op and line ids index these tables: they travel with the records (a rerun's
    # records below bring their own — its launch interned them in its own order)
    op_names, sites = tuple(sorted(ops, key=ops.get)), tuple(sorted(lines, key=lines.get))
    del ops, lines
    shared = None
    if rerun:
        # a timing-only first pass is let go before a rerun (recomputed only if no rerun holds):
        # two passes' records of a 16384³ matmul would not fit in memory side by side
        first = [closed]
        del closed
        shared = share_hbm(
            launch, run, kernel, gm_args, tiling, block_dim, timeout_s, None if numeric else first
        )
        if shared is not None:  # the fixed point's timeline replaces the first pass's
            records, blocks, op_names, sites = shared.records, shared.blocks, shared.ops, shared.lines
        else:
            records, blocks = timelines(first[0])
        del first
    kernel_cycles = max((t.t_end for t in blocks), default=0.0)
    log = [
        LogEntry(t / chip.clock_mhz, blk, pipe, f, ln, text, lvl)
        for t, blk, pipe, f, ln, text, lvl in run.log
    ]
    if shared is not None:  # at the times of the timeline they are shown with
        log = retimed_log(log, shared.log)
    log = in_log_order(log)
    capacity = {m: (used, chip.usable.get(m, 0)) for m, used in run.peak.items()}
    result = EmulationResult(
        chip=chip.name,
        clock_mhz=chip.clock_mhz,
        mode=Mode.FULL if numeric else Mode.TIMING,
        block_dim=block_dim,
        cores_used=min(block_dim, n_cores),
        kernel_cycles=kernel_cycles,
        launch_overhead_us=chip.launch_overhead_us,
        blocks=blocks,
        ops=op_names,
        lines=sites,
        gm_read=gm_read,
        gm_write=gm_write,
        log=log,
        warnings=run.warnings(),
        outputs=None,
        capacity=capacity,
        l2_hit=run.l2.hit_bytes if run.l2 is not None else 0,
        pipe_cores=_mix_pipe_cores(chip, min(block_dim, n_cores)) if mix else (),
        chip_model=chip,
        records=records,
    )
    if retimed is None:
        return result
    from .memory.l2guess import retimed as with_timeline

    return with_timeline(result, retimed)


def _l2_counts(run: Run, kernel, gm_args, tiling, block_dim: int, chip, timeout_s) -> tuple | None:
    """Set the launch's L2 read counts: guessed from earlier launches (a full launch's only from
    one with the same tiling, npu/l2guess.check_full; returns what `_check_guess` needs), else
    counted by the pre-pass."""
    from .memory import l2guess
    from .memory.l2 import prepass_counts

    full = run.numeric
    watched = full and (run.san is not None or run.hccl is not None)  # (a pre-pass it is, then)
    key = None if watched else l2guess.book_key(getattr(kernel, "fn", kernel), gm_args, chip, full)
    fields = l2guess.tiling_fields(tiling, block_dim)
    guess = l2guess.guess(key, fields, exact=full)
    if guess is not None:
        run.l2_counts = guess
        run.l2_tally = True
        return key, fields, guess
    run.l2_counts = prepass_counts(launch, kernel, gm_args, tiling, block_dim, chip, timeout_s)
    l2guess.learn(key, fields, run.l2_counts)
    return None


def _check_guess(run: Run, kernel, gm_args, tiling, block_dim, chip, timeout_s, key, fields, guess):
    """Keep a timing-only launch run on guessed L2 counts only when it read exactly as counted;
    a full launch's timeline on the pre-pass's counts when they are not the guessed ones."""
    from .memory import l2guess

    if run.numeric:
        return l2guess.check_full(run, launch, kernel, gm_args, tiling, block_dim, chip, timeout_s, guess)
    if run.l2 is None:  # nothing was read through L2: the guess changed nothing
        return None
    counted = run.l2.recorded()
    l2guess.learn(key, fields, counted)
    if not l2guess.same_counts(counted, guess):
        raise _Misguessed(counted)
    counted.hits.update(guess.hits)  # the same counts: the regions' hits worked out so far hold
    run.l2_counts = counted  # the same counts, with this launch's own regions (for HBM passes)
    return None


def _may_replay(run: Run, mix: bool, coop) -> bool:
    """Whether blocks of this launch may copy a template's records (npu/replay/replay.py): one core per
    block, nothing that watches or counts each block's own accesses. A full run's numbers come
    from the template's trace (npu/replay/numtrace.py; a cube launch's: npu/replay/cubetrace.py): only plain
    vector or cube launches, whose blocks never wait for each other and have no collective
    context, trace theirs."""
    if not run.replay or mix or run.san is not None:
        return False
    plain = run.core_type in (CoreType.AIV, CoreType.AIC)
    return not run.numeric or (plain and coop is None and run.hccl is None)


def _install_range(fn) -> tuple:
    """Give the kernel's module `blockindex.trange` as its `range` for a template run, so a loop
    over `range(GetBlockIdx(), n, GetBlockNum())` keeps its tiles tainted instead of pinning
    the template, and `tmin`/`tmax` as its `min`/`max` (a tie between blocks does not split
    them); the names installed, leaving any the module defines itself."""
    g = getattr(fn, "__globals__", None)
    if g is None:
        return ()
    names = tuple(name for name in _TAINTED if name not in g)
    for name in names:
        g[name] = _TAINTED[name]
    return names


#: the builtins a template run's kernel module gets instead (npu/replay/replay.py)
_TAINTED = {"range": trange, "min": tmin, "max": tmax}


def _mix_pipe_cores(chip: ChipModel, groups: int) -> tuple:
    """Per pipe, the sub-cores that have it in `groups` AI Cores of 1 AIC + n AIV (910B: 2)."""
    n = int(chip.raw.get("cores", {}).get("aiv_per_aic", 2))
    aic, aiv = groups, groups * n
    by_name = {
        "scalar": aic + aiv,
        "vec": aiv,
        "cube": aic,
        "mte1": aic,
        "mte2": aic + aiv,
        "mte3": aiv,
        "fixpipe": aic,
    }
    return tuple(by_name[p] for p in PIPE_NAMES)


def _waits(kernel, tiling) -> bool:
    """Whether the kernel may wait for other blocks: its own answer (a C++ kernel reads its
    source) or what its Python code names (npu/coop.py)."""
    own = getattr(kernel, "may_wait", None)
    if callable(own):
        return own(tiling)
    fn = getattr(kernel, "fn", kernel)
    try:  # (reading the module's code costs ~2 ms; a tuner launches one kernel hundreds of times)
        known = _waiting.get(fn)
    except TypeError:  # not weakly referenceable
        return may_wait(fn)
    if known is None:
        known = _waiting[fn] = may_wait(fn)
    return known


#: kernel function -> whether its code may wait for other blocks (`may_wait`, per function)
_waiting: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _ended(coop: Blocks, b: int) -> tuple:
    """(core id, cores, whether the sanitizer saw its end) of a finished cooperative block."""
    core, result = coop.cores.pop(b), coop.results.pop(b)
    if core is None:  # a mixed block: its sub-cores, the AIC first
        return result[0].core_id, result, False
    return core.core_id, (core,), True


class _stopped:
    """End the block threads of a launch: the idle ones, and after an error in the launcher
    every one still waiting or running."""

    def __init__(self, coop: Blocks | None):
        self.coop = coop

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        if self.coop is not None:  # (after a normal end only idle block threads are left)
            self.coop.stop()
        return False


class _gc_paused:
    """Keep Python's cyclic garbage collector off while the blocks run.

    Why: a launch allocates millions of short-lived objects while its instruction records (one
    tuple each) pile up; the collector's generation-1/2 passes over them cost ~17% of a
    timing-only launch (vector_add_bias, 287k records: 296k → 357k instructions/s with it off).
    Kernel objects rarely form cycles, and whatever does is collected once the launch is over.
    """

    def __enter__(self):
        self.was_enabled = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc):
        if self.was_enabled:
            gc.enable()
        return False


class _numbers_done:
    """Leave a launch only when the cube numbers it handed to the numbers thread are in
    (npu/numbers/offload.py); if the launch failed, its error wins over the thread's. BLAS threads and
    CPU pinning are restored (`finish`) only after that last job. A timing-only launch (the
    L2 pre-pass) hands over nothing and does not wait for the jobs of others."""

    def __init__(self, numeric: bool):
        self.numeric = numeric

    def __enter__(self):
        numbers.begin()
        return self

    def __exit__(self, exc_type, *exc):
        try:
            if self.numeric:
                numbers.drain()
        except Exception:
            if exc_type is None:
                raise
        finally:
            numbers.finish()
        return False


def _progress(core) -> str:
    """How far the running block got: tells an endless loop (few instructions, or the same
    line forever) from a kernel that is merely too large for the limit."""
    if core is None:
        return ""
    return f", block {core.block} had issued {len(core.rec):,} instructions"


class _deadline:
    """Stop a runaway kernel after `seconds` (main thread, POSIX): raises KernelTimeout there."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.active = (
            seconds is not None
            and seconds > 0
            and os.name == "posix"
            and threading.current_thread() is threading.main_thread()
        )

    def __enter__(self):
        if self.active:
            self.old = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    def _fire(self, signum, frame):
        import sys
        import sysconfig

        from .errors import is_user_file

        stdlib = sysconfig.get_paths()["stdlib"]

        def user(f):
            while f is not None and (
                not is_user_file(f.f_code.co_filename) or f.f_code.co_filename.startswith(stdlib)
            ):
                f = f.f_back
            return f

        # a mixed kernel runs its sub-cores in threads named "asc-tui block …" (npu/mix.py)
        frames = sys._current_frames()
        subs = [
            user(frames.get(t.ident)) for t in threading.enumerate() if t.name.startswith("asc-tui block")
        ]
        f = next((u for u in subs if u is not None), None) or user(frame)
        f = f or frame
        raise KernelTimeout(
            f"the kernel did not finish within {self.seconds:.3g} s; it was running this line"
            + _progress(state.core),
            f.f_code.co_filename,
            f.f_lineno,
            hint="an endless loop issues few instructions; if the kernel is just long, raise the "
            "limit with --timeout or run it --timing-only",
        )

    def __exit__(self, *exc):
        if self.active:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.old)
        return False


__all__ = ["launch", "make_gm", "Run", "KernelTimeout", "PIPE_NAMES"]
