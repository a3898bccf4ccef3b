"""The surface the kernel code generator's mixins share: `GeneratorBase`.

`Translator` (codegen.py) is built from mixins, one per concern (types, classes, calls, names,
expressions, operators, statements, loops, vectorised loops). Each mixin derives from this base,
which names the state they share and every method one mixin calls on another, with the mixin that
provides it; a mixin relies on nothing else of `self` (tests/test_cxx_layout.py checks it). Reading
one mixin, this file says what the others promise it; `Translator` cannot be built while any of
these is missing.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from .. import ctype as T
from ..errors import CxxError
from ..source.decls import ClassInfo, Decl, FuncInfo, Namespace, TParam, VarInfo
from .scope import ClassInst, FuncCtx, Val


class GeneratorBase(ABC):
    """What the code generator's mixins rely on: the shared state and each other's methods."""

    # -- state (set by Translator.__init__) ----------------------------------------------------
    root: Namespace  # the translation unit's global namespace
    overrides: dict  # name -> value replacing a constexpr/#define (the tuner's knobs)
    chunks: list[tuple[str, str]]  # (file path, python source) of everything translated
    chunks_pending: list  # class chunks waiting for their methods (classes.py)
    methods: list[tuple[str, str, str]]  # (class py, attribute, function py)
    funcs: dict[tuple, str]  # (function, template arguments) -> Python name
    classes: dict[tuple, ClassInst]  # (class, template arguments) -> instance
    globals: dict[int, Val]  # id(VarInfo) -> its value
    bound: dict[str, VarInfo]  # overrides that hit a constexpr/const global
    syntax_errors: list  # (PFile, node) of the collector's syntax errors
    structs: list[ClassInst]  # plain structs translated (the host reads their layout)

    # -- Translator (codegen.py) -----------------------------------------------
    @abstractmethod
    def bind_targs(self, f: Decl, tparams, given: list, pf, node, deduced: dict | None = None) -> dict:
        """Template arguments of `f` bound by name: given ones, deduced ones, then defaults."""

    @abstractmethod
    def check(self, pf, node) -> None:
        """Raise the syntax error inside `node`, if any (only what is translated is checked)."""

    @abstractmethod
    def err(self, pf, node, msg: str, cls=CxxError, hint=None) -> CxxError:
        """A CxxError (or `cls`) pointing at `node` in the user's file."""

    @abstractmethod
    def function(self, f: FuncInfo, targs: dict, cls: ClassInst | None = None) -> str:
        """The Python name of `f` (instantiated with `targs`), translating it on first use."""

    @abstractmethod
    def global_value(self, v: VarInfo, cls: ClassInst | None = None) -> Val:
        """A namespace-scope variable or static member (of `cls`): folded if constant."""

    @abstractmethod
    def literal(self, value, t: T.CType) -> Val:
        """The Val of the Python constant `value` as a C++ constant of type `t`."""

    @abstractmethod
    def lookup_ns(self, ns: Namespace | None, name: str, seen=None) -> list[Decl]:
        """Unqualified lookup outward from `ns`, through using-directives."""

    @abstractmethod
    def lookup_qualified(self, ns: Namespace | None, qual: str) -> list[Decl]:
        """Lookup of `a::b::c` from `ns` (`::c` from the global namespace)."""

    @abstractmethod
    def mangle(self, decl: Decl, targs: dict | None) -> str:
        """A unique Python name for `decl` instantiated with `targs`."""

    @abstractmethod
    def member_tmap(self, f: FuncInfo, cls: ClassInst) -> dict:
        """Template arguments a member function sees: its class's, also under its own names."""

    @abstractmethod
    def params(self, f: FuncInfo, ctx: FuncCtx) -> list:
        """The parameters of `f` as the function context sees them."""

    @abstractmethod
    def unsupported(self, pf, node, what: str, hint=None) -> CxxError:
        """An Unsupported error: valid C++ the twin does not translate."""

    # -- CallGen (calls.py) ----------------------------------------------------
    @abstractmethod
    def call_ctor(self, inst, args: list, ctx, node) -> str:
        """The call of the constructor of `inst` that takes `args` (overloads by count)."""

    @abstractmethod
    def paren_type(self, fnode, ctx) -> T.CType | None:
        """The type named by `(T)` when it names one (not a variable), else None."""

    # -- ClassGen (classes.py) -------------------------------------------------
    @abstractmethod
    def class_inst(self, info: ClassInfo, targs: dict, pf=None, node=None) -> ClassInst:
        """The class `info` instantiated with `targs`, translated on first use."""

    @abstractmethod
    def ctor_prologue(self, f: FuncInfo, ctx: FuncCtx, line: int) -> None:
        """The member and base initialisers of the constructor `f`, then defaults."""

    @abstractmethod
    def method(self, inst: ClassInst, name: str, nargs: int, pf, node) -> tuple[str, FuncInfo, ClassInst]:
        """(attribute, FuncInfo, owning instance) of the method `name` taking `nargs` arguments."""

    # -- ExprGen (expr.py) -----------------------------------------------------
    @abstractmethod
    def convert(self, v: Val, to: T.CType, ctx, node) -> str:
        """Python code for `v` converted to `to` as C++ does on assignment/initialisation."""

    @abstractmethod
    def expr(self, node, ctx: FuncCtx) -> Val:
        """The Val of the expression `node` (dispatched on its node type to `x_<type>`)."""

    # -- OperatorGen (ops.py) --------------------------------------------------
    @abstractmethod
    def binop(self, op: str, a: Val, b: Val, ctx, node) -> Val:
        """`a op b` with C++'s usual arithmetic conversions, folded when both are constant."""

    @abstractmethod
    def cast(self, v: Val, t: T.CType, ctx, node) -> Val:
        """The explicit conversion `(t)v`."""

    @abstractmethod
    def deref(self, p: Val, ctx, node) -> Val:
        """`*p` on a scalar pointer: a load, and a `_cx.store` when assigned to (see assign_code)."""

    @abstractmethod
    def maybe_fold(self, code: str, t: T.CType, *vals: Val, width: int | None = None) -> Val:
        """`code` folded to a constant when all of `vals` are, else a Val of type `t`."""

    @abstractmethod
    def ptr_add(self, p: Val, n: Val, op: str, ctx, node) -> Val:
        """`p + n` / `p - n` on a pointer: counts elements of the pointee."""

    # -- NameGen (names.py) ----------------------------------------------------
    @abstractmethod
    def decl_value(self, decls, node, ctx: FuncCtx, name: str, cls=None) -> Val:
        """The Val a name stands for, given the declarations lookup found for it."""

    @abstractmethod
    def trait_type(self, node, ctx) -> T.CType | None:
        """The type a type trait (`std::conditional_t<c, A, B>`...) picks, else None."""

    @abstractmethod
    def type_trait(self, node, ctx) -> Val | None:
        """The constant of a value trait (`std::is_same_v<A, B>`...), else None."""

    # -- StmtGen (stmt.py) -----------------------------------------------------
    @abstractmethod
    def assign_code(self, e, ctx) -> str:
        """Python code for the assignment expression `e` (compound operators included)."""

    @abstractmethod
    def block(self, node, ctx: FuncCtx, ind: int, new_scope: bool = True) -> None:
        """Translate a compound statement (or a single statement) at indent `ind`."""

    @abstractmethod
    def body(self, node, ctx: FuncCtx, ind: int, header_line: int) -> None:
        """Translate a loop or branch body, writing `pass` when it emitted nothing."""

    @abstractmethod
    def cond_node(self, node):
        """The condition expression of an if/while/for, or None when it declares a variable."""

    @abstractmethod
    def local_name(self, name: str, ctx: FuncCtx) -> str:
        """A Python name for the new local `name`, distinct from the ones in scope."""

    @abstractmethod
    def s_declaration(self, node, ctx, ind):
        """Translate a local declaration."""

    @abstractmethod
    def s_expression_statement(self, node, ctx, ind):
        """Translate an expression statement."""

    @abstractmethod
    def stmt(self, node, ctx: FuncCtx, ind: int) -> None:
        """Translate one statement (dispatched on its node type to `s_<type>`)."""

    @abstractmethod
    def update_code(self, e, ctx) -> str:
        """Python code for `++x`, `x--` and the like."""

    # -- TypeResolver (typeres.py) ---------------------------------------------
    @abstractmethod
    def base_type(self, node, ctx: FuncCtx) -> T.CType:
        """The type a type node names, before the declarator's pointers and arrays."""

    @abstractmethod
    def const_value(self, node, ctx: FuncCtx):
        """The compile-time value of `node`; an error when it is not a constant."""

    @abstractmethod
    def construct(self, t: T.CType, vals: list, ctx: FuncCtx, node, brace: bool = False) -> str:
        """`T x(args)`, `T x{args}`, `T x = {args}`: the Python expression building the object."""

    @abstractmethod
    def default_value(self, t: T.CType, ctx: FuncCtx, node) -> str:
        """A default-initialised object of type `t` (scalars start at 0, as the tools expect)."""

    @abstractmethod
    def init_args(self, vals: list, ctx: FuncCtx) -> tuple[list[str], list[str]]:
        """Positional and keyword (designated) arguments of a brace initialiser."""

    @abstractmethod
    def resolve_type(self, node, ctx: FuncCtx, declarator=None) -> T.CType:
        """The CType of a type node, through the declarator's pointers, arrays, references."""

    @abstractmethod
    def template_arg(self, a, ctx: FuncCtx, tp: TParam | None):
        """A CType for a type argument; a compile-time value (or, for the twin, a Val) otherwise."""

    @abstractmethod
    def template_args(self, args_node, ctx: FuncCtx, tparams) -> dict:
        """Template arguments of `args_node` bound to `tparams` by name."""

    @abstractmethod
    def tiling_struct_type(self, ctx: FuncCtx, node) -> T.CType:
        """The tiling struct of the unit (what `GET_TILING_DATA` declares)."""

    @abstractmethod
    def twin_construct(self, t: T.CType, args: list[str], ctx: FuncCtx, node) -> str:
        """The Python expression constructing a kernel API twin object of type `t`."""

    @abstractmethod
    def twin_struct_arg(self, fname: str, index: int) -> str | None:
        """The twin struct type argument `index` of the API call `fname` takes, if any."""

    # -- VecGen (vectorize.py) -------------------------------------------------
    @abstractmethod
    def vector_for(self, var: str, t: T.CType, body, ctx) -> str | None:
        """The `_cx.vfor(...)` arguments after the bounds for a loop over `var`, or None."""
