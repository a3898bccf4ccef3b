"""Values and scopes of code generation: a translated expression carries its static type."""

from __future__ import annotations

import keyword
from dataclasses import dataclass, field

from .. import ctype as T
from ..ctype import CType
from ..source.preprocess import PFile
from .emit import Emitter

_NOCONST = object()


@dataclass(frozen=True)
class Val:
    """A translated expression: Python `code`, its C++ type, a compile-time value if known."""

    code: str
    type: CType
    const: object = _NOCONST
    lvalue: bool = False  # names a variable/field (copy on struct assignment)
    width: int | None = None  # the value is known to be in [0, 2**width): lets `& mask` go

    def bits(self) -> int | None:
        """An upper bound on the bit length of this (non-negative) value, if one is known."""
        if self.is_const and type(self.const) is int:
            return self.const.bit_length() if self.const >= 0 else None
        t = self.type
        if t.kind == "bool":
            return 1
        if t.kind == "int" and not t.signed:
            return t.bits if self.width is None else min(self.width, t.bits)
        return self.width

    @property
    def is_const(self) -> bool:
        return self.const is not _NOCONST


NOCONST = _NOCONST


@dataclass
class Local:
    py: str
    type: CType
    const: object = _NOCONST


@dataclass
class ClassInst:
    """One instantiation of a user class (template arguments bound)."""

    info: object  # ClassInfo
    targs: dict  # name -> CType | value
    py: str
    fields: dict[str, CType] = field(default_factory=dict)
    methods: dict[tuple, str] = field(default_factory=dict)  # (name, arity) -> attribute name
    base: ClassInst | None = None
    done: bool = False
    _layout: tuple | None = None

    def layout(self) -> tuple[int, int]:
        """(sizeof, alignof) with C++'s padding rules."""
        from ..ctype import alignof, sizeof

        if self._layout is None:
            off, align = 0, 1
            if self.base is not None:
                off, align = self.base.layout()
            for t in self.fields.values():
                a = alignof(t)
                off = -(-off // a) * a + sizeof(t)
                align = max(align, a)
            self._layout = (max(-(-off // align) * align, 1), align)
        return self._layout

    @property
    def name(self) -> str:
        return self.info.name


@dataclass
class FuncCtx:
    """What one function body's translation needs to know."""

    pf: PFile
    em: Emitter
    tmap: dict  # template parameter -> CType | value
    cls: ClassInst | None
    ns: object  # Namespace of the declaration
    ret: CType | None
    scopes: list[dict[str, Local]] = field(default_factory=lambda: [{}])
    loops: list[str | None] = field(default_factory=list)  # continue-prefix per enclosing loop
    tmp: int = 0
    used: set = field(default_factory=set)
    refs: list = field(default_factory=list)  # scalar reference parameters (written back)

    def lookup(self, name: str) -> Local | None:
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        return None

    def fresh(self, stem: str) -> str:
        self.tmp += 1
        return f"_cx_{stem}{self.tmp}"


def targ_name(v) -> str:
    if isinstance(v, Val):
        return v.code.rsplit(".", 1)[-1]
    if isinstance(v, T.CType):
        return (v.name or v.kind).replace(" ", "_").replace("*", "p").replace(":", "_")
    return str(v).replace("-", "m").replace(".", "_")


def targ_key(v):
    if isinstance(v, Val):
        return ("E", v.code)
    if isinstance(v, T.CType):
        return ("T", str(v), id(v.decl) if v.decl is not None else 0)
    return ("V", v)


_RESERVED = set(keyword.kwlist) | {"self", "range", "len", "list", "int", "float", "bool", "print", "type"}
_RESERVED |= {"min", "max", "abs", "object", "id", "str", "dict", "set", "tuple", "iter", "next"}


def pyname(name: str) -> str:
    return name + "_" if name in _RESERVED or name.startswith("_cx") or name == "_AC" else name


def single_declarator(decl):
    """(init_declarator, identifier) of a `T name = value;` declaration of exactly one plain
    name, else None: the shape both the range-loop and the element-wise loop forms accept."""
    decls = decl.children_by_field_name("declarator")
    if len(decls) != 1 or decls[0].type != "init_declarator":
        return None
    name = decls[0].child_by_field_name("declarator")
    return None if name.type != "identifier" else (decls[0], name)
