"""Host code: a sample's `main()` (and the host helpers it calls), interpreted statement by
statement over the parse tree, onto the ACL runtime twin (`acl.py`).

Host code is run once per run and does little arithmetic, so it is walked, not translated: each
statement knows its C++ line, and every error names file:line:col. The subset: declarations
(scalars, pointers, arrays with `{…}`, structs of the unit), expressions (C integer semantics,
casts, `sizeof`, `&`/`*`, subscripts, fields), if/for/while/do/switch-free control flow, calls to
ACL (`acl.*`), `ReadFile`/`WriteFile`, `printf`/`std::cout`, host functions of the file, and
kernel launches (`k<<<…>>>`, `k<T, N><<<…>>>`, `ACLRT_LAUNCH_KERNEL(k)(…)`), which go to
`launch(where, name, template_args, blocks, args)`.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np

from ...npu.errors import OperatorError
from .. import runtime as R
from ..errors import CxxError, Unsupported, host_failure
from . import lib as hostlib
from .acl import AclRuntime, Ptr
from .expr import Expressions
from .structs import StructMixin
from .values import (
    ALIASES,
    FLOATS,
    INTS,
    Vec,
    base_type,
    declarator_kinds,
    declarator_name,
    np_type,
    type_text,
)


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class Host(StructMixin, Expressions):
    """One host program: the unit's functions, its constants, the ACL twin and the launcher."""

    def __init__(self, pf_of, funcs: dict, consts: dict, acl: AclRuntime, launch, kernels: set):
        self.pf_of = pf_of  # node -> PFile (for lines and columns)
        self.funcs = funcs  # host function name -> FuncInfo
        self.consts = consts  # global constexpr name -> (node, pf)
        self.cvals: dict = {}
        self.acl = acl
        self.launch = launch
        self.kernels = kernels
        self.overrides: dict = {}  # parameter values for the file's constants (`--param`)
        self.evaluating: set[str] = set()  # global constants being evaluated (cycle guard)
        self.const_eval = None  # name -> value of a namespace-scope constant, as the kernel sees it
        self.structs: dict[str, list[str]] = {}  # struct name -> field names (brace init order)
        self.struct_defs: dict = {}  # struct name -> its fields with types (hoststruct.py)
        self.struct_envs: dict = {}  # struct name -> the scope it was defined in
        self.pf = None

    # -- where ----------------------------------------------------------------
    def where(self, node):
        row, col = node.start_point
        return (self.pf.path, row + 1, self.pf.orig_col(row, col) + 1)

    def unsupported(self, node, what: str):
        raise Unsupported(f"{what} in host code", *self.where(node))

    def error(self, node, msg: str, hint=None):
        raise CxxError(msg, *self.where(node), hint=hint)

    # -- functions ------------------------------------------------------------
    def call_function(self, f, args: list, targs=None):
        return self.call_node(f.node, f.pf, args, f.tparams, targs)

    def call_node(self, node, pf, args: list, tparams=None, targs=None, outer=None):
        """Run a function (or a lambda: `outer` is the scope it captures) with `args`."""
        saved = self.pf
        self.pf = pf
        env: dict = dict(outer or {})
        for tp, v in zip(tparams or [], targs or []):
            env[tp.name] = (v, "typename" if tp.is_type else "auto")
            if tp.is_type and isinstance(v, str):
                ALIASES[tp.name] = v
        decl = node.child_by_field_name("declarator")
        while decl is not None and decl.type not in (
            "function_declarator",
            "abstract_function_declarator",
            "lambda_declarator",
        ):
            decl = decl.child_by_field_name("declarator")
        params = decl.child_by_field_name("parameters").named_children if decl is not None else []
        params = [p for p in params if p.type == "parameter_declaration"]
        if tparams and not targs:  # deduce `template <typename T> f(std::vector<T>& x)` from x
            targs = [_deduce(tp.name, params, args) for tp in tparams]
            for tp, v in zip(tparams, targs):
                if v is not None:
                    env[tp.name] = (v, "typename")
                    ALIASES[tp.name] = v
        for p, v in zip(params, args):
            name = declarator_name(p.child_by_field_name("declarator"))
            if name:
                env[name] = (v, type_text(p))
        try:
            self.block(node.child_by_field_name("body"), env)
        except _Return as r:
            return r.value
        finally:
            self.pf = saved
        return None

    # -- statements -----------------------------------------------------------
    def block(self, node, env):
        for s in node.named_children:
            self.stmt(s, env)

    def stmt(self, n, env):
        try:
            self._stmt(n, env)
        except (_Return, _Break, _Continue, OperatorError, SystemExit):
            raise
        except Exception as exc:  # an interpreter limit: still the user's line
            raise host_failure(exc, *self.where(n)) from None

    def _stmt(self, n, env):
        t = n.type
        if t == "expression_statement":
            if n.named_children:
                self.expr(n.named_children[0], env)
        elif t == "declaration":
            self.declaration(n, env)
        elif t == "compound_statement":
            self.block(n, dict(env) if False else env)
        elif t == "return_statement":
            raise _Return(self.expr(n.named_children[0], env) if n.named_children else None)
        elif t == "if_statement":
            cond = n.child_by_field_name("condition")
            if self.truth(cond, env):
                self.stmt(n.child_by_field_name("consequence"), env)
            else:
                alt = n.child_by_field_name("alternative")
                if alt is not None:
                    self.stmt(alt.named_children[0] if alt.type == "else_clause" else alt, env)
        elif t == "for_statement":
            self.for_loop(n, env)
        elif t == "while_statement":
            while self.truth(n.child_by_field_name("condition"), env):
                if self.body(n.child_by_field_name("body"), env):
                    break
        elif t == "do_statement":
            while True:
                if self.body(n.child_by_field_name("body"), env):
                    break
                if not self.truth(n.child_by_field_name("condition"), env):
                    break
        elif t == "break_statement":
            raise _Break
        elif t == "continue_statement":
            raise _Continue
        elif t in ("struct_specifier", "class_specifier"):  # a local struct: its fields
            self.define_struct(n, env)
        elif t == "alias_declaration":
            ALIASES[n.child_by_field_name("name").text.decode()] = type_text(n)
        elif t in ("comment", "empty_statement", "type_definition", "using_declaration"):
            pass
        else:
            self.unsupported(n, f"statement {t}")

    def body(self, n, env) -> bool:
        """Run a loop body; True on break."""
        try:
            self.stmt(n, env)
        except _Break:
            return True
        except _Continue:
            pass
        return False

    def for_loop(self, n, env):
        init = n.child_by_field_name("initializer")
        if init is not None:
            if init.type == "declaration":
                self.declaration(init, env)
            else:
                self.expr(init, env)
        cond, upd = n.child_by_field_name("condition"), n.child_by_field_name("update")
        while cond is None or self.truth(cond, env):
            if self.body(n.child_by_field_name("body"), env):
                break
            if upd is not None:
                self.expr(upd, env)

    def truth(self, n, env) -> bool:
        if n.type == "condition_clause":
            n = n.named_children[-1]
        return bool(self.expr(n, env))

    def declaration(self, n, env):
        tnode = n.child_by_field_name("type")
        if tnode is not None and tnode.type in ("struct_specifier", "class_specifier"):
            named = tnode.child_by_field_name("body") is not None and self.define_struct(tnode, env)
            ttext = named or tnode.child_by_field_name("name").text.decode()  # `struct S {…} s;`
        else:
            ttext = type_text(n)
        const = "const" in ttext or any(c.type == "type_qualifier" and b"const" in c.text for c in n.children)
        for d in n.children_by_field_name("declarator"):
            if d.type == "function_declarator":  # `std::vector<float> x(n);` parses as a function
                args = [self.targ(p.child_by_field_name("type") or p, env) for p in
                        d.child_by_field_name("parameters").named_children]  # fmt: skip
                env[declarator_name(d)] = (self.construct(ttext, args, n), ttext)
                continue
            init = d.child_by_field_name("value") if d.type == "init_declarator" else None
            target = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
            name = declarator_name(target)
            is_ptr = "pointer_declarator" in declarator_kinds(target)
            if target.type == "array_declarator" or "array_declarator" in declarator_kinds(target):
                size = target.child_by_field_name("size")
                vals = [self.expr(c, env) for c in init.named_children] if init is not None else []
                n_el = int(self.expr(size, env)) if size is not None else len(vals)
                vals += [0] * (n_el - len(vals))
                env[name] = (vals, ttext + "[]")
                continue
            if init is None:
                v = None if is_ptr else self.default(ttext, n, env)
            elif init.type == "argument_list":  # T x(args)
                args = [self.expr(a, env) for a in init.named_children]
                v = self.construct(ttext, args, n)
            elif init.type == "initializer_list":
                v = self.brace(ttext, init, env)
            else:
                v = self._copy(self.expr(init, env))  # a struct or array is copied, as in C
            if name in self.overrides and const:  # `--param NAME=v` on a constant of a host function
                v = self.overrides[name]
            env[name] = (v if is_ptr else self.conv(ttext, v), ttext + ("*" if is_ptr else ""))

    def brace(self, ttext, init, env):
        """`T x = {…}`: a vector of elements, a struct field by field, or a scalar."""
        m = re.fullmatch(r"\s*(?:std::)?vector\s*<\s*([\w:]+)\s*>\s*", base_type(ttext).replace("const", ""))
        items = init.named_children
        if m:
            return [
                self.brace(m.group(1), c, env) if c.type == "initializer_list" else self.expr(c, env)
                for c in items
            ]
        if base_type(ttext) in self.struct_defs:
            return self.struct_brace(base_type(ttext), init, env)
        v = self.default(ttext, init)
        if isinstance(v, SimpleNamespace):
            for field_name, c in zip(self.structs.get(base_type(ttext), []), items):
                setattr(v, field_name, self.expr(c, env))
            return v
        return self.expr(items[0], env) if items else v

    def default(self, ttext, node, env=None):
        base = base_type(ttext)
        if base in self.struct_defs:
            return self.new_struct(base, env if env is not None else {})
        if base in INTS or base in FLOATS or base == "bool":
            return 0
        if base in ("aclrtStream", "aclrtContext", "aclrtEvent", "void"):
            return None
        lib = hostlib.default(base, self.acl.chip)
        if lib is not hostlib.MISSING:  # `AscendC::tiling::TCubeTiling tilingData;`
            return lib
        return SimpleNamespace(**dict.fromkeys(self.structs.get(base, []), 0))  # a struct of the unit

    def construct(self, ttext, args, node):
        if "vector" in ttext and len(args) == 2 and isinstance(args[0], Ptr):  # vector(first, last)
            first, last = args
            m = re.search(r"<\s*([\w:]+)\s*>", ttext)
            elem = np_type(m.group(1)) if m else first.elem
            n = (last.off - first.off) // elem.itemsize
            p = self.acl.alloc(self.where(node), None, n * elem.itemsize, False, "std::vector").cast(elem)
            p.view(n)[:] = first.cast(elem).view(n)
            return Vec(p, n)
        elem_t = re.search(r"<\s*([\w:]+\s*\**)\s*>", ttext)
        if (
            "vector" in ttext
            and elem_t
            and ("*" in elem_t.group(1) or base_type(elem_t.group(1)) in self.structs)
        ):
            n = int(args[0]) if args else 0  # pointers or structs: a list of values
            return [args[1] if len(args) > 1 else self.default(elem_t.group(1), node) for _ in range(n)]
        if "vector" in ttext:
            n = int(args[0]) if args else 0
            m = re.search(r"<\s*([\w:]+)\s*>", ttext)
            elem = np_type(base_type(m.group(1))) if m else np.dtype(np.uint8)
            p = self.acl.alloc(self.where(node), None, n * elem.itemsize, False, "std::vector").cast(elem)
            if len(args) > 1:
                p.view(n)[:] = args[1]
            return Vec(p, n)
        if "string" in ttext:
            return str(args[0]) if args else ""
        lib = hostlib.construct(ttext, args)
        if lib is not hostlib.MISSING:  # `matmul_tiling::MultiCoreMatmulTiling t(*platform);`
            return lib
        if len(args) == 1:
            return self.conv(ttext, args[0])
        self.unsupported(node, f"constructing {ttext}")

    def conv(self, ttext, v):
        base = base_type(ttext)
        if base in INTS and isinstance(v, (int, float, bool, np.generic)) and not isinstance(v, Ptr):
            bits, signed = INTS[base]
            v = int(v) & ((1 << bits) - 1)
            return v - (1 << bits) if signed and v >> (bits - 1) else v
        if base == "float" and isinstance(v, (int, float, np.generic)):
            return R.f32(float(v))
        if base == "bool":
            return bool(v)
        return v


_C_NAMES = {"float32": "float", "float16": "half", "int32": "int32_t", "uint32": "uint32_t", "int8": "int8_t",
            "uint8": "uint8_t", "int16": "int16_t", "uint16": "uint16_t", "int64": "int64_t",
            "bfloat16": "bfloat16_t"}  # fmt: skip


def _deduce(name: str, params, args):
    """A type template parameter from the first argument whose parameter type names it."""
    for p, a in zip(params, args):
        t = type_text(p)
        if not re.search(r"\b" + name + r"\b", t + (p.child_by_field_name("declarator").text.decode())):
            continue
        elem = getattr(a, "elem", None) or getattr(getattr(a, "ptr", None), "elem", None)
        if elem is not None:
            return _C_NAMES.get(str(elem), str(elem))
        if isinstance(a, float):
            return "float"
        if isinstance(a, int):
            return "int32_t"
    return None
