"""Expressions: C++ semantics from static types, plain Python operators wherever they are exact.

Integer `/` and `%` truncate toward zero (a helper only for signed operands), unsigned
arithmetic wraps (a mask), mixed signed/unsigned comparisons compare as unsigned, `float`
results round to fp32, GM pointer arithmetic counts elements of the pointee. Constant operands
fold at translation time through the very code generated for them.
The operators (binary, unary, conditional, casts) are `ops.py`.
"""

from __future__ import annotations

import re

from .. import api, runtime
from .. import ctype as T
from ..source.decls import ClassInfo
from .base import GeneratorBase
from .scope import FuncCtx, Val, pyname

_FOLD_ENV = {"_cx": runtime, "__builtins__": {"int": int, "float": float, "bool": bool, "abs": abs}}
_PRINTF_RE = re.compile(r"%([-+ #0]*\d*(?:\.\d+)?)(hh|h|ll|l|z|j|t|L)?([diouxXeEfFgGcsp])")
#: The rounding helper a result of these types goes through (C++ rounds every `float` result).
ROUND = {"float": "_cx.f32", "half": "_cx.f16", "bfloat16_t": "_cx.bf16"}


def fold(code: str, t: T.CType) -> Val:
    """`code` evaluated now when its operands are constants (the value kept with the code), else as is."""
    try:
        v = eval(code, _FOLD_ENV)  # noqa: S307 - code generated from constants only
    except Exception:
        return Val(code, t)
    if isinstance(v, bool):
        return Val("True" if v else "False", t, v)
    if isinstance(v, (int, float)):
        return Val(repr(v) if v >= 0 else f"({v!r})", t, v)
    return Val(code, t)


class ExprGen(GeneratorBase):
    # -- entry ------------------------------------------------------------------------------
    def expr(self, node, ctx: FuncCtx) -> Val:
        fn = getattr(self, "x_" + node.type, None)
        if fn is None:
            raise self.unsupported(ctx.pf, node, _readable(node.type))
        return fn(node, ctx)

    def cond(self, node, ctx: FuncCtx) -> str:
        v = self.expr(node, ctx)
        return v.code

    # -- literals -----------------------------------------------------------------------------
    def x_number_literal(self, node, ctx):
        text = node.text.decode().replace("'", "")
        if text.startswith("-"):
            v = self.x_number_literal_text(text[1:].strip(), node, ctx)
            return (
                self.binop("-", Val("0", T.INT32, 0), v, ctx, node)
                if v.type.is_int
                else fold(f"(-{v.code})", v.type)
            )
        return self.x_number_literal_text(text, node, ctx)

    def x_number_literal_text(self, text, node, ctx):
        low = text.lower()
        is_hex = low.startswith("0x")
        if not is_hex and ("." in low or "e" in low or low.endswith("f")) and not low.startswith("0b"):
            if low.endswith("f"):
                return self.literal(float(low[:-1]), T.FLOAT)
            if low.endswith("l"):
                low = low[:-1]
            return self.literal(float(low), T.DOUBLE)
        m = re.match(r"^(0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)([uUlL]*)$", text)
        if not m:
            raise self.unsupported(ctx.pf, node, f"number literal {text}")
        digits, suf = m.group(1), m.group(2).lower()
        if digits.lower().startswith("0x"):
            v = int(digits, 16)
        elif digits.lower().startswith("0b"):
            v = int(digits[2:], 2)
        elif len(digits) > 1 and digits.startswith("0"):
            v = int(digits, 8)
        else:
            v = int(digits)
        unsigned = "u" in suf
        longs = suf.count("l")
        decimal = not (digits.startswith("0") and len(digits) > 1)
        for t in (T.INT32, T.UINT32, T.INT64, T.UINT64):
            if unsigned and t.signed or longs and t.bits < 64:
                continue
            if decimal and not unsigned and not t.signed:
                continue
            if v <= (t.mask >> 1 if t.signed else t.mask):
                return Val(str(v), t, v)
        return Val(str(v), T.UINT64, v)

    def x_true(self, node, ctx):
        return Val("True", T.BOOL, True)

    def x_false(self, node, ctx):
        return Val("False", T.BOOL, False)

    def x_null(self, node, ctx):
        return Val("None", T.CType("ptr", "nullptr", elem=T.VOID), None)

    x_nullptr = x_null

    def x_string_literal(self, node, ctx):
        parts = [
            c.text.decode() for c in node.named_children if c.type in ("string_content", "escape_sequence")
        ]
        text = "".join(parts)
        try:
            value = text.encode("latin-1", "backslashreplace").decode("unicode_escape")
        except Exception:
            value = text
        return Val(repr(value), T.STRING, value)

    def x_concatenated_string(self, node, ctx):
        value = "".join(self.expr(c, ctx).const for c in node.named_children if c.type == "string_literal")
        return Val(repr(value), T.STRING, value)

    def x_char_literal(self, node, ctx):
        text = node.text.decode()[1:-1]
        value = text.encode().decode("unicode_escape")
        return Val(str(ord(value)), T.INT8, ord(value))

    def x_parenthesized_expression(self, node, ctx):
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) != 1:
            raise self.unsupported(ctx.pf, node, "comma expressions")
        return self.expr(inner[0], ctx)

    def x_comma_expression(self, node, ctx):
        raise self.unsupported(ctx.pf, node, "comma expressions")

    def x_lambda_expression(self, node, ctx):
        cap = node.child_by_field_name("captures")
        raise self.unsupported(ctx.pf, cap or node, "lambda capture" if cap is not None else "lambdas")

    # -- names --------------------------------------------------------------------------------
    def x_sizeof_expression(self, node, ctx):
        tnode = node.child_by_field_name("type")
        if tnode is not None:
            t = self.resolve_type(tnode, ctx)
        else:
            val_node = node.child_by_field_name("value")
            inner = val_node
            while inner.type == "parenthesized_expression" and inner.named_child_count == 1:
                inner = inner.named_children[0]
            v = self.expr(inner, ctx)
            t = v.const if v.type.kind == "dtype" else v.type
            if v.type.kind == "typename" and isinstance(v.type.decl, ClassInfo):
                t = self.resolve_type(inner, ctx)
            elif v.type.kind == "opaque" and api.twin_type(v.type.name):  # sizeof(TCubeTiling)
                t = self.resolve_type(inner, ctx)
        try:
            n = T.sizeof(t)
        except TypeError:
            raise self.unsupported(ctx.pf, node, f"sizeof({t})") from None
        return Val(str(n), T.UINT64, n)

    x_alignof_expression = x_sizeof_expression

    def x_subscript_expression(self, node, ctx):
        base = self.expr(node.child_by_field_name("argument"), ctx)
        idx_node = node.child_by_field_name("indices") or node.child_by_field_name("index")
        if idx_node is not None and idx_node.type == "subscript_argument_list":
            items = idx_node.named_children
            if len(items) != 1:
                raise self.unsupported(ctx.pf, idx_node, "multi-index subscripts")
            idx_node = items[0]
        i = self.expr(idx_node, ctx)
        t = base.type
        if t.kind == "array":
            return Val(f"{base.code}[{i.code}]", t.elem, lvalue=True)
        if t.kind in ("twin", "opaque"):
            return Val(f"{base.code}[{i.code}]", t)
        if t.kind == "ptr" and t.elem is not None and t.elem.is_arith:
            return self.deref(self.ptr_add(base, i, "+", ctx, node), ctx, node)
        raise self.unsupported(ctx.pf, node, f"indexing a {t}")

    def x_field_expression(self, node, ctx):
        obj = self.expr(node.child_by_field_name("argument"), ctx)
        field = node.child_by_field_name("field")
        name = field.text.decode()
        t = obj.type
        if t.kind == "ptr" and t.elem is not None:
            t = t.elem
        if t.kind == "class":
            inst = t.decl
            cur = inst
            while cur is not None:
                if name in cur.fields:
                    return Val(f"{obj.code}.{pyname(name)}", cur.fields[name], lvalue=True)
                cur = cur.base
            raise self.err(ctx.pf, field, f"{inst.info.name} has no member {name!r}")
        ftype = api.STRUCT_FIELD_TYPES.get(t.name) if t.kind == "twin" else None
        return Val(f"{obj.code}.{name}", ftype or T.OPAQUE, lvalue=True)

    # -- assignment and increments used as values ---------------------------------------------------
    def x_assignment_expression(self, node, ctx):
        left = node.child_by_field_name("left")
        target = self.expr(left, ctx)
        if not _is_name(target.code):
            raise self.unsupported(ctx.pf, node, "assignment inside an expression")
        code = self.assign_code(node, ctx)
        rhs = code.split(" = ", 1)[1]
        return Val(f"({target.code} := {rhs})", target.type)

    def x_update_expression(self, node, ctx):
        arg = self.expr(node.child_by_field_name("argument"), ctx)
        op = node.child_by_field_name("operator").type
        if not _is_name(arg.code):
            raise self.unsupported(ctx.pf, node, f"{op} inside an expression")
        step = self.binop(op[0], arg, Val("1", T.INT32, 1), ctx, node)
        new = self.convert(step, arg.type, ctx, node)
        prefix = node.children[0].type in ("++", "--")
        if prefix:
            return Val(f"({arg.code} := {new})", arg.type)
        return Val(f"(({arg.code}, {arg.code} := {new})[0])", arg.type)

    # -- initializer lists as values ---------------------------------------------------------------
    def x_initializer_list(self, node, ctx):
        raise self.unsupported(ctx.pf, node, "an initializer list where its type is not known")

    def x_compound_literal_expression(self, node, ctx):
        t = self.resolve_type(node.child_by_field_name("type"), ctx)
        vals = list(node.child_by_field_name("value").named_children)
        return Val(self.construct(t, vals, ctx, node, brace=True), t)

    # -- conversions ---------------------------------------------------------------------------
    def convert(self, v: Val, to: T.CType, ctx, node) -> str:
        """Python code for `v` converted to `to` as C++ does on assignment/initialisation."""
        fr = v.type
        if fr.kind == "opaque" and to.is_arith and not v.is_const:  # a value of unknown C++ type
            if to.kind == "bool":
                return f"bool({v.code})"
            if to.is_float:
                rnd = ROUND.get(to.name)
                return f"{rnd}({v.code})" if rnd else f"float({v.code})"
            if to.kind == "enum":
                return v.code
            return f"(int({v.code}) & {hex(to.mask)})" if not to.signed else f"_cx.s{to.bits}(int({v.code}))"
        if fr == to or to.kind in ("auto", "opaque", "void", "twin", "dtype") or fr.kind == "opaque":
            if to.kind == "class" and v.lvalue:
                return f"{v.code}._cx_copy()"
            return v.code
        if v.is_const and to.is_arith and isinstance(v.const, (int, float, bool)):
            return self.literal(v.const, to).code
        if to.kind == "bool":
            return v.code if fr.kind == "bool" else f"bool({v.code})"
        if to.is_int:
            if fr.is_float:
                code = f"int({v.code})"
                fr = T.INT64
            else:
                code = v.code
            if fr.kind in ("bool", "enum"):
                fr = T.INT32 if fr.kind == "enum" else T.UINT8
            if not fr.is_int:
                raise self.err(ctx.pf, node, f"cannot convert {v.type} to {to}")
            if to.kind == "enum":
                return code
            if to.signed:
                if (not fr.signed and fr.bits >= to.bits) or fr.bits > to.bits:
                    return f"_cx.s{to.bits}({code})"
                return code
            if fr.signed or fr.bits > to.bits:
                known = v.bits() if code == v.code else None
                if known is not None and known <= to.bits:
                    return code  # the value fits: no wrap can happen
                return f"({code} & {hex(to.mask)})"
            return code
        if to.is_float:
            if not fr.is_arith:
                raise self.err(ctx.pf, node, f"cannot convert {v.type} to {to}")
            rnd = ROUND.get(to.name)
            if rnd is None:  # double
                return f"float({v.code})" if not fr.is_float else v.code
            if fr.is_float and (fr.name == to.name or to.name == "float" and fr.bits < 32):
                return v.code
            return f"{rnd}({v.code})"
        if to.kind == "ptr":
            return v.code
        if to.kind == "class":
            if fr.kind == "class" and fr.decl is to.decl:
                return f"{v.code}._cx_copy()" if v.lvalue else v.code
            if fr.kind == "class" and _derives(fr.decl, to.decl):
                return v.code
            raise self.err(ctx.pf, node, f"cannot convert {v.type} to {to.decl.info.name}")
        if to.kind == "array":
            return f"list({v.code})"
        return v.code


def _derives(a, b) -> bool:
    while a is not None:
        if a is b:
            return True
        a = a.base
    return False


def _is_name(code: str) -> bool:
    return code.isidentifier()


def _readable(kind: str) -> str:
    return {
        "new_expression": "new",
        "delete_expression": "delete",
        "throw_expression": "throw",
        "co_await_expression": "co_await",
        "fold_expression": "fold expressions",
        "generic_expression": "_Generic",
        "gnu_asm_expression": "inline asm",
        "offsetof_expression": "offsetof",
        "user_defined_literal": "user-defined literals",
        "raw_string_literal": "raw string literals",
    }.get(kind, kind.replace("_", " "))


def printf_format(fmt: str) -> str:
    """C printf format → Python %-format (length modifiers dropped, %p as %s)."""
    return _PRINTF_RE.sub(lambda m: "%" + m.group(1) + ("s" if m.group(3) == "p" else m.group(3)), fmt)
