"""Names in expressions: locals, members, template parameters, globals, enums, the twin.

Lookup order as in C++ for what the subset has: block scopes, template parameters, members of
the class (and its bases), enclosing namespaces with their using-directives, then the kernel
API twin (`AscendC::X`, or unqualified after `using namespace AscendC`).
"""

from __future__ import annotations

from ... import ascendc as _twin
from .. import api
from .. import ctype as T
from ..errors import CxxError
from ..source.decls import ClassInfo, EnumInfo, FuncInfo, VarInfo
from .base import GeneratorBase
from .scope import NOCONST, FuncCtx, Val, pyname

_SAME = ("is_same", "IsSameType")
_SAME_V = ("is_same_v",)


def _segments(node) -> tuple[list, list[str]]:
    """The parts of a qualified name (`std::is_same<A, B>::value`: std, is_same<A, B>, value) as
    nodes and as text."""
    segs = []
    cur = node
    while cur is not None and cur.type == "qualified_identifier":
        segs.append(cur.child_by_field_name("scope"))
        cur = cur.child_by_field_name("name")
    segs.append(cur)
    return segs, [s.text.decode() if s is not None else "" for s in segs]


class NameGen(GeneratorBase):
    def x_this(self, node, ctx):
        if ctx.cls is None:
            raise self.err(ctx.pf, node, "'this' outside a member function")
        return Val("self", T.CType("ptr", "this", elem=T.CType("class", ctx.cls.py, decl=ctx.cls)))

    def x_identifier(self, node, ctx):
        return self.name_value(node.text.decode(), node, ctx)

    x_field_identifier = x_identifier
    x_type_identifier = x_identifier
    x_namespace_identifier = x_identifier

    def name_value(self, name: str, node, ctx: FuncCtx) -> Val:
        local = ctx.lookup(name)
        if local is not None:
            if local.const is not NOCONST:
                return Val(repr(local.const), local.type, local.const)
            return Val(local.py, local.type, lvalue=True)
        if name in ctx.tmap:
            v = ctx.tmap[name]
            if isinstance(v, T.CType):
                return Val(api.dtype_expr(v) or "None", T.DTYPE, v)
            if isinstance(v, Val):
                return v
            t = T.BOOL if isinstance(v, bool) else T.FLOAT if isinstance(v, float) else T.INT64
            return Val(repr(v), t, v)
        if ctx.cls is not None:
            cur = ctx.cls
            while cur is not None:
                if name in cur.fields:
                    return Val(f"self.{pyname(name)}", cur.fields[name], lvalue=True)
                inner = cur.info.inner.names.get(name) if cur.info.inner else None
                if inner:
                    return self.decl_value(inner, node, ctx, name, cur)
                cur = cur.base
        if name in api.ALIASES:
            code, t = api.ALIASES[name]
            return Val(code, t)
        decls = self.lookup_ns(ctx.ns, name)
        if decls:
            return self.decl_value(decls, node, ctx, name)
        if name in T.SCALARS:
            return Val(api.dtype_expr(T.SCALARS[name]) or "None", T.DTYPE, T.SCALARS[name])
        if api.twin_has(name):
            return self.twin_path(name, node, ctx)
        raise self.err(ctx.pf, node, f"unknown identifier {name!r}")

    def decl_value(self, decls, node, ctx: FuncCtx, name: str, cls=None) -> Val:
        d = decls[0]
        if isinstance(d, VarInfo):
            return self.global_value(d, cls)
        if isinstance(d, EnumInfo):
            return self.enum_value(d, name, ctx, node)
        if isinstance(d, FuncInfo):
            return Val("", T.CType("func", name, decl=decls))
        if isinstance(d, ClassInfo):
            return Val("", T.CType("typename", name, decl=d))
        raise self.unsupported(ctx.pf, node, f"using {name} as a value")

    def enum_value(self, d: EnumInfo, name: str, ctx, node) -> Val:
        if d.members and d.members[0][0] == "__member__":
            d = d.members[0][1]
        if name == d.name and not any(m == name for m, _ in d.members):
            return Val("", T.CType("typename", name, decl=d))
        value = -1
        ectx = FuncCtx(d.pf, ctx.em, {}, None, d.ns, None)
        for mname, vnode in d.members:
            value = self.const_value(vnode, ectx) if vnode is not None else value + 1
            if mname == name:
                return Val(
                    str(value) if value >= 0 else f"({value})",
                    T.CType("enum", d.name, 32, True, decl=d),
                    value,
                )
        raise self.err(ctx.pf, node, f"enum {d.name} has no member {name!r}")

    def x_qualified_identifier(self, node, ctx):
        trait = self.type_trait(node, ctx)
        if trait is not None:
            return trait
        text = node.text.decode().replace(" ", "")
        name_node = node.child_by_field_name("name")
        if name_node is not None and name_node.type in ("template_function", "template_type"):
            return Val("", T.CType("func", text, decl=node))
        if text.startswith("AscendC::") or text.startswith("::AscendC::"):
            return self.twin_path(text.split("AscendC::", 1)[1], node, ctx)
        parts = text.lstrip(":").split("::")
        bound = ctx.tmap.get(parts[0])
        if len(parts) == 2 and isinstance(bound, T.CType) and bound.kind == "class":  # Trait::K
            return self.class_member(bound.decl, parts[1], node, ctx)
        if parts[0] == "std" and parts[-1] in ("min", "max"):
            return Val("", T.CType("func", parts[-1], decl="std"))
        decls = self.lookup_qualified(ctx.ns, text)
        if ctx.cls is not None and not decls and parts[0] == ctx.cls.info.name:
            return self.name_value(parts[-1], node, ctx)
        if decls:
            return self.decl_value(decls, node, ctx, parts[-1])
        if api.twin_has(parts[0]):
            return self.twin_path("::".join(parts), node, ctx)
        owner = self.scope_class(node, ctx)
        if owner is not None:  # Alias::K, Scenario<2>::K: a member of a class type
            return self.class_member(owner, parts[-1], node, ctx)
        raise self.err(ctx.pf, node, f"unknown identifier {text!r}")

    def scope_class(self, node, ctx):
        """The class instance the scope of `A::name` names (an alias, a template-id), or None."""
        scope = node.child_by_field_name("scope")
        if scope is None or node.child_by_field_name("name").type == "qualified_identifier":
            return None
        try:
            t = self.base_type(scope, ctx)
        except CxxError:
            return None
        return t.decl if t.kind == "class" else None

    def class_member(self, inst, name: str, node, ctx) -> Val:
        """`C::name` of the class instance `inst`, searched in its bases too."""
        cur = inst
        while cur is not None:
            inner = cur.info.inner.names.get(name) if cur.info.inner else None
            if inner:
                return self.decl_value(inner, node, ctx, name, cur)
            cur = cur.base
        raise self.err(ctx.pf, node, f"{inst.info.name} has no member {name!r}")

    def type_trait(self, node, ctx) -> Val | None:
        """`std::is_same<A, B>::value`, `std::is_same_v<A, B>`, `AscendC::IsSameType<A, B>::value`:
        a constant of the instantiation being translated; None for any other name."""
        segs, names = _segments(node)
        for i, seg in enumerate(segs):
            if seg is None or seg.type not in ("template_type", "template_function"):
                continue
            base = seg.child_by_field_name("name").text.decode()
            rest = names[i + 1 :]
            if not (base in _SAME and rest == ["value"] or base in _SAME_V and not rest):
                continue
            if any(n not in ("std", "AscendC", "") for n in names[:i]):
                return None
            targs = list(self.template_args(seg.child_by_field_name("arguments"), ctx, None).values())
            if len(targs) != 2 or not all(isinstance(t, T.CType) for t in targs):
                raise self.err(ctx.pf, seg, f"{base} takes two types")
            same = targs[0] == targs[1]
            return Val("True" if same else "False", T.BOOL, same)
        return None

    def trait_type(self, node, ctx) -> T.CType | None:
        """`AscendC::Conditional<c, A, B>::type`, `std::conditional_t<c, A, B>`: the type the
        twin's trait picks for this instantiation; None for any other name."""
        segs, names = _segments(node)
        for i, seg in enumerate(segs):
            if seg is None or seg.type != "template_type":
                continue
            trait = api.TYPE_TRAITS.get(seg.child_by_field_name("name").text.decode())
            if trait is None or names[i + 1 :] != ([trait[1]] if trait[1] else []):
                continue
            if any(n not in ("std", "AscendC", "") for n in names[:i]):
                return None
            targs = self.template_args(seg.child_by_field_name("arguments"), ctx, None).values()
            vals = [a.const if isinstance(a, Val) else a for a in targs]
            if any(v is NOCONST for v in vals):
                raise self.err(ctx.pf, seg, f"{names[i]}: the arguments must be compile-time constants")
            picked = getattr(_twin, trait[0])(*vals)
            if not isinstance(picked, T.CType):
                raise self.err(ctx.pf, seg, f"{names[i]} does not name a type here")
            return picked
        return None

    def twin_path(self, path: str, node, ctx) -> Val:
        from ... import ascendc

        parts = path.split("::")
        obj = ascendc
        for p in parts:
            try:
                obj = getattr(obj, p)
            except AttributeError:
                if parts[0] in api.NOOPS:
                    return Val("_cx.noop", T.CType("opaque", parts[0]))
                raise self.err(
                    ctx.pf, node, f"AscendC::{path} is not in the kernel API twin (asc_tui.ascendc)"
                ) from None
        if len(parts) == 1 and parts[0] in T.SCALARS:
            return Val(api.dtype_expr(T.SCALARS[parts[0]]) or "None", T.DTYPE, T.SCALARS[parts[0]])
        if type(obj) in (int, bool):  # a plain constant of the twin (K_MAX_DIM): usable as one
            return Val(repr(obj), T.BOOL if type(obj) is bool else T.INT32, obj)
        return Val(api.twin_ref(parts[0]) + "".join("." + p for p in parts[1:]), T.CType("opaque", parts[-1]))

    # -- operators ----------------------------------------------------------------------------
