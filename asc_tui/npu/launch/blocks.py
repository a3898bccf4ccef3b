"""One pass of a launch over its blocks, in waves: each block is either a copy of a template's
records (block replay, npu/replay/replay.py) or runs its kernel code step by step, maybe as a
template to learn; its cores are then closed into timeline columns.

Blocks map onto cores round-robin in waves (block b → core b mod N, wave b div N); a block starts
when its core finished the previous one.
"""

from __future__ import annotations

import re
import weakref
from functools import partial

from .. import state
from ..chip import wave_cores
from ..columns import ClosedBlock
from ..coop import Blocks, may_wait
from ..core import Core
from ..cores import CoreType
from ..errors import KernelException, OperatorError, internal_error, location_from_traceback
from ..mix import run_group
from ..replay.blockindex import tmax, tmin, trange
from ..replay.cubetrace import CubeTrace
from ..replay.numtrace import NumTrace, Pending
from ..replay.replay import Replayer, Template
from .context import Run
from .guards import KernelTimeout


class StepByStep(BaseException):
    """A template run raised: not an Exception, so no handler of the kernel's errors wraps it.
    The launch catches it and starts over with every block step by step."""


class BlockPass:
    """The blocks of one launch run in order, and what they share while they run: the cores'
    free times (cycles), the closed blocks, the op and line ids their records intern, the GM
    bytes (read, written), the cooperative block threads (`coop`, None when no block waits for
    another), the template replayer (None when blocks may not copy templates) and the replayed
    blocks whose numbers are still to run (`pending`)."""

    def __init__(self, run: Run, kernel, gm_args, tiling, n_cores: int, sanitizer) -> None:
        block_dim = run.block_dim
        mix = run.core_type == CoreType.MIX
        self.run = run
        self.kernel = kernel
        self.fn = getattr(kernel, "fn", kernel)
        self.gm_args = gm_args
        self.tiling = tiling
        self.n_cores = n_cores
        self.mix = mix
        self.sanitizer = sanitizer
        self.core_free = [0.0] * n_cores
        self.closed: list | None = []
        self.ops: dict[str, int] | None = {}
        self.lines: dict[tuple[str, int], int] | None = {}
        self.gm_read = self.gm_write = 0
        coop = self.coop = run.blocks = (
            Blocks(block_dim, n_cores) if (block_dim > 1 or mix) and _waits(kernel, tiling) else None
        )
        self.replayer = Replayer(block_dim) if _may_replay(run, mix, coop) else None
        self.pending = Pending()  # replayed blocks of a full run whose numbers are still to run

    def run_blocks(self) -> None:
        """Run every block on its core: a copy of a template when one fits, else step by step."""
        block_dim, n_cores, coop, replayer = self.run.block_dim, self.n_cores, self.coop, self.replayer
        for b in range(block_dim):
            core_id = b % n_cores
            wave = b // n_cores
            n_active = wave_cores(block_dim, wave, n_cores)
            if coop is not None:  # the block before this one on its core must have ended
                coop.need_core(b, core_id, b - n_cores if b >= n_cores else None)
            t0 = self.core_free[core_id]
            if replayer is not None:
                if self.replayed(b, core_id, wave, t0, n_active):
                    continue
                self.pending.flush()  # blocks run step by step come after the replayed ones before them
            self.step(b, core_id, wave, t0, n_active)
        self.pending.flush()
        if coop is not None:  # blocks that waited for each other end out of order
            self.closed.sort(key=lambda c: c.block)

    def replayed(self, b: int, core_id: int, wave: int, t0: float, n_active: int) -> bool:
        """Copy the records of a template whose stream block b provably repeats (starting at
        cycle t0 among n_active cores); False when no template fits."""
        run = self.run
        plan = run.hbm_plan
        plan = plan[run.cores_made] if plan is not None and run.cores_made < len(plan) else None
        tpl = self.replayer.find(b, t0, n_active, plan, timed=not run.l2_record)
        if tpl is not None and run.numeric and not tpl.program.in_bounds(b):
            tpl = None  # (the template's guards keep its GM views in bounds: defensive)
        if tpl is None:
            return False
        # the same stream as a block already run: copy its records
        run.cores_made += 1  # it stands for a core (its index into `hbm_plan`)
        if tpl.columns is not None:
            self.closed.append(ClosedBlock(b, core_id, wave, t0, tpl.t_end, tpl.issued, dict(tpl.columns)))
            run.groups.add(core_id, tpl.xfers, self.closed[-1])
        self.core_free[core_id] = max(self.core_free[core_id], tpl.t_end)
        self.gm_read += tpl.gm_read
        self.gm_write += tpl.gm_write
        for key, times in tpl.warned.items():
            run._warnings[key][5] += times
        if run.l2 is not None:
            run.l2.repeat(tpl.guards.l2, b)
        if run.numeric:  # its numbers: the template's trace, run in a batch (numtrace.py)
            self.pending.add(tpl.program, b)
        return True

    def step(self, b: int, core_id: int, wave: int, t0: float, n_active: int) -> None:
        """Run block b's code step by step, as a template run when blocks may copy it, and
        close its cores; a template run that may stand for later blocks is learned."""
        run = self.run
        core = None if self.mix else Core(run, b, core_id, wave, t0, n_active)
        guards = None
        symbolic = False  # GetBlockIdx() returns a `BlockIndex` (npu/replay/replay.py)
        if self.replayer is not None and core.dma_is_local and self.replayer.tracing:
            guards, symbolic = self.as_template(b, core)
            warned = {k: w[5] for k, w in run._warnings.items()}
            logged = len(run.log)
        ended = self.run_code(b, core_id, wave, n_active, core, guards, symbolic)
        done = self.close(ended)
        if guards is not None:
            self.learn(b, t0, n_active, core, guards, done, warned, logged)

    def as_template(self, b: int, core: Core) -> tuple:
        """Make block b's run a template run: (its guards, whether its block index is symbolic);
        a full run's core gets a trace of its numbers."""
        run = self.run
        symbolic = False
        # a shared-HBM rerun's template whose first-pass run derived its guards runs
        # with its plain index on them: it re-times the same stream (npu/memory/shared_hbm.py)
        guards = run.known.get(b) if run.known is not None else None
        if guards is None:
            core.block_index, guards = self.replayer.index(b)
            symbolic = True
        if run.numeric:  # vector ops' effects, or a cube core's tile jobs (cubetrace.py)
            cube = run.core_type == CoreType.AIC
            core.trace = CubeTrace(run.chip.memory.get("l0c", 0), run.block_dim) if cube else NumTrace()
        return guards, symbolic

    def run_code(self, b: int, core_id: int, wave: int, n_active: int, core, guards, symbolic: bool) -> list:
        """Run block b's kernel code and report a failure on the user's line: the blocks that
        ended, each as (core id, its cores, whether the sanitizer saw its end)."""
        run, fn, gm_args, tiling = self.run, self.fn, self.gm_args, self.tiling
        block_dim, coop, core_free = run.block_dim, self.coop, self.core_free
        state.core = core
        installed = _install_range(fn) if symbolic else ()
        ended = [(core_id, (core,), False)]  # (core id, its cores, the sanitizer saw its end)
        try:
            if self.mix and coop is None:  # 1 AIC + its AIVs, cooperatively (npu/mix.py)
                group = run_group(run, fn, (*gm_args, tiling), b, core_id, wave, core_free[core_id], n_active)
                ended = [(core_id, group, False)]
            elif guards is None and coop is not None:  # blocks that may wait for each other
                args = (run, fn, (*gm_args, tiling), b, core_id, wave, core_free[core_id], n_active)
                coop.start(b, core, partial(run_group, *args) if self.mix else partial(fn, *gm_args, tiling))
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
            raise _user_error(self.kernel, exc, f" (block {bad})" if block_dim > 1 else "") from None
        finally:
            state.core = None
            for name in installed:
                del fn.__globals__[name]
        return ended

    def close(self, ended: list) -> ClosedBlock | None:
        """Close the cores of the blocks that ended into timeline columns, and move their cores'
        free times and the GM byte counts on; the last block closed (None: none was)."""
        run, sanitizer, core_free = self.run, self.sanitizer, self.core_free
        done = None
        for cid, subs, seen in ended:
            if run.l2_record:  # the L2 pre-pass only counts GM reads: no timelines to build
                for sub in subs:
                    core_free[cid] = max(core_free[cid], sub.end_time())
            for sub in () if run.l2_record else subs:
                if sanitizer is not None and not seen:  # block threads (coop.py) end their own
                    sanitizer.end_block(sub)
                done = sub.close(self.ops, self.lines)
                run.groups.add(sub.core_id, sub.xfers, done)
                self.closed.append(done)
                if done.t_end > core_free[cid]:
                    core_free[cid] = done.t_end
                self.gm_read += sub.gm_read
                self.gm_write += sub.gm_write
        return done

    def learn(self, b: int, t0: float, n_active: int, core, guards, done, warned: dict, logged: int) -> None:
        """After block b's template run: compile its numbers' trace (a full run), and keep it as
        a template for later blocks when nothing it did was its own (a log line, a collective)."""
        run, numeric, replayer = self.run, self.run.numeric, self.replayer
        program = None
        if numeric:
            if not guards.pinned and done is not None and core.lazy is None:
                program = core.trace.compile(done.columns, b)
            # drop the trace now: kernel objects (TPipe -> core) form cycles that only the
            # garbage collector frees, and it is paused during a launch (Core.close)
            core.trace = None
            # a trace refused, or a template pinned, is the kernel's code (an op no trace
            # describes, a read of data, an int() of the block index): the launch's other
            # blocks would do the same, so they run plain, without the template's costs
            replayer.tracing = program is not None
        if len(run.log) == logged and run.hccl is None and (program or not numeric):
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

    def tables(self) -> tuple[tuple, tuple]:
        """(op names, line sites) that the records' op and line ids index, in the order this
        pass interned them; the pass lets its tables go."""
        ops, lines = self.ops, self.lines
        self.ops = self.lines = None
        return tuple(sorted(ops, key=ops.get)), tuple(sorted(lines, key=lines.get))


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
        raise StepByStep from None


def _wrote_gm(core) -> bool:
    return core.gm_write > 0 or any(r is not None and r[3] == "SetValue(GM)" for r in core.rec)


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


#: Kernel sources that are C++ (the generated Python's exceptions are not the user's words).
_CXX_SOURCES = (".asc", ".cpp", ".cc", ".cxx", ".h", ".hpp", ".hh", ".inc")


def _user_error(kernel, exc: Exception, suffix: str) -> OperatorError:
    """What the user sees for an exception out of a block: the kernel's own words for it (a C++
    kernel's `explain`: C++ words, not Python's), "internal error in asc-tui" when asc-tui's code
    raised, else the user's Python exception at its line."""
    file, line = location_from_traceback(exc.__traceback__)
    if isinstance(exc, ZeroDivisionError) and file and file.endswith(_CXX_SOURCES):
        err = KernelException("integer division by zero", file, line)
        err.message += suffix
        return err
    explain = getattr(kernel, "explain", None)
    err = explain(exc) if explain is not None else None
    if err is None:
        err = internal_error(exc, doing="while running the kernel")
    if err is None:
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
