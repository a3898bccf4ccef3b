"""Calls: user functions and methods (instantiated on demand), the twin API, casts, printf/assert.

Over 400 lines; the split seam is the debugging utilities at the end (printf, assert, tiling
data), which can move to their own mixin when this grows further (<cmath> already lives in
`cmath`).
"""

from __future__ import annotations

from .. import api
from .. import ctype as T
from ..cmath import cmath_call, cmath_name
from ..errors import CxxError
from ..source.decls import ClassInfo, FuncInfo
from .base import GeneratorBase
from .expr import printf_format
from .scope import FuncCtx, Val

_CASTS = ("static_cast", "reinterpret_cast", "const_cast", "dynamic_cast")
_PRINTF = {"printf", "PRINTF", "PRINTF_IMPL"}
_TYPE_NODES = ("identifier", "type_identifier", "qualified_identifier", "primitive_type", "template_type")
_ASSERT = {"assert", "ascendc_assert", "ASSERT", "ASCENDC_ASSERT"}


class CallGen(GeneratorBase):
    def x_call_expression(self, node, ctx: FuncCtx) -> Val:
        fnode = node.child_by_field_name("function")
        anode = node.child_by_field_name("arguments")
        args = [a for a in anode.named_children if a.type != "comment"]
        k = fnode.type
        targs_node = None
        name_node = fnode
        if k == "template_function":
            name_node = fnode.child_by_field_name("name")
            targs_node = fnode.child_by_field_name("arguments")
            k = name_node.type
        if k == "qualified_identifier":
            inner = fnode.child_by_field_name("name")
            while inner is not None and inner.type == "qualified_identifier":
                inner = inner.child_by_field_name("name")
            if inner is not None and inner.type == "template_function":
                targs_node = inner.child_by_field_name("arguments")
                qual = fnode.text.decode()
                qual = qual[: qual.index("<")]
            else:
                qual = fnode.text.decode()
            qual = qual.replace(" ", "").lstrip(":")
            parts = qual.split("::")
            short = parts[-1]
            if parts[0] in ("AscendC", "std", "matmul"):  # matmul:: is the high-level Matmul's namespace
                return self.free_call(short, targs_node, args, ctx, node, twin=True)
            decls = self.lookup_qualified(ctx.ns, qual)
            if decls:
                return self.call_decls(decls, short, targs_node, args, ctx, node)
            if ctx.cls is not None and parts[0] == ctx.cls.info.name:
                return self.free_call(short, targs_node, args, ctx, node)
            raise self.err(ctx.pf, fnode, f"unknown function {qual!r}")
        if k in ("identifier",):
            name = name_node.text.decode()
            if name in _CASTS:
                if targs_node is None:
                    raise self.err(ctx.pf, node, f"{name} needs a target type")
                return self.cxx_cast(targs_node, args, ctx, node)
            return self.free_call(name, targs_node, args, ctx, node)
        if k == "field_expression":
            return self.method_call(fnode, args, ctx, node)
        if k in ("primitive_type", "type_identifier", "sized_type_specifier"):
            t = self.resolve_type(fnode, ctx)
            return self.functional_cast(t, args, ctx, node)
        if k == "parenthesized_expression" and len(args) == 1:  # (half)(a): a C cast
            t = self.paren_type(fnode, ctx)
            if t is not None:
                return self.cast(self.expr(args[0], ctx), t, ctx, node)
        raise self.unsupported(ctx.pf, fnode, f"calling {fnode.type.replace('_', ' ')}")

    def paren_type(self, fnode, ctx) -> T.CType | None:
        """The type named by `(T)` when it names one (not a variable), else None."""
        inner = fnode.named_children
        if len(inner) != 1 or inner[0].type not in _TYPE_NODES:
            return None
        if inner[0].type == "identifier" and ctx.lookup(inner[0].text.decode()) is not None:
            return None
        try:
            return self.resolve_type(inner[0], ctx)
        except CxxError:
            return None

    def x_template_function(self, node, ctx):
        trait = self.type_trait(node, ctx)  # is_same_v<A, B> after using namespace std
        if trait is not None:
            return trait
        raise self.unsupported(ctx.pf, node, "a function template used as a value")

    # -- C++ casts written as templates: static_cast<T>(x) -------------------------------------------
    def cxx_cast(self, targs_node, args, ctx, node) -> Val:
        t = self.resolve_type(targs_node.named_children[0], ctx)
        return self.cast(self.expr(args[0], ctx), t, ctx, node)

    def functional_cast(self, t: T.CType, args, ctx, node) -> Val:
        if t.is_arith:
            if not args:  # `half()`: value-initialised, zero
                return self.cast(Val("0", T.INT32), t, ctx, node)
            if len(args) != 1:
                raise self.err(ctx.pf, node, f"{t}(...) takes one argument")
            return self.cast(self.expr(args[0], ctx), t, ctx, node)
        return Val(self.construct(t, args, ctx, node), t)

    # -- free functions ---------------------------------------------------------------------------
    def free_call(self, name: str, targs_node, args, ctx: FuncCtx, node, twin: bool = False) -> Val:
        if name in _CASTS:
            return self.cxx_cast(targs_node, args, ctx, node)
        if name in _PRINTF:
            return self.printf_call(args, ctx, node)
        if name == "asc_vf_call":
            raise self.unsupported(ctx.pf, node, "asc_vf_call (register-level / SIMT compute)")
        if name in _ASSERT:
            return self.assert_call(name, args, ctx, node)
        if name == "__cx_is_aic" or name == "__cx_is_aiv":
            return Val(f"_cx.{name[5:]}()", T.BOOL)
        if name == "__cx_get_tiling":
            return self.get_tiling(args, ctx, node, targs_node)
        if name in ("min", "max") and (twin or not self._user_fn(name, ctx)):
            vals = [self.expr(a, ctx) for a in args]
            t = T.common(vals[0].type, vals[1].type) if len(vals) == 2 else vals[0].type
            codes = [self.convert(v, t, ctx, node) if t.is_arith else v.code for v in vals]
            return self.maybe_fold(f"{name}({', '.join(codes)})", t, *vals)
        if cmath_name(name) and (twin or not self._user_fn(name, ctx)):
            return cmath_call(self, name, args, ctx, node)
        if not twin and isinstance(ctx.tmap.get(name), T.CType):  # T(x) with a type parameter
            return self.functional_cast(ctx.tmap[name], args, ctx, node)
        if name in T.SCALARS and ctx.lookup(name) is None and not self._user_fn(name, ctx):
            return self.functional_cast(T.SCALARS[name], args, ctx, node)  # half(x), int32_t(x)
        if not twin:
            if ctx.cls is not None and self._has_method(ctx.cls, name):
                return self.invoke_method(
                    Val("self", T.CType("class", ctx.cls.py, decl=ctx.cls)), name, targs_node, args, ctx, node
                )
            local = ctx.lookup(name)
            if local is not None:
                raise self.unsupported(ctx.pf, node, "calling a variable (function pointers)")
            decls = self.lookup_ns(ctx.ns, name)
            if decls:
                return self.call_decls(decls, name, targs_node, args, ctx, node)
        return self.twin_call(name, targs_node, args, ctx, node)

    def _user_fn(self, name, ctx) -> bool:
        return bool(self.lookup_ns(ctx.ns, name)) or (ctx.cls is not None and self._has_method(ctx.cls, name))

    def _has_method(self, inst, name) -> bool:
        cur = inst
        while cur is not None:
            if name in cur.info.methods:
                return True
            cur = cur.base
        return False

    def call_decls(self, decls, name, targs_node, args, ctx, node) -> Val:
        d = decls[0]
        if isinstance(d, ClassInfo):
            targs = self.template_args(targs_node, ctx, d.tparams) if targs_node is not None else {}
            if d.tparams:
                targs = self.bind_targs(d, d.tparams, list(targs.values()), ctx.pf, node)
            inst = self.class_inst(d, targs, ctx.pf, node)
            t = T.CType("class", inst.py, decl=inst)
            return Val(self.construct(t, args, ctx, node), t)
        funcs = [f for f in decls if isinstance(f, FuncInfo)]
        if not funcs:
            v = self.decl_value(decls, node, ctx, name)
            if v.type.kind == "typename":
                t = self.resolve_type(node.child_by_field_name("function"), ctx)
                return self.functional_cast(t, args, ctx, node)
            raise self.unsupported(ctx.pf, node, f"calling {name} (not a function)")
        vals = [self.arg_value(a, ctx) for a in args]
        f = self.pick_overload(funcs, len(args), ctx, node)
        if f.owner is not None and not f.static:
            raise self.err(ctx.pf, node, f"{name} is a member function; call it on an object")
        targs = self.deduce(f, targs_node, vals, ctx, node)
        owner = None
        if f.owner is not None:
            owner = self.class_inst(f.owner, {}, ctx.pf, node)
        py = self.function(f, targs, owner)
        fctx = FuncCtx(f.pf, ctx.em, dict(targs), owner, f.ns, None)
        ptypes = self.param_types(f, fctx)
        codes = self.arg_codes(vals, ptypes, args, ctx)
        ret = self.return_type(f, fctx)
        if owner is None and ret.is_arith and vals and all(v.is_const for v in vals) and _is_constexpr(f):
            folded = self.const_call(py, codes)
            if folded is not None:
                return self.literal(folded, ret)
        return self.ref_call(f, fctx, f"{py}({', '.join(codes)})", ret, vals, args, ctx, node)

    def const_call(self, py: str, codes: list[str]):
        """Run a constexpr function on constant arguments at translation time (for template
        arguments and array sizes); None if it cannot run here."""
        from types import SimpleNamespace

        from ... import ascendc
        from .. import runtime

        key = (py, tuple(codes))
        memo = self.__dict__.setdefault("_cx_consts", {})
        if key not in memo:
            ns = {"_AC": ascendc, "_cx": runtime, "_G": SimpleNamespace()}
            try:
                for path, src in self.chunks:
                    exec(compile(src, path, "exec"), ns)  # noqa: S102 - the kernel's own code
                memo[key] = eval(f"{py}({', '.join(codes)})", ns)  # noqa: S307
            except Exception:
                memo[key] = None
        return memo[key]

    def ref_call(self, f, fctx, code: str, ret, vals, args, ctx, node) -> Val:
        """A call of a function with `int &x` parameters: it returns (value, x...); as an
        expression statement the arguments are assigned back, anywhere else it is refused."""
        refs = [i for i, p in enumerate(self.params(f, fctx)) if p.ref]
        if not refs:
            return Val(code, ret)
        parent = node.parent
        if parent is None or parent.type != "expression_statement":
            raise self.unsupported(
                ctx.pf,
                node,
                f"calling {f.name} (it writes a scalar through a reference) inside an expression",
            )
        targets = []
        for i in refs:
            if i >= len(vals) or not vals[i].lvalue or vals[i].code.startswith("_cx.load("):
                raise self.err(
                    ctx.pf,
                    args[i] if i < len(args) else node,
                    f"argument {i + 1} of {f.name} must be a variable (int& parameter)",
                )
            targets.append(vals[i].code)
        return Val(f"_, {', '.join(targets)} = {code}", T.VOID)

    def pick_overload(self, funcs, n, ctx, node) -> FuncInfo:
        match = [f for f in funcs if _accepts(f, n)]
        defined = [f for f in match if f.node.child_by_field_name("body") is not None]
        match = defined or match
        if not match:
            raise self.err(ctx.pf, node, f"no overload of {funcs[0].name} takes {n} arguments")
        if len(match) > 1:
            raise self.unsupported(
                ctx.pf, node, f"overloads of {funcs[0].name} with the same number of arguments"
            )
        return match[0]

    def deduce(self, f: FuncInfo, targs_node, vals, ctx, node) -> dict:
        if not f.tparams:
            return {}
        given = (
            list(self.template_args(targs_node, ctx, f.tparams).values()) if targs_node is not None else []
        )
        deduced = {}
        names = {tp.name for tp in f.tparams if tp.is_type}
        values = frozenset(tp.name for tp in f.tparams if not tp.is_type)
        params = [p for p in f.params_node.named_children if p.type.endswith("parameter_declaration")]
        for p, v in zip(params, vals):
            tn = p.child_by_field_name("type")
            _match(tn, p.child_by_field_name("declarator"), v.type, names, deduced, values)
        return self.bind_targs(f, f.tparams, given, ctx.pf, node, deduced)

    def param_types(self, f: FuncInfo, fctx) -> list:
        out = []
        for p in f.params_node.named_children:
            if p.type.endswith("parameter_declaration"):
                out.append(
                    self.resolve_type(
                        p.child_by_field_name("type"), fctx, p.child_by_field_name("declarator")
                    )
                )
        return out

    def return_type(self, f: FuncInfo, fctx) -> T.CType:
        rn = f.node.child_by_field_name("type")
        if rn is None:
            return T.VOID
        t = self.resolve_type(rn, fctx, f.node.child_by_field_name("declarator"))
        return T.OPAQUE if t.kind == "auto" else t

    def arg_value(self, a, ctx) -> Val:
        if a.type == "initializer_list":
            return Val("", T.CType("initlist", "{...}"), a)
        return self.expr(a, ctx)

    def arg_codes(self, vals, ptypes, args, ctx) -> list[str]:
        codes = []
        for i, v in enumerate(vals):
            t = ptypes[i] if i < len(ptypes) else T.OPAQUE
            if v.type.kind == "initlist":
                codes.append(self.construct(t, list(args[i].named_children), ctx, args[i], brace=True))
            elif t.kind == "class" and v.type.kind == "class":
                codes.append(v.code)  # by reference or by value: the callee does not keep it
            else:
                codes.append(self.convert(v, t, ctx, args[i]))
        return codes

    def call_ctor(self, inst, args: list, ctx, node) -> str:
        ctors = inst.info.ctors
        n = len(args)
        if not ctors:
            if n:
                raise self.err(ctx.pf, node, f"{inst.info.name} has no constructor taking {n} arguments")
            return f"{inst.py}()"
        f = self.pick_overload(ctors, n, ctx, node)
        fctx = FuncCtx(f.pf, ctx.em, self.member_tmap(f, inst), inst, f.ns, None)
        codes = self.arg_codes(args, self.param_types(f, fctx), [None] * n, ctx)
        if len(ctors) > 1:
            return f"_cx.make({inst.py}, '_cx_init{f.arity()}'{''.join(', ' + c for c in codes)})"
        return f"{inst.py}({', '.join(codes)})"

    # -- methods ------------------------------------------------------------------------------
    def method_call(self, fnode, args, ctx, node) -> Val:
        obj = self.expr(fnode.child_by_field_name("argument"), ctx)
        field = fnode.child_by_field_name("field")
        targs_node = None
        if field.type == "dependent_name":  # obj.template f<...>()
            field = field.named_children[0]
        if field.type == "template_method":
            targs_node = field.child_by_field_name("arguments")
            field = field.child_by_field_name("name")
        name = field.text.decode()
        return self.invoke_method(obj, name, targs_node, args, ctx, node)

    def invoke_method(self, obj: Val, name: str, targs_node, args, ctx, node) -> Val:
        t = obj.type
        if t.kind == "ptr" and t.elem is not None:
            t = t.elem
        if t.kind == "class":
            inst = t.decl
            vals = [self.arg_value(a, ctx) for a in args]
            attr, f, owner = self.method(inst, name, len(args), ctx.pf, node)
            if f.tparams:
                targs = self.deduce(f, targs_node, vals, ctx, node)
                py = self.function(f, targs, owner)
                fctx = FuncCtx(f.pf, ctx.em, {**self.member_tmap(f, owner), **targs}, owner, f.ns, None)
                codes = self.arg_codes(vals, self.param_types(f, fctx), args, ctx)
                return Val(f"{py}({', '.join([obj.code] + codes)})", self.return_type(f, fctx))
            fctx = FuncCtx(f.pf, ctx.em, self.member_tmap(f, owner), owner, f.ns, None)
            codes = self.arg_codes(vals, self.param_types(f, fctx), args, ctx)
            prefix = f"{owner.py}." if f.static else f"{obj.code}."
            call = f"{prefix}{attr}({', '.join(codes)})"
            return self.ref_call(f, fctx, call, self.return_type(f, fctx), vals, args, ctx, node)
        if t.kind == "twin" and not api.twin_method(t.name, name):
            raise self.err(
                ctx.pf, node, f"AscendC::{t.name}::{name} is not in the kernel API twin (asc_tui.ascendc)"
            )
        targs = self.template_args(targs_node, ctx, None) if targs_node is not None else {}
        codes = self.twin_args(name, args, ctx)
        tlist = list(targs.values())
        if name in api.TARGS_AS_ARGS and tlist:
            codes = [self._targ_code(v, ctx, node) for v in tlist] + codes
        elif name == "GetWithOffset" and tlist:
            codes = codes + [self._targ_code(tlist[0], ctx, node)]
        rt = api.result_type(name, t, tlist)
        call = f"{obj.code}.{name}({', '.join(codes)})"
        if name == "GetValue" and rt.is_arith:  # a numpy scalar: the C++ value as a Python number
            call = f"{'float' if rt.is_float else 'int'}({call})"
        return Val(call, rt)

    def _targ_code(self, v, ctx, node) -> str:
        if isinstance(v, T.CType):
            d = api.dtype_expr(v)
            if d is None:
                raise self.unsupported(ctx.pf, node, f"template argument {v} for the kernel API")
            return d
        if isinstance(v, Val):
            return v.code
        return repr(v)

    def twin_args(self, fname: str, args, ctx) -> list[str]:
        codes = []
        for i, a in enumerate(args):
            if a.type == "initializer_list":
                sname = self.twin_struct_arg(fname, i)
                pos, kw = self.init_args(list(a.named_children), ctx)
                if sname is None and not kw:  # the twin takes brace-init tuples (level-0 params)
                    codes.append(f"({', '.join(pos)},)" if pos else "()")
                    continue
                if sname is None:
                    raise self.unsupported(ctx.pf, a, f"an initializer list as argument {i + 1} of {fname}")
                codes.append(f"_AC.{sname}({', '.join(api.struct_args(sname, pos + kw))})")
            else:
                codes.append(self.expr(a, ctx).code)
        return codes

    def twin_call(self, name: str, targs_node, args, ctx, node) -> Val:
        if name in api.NOOPS and not api.twin_has(name):
            return Val("_cx.noop()", T.VOID)
        if not api.twin_has(name):
            raise self.err(ctx.pf, node.child_by_field_name("function"), f"unknown function {name!r}")
        targs = list(self.template_args(targs_node, ctx, None).values()) if targs_node is not None else []
        if name in api.ADDRESS_CTORS:  # a temporary `AscendC::LocalTensor<T>(pos, addr, len)`
            t = T.CType("twin", name, args=tuple(targs))
            return Val(self.twin_construct(t, self.twin_args(name, args, ctx), ctx, node), t)
        codes = self.twin_args(name, args, ctx)
        if name in api.TARGS_AS_ARGS and targs:
            codes = [self._targ_code(v, ctx, node) for v in targs] + codes
        if name == "sizeof" and targs:
            return Val(str(T.sizeof(targs[0])), T.UINT64, T.sizeof(targs[0]))
        return Val(f"{api.twin_ref(name)}({', '.join(codes)})", api.result_type(name, None, targs))

    # -- debugging utilities -------------------------------------------------------------------------
    def printf_call(self, args, ctx, node) -> Val:
        if not args:
            raise self.err(ctx.pf, node, "printf needs a format")
        fmt = self.expr(args[0], ctx)
        fcode = (
            repr(printf_format(fmt.const))
            if fmt.type is T.STRING and isinstance(fmt.const, str)
            else fmt.code
        )
        rest = [self.expr(a, ctx).code for a in args[1:]]
        return Val(f"_AC.printf({', '.join([fcode] + rest)})", T.VOID)

    def assert_call(self, name, args, ctx, node) -> Val:
        if not args:
            raise self.err(ctx.pf, node, f"{name} needs a condition")
        c = self.expr(args[0], ctx)
        if len(args) == 2 and args[1].type == "compound_statement":  # ASCENDC_ASSERT(cond, { log })
            args = args[:1]
        if len(args) == 1:
            msg = repr(args[0].text.decode())
            return Val(f"_AC.ascendc_assert({c.code}, {msg})", T.VOID)
        fmt = self.expr(args[1], ctx)
        fcode = repr(printf_format(fmt.const)) if isinstance(fmt.const, str) else fmt.code
        rest = [self.expr(a, ctx).code for a in args[2:]]
        return Val(f"_AC.ascendc_assert({', '.join([c.code, fcode] + rest)})", T.VOID)

    def get_tiling(self, args, ctx, node, targs_node=None) -> Val:
        src = self.expr(args[0], ctx)
        if targs_node is not None:  # GET_TILING_DATA_WITH_STRUCT(type, var, tiling)
            t = self.resolve_type(targs_node.named_children[0], ctx)
        else:
            t = self.tiling_struct_type(ctx, node)
        if t.kind == "class":
            return Val(f"_cx.fill_struct({t.decl.py}, {src.code})", t)
        return Val(src.code, t)


def _is_constexpr(f: FuncInfo) -> bool:
    return any(
        c.type in ("type_qualifier", "storage_class_specifier") and c.text == b"constexpr"
        for c in f.node.children
    )


def _accepts(f: FuncInfo, nargs: int) -> bool:
    params = [c for c in f.params_node.named_children if c.type.endswith("parameter_declaration")]
    required = sum(1 for c in params if c.type == "parameter_declaration")
    if len(params) == 1 and params[0].text.decode().strip() == "void":
        return nargs == 0
    return required <= nargs <= len(params)


def _match(tn, declarator, at: T.CType, names: set, out: dict, values: frozenset = frozenset()) -> None:
    """Deduce template parameters from one argument's type: types (`names`), and values
    (`values`) that appear as template arguments of the parameter's type."""
    if tn is None:
        return
    d = declarator
    t = at
    while d is not None and d.type in (
        "pointer_declarator",
        "reference_declarator",
        "abstract_pointer_declarator",
    ):
        if d.type.endswith("pointer_declarator") and t.kind == "ptr":
            t = t.elem
        d = (
            d.child_by_field_name("declarator")
            if d.type != "reference_declarator"
            else (d.named_children[0] if d.named_children else None)
        )
    text = tn.text.decode().split("::")[-1]
    if tn.type == "type_identifier" and text in names and text not in out:
        out[text] = t
    elif tn.type in ("template_type", "qualified_identifier") and t.args:
        inner = tn
        while inner.type == "qualified_identifier":
            inner = inner.child_by_field_name("name")
        if inner.type == "template_type":
            for a, v in zip(inner.child_by_field_name("arguments").named_children, t.args):
                an = a.child_by_field_name("type") if a.type == "type_descriptor" else a
                if an is None:
                    continue
                aname = an.text.decode()
                if aname in names and isinstance(v, T.CType):
                    out.setdefault(aname, v)
                elif aname in values and not isinstance(v, T.CType):  # TBuf<bufPos>& from TBuf<VECIN>
                    out.setdefault(aname, v)
