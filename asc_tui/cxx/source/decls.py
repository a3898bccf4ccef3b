"""The declaration records of a translation unit: namespaces, classes, functions, globals, enums,
aliases, as the Collector (`symbols.py`) fills them and code generation looks them up.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .preprocess import PFile


@dataclass
class Decl:
    name: str
    node: object
    pf: PFile
    ns: Namespace | None = None

    def where(self, node=None):
        n = node or self.node
        row, col = n.start_point
        return self.pf.path, row + 1, self.pf.orig_col(row, col) + 1


@dataclass
class TParam:
    name: str
    is_type: bool
    type_node: object = None  # the value parameter's type
    default: object = None
    variadic: bool = False


@dataclass
class FuncInfo(Decl):
    tparams: list[TParam] | None = None
    owner: ClassInfo | None = None
    quals: tuple[str, ...] = ()
    static: bool = False
    is_ctor: bool = False
    outer_tparams: list | None = None  # a class template's parameters, as an outside definition names them

    @property
    def params_node(self):
        return declarator_of(self.node).child_by_field_name("parameters")

    def arity(self) -> int:
        return sum(1 for c in self.params_node.named_children if c.type.endswith("parameter_declaration"))


@dataclass
class FieldInfo:
    name: str
    decl: object  # field_declaration node
    declarator: object
    static: bool = False

    @property
    def default(self):
        """This declarator's default member initialiser (`int a = 1, b, c = 3;` has one per
        declarator, each after its own), or None."""
        return field_default(self.decl, self.declarator)


def field_default(decl, declarator):
    """The `default_value` that follows `declarator` in the field declaration `decl`."""
    mine = False
    for i, c in enumerate(decl.children):
        name = decl.field_name_for_child(i)
        if name == "declarator":
            mine = c == declarator
        elif name == "default_value" and mine:
            return c
    return None


@dataclass
class ClassInfo(Decl):
    tparams: list[TParam] | None = None
    kind: str = "class"
    fields: list[FieldInfo] = field(default_factory=list)
    methods: dict[str, list[FuncInfo]] = field(default_factory=dict)
    ctors: list[FuncInfo] = field(default_factory=list)
    base: object = None  # base class type node
    bases: tuple = ()  # every base (more than one is refused when the class is used)
    inner: Namespace | None = None  # nested enums, aliases, constants
    spec_args: object = None  # a specialisation's template_argument_list (`class K<half, 0>`)


@dataclass
class VarInfo(Decl):
    type_node: object = None
    declarator: object = None
    value: object = None
    const: bool = False


@dataclass
class EnumInfo(Decl):
    members: list[tuple[str, object]] = field(default_factory=list)  # (name, value node or None)
    scoped: bool = False


@dataclass
class AliasInfo(Decl):
    type_node: object = None
    tparams: list[TParam] | None = None


@dataclass
class NsAlias(Decl):
    target: object = None


class Namespace:
    def __init__(self, name: str = "", parent: Namespace | None = None):
        self.name = name
        self.parent = parent
        self.names: dict[str, list[Decl]] = {}
        self.children: dict[str, Namespace] = {}
        self.usings: list[object] = []  # (qualified name node, pf) of using-directives
        self.specs: dict[str, list] = {}  # class template specialisations by primary name
        self.owner = None  # the ClassInfo whose members this namespace holds
        self.using_decls: dict[str, tuple[object, PFile]] = {}

    def add(self, d: Decl) -> None:
        d.ns = self if d.ns is None else d.ns
        self.names.setdefault(d.name, []).append(d)

    def child(self, name: str) -> Namespace:
        if name not in self.children:
            self.children[name] = Namespace(name, self)
        return self.children[name]

    @property
    def path(self) -> list[str]:
        out, ns = [], self
        while ns is not None and ns.name:
            out.append(ns.name)
            ns = ns.parent
        return out[::-1]


def declarator_of(fn_node):
    """The function_declarator inside a function definition (below pointers and references)."""
    d = fn_node.child_by_field_name("declarator")
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_name("declarator")
    return d


def all_decls(root: Namespace):
    """Every declaration in `root` and the namespaces below it."""
    stack = [root]
    while stack:
        ns = stack.pop()
        stack.extend(ns.children.values())
        for ds in ns.names.values():
            yield from ds
