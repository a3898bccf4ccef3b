"""Loops and switch, placed on their C++ lines.

Counted `for` loops whose bound and counter the body (or the methods it calls) cannot change
become `range` loops (fast); other `for`s become `while` with the update at the loop's closing
line and before every `continue`. `switch` is a run-once loop with a fall-through flag, so
`break` keeps its meaning.
"""

from __future__ import annotations

from .. import ctype as T
from .base import GeneratorBase
from .scope import Local, single_declarator
from .stmt import end_line, line


class LoopGen(GeneratorBase):
    def s_while_statement(self, node, ctx, ind):
        cnode = self.cond_node(node)
        if cnode is None:
            raise self.unsupported(ctx.pf, node, "declarations in a while condition")
        c = self.expr(cnode, ctx)
        ctx.em.emit(line(node), ind, f"while {c.code}:", header=True)
        ctx.loops.append(None)
        try:
            self.body(node.child_by_field_name("body"), ctx, ind + 1, line(node))
        finally:
            ctx.loops.pop()

    def s_do_statement(self, node, ctx, ind):
        cnode = node.child_by_field_name("condition")
        ctx.em.emit(line(node), ind, "while True:", header=True)
        c = self.expr(cnode, ctx)
        ctx.loops.append(("do", c.code))
        try:
            self.block(node.child_by_field_name("body"), ctx, ind + 1)
        finally:
            ctx.loops.pop()
        ctx.em.emit(line(cnode), ind + 1, f"if not {c.code}: break", header=True)

    def s_for_statement(self, node, ctx, ind):
        ctx.scopes.append({})
        try:
            if not self._range_for(node, ctx, ind):
                self._while_for(node, ctx, ind)
        finally:
            ctx.scopes.pop()

    def _while_for(self, node, ctx, ind):
        init = node.child_by_field_name("initializer")
        if init is not None:
            if init.type == "declaration":
                self.s_declaration(init, ctx, ind)
            elif init.type in ("assignment_expression", "update_expression", "call_expression"):
                self.s_expression_statement(_Wrap(init), ctx, ind)
            elif init.type == "comma_expression":
                raise self.unsupported(ctx.pf, init, "comma expressions")
            else:
                self.s_expression_statement(_Wrap(init), ctx, ind)
        cnode = node.child_by_field_name("condition")
        cond = self.expr(cnode, ctx).code if cnode is not None else "True"
        ctx.em.emit(line(node), ind, f"while {cond}:", header=True)
        upd = node.child_by_field_name("update")
        ucode = None
        if upd is not None:
            if upd.type == "update_expression":
                ucode = self.update_code(upd, ctx)
            elif upd.type == "assignment_expression":
                ucode = self.assign_code(upd, ctx)
            elif upd.type == "comma_expression":
                parts = []
                for p in upd.named_children:
                    parts.append(
                        self.update_code(p, ctx)
                        if p.type == "update_expression"
                        else self.assign_code(p, ctx)
                    )
                ucode = "; ".join(parts)
            else:
                ucode = self.expr(upd, ctx).code
        ctx.loops.append(("for", ucode))
        body = node.child_by_field_name("body")
        try:
            self.body(body, ctx, ind + 1, line(node))
        finally:
            ctx.loops.pop()
        if ucode:
            ctx.em.emit(end_line(body), ind + 1, ucode)

    def _range_for(self, node, ctx, ind) -> bool:
        init = node.child_by_field_name("initializer")
        cnode = node.child_by_field_name("condition")
        upd = node.child_by_field_name("update")
        body = node.child_by_field_name("body")
        if init is None or cnode is None or upd is None or init.type != "declaration":
            return False
        one = single_declarator(init)
        if one is None:
            return False
        d, var_node = one
        var = var_node.text.decode()
        t = self.resolve_type(init.child_by_field_name("type"), ctx, var_node)
        if not (t.kind == "int"):
            return False
        if cnode.type != "binary_expression":
            return False
        op = cnode.child_by_field_name("operator").type
        left, right = cnode.child_by_field_name("left"), cnode.child_by_field_name("right")
        if left.type != "identifier" or left.text.decode() != var or op not in ("<", "<=", ">", ">="):
            return False
        step = _step(upd, var)
        if step is None or (step > 0) != (op in ("<", "<=")):
            return False
        assigned = self.assigned_in(body, ctx)
        if var in assigned:
            return False
        if not self._stable(right, ctx, assigned):
            return False
        start = self.expr(d.child_by_field_name("value"), ctx)
        start_code = self.convert(start, t, ctx, d)
        bound = self.expr(right, ctx)
        ct = T.common(t, bound.type) if bound.type.is_arith else t
        if ct.kind != "int":
            return False
        if ct != t and not (start.is_const and start.const >= 0):
            return False  # a signed counter compared as unsigned: keep the C loop
        if not t.signed and op == ">=":
            return False
        stop = self.convert(bound, ct, ctx, right)
        if op == "<=":
            stop = f"{stop} + 1"
        elif op == ">=":
            stop = f"{stop} - 1"
        py = self.local_name(var, ctx)
        ctx.scopes[-1][var] = Local(py, t)
        rng = f"range({start_code}, {stop})" if step == 1 else f"range({start_code}, {stop}, {step})"
        if step == 1 and start_code == "0":
            rng = f"range({stop})"
        vec = self.vector_for(var, t, body, ctx) if step == 1 else None
        if vec is not None:  # an element-wise map: whole arrays when exact (vectorize.py)
            rng = f"_cx.vfor({start_code}, {stop}, {vec})"
        ctx.em.emit(line(node), ind, f"for {py} in {rng}:", header=True)
        ctx.loops.append(None)
        try:
            self.body(body, ctx, ind + 1, line(node))
        finally:
            ctx.loops.pop()
        return True

    def _stable(self, node, ctx, assigned: set) -> bool:
        """True when the loop body cannot change the value of `node` (a bound)."""
        k = node.type
        if k in ("number_literal", "true", "false", "sizeof_expression"):
            return True
        if k == "identifier":
            name = node.text.decode()
            if name in assigned:
                return False
            if ctx.lookup(name) is not None:
                return True
            return True  # a constant, or a member no statement of the loop (or method it calls) sets
        if k == "field_expression":
            if node.child_by_field_name("argument").type != "this":
                return False
            return node.child_by_field_name("field").text.decode() not in assigned
        if k in ("binary_expression", "parenthesized_expression", "unary_expression", "cast_expression"):
            return all(
                self._stable(c, ctx, assigned) for c in node.named_children if c.type != "type_descriptor"
            )
        if k == "qualified_identifier":
            return True
        return False

    def assigned_in(self, node, ctx) -> set:
        """Names assigned in `node` and, transitively, in the methods it calls of this class."""
        out: set = set()
        seen: set = set()
        todo = [(node, ctx.pf.path)]
        memo = self.__dict__.setdefault("_cx_effects", {})
        while todo:
            n, path = todo.pop()
            key = (path, n.start_byte, n.end_byte)
            if key not in memo:
                memo[key] = _direct_effects(n)
            assigned, called = memo[key]
            out |= assigned
            if ctx.cls is None:
                continue
            for name in called:
                cur = ctx.cls
                while cur is not None:
                    for m in cur.info.methods.get(name, ()):
                        if id(m) not in seen:
                            seen.add(id(m))
                            b = m.node.child_by_field_name("body")
                            if b is not None:
                                todo.append((b, m.pf.path))
                    cur = cur.base
        return out

    def s_switch_statement(self, node, ctx, ind):
        cnode = self.cond_node(node)
        v = self.expr(cnode, ctx)
        sw = ctx.fresh("sw")
        ctx.em.emit(line(node), ind, f"for {sw} in (0,):", header=True)
        ctx.em.emit(line(node), ind + 1, f"{sw}v = {v.code}; {sw}f = False")
        ctx.loops.append(("switch", None))
        body = node.child_by_field_name("body")
        cases = [c for c in body.named_children if c.type == "case_statement"]
        try:
            for i, c in enumerate(cases):
                value = c.child_by_field_name("value")
                if value is None:
                    if i != len(cases) - 1:
                        raise self.unsupported(ctx.pf, c, "default: before the last case")
                    ctx.em.emit(line(c), ind + 1, "if True:", header=True)
                else:
                    cv = self.expr(value, ctx)
                    ctx.em.emit(line(c), ind + 1, f"if {sw}f or {sw}v == {cv.code}:", header=True)
                ctx.em.emit(line(c), ind + 2, f"{sw}f = True")
                ctx.scopes.append({})
                try:
                    for s in c.named_children:
                        if value is not None and s == value:
                            continue
                        self.stmt(s, ctx, ind + 2)
                finally:
                    ctx.scopes.pop()
        finally:
            ctx.loops.pop()

    def s_break_statement(self, node, ctx, ind):
        if not ctx.loops:
            raise self.err(ctx.pf, node, "break outside a loop or switch")
        ctx.em.emit(line(node), ind, "break")

    def s_continue_statement(self, node, ctx, ind):
        loop = next((x for x in reversed(ctx.loops) if x is None or x[0] != "switch"), "none")
        if loop == "none":
            raise self.err(ctx.pf, node, "continue outside a loop")
        if any(
            x is not None and x[0] == "switch"
            for x in ctx.loops[ctx.loops.index(loop) + 1 :]
            if loop is not None
        ) or (loop is None and ctx.loops and ctx.loops[-1] is not None and ctx.loops[-1][0] == "switch"):
            raise self.unsupported(ctx.pf, node, "continue inside a switch")
        if loop is not None and loop[0] == "for" and loop[1]:
            ctx.em.emit(line(node), ind, loop[1])
        elif loop is not None and loop[0] == "do":
            ctx.em.emit(line(node), ind, f"if not {loop[1]}: break", header=True)
        ctx.em.emit(line(node), ind, "continue")


def _direct_effects(node) -> tuple[frozenset, frozenset]:
    """(names assigned, names called) directly in `node`."""
    assigned: set = set()
    called: set = set()
    stack = [node]
    while stack:
        x = stack.pop()
        if x.type in ("assignment_expression", "update_expression"):
            tgt = x.child_by_field_name("left") or x.child_by_field_name("argument")
            while tgt is not None and tgt.type in (
                "subscript_expression",
                "field_expression",
                "parenthesized_expression",
            ):
                if tgt.type == "field_expression":
                    assigned.add(tgt.child_by_field_name("field").text.decode())
                    if tgt.child_by_field_name("argument").type == "this":
                        break
                tgt = tgt.child_by_field_name("argument") or (
                    tgt.named_children[0] if tgt.named_children else None
                )
            if tgt is not None and tgt.type == "identifier":
                assigned.add(tgt.text.decode())
        elif x.type == "call_expression":
            f = x.child_by_field_name("function")
            called.add(f.text.decode().split("(")[0].split("<")[0].split(".")[-1].split(">")[-1])
        stack.extend(x.named_children)
    result = (frozenset(assigned), frozenset(called))
    return result


class _Wrap:
    """An expression node seen as an expression statement (for-loop initialisers)."""

    type = "expression_statement"

    def __init__(self, node):
        self.named_children = [node]
        self.start_point = node.start_point


def _step(upd, var: str):
    if upd.type == "update_expression":
        arg = upd.child_by_field_name("argument")
        if arg.type != "identifier" or arg.text.decode() != var:
            return None
        return 1 if upd.child_by_field_name("operator").type == "++" else -1
    if upd.type == "assignment_expression":
        left = upd.child_by_field_name("left")
        right = upd.child_by_field_name("right")
        op = upd.child_by_field_name("operator").type
        if left.type != "identifier" or left.text.decode() != var or right.type != "number_literal":
            return None
        try:
            n = int(right.text.decode().rstrip("uUlL"), 0)
        except ValueError:
            return None
        if n <= 0:
            return None
        return n if op == "+=" else -n if op == "-=" else None
    return None
