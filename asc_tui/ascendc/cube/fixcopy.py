"""DataCopy from CO1 (L0C) with `DataCopyCO12DstParams`: the register-configured spelling of a
Fixpipe transfer, and the registers it reads.

`SetFixpipeNz2ndFlag(ndNum, srcNdStride, dstNdStride)` configures the NZ→ND conversion that
`nz2ndEn` turns on, `SetFixpipePreQuantFlag(word)` the scalar quantisation word (`fixquant.py`)
and `SetFixPipeConfig(tensor)` the per-column words of the vector (V…) modes. They stay set on
the core until set again. The transfer itself, its checks and its cost are `fixpipe.fix_out`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from ...npu import state
from ..corestate import registers
from ..memory.tensors import LocalTensor
from .fixpipe import FixOut, fix_out, vector_words
from .fixquant import VECTOR_MODES, QuantMode_t
from .mmad import fail as _fail


@dataclass
class DataCopyCO12DstParams:
    """L0C → GM/L1 with conversion: nSize × mSize from an L0C tile of srcStride rows;
    dstStride: elements between rows (nz2ndEn) or 32 B units between NZ column blocks;
    reluPre 1 = ReLU; channelSplit: fp32 NZ blocks of 8 columns."""

    nSize: int = 0
    mSize: int = 0
    dstStride: int = 0
    srcStride: int = 0
    quantPre: QuantMode_t = QuantMode_t.NoQuant
    reluPre: int = 0
    channelSplit: bool = False
    nz2ndEn: bool = False
    sid: int = 0
    unitFlag: int = 0
    clipReluPre: int = 0
    eltWiseOp: int = 0


def _regs() -> dict:
    return registers(state.core)[3]


def SetFixpipeNz2ndFlag(ndNum: int, srcNdStride: int, dstNdStride: int) -> None:
    """The ND matrices of the next NZ→ND DataCopy from CO1: count, source stride (1 KB units),
    destination stride (elements)."""
    _regs()["fix_nz2nd"] = (int(ndNum), int(srcNdStride), int(dstNdStride))


def SetFixpipePreQuantFlag(config: int) -> None:
    """The scalar quantisation word of the next scalar-mode DataCopy from CO1."""
    _regs()["fix_quant"] = int(config)


def SetFixPipeConfig(*args) -> None:
    """The per-column quantisation words (a uint64 tensor) of the next vector-mode DataCopy
    from CO1; the C++ template argument and the trailing `isUnitFlag` may be passed."""
    t = next((a for a in args if isinstance(a, LocalTensor)), None)
    if t is None:
        _fail("SetFixPipeConfig expects a uint64 LocalTensor of quantisation words", sys._getframe(1))
    _regs()["fix_vector"] = t


def copy_co1(core, dst, src, p: DataCopyCO12DstParams, fr) -> None:
    """DataCopy(dst_GM_or_L1, src_CO1, DataCopyCO12DstParams): called by `DataCopy`."""
    if core.run.l2_record:
        return
    regs = registers(core)[3]
    q = p.quantPre
    words, source = 1.0, None
    if q in VECTOR_MODES:
        source = regs.get("fix_vector")
        words = vector_words(source, int(p.nSize), ("l1", "fb"), "SetFixPipeConfig", fr)
    elif q not in (QuantMode_t.NoQuant, QuantMode_t.F322F16, QuantMode_t.F322BF16):
        words = regs.get("fix_quant")
        if words is None:
            _fail(f"DataCopy from CO1 with quantPre={q.name} needs SetFixpipePreQuantFlag first", fr)
    relu = int(p.reluPre)
    if relu not in (0, 1):
        _fail(f"DataCopy from CO1 with reluPre={relu} (leaky ReLU) is not modelled yet", fr, hint="0 or 1")
    nz = not p.nz2ndEn
    out = FixOut(
        int(p.nSize),
        int(p.mSize),
        int(p.srcStride),
        int(p.dstStride),
        nz,
        bool(p.channelSplit),
        q,
        words,
        relu == 1,
        (1, 0, 0) if nz else regs.get("fix_nz2nd", (1, 0, 0)),
        source,
    )
    fix_out(core, dst, src, out, "DataCopy(CO1)", fr)
