"""The high-level `Matmul` object (its host tiling is matmul_tiling.py; in a mixed kernel the
AIVs' calls reach the AIC through matmul_kfc.py).

Built only from the Tier-2 primitives (Nd2Nz DataCopy, LoadData, Mmad, Fixpipe and TQue
events), so its timeline is as detailed as a hand-written kernel's; instructions are attributed
to the user's line that called `IterateAll`.

Per core the object computes C[singleCoreM × singleCoreN] = A[· × K] · B[K × ·] (+ bias) in
baseM × baseN blocks. For each block it walks K in baseK slices, copying A into L1 every stepKa
slices and B every stepKb slices (depthA1/stepKa L1 buffers each, so depth = 2·step means
double-buffered L1); each slice goes through L0A/L0B (dbL0A/dbL0B buffers) into one L0C
accumulator (dbL0C buffers) that a single Fixpipe writes out per block (block.py).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from ...npu import state
from ...npu.cores import CoreType
from ...npu.errors import KernelError, user_frame
from ...npu.extrapolate.periodic import Periodic
from ...npu.memory.gm import GM_ADDR, GmBuffer
from ...npu.replay.blockindex import trange
from ..cube.mmad import c0_of, gm_extent
from ..dtypes import as_dtype, dtype_name, float32, half, int8, int32, is_bf16
from ..enums import TPosition
from ..memory.pipe import TBuf, TPipe
from ..memory.queue import TQue
from ..memory.tensors import GlobalTensor
from ..sync.crosscore import GetCoreType
from .block import BaseBlock
from .kfc import Client, in_mix_group, serve
from .tiling import CubeFormat, MultiCoreMatmulTiling, TCubeTiling, check_tiling, tiling_footprint, up


@dataclass(frozen=True)
class MatmulType:
    """`MatmulType<pos, format, T, isTrans>`: where an operand lives and its element type."""

    pos: TPosition = TPosition.GM
    format: CubeFormat = CubeFormat.ND
    dtype: object = half
    isTrans: bool = False


@dataclass(slots=True)  # a field the twin does not know is an error, not silently ignored
class MatmulConfig:
    """The Matmul's template configuration (`CFG_NORM`, `CFG_MDL`): how A and B are staged in L1
    and handed on. The twin computes the same blocks under each of these scheduling choices; the
    configuration is kept for what it says (a kernel copies one and changes fields)."""

    doNorm: bool = True
    doBasicBlock: bool = False
    doMultiDataLoad: bool = False  # MDL: several base-K slices of A/B per L1 load
    doIBShareNorm: bool = False
    doSpecialMDL: bool = False
    enUnitFlag: bool = True
    doMTE2Preload: int = 0
    enableReuse: bool = True
    enableKdimReorderLoad: bool = False
    isA2B2Shared: bool = False


CFG_NORM = MatmulConfig()
CFG_MDL = MatmulConfig(doNorm=False, doMultiDataLoad=True)
CFG_IBSHARE_NORM = MatmulConfig(doNorm=False, doIBShareNorm=True)


def GetNormalConfig(*_args) -> MatmulConfig:
    return CFG_NORM


def GetMDLConfig(*_args) -> MatmulConfig:
    return CFG_MDL


_ACC = {half: float32, int8: int32, float32: float32}  # and bfloat16 → float32 (Matmul.__init__)


class Matmul(BaseBlock):
    """`Matmul<A, B, C, Bias>`: SetTensorA/B, SetBias, SetTail, IterateAll or Iterate +
    GetTensorC, End."""

    def __init__(
        self,
        a_type: MatmulType,
        b_type: MatmulType,
        c_type: MatmulType,
        bias_type: MatmulType | None = None,
        cfg: MatmulConfig = CFG_NORM,
    ):
        self.a_type, self.b_type, self.c_type, self.bias_type = a_type, b_type, c_type, bias_type
        self.cfg = cfg
        self.dt = as_dtype(a_type.dtype)
        self.cdt = as_dtype(c_type.dtype)
        self.acc = _ACC.get(self.dt, float32 if is_bf16(self.dt) else None)
        self.tiling: TCubeTiling | None = None
        self.a = self.b = self.bias = None
        self.tail_m = self.tail_n = self.tail_k = None
        self.org: tuple[int, int, int, int] | None = None  # SetOrgShape (M, N, Ka, Kb)
        self._todo: list | None = None  # blocks left for Iterate()
        self.kfc = None  # on an AIV of a mixed kernel: the client of the AIC's server
        self._all_done = False  # an IterateAll WaitIterateAll may wait for
        self.workspace = None
        self._pending = None  # (CO1 tensor, m0, n0, mt, nt) awaiting GetTensorC

    # ---- set-up ---------------------------------------------------------------------------------
    def Init(self, tiling: TCubeTiling, pipe: TPipe | None = None) -> None:
        fr = _user()
        if self.acc is None:
            _fail(fr, f"Matmul of {dtype_name(self.dt)} is not a cube type (half, bfloat16, int8, float)")
        if self.dt == int8 and not self.b_type.isTrans:
            _fail(fr, "int8 Matmul needs B as N x K (MatmulType(..., isTrans=True))")
        self.tiling = t = tiling
        pipe = pipe or TPipe()
        self.pipe = pipe
        isz = self.dt.itemsize
        self.c0 = c0_of(self.dt)
        self.bm, self.bn, self.bk = up(t.baseM, 16), up(t.baseN, 16), up(t.baseK, self.c0)
        self.q_a1 = TQue(TPosition.A1, 1)
        self.q_b1 = TQue(TPosition.B1, 1)
        self.q_a2 = TQue(TPosition.A2, 1)
        self.q_b2 = TQue(TPosition.B2, 1)
        self.q_c = TQue(TPosition.CO1, 1)
        nbuf_a1 = max(1, t.depthA1 // max(t.stepKa, 1))
        nbuf_b1 = max(1, t.depthB1 // max(t.stepKb, 1))
        pipe.InitBuffer(self.q_a1, nbuf_a1, self.bm * self.bk * t.stepKa * isz)
        pipe.InitBuffer(self.q_b1, nbuf_b1, self.bk * t.stepKb * self.bn * isz)
        pipe.InitBuffer(self.q_a2, t.dbL0A, self.bm * self.bk * isz)
        pipe.InitBuffer(self.q_b2, t.dbL0B, self.bk * self.bn * isz)
        pipe.InitBuffer(self.q_c, t.dbL0C, self.bm * self.bn * 4)
        self.bt = None
        if t.isBias:
            self.bt = TBuf(TPosition.C2)
            pipe.InitBuffer(self.bt, self.bn * 4)

    def SetTensorA(self, gm: GlobalTensor, isTransposeA: bool = False) -> None:
        self.a = gm

    def SetTensorB(self, gm: GlobalTensor, isTransposeB: bool = False) -> None:
        self.b = gm

    def SetBias(self, gm: GlobalTensor) -> None:
        self.bias = gm

    def SetTail(self, tailM: int = -1, tailN: int = -1, tailK: int = -1) -> None:
        self.tail_m = tailM if tailM > 0 else None
        self.tail_n = tailN if tailN > 0 else None
        self.tail_k = tailK if tailK > 0 else None

    SetSingleShape = SetTail

    def SetOrgShape(self, orgM: int, orgN: int, orgKa: int, orgKb: int | None = None, orgKc=None) -> None:
        """The full matrices' shapes (row strides in GM: A is M × Ka, B Kb × N, C M × N)."""
        self.org = (int(orgM), int(orgN), int(orgKa), int(orgKa if orgKb is None else orgKb))

    @property
    def c_ld(self) -> int:
        """C's row stride in GM: N, or N rounded up to 32 bytes for CubeFormat::ND_ALIGN."""
        n = self.shape[1]
        return up(n, 32 // self.cdt.itemsize) if self.c_type.format == CubeFormat.ND_ALIGN else n

    @property
    def shape(self) -> tuple[int, int, int, int]:
        """(M, N, Ka, Kb) of the full matrices: SetOrgShape's, else the tiling's."""
        t = self.tiling
        return self.org or (t.M, t.N, t.Ka, t.Kb)

    def End(self) -> None:
        if self.kfc is not None:
            self.kfc.request("end", _user())
        self.a = self.b = self.bias = None
        self._todo = self._pending = None

    # ---- compute --------------------------------------------------------------------------------
    def _blocks(self, what: str) -> list[tuple[int, int, int, int, int]]:
        """The base blocks (m0, n0, mt, nt, sk) of this core's region, in iterateOrder."""
        fr = _user()
        t = self.tiling
        if t is None:
            _fail(fr, f"{what} before Init (REGIST_MATMUL_OBJ) gave the Matmul its tiling")
        if self.a is None or self.b is None:
            _fail(fr, f"{what} needs SetTensorA and SetTensorB first")
        if t.isBias and self.bias is None:
            _fail(fr, "the tiling has isBias=1 but SetBias was not called")
        sm = self.tail_m or t.singleCoreM
        sn = self.tail_n or t.singleCoreN
        sk = self.tail_k or t.singleCoreK
        ms, ns = list(trange(0, sm, t.baseM)), list(trange(0, sn, t.baseN))
        order = block_order(len(ms), len(ns), t.stepM, t.stepN, t.iterateOrder)
        return [(ms[i], ns[j], min(t.baseM, sm - ms[i]), min(t.baseN, sn - ns[j]), sk) for i, j in order]

    def IterateAll(
        self, c: GlobalTensor, enAtomic: int = 0, enSequentialWrite=False, waitIterateAll=False, fakeMsg=False
    ) -> None:
        """C[region] = A · B (+ bias) for this core's singleCoreM × singleCoreN region. The
        asynchronous form (`IterateAll<false>`, then WaitIterateAll) is emulated as finished on
        return: the twin runs the request to its end.

        Once the base blocks reach a periodic regime the rest are extrapolated
        (npu/extrapolate/periodic.py): a block's stream is decided by its (n0, mt, nt, sk) apart from GM
        addresses, which are affine in its origin (m0, n0)."""
        if enAtomic:
            _fail(_user(), "IterateAll with enAtomic (accumulating into C) is not emulated")
        self._all_done = True
        if self.kfc is not None:  # an AIV of a mixed kernel: the AIC computes
            self._blocks("IterateAll")
            self.kfc.request("all", _user(), dst=(c, self.c_ld))
            return
        blocks = self._blocks("IterateAll")
        ld = self.c_ld
        ext = None
        if len(blocks) > 2 and all(
            (m0 + mt - 1) * ld + n0 + nt <= gm_extent(c) for m0, n0, mt, nt, _ in blocks
        ):
            ext = Periodic.of(
                state.core,
                (self.q_a1, self.q_b1, self.q_a2, self.q_b2, self.q_c),
                [(n0, mt, nt, sk) for _, n0, mt, nt, sk in blocks],
                [(m0, n0) for m0, n0, _, _, _ in blocks],
            )
        i = 0
        while i < len(blocks):
            if ext is not None:
                i += ext.at(i)
                if i >= len(blocks):
                    break
            m0, n0, mt, nt, sk = blocks[i]
            co = self._block(m0, n0, mt, nt, sk)
            self._write(c[m0 * ld + n0], co, mt, nt, ld)
            i += 1
        if ext is not None:
            ext.done()

    def WaitIterateAll(self) -> None:
        if not self._all_done:
            _fail(_user(), "WaitIterateAll() without an IterateAll() to wait for")
        self._all_done = False

    def SetWorkspace(self, workspace, size: int | None = None) -> None:
        """Where the asynchronous Iterate keeps its blocks: after one `Iterate<false>()`, each
        GetTensorC fetches the next block. The twin computes each block when it is fetched."""
        if not isinstance(workspace, (GlobalTensor, GM_ADDR)):
            _fail(
                _user(), f"SetWorkspace takes a GlobalTensor or a GM address, not {type(workspace).__name__}"
            )
        self.workspace = workspace

    def Iterate(self, enPartialSum: bool = False) -> bool:
        """Compute the next baseM × baseN block into L0C; False when the region is done."""
        if self._pending is not None:
            _fail(_user(), "Iterate() again before GetTensorC() fetched the previous block")
        if self._todo is None:
            self._todo = self._blocks("Iterate")
        if not self._todo:
            self._todo = None
            return False
        m0, n0, mt, nt, sk = self._todo.pop(0)
        if self.kfc is not None:  # an AIV of a mixed kernel: the block waits in the AIC's L0C
            self.kfc.request("iterate", _user(), block=(m0, n0, mt, nt, sk))
            self._pending = (None, m0, n0, mt, nt)
            return True
        self._pending = (self._block(m0, n0, mt, nt, sk), m0, n0, mt, nt)
        return True

    def GetTensorC(self, c: GlobalTensor, enAtomic: int = 0, enSequentialWrite: bool = False) -> None:
        """Write the block of the last Iterate(): at its place in `c` (the region's C), or at
        the start of `c` as a dense baseM × baseN tile when enSequentialWrite."""
        fr = _user()
        if self._pending is None and self.workspace is not None and self._todo:
            self.Iterate()  # asynchronous Iterate (SetWorkspace): each GetTensorC takes the next block
        if self._pending is None:
            _fail(fr, "GetTensorC() without a block: call Iterate() first")
        if not isinstance(c, GlobalTensor) and self.kfc is None:
            _fail(
                fr,
                "GetTensorC into a local tensor needs a mixed kernel "
                "(the AIVs call the Matmul, the AIC computes)",
            )
        co, m0, n0, mt, nt = self._pending
        self._pending = None
        if self.kfc is not None:
            self.kfc.get_tensor_c(c, (m0, n0, mt, nt), bool(enSequentialWrite), fr)
            return
        if enSequentialWrite:
            self._write(c, co, mt, nt, nt)
        else:
            self._write(c[m0 * self.c_ld + n0], co, mt, nt, self.c_ld)


def block_order(m_iter: int, n_iter: int, step_m: int, step_n: int, iterate_order: int) -> list:
    """(m, n) indices of the base blocks in the order Iterate walks them (CANN's scheduler).

    ORDER_M (0): N within a window of stepN blocks fastest, then M within stepM, then the M
    windows, then the N windows — with stepN = 1, down the M axis first. ORDER_N (1): the same
    with M and N swapped."""
    sm, sn = max(1, step_m), max(1, step_n)
    out = []
    if iterate_order == 1:
        for mo in range(0, m_iter, sm):
            for no in range(0, n_iter, sn):
                for ni in range(no, min(no + sn, n_iter)):
                    out += [(mi, ni) for mi in range(mo, min(mo + sm, m_iter))]
        return out
    for no in range(0, n_iter, sn):
        for mo in range(0, m_iter, sm):
            for mi in range(mo, min(mo + sm, m_iter)):
                out += [(mi, ni) for ni in range(no, min(no + sn, n_iter))]
    return out


def REGIST_MATMUL_OBJ(pipe: TPipe, workspace, *objs_and_tilings) -> None:  # noqa: N802
    """`REGIST_MATMUL_OBJ(&pipe, workspace, mm, &tiling)`: give each Matmul its tiling. In a
    mixed kernel the AIC serves the AIVs' Matmul calls here and returns from the kernel
    (matmul_kfc.py), unless the kernel was built with ASCENDC_CUBE_ONLY: then whichever core
    registers it uses it directly."""
    items = list(objs_and_tilings)
    pairs = list(zip(items[0::2], items[1::2]))
    if not in_mix_group() or _user().f_globals.get("_CUBE_ONLY"):  # translated under ASCENDC_CUBE_ONLY
        for mm, tiling in pairs:
            mm.Init(tiling, pipe)
        return
    if GetCoreType() == CoreType.AIC:
        for mm, tiling in pairs:
            mm.Init(tiling, pipe)
        serve([mm for mm, _t in pairs], _user())
    for i, (mm, tiling) in enumerate(pairs):
        mm.tiling = tiling
        mm.kfc = Client(mm, i)


def GetSysWorkSpacePtr() -> GM_ADDR:
    """The system workspace CANN keeps for its libraries (not null, as on a device launch). The
    twin's Matmul keeps nothing there, so it holds no bytes: a kernel that reads or writes it
    itself is told it is out of bounds."""
    return GM_ADDR(GmBuffer("system workspace", np.uint8, 0, np.zeros(0, np.uint8)))


def _user():
    return user_frame(3) or sys._getframe(2)


def _fail(fr, msg: str):
    raise KernelError(msg, fr.f_code.co_filename, fr.f_lineno)


__all__ = [
    "Matmul",
    "MatmulConfig",
    "CFG_NORM",
    "CFG_MDL",
    "CFG_IBSHARE_NORM",
    "GetNormalConfig",
    "GetMDLConfig",
    "MatmulType",
    "CubeFormat",
    "TCubeTiling",
    "MultiCoreMatmulTiling",
    "REGIST_MATMUL_OBJ",
    "GetSysWorkSpacePtr",
    "tiling_footprint",
    "check_tiling",
]
