"""Cross-core synchronisation inside one AI Core (AIC ↔ AIV), as in Ascend C on 910B.

`CrossCoreSetFlag(modeId, pipe, flagId)` / `CrossCoreWaitFlag(modeId, pipe, flagId)` (the C++
template arguments come first), `CrossCoreSetFlag[modeId, pipe](flagId)`, or just `(flagId)`
for mode 2 (set on PIPE_FIX, wait on PIPE_S).

- mode 2 (AIC ↔ AIV of the same AI Core): a set on the AIC can be waited once by each AIV; the
  AIC's wait needs a set from every AIV.
- mode 1 (AIVs of the same AI Core): every AIV sets, then each AIV's wait returns once all have.
- mode 0 (all cores of one kind in the launch: every AIV, or every AIC): the n-th wait of a core
  returns once every such core made its n-th set. The blocks wait for each other as
  cooperative threads (`npu/coop.py`); one that never sets leaves the others in a deadlock error.

Timing: the flag becomes visible `cross_core_latency_cycles` after the setting pipe finished
everything issued before it; the wait holds `pipe` (default the scalar unit) until then.
"""

from __future__ import annotations

import sys
from collections import deque

from ... import PACKAGE_DIR
from ...npu import state
from ...npu.cores import CoreType
from ...npu.errors import KernelError, SyncError, user_frame
from ...npu.records import KIND_SET, record
from ..corestate import registers
from ..enums import Pipe
from .blocksync import blocks_of

_PKG = str(PACKAGE_DIR)
MAX_FLAG_ID = 16  # 910B: 16 cross-core flag ids (0..15), Ascend C CrossCoreSetFlag docs


def _frame(depth: int):
    fr = sys._getframe(depth)
    if fr.f_code.co_filename.startswith(_PKG):
        fr = user_frame(depth + 1) or fr
    return fr


def _group(core, what: str, fr):
    g = core.group
    if g is None:
        raise KernelError(
            f"{what} needs a mixed kernel: declare it with "
            '@AscendC.kernel(core_type="mix") so AIC and AIV run together',
            fr.f_code.co_filename,
            fr.f_lineno,
        )
    return g


def _check(mode: int, flag: int, what: str, fr) -> None:
    if mode not in (0, 1, 2):
        raise KernelError(f"{what}: modeId must be 0, 1 or 2, got {mode}", fr.f_code.co_filename, fr.f_lineno)
    if not 0 <= flag < MAX_FLAG_ID:
        raise SyncError(
            f"{what}: flag id {flag} is out of range 0..{MAX_FLAG_ID - 1}", fr.f_code.co_filename, fr.f_lineno
        )


def _track(core, is_set: bool, mode: int, flag: int, defaulted: bool) -> int:
    """The mode of a wait written without one (`CrossCoreWaitFlag(flagId)`): the mode of this
    core's own earliest set of the flag not waited yet (modes 0 and 1 set and wait on the same
    core), else 2 (the AIC↔AIV default)."""
    if core.group is None and core.run.blocks is None and not (is_set or mode == 0):
        return mode
    opened = registers(core)[3].setdefault("cross_core_open", {})
    q = opened.setdefault(flag, deque())
    if is_set:
        if mode in (0, 1):
            q.append(mode)
        return mode
    if q and (defaulted or q[0] == mode):
        return q.popleft()
    return mode


def cross_core_latency(core) -> float:
    """Cycles until a cross-core flag or message is seen by the other core (the chip file's
    `cube.cross_core_latency_cycles`)."""
    return float(core.chip.section("cube").get("cross_core_latency_cycles", 100))


def _parse(args, default_pipe):
    if len(args) == 1:
        return 2, default_pipe, int(args[0])
    if len(args) == 3:
        return int(args[0]), Pipe(args[1]), int(args[2])
    fr = user_frame()
    raise KernelError(
        f"CrossCore flag calls take (flagId) or (modeId, pipe, flagId), got {len(args)} arguments",
        fr.f_code.co_filename if fr else None,
        fr.f_lineno if fr else None,
    )


class _CrossCore:
    def __init__(self, name: str, is_set: bool):
        self.__name__ = name
        self.is_set = is_set

    def __call__(self, *args, _depth: int = 2) -> None:
        fr = _frame(_depth)
        core = state.core
        try:
            mode, pipe, flag = _parse(args, Pipe.PIPE_FIX if self.is_set else Pipe.PIPE_S)
        except (TypeError, ValueError) as exc:
            raise KernelError(f"{self.__name__}: {exc}", fr.f_code.co_filename, fr.f_lineno) from None
        mode = _track(core, self.is_set, mode, flag, len(args) == 1)
        what = f"{self.__name__}({mode}, {pipe.name}, {flag})"
        _check(mode, flag, what, fr)
        if mode == 0:
            self._all_cores(core, int(pipe), flag, what, fr)
            return
        g = _group(core, what, fr)
        me = g.cores.index(core)
        n_aiv = len(g.cores) - 1
        p = int(pipe)
        if self.is_set:
            if core.kind == CoreType.AIC and mode == 1:
                raise KernelError(
                    f"{what}: mode 1 syncs the AIVs; the AIC uses mode 2", fr.f_code.co_filename, fr.f_lineno
                )
            t = core.set_time(p) - core.ev_lat
            core.rec.append(record(p, t, t, what, fr, kind=KIND_SET, link=core.last[p]))
            core.ts += core.issue
            t_vis = t + cross_core_latency(core)
            if mode == 2 and core.kind == CoreType.AIC:
                for j in range(n_aiv):
                    g.push((flag, 2, CoreType.AIV, j), t_vis)
            elif mode == 2:
                g.push((flag, 2, CoreType.AIC, core.sub_block), t_vis)
            else:
                for j in range(n_aiv):
                    g.push((flag, 1, j, core.sub_block), t_vis)
            return
        if mode == 2 and core.kind == CoreType.AIC:
            keys = [(flag, 2, CoreType.AIC, j) for j in range(n_aiv)]
        elif mode == 2:
            keys = [(flag, 2, CoreType.AIV, core.sub_block)]
        else:
            if core.kind == CoreType.AIC:
                raise KernelError(
                    f"{what}: mode 1 syncs the AIVs; the AIC uses mode 2", fr.f_code.co_filename, fr.f_lineno
                )
            keys = [(flag, 1, core.sub_block, j) for j in range(n_aiv)]
        core.ts += core.issue
        t_evt = g.take(me, keys, what, fr)
        core.wait_until(p, t_evt, -1, what, fr)

    def _all_cores(self, core, p: int, flag: int, what: str, fr) -> None:
        """Mode 0: a set counts this core in; a wait holds `p` until every core of its kind
        in the launch set the flag as many times as this core waited on it."""
        run = core.run
        kind = GetCoreType()
        g = core.group
        n_aiv = core.sub_block_num if g is not None and kind == CoreType.AIV else 1
        need = run.block_dim * n_aiv
        if need == 1:  # one core of this kind in the launch: its own set is the whole count
            if self.is_set:
                core.set_flag(("CrossCore0", flag), p, what, fr)
            else:
                core.wait_flag(("CrossCore0", flag), p, what, fr)
            return
        coop = blocks_of(core, what, fr)
        who = (kind, core.block)
        if self.is_set:
            t = core.set_time(p) - core.ev_lat
            core.rec.append(record(p, t, t, what, fr, kind=KIND_SET, link=core.last[p]))
            core.ts += core.issue
            k = coop.next(who, ("set", flag))
            coop.post(("CrossCore0", kind, flag, k), t + cross_core_latency(core))
            return
        core.ts += core.issue
        key = ("CrossCore0", kind, flag, coop.next(who, ("wait", flag)))
        if g is not None:  # the other sub-cores of this AI Core go on meanwhile
            g.meet(g.cores.index(core), key, need, what, fr)
            t = max(coop.posts[key][:need])
        else:
            t = coop.wait(key, need, what, fr)
        core.wait_until(p, t, -1, what, fr)

    def __getitem__(self, key):
        mode, pipe = key if isinstance(key, tuple) else (key, None)

        def bound(flag_id: int) -> None:
            default = Pipe.PIPE_FIX if self.is_set else Pipe.PIPE_S
            self(mode, pipe if pipe is not None else default, flag_id, _depth=3)

        return bound


CrossCoreSetFlag = _CrossCore("CrossCoreSetFlag", True)
CrossCoreWaitFlag = _CrossCore("CrossCoreWaitFlag", False)


def GetCoreType() -> CoreType:
    """CoreType.AIC or CoreType.AIV (equal to "aic" and "aiv"): which kind of core this code is
    running on."""
    core = state.core
    kind = core.kind  # a sub-core of a mixed block; else the kernel's core type
    if kind is None:
        kind = CoreType.AIC if core.run.core_type == CoreType.AIC else CoreType.AIV
    return kind


def is_aic() -> bool:
    return GetCoreType() == CoreType.AIC


__all__ = ["CrossCoreSetFlag", "CrossCoreWaitFlag", "GetCoreType"]
