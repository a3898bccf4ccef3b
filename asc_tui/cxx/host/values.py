"""Values of host code: C scalar types, references (`&x`, `&v[i]`), `std::vector`, and the
C operators' integer semantics (used by expr.py, interp.py and structs.py)."""

from __future__ import annotations

import re

import numpy as np

from ...ascendc import dtypes as D
from .. import ctype as T
from .. import runtime as R
from .acl import Ptr

#: The C integer types of host code, (bits, signed): the kernel's table (`ctype.SCALARS`) less the
#: kernel-only packed int4, plus ACL's `aclError`. One table, so host and kernel agree on widths.
INTS = {name: (t.bits, t.signed) for name, t in T.SCALARS.items() if t.kind == "int" and t is not T.INT4} | {
    "aclError": (32, True)
}
#: The C floating types of host code → their dtype names, from the same table (`float_type` makes
#: the dtype: bfloat16 on first use, see `ascendc.dtypes`).
FLOATS = {name: T.DTYPE_NAMES[t.name] for name, t in T.SCALARS.items() if t.kind == "float"}


def float_type(name: str) -> np.dtype:
    """The dtype of a C float type (a key of FLOATS): the twin's own for half and bfloat16."""
    dtype_name = FLOATS[name]
    return np.dtype(dtype_name) if dtype_name == "float64" else D.as_dtype(dtype_name)


def np_type(name: str) -> np.dtype:
    name = base_type(name.replace("unsigned int", "uint32_t"))
    if name in FLOATS:
        return float_type(name)
    if name in INTS:
        bits, signed = INTS[name]
        return np.dtype(f"{'i' if signed else 'u'}{bits // 8}")
    if name == "bool":
        return np.dtype(np.bool_)
    return np.dtype(np.uint8)


class Ref:
    """`&name`: a variable a call may set (`aclrtMalloc((void**)&p, …)`)."""

    def __init__(self, env: dict, name: str):
        self.env, self.name = env, name

    def get(self):
        return self.env[self.name][0]

    def set(self, v):
        ttext = self.env[self.name][1]
        if isinstance(v, Ptr) and ttext.count("*") == 1 and base_type(ttext.replace("*", "")) != "void":
            v = v.cast(np_type(ttext.replace("*", "")))  # `float* p; aclrtMallocHost((void**)&p, …)`
        self.env[self.name] = (v, ttext)


class ItemRef:
    """`&v[i]` of a vector of pointers: the element a call may set."""

    def __init__(self, seq: list, i: int, name: str):
        self.seq, self.i, self.name = seq, i, f"{name}[{i}]"

    def get(self):
        return self.seq[self.i]

    def set(self, v):
        self.seq[self.i] = v


class BoundMethod:
    """`v.size`, `v.data`, `v.end` of a vector or string before the call: the call reads it."""

    def __init__(self, obj, name):
        self.obj, self.name = obj, name

    def __call__(self):
        if isinstance(self.obj, Vec):
            v = self.obj
            return {"size": v.n, "end": v.ptr.moved(v.n)}.get(self.name, v.ptr)
        return len(self.obj) if self.name == "size" else self.obj


class Vec:
    """A `std::vector<T>` of the host: a host buffer (so `.data()` is a pointer) and a count."""

    def __init__(self, ptr: Ptr, n: int):
        self.ptr, self.n = ptr, n

    def get(self, i):
        return self.ptr.get(i)

    def set(self, i, v):
        self.ptr.set(i, v)

    def __len__(self):
        return self.n


def c_div(a, b):
    """C `/`: integers truncate toward zero."""
    if isinstance(a, int) and isinstance(b, int):
        return R.cdiv(a, b)
    return a / b


def c_mod(a, b):
    """C `%`: the sign of the dividend."""
    return R.cmod(a, b) if isinstance(a, int) and isinstance(b, int) else float(np.fmod(a, b))


#: C binary operators on host values (integer `/` and `%` as C has them).
BINARY_OPS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": c_div, "%": c_mod,
    "<": lambda a, b: a < b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "&": lambda a, b: a & b, "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b, "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
}  # fmt: skip


def format_value(v) -> str:
    """A host value as `printf`-like text (floats as %g)."""
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def parse_number(text: str):
    """A C number literal's value (hex, octal, suffixes, digit separators)."""
    t = text.replace("'", "")
    low = t.lower()
    if low.startswith("0x"):
        return int(low.rstrip("ul"), 16)
    if any(c in low for c in ".e") or (low.endswith("f") and not low.startswith("0x")):
        return float(low.rstrip("f"))
    return int(low.rstrip("ul") or "0", 8 if len(low.rstrip("ul")) > 1 and low.startswith("0") else 10)


def subscript_index(n):
    """The index node of a subscript expression (either grammar's field)."""
    idx = n.child_by_field_name("index") or n.child_by_field_name("indices")
    if idx is not None and idx.type == "subscript_argument_list":
        idx = idx.named_children[0]
    return idx


def declarator_kinds(n) -> list[str]:
    """The node kinds down a declarator chain (pointer, array, reference...)."""
    out = []
    while n is not None:
        out.append(n.type)
        n = n.child_by_field_name("declarator")
    return out


def declarator_name(n) -> str | None:
    """The identifier a (possibly nested) declarator declares."""
    while n is not None and n.type not in ("identifier", "field_identifier"):
        nxt = n.child_by_field_name("declarator")
        if nxt is None:
            return next((c.text.decode() for c in n.named_children if c.type == "identifier"), None)
        n = nxt
    return n.text.decode() if n is not None else None


def type_text(n) -> str:
    """The type of a declaration or type descriptor, as written."""
    t = n.child_by_field_name("type")
    text = t.text.decode() if t is not None else n.text.decode()
    d = n.child_by_field_name("declarator")
    if d is not None and n.type == "type_descriptor":
        text += d.text.decode()
    return text


#: `using X = T;` / `typedef T X;` of the host unit (set by `Host` before it runs).
ALIASES: dict[str, str] = {}


def base_type(ttext: str) -> str:
    """The type name without qualifiers, `&`, `[]`, with the unit's aliases resolved."""
    t = re.sub(r"\b(const|constexpr|static|volatile|std::|AscendC::)\b", "", ttext)
    t = t.replace("&", "").replace("[]", "").strip()
    for _ in range(8):
        if t not in ALIASES:
            break
        t = ALIASES[t]
    return t
