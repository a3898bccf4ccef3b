"""Helpers the generated Python calls where plain Python operators would not be exact C++.

Generated code uses plain `+`, `//`, `&` wherever the static types make them exact; these are
only for the rest: truncating signed division, signed wrap, fp32/fp16 rounding, byte-wise GM
pointer arithmetic and the few Ascend C names the twin spells differently.
"""

from __future__ import annotations

import math
import struct

import numpy as np

from ..ascendc import GetCoreType
from ..ascendc.lineage import gm_written
from ..ascendc.memory.tensors import GM_ADDR
from ..npu import state
from ..npu.errors import KernelError, user_location
from ..npu.numbers.offload import gm_ready
from ..npu.replay.blockindex import BlockIndex
from .kernel.vloop import vcast, vfor, vget, vindex, vset  # noqa: F401 - the array form of scalar loops

_pack_f = struct.Struct("<f")


def cdiv(a: int, b: int) -> int:
    """C++ integer division: truncates toward zero (Python's // floors).

    By sign tests, not abs(): in a template run `GetBlockIdx() / n` divides a block index
    (npu/replay/blockindex.py), which keeps a comparison as a guard on the blocks that may replay
    the template, but is pinned to its own block by abs() (every block then ran step by step).
    """
    if a >= 0:
        return a // b if b > 0 else -(a // -b)
    return -(-a // b) if b > 0 else -a // -b


def cmod(a: int, b: int) -> int:
    """C++ `%`: the sign follows the dividend (sign tests, not abs(): see `cdiv`)."""
    m = b if b > 0 else -b
    return a % m if a >= 0 else -(-a % m)


def s8(x: int) -> int:
    x &= 0xFF
    return x - 0x100 if x & 0x80 else x


def s16(x: int) -> int:
    x &= 0xFFFF
    return x - 0x10000 if x & 0x8000 else x


def s32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - 0x100000000 if x & 0x80000000 else x


def s64(x: int) -> int:
    x &= 0xFFFFFFFFFFFFFFFF
    return x - 0x10000000000000000 if x & 0x8000000000000000 else x


def f32(x) -> float:
    """Round to fp32 (what a `float` variable holds)."""
    try:
        return _pack_f.unpack(_pack_f.pack(x))[0]
    except OverflowError:
        return float(np.float32(x))


def f16(x) -> float:
    return float(np.float16(x))


def bf16(x) -> float:
    import ml_dtypes

    return float(ml_dtypes.bfloat16(x))


def cm(name: str, *args) -> float:
    """A <cmath> function in double as the C library computes it (nan/inf where Python raises)."""
    args = [float(a) for a in args]
    try:
        if name == "round":
            return _cround(args[0])
        if name not in ("fmin", "fmax"):
            return float(getattr(math, name)(*args))
    except (ValueError, OverflowError, ZeroDivisionError):
        pass
    with np.errstate(all="ignore"):
        f = {"fabs": np.abs, "fmin": np.fmin, "fmax": np.fmax, "pow": np.power}.get(name)
        return float((f or getattr(np, name))(*[np.float64(a) for a in args]))


def _cround(x: float) -> float:
    """C round(): halves away from zero."""
    if x != x or x in (math.inf, -math.inf):
        return x
    return float(math.copysign(math.floor(abs(x) + 0.5), x))


def fdiv(a: float, b: float) -> float:
    """Floating division: IEEE results (inf/nan) where Python would raise."""
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0:
            return float("nan")
        return float("inf") if (a > 0) == (str(float(b))[0] != "-") else float("-inf")


def to_int(x) -> int:
    """float → integer conversion truncates toward zero."""
    return int(x)


def padd(p, nbytes: int):
    """`p + n` on a GM pointer, `nbytes` = n × sizeof(element) (GM_ADDR counts buffer elements)."""
    if p is None:
        file, line = user_location(2)
        raise KernelError("pointer arithmetic on a null GM pointer", file, line)
    if not isinstance(p, GM_ADDR):
        return WordPtr.of(p).moved(nbytes)
    isz = p.buffer.dtype.itemsize
    if nbytes % isz:
        file, line = user_location(2)
        raise KernelError(
            f"GM pointer offset of {nbytes} bytes is not a multiple of the buffer's element size ({isz} B)",
            file,
            line,
        )
    return GM_ADDR(p.buffer, p.offset + nbytes // isz)


class WordPtr:
    """A scalar pointer into an object (`reinterpret_cast<uint32_t*>(&tiling)`, or the tiling
    object a `GM_ADDR tiling` parameter receives): its fields are consecutive 4-byte words, in
    declaration order — what copying a tiling struct word by word needs."""

    __slots__ = ("obj", "byte")

    def __init__(self, obj, byte: int = 0):
        self.obj = obj
        self.byte = byte

    @staticmethod
    def of(p) -> WordPtr:
        return p if isinstance(p, WordPtr) else WordPtr(p, 0)

    def moved(self, nbytes: int) -> WordPtr:
        return WordPtr(self.obj, self.byte + nbytes)

    def _field(self, size: int) -> str:
        names = _field_names(self.obj)
        i, rem = divmod(self.byte, 4)
        if rem or size != 4 or not 0 <= i < len(names):
            file, line = user_location(3)
            raise KernelError(
                f"scalar access of {size} B at byte {self.byte} of a {type(self.obj).__name__} "
                f"({len(names)} fields of 4 B): only whole 4-byte fields are modelled",
                file,
                line,
            )
        return names[i]

    def get(self, dtype):
        return getattr(self.obj, self._field(np.dtype(dtype).itemsize))

    def set(self, value, dtype) -> None:
        setattr(self.obj, self._field(np.dtype(dtype).itemsize), value)


def _field_names(obj) -> list[str]:
    import dataclasses

    if dataclasses.is_dataclass(obj):
        return [f.name for f in dataclasses.fields(obj)]
    fields = getattr(type(obj), "_cx_fields", None)
    if fields is not None:
        return [n for n, _ in fields]
    return list(vars(obj))


def copy_value(v):
    """A kernel API struct copied by value (a dataclass instance); other values as they are."""
    import dataclasses

    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return dataclasses.replace(v)
    return v


def struct_words(cls) -> int:
    """sizeof of a kernel API struct seen as words (TCubeTiling...)."""
    import dataclasses

    return 4 * len(dataclasses.fields(cls))


def bit_cast(value, src, dst):
    """The bits of a scalar of type `src` read as type `dst` (same size)."""
    return np.asarray(value, src).view(dst).item()


def load(p, dtype):
    """`*p` for a scalar pointer: a GM element, or a word of an object."""
    if isinstance(p, GM_ADDR):
        buf = p.buffer
        dt = np.dtype(dtype)
        if buf.data is None:
            return dt.type(1).item()  # timing-only: shadow data
        if state.core is not None:  # (a shared-HBM rerun reads shadows: npu/memory/shared_hbm.py)
            state.core.run.read_data = True
        gm_ready(buf)
        b = p.offset * buf.dtype.itemsize
        return buf.data.view(np.uint8)[b : b + dt.itemsize].view(dt)[0].item()
    if p is None:
        file, line = user_location(2)
        raise KernelError("dereferencing a null pointer", file, line)
    return WordPtr.of(p).get(dtype)


def store(p, value, dtype) -> None:
    """`*p = v` for a scalar pointer."""
    if isinstance(p, GM_ADDR):
        buf = p.buffer
        if buf.data is None:
            return
        gm_ready(buf)
        gm_written(buf)
        dt = np.dtype(dtype)
        b = p.offset * buf.dtype.itemsize
        buf.data.view(np.uint8)[b : b + dt.itemsize].view(dt)[0] = value
        return
    if p is None:
        file, line = user_location(2)
        raise KernelError("dereferencing a null pointer", file, line)
    WordPtr.of(p).set(value, dtype)


def is_aic() -> bool:
    return GetCoreType() == "aic"


def is_aiv() -> bool:
    return GetCoreType() != "aic"


def noop(*_args) -> None:
    """Calls that set hardware state the emulator does not model (InitSocState...)."""


def new_array(n: int, fill=0) -> list:
    return [fill] * int(n)


class Struct:
    """Base of translated structs: field-wise copy, as C++ value semantics need."""

    __slots__ = ()

    def _cx_copy(self):
        new = object.__new__(type(self))
        for k, v in self.__dict__.items():
            new.__dict__[k] = (
                v._cx_copy() if isinstance(v, Struct) else (list(v) if isinstance(v, list) else v)
            )
        return new


#: what C++ calls integers at run time: Python and numpy ints (a GetValue of an int tensor), and
#: a template's block index (npu/replay/blockindex.py)
_INTEGERS = (int, np.integer, BlockIndex)


def odiv(a, b):
    """`/` on operands of unknown static type: C++ integer division for ints, else true division."""
    if isinstance(a, _INTEGERS) and isinstance(b, _INTEGERS):
        return cdiv(a, b)
    return a / b


def omod(a, b):
    if isinstance(a, _INTEGERS) and isinstance(b, _INTEGERS):
        return cmod(a, b)
    return np.fmod(a, b)


def fill_struct(cls, src):
    """A translated struct filled field by field (by name) from a tiling object or mapping."""
    obj = cls()
    get = src.get if isinstance(src, dict) else (lambda k, d=None: getattr(src, k, d))
    need = getattr(cls, "_cx_need", {})
    for name, conv in getattr(cls, "_cx_fields", ()):
        v = get(name, None)
        if v is None and name in need:
            from .errors import CxxError

            path, line, col, sname = need[name]
            have = ", ".join(_field_names(src.tiling if hasattr(src, "tiling") else src))
            raise CxxError(
                f"tiling field {name!r} of struct {sname} has no value in the tiling object "
                f"({type(getattr(src, 'tiling', src)).__name__}: {have or 'no fields'})",
                path,
                line,
                col,
                hint="name the tiling dataclass fields like the struct's fields",
            )
        if v is not None:
            setattr(obj, name, conv(v) if conv is not None else v)
    return obj


def agg(obj, pairs):
    """Aggregate initialisation `S s = {a, b}`: set the listed fields, in order."""
    for name, value in pairs:
        setattr(obj, name, value)
    return obj


def make(cls, init: str, *args):
    """Construct with one of several constructors (chosen statically by arity)."""
    obj = cls.__new__(cls)
    getattr(obj, init)(*args)
    return obj
