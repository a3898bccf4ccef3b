"""Translation of declarations on demand: functions, classes, template instances, globals.

Each translated function or class is its own chunk of Python whose first statement sits on the
C++ line it comes from; chunks are compiled under the C++ file's name (headers under theirs),
so tracebacks, records and hot lines name the user's file and line. Chunks are appended after
their dependencies (a base class before its derived class), so executing them in order works.
"""

from __future__ import annotations

from .. import api
from .. import ctype as T
from ..errors import CxxError, Unsupported
from ..source.decls import (
    AliasInfo,
    ClassInfo,
    Decl,
    EnumInfo,
    FuncInfo,
    Namespace,
    NsAlias,
    TParam,
    VarInfo,
)
from ..source.symbols import decl_name as _decl_name
from .calls import CallGen
from .classes import ClassGen
from .emit import Emitter
from .expr import ExprGen
from .loops import LoopGen
from .names import NameGen
from .ops import OperatorGen
from .scope import ClassInst, FuncCtx, Local, Val, pyname, targ_key, targ_name
from .stmt import StmtGen
from .typeres import TypeResolver
from .vectorize import VecGen


class Translator(TypeResolver, ClassGen, CallGen, NameGen, ExprGen, OperatorGen, LoopGen, StmtGen, VecGen):
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
            suffix = "_".join(targ_name(v) for v in targs.values())
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
            from ..source.parse import syntax_error

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
        key = (id(f), tuple((k, targ_key(v)) for k, v in targs.items()), id(cls))
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
            from .. import runtime

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


def _is_scalar_ref(d) -> bool:
    return d.type == "reference_declarator"


__all__ = ["Translator", "pyname", "TParam", "AliasInfo", "api"]
