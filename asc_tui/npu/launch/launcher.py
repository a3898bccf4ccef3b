"""Launch a kernel on `block_dim` blocks of the emulated chip and collect the timeline.

Blocks map onto cores round-robin in waves (block b → core b mod N, wave b div N); a block starts
when its core finished the previous one. HBM bandwidth is shared moment by moment by every GM
transfer in flight (npu/memory/hbm.py): the first pass prices each transfer as if the wave's cores ran
in lockstep (npu/memory/lockstep.py), exact when they did; otherwise timing-only passes follow the
shared-HBM durations (npu/memory/shared_hbm.py). A kernel whose code may wait for other blocks
(SyncAll, all-core cross-core flags) runs its blocks as cooperative threads (npu/coop.py); the
others run one after another in the launching thread.
"""

from __future__ import annotations

from ..chip import ChipModel
from ..columns import timelines
from ..cores import CoreType
from ..errors import KernelError
from ..memory.gm import GM_ADDR
from ..memory.shared_hbm import share_hbm, transfers_unless_lockstep
from ..pipes import PIPE_NAMES
from ..results import EmulationResult, LogEntry, Mode, in_log_order, retimed_log
from .blocks import BlockPass, StepByStep
from .context import Run
from .guards import deadline, gc_paused, numbers_done, stopped


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
    except StepByStep:

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


class _Misguessed(BaseException):
    """A launch run on guessed L2 counts (npu/memory/l2guess.py) tallied others: `counts`, which a
    pre-pass would have found."""

    def __init__(self, counts):
        super().__init__()
        self.counts = counts


def _launch(
    kernel, gm_args, tiling, block_dim: int, chip: ChipModel, numeric, sanitizer, timeout_s, configure
) -> EmulationResult:
    """One launch: its context, the L2 counts of a cube launch, one pass over the blocks under the
    launch's guards, then the timeline (re-timed under the shared HBM when the first pass is
    not exact already) and the result."""
    if block_dim < 1:
        raise KernelError(f"block_dim must be at least 1, got {block_dim}")
    run = _new_run(kernel, chip, numeric, block_dim, sanitizer, configure)
    chip = run.chip
    handed_hccl = run.hccl is not None
    n_cores = chip.aic if run.core_type in (CoreType.AIC, CoreType.MIX) else chip.aiv
    guessed = None
    if _counts_l2(run):  # cube launches: count GM re-reads first (see npu/memory/l2.py)
        guessed = _l2_counts(run, kernel, gm_args, tiling, block_dim, chip, timeout_s)
    bpass = BlockPass(run, kernel, gm_args, tiling, n_cores, sanitizer)
    with deadline(timeout_s, bpass.fn), gc_paused(), numbers_done(numeric), stopped(bpass.coop):
        bpass.run_blocks()
        retimed = None  # a full launch's timeline on the pre-pass's counts, if not the guessed
        if guessed is not None:
            retimed = _check_guess(run, kernel, gm_args, tiling, block_dim, chip, timeout_s, *guessed)
        rerun = _needs_rerun(run, n_cores, handed_hccl or bpass.coop is not None or retimed is not None)
        if not rerun:  # (a rerun's timeline replaces this one's: built below if none holds)
            timeline = timelines(bpass.closed)
            bpass.closed = None
    # the jobs are done: free the widened operands now, not when the garbage collector finds
    # the launch's kernel objects (cycles) — a later launch then gets their memory back from
    # the allocator instead of fresh pages (a page fault per 4 KB: 1024³ fp16 full emulation
    # took ~1,650 faults a launch, ~4 µs each in the benchmark VM, against ~130 now)
    run.wide = run.mmad_widened = None
    # the records' op and line ids index these tables: they travel with the records (a rerun's
    # records below bring their own — its launch interned them in its own order)
    tables = bpass.tables()
    shared = None
    if rerun:
        shared, timeline = _rerun(run, kernel, gm_args, tiling, timeout_s, bpass)
        if shared is not None:  # the fixed point's timeline replaces the first pass's
            timeline, tables = (shared.records, shared.blocks), (shared.ops, shared.lines)
    result = _result(run, n_cores, bpass, timeline, tables, shared)
    if retimed is None:
        return result
    from ..memory.l2guess import retimed as with_timeline

    return with_timeline(result, retimed)


def _new_run(kernel, chip: ChipModel, numeric: bool, block_dim: int, sanitizer, configure) -> Run:
    """The launch's context, on the chip its kernel's core type sees, after `configure`."""
    # a kernel entry (`ascendc.kernel`) carries its function and core type; a plain function
    # runs on vector cores
    core_type = CoreType(getattr(kernel, "core_type", CoreType.AIV))
    if core_type != CoreType.MIX:
        chip = chip.single_unit  # the 256 B UB reserve is a mix kernel's only
    run = Run(chip, numeric, block_dim, sanitizer, core_type)
    if configure is not None:
        configure(run)
    if core_type != CoreType.AIV and numeric and run.lineage and sanitizer is None:
        run.wide = {}
    return run


def _counts_l2(run: Run) -> bool:
    """Whether the launch needs L2 read counts before it runs: a cube launch under the L2 model
    that is not the counting pre-pass itself and was not handed counts."""
    if run.core_type == CoreType.AIV or run.l2_record or run.l2_counts is not None:
        return False
    from ..memory.l2 import l2_enabled

    return l2_enabled(run)


def _l2_counts(run: Run, kernel, gm_args, tiling, block_dim: int, chip, timeout_s) -> tuple | None:
    """Set the launch's L2 read counts: guessed from earlier launches (a full launch's only from
    one with the same tiling, npu/l2guess.check_full; returns what `_check_guess` needs), else
    counted by the pre-pass."""
    from ..memory import l2guess
    from ..memory.prepass import prepass_counts

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
    from ..memory import l2guess

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


def _needs_rerun(run: Run, n_cores: int, lockstep_only: bool) -> bool:
    """Whether the launch must be re-timed under the shared HBM; sets the transfers to share
    (`run.hbm_xf`)."""
    # the shared HBM (npu/memory/hbm.py): exact already when the wave's cores ran in lockstep
    # (npu/memory/lockstep.py); else every transfer, read from the columns before they are joined.
    # Blocks that wait for each other (coop.py) keep the lockstep prices: their threads make
    # sub-cores in an order a plan could not follow.
    if run.hbm_shared and not lockstep_only and len(run.groups):
        run.hbm_xf = transfers_unless_lockstep(run, run.block_dim, n_cores)
    run.groups = None
    return run.hbm_xf is not None and run.hbm_plan is None


def _rerun(run: Run, kernel, gm_args, tiling, timeout_s, bpass: BlockPass) -> tuple:
    """Re-time the launch under the shared HBM (npu/memory/shared_hbm.py): (the fixed point's
    result, None), or (None, the first pass's timeline) when the first pass holds."""
    # a timing-only first pass is let go before a rerun (recomputed only if no rerun holds):
    # two passes' records of a 16384³ matmul would not fit in memory side by side
    first = [bpass.closed]
    bpass.closed = None
    shared = share_hbm(
        launch, run, kernel, gm_args, tiling, run.block_dim, timeout_s, None if run.numeric else first
    )
    if shared is not None:
        return shared, None
    return None, timelines(first[0])


def _result(
    run: Run, n_cores: int, bpass: BlockPass, timeline: tuple, tables: tuple, shared
) -> EmulationResult:
    """The launch's result: the timeline (cycles) and its op and line tables, the log in µs at
    the times of the timeline, the GM bytes, each memory's peak use against its capacity."""
    chip, block_dim, numeric, mix = run.chip, run.block_dim, run.numeric, run.core_type == CoreType.MIX
    (records, blocks), (op_names, sites) = timeline, tables
    gm_read, gm_write = bpass.gm_read, bpass.gm_write
    kernel_cycles = max((t.t_end for t in blocks), default=0.0)
    log = [
        LogEntry(t / chip.clock_mhz, blk, pipe, f, ln, text, lvl)
        for t, blk, pipe, f, ln, text, lvl in run.log
    ]
    if shared is not None:  # at the times of the timeline they are shown with
        log = retimed_log(log, shared.log)
    log = in_log_order(log)
    capacity = {m: (used, chip.usable.get(m, 0)) for m, used in run.peak.items()}
    return EmulationResult(
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


__all__ = ["launch"]
