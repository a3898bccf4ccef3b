"""Kernel entry, block indices and the kernel-side debugging utilities (printf, DumpTensor, assert)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..npu import state
from ..npu.cores import CoreType
from ..npu.errors import KernelAssert, is_user_file
from ..npu.numbers.offload import gm_ready
from .mmad_numbers import flush_cube


class KernelFunction:
    """A function marked as a kernel entry (`extern "C" __global__ __aicore__` in C++)."""

    def __init__(self, fn, core_type: str = CoreType.AIV):
        if core_type not in tuple(CoreType):
            raise ValueError("core_type must be 'aiv', 'aic' or 'mix'")
        self.fn = fn
        self.core_type = CoreType(core_type)
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __call__(self, *args):
        return self.fn(*args)


def kernel(fn=None, *, core_type: str = CoreType.AIV):
    """Decorator marking the kernel entry: `@AscendC.kernel` or `@AscendC.kernel(core_type="mix")`."""
    if fn is None:
        return lambda f: KernelFunction(f, core_type)
    return KernelFunction(fn, core_type)


global_aicore = kernel


@dataclass(frozen=True)
class Launch:
    """What the host tiling function returns: how many blocks, and the tiling data they get."""

    block_dim: int
    tiling: Any = None
    #: (file, line) of the `Launch(...)` in the user's tiling: where a bad block count is made
    where: tuple = field(default=(None, None), compare=False, repr=False)

    def __post_init__(self):
        if self.where == (None, None):
            f = sys._getframe(2)  # (0 is this, 1 the dataclass __init__)
            while f is not None and not is_user_file(f.f_code.co_filename):
                f = f.f_back
            if f is not None:
                object.__setattr__(self, "where", (f.f_code.co_filename, f.f_lineno))


def GetBlockIdx() -> int:
    """This block's index (in a template run a `npu.blockindex.BlockIndex`, which acts as one)."""
    return state.core.block_index


def GetBlockNum() -> int:
    return state.core.run.block_dim


def GetSubBlockIdx() -> int:
    return state.core.sub_block


def GetSubBlockNum() -> int:
    return state.core.sub_block_num


def log(text: str, fr, level: str = "info") -> None:
    """One line of the kernel's own output (printf, DumpTensor, assert) in the launch's log, at
    `fr`'s line; it costs a scalar instruction."""
    core = state.core
    core.scalar(core.chip.scalar_value, "printf", fr)
    core.run.log_entry(core, fr, text, level)


def printf(fmt: str, *args) -> None:
    """C-style printf from the kernel; lands in the run log tagged with block, pipe and line."""
    fr = sys._getframe(1)
    try:
        text = fmt % args if args else str(fmt)
    except (TypeError, ValueError):  # a format that does not fit its arguments: print them as they are
        text = " ".join(map(str, (fmt, *args)))
    log(text.rstrip("\n"), fr)


PRINTF = printf


def DumpTensor(tensor, desc: int | str, dumpSize: int) -> None:
    """Print the first `dumpSize` elements of a local or global tensor."""
    fr = sys._getframe(1)
    data = None
    if getattr(tensor, "mem", None) == "l0c":  # Mmads into L0C are computed when read
        flush_cube(state.core)
    if getattr(tensor, "arr", None) is not None:
        start = 0
        if hasattr(tensor, "buffer"):  # a GlobalTensor
            gm_ready(tensor.buffer)
            start = tensor.start
        elif state.core.lazy is not None:  # L1/L0 regions kept as lineage (lineage.py)
            state.core.lazy.settle()
        data = np.asarray(tensor.arr[start : start + int(dumpSize)])
    log(f"DumpTensor desc={desc} size={dumpSize}: {dump_text(data)}", fr)


def dump_text(data: np.ndarray | None) -> str:
    """How a dump shows its elements in the log (None: a timing-only run has no data)."""
    if data is None:
        return "(timing-only run: no data)"
    return np.array2string(
        data.astype(np.float64) if data.dtype.kind == "V" or data.dtype.name == "bfloat16" else data,
        threshold=64,
        max_line_width=100,
        separator=", ",
    )


def ascendc_assert(cond, fmt: str = "assertion failed", *args) -> None:
    """A failed assert traps: the run stops and the message names this line."""
    if cond:
        return
    fr = sys._getframe(1)
    try:
        text = fmt % args if args else fmt
    except (TypeError, ValueError):
        text = fmt
    log(f"assert failed: {text}", fr, "error")
    core = state.core
    raise KernelAssert(
        f"ascendc_assert failed in block {core.block}: {text}", fr.f_code.co_filename, fr.f_lineno
    )


def trap() -> None:
    fr = sys._getframe(1)
    raise KernelAssert("trap()", fr.f_code.co_filename, fr.f_lineno)
