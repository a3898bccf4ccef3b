"""Operators: binary, unary, pointer, conditional and cast expressions, with C++'s conversions.

Names, members, literals and the conversions themselves are `expr.py`'s ExprGen.
"""

from __future__ import annotations

from .. import api
from .. import ctype as T
from .base import GeneratorBase
from .expr import ROUND, fold
from .scope import Val

_CMP = {"<", ">", "<=", ">=", "==", "!="}


class OperatorGen(GeneratorBase):
    # -- operators ----------------------------------------------------------------------------
    def x_binary_expression(self, node, ctx):
        op = node.child_by_field_name("operator").type
        a = self.expr(node.child_by_field_name("left"), ctx)
        b = self.expr(node.child_by_field_name("right"), ctx)
        return self.binop(op, a, b, ctx, node)

    def binop(self, op: str, a: Val, b: Val, ctx, node) -> Val:
        if op in ("&&", "||"):
            code = f"({a.code} {'and' if op == '&&' else 'or'} {b.code})"
            if a.type.kind != "bool" or b.type.kind != "bool":
                code = f"bool{code}"
            return self.maybe_fold(code, T.BOOL, a, b)
        ta, tb = a.type, b.type
        if "class" in (ta.kind, tb.kind):
            raise self.unsupported(ctx.pf, node, f"operator {op} on a class (operator overloading)")
        if ta.kind in ("ptr", "array") and op in ("+", "-") and tb.is_int:
            return self.ptr_add(a, b, op, ctx, node)
        if tb.kind == "ptr" and op == "+" and ta.is_int:
            return self.ptr_add(b, a, op, ctx, node)
        if not (ta.is_arith and tb.is_arith):
            if op in ("/", "%") and "opaque" in (ta.kind, tb.kind):
                return Val(f"_cx.{'odiv' if op == '/' else 'omod'}({a.code}, {b.code})", T.OPAQUE)
            return self.maybe_fold(f"({a.code} {op} {b.code})", T.BOOL if op in _CMP else T.OPAQUE, a, b)
        if op in ("<<", ">>"):
            rt = T.promote(ta)
            ca = self.convert(a, rt, ctx, node)
            cb = b.code
            if op == ">>":
                return self.maybe_fold(f"({ca} >> {cb})", rt, a, b)
            code = f"(({ca} << {cb}) & {hex(rt.mask)})" if not rt.signed else f"_cx.s{rt.bits}({ca} << {cb})"
            return self.maybe_fold(code, rt, a, b)
        ct = T.common(ta, tb)
        ca = self.convert(a, ct, ctx, node)
        cb = self.convert(b, ct, ctx, node)
        if op in _CMP:
            return self.maybe_fold(f"({ca} {op} {cb})", T.BOOL, a, b)
        if ct.is_float:
            if op == "%":
                raise self.err(ctx.pf, node, "invalid operands to % (floating point)")
            if op == "/" and not (b.is_const and b.const):
                code = f"_cx.fdiv({ca}, {cb})"
            else:
                code = f"({ca} {op} {cb})"
            rnd = ROUND.get(ct.name)
            return self.maybe_fold(f"{rnd}({code})" if rnd else code, ct, a, b)
        if op in ("&", "|", "^"):
            return self.maybe_fold(f"({ca} {op} {cb})", ct, a, b)
        if op == "/":
            code = f"({ca} // {cb})" if not ct.signed else f"_cx.cdiv({ca}, {cb})"
        elif op == "%":
            code = f"({ca} % {cb})" if not ct.signed else f"_cx.cmod({ca}, {cb})"
        elif op in ("+", "-", "*"):
            code = f"({ca} {op} {cb})"
            wa, wb = a.bits(), b.bits()
            width = None
            if wa is not None and wb is not None and op != "-":
                width = max(wa, wb) + 1 if op == "+" else wa + wb
            if not ct.signed and (width is None or width > ct.bits):
                code = f"(({ca} {op} {cb}) & {hex(ct.mask)})"  # unsigned wrap (only where it can happen)
                width = None
            return self.maybe_fold(code, ct, a, b, width=width)
        else:
            raise self.unsupported(ctx.pf, node, f"operator {op}")
        if op in ("/", "%") and a.bits() is not None:
            return self.maybe_fold(code, ct, a, b, width=a.bits())
        return self.maybe_fold(code, ct, a, b)

    def maybe_fold(self, code: str, t: T.CType, *vals: Val, width: int | None = None) -> Val:
        if all(v.is_const for v in vals) and t.kind != "opaque":
            return fold(code, t)
        return Val(code, t, width=width)

    def ptr_add(self, p: Val, n: Val, op: str, ctx, node) -> Val:
        elem = p.type.elem
        if elem is None or elem.kind == "void":
            raise self.unsupported(ctx.pf, node, "arithmetic on a void pointer")
        if elem.kind in ("class", "twin"):
            raise self.unsupported(ctx.pf, node, f"arithmetic on a pointer to {elem}")
        size = T.sizeof(elem)
        off = self.convert(n, T.INT64, ctx, node)
        nbytes = f"{off} * {size}" if size != 1 else off
        if op == "-":
            nbytes = f"-({nbytes})"
        return Val(f"_cx.padd({p.code}, {nbytes})", p.type)

    def x_unary_expression(self, node, ctx):
        op = node.child_by_field_name("operator").type
        a = self.expr(node.child_by_field_name("argument"), ctx)
        t = a.type
        if op == "!":
            return self.maybe_fold(f"(not {a.code})", T.BOOL, a)
        if not t.is_arith:
            return Val(f"({op}{a.code})", t)
        rt = T.promote(t)
        ca = self.convert(a, rt, ctx, node)
        if op == "+":
            return self.maybe_fold(ca, rt, a)
        if op == "-":
            if rt.is_int and not rt.signed:
                return self.maybe_fold(f"((-{ca}) & {hex(rt.mask)})", rt, a)
            return self.maybe_fold(f"(-{ca})", rt, a)
        if op == "~":
            if rt.is_float:
                raise self.err(ctx.pf, node, "invalid operand to ~ (floating point)")
            code = f"({ca} ^ {hex(rt.mask)})" if not rt.signed else f"(~{ca})"
            return self.maybe_fold(code, rt, a)
        raise self.unsupported(ctx.pf, node, f"unary {op}")

    def x_pointer_expression(self, node, ctx):
        op = node.child_by_field_name("operator").type
        if op == "*":
            pun = self.bit_cast(node.child_by_field_name("argument"), ctx)
            if pun is not None:
                return pun
        a = self.expr(node.child_by_field_name("argument"), ctx)
        if op == "&":
            if a.type.kind in ("class", "twin", "opaque", "array"):
                return Val(a.code, T.CType("ptr", f"{a.type}*", elem=a.type))
            raise self.unsupported(ctx.pf, node, f"taking the address of a {a.type}")
        if a.type.kind == "ptr" and a.type.elem is not None and a.type.elem.kind in ("class", "twin"):
            return Val(a.code, a.type.elem, lvalue=True)
        if a.type.kind == "ptr" and a.type.elem is not None and a.type.elem.is_arith:
            return self.deref(a, ctx, node)
        raise self.unsupported(ctx.pf, node, f"dereferencing a {a.type}")

    def bit_cast(self, node, ctx) -> Val | None:
        """`*reinterpret_cast<int32_t*>(&f)` on a scalar variable: its bits read as another
        scalar type of the same size (the type-punning idiom); None for any other operand."""
        if node.type == "parenthesized_expression" and node.named_child_count == 1:
            node = node.named_children[0]
        fn = node.child_by_field_name("function") if node.type == "call_expression" else None
        if (
            fn is None
            or fn.type != "template_function"
            or fn.child_by_field_name("name").text != b"reinterpret_cast"
        ):
            return None
        args = [a for a in node.child_by_field_name("arguments").named_children if a.type != "comment"]
        if (
            len(args) != 1
            or args[0].type != "pointer_expression"
            or args[0].child_by_field_name("operator").type != "&"
        ):
            return None
        v = self.expr(args[0].child_by_field_name("argument"), ctx)
        t = self.resolve_type(fn.child_by_field_name("arguments").named_children[0], ctx)
        if not (v.type.is_arith and t.kind == "ptr" and t.elem is not None and t.elem.is_arith):
            return None
        src, dst = api.dtype_expr(v.type), api.dtype_expr(t.elem)
        if src is None or dst is None or T.sizeof(v.type) != T.sizeof(t.elem):
            raise self.unsupported(ctx.pf, node, f"reading a {v.type} as a {t.elem}")
        return Val(f"_cx.bit_cast({v.code}, {src}, {dst})", t.elem)

    def deref(self, p: Val, ctx, node) -> Val:
        """`*p` on a scalar pointer: a load, and a `_cx.store` when assigned to (see assign_code)."""
        dt = api.dtype_expr(p.type.elem)
        if dt is None:
            raise self.unsupported(ctx.pf, node, f"dereferencing a {p.type}")
        return Val(f"_cx.load({p.code}, {dt})", p.type.elem, lvalue=True)

    def x_conditional_expression(self, node, ctx):
        c = self.expr(node.child_by_field_name("condition"), ctx)
        a = self.expr(node.child_by_field_name("consequence"), ctx)
        b = self.expr(node.child_by_field_name("alternative"), ctx)
        if a.type.is_arith and b.type.is_arith:
            t = T.common(a.type, b.type) if a.type != b.type else a.type
            if t.kind != "opaque":
                ca, cb = self.convert(a, t, ctx, node), self.convert(b, t, ctx, node)
            else:
                ca, cb = a.code, b.code
        else:
            t, ca, cb = a.type, a.code, b.code
        if c.is_const:
            return Val(ca, t, a.const) if c.const else Val(cb, t, b.const)
        pick = _min_or_max(node) if t.is_int else None
        if pick is not None:  # `a < b ? a : b`: the builtin, which a template run's tmin stands in for
            return Val(f"{pick}({ca}, {cb})", t)
        return Val(f"({ca} if {c.code} else {cb})", t)

    def x_cast_expression(self, node, ctx):
        t = self.resolve_type(node.child_by_field_name("type"), ctx)
        v = self.expr(node.child_by_field_name("value"), ctx)
        return self.cast(v, t, ctx, node)

    def cast(self, v: Val, t: T.CType, ctx, node) -> Val:
        if t.kind == "ptr":
            return Val(v.code, t)
        if t.kind == "void":
            return Val(v.code, t)
        code = self.convert(v, t, ctx, node)
        if v.is_const and t.is_arith:
            return fold(code, t)
        return Val(code, t)


#: node kinds an operand of `_min_or_max` may be built of: reading it twice or once is the same
_PURE = {
    "identifier",
    "field_identifier",
    "field_expression",
    "qualified_identifier",
    "namespace_identifier",
    "number_literal",
    "true",
    "false",
    "this",
    "parenthesized_expression",
    "binary_expression",
    "unary_expression",
    "cast_expression",
    "type_descriptor",
    "primitive_type",
    "sized_type_specifier",
    "type_identifier",
    "sizeof_expression",
}
_LESS, _MORE = ("<", "<="), (">", ">=")


def _min_or_max(node) -> str | None:
    """ "min" or "max" when the conditional `node` is `a < b ? a : b` or a variant of it (<=, >,
    >=, the branches swapped) over operands without side effects; else None.

    Why: as a branch, a template run's block index splits blocks that tie (`block_length <
    total - start ? block_length : total - start` sets the last block apart when it gets the
    same length); as `min` it gets `tmin` (npu/replay/blockindex.py), which keeps them together. For
    integers the value is the same: on a tie both branches are equal.
    """
    cond = node.child_by_field_name("condition")
    while cond is not None and cond.type == "parenthesized_expression" and cond.named_child_count == 1:
        cond = cond.named_children[0]
    if cond is None or cond.type != "binary_expression":
        return None
    op = cond.child_by_field_name("operator").type
    if op not in _LESS + _MORE:
        return None
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    yes, no = node.child_by_field_name("consequence"), node.child_by_field_name("alternative")
    if not all(_pure(x) for x in (left, right, yes, no)):
        return None
    key = [b"".join(x.text.split()) for x in (left, right, yes, no)]
    if key[0] == key[2] and key[1] == key[3]:
        return "min" if op in _LESS else "max"
    if key[0] == key[3] and key[1] == key[2]:
        return "max" if op in _LESS else "min"
    return None


def _pure(node) -> bool:
    """No call, assignment, increment, subscript or dereference anywhere in `node`."""
    if node is None or node.type not in _PURE:
        return False
    if node.type == "unary_expression" and node.child_by_field_name("operator").type not in (
        "-",
        "+",
        "~",
        "!",
    ):
        return False
    return all(_pure(c) for c in node.named_children)
