"""Classes and structs: one Python class per instantiation, members initialised as C++ does.

`__init__` runs the members in declaration order (init-list value, else default member
initialiser, else default construction), then the constructor body; methods are translated
when first called and attached to the class; specialisations are picked by their arguments.
"""

from __future__ import annotations

from .. import ctype as T
from ..errors import CxxError
from ..source.decls import ClassInfo, FuncInfo, TParam, VarInfo
from .base import GeneratorBase
from .emit import Emitter
from .scope import ClassInst, FuncCtx, Val, pyname, targ_key


class ClassGen(GeneratorBase):
    def class_inst(self, info: ClassInfo, targs: dict, pf=None, node=None) -> ClassInst:
        key = (id(info), tuple((k, targ_key(v)) for k, v in targs.items()))
        inst = self.classes.get(key)
        if inst is not None:
            return inst
        if info.spec_args is None and targs and info.ns is not None and info.name in info.ns.specs:
            for spec in info.ns.specs[info.name]:
                bound = self.match_spec(spec, list(targs.values()))
                if bound is not None:
                    return self.class_inst(spec, bound, pf, node)
        if len(info.bases) > 1:
            raise self.unsupported(info.pf, info.bases[1], "multiple inheritance")
        if info.node.child_by_field_name("body") is None:
            raise self.err(
                pf or info.pf, node or info.node, f"class {info.name} is declared but never defined"
            )
        self.check(info.pf, info.node)
        inst = ClassInst(info, dict(targs), self.mangle(info, targs))
        self.classes[key] = inst
        ctx = FuncCtx(info.pf, Emitter(1), dict(targs), inst, info.inner, None)
        if info.base is not None:
            bt = self.resolve_type(info.base, ctx)
            if bt.kind != "class":
                raise self.unsupported(info.pf, info.base, f"deriving from {bt}")
            inst.base = bt.decl
        for fi in info.fields:
            if fi.static:
                continue
            inst.fields[fi.name] = self.resolve_type(fi.decl.child_by_field_name("type"), ctx, fi.declarator)
        self.emit_class(inst, ctx)
        return inst

    def match_spec(self, spec: ClassInfo, values: list) -> dict | None:
        """Template arguments of `spec` if the primary's arguments `values` select it."""
        names = {tp.name for tp in spec.tparams or ()}
        bound: dict = {}
        args = spec.spec_args.named_children
        if len(args) != len(values):
            return None
        for a, v in zip(args, values):
            inner = a.child_by_field_name("type") if a.type == "type_descriptor" else a
            text = inner.text.decode() if inner is not None else ""
            if text in names and (a.type != "type_descriptor" or a.child_by_field_name("declarator") is None):
                if text in bound and targ_key(bound[text]) != targ_key(v):
                    return None
                bound[text] = v
                continue
            ctx = FuncCtx(spec.pf, Emitter(1), dict(bound), None, spec.ns, None)
            try:
                want = self.template_arg(a, ctx, TParam("", isinstance(v, T.CType)))
            except CxxError:
                return None
            if isinstance(want, Val):
                want = want.const
            if targ_key(want) != targ_key(v):
                return None
        return {tp.name: bound[tp.name] for tp in spec.tparams or () if tp.name in bound}

    def emit_class(self, inst: ClassInst, ctx: FuncCtx) -> None:
        info = inst.info
        row = info.node.start_point[0] + 1
        em = Emitter(row)
        ctx.em = em
        base = inst.base.py if inst.base is not None else "_cx.Struct"
        em.emit(row, 0, f"class {inst.py}({base}):", header=True)
        convs = []
        for name, t in inst.fields.items():
            conv = _field_conv(t)
            convs.append(f"({name!r}, {conv})")
        em.emit(row, 1, f"_cx_fields = ({', '.join(convs)}{',' if len(convs) == 1 else ''})")
        em.emit(row, 1, f"_cx_need = {_needed_fields(inst)!r}")
        for fi in info.fields:
            if fi.static:
                v = self.global_value(
                    next(d for d in info.inner.names[fi.name] if isinstance(d, VarInfo)), inst
                )
                em.emit(fi.decl.start_point[0] + 1, 1, f"{pyname(fi.name)} = {v.code}")
        ctors = info.ctors
        if len(ctors) > 1:
            ctors = [c for c in ctors if c.node.child_by_field_name("body") is not None]
        if len(ctors) > 1:
            arities = [c.arity() for c in ctors]
            if len(set(arities)) != len(arities):
                raise self.unsupported(info.pf, ctors[1].node, "overloaded constructors of the same arity")
        self.chunks_pending = getattr(self, "chunks_pending", [])
        if not ctors:
            em.emit(row + 1, 1, "def __init__(self):", header=True)
            mark = em.mark()
            if inst.base is not None:
                em.emit(row + 1, 2, f"{inst.base.py}.__init__(self)")
            self.member_inits(inst, ctx, 2, row + 1, {})
            if not em.wrote_since(mark):
                em.emit(row + 1, 2, "pass")
        self.chunks.append((info.pf.path, em.source()))
        for c in ctors:
            py = self.function(c, {}, inst)
            attr = "__init__" if len(ctors) == 1 else f"_cx_init{c.arity()}"
            self.methods.append((inst.py, attr, py))
        if len(ctors) > 1:
            inst.methods[("__ctor__", -1)] = "multi"
        inst.done = True
        self.structs.append(inst)

    def ctor_prologue(self, f: FuncInfo, ctx: FuncCtx, line: int) -> None:
        inits = {}
        base_init = None
        for c in f.node.named_children:
            if c.type == "field_initializer_list":
                for fi in c.named_children:
                    if fi.type != "field_initializer":
                        continue
                    name_node = fi.named_children[0]
                    args = fi.named_children[1]
                    name = name_node.text.decode()
                    if ctx.cls.base is not None and name.split("<")[0] == ctx.cls.base.info.name:
                        base_init = args
                    else:
                        inits[name] = args
        if base_init is not None:
            argv = [self.expr(a, ctx).code for a in base_init.named_children]
            ctx.em.emit(line, 1, f"{ctx.cls.base.py}.__init__(self{''.join(', ' + a for a in argv)})")
        elif ctx.cls.base is not None:
            ctx.em.emit(line, 1, f"{ctx.cls.base.py}.__init__(self)")
        self.member_inits(ctx.cls, ctx, 1, line, inits)

    def member_inits(self, inst: ClassInst, ctx: FuncCtx, indent: int, line: int, inits: dict) -> None:
        """Members in declaration order: init-list value, else default member initialiser, else
        default construction."""
        for fi in inst.info.fields:
            if fi.static:
                continue
            t = inst.fields[fi.name]
            target = f"self.{pyname(fi.name)}"
            if fi.name in inits:
                args = inits[fi.name]
                vals = [a for a in args.named_children]
                code = self.construct(t, vals, ctx, args, brace=args.type == "initializer_list")
            else:
                default = fi.default
                if default is None and fi.declarator.type == "init_declarator":
                    default = fi.declarator.child_by_field_name("value")
                if default is not None:
                    if default.type in ("initializer_list", "argument_list"):
                        code = self.construct(t, list(default.named_children), ctx, default, brace=True)
                    else:
                        code = self.convert(self.expr(default, ctx), t, ctx, default)
                else:
                    code = self.default_value(t, ctx, fi.declarator)
            ctx.em.emit(line, indent, f"{target} = {code}")

    def method(self, inst: ClassInst, name: str, nargs: int, pf, node) -> tuple[str, FuncInfo, ClassInst]:
        """(attribute, FuncInfo, owning instance) of the method `name` taking `nargs` arguments."""
        cur = inst
        while cur is not None:
            cands = cur.info.methods.get(name)
            if cands:
                match = [m for m in cands if _accepts(m, nargs)]
                if not match:
                    raise self.err(
                        pf, node, f"no overload of {cur.info.name}::{name} takes {nargs} arguments"
                    )
                if len(match) > 1:
                    raise self.unsupported(pf, node, f"overloads of {name} with the same number of arguments")
                m = match[0]
                if m.tparams:
                    return "", m, cur
                attr = name if len(cands) == 1 else f"{name}_{m.arity()}"
                key = (name, m.arity())
                if key not in cur.methods:
                    cur.methods[key] = attr
                    py = self.function(m, {}, cur)
                    self.methods.append((cur.py, pyname(attr), py))
                return pyname(attr), m, cur
            cur = cur.base
        raise self.err(pf, node, f"class {inst.info.name} has no method {name!r}")

    # -- globals -----------------------------------------------------------------------------


def _accepts(f: FuncInfo, nargs: int) -> bool:
    total = f.arity()
    required = sum(1 for c in f.params_node.named_children if c.type == "parameter_declaration")
    return required <= nargs <= total


def _field_conv(t: T.CType) -> str:
    if t.kind == "int":
        return f"_cx.s{t.bits}" if t.signed else f"(lambda v: int(v) & {t.mask})"
    if t.kind == "bool":
        return "bool"
    if t.is_float:
        return {"float": "_cx.f32", "half": "_cx.f16", "bfloat16_t": "_cx.bf16"}.get(t.name, "float")
    if t.kind == "array":
        return "list"
    return "None"


def _needed_fields(inst) -> dict:
    """Fields a tiling object must give (no default member initialiser): name -> where declared
    (file, line, column, struct name), for the error naming a field the tiling lacks."""
    need = {}
    cur = inst
    while cur is not None:
        for fi in cur.info.fields:
            if fi.static or fi.default is not None or fi.name in need:
                continue
            r, c = fi.decl.start_point
            need[fi.name] = (cur.info.pf.path, r + 1, c + 1, cur.info.name)
        cur = cur.base
    return need
