"""Structs in host code with their C layout: what `sizeof(S)` and a copy of `&s` to the device see.

A sample may build a descriptor on the host (`struct ListTensorDesc { uint64_t ptrOffset;
TensorDesc desc[2]; uintptr_t dataPtr[2]; } d = {…};`) and `aclrtMemcpy` it to the device,
where the kernel reads it word by word. So a host struct value (a SimpleNamespace; arrays are
lists) has a byte image: fields at their C offsets (natural alignment, the struct padded to its
largest member), little-endian, default member initialisers applied (`uint32_t dim{2};`,
`uint64_t shape[2] = {8, 2048};`), and a device pointer stored in an integer (`(uintptr_t)p`)
written as its device address (`AclRuntime.address_of`).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from .acl import Ptr
from .values import FLOATS, INTS, base_type, declarator_name, float_type

#: Integer types of the host that `INTS` does not spell (all 64-bit on the host).
_WORDS = {"uint64": (64, False), "ptrdiff_t": (64, True)}


@dataclass(frozen=True)
class Field:
    name: str
    ttext: str  # the declared type, `*` for pointers
    size_node: object  # the array size expression, or None
    init: object  # the default member initialiser node, or None


class StructMixin:
    """Host methods for structs of the unit (mixed into `Host`)."""

    def define_struct(self, node, env: dict | None = None) -> str | None:
        """Remember a `struct S { … }` (its fields, in order, and the scope its array sizes and
        member initialisers are read in); returns its name."""
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name_node is None or body is None:
            return None
        fields = []
        for f in body.named_children:
            if f.type != "field_declaration":
                continue
            tnode = f.child_by_field_name("type")
            for d in f.children_by_field_name("declarator"):
                size = d.child_by_field_name("size") if d.type == "array_declarator" else None
                init = f.child_by_field_name("default_value")
                ptr = "*" if d.type == "pointer_declarator" else ""
                fields.append(Field(declarator_name(d), tnode.text.decode() + ptr, size, init))
        name = name_node.text.decode()
        self.struct_defs[name] = fields
        self.struct_envs[name] = env if env is not None else {}
        self.structs[name] = [f.name for f in fields]
        return name

    def new_struct(self, name: str, env: dict) -> SimpleNamespace:
        """A default-initialised struct: member initialisers, else zero (arrays: lists)."""
        env = self.struct_envs.get(name) or env
        v = SimpleNamespace()
        for f in self.struct_defs[name]:
            n = int(self.expr(f.size_node, env)) if f.size_node is not None else None
            items = []
            if f.init is not None:
                init = f.init
                items = (
                    [self.expr(c, env) for c in init.named_children]
                    if init.type == "initializer_list"
                    else [self.expr(init, env)]
                )
            if n is not None:
                fill = [self._zero(f.ttext, env) for _ in range(n - len(items))]
                setattr(v, f.name, [self.conv(f.ttext, x) for x in items] + fill)
            else:
                setattr(v, f.name, self.conv(f.ttext, items[0]) if items else self._zero(f.ttext, env))
        return v

    def _zero(self, ttext: str, env: dict):
        base = base_type(ttext)
        if "*" in ttext:
            return None
        if base in self.struct_defs:
            return self.new_struct(base, env)
        return 0

    def struct_brace(self, name: str, init, env: dict) -> SimpleNamespace:
        """`S s = {a, {b, c}, {p, q}}` (designators too): the fields in order."""
        v = self.new_struct(name, env)
        fields = self.struct_defs[name]
        for f, c in zip(fields, [c for c in init.named_children if c.type != "comment"]):
            if c.type == "initializer_pair":
                f = next(x for x in fields if x.name == c.child_by_field_name("designator").text.decode()[1:])
                c = c.child_by_field_name("value")
            setattr(v, f.name, self._member_value(f, c, getattr(v, f.name), env))
        return v

    def _member_value(self, f: Field, c, cur, env):
        base = base_type(f.ttext)
        if isinstance(cur, list) and c.type == "initializer_list":
            items = [
                self.struct_brace(base, x, env)
                if base in self.struct_defs and x.type == "initializer_list"
                else self._copy(self.expr(x, env))
                for x in c.named_children
            ]
            return [self.conv(f.ttext, x) for x in items] + cur[len(items) :]
        if base in self.struct_defs and c.type == "initializer_list":
            return self.struct_brace(base, c, env)
        return self._copy(self.conv(f.ttext, self.expr(c, env)))

    @staticmethod
    def _copy(v):
        """C structs and arrays are values: a member gets its own copy."""
        if isinstance(v, SimpleNamespace):
            return SimpleNamespace(**{k: StructMixin._copy(x) for k, x in vars(v).items()})
        if isinstance(v, list):
            return [StructMixin._copy(x) for x in v]
        return v

    # -- layout ---------------------------------------------------------------------------------
    def type_layout(self, ttext: str, env: dict) -> tuple[int, int]:
        """(size, alignment) of a host type."""
        if "*" in ttext:
            return 8, 8
        base = base_type(ttext)
        if base in INTS or base in _WORDS:
            bits = (INTS.get(base) or _WORDS[base])[0]
            return bits // 8, bits // 8
        if base in FLOATS:
            n = float_type(base).itemsize
            return n, n
        if base == "bool":
            return 1, 1
        if base in self.struct_defs:
            size, align, _ = self.struct_layout(base, env)
            return size, align
        raise KeyError(ttext)

    def struct_layout(self, name: str, env: dict) -> tuple[int, int, list]:
        """(size, alignment, [(field, offset, count)]) with C's natural alignment."""
        env = self.struct_envs.get(name) or env
        off, align, out = 0, 1, []
        for f in self.struct_defs[name]:
            size, a = self.type_layout(f.ttext, env)
            n = int(self.expr(f.size_node, env)) if f.size_node is not None else None
            off = -(-off // a) * a
            out.append((f, off, n))
            off += size * (n or 1)
            align = max(align, a)
        return -(-off // align) * align, align, out

    def struct_bytes(self, value, ttext: str, env: dict) -> bytes:
        """The byte image of a host value of type `ttext` (a struct, an array element...)."""
        base = base_type(ttext)
        if base in self.struct_defs and isinstance(value, SimpleNamespace):
            size, _a, fields = self.struct_layout(base, env)
            buf = bytearray(size)
            for f, off, n in fields:
                cur = getattr(value, f.name)
                fsize, _ = self.type_layout(f.ttext, env)
                for i, x in enumerate(cur if n is not None else [cur]):
                    raw = self.struct_bytes(x, f.ttext, env)
                    buf[off + i * fsize : off + i * fsize + len(raw)] = raw
            return bytes(buf)
        size, _a = self.type_layout(ttext, env)
        if isinstance(value, Ptr):
            value = self.acl.address_of(value)
        if value is None:
            value = 0
        if base in FLOATS:
            return float_type(base).type(value).tobytes()
        return (int(value) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
