"""Static C++ types, as far as code generation needs them to get the arithmetic exactly right.

Integers carry width and signedness (for wrap, truncating division and the usual arithmetic
conversions), floating types their format (fp32 rounding), pointers their element type (for
pointer arithmetic in elements), classes their declaration and template arguments.

`SCALARS` (name -> width, signedness) and `DTYPE_NAMES` (numpy dtype) are the one table of C
scalar types: the kernel translator and the host interpreter (`host/values.py`) both read it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CType:
    kind: str  # int, float, bool, void, ptr, class, twin, enum, opaque, array, dtype
    name: str = ""
    bits: int = 0
    signed: bool = True
    elem: CType | None = None  # ptr/array element
    args: tuple = ()  # template arguments: CType or Python values
    decl: object = None  # ClassInfo for user classes / EnumInfo
    length: int = 0  # array length

    @property
    def is_int(self) -> bool:
        return self.kind in ("int", "bool", "enum")

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_arith(self) -> bool:
        return self.kind in ("int", "bool", "enum", "float")

    @property
    def mask(self) -> int:
        return (1 << self.bits) - 1

    def __str__(self) -> str:
        if self.kind == "ptr":
            return f"{self.elem}*"
        if self.args:
            return f"{self.name}<{', '.join(map(str, self.args))}>"
        return self.name or self.kind


def _i(name, bits, signed):
    return CType("int", name, bits, signed)


INT8, UINT8 = _i("int8_t", 8, True), _i("uint8_t", 8, False)
INT16, UINT16 = _i("int16_t", 16, True), _i("uint16_t", 16, False)
INT32, UINT32 = _i("int32_t", 32, True), _i("uint32_t", 32, False)
INT64, UINT64 = _i("int64_t", 64, True), _i("uint64_t", 64, False)
BOOL = CType("bool", "bool", 1, False)
FLOAT = CType("float", "float", 32)
DOUBLE = CType("float", "double", 64)
HALF = CType("float", "half", 16)
BF16 = CType("float", "bfloat16_t", 16, True)
INT4 = _i("int4b_t", 8, True)  # packed 4-bit; sizeof(int4b_t) is 1 in Ascend C
VOID = CType("void", "void")
OPAQUE = CType("opaque", "?")
DTYPE = CType("dtype", "type")  # a type used as a value (a dtype argument of the twin)
STRING = CType("opaque", "const char*")
GM_ADDR = CType("ptr", "GM_ADDR", elem=UINT8)

SCALARS: dict[str, CType] = {
    "int8_t": INT8,
    "uint8_t": UINT8,
    "int16_t": INT16,
    "uint16_t": UINT16,
    "int32_t": INT32,
    "uint32_t": UINT32,
    "int64_t": INT64,
    "uint64_t": UINT64,
    "char": INT8,
    "signed char": INT8,
    "unsigned char": UINT8,
    "short": INT16,
    "unsigned short": UINT16,
    "int": INT32,
    "signed": INT32,
    "unsigned": UINT32,
    "unsigned int": UINT32,
    "long": INT64,
    "unsigned long": UINT64,
    "long long": INT64,
    "unsigned long long": UINT64,
    "size_t": UINT64,
    "ssize_t": INT64,
    "uintptr_t": UINT64,
    "intptr_t": INT64,
    "bool": BOOL,
    "float": FLOAT,
    "double": DOUBLE,
    "half": HALF,
    "float16_t": HALF,
    "__fp16": HALF,
    "bfloat16_t": BF16,
    "int4b_t": INT4,
    "void": VOID,
}

#: numpy dtype names of the twin for scalar types used as template arguments.
DTYPE_NAMES = {
    "int8_t": "int8",
    "uint8_t": "uint8",
    "int16_t": "int16",
    "uint16_t": "uint16",
    "int32_t": "int32",
    "uint32_t": "uint32",
    "int64_t": "int64",
    "uint64_t": "uint64",
    "float": "float32",
    "half": "half",
    "bfloat16_t": "bfloat16",
    "int4b_t": "int4b_t",
    "double": "float64",
    "bool": "uint8",
}


def from_dtype_name(name: str) -> CType | None:
    """The scalar type for a tiling/param dtype string ("float16", "half", "bf16", "int32")."""
    aliases = {
        "float16": "half",
        "fp16": "half",
        "float32": "float",
        "fp32": "float",
        "bf16": "bfloat16_t",
        "bfloat16": "bfloat16_t",
        "int8": "int8_t",
        "uint8": "uint8_t",
        "int16": "int16_t",
        "uint16": "uint16_t",
        "int32": "int32_t",
        "uint32": "uint32_t",
        "int64": "int64_t",
        "uint64": "uint64_t",
    }
    return SCALARS.get(aliases.get(name, name))


def sizeof(t: CType) -> int:
    if t.kind in ("int", "float"):
        return t.bits // 8
    if t.kind == "bool":
        return 1
    if t.kind == "enum":
        return 4
    if t.kind == "ptr":
        return 8
    if t.kind == "array":
        return sizeof(t.elem) * t.length
    if t.kind == "class" and t.decl is not None:
        return t.decl.layout()[0]
    if t.kind == "twin":
        import dataclasses

        from .. import ascendc

        cls = getattr(ascendc, t.name, None)
        if dataclasses.is_dataclass(cls):  # kernel API structs (TCubeTiling): 4-byte fields
            return 4 * len(dataclasses.fields(cls))
    raise TypeError(f"sizeof({t})")


def alignof(t: CType) -> int:
    if t.kind == "array":
        return alignof(t.elem)
    if t.kind == "class" and t.decl is not None:
        return t.decl.layout()[1]
    return sizeof(t)


def promote(t: CType) -> CType:
    """Integer promotion: anything narrower than int becomes int."""
    if t.kind in ("bool", "enum"):
        return INT32
    if t.kind == "int" and t.bits < 32:
        return INT32
    return t


def common(a: CType, b: CType) -> CType:
    """The usual arithmetic conversions."""
    if a.is_float or b.is_float:
        if not b.is_float:
            return a
        if not a.is_float:
            return b
        rank = {"half": 1, "bfloat16_t": 1, "float": 2, "double": 3}
        return a if rank.get(a.name, 2) >= rank.get(b.name, 2) else b
    if not (a.is_int and b.is_int):
        return OPAQUE
    a, b = promote(a), promote(b)
    if a == b:
        return a
    if a.signed == b.signed:
        return a if a.bits >= b.bits else b
    u, s = (a, b) if not a.signed else (b, a)
    if u.bits >= s.bits:
        return u
    return s  # the signed type is wider and holds every value of the unsigned one
