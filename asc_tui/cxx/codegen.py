"""Translation of declarations on demand: functions, classes, template instances, globals.

Each translated function or class is its own chunk of Python whose first statement sits on the
C++ line it comes from; chunks are compiled under the C++ file's name (headers under theirs),
so tracebacks, records and hot lines name the user's file and line. Chunks are appended after
their dependencies (a base class before its derived class), so executing them in order works.
"""

from __future__ import annotations

import keyword

from . import api
from . import ctype as T
from .calls import CallGen
from .emit import Emitter
from .errors import CxxError, Unsupported
from .expr import ExprGen
from .scope import ClassInst, FuncCtx, Local, Val
from .stmt import StmtGen
from .symbols import AliasInfo, ClassInfo, Decl, EnumInfo, FuncInfo, Namespace, NsAlias, TParam, VarInfo
from .symbols import decl_name as _decl_name
from .typeres import TypeResolver

_RESERVED = set(keyword.kwlist) | {"self", "range", "len", "list", "int", "float", "bool", "print", "type"}
_RESERVED |= {"min", "max", "abs", "object", "id", "str", "dict", "set", "tuple", "iter", "next"}


def pyname(name: str) -> str:
    return name + "_" if name in _RESERVED or name.startswith("_cx") or name == "_AC" else name


class Translator(TypeResolver, CallGen, ExprGen, StmtGen):
    def __init__(self, root: Namespace, overrides: dict | None = None, errors=()):
        self.root = root
        self.overrides = dict(overrides or {})
        self.chunks: list[tuple[str, str]] = []  # (file path, python source)
        self.methods: list[tuple[str, str, str]] = []  # (class py, attribute, function py)
        self.funcs: dict[tuple, str] = {}
        self.classes: dict[tuple, ClassInst] = {}
        self.globals: dict[int, Val] = {}
        self.bound: dict[str, VarInfo] = {}  # overrides that hit a constexpr/const global
        self.syntax_errors = list(errors)
        self.structs: list[ClassInst] = []
        self._names: set[str] = set()

    # -- names -------------------------------------------------------------------------------
    def unique(self, stem: str) -> str:
        name = stem
        i = 1
        while name in self._names:
            i += 1
            name = f"{stem}_{i}"
        self._names.add(name)
        return name

    def mangle(self, decl: Decl, targs: dict | None) -> str:
        parts = [p for p in (decl.ns.path if decl.ns else [])] + [decl.name]
        base = "__".join(parts)
        if targs:
            suffix = "_".join(_targ_name(v) for v in targs.values())
            base = f"{base}__{suffix}"
        return self.unique(pyname(base))

    def err(self, pf, node, msg: str, cls=CxxError, hint=None) -> CxxError:
        row, col = node.start_point
        return cls(msg, pf.path, row + 1, pf.orig_col(row, col) + 1, hint=hint)

    def unsupported(self, pf, node, what: str, hint=None) -> CxxError:
        return self.err(pf, node, what, Unsupported, hint)

    def check(self, pf, node) -> None:
        """Raise the syntax error inside `node`, if any (only what is translated is checked)."""
        if node.has_error:
            from .parse import syntax_error

            raise syntax_error(pf, node)

    # -- functions ---------------------------------------------------------------------------
    def bind_targs(self, f: Decl, tparams, given: list, pf, node, deduced: dict | None = None) -> dict:
        out: dict = {}
        deduced = deduced or {}
        for tp in tparams or ():
            if tp.variadic:
                raise self.unsupported(pf, node, f"variadic templates ({f.name})")
        for i, tp in enumerate(tparams or ()):
            if i < len(given):
                out[tp.name] = given[i]
            elif tp.name in deduced:
                out[tp.name] = deduced[tp.name]
            elif tp.default is not None:
                ctx = FuncCtx(f.pf, Emitter(1), out, None, f.ns, None)
                out[tp.name] = self.template_arg(tp.default, ctx, tp)
            else:
                raise self.err(
                    pf,
                    node,
                    f"cannot instantiate template {f.name}: no value for template parameter {tp.name!r}",
                )
        return out

    def function(self, f: FuncInfo, targs: dict, cls: ClassInst | None = None) -> str:
        """The Python name of `f` (instantiated with `targs`), translating it on first use."""
        key = (id(f), tuple((k, _targ_key(v)) for k, v in targs.items()), id(cls))
        if key in self.funcs:
            return self.funcs[key]
        body = f.node.child_by_field_name("body")
        defaulted = any(c.type == "default_method_clause" for c in f.node.children)
        if body is None and not defaulted:
            raise self.err(f.pf, f.node, f"function {f.name} is declared but never defined")
        self.check(f.pf, f.node)
        special = [q for q in f.quals if q in ("__simd_vf__", "__simt_vf__", "__simt__")]
        if special:
            raise self.unsupported(f.pf, f.node, f"{special[0]} functions (register-level / SIMT compute)")
        if cls is not None and f.outer_tparams:
            targs = {**self.member_tmap(f, cls), **targs}
        py = f"{cls.py}__{f.name}" if cls is not None else self.mangle(f, targs)
        if cls is not None:
            py = self.unique(py)
        self.funcs[key] = py
        row = f.node.start_point[0]
        em = Emitter(row + 1)
        tmap = dict(cls.targs) if cls else {}
        tmap.update(targs)
        ctx = FuncCtx(f.pf, em, tmap, cls, f.ns, None)
        ret_node = f.node.child_by_field_name("type")
        ctx.ret = (
            T.VOID
            if ret_node is None
            else self.resolve_type(ret_node, ctx, f.node.child_by_field_name("declarator"))
        )
        params = self.params(f, ctx)
        names = ["self"] if cls is not None and not f.static else []
        for p in params:
            if p.default is not None:
                names.append(f"{p.py}={self.convert(self.expr(p.default, ctx), p.type, ctx, p.default)}")
            else:
                names.append(p.py)
        head_line = self.decl_line(f)
        em.emit(head_line, 0, f"def {py}({', '.join(names)}):", header=True)
        mark = em.mark()
        ctx.refs = [p.py for p in params if p.ref]
        for p in params:
            ctx.scopes[0][p.c_name] = Local(p.py, p.type)
            if p.type.kind == "class" and p.by_value:  # a struct passed by value is the callee's copy
                em.emit(head_line, 1, f"{p.py} = {p.py}._cx_copy()")
        if f.is_ctor:
            self.ctor_prologue(f, ctx, head_line)
        if body is not None:
            self.block(body, ctx, 1, new_scope=False)
        if ctx.refs:  # `T f(int &a)` returns (value, a): the caller assigns a back
            em.emit(
                body.end_point[0] + 1 if body is not None else head_line,
                1,
                f"return (None, {', '.join(ctx.refs)})",
            )
        elif not em.wrote_since(mark):
            em.emit(head_line, 1, "pass")
        self.chunks.append((f.pf.path, em.source()))
        return py

    def member_tmap(self, f: FuncInfo, cls: ClassInst) -> dict:
        """Template arguments a member function sees: its class's, also under the names an
        out-of-class definition (`template <class A> R C<A>::f()`) gives them."""
        out = dict(cls.targs)
        for o, c in zip(f.outer_tparams or (), cls.info.tparams or ()):
            out[o.name] = cls.targs.get(c.name)
        return out

    def decl_line(self, f: FuncInfo) -> int:
        decl = f.node.child_by_field_name("declarator")
        return (decl or f.node).start_point[0] + 1

    def params(self, f: FuncInfo, ctx: FuncCtx) -> list:
        out = []
        for p in f.params_node.named_children:
            if p.type == "variadic_parameter_declaration":
                raise self.unsupported(f.pf, p, "variadic parameters")
            if not p.type.endswith("parameter_declaration"):
                continue
            d = p.child_by_field_name("declarator")
            t = self.resolve_type(p.child_by_field_name("type"), ctx, d)
            if t.kind == "void" and d is None:
                continue
            name, _ = _decl_name(d) if d is not None else ("", None)
            const = any(c.type == "type_qualifier" and c.text == b"const" for c in p.children)
            prm = _Param(name, pyname(name) if name else ctx.fresh("arg"), t)
            prm.ref = d is not None and _is_scalar_ref(d) and t.is_arith and not const
            prm.default = p.child_by_field_name("default_value")
            prm.by_value = d is None or d.type not in ("reference_declarator", "pointer_declarator")
            out.append(prm)
        return out

    # -- classes -----------------------------------------------------------------------------
    def class_inst(self, info: ClassInfo, targs: dict, pf=None, node=None) -> ClassInst:
        key = (id(info), tuple((k, _targ_key(v)) for k, v in targs.items()))
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
                if text in bound and _targ_key(bound[text]) != _targ_key(v):
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
            if _targ_key(want) != _targ_key(v):
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
                default = fi.decl.child_by_field_name("default_value")
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
    def global_value(self, v: VarInfo, cls: ClassInst | None = None) -> Val:
        """A namespace-scope variable or static member (of the class instance `cls`): constants
        are folded, others become module globals."""
        owner = getattr(v.ns, "owner", None)
        if cls is None and owner is not None and not owner.tparams:
            cls = self.class_inst(owner, {})  # `S::n` names the one static member of S
        gkey = (id(v), id(cls))
        if gkey in self.globals:
            return self.globals[gkey]
        ctx = FuncCtx(v.pf, Emitter(1), dict(cls.targs) if cls else {}, cls, v.ns, None)
        t = self.resolve_type(v.type_node, ctx, v.declarator)
        if v.name in self.overrides and v.const and t.is_arith and v.value is not None:
            self.bound[v.name] = v
            val = self.literal(self.overrides[v.name], t)
            self.globals[gkey] = val
            return val
        if v.value is not None and v.value.type not in ("initializer_list", "argument_list"):
            self.check(v.pf, v.value)
            init = self.expr(v.value, ctx)
            if t.kind == "auto":
                t = init.type
            if v.const and init.is_const and t.is_arith:
                val = self.literal(init.const, t)
                self.globals[gkey] = val
                return val
        # mutable globals live on one namespace object, so functions assign them without `global`
        py = "_G." + self.mangle(v, dict(cls.targs) if cls else None)
        val = Val(py, t, lvalue=True)
        self.globals[gkey] = val
        row = v.node.start_point[0] + 1
        em = Emitter(row)
        ctx.em = em
        if v.value is not None and v.value.type not in ("initializer_list", "argument_list"):
            code = self.convert(self.expr(v.value, ctx), t, ctx, v.value)
        elif v.value is not None:
            code = self.construct(t, list(v.value.named_children), ctx, v.value, brace=True)
        else:
            code = self.default_value(t, ctx, v.declarator)
        em.emit(row, 0, f"{py} = {code}")
        self.chunks.append((v.pf.path, em.source()))
        return val

    # -- lookup ------------------------------------------------------------------------------
    def lookup_ns(self, ns: Namespace | None, name: str, seen=None) -> list[Decl]:
        """Unqualified lookup outward from `ns`, through using-directives."""
        seen = seen if seen is not None else set()
        while ns is not None:
            if id(ns) in seen:
                ns = ns.parent
                continue
            seen.add(id(ns))
            found = ns.names.get(name)
            if found:
                return found
            if name in ns.using_decls:
                qn, _pf = ns.using_decls[name]
                found = self.lookup_qualified(ns, qn.text.decode())
                if found:
                    return found
            for qn, _pf in ns.usings:
                target = self.find_namespace(ns, qn.text.decode())
                if target is not None and id(target) not in seen:
                    found = target.names.get(name)
                    if found:
                        return found
            ns = ns.parent
        return []

    def find_namespace(self, ns: Namespace | None, qual: str, _active=None) -> Namespace | None:
        active = _active if _active is not None else set()
        key = (id(ns), qual)
        if key in active:
            return None  # using-directives that lead back here
        active.add(key)
        parts = [p.strip() for p in qual.split("::") if p.strip()]
        scope = ns
        while scope is not None:
            target = scope
            for p in parts:
                nxt = target.children.get(p)
                if nxt is None:
                    alias = [d for d in target.names.get(p, ()) if isinstance(d, NsAlias)]
                    if alias:
                        nxt = self.find_namespace(target, alias[0].target.text.decode(), active)
                target = nxt
                if target is None:
                    break
            if target is not None:
                return target
            for qn, _pf in scope.usings:
                used = (
                    self.find_namespace(scope, qn.text.decode(), active) if qn.text.decode() != qual else None
                )
                if used is not None and parts and parts[0] in used.children:
                    found = used
                    for p in parts:
                        found = found.children.get(p) if found is not None else None
                    if found is not None:
                        return found
            scope = scope.parent
        return None

    def lookup_qualified(self, ns: Namespace | None, qual: str) -> list[Decl]:
        scope_part, _, last = qual.rpartition("::")
        if not scope_part:
            return self.lookup_ns(self.root if qual.startswith("::") else ns, last)
        target = self.find_namespace(ns, scope_part)
        if target is not None:
            return target.names.get(last, [])
        # Cls::member / Enum::value
        outer = self.lookup_qualified(ns, scope_part)
        for d in outer:
            if isinstance(d, ClassInfo) and d.inner is not None:
                return d.inner.names.get(last, [])
            if isinstance(d, EnumInfo):
                return [d]
        return []

    def literal(self, value, t: T.CType) -> Val:
        if t.is_float:
            from . import runtime

            v = float(value)
            v = runtime.f32(v) if t.name == "float" else runtime.f16(v) if t.name == "half" else v
            return Val(repr(v), t, v)
        if t.kind == "bool":
            return Val("True" if value else "False", t, bool(value))
        if t.is_int:
            v = int(value)
            if t.kind == "int":
                v &= t.mask
                if t.signed and v >> (t.bits - 1):
                    v -= 1 << t.bits
            return Val(str(v), t, v)
        return Val(repr(value), t, value)


class _Param:
    def __init__(self, c_name, py, type_):
        self.c_name = c_name
        self.py = py
        self.type = type_
        self.default = None
        self.by_value = True
        self.ref = False  # a non-const reference to a scalar: written back to the caller


def _accepts(f: FuncInfo, nargs: int) -> bool:
    total = f.arity()
    required = sum(1 for c in f.params_node.named_children if c.type == "parameter_declaration")
    return required <= nargs <= total


def _is_scalar_ref(d) -> bool:
    return d.type == "reference_declarator"


def _targ_name(v) -> str:
    if isinstance(v, Val):
        return v.code.rsplit(".", 1)[-1]
    if isinstance(v, T.CType):
        return (v.name or v.kind).replace(" ", "_").replace("*", "p").replace(":", "_")
    return str(v).replace("-", "m").replace(".", "_")


def _targ_key(v):
    if isinstance(v, Val):
        return ("E", v.code)
    if isinstance(v, T.CType):
        return ("T", str(v), id(v.decl) if v.decl is not None else 0)
    return ("V", v)


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


__all__ = ["Translator", "pyname", "TParam", "AliasInfo", "api"]
