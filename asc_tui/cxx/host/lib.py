"""The Ascend C host libraries a sample's `main()` calls for its tiling: `platform_ascendc`
(PlatformAscendCManager::GetInstance → the platform of the chip the run emulates) and
`matmul_tiling` (MultiCoreMatmulTiling / MatmulApiTiling filling a TCubeTiling), onto their
twins in `asc_tui.ascendc`.

A `TCubeTiling` declared on the host is a `HostStruct`: fields the host may read and write;
a kernel launch passes a frozen copy (C++ passes the struct by value) and `SaveToBuffer`
writes its int32 words into a host buffer as the real struct's bytes.
"""

from __future__ import annotations

import numpy as np

from ...ascendc.enums import TPosition
from ...ascendc.matmul.tiling import (
    TILING_FIELDS,
    CubeFormat,
    DataType,
    MatmulApiTiling,
    MatrixTraverse,
    MultiCoreMatmulTiling,
)
from ...ascendc.matmul.tiling import TCubeTiling as _TCubeTiling
from ...ascendc.platform import CoreMemType, PlatformAscendC, ReservedSize, SocVersion
from ...npu.chip import load_chip
from .acl import Ptr

#: enum types of the host libraries, by their last qualifier (`matmul_tiling::TPosition::GM`).
ENUMS = {
    "TPosition": TPosition,
    "CubeFormat": CubeFormat,
    "DataType": DataType,
    "CoreMemType": CoreMemType,
    "SocVersion": SocVersion,
    "ReservedSize": ReservedSize,
    "MatrixTraverse": MatrixTraverse,
}
#: host classes constructed from a platform (`matmul_tiling::MultiCoreMatmulTiling t(*platform)`).
CLASSES = {"MultiCoreMatmulTiling": MultiCoreMatmulTiling, "MatmulApiTiling": MatmulApiTiling}
STRUCTS = {"TCubeTiling": _TCubeTiling}
#: method -> indices of its C++ reference (out) parameters, passed as `Ref`s.
OUT_PARAMS = {"GetCoreMemSize": (1,), "GetCoreMemBw": (1,), "GetSingleShape": (0, 1, 2)}
_MISSING = object()


class HostStruct:
    """A kernel API struct (TCubeTiling) on the host: zeroed fields, set by GetTiling or by hand."""

    def __init__(self, cls):
        object.__setattr__(self, "_cls", cls)
        for name in TILING_FIELDS if cls is _TCubeTiling else ():
            object.__setattr__(self, name, 0)

    def __setattr__(self, name, value):
        if not hasattr(self, name):
            raise AttributeError(f"{self._cls.__name__} has no field {name!r}")
        object.__setattr__(self, name, int(value))

    def __getattr__(self, name):
        """optiling's accessors: `tiling.set_stepM(2)`, `tiling.get_baseM()`."""
        field = name[4:]
        if name.startswith("set_") and field in TILING_FIELDS:
            return lambda v: setattr(self, field, v)
        if name.startswith("get_") and field in TILING_FIELDS:
            return lambda: getattr(self, field)
        raise AttributeError(name)

    def freeze(self):
        """The value a kernel receives: an immutable copy."""
        return self._cls(**{n: getattr(self, n) for n in TILING_FIELDS})

    def GetDataSize(self) -> int:
        return 4 * len(TILING_FIELDS)

    def SaveToBuffer(self, dst, size) -> int:
        """The struct's bytes (int32 words in field order) into a host buffer."""
        if not isinstance(dst, Ptr):
            raise TypeError("SaveToBuffer needs a host buffer")
        words = np.array([getattr(self, n) for n in TILING_FIELDS], np.int32).view(np.uint8)
        n = min(int(size), len(words))
        dst.buf.data[dst.off : dst.off + n] = words[:n]
        return 0


class StructView:
    """`reinterpret_cast<TCubeTiling*>(buf)`: the struct's fields read from and written to the
    int32 words of a host buffer (where SaveToBuffer put them)."""

    def __init__(self, ptr: Ptr):
        object.__setattr__(self, "_words", ptr.cast(np.int32))

    def __getattr__(self, name):
        if name not in TILING_FIELDS:
            raise AttributeError(name)
        return int(self._words.get(TILING_FIELDS.index(name)))

    def __setattr__(self, name, value):
        if name not in TILING_FIELDS:
            raise AttributeError(f"TCubeTiling has no field {name!r}")
        self._words.set(TILING_FIELDS.index(name), int(value))


def view(ttext: str, v):
    """A pointer cast to `T*` of a library struct: a view of its fields, or `_MISSING`."""
    if isinstance(v, Ptr) and struct_name(ttext.replace("*", "")):
        return StructView(v)
    return _MISSING


def struct_name(ttext: str) -> str | None:
    base = ttext.replace("const", "").replace("&", "").strip().split("::")[-1].strip()
    return base if base in STRUCTS else None


def default(ttext: str, chip):
    """A declared-but-not-initialised host value of a library type, or `_MISSING`: a zeroed
    struct, or a tiling helper of the run's platform (`MultiCoreMatmulTiling api;`)."""
    name = struct_name(ttext)
    if name:
        return HostStruct(STRUCTS[name])
    cls = CLASSES.get(ttext.replace("const", "").strip().split("::")[-1].strip())
    if cls is not None:
        return cls(PlatformAscendC(chip if chip is not None else load_chip(None)))
    return _MISSING


def sizeof(ttext: str) -> int | None:
    name = struct_name(ttext)
    return 4 * len(TILING_FIELDS) if name else None


def construct(ttext: str, args: list):
    """`T x(args)` of a host library class, or `_MISSING`."""
    name = ttext.replace("const", "").strip().split("::")[-1].strip()
    cls = CLASSES.get(name)
    if cls is None:
        return _MISSING
    return cls(*args[:1])


def enum_value(qualified: str):
    """`ns::Enum::NAME` of a host library enum, or `_MISSING`."""
    parts = qualified.replace(" ", "").split("::")
    if len(parts) >= 2 and parts[-2] in ENUMS:
        v = getattr(ENUMS[parts[-2]], parts[-1], _MISSING)
        return v
    return _MISSING


def call(name: str, args: list, chip):
    """A free function of the host libraries (`PlatformAscendCManager::GetInstance()`), or
    `_MISSING`."""
    if name.replace(" ", "").endswith("PlatformAscendCManager::GetInstance"):
        return PlatformAscendC(chip if chip is not None else load_chip(None))
    return _MISSING


def is_library_object(v) -> bool:
    return isinstance(v, (PlatformAscendC, MultiCoreMatmulTiling, HostStruct))


def launch_value(v):
    """What a kernel argument becomes at a launch (a struct by value)."""
    return v.freeze() if isinstance(v, HostStruct) else v


MISSING = _MISSING
