"""Cross-core synchronisation inside one AI Core (AIC ↔ AIV), as in Ascend C on 910B.

`CrossCoreSetFlag(modeId, pipe, flagId)` / `CrossCoreWaitFlag(modeId, pipe, flagId)` (the C++
template arguments come first), `CrossCoreSetFlag[modeId, pipe](flagId)`, or just `(flagId)`
for mode 2 (set on PIPE_FIX, wait on PIPE_S).

- mode 2 (AIC ↔ AIV of the same AI Core): a set on the AIC can be waited once by each AIV; the
  AIC's wait needs a set from every AIV.
- mode 1 (AIVs of the same AI Core): every AIV sets, then each AIV's wait returns once all have.
- mode 0 (all cores of the launch) is refused: blocks are emulated one after another.

Timing: the flag becomes visible `cross_core_latency_cycles` after the setting pipe finished
everything issued before it; the wait holds `pipe` (default the scalar unit) until then.
"""

from __future__ import annotations

import sys

from .. import PACKAGE_DIR
from ..npu import state
from ..npu.cores import CoreType
from ..npu.errors import KernelError, SyncError, user_frame
from ..npu.records import KIND_SET, record
from .enums import Pipe

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
    if mode == 0:
        raise KernelError(
            f"{what} with modeId 0 (sync of all cores) is not emulated: blocks run "
            "one after another; use mode 2 (AIC↔AIV) or 1 (AIV↔AIV)",
            fr.f_code.co_filename,
            fr.f_lineno,
        )
    if mode not in (1, 2):
        raise KernelError(f"{what}: modeId must be 0, 1 or 2, got {mode}", fr.f_code.co_filename, fr.f_lineno)
    if not 0 <= flag < MAX_FLAG_ID:
        raise SyncError(
            f"{what}: flag id {flag} is out of range 0..{MAX_FLAG_ID - 1}", fr.f_code.co_filename, fr.f_lineno
        )


def _latency(core) -> float:
    return float(core.chip.section("cube").get("cross_core_latency_cycles", 100))


def _parse(args, default_pipe):
    if len(args) == 1:
        return 2, default_pipe, int(args[0])
    if len(args) == 3:
        return int(args[0]), Pipe(args[1]), int(args[2])
    raise TypeError("expected (flagId) or (modeId, pipe, flagId)")


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
        what = f"{self.__name__}({mode}, {pipe.name}, {flag})"
        _check(mode, flag, what, fr)
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
            t_vis = t + _latency(core)
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
