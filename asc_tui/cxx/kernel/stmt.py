"""Statements, each placed on its C++ line (see emit.py).

Counted `for` loops whose bound and counter the body cannot change become `range` loops (fast);
other `for`s become `while` with the update at the loop's closing line (and before every
`continue`). `switch` is a run-once loop with a fall-through flag, so `break` keeps its meaning.
"""

from __future__ import annotations

from .. import ctype as T
from ..source.parse import reparse_call_args
from ..source.symbols import decl_name
from .base import GeneratorBase
from .scope import NOCONST, FuncCtx, Local, Val, pyname

_ASSIGN_OPS = {"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}


def line(node) -> int:
    return node.start_point[0] + 1


def end_line(node) -> int:
    return node.end_point[0] + 1


class StmtGen(GeneratorBase):
    def block(self, node, ctx: FuncCtx, ind: int, new_scope: bool = True) -> None:
        if new_scope:
            ctx.scopes.append({})
        try:
            if node.type == "compound_statement":
                for c in node.named_children:
                    self.stmt(c, ctx, ind)
            else:
                self.stmt(node, ctx, ind)
        finally:
            if new_scope:
                ctx.scopes.pop()

    def body(self, node, ctx: FuncCtx, ind: int, header_line: int) -> None:
        mark = ctx.em.mark()
        self.block(node, ctx, ind)
        if not ctx.em.wrote_since(mark):
            ctx.em.emit(header_line, ind, "pass")

    def stmt(self, node, ctx: FuncCtx, ind: int) -> None:
        k = node.type
        fn = getattr(self, "s_" + k, None)
        if fn is None:
            if k == "comment":
                return
            what = {
                "goto_statement": "goto",
                "labeled_statement": "labels",
                "try_statement": "try/catch",
                "throw_statement": "throw",
                "for_range_loop": "range-based for",
                "co_return_statement": "co_return",
            }.get(k, k.replace("_", " "))
            raise self.unsupported(ctx.pf, node, what)
        fn(node, ctx, ind)

    def s_compound_statement(self, node, ctx, ind):
        self.block(node, ctx, ind)

    def s_expression_statement(self, node, ctx, ind):
        inner = [c for c in node.named_children if c.type != "comment"]
        if not inner:
            return
        e = inner[0]
        if e.type == "assignment_expression":
            code = self.assign_code(e, ctx)
        elif e.type == "update_expression":
            code = self.update_code(e, ctx)
        elif e.type == "comma_expression":
            raise self.unsupported(ctx.pf, e, "comma expressions")
        else:
            v = self.expr(e, ctx)
            code = v.code
            if not code or v.is_const:
                return
        ctx.em.emit(line(node), ind, code)

    def assign_code(self, e, ctx) -> str:
        left = e.child_by_field_name("left")
        op = e.child_by_field_name("operator").type
        target = self.expr(left, ctx)
        if target.code.startswith("_cx.load(") and target.code.endswith(")"):
            return self._store(target, e, op, ctx)
        if not target.lvalue and not target.code.endswith("]") and "." not in target.code:
            raise self.err(ctx.pf, left, f"cannot assign to {left.text.decode()!r}")
        right = e.child_by_field_name("right")
        if op == "=":
            if right.type == "initializer_list":
                init = self.construct(target.type, list(right.named_children), ctx, right, True)
                return f"{target.code} = {init}"
            rv = self.expr(right, ctx)
            if target.type.kind == "class" and rv.type.kind == "class" and rv.lvalue:
                return f"{target.code} = {rv.code}._cx_copy()"
            return f"{target.code} = {self.convert(rv, target.type, ctx, right)}"
        if op not in _ASSIGN_OPS:
            raise self.unsupported(ctx.pf, e, f"operator {op}")
        rv = self.expr(right, ctx)
        res = self.binop(op[:-1], Val(target.code, target.type), rv, ctx, e)
        code = self.convert(res, target.type, ctx, e)
        plain = f"({target.code} {op[:-1]} {rv.code})"
        if code == plain:
            return f"{target.code} {op} {rv.code}"
        return f"{target.code} = {code}"

    def _store(self, target: Val, e, op: str, ctx) -> str:
        """`*p = v` / `p[i] op= v` through a scalar pointer."""
        args = target.code[len("_cx.load(") : -1]
        ptr, _, dt = args.rpartition(", ")
        rv = self.expr(e.child_by_field_name("right"), ctx)
        value = rv if op == "=" else self.binop(op[:-1], target, rv, ctx, e)
        return f"_cx.store({ptr}, {self.convert(value, target.type, ctx, e)}, {dt})"

    def update_code(self, e, ctx) -> str:
        arg = e.child_by_field_name("argument")
        op = e.child_by_field_name("operator").type
        target = self.expr(arg, ctx)
        if target.code.startswith("_cx.load("):
            raise self.unsupported(ctx.pf, e, f"{op} through a pointer")
        if target.type.kind == "ptr":
            res = self.ptr_add(Val(target.code, target.type), Val("1", T.INT32, 1), op[0], ctx, e)
            return f"{target.code} = {res.code}"
        res = self.binop(op[0], Val(target.code, target.type), Val("1", T.INT32, 1), ctx, e)
        code = self.convert(res, target.type, ctx, e)
        if code == f"({target.code} {op[0]} 1)" or target.type.kind == "opaque":
            return f"{target.code} {op[0]}= 1"
        return f"{target.code} = {code}"

    # -- declarations ---------------------------------------------------------------------------
    def s_declaration(self, node, ctx, ind):
        if any(
            c.type == "storage_class_specifier" and c.text in (b"static", b"extern") for c in node.children
        ):
            raise self.unsupported(ctx.pf, node, "static local variables")
        tnode = node.child_by_field_name("type")
        if tnode is not None and tnode.type in ("struct_specifier", "class_specifier", "enum_specifier"):
            if tnode.child_by_field_name("body") is not None:
                raise self.unsupported(ctx.pf, tnode, "local class/enum definitions")
        const = any(c.type == "type_qualifier" and c.text in (b"const", b"constexpr") for c in node.children)
        for d in node.children_by_field_name("declarator"):
            self.local_decl(node, tnode, d, const, ctx, ind)

    def local_decl(self, node, tnode, d, const: bool, ctx: FuncCtx, ind: int) -> None:
        value = None
        inner = d
        if d.type == "init_declarator":
            inner = d.child_by_field_name("declarator")
            value = d.child_by_field_name("value")
        if inner.type == "function_declarator":
            args = self._vexing_args(inner, ctx)  # `T obj(a, b);` parsed as a declaration
            t = self.resolve_type(tnode, ctx)
            name, _ = decl_name(inner.child_by_field_name("declarator"))
            py = self.local_name(name, ctx)
            ctx.scopes[-1][name] = Local(py, t)
            ctx.em.emit(line(d), ind, f"{py} = {self.construct(t, args, ctx, d)}")
            return
        t = self.resolve_type(tnode, ctx, inner)
        name, name_node = decl_name(inner)
        is_ref = _has_ref(inner)
        if value is not None and value.type not in ("initializer_list", "argument_list"):
            v = self.expr(value, ctx)
            if t.kind == "auto":
                t = v.type if v.type.kind != "initlist" else t
                if t.kind == "bool" or t.kind == "enum":
                    t = v.type
            if is_ref and t.is_arith and not const:
                raise self.unsupported(ctx.pf, inner, "references to scalars")
            if is_ref and t.kind in ("class", "twin", "ptr", "array", "opaque"):
                code = v.code  # a reference to an object is the same Python object
            elif t.kind == "class" and v.type.kind == "class":
                code = f"{v.code}._cx_copy()" if v.lvalue else v.code
            elif v.type.kind == "twin" and v.lvalue:  # `auto cfg = CFG_MDL;`: a copy of the struct
                code = f"_cx.copy_value({v.code})"
            else:
                code = self.convert(v, t, ctx, value)
            cval = v.const if (const and v.is_const and t.is_arith) else NOCONST
            if cval is not NOCONST:
                cval = self.literal(cval, t).const
        elif value is not None:
            if t.kind == "auto":
                raise self.unsupported(ctx.pf, value, "auto with a braced initializer")
            if t.kind == "array" and t.length < 0:
                t = T.CType("array", t.name, elem=t.elem, length=len(value.named_children))
            code = self.construct(
                t, list(value.named_children), ctx, value, brace=value.type == "initializer_list"
            )
            cval = NOCONST
            if const and t.is_arith and len(value.named_children) == 1:
                v = self.expr(value.named_children[0], ctx)
                if v.is_const:
                    cval = self.literal(v.const, t).const
        else:
            if t.kind == "auto":
                raise self.err(ctx.pf, d, "auto needs an initializer")
            if is_ref:
                raise self.err(ctx.pf, d, "a reference needs an initializer")
            code = self.default_value(t, ctx, d)
            cval = NOCONST
        py = self.local_name(name, ctx)
        ctx.scopes[-1][name] = Local(py, t, cval)
        ctx.em.emit(line(d), ind, f"{py} = {code}")

    def _vexing_args(self, fdecl, ctx) -> list:
        """The arguments of `T obj(a, b)`: every parameter must be a bare name, else it really is
        a function declaration."""
        args = []
        for p in fdecl.child_by_field_name("parameters").named_children:
            tn = p.child_by_field_name("type") if p.type == "parameter_declaration" else None
            if (
                tn is None
                or p.child_by_field_name("declarator") is not None
                or tn.type not in ("type_identifier", "qualified_identifier")
            ):
                # `T obj(pos, n * sizeof(half), n)`: the arguments, read again as expressions
                args = reparse_call_args(
                    ctx.pf, fdecl.child_by_field_name("declarator"), fdecl.child_by_field_name("parameters")
                )
                if args is None:
                    raise self.unsupported(ctx.pf, fdecl, "local function declarations")
                return args
            args.append(tn)
        return args

    def local_name(self, name: str, ctx: FuncCtx) -> str:
        py = pyname(name)
        taken = {loc.py for s in ctx.scopes for loc in s.values()}
        if py in taken or py in ctx.used and ctx.lookup(name) is None and False:
            i = 2
            while f"{py}_{i}" in taken:
                i += 1
            py = f"{py}_{i}"
        ctx.used.add(py)
        return py

    def s_alias_declaration(self, node, ctx, ind):
        name = node.child_by_field_name("name").text.decode()
        ctx.tmap[name] = self.resolve_type(node.child_by_field_name("type"), ctx)

    def s_type_definition(self, node, ctx, ind):
        t = node.child_by_field_name("type")
        for d in node.children_by_field_name("declarator"):
            name, _ = decl_name(d)
            ctx.tmap[name] = self.resolve_type(t, ctx, d if d.type != "type_identifier" else None)

    def s_using_declaration(self, node, ctx, ind):
        pass  # `using namespace AscendC;` in a body: twin names resolve anyway

    def s_static_assert_declaration(self, node, ctx, ind):
        pass

    # -- control flow ------------------------------------------------------------------------------
    def cond_node(self, node):
        c = node.child_by_field_name("condition")
        if c is not None and c.type == "condition_clause":
            if c.child_by_field_name("initializer") is not None:
                return None
            v = c.child_by_field_name("value")
            return v
        return c

    def s_if_statement(self, node, ctx, ind, elif_=False):
        cnode = self.cond_node(node)
        if cnode is None or cnode.type == "declaration":
            raise self.unsupported(ctx.pf, node, "declarations in an if condition")
        constexpr = any(c.type == "constexpr" for c in node.children)
        c = self.expr(cnode, ctx)
        cons = node.child_by_field_name("consequence")
        alt = node.child_by_field_name("alternative")
        if alt is not None and alt.type == "else_clause":
            alt = next((x for x in alt.named_children if x.type != "comment"), None)
        if constexpr:
            if not c.is_const:
                raise self.err(ctx.pf, cnode, "if constexpr condition is not a compile-time constant")
            chosen = cons if c.const else alt
            if elif_:
                ctx.em.emit(line(node), ind, "else:", header=True)
                ind += 1
            if chosen is not None:
                self.body(chosen, ctx, ind, line(node))
            elif elif_:
                ctx.em.emit(line(node), ind, "pass")
            return
        ctx.em.emit(line(node), ind, f"{'elif' if elif_ else 'if'} {c.code}:", header=True)
        self.body(cons, ctx, ind + 1, line(node))
        if alt is None:
            return
        if alt.type == "if_statement" and not any(x.type == "constexpr" for x in alt.children):
            self.s_if_statement(alt, ctx, ind, elif_=True)
            return
        ctx.em.emit(line(alt) if line(alt) > ctx.em.last else ctx.em.last + 1, ind, "else:", header=True)
        self.body(alt, ctx, ind + 1, line(alt))

    def s_return_statement(self, node, ctx, ind):
        vals = [c for c in node.named_children if c.type != "comment"]
        refs = "".join(", " + r for r in ctx.refs)
        if not vals:
            ctx.em.emit(line(node), ind, f"return (None{refs})" if refs else "return")
            return
        if vals[0].type == "initializer_list":
            code = self.construct(ctx.ret, list(vals[0].named_children), ctx, vals[0], True)
        else:
            v = self.expr(vals[0], ctx)
            code = (
                self.convert(v, ctx.ret, ctx, vals[0])
                if ctx.ret is not None and ctx.ret.kind != "void"
                else v.code
            )
        ctx.em.emit(line(node), ind, f"return ({code}{refs})" if refs else f"return {code}")


def _has_ref(d) -> bool:
    while d is not None:
        if d.type == "reference_declarator":
            return True
        d = d.child_by_field_name("declarator")
    return False
