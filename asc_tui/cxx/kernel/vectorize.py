"""Element-wise scalar loops as whole-array numpy work (with the same scalar-unit time).

`for (i = a; i < n; i++) { T v = f(x.GetValue(i), ...); z.SetValue(i, g(v, ...)); }` walks one
element per iteration through the twin's GetValue/SetValue: exact, but a 64 Mi-element loop takes
minutes in Python. When the body is a pure element-wise map — declarations of arithmetic locals
and `SetValue(i, …)` of LocalTensors, whose expressions read `GetValue(i)` at the loop counter
only, with casts and + - * / & | ^ — the loop is emitted as

    for i in _cx.vfor(a, n, ((x, False, line), …, (z, True, line)), lambda _lo, _hi: (…)):
        <the per-element body, unchanged>

`vfor` (vloop.py) runs the array form and returns an empty range, or returns `range(a, n)` when
the array form would not be exact (tensors that overlap at another offset, indices out of a
tensor, L0C, a short loop) so the per-element body runs as before. Types follow the C rules the
scalar translation applies (usual arithmetic conversions, each operation in its C type's
numpy dtype, conversions at the same places), so the numbers are the same.
"""

from __future__ import annotations

from .. import ctype as T
from .base import GeneratorBase
from .scope import Val, single_declarator

#: numpy dtype names of the C scalar types the array form handles (not bfloat16: numpy has none).
_NP = {**{k: v for k, v in T.DTYPE_NAMES.items() if k != "bfloat16_t"}, "double": "float64"}
_INT_OPS = ("&", "|", "^")


class _NotElementwise(Exception):
    """The loop body is not an element-wise map: keep the per-element loop only."""


def _np_name(t: T.CType) -> str:
    name = _NP.get(t.name) or _NP.get(getattr(t, "name", ""))
    if name is None or not t.is_arith or t.kind == "bool":
        raise _NotElementwise
    if t.is_int and name.startswith("float"):
        raise _NotElementwise
    return name


class VecGen(GeneratorBase):
    def vector_for(self, var: str, t: T.CType, body, ctx) -> str | None:
        """The `_cx.vfor(...)` arguments after the bounds for a loop over `var`, or None."""
        stmts = [c for c in (body.named_children if body.type == "compound_statement" else [body])]
        stmts = [s for s in stmts if s.type != "comment"]
        if not stmts:
            return None
        st = _State(var, t)
        try:
            parts = [self._vec_stmt(s, ctx, st) for s in stmts]
        except _NotElementwise:
            return None
        except Exception:  # noqa: BLE001 - anything the array form cannot type: per-element only
            return None
        if not any(w for _c, w, _l in st.access):
            return None
        acc = ", ".join(f"({c}, {w}, {ln})" for c, w, ln in st.access)
        return f"({acc},), lambda _lo, _hi: ({', '.join(parts)},)"

    # -- statements -----------------------------------------------------------------------------
    def _vec_stmt(self, s, ctx, st) -> str:
        if s.type == "declaration":
            one = single_declarator(s)
            if one is None:
                raise _NotElementwise
            d, name_node = one
            dt = self.resolve_type(s.child_by_field_name("type"), ctx, name_node)
            _np_name(dt)
            code, vt = self._vec_expr(d.child_by_field_name("value"), ctx, st)
            py = f"_v_{name_node.text.decode()}"
            st.locals[name_node.text.decode()] = (py, dt)
            return f"({py} := {_cast(code, vt, dt)})"
        if s.type == "expression_statement" and s.named_child_count == 1:
            e = s.named_children[0]
            if e.type == "call_expression":
                return self._vec_set(e, ctx, st)
            if e.type == "assignment_expression" and e.child_by_field_name("operator").type == "=":
                left = e.child_by_field_name("left")
                if left.type == "identifier" and left.text.decode() in st.locals:
                    py, lt = st.locals[left.text.decode()]
                    code, vt = self._vec_expr(e.child_by_field_name("right"), ctx, st)
                    return f"({py} := {_cast(code, vt, lt)})"
        raise _NotElementwise

    def _vec_set(self, call, ctx, st) -> str:
        tensor, elem, args = self._vec_method(call, "SetValue", ctx, st)
        if len(args) != 2:
            raise _NotElementwise
        code, vt = self._vec_expr(args[1], ctx, st)
        st.access.append((tensor, True, call.start_point[0] + 1))
        return f"_cx.vset({tensor}, _lo, _hi, {_cast(code, vt, elem)})"

    def _vec_method(self, call, name: str, ctx, st):
        """(tensor code, element type, args) of `x.<name>(i, …)` on a LocalTensor."""
        fn = call.child_by_field_name("function")
        if fn.type != "field_expression" or fn.child_by_field_name("field").text.decode() != name:
            raise _NotElementwise
        obj = self.expr(fn.child_by_field_name("argument"), ctx)
        ot = obj.type.elem if obj.type.kind == "ptr" else obj.type
        if (
            ot.kind != "twin"
            or ot.name != "LocalTensor"
            or not ot.args
            or not isinstance(ot.args[0], T.CType)
        ):
            raise _NotElementwise
        elem = ot.args[0]
        _np_name(elem)
        args = [a for a in call.child_by_field_name("arguments").named_children if a.type != "comment"]
        if not args or args[0].type != "identifier" or args[0].text.decode() != st.var:
            raise _NotElementwise  # only the element of this iteration
        return obj.code, elem, args

    # -- expressions: (numpy code, C type) --------------------------------------------------------
    def _vec_expr(self, n, ctx, st) -> tuple[str, T.CType]:
        k = n.type
        if k == "parenthesized_expression" and n.named_child_count == 1:
            return self._vec_expr(n.named_children[0], ctx, st)
        if k == "identifier":
            name = n.text.decode()
            if name == st.var:
                return f"_cx.vindex(_lo, _hi, '{_np_name(st.vt)}')", st.vt
            if name in st.locals:
                py, lt = st.locals[name]
                return py, lt
        if k == "call_expression":
            fn = n.child_by_field_name("function")
            if fn.type == "field_expression":
                tensor, elem, args = self._vec_method(n, "GetValue", ctx, st)
                if len(args) != 1:
                    raise _NotElementwise
                st.access.append((tensor, False, n.start_point[0] + 1))
                return f"_cx.vget({tensor}, _lo, _hi)", elem
            args = [a for a in n.child_by_field_name("arguments").named_children if a.type != "comment"]
            if len(args) != 1:
                raise _NotElementwise
            if (
                fn.type == "template_function"
                and fn.child_by_field_name("name").text.decode() == "static_cast"
            ):
                tt = self.resolve_type(fn.child_by_field_name("arguments").named_children[0], ctx)
            elif fn.type in ("primitive_type", "type_identifier"):
                tt = self.resolve_type(fn, ctx)
            elif fn.type == "parenthesized_expression" and self.paren_type(fn, ctx) is not None:
                tt = self.paren_type(fn, ctx)  # (half)(a + b)
            else:
                raise _NotElementwise
            code, vt = self._vec_expr(args[0], ctx, st)
            return _cast(code, vt, tt), tt
        if k == "cast_expression":
            tt = self.resolve_type(n.child_by_field_name("type"), ctx)
            code, vt = self._vec_expr(n.child_by_field_name("value"), ctx, st)
            return _cast(code, vt, tt), tt
        if k == "unary_expression" and n.child_by_field_name("operator").type in ("-", "+"):
            code, vt = self._vec_expr(n.child_by_field_name("argument"), ctx, st)
            if vt.is_int:
                vt = T.promote(vt)
                code = _cast(code, vt, vt)
            _np_name(vt)
            return f"({n.child_by_field_name('operator').type}{code})", vt
        if k == "binary_expression":
            op = n.child_by_field_name("operator").type
            a, ta = self._vec_expr(n.child_by_field_name("left"), ctx, st)
            b, tb = self._vec_expr(n.child_by_field_name("right"), ctx, st)
            ct = T.common(ta, tb)
            _np_name(ct)
            if op in ("+", "-", "*") or op == "/" and ct.is_float or op in _INT_OPS and ct.is_int:
                return f"({_cast(a, ta, ct)} {op} {_cast(b, tb, ct)})", ct
            raise _NotElementwise
        # anything else: a loop-invariant scalar (its value cannot change in the loop body),
        # read once — so only names and constants (a call might cost time or have effects)
        if _mentions(n, st) or not _pure(n):
            raise _NotElementwise
        v: Val = self.expr(n, ctx)
        _np_name(v.type)
        return v.code, v.type


class _State:
    def __init__(self, var: str, vt: T.CType):
        self.var, self.vt = var, vt
        self.locals: dict[str, tuple[str, T.CType]] = {}
        self.access: list[tuple[str, bool, int]] = []  # (tensor code, write, C++ line), in order


def _cast(code: str, frm: T.CType, to: T.CType) -> str:
    """`code` (of C type `frm`) converted to `to`, as an array of `to`'s numpy dtype."""
    return f"_cx.vcast({code}, '{_np_name(to)}')"


def _mentions(n, st) -> bool:
    """Does `n` name the loop counter or a body local (then it is not loop-invariant)?"""
    if n.type == "identifier" and (n.text.decode() == st.var or n.text.decode() in st.locals):
        return True
    return any(_mentions(c, st) for c in n.named_children)


_PURE = (
    "number_literal",
    "identifier",
    "field_identifier",
    "field_expression",
    "qualified_identifier",
    "namespace_identifier",
    "sizeof_expression",
    "type_descriptor",
    "primitive_type",
    "type_identifier",
    "true",
    "false",
    "this",
)


def _pure(n) -> bool:
    """Only names, members and constants: reading it once is reading it every iteration."""
    return n.type in _PURE and all(_pure(c) for c in n.named_children)
