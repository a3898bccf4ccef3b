"""Helpers for the cube tests: fill L0A / L0B from ND matrices in GM the way the samples do
(Nd2Nz into L1, LoadData into L0), on one AIC."""

from __future__ import annotations

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import (
    GlobalTensor,
    HardEvent,
    Hardware,
    LoadData2DParams,
    LocalMemAllocator,
    Nd2NzParams,
)


def gm(addr, dtype) -> GlobalTensor:
    """A GlobalTensor of `dtype` over the whole GM argument `addr`."""
    g = GlobalTensor(dtype)
    g.SetGlobalBuffer(addr)
    return g


def up(x: int, a: int) -> int:
    return -(-x // a) * a


def l1_nz(gm, dtype, rows: int, cols: int, l1_alloc):
    """An ND rows × cols matrix from GM into an NZ L1 tile (rows padded to 16)."""
    g = GlobalTensor(dtype)
    g.SetGlobalBuffer(gm)
    c0 = 32 // g.dtype.itemsize
    t = l1_alloc.Alloc(dtype, up(rows, 16) * up(cols, c0))
    AscendC.DataCopy(t, g, Nd2NzParams(1, rows, cols, 0, cols, up(rows, 16), 1, 0))
    return t


def load_a(l1, l0a, m: int, k: int) -> None:
    """NZ (m × k) in L1 → ZZ in L0A: one LoadData per 16-row group."""
    c0 = 32 // l1.dtype.itemsize
    k1, m1 = up(k, c0) // c0, up(m, 16) // 16
    for i in range(m1):
        AscendC.LoadData(l0a[i * k1 * 16 * c0], l1[i * 16 * c0], LoadData2DParams(0, k1, m1, 0, 0, False))


def load_b(l1, l0b, k: int, n: int) -> None:
    """NZ (k × n, 2-byte) in L1 → ZN in L0B: transposed fractals, one LoadData per k group."""
    k1, n1 = up(k, 16) // 16, up(n, 16) // 16
    for i in range(k1):
        AscendC.LoadData(l0b[i * n1 * 256], l1[i * 256], LoadData2DParams(0, n1, k1, 0, 0, True))


def sync(event) -> None:
    AscendC.SetFlag(event, AscendC.EVENT_ID0)
    AscendC.WaitFlag(event, AscendC.EVENT_ID0)


def matmul_to_l0c(ga, gb, dtype, m: int, k: int, n: int):
    """C = A·B into a fresh L0C tensor (NZ), A and B ND in GM; returns the L0C tensor."""
    l1 = LocalMemAllocator(Hardware.L1)
    ta, tb = l1_nz(ga, dtype, m, k, l1), l1_nz(gb, dtype, k, n, l1)
    sync(HardEvent.MTE2_MTE1)
    c0 = 32 // ta.dtype.itemsize
    a2 = LocalMemAllocator(Hardware.L0A).Alloc(dtype, up(m, 16) * up(k, c0))
    b2 = LocalMemAllocator(Hardware.L0B).Alloc(dtype, up(k, c0) * up(n, 16))
    load_a(ta, a2, m, k)
    load_b(tb, b2, k, n)
    sync(HardEvent.MTE1_M)
    acc = AscendC.int32 if ta.dtype.itemsize == 1 else AscendC.float32
    c = LocalMemAllocator(Hardware.L0C).Alloc(acc, up(m, 16) * up(n, 16))
    AscendC.Mmad(c, a2, b2, AscendC.MmadParams(m, n, k))
    sync(HardEvent.M_FIX)
    return c
