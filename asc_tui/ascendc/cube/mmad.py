"""Tier-2 cube instructions: GM→L1 Nd2Nz copies and Mmad (PIPE_M); LoadData (PIPE_MTE1) is in
loaddata.py, Fixpipe (PIPE_FIX) in fixpipe.py and cross-core flags in crosscore.py.

Local memories hold data in the hardware's fractal layouts, so a kernel transliterated from an
Ascend C sample computes the same thing here. A fractal is 512 B: 16 rows of C0 = 32 B /
sizeof(T) elements (16 for half/bf16, 32 for int8, 8 for float).

- L1 after `DataCopy(l1, gm, Nd2NzParams)`: "NZ" — column blocks of C0 elements, each block a
  run of rows (element (r, c) at (c // C0)·dstNzC0Stride·C0 + r·dstNzNStride·C0 + c % C0).
  Columns past dValue and rows past nValue up to the 16-row fractal boundary are zeroed (the
  hardware leaves them stale; zeros keep K tails exact and the sanitizer's initcheck quiet).
- L0A for Mmad: "ZZ" — fractals row-major over (m1, k1), each fractal [16 m][C0 k].
- L0B for Mmad: "ZN" — fractals row-major over (k1, n1), each fractal [16 n][C0 k]
  (what `LoadData(..., ifTranspose=True)` makes of an NZ tile of B = K×N).
- L0C: "NZ" — fractals column-major over (n1, m1), each [16 m][16 n], fp32/int32.

Timing (cycles): LoadData = mte1 latency + bytes / (L1→L0A or L1→L0B bytes per cycle);
Mmad = startup + ⌈m/16⌉·⌈n/16⌉·⌈k/C0⌉ fractal steps (16×16×16 fp16, 16×32×16 int8 per cycle);
GM→L1 copies cost latency + first-read bytes / HBM share + re-read bytes / L2 bandwidth (see
`npu/memory/l2.py`). Numerically, the Mmads accumulating into one L0C tile are computed together when
the tile is next read (`mmad_numbers.Pending`), which makes full emulation about one numpy
matmul's work.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import cache

import numpy as np

from ... import PACKAGE_DIR
from ...npu import state
from ...npu.cores import CoreType
from ...npu.errors import KernelError, user_frame
from ...npu.memory.l2 import l2_of
from ...npu.numbers.offload import gm_ready
from ...npu.pipes import MTE2, M
from ...npu.positions import TPosition
from ..dtypes import dtype_name, float32, half, int8, int32, is_int4, nbytes_of, typed_view
from ..int4 import as_bytes, unpack
from ..lineage import lazy_of
from ..lineage_maps import nd2nz_map
from ..memory.tensors import GlobalTensor, LocalTensor
from ..mmad_numbers import Pending, flush_cube
from ..mmad_operands import KSteps
from .fractal import Nd2NzPlan, nd2nz_numbers, nd2nz_plan

_PKG = str(PACKAGE_DIR)


def _frame():
    """The calling frame: inside the high-level Matmul that is its own line (a detailed
    timeline); errors are moved to the user's line by `fail`."""
    return sys._getframe(2)


def fail(msg: str, fr, hint: str | None = None):
    """Raise a KernelError at the kernel's line: `fr`, or the user's frame when `fr` is inside
    asc_tui (a cube call made by the high-level Matmul); every cube instruction fails this way."""
    if fr.f_code.co_filename.startswith(_PKG):  # raised inside asc_tui (e.g. Matmul)
        fr = user_frame(3) or fr
    raise KernelError(msg, fr.f_code.co_filename, fr.f_lineno, hint=hint)


def past_tensor(core, t: LocalTensor, need: int, what: str, fr) -> LocalTensor:
    """`t` widened to `need` elements for an instruction that, as on hardware, writes on past
    the tensor into the rest of its memory (a warning); an error past the memory's end."""
    cap = core.chip.usable.get(t.mem, 0)
    nb = nbytes_of(t.dtype, need)
    if t.offset + nb > cap:
        fail(
            f"{what} writes {nb} B from {t.mem.upper()}+{t.offset}, past the end of the memory ({cap} B)",
            fr,
        )
    core.run.warn(
        "tensor-overrun",
        f"{what} writes {nb} B but the {t.mem.upper()} tensor holds {nbytes_of(t.dtype, t.count)} B: "
        "the bytes after it are overwritten",
        fr,
    )
    arr = typed_view(core.memory(t.mem)[t.offset : t.offset + nb], t.dtype) if core.numeric else None
    return LocalTensor(t.pos, t.mem, t.dtype, t.offset, need, arr, t.slot)


@cache  # (every Mmad asks)
def c0_of(dtype) -> int:
    """Elements per 32 B block: the width of one fractal row (64 for the packed int4b_t)."""
    dt = np.dtype(dtype)
    return 64 if is_int4(dt) else 32 // dt.itemsize


def need_mem(t, mems: tuple[str, ...], what: str, role: str, fr) -> None:
    """Refuse operand `t` (the `role` of instruction `what`) unless it is a local tensor in one
    of `mems`."""
    if not isinstance(t, LocalTensor) or t.mem not in mems:
        where = f"{t.pos.name} ({t.mem.upper()})" if isinstance(t, LocalTensor) else type(t).__name__
        fail(
            f"{what}: {role} must be a local tensor in {' or '.join(m.upper() for m in mems)}, got {where}",
            fr,
            hint="A1/B1 live in L1, A2 in L0A, B2 in L0B, CO1 in L0C",
        )


# ---- GM → L1 ---------------------------------------------------------------------------------


@dataclass
class Nd2NzParams:
    """ND (row-major) → NZ (fractal) conversion during a GM→L1 DataCopy; strides in elements
    except dstNzC0Stride / dstNzNStride (units of C0 = 32 B) and the matrix strides."""

    ndNum: int = 1
    nValue: int = 0
    dValue: int = 0
    srcNdMatrixStride: int = 0
    srcDValue: int = 0
    dstNzC0Stride: int = 0
    dstNzNStride: int = 1
    dstNzMatrixStride: int = 0


def gm_extent(g: GlobalTensor) -> int:
    """Elements of `g` inside its GM buffer: its size, or fewer when the buffer ends first."""
    buf = g.buffer
    return min(g.size, buf.count * buf.dtype.itemsize // g.dtype.itemsize - g.start)


def copy_nd2nz(core, dst, src, p: Nd2NzParams, fr=None) -> None:
    """DataCopy(dst_L1, src_GM, Nd2NzParams): called by `DataCopy` for this parameter type."""
    fr = fr or _frame()
    if type(src) is not GlobalTensor:
        fail("DataCopy with Nd2NzParams copies GM → L1: the source must be a GlobalTensor", fr)
    if type(dst) is not LocalTensor or dst.mem != "l1":
        need_mem(dst, ("l1",), "DataCopy with Nd2NzParams", "the destination", fr)
    dt = src.dtype
    if dt != dst.dtype:
        fail(
            f"DataCopy with Nd2NzParams: source is {dtype_name(dt)} but destination is "
            f"{dtype_name(dst.dtype)} (Nd2Nz does not convert types)",
            fr,
        )
    isz = dt.itemsize
    plan = nd2nz_plan(
        int(p.ndNum),
        int(p.nValue),
        int(p.dValue),
        int(p.srcNdMatrixStride),
        int(p.srcDValue),
        int(p.dstNzC0Stride),
        int(p.dstNzNStride),
        int(p.dstNzMatrixStride),
        isz,
    )
    if type(plan) is not Nd2NzPlan:
        if plan is None:
            return
        fail(plan[0], fr, hint=plan[1])
    if dst.offset % 32:
        fail(f"DataCopy with Nd2NzParams: destination offset {dst.offset} B in L1 is not 32 B aligned", fr)
    if plan.s_need > gm_extent(src):
        fail(
            f"DataCopy with Nd2NzParams reads {plan.s_need} elements of GlobalTensor "
            f"'{src.name}' from element {src.start}, but only {gm_extent(src)} are there",
            fr,
            hint="check nValue/dValue/srcDValue of the last (tail) tile",
        )
    if plan.d_need > dst.count:
        c0 = 32 // isz
        fail(
            f"DataCopy with Nd2NzParams writes {plan.d_need} elements ({plan.d_need * isz} B) "
            f"of NZ tile but the L1 tensor holds {dst.count} ({dst.count * isz} B)",
            fr,
            hint=f"an NZ tile of {plan.n}x{plan.d} {dtype_name(dt)} needs "
            f"{plan.d1} x dstNzC0Stride x {c0} elements",
        )
    if core.numeric:
        lmap = nd2nz_map(plan, isz) if core.lineage else None
        if lmap is not None:  # L1 holds "these GM elements" until the bytes are needed
            lazy_of(core).add("l1", dst.offset, src.arr, src.buffer, src.start, lmap)
            if core.trace is not None:  # lineage only: no bytes move (npu/replay/cubetrace.py)
                core.trace.cover(len(core.rec))
        else:
            if core.lazy is not None:
                core.lazy.settle_range("l1", dst.offset, dst.offset + plan.d_need * isz)
            gm_ready(src.buffer)
            nd2nz_numbers(plan, dst.arr, src.arr, src.start * isz, isz)
    gm_read_cost(
        core, src, plan.nbytes, fr, "DataCopy(Nd2Nz)", plan.nd, plan.n, plan.d * isz, plan.sd_b, plan.ms_b
    )
    san = core.san
    if san is not None:
        san.access(core, src, 0, plan.s_need, False, fr, span=True)
        san.access(core, dst, 0, plan.d_need, True, fr, span=True)


def gm_read_cost(
    core,
    src: GlobalTensor,
    nbytes: int,
    fr,
    op: str,
    nd: int,
    rows: int,
    row_bytes: int,
    stride_bytes: int,
    matrix_stride_bytes: int,
) -> None:
    """Charge one GM→L1 MTE2 instruction, splitting its bytes into HBM first reads and L2 hits."""
    l2 = l2_of(core.run)
    base = src.start * src.dtype.itemsize
    hit = l2.read(src.buffer, base, nd, rows, row_bytes, stride_bytes, matrix_stride_bytes)
    if l2.record:
        return  # the pre-pass only counts reads; its timeline is never looked at
    miss = nbytes - hit
    cycles = core.dma_read_cycles(miss, hit, l2.bpc)
    core.work(MTE2, cycles, op, nbytes, fr)
    core.gm_read += nbytes


# ---- Mmad ----------------------------------------------------------------------------------------


@dataclass
class MmadParams:
    """C[m×n] (+)= A[m×k] · B[k×n]; cmatrixInitVal=True overwrites C, False accumulates."""

    m: int = 0
    n: int = 0
    k: int = 0
    isBias: bool = False
    fmOffset: int = 0
    enSsparse: bool = False
    enWinogradA: bool = False
    enWinogradB: bool = False
    unitFlag: int = 0
    kDirectionAlign: bool = False
    cmatrixSource: bool = False
    cmatrixInitVal: bool = True


#: (A dtype, B dtype) → L0C dtype the cube produces; ml_dtypes' types by name (`_mmad_type`:
#: dtypes.py makes them on first use)
_MMAD_TYPES = {(half, half): float32, (int8, int8): int32, (float32, float32): float32}
_MMAD_TYPES_ML = {("bfloat16", "bfloat16"): float32, ("int4b_t", "int4b_t"): int32}


def _mmad_type(a, b):
    out = _MMAD_TYPES.get((a, b))
    if out is None and a.isbuiltin == 2:  # bfloat16, int4b_t
        out = _MMAD_TYPES_ML.get((dtype_name(a), dtype_name(b)))
    return out


def Mmad(dst, fm, filter_, bias_or_params, params: MmadParams | None = None) -> None:
    """Mmad(c_L0C, a_L0A, b_L0B, MmadParams) or Mmad(c, a, b, bias, MmadParams) on PIPE_M."""
    core = state.core
    if core.run.l2_record:
        return  # the L2 pre-pass only counts GM reads (npu/memory/l2.py); this moves none
    fr = sys._getframe(1)
    bias = None
    if params is None:
        params = bias_or_params
    else:
        bias = bias_or_params
    out_t = _checked_types(core, dst, fm, filter_, params, fr)
    m, n, k = int(params.m), int(params.n), int(params.k)
    if m <= 0 or n <= 0 or k <= 0:
        fail(f"MmadParams(m={m}, n={n}, k={k}): all must be positive", fr)
    c0 = c0_of(fm.dtype)
    m1, n1, k1 = -(-m // 16), -(-n // 16), -(-k // c0)
    need_a, need_b, need_c = m1 * k1 * 16 * c0, k1 * n1 * 16 * c0, m1 * n1 * 256
    # fp32 with kDirectionAlign: L0A rows hold k padded to 16 (two 8-wide fractals), and the
    # cube skips the padding fractals when it reads them
    a_k1 = -(-k // 16) * 2 if params.kDirectionAlign and c0 == 8 else k1
    span_a = m1 * a_k1 * 16 * c0
    if need_c > dst.count and span_a <= fm.count and need_b <= filter_.count:
        # n (or m) rounded up past the tile: the extra fractals land after it, Fixpipe skips them
        dst = past_tensor(core, dst, need_c, f"Mmad m={m} n={n}", fr)
    if span_a > fm.count or need_b > filter_.count or need_c > dst.count:
        _mmad_too_small(
            ((fm, span_a, "A (L0A)"), (filter_, need_b, "B (L0B)"), (dst, need_c, "C (L0C)")),
            m,
            n,
            k,
            m1,
            n1,
            k1,
            fr,
        )
    packed = is_int4(fm.dtype)  # int4b_t operands reach the numbers unpacked, as int8 values
    if core.numeric:
        pend = _pending_tile(core, dst, params, bias, out_t, m, n, m1, n1)
        _stack_operands(core, pend, fm, filter_, k, k1, c0, need_a, need_b, m1, a_k1, span_a, packed)
    if core.trace is not None:  # its numbers: the traced job of its tile (npu/replay/cubetrace.py)
        core.trace.cover(len(core.rec))
    core.work(M, core.chip.cube_timing["mmad_startup"] + m1 * n1 * k1, "Mmad", 0, fr)
    san = core.san
    if san is not None:
        ab = (
            (as_bytes(fm), span_a // 2, as_bytes(filter_), need_b // 2)
            if packed
            else (fm, span_a, filter_, need_b)
        )
        san.access(core, ab[0], 0, ab[1], False, fr, span=True)
        san.access(core, ab[2], 0, ab[3], False, fr, span=True)
        san.access(core, dst, 0, need_c, True, fr, span=True)


def _checked_types(core, dst, fm, filter_, params, fr):
    """The accumulator type of an Mmad of these operands, after refusing what the cube cannot
    run: other than MmadParams, an AIV, operands outside L0C/L0A/L0B, other type combinations."""
    if not isinstance(params, MmadParams):
        fail(f"Mmad expects MmadParams, got {type(params).__name__}", fr)
    if core.kind == CoreType.AIV:
        fail(
            "Mmad on a vector core (AIV): the cube runs on the AIC",
            fr,
            hint="guard cube code with `if AscendC.ASCEND_IS_AIC:`",
        )
    if type(dst) is not LocalTensor or dst.mem != "l0c":
        need_mem(dst, ("l0c",), "Mmad", "dst (C)", fr)
    if type(fm) is not LocalTensor or fm.mem != "l0a":
        need_mem(fm, ("l0a",), "Mmad", "A", fr)
    if type(filter_) is not LocalTensor or filter_.mem != "l0b":
        need_mem(filter_, ("l0b",), "Mmad", "B", fr)
    out_t = _mmad_type(fm.dtype, filter_.dtype)
    if out_t is None:
        fail(
            f"Mmad of {dtype_name(fm.dtype)} x {dtype_name(filter_.dtype)} is not a cube "
            "type combination (half/bf16 → float, int8 → int32, float → float)",
            fr,
        )
    if dst.dtype != out_t:
        fail(
            f"Mmad of {dtype_name(fm.dtype)} accumulates in {dtype_name(out_t)}, but the L0C "
            f"tensor is {dtype_name(dst.dtype)}",
            fr,
        )
    return out_t


def _pending_tile(core, dst, params: MmadParams, bias, out_t, m: int, n: int, m1: int, n1: int) -> Pending:
    """The L0C tile this Mmad accumulates into, computed lazily (ascendc/mmad_numbers.py): the
    pending one when it continues it, else a new one (the other flushed first)."""
    key = (dst.mem, dst.offset, m, n)
    start = _initial_c(core, params, bias, out_t, n)
    init = params.cmatrixInitVal or start is not None
    pend = core.mmad_pending
    if pend is not None and (pend.key != key or init):
        if pend.key == key:
            core.mmad_pending = None  # about to be overwritten: never computed
        else:
            pend.flush(core)
    pend = core.mmad_pending
    if pend is None:
        pend = core.mmad_pending = Pending(key, dst, m, n, m1, n1, out_t, init, start)
    return pend


def _stack_operands(
    core, pend: Pending, fm, filter_, k, k1, c0, need_a, need_b, m1, a_k1, span_a, packed: bool
) -> None:
    """Keep this Mmad's L0A/L0B operands in the pending tile's K steps (`KSteps`)."""
    # snapshots: L0A/L0B may be reloaded before the pending Mmads are computed
    vt = int8 if packed else fm.dtype
    steps = pend.runs[-1] if pend.runs else None
    if steps is None or steps.k != k or steps.k1 != k1 or steps.dtype != vt:
        steps = KSteps(k, k1, c0, need_a, need_b, vt, pend)
        pend.runs.append(steps)
    if packed:
        if core.lazy is not None:
            core.lazy.settle_range("l0a", fm.offset, fm.offset + need_a // 2)
            core.lazy.settle_range("l0b", filter_.offset, filter_.offset + need_b // 2)
        steps.add(core, fm, filter_, unpack(fm.arr[: need_a // 2]), unpack(filter_.arr[: need_b // 2]))
    elif a_k1 == k1:
        steps.add(core, fm, filter_)
    else:
        if core.lazy is not None:
            core.lazy.settle_range("l0a", fm.offset, fm.offset + span_a * 4)
        rows = fm.arr[:span_a].reshape(m1, a_k1, 16 * c0)[:, :k1]
        steps.add(core, fm, filter_, rows.reshape(-1))


def _initial_c(core, params: MmadParams, bias, out_t, n: int):
    """The bias row C starts from, or None: a bias tensor given; else, with cmatrixInitVal
    off and cmatrixSource on, the bias table (C2) from its start; else C starts at 0
    (cmatrixInitVal) or accumulates."""
    if bias is not None:
        return bias
    if params.cmatrixInitVal or not params.cmatrixSource:
        return None
    arr = core.memory("bt")[: n * out_t.itemsize].view(out_t) if core.numeric else None
    return LocalTensor(TPosition.C2, "bt", out_t, 0, n, arr)


def _mmad_too_small(operands, m, n, k, m1, n1, k1, fr) -> None:
    """Report the first operand tensor too small for an Mmad of m×n×k."""
    for t, need, role in operands:
        if need > t.count:
            isz = t.dtype.itemsize
            fail(
                f"Mmad m={m} n={n} k={k} needs {need * isz} B of {role} "
                f"({'x'.join(map(str, _fr_shape(role, m1, n1, k1)))} fractals) but the "
                f"tensor holds {t.count * isz} B",
                fr,
            )


def _fr_shape(role: str, m1: int, n1: int, k1: int) -> tuple[int, int]:
    return {"A (L0A)": (m1, k1), "B (L0B)": (k1, n1)}.get(role, (n1, m1))


__all__ = [
    "Nd2NzParams",
    "MmadParams",
    "Mmad",
    "c0_of",
    "flush_cube",
]
