"""`platform_ascendc::PlatformAscendC`: what host tiling code asks about the chip, answered
from the chip TOML the run emulates (core counts, per-core memory sizes, the SoC family).

As in CANN, the sizes of UB and L1 leave out the 256 bytes the 910B family reserves for the
Matmul server's messages (KFC), and `ReserveLocalMemory` takes a further slice of UB.
"""

from __future__ import annotations

from enum import IntEnum

from ..npu.chip import ChipModel, load_chip


class CoreMemType(IntEnum):
    L0_A = 0
    L0_B = 1
    L0_C = 2
    L1 = 3
    L2 = 4
    UB = 5
    HBM = 6
    FB = 7
    BT = 8


class SocVersion(IntEnum):
    ASCEND910 = 0
    ASCEND910B = 1
    ASCEND310P = 2
    ASCEND310B = 3
    ASCEND950 = 4
    RESERVED_VERSION = 99999


class ReservedSize(IntEnum):
    RESERVED_SIZE_8K = 0
    RESERVED_SIZE_16K = 1
    RESERVED_SIZE_32K = 2


#: chip architecture (TOML `arch`) -> SoC family.
_SOC = {
    "dav-2201": SocVersion.ASCEND910B,
    "dav-1001": SocVersion.ASCEND910,
    "dav-2002": SocVersion.ASCEND310P,
}
_MEM_KEY = {
    CoreMemType.L0_A: "l0a",
    CoreMemType.L0_B: "l0b",
    CoreMemType.L0_C: "l0c",
    CoreMemType.L1: "l1",
    CoreMemType.L2: "l2",
    CoreMemType.UB: "ub",
    CoreMemType.FB: "fb",
    CoreMemType.BT: "bt",
}
KFC_RESERVED = 256  # bytes of UB and L1 kept for the Matmul server on 910B (CANN platform code)
_WORKSPACE = {SocVersion.ASCEND910B: 16 * 1024 * 1024}  # GetLibApiWorkSpaceSize; others 2 MB


class PlatformAscendC:
    """The chip as host code sees it (`ascendcPlatform->GetCoreNumAic()`, …)."""

    def __init__(self, chip: ChipModel):
        self.chip = chip
        self.reserved_ub = 0

    @property
    def soc(self) -> SocVersion:
        return _SOC.get(str(self.chip.raw.get("chip", {}).get("arch", "")), SocVersion.RESERVED_VERSION)

    @property
    def split(self) -> bool:
        """Cube and vector cores separate (910B: 1 AIC + 2 AIV per AI Core)."""
        return int(self.chip.raw.get("cores", {}).get("aiv_per_aic", 1)) > 1

    def GetSocVersion(self) -> SocVersion:
        return self.soc

    def GetCoreNumAic(self) -> int:
        return self.chip.aic

    def GetCoreNumAiv(self) -> int:
        return self.chip.aiv if self.split else self.chip.aic

    def GetCoreNum(self) -> int:
        """Vector cores on a split chip, AI Cores otherwise (as CANN's GetCoreNum)."""
        return self.GetCoreNumAiv()

    def GetCoreNumVector(self) -> int:
        return self.chip.aiv - self.chip.aic if self.soc == SocVersion.ASCEND310P else 0

    def mem_size(self, kind) -> int:
        kind = CoreMemType(int(kind))
        if kind == CoreMemType.HBM:
            return 64 << 30
        size = int(self.chip.memory.get(_MEM_KEY[kind], 0))
        if kind in (CoreMemType.UB, CoreMemType.L1) and self.soc == SocVersion.ASCEND910B:
            size -= KFC_RESERVED
        if kind == CoreMemType.UB:
            size -= self.reserved_ub
        return size

    def GetCoreMemSize(self, kind, size) -> None:
        """`GetCoreMemSize(CoreMemType::UB, size)`: `size` is an out-parameter (a reference)."""
        size.set(self.mem_size(kind))

    def GetCoreMemBw(self, kind, bw) -> None:
        dma = self.chip.section("dma")
        per = {CoreMemType.L2: dma.get("l2_bytes_per_cycle", 110), CoreMemType.HBM: self.chip.gm_read_bpc}
        bw.set(int(per.get(CoreMemType(int(kind)), 32)))

    def GetLibApiWorkSpaceSize(self) -> int:
        return _WORKSPACE.get(self.soc, 2 * 1024 * 1024)

    def GetResGroupBarrierWorkSpaceSize(self) -> int:
        return 1024 * 1024

    def GetResCubeGroupWorkSpaceSize(self) -> int:
        return 1024 * 1024

    def CalcTschBlockDim(self, sliceNum: int, aicCoreNum: int, aivCoreNum: int) -> int:
        if not aicCoreNum or not aivCoreNum or aicCoreNum > aivCoreNum:
            return int(sliceNum)
        ratio = aivCoreNum // aicCoreNum
        return -(-int(sliceNum) // ratio)

    CalcTschNumBlocks = CalcTschBlockDim

    def ReserveLocalMemory(self, size) -> None:
        self.reserved_ub = {0: 8192, 1: 16384, 2: 32768}[int(size)]


class PlatformAscendCManager:
    """`PlatformAscendCManager::GetInstance()`: in Python code, the default chip's platform (a
    sample's host code gets the chip of its run: cxx/host/lib.py)."""

    @staticmethod
    def GetInstance(soc_name: str | None = None) -> PlatformAscendC:
        return PlatformAscendC(load_chip(None))


__all__ = ["PlatformAscendC", "PlatformAscendCManager", "CoreMemType", "SocVersion", "ReservedSize"]
