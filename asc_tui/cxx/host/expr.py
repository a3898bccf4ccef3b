"""Host code expressions (the `Expressions` half of `host.Host`): C integer semantics, casts,
sizeof, `&`/`*`, subscripts, fields, assignments and calls — library calls (hostapi.py),
host functions of the file, and kernel launches."""

from __future__ import annotations

from ..ctype import SCALARS
from ..errors import CxxError
from . import lib as hostlib
from .acl import CONSTANTS, Ptr
from .values import (
    BINARY_OPS,
    FLOATS,
    INTS,
    BoundMethod,
    ItemRef,
    Ref,
    Vec,
    base_type,
    format_value,
    np_type,
    parse_number,
    subscript_index,
    type_text,
)


class Expressions:
    """Evaluation of expression nodes; `Host` supplies where/error/conv/default/launch."""

    # -- expressions ----------------------------------------------------------
    def expr(self, n, env):
        m = getattr(self, "e_" + n.type, None)
        if m is None:
            self.unsupported(n, f"expression {n.type} `{n.text.decode()[:40]}`")
        return m(n, env)

    def e_number_literal(self, n, env):
        return parse_number(n.text.decode())

    def e_string_literal(self, n, env):
        return (
            "".join(c.text.decode() for c in n.named_children if c.type == "string_content")
            .encode()
            .decode("unicode_escape")
        )

    def e_concatenated_string(self, n, env):
        return "".join(self.expr(c, env) for c in n.named_children)

    def e_char_literal(self, n, env):
        return ord(n.text.decode()[1:-1].encode().decode("unicode_escape"))

    def e_true(self, n, env):
        return True

    def e_false(self, n, env):
        return False

    def e_null(self, n, env):
        return None

    def e_nullptr(self, n, env):
        return None

    def e_parenthesized_expression(self, n, env):
        return self.expr(n.named_children[-1], env)

    def e_identifier(self, n, env):
        name = n.text.decode()
        if name in env:
            return env[name][0]
        return self.global_value(name, n)

    e_type_identifier = e_identifier  # a name the grammar took for a type (`vector<T> x(n)`)

    def e_qualified_identifier(self, n, env):
        text = n.text.decode().replace(" ", "")
        if text in ("std::endl",):
            return "\n"
        if text == "std::cout":
            return self.acl.out
        v = hostlib.enum_value(text)  # `matmul_tiling::DataType::DT_FLOAT16`, …
        if v is not hostlib.MISSING:
            return v
        return self.global_value(text.split("::")[-1], n)

    def global_value(self, name, n):
        if name in CONSTANTS:
            return CONSTANTS[name]
        if name in self.overrides:
            return self.overrides[name]
        if name in self.cvals:
            return self.cvals[name]
        if name in self.funcs:  # a host function as a value (`KernelCall(run_it, …)`)
            f = self.funcs[name]
            return lambda *a: self.call_function(f, list(a))
        if name in self.consts and self.const_eval is not None and name not in self.evaluating:
            try:  # C++ constant semantics first (templates, static members); host code otherwise
                v = self.cvals[name] = self.const_eval(name)
                return v
            except CxxError:
                pass
        if name in self.consts:
            if name in self.evaluating:
                self.unsupported(n, f"the constant {name} (defined through itself or a class template)")
            self.evaluating.add(name)
            node, pf = self.consts[name]
            saved, self.pf = self.pf, pf
            try:
                v = self.cvals[name] = self.expr(node, {})
            finally:
                self.pf = saved
                self.evaluating.discard(name)
            return v
        self.error(n, f"unknown name {name!r} in host code")

    def e_field_expression(self, n, env):
        obj = self.expr(n.child_by_field_name("argument"), env)
        name = n.child_by_field_name("field").text.decode()
        if isinstance(obj, (list, str, Vec)) and name in ("size", "data", "begin", "end", "c_str"):
            return BoundMethod(obj, name)
        if not hasattr(obj, name):
            self.error(n, f"no field {name!r} set on this object")
        return getattr(obj, name)

    def e_subscript_expression(self, n, env):
        obj = self.expr(n.child_by_field_name("argument"), env)
        idx = int(self.expr(subscript_index(n), env))
        try:
            return obj.get(idx) if isinstance(obj, (Ptr, Vec)) else obj[idx]
        except IndexError:
            self.error(n, f"index {idx} is out of bounds")

    def e_pointer_expression(self, n, env):
        op = n.children[0].type
        arg = n.child_by_field_name("argument")
        if op == "&":
            if arg.type == "identifier":
                name = arg.text.decode()
                if name not in env:
                    self.error(arg, f"unknown name {name!r}")
                return Ref(env, name)
            if arg.type == "subscript_expression":
                base = self.expr(arg.child_by_field_name("argument"), env)
                i = int(self.expr(subscript_index(arg), env))
                if isinstance(base, Ptr):
                    return base.moved(i)
                if isinstance(base, list):  # `&ptrs[i]` of a vector of pointers
                    return ItemRef(base, i, arg.child_by_field_name("argument").text.decode())
            self.unsupported(n, f"taking the address of `{arg.text.decode()}`")
        v = self.expr(arg, env)
        if hostlib.is_library_object(v):  # `*ascendcPlatform`: the object itself
            return v
        if isinstance(v, Ptr):
            return v.get(0)
        if isinstance(v, Ref):
            return v.get()
        self.error(n, f"dereferencing a {'null pointer' if v is None else type(v).__name__}")

    def e_cast_expression(self, n, env):
        ttext = n.child_by_field_name("type").text.decode()
        v = self.expr(n.child_by_field_name("value"), env)
        return self.cast(ttext, v)

    def cast(self, ttext, v):
        if "*" in ttext:
            lib = hostlib.view(ttext, v)  # `reinterpret_cast<TCubeTiling*>(buf)->usedCoreNum`
            if lib is not hostlib.MISSING:
                return lib
            base = base_type(ttext.replace("*", ""))
            if isinstance(v, Ptr) and ttext.count("*") == 1 and base != "void":
                return v.cast(np_type(base))
            return v
        return self.conv(ttext, v)

    def e_sizeof_expression(self, n, env):
        t = n.child_by_field_name("type")
        if t is not None:
            return self.sizeof(type_text(t) if t.type == "type_descriptor" else t.text.decode(), n)
        v = n.child_by_field_name("value")
        inner = v.named_children[-1] if v.type == "parenthesized_expression" else v
        if inner.type == "identifier" and inner.text.decode() in env:
            val, ttext = env[inner.text.decode()]
            if ttext == "typename":
                return self.sizeof(val, n)
            if isinstance(val, list):
                return len(val) * self.sizeof(base_type(ttext), n)
            return self.sizeof(ttext, n)
        return self.sizeof(inner.text.decode(), n)

    def sizeof(self, ttext, node):
        if "*" not in ttext and base_type(ttext) in self.struct_defs:  # a struct of the unit: C layout
            return self.struct_layout(base_type(ttext), {})[0]
        if "*" in ttext:
            return 8
        base = base_type(ttext)
        if base in INTS or base in FLOATS or base == "bool":
            return np_type(base).itemsize
        lib = hostlib.sizeof(base)
        if lib is not None:
            return lib
        self.unsupported(node, f"sizeof({ttext}) on the host")

    def e_binary_expression(self, n, env):
        op = n.children[1].type
        left = self.expr(n.child_by_field_name("left"), env)
        if op == "&&":
            return bool(left) and bool(self.expr(n.child_by_field_name("right"), env))
        if op == "||":
            return bool(left) or bool(self.expr(n.child_by_field_name("right"), env))
        right = self.expr(n.child_by_field_name("right"), env)
        if op == "<<" and hasattr(left, "write"):
            left.write(format_value(right))
            return left
        if isinstance(left, Ptr) and op in "+-":
            return left.moved(right if op == "+" else -right)
        try:
            return BINARY_OPS[op](left, right)
        except (TypeError, KeyError, ZeroDivisionError) as exc:
            self.error(n, f"host expression `{n.text.decode()[:60]}`: {exc}")

    def e_unary_expression(self, n, env):
        op = n.children[0].type
        v = self.expr(n.child_by_field_name("argument"), env)
        return {"-": lambda x: -x, "+": lambda x: x, "!": lambda x: not x, "~": lambda x: ~x}[op](v)

    def e_update_expression(self, n, env):
        arg = n.child_by_field_name("argument")
        old = self.expr(arg, env)
        new = (
            old.moved(1 if "++" in n.text.decode() else -1)
            if isinstance(old, Ptr)
            else old + (1 if "++" in n.text.decode() else -1)
        )
        self.assign(arg, new, env)
        return new if n.children[0].type in ("++", "--") else old

    def e_assignment_expression(self, n, env):
        op = n.children[1].type
        left = n.child_by_field_name("left")
        right = n.child_by_field_name("right")
        if right.type == "initializer_list" and left.type == "identifier" and left.text.decode() in env:
            ttext = env[left.text.decode()][1]  # `s = {a, {b, c}}`: a struct, field by field
            if base_type(ttext) in self.struct_defs:
                v = self.struct_brace(base_type(ttext), right, env)
                self.assign(left, v, env)
                return v
        v = self._copy(self.expr(right, env))
        if op != "=":
            cur = self.expr(left, env)
            v = cur.moved(v if op == "+=" else -v) if isinstance(cur, Ptr) else BINARY_OPS[op[:-1]](cur, v)
        self.assign(left, v, env)
        return v

    def assign(self, left, v, env):
        t = left.type
        if t == "identifier":
            name = left.text.decode()
            if name not in env:
                self.error(left, f"assignment to unknown name {name!r}")
            ttext = env[name][1]
            env[name] = (v if "*" in ttext else self.conv(ttext, v), ttext)
        elif t == "subscript_expression":
            obj = self.expr(left.child_by_field_name("argument"), env)
            idx = int(self.expr(subscript_index(left), env))
            if isinstance(obj, (Ptr, Vec)):
                obj.set(idx, v)
            else:
                obj[idx] = v
        elif t == "field_expression":
            setattr(
                self.expr(left.child_by_field_name("argument"), env),
                left.child_by_field_name("field").text.decode(),
                v,
            )
        elif t == "pointer_expression" and left.children[0].type == "*":
            p = self.expr(left.child_by_field_name("argument"), env)
            p.set(v) if isinstance(p, Ref) else p.set(0, v)
        elif t == "parenthesized_expression":
            self.assign(left.named_children[-1], v, env)
        else:
            self.unsupported(left, f"assignment to {t}")

    def e_conditional_expression(self, n, env):
        c = self.expr(n.child_by_field_name("condition"), env)
        return self.expr(n.child_by_field_name("consequence" if c else "alternative"), env)

    def e_comma_expression(self, n, env):
        self.expr(n.child_by_field_name("left"), env)
        return self.expr(n.child_by_field_name("right"), env)

    def e_call_expression(self, n, env):
        fn = n.child_by_field_name("function")
        args_node = n.child_by_field_name("arguments")
        cfg = next((c for c in n.named_children if c.type == "kernel_call_syntax"), None)
        if cfg is not None:  # k<<<blocks, smem, stream>>>(args) / k<T, N><<<…>>>(args)
            name, targs = fn, []
            if fn.type == "template_function":
                name = fn.child_by_field_name("name")
                targs = [self.targ(a, env) for a in fn.child_by_field_name("arguments").named_children]
            blocks = self.expr(cfg.named_children[0], env)
            args = [self.expr(a, env) for a in args_node.named_children]
            return self.launch(self.where(n), name.text.decode(), targs, blocks, args)
        if fn.type == "call_expression" and fn.child_by_field_name("function").text == b"ACLRT_LAUNCH_KERNEL":
            kname = fn.child_by_field_name("arguments").named_children[0].text.decode()
            args = [self.expr(a, env) for a in args_node.named_children]
            if len(args) < 2:
                self.error(
                    n, "ACLRT_LAUNCH_KERNEL(kernel)(blockDim, stream, args...) needs blockDim and stream"
                )
            return self.launch(self.where(n), kname, [], args[0], args[2:])
        name = fn.text.decode().replace(" ", "")
        targs = None
        if fn.type == "template_function":
            name = fn.child_by_field_name("name").text.decode().replace(" ", "")
            targs = [self.targ(a, env) for a in fn.child_by_field_name("arguments").named_children]
            if name.endswith("_cast") and len(args_node.named_children) == 1:
                return self.cast(str(targs[0]), self.expr(args_node.named_children[0], env))
        if fn.type == "field_expression":
            recv = self.expr(fn.child_by_field_name("argument"), env)
            if isinstance(recv, Ref):  # `api->SetDim(1)` through a pointer `&api`
                recv = recv.get()
            if hostlib.is_library_object(recv):  # `tilingApi.SetDim(2)`, `platform->GetCoreNumAic()`
                return self.library_method(recv, fn, args_node, env)
            obj = self.expr(fn, env)
            if isinstance(obj, BoundMethod):
                return obj()
        if fn.type in ("lambda_expression", "parenthesized_expression"):  # `[=]() { … }()`
            f = self.expr(fn, env)
            if callable(f):
                return f(*[self.expr(a, env) for a in args_node.named_children])
        if fn.type == "identifier" and name in env and callable(env[name][0]):
            return env[name][0](*[self.expr(a, env) for a in args_node.named_children])
        args = [self.expr(a, env) for a in args_node.named_children]
        if name == "assert":
            if not args[0]:
                self.error(n, f"assertion failed: {args_node.named_children[0].text.decode()}")
            return None
        from .api import call_builtin

        done, v = call_builtin(self, name, args, n)
        if done:
            return v
        v = hostlib.call(name, args, self.acl.chip)
        if v is not hostlib.MISSING:
            return v
        short = name.split("::")[-1]
        if short in self.funcs:
            return self.call_function(self.funcs[short], args, targs)
        if short in self.kernels:
            self.error(
                n, f"kernel {short} called like a host function; launch it with <<<blocks, nullptr, stream>>>"
            )
        if name in SCALARS and len(args) <= 1:  # a functional cast: half(x), uint32_t(), float(v)
            return self.conv(name, args[0] if args else 0)
        self.unsupported(fn, f"call to {name}")

    def library_method(self, obj, fn, args_node, env):
        """A method of a host library object; C++ reference out-parameters become `Ref`s."""
        name = fn.child_by_field_name("field").text.decode()
        method = getattr(obj, name, None)
        if not callable(method):
            self.unsupported(fn, f"{type(obj).__name__}::{name}")
        outs = hostlib.OUT_PARAMS.get(name, ())
        args = [
            Ref(env, a.text.decode()) if i in outs and a.type == "identifier" else self.expr(a, env)
            for i, a in enumerate(args_node.named_children)
        ]
        try:
            return method(*args)
        except (TypeError, ValueError, AttributeError) as exc:
            self.error(fn, f"{type(obj).__name__}::{name}: {exc}")

    def targ(self, a, env):
        if a.type == "type_descriptor":
            name = type_text(a)
            if name in env:  # `k<M, N>`: the grammar reads a bare name as a type
                return env[name][0]
            if name in self.consts or name in CONSTANTS:
                return self.global_value(name, a)
            return name
        return self.expr(a, env)

    def e_lambda_expression(self, n, env):
        pf = self.pf
        return lambda *a: self.call_node(n, pf, list(a), outer=env)

    def e_compound_literal_expression(self, n, env):  # `CaseConfig{1, 2, n}`
        return self.brace(n.child_by_field_name("type").text.decode(), n.child_by_field_name("value"), env)

    def e_initializer_list(self, n, env):
        return [self.expr(c, env) for c in n.named_children]
