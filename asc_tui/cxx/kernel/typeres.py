"""Type names → static types, template arguments, and how a declared object is constructed."""

from __future__ import annotations

from .. import api
from .. import ctype as T
from ..errors import CxxError
from ..source.decls import AliasInfo, ClassInfo, EnumInfo, TParam, VarInfo, all_decls
from .base import GeneratorBase
from .scope import FuncCtx, Val

_TWIN_STRUCT_ARG = {
    ("DataCopy", 2): "DataCopyParams",
    ("DataCopyPad", 2): "DataCopyExtParams",
    ("DataCopyPad", 3): "DataCopyPadExtParams",
    ("LoadData", 2): "LoadData2DParams",
    ("Mmad", 3): "MmadParams",
    ("Fixpipe", 2): "FixpipeParamsV220",
}


class TypeResolver(GeneratorBase):
    def resolve_type(self, node, ctx: FuncCtx, declarator=None) -> T.CType:
        t = self.base_type(node, ctx) if node is not None else T.OPAQUE
        d = declarator
        while d is not None:
            k = d.type
            if k in ("pointer_declarator", "abstract_pointer_declarator"):
                t = T.CType("ptr", f"{t}*", elem=t)
            elif k in ("array_declarator", "abstract_array_declarator"):
                size = d.child_by_field_name("size")
                n = -1 if size is None else self.const_value(size, ctx)  # -1: sized by its initializer
                t = T.CType("array", f"{t}[{n}]", elem=t, length=int(n))
            elif k == "function_declarator":
                pass
            d = d.child_by_field_name("declarator") if k not in ("identifier", "field_identifier") else None
        return t

    def base_type(self, node, ctx: FuncCtx) -> T.CType:
        k = node.type
        text = node.text.decode()
        if k == "type_descriptor":
            return self.resolve_type(
                node.child_by_field_name("type"), ctx, node.child_by_field_name("declarator")
            )
        if k in ("primitive_type", "sized_type_specifier"):
            key = " ".join(text.split()).replace("signed int", "int").replace("unsigned int", "unsigned")
            key = {"long int": "long", "unsigned long int": "unsigned long", "short int": "short"}.get(
                key, key
            )
            if key in T.SCALARS:
                return T.SCALARS[key]
            if key.startswith("unsigned") and key.replace("unsigned", "unsigned") in T.SCALARS:
                return T.SCALARS[key]
            raise self.unsupported(ctx.pf, node, f"type {text}")
        if k == "placeholder_type_specifier":
            return T.CType("auto", "auto")
        if k in ("struct_specifier", "class_specifier", "enum_specifier", "union_specifier"):
            name = node.child_by_field_name("name")
            if name is None:
                raise self.unsupported(ctx.pf, node, "anonymous struct/enum types")
            return self._named_type(name.text.decode(), ctx, node)
        if k in ("type_identifier", "identifier", "namespace_identifier"):
            return self._named_type(text, ctx, node)
        if k == "qualified_identifier" or k == "template_type":
            return self._named_type(text, ctx, node)
        if k == "dependent_type":
            return self.base_type(node.named_children[0], ctx)
        if k == "decltype":
            return self.expr(node.named_children[0], ctx).type
        raise self.unsupported(ctx.pf, node, f"type {text}")

    def _named_type(self, text: str, ctx: FuncCtx, node) -> T.CType:
        if node.type in ("qualified_identifier", "template_type"):
            picked = self.trait_type(node, ctx)
            if picked is not None:
                return picked
        name_node = node
        args_node = None
        if node.type == "template_type":
            name_node = node.child_by_field_name("name")
            args_node = node.child_by_field_name("arguments")
        elif node.type == "qualified_identifier":
            inner = node
            while inner.type == "qualified_identifier":
                inner = inner.child_by_field_name("name")
            if inner.type == "template_type":
                args_node = inner.child_by_field_name("arguments")
                text = text[: text.index("<")] if "<" in text else text
        name = name_node.text.decode() if node.type == "template_type" else text
        name = name.split("<")[0].strip()
        short = name.split("::")[-1].strip()
        if name.startswith("::"):
            name = name[2:]
        if short in ctx.tmap and "::" not in name:
            v = ctx.tmap[short]
            if isinstance(v, T.CType):
                return v
            raise self.err(ctx.pf, node, f"template parameter {short} is a value, not a type")
        qualified_twin = name.startswith("AscendC::")
        head, _, member = name.partition("::")
        bound = ctx.tmap.get(head)
        if member and "::" not in member and isinstance(bound, T.CType) and bound.kind == "class":
            return self._member_type(bound.decl, member, ctx, node)  # typename X_TYPE::T
        if short == "GM_ADDR":
            return T.GM_ADDR
        if short == "__cx_tiling_t":
            return self.tiling_struct_type(ctx, node)
        if not qualified_twin:
            decls = self.lookup_qualified(ctx.ns, name) if "::" in name else self.lookup_type_name(ctx, short)
            for d in decls:
                if isinstance(d, ClassInfo):
                    targs = self.template_args(args_node, ctx, d.tparams) if d.tparams else {}
                    if d.tparams:
                        targs = self.bind_targs(d, d.tparams, list(targs.values()), ctx.pf, node)
                    inst = self.class_inst(d, targs, ctx.pf, node)
                    return T.CType("class", inst.py, decl=inst)
                if isinstance(d, EnumInfo):
                    return T.CType("enum", d.name, 32, True, decl=d)
                if isinstance(d, AliasInfo):
                    actx = FuncCtx(d.pf, ctx.em, dict(ctx.tmap), ctx.cls, d.ns, None)
                    if d.tparams and args_node is not None:
                        given = list(self.template_args(args_node, ctx, d.tparams).values())
                        actx.tmap.update(self.bind_targs(d, d.tparams, given, ctx.pf, node))
                    decl = (
                        d.node.child_by_field_name("declarator") if d.node.type == "type_definition" else None
                    )
                    return self.resolve_type(
                        d.type_node,
                        actx,
                        decl if decl is not None and decl.type != "type_identifier" else None,
                    )
        if short in T.SCALARS and "::" not in name.replace("std::", "").replace("AscendC::", ""):
            return T.SCALARS[short]
        if api.twin_type(short):
            args = tuple(self.template_args(args_node, ctx, None).values()) if args_node is not None else ()
            return T.CType("twin", short, args=args)
        raise self.err(ctx.pf, node, f"unknown type {name!r}")

    def _member_type(self, inst, member: str, ctx: FuncCtx, node) -> T.CType:
        """A type declared inside a class instance (its `using`/typedef or nested class)."""
        mctx = FuncCtx(inst.info.pf, ctx.em, dict(inst.targs), inst, inst.info.inner, None)
        if inst.info.inner is not None and member in inst.info.inner.names:
            return self._named_type(member, mctx, node if node.type != "template_type" else node)
        raise self.err(ctx.pf, node, f"{inst.info.name} has no member type {member!r}")

    def lookup_type_name(self, ctx: FuncCtx, name: str):
        if ctx.cls is not None:
            cur = ctx.cls
            while cur is not None:
                found = cur.info.inner.names.get(name) if cur.info.inner else None
                if found:
                    return found
                if cur.info.name == name:
                    return [cur.info]
                cur = cur.base
        return self.lookup_ns(ctx.ns, name)

    def tiling_struct_type(self, ctx: FuncCtx, node) -> T.CType:
        cands = [
            d
            for d in all_decls(self.root)
            if isinstance(d, ClassInfo) and "tiling" in d.name.lower() and d.node.child_by_field_name("body")
        ]
        if len(cands) == 1:
            inst = self.class_inst(cands[0], {}, ctx.pf, node)
            return T.CType("class", inst.py, decl=inst)
        return T.CType("opaque", "TilingData")

    # -- template arguments -------------------------------------------------------------------
    def template_args(self, args_node, ctx: FuncCtx, tparams) -> dict:
        out = {}
        if args_node is None:
            return out
        for i, a in enumerate(args_node.named_children):
            tp = tparams[i] if tparams and i < len(tparams) else None
            out[tp.name if tp else i] = self.template_arg(a, ctx, tp)
        return out

    def template_arg(self, a, ctx: FuncCtx, tp: TParam | None):
        """A CType for a type argument; a compile-time value (or, for the twin, a Val) otherwise."""
        want_type = tp.is_type if tp is not None else None
        if want_type and a.type != "type_descriptor":
            return self.resolve_type(a, ctx)
        if a.type == "type_descriptor" and want_type is not False:
            inner = a.child_by_field_name("type")
            if (
                a.child_by_field_name("declarator") is not None
                or inner.type != "type_identifier"
                and inner.type != "qualified_identifier"
            ):
                return self.resolve_type(a, ctx)
            try:
                return self.resolve_type(a, ctx)
            except CxxError as exc:  # a name that is not a type may be a value (PIPE_V, N...)
                if want_type or not exc.bare_message.startswith(("unknown type", "template parameter")):
                    raise
        node = a.child_by_field_name("type") if a.type == "type_descriptor" else a
        if a.type == "type_descriptor" and a.child_by_field_name("declarator") is None:
            node = a.child_by_field_name("type")
        if tp is None:
            val = self.expr(node, ctx)
            if not val.code:
                raise self.unsupported(ctx.pf, node, f"template argument {node.text.decode()}")
            return val
        if tp is not None:
            val = self.expr(node, ctx)
            if not val.is_const and val.code.startswith("_AC."):
                return val  # a kernel API enum value (TPosition::GM...): passed through as is
            v = self.const_value(node, ctx)
            if tp.type_node is not None:
                t = self.resolve_type(tp.type_node, ctx)
                if t.is_arith:
                    v = self.literal(v, t).const
            return v
        return self.expr(node, ctx)

    # -- construction -----------------------------------------------------------------------------
    def default_value(self, t: T.CType, ctx: FuncCtx, node) -> str:
        """A default-initialised object of type `t` (scalars start at 0, as the tools expect)."""
        if t.is_float:
            return "0.0"
        if t.kind == "bool":
            return "False"
        if t.is_int:
            return "0"
        if t.kind == "ptr":
            return "None"
        if t.kind == "array":
            if t.length < 0:
                raise self.unsupported(ctx.pf, node, "arrays without a size")
            if t.elem.kind in ("class", "twin", "array"):
                return f"[{self.default_value(t.elem, ctx, node)} for _ in range({t.length})]"
            return f"_cx.new_array({t.length}, {self.default_value(t.elem, ctx, node)})"
        if t.kind == "class":
            ctors = t.decl.info.ctors
            if ctors and all(
                c.arity() > 0
                and not any(p.type == "optional_parameter_declaration" for p in c.params_node.named_children)
                for c in ctors
            ):
                raise self.err(ctx.pf, node, f"{t.decl.info.name} has no default constructor")
            return f"{t.decl.py}()"
        if t.kind == "twin":
            return self.twin_construct(t, [], ctx, node)
        if t.kind in ("opaque", "auto"):
            return "None"
        raise self.unsupported(ctx.pf, node, f"a variable of type {t}")

    def twin_construct(self, t: T.CType, args: list[str], ctx: FuncCtx, node) -> str:
        if t.name in api.HANDLE_CLASSES and not args:
            return "None"
        targs = []
        if t.name in api.TEMPLATE_CTORS or (t.name in api.ADDRESS_CTORS and len(args) == 3):
            for a in t.args:
                if isinstance(a, T.CType) and a.kind == "twin":
                    targs.append(self.twin_construct(a, [], ctx, node))
                elif isinstance(a, T.CType):
                    d = api.dtype_expr(a)
                    if d is None:
                        raise self.unsupported(ctx.pf, node, f"{t.name}<{a}>")
                    targs.append(d)
                elif isinstance(a, Val):
                    targs.append(a.code)
                else:
                    targs.append(repr(a))
        return f"{api.twin_ref(t.name)}({', '.join(targs + api.struct_args(t.name, args))})"

    def construct(self, t: T.CType, vals: list, ctx: FuncCtx, node, brace: bool = False) -> str:
        """`T x(args)`, `T x{args}`, `T x = {args}`: the Python expression building the object."""
        if t.kind == "array":
            if t.length < 0:
                t = T.CType("array", t.name, elem=t.elem, length=len(vals))
            items = [self.array_item(t.elem, v, ctx) for v in vals]
            rest = t.length - len(items)
            if rest > 0 and t.elem.kind in ("class", "twin", "array"):  # one object per element
                fill = f"[{self.default_value(t.elem, ctx, node)} for _ in range({rest})]"
                return f"[{', '.join(items)}] + {fill}" if items else fill
            items += [self.default_value(t.elem, ctx, node)] * rest
            return f"[{', '.join(items)}]"
        if t.is_arith or t.kind == "ptr":
            if not vals:
                return self.default_value(t, ctx, node)
            if len(vals) != 1:
                raise self.err(ctx.pf, node, f"too many initialisers for {t}")
            return self.convert(self.expr(vals[0], ctx), t, ctx, vals[0])
        if t.kind == "twin":
            args, kwargs = self.init_args(vals, ctx)
            return self.twin_construct(t, args + kwargs, ctx, node)
        if t.kind == "class":
            info = t.decl.info
            if brace and not info.ctors:  # aggregate initialisation
                names = list(t.decl.fields)
                parts = [f"{t.decl.py}()"]
                code = []
                for i, v in enumerate(vals):
                    if v.type == "initializer_pair":
                        fname = v.child_by_field_name("designator").text.decode().lstrip(".")
                        v = v.child_by_field_name("value")
                    else:
                        if i >= len(names):
                            raise self.err(ctx.pf, v, f"too many initialisers for {info.name}")
                        fname = names[i]
                        if v.type == "initializer_list":
                            code.append(
                                (
                                    fname,
                                    self.construct(
                                        t.decl.fields[fname], list(v.named_children), ctx, v, True
                                    ),
                                )
                            )
                            continue
                    code.append((fname, self.convert(self.expr(v, ctx), t.decl.fields[fname], ctx, v)))
                if not code:
                    return parts[0]
                kv = ", ".join(f"({n!r}, {c})" for n, c in code)
                return f"_cx.agg({parts[0]}, ({kv},))"
            if len(vals) == 1 and not brace:
                v = self.expr(vals[0], ctx)
                if v.type.kind == "class" and v.type.decl is t.decl:
                    return self.convert(v, t, ctx, vals[0])
            args = [self.expr(v, ctx) for v in vals]
            return self.call_ctor(t.decl, args, ctx, node)
        if t.kind in ("opaque", "auto"):
            if len(vals) == 1:
                return self.expr(vals[0], ctx).code
        raise self.unsupported(ctx.pf, node, f"initialising a {t}")

    def array_item(self, elem: T.CType, v, ctx: FuncCtx) -> str:
        """One element of `T a[] = {...}`: a braced `{...}` builds an object (or a nested array)."""
        if v.type == "initializer_list" and (elem.kind in ("class", "twin", "array")):
            return self.construct(elem, list(v.named_children), ctx, v, True)
        return self.convert(self.expr(v, ctx), elem, ctx, v)

    def init_args(self, vals: list, ctx: FuncCtx) -> tuple[list[str], list[str]]:
        args, kwargs = [], []
        for v in vals:
            if v.type == "initializer_pair":
                name = v.child_by_field_name("designator").text.decode().lstrip(".")
                kwargs.append(f"{name}={self.expr(v.child_by_field_name('value'), ctx).code}")
            else:
                args.append(self.expr(v, ctx).code)
        return args, kwargs

    def twin_struct_arg(self, fname: str, index: int) -> str | None:
        return _TWIN_STRUCT_ARG.get((fname, index))

    def const_value(self, node, ctx: FuncCtx):
        v = self.expr(node, ctx)
        if not v.is_const:
            raise self.err(ctx.pf, node, f"{node.text.decode()!r} is not a compile-time constant")
        return v.const


__all__ = ["TypeResolver", "VarInfo"]
