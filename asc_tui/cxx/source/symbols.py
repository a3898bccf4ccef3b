"""Declarations of a translation unit: namespaces, classes, functions, globals, enums, aliases.

Collected once from every file's tree without translating any body; code generation then
translates on demand, starting from the kernel entry, so host code (`main()`, ACL calls,
`data_utils.h`) is never looked at. The records it fills live in `decls.py`.
"""

from __future__ import annotations

from .decls import (
    AliasInfo,
    ClassInfo,
    EnumInfo,
    FieldInfo,
    FuncInfo,
    Namespace,
    NsAlias,
    TParam,
    VarInfo,
    declarator_of,
    field_default,
)
from .parse import first_error, syntax_error
from .preprocess import PFile


def decl_name(declarator) -> tuple[str, object]:
    """The declared name of a (possibly pointer/reference/array/init) declarator."""
    d = declarator
    while d is not None and d.type not in (
        "identifier",
        "field_identifier",
        "qualified_identifier",
        "destructor_name",
        "operator_name",
        "type_identifier",
    ):
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            nxt = next((c for c in d.named_children if c.type != "attribute_declaration"), None)
        d = nxt
    if d is None:
        return "", declarator
    return d.text.decode(), d


class Collector:
    def __init__(self):
        self.root = Namespace()
        self.errors: list[tuple[PFile, object]] = []

    def collect(self, pf: PFile, tree) -> None:
        self._body(pf, tree.root_node, self.root, None)

    def _body(self, pf: PFile, node, ns: Namespace, tparams) -> None:
        for c in node.named_children:
            self._item(pf, c, ns, tparams)

    def _item(self, pf: PFile, c, ns: Namespace, tparams=None) -> None:
        t = c.type
        if c.has_error and t not in ("namespace_definition", "linkage_specification", "template_declaration"):
            self.errors.append((pf, c))  # reported if a name the kernel needs is missing
        if t == "namespace_definition":
            name_node = c.child_by_field_name("name")
            body = c.child_by_field_name("body")
            target = ns
            if name_node is not None:
                for part in name_node.text.decode().split("::"):
                    target = target.child(part.strip())
            if body is not None:
                self._body(pf, body, target, None)
        elif t == "linkage_specification":
            body = c.child_by_field_name("body")
            if body is not None:
                if body.type == "declaration_list":
                    self._body(pf, body, ns, None)
                else:
                    self._item(pf, body, ns, None)
        elif t == "template_declaration":
            tps, items = self._template(c)
            for inner in items:
                self._item(pf, inner, ns, tps)
        elif t == "function_definition":
            self._function(pf, c, ns, tparams, None)
        elif t in ("class_specifier", "struct_specifier", "union_specifier"):
            self._class(pf, c, ns, tparams)
        elif t in ("declaration", "type_definition", "alias_declaration", "enum_specifier"):
            self._declaration(pf, c, ns, tparams)
        elif t == "using_declaration":
            self._using(pf, c, ns)
        elif t == "namespace_alias_definition":
            name = c.child_by_field_name("name") or c.named_children[0]
            ns.add(NsAlias(name.text.decode(), c, pf, ns, target=c.named_children[-1]))
        # ERROR nodes, preproc leftovers, comments, empty declarations, static_assert: nothing to collect

    def _template(self, node) -> tuple[list[TParam], list]:
        """A template_declaration's parameters and the declarations they apply to."""
        items = [x for x in node.named_children if x.type != "template_parameter_list"]
        return self._tparams(node.child_by_field_name("parameters")), items

    def _tparams(self, plist) -> list[TParam]:
        out = []
        for p in plist.named_children:
            if p.type in ("type_parameter_declaration", "optional_type_parameter_declaration"):
                name = p.child_by_field_name("name") or next(
                    (x for x in p.named_children if x.type == "type_identifier"), None
                )
                out.append(
                    TParam(
                        name.text.decode() if name else "", True, None, p.child_by_field_name("default_type")
                    )
                )
            elif p.type in ("parameter_declaration", "optional_parameter_declaration"):
                n, _ = decl_name(p.child_by_field_name("declarator"))
                out.append(
                    TParam(n, False, p.child_by_field_name("type"), p.child_by_field_name("default_value"))
                )
            elif p.type.startswith("variadic_"):
                out.append(TParam(p.text.decode(), True, variadic=True, default=p))
            else:
                out.append(TParam(p.text.decode(), True))
        return out

    def _function(self, pf, c, ns, tparams, owner) -> FuncInfo | None:
        decl = declarator_of(c)
        if decl is None:
            return None
        name_node = decl.child_by_field_name("declarator")
        name = name_node.text.decode()
        prev = c.prev_sibling
        start = prev.end_point if prev is not None else (0, 0)
        quals = tuple(q for q in pf.quals_between(start, decl.start_point))
        static = any(s.text == b"static" for s in c.children if s.type == "storage_class_specifier")
        target_ns = ns
        if "::" in name and owner is None:
            # an out-of-class method definition `Cls::f`: attach to the class
            cls_name, _, meth = name.rpartition("::")
            info = self._lookup_class(ns, cls_name)
            if info is not None:
                outer = tparams if info.tparams else None
                f = FuncInfo(
                    meth,
                    c,
                    pf,
                    info.inner,
                    None if outer else tparams,
                    info,
                    quals,
                    static,
                    meth == info.name,
                )
                f.outer_tparams = outer
                self._add_method(info, f)
                return f
        f = FuncInfo(
            name, c, pf, target_ns, tparams, owner, quals, static, owner is not None and name == owner.name
        )
        if owner is not None:
            self._add_method(owner, f)
        else:
            ns.add(f)
        return f

    def _add_method(self, owner: ClassInfo, f: FuncInfo) -> None:
        if f.is_ctor:
            owner.ctors = [g for g in owner.ctors if g.node.child_by_field_name("body") is not None or True]
            owner.ctors.append(f)
        else:
            lst = owner.methods.setdefault(f.name, [])
            lst[:] = [g for g in lst if g.arity() != f.arity()]  # a definition replaces its declaration
            lst.append(f)

    def _lookup_class(self, ns: Namespace, qual: str) -> ClassInfo | None:
        parts = qual.split("::")
        parts[-1] = parts[-1].split("<")[0]
        scope: Namespace | None = ns
        while scope is not None:
            target = scope
            for p in parts[:-1]:
                target = target.children.get(p)
                if target is None:
                    break
            if target is not None:
                for d in target.names.get(parts[-1], ()):
                    if isinstance(d, ClassInfo):
                        return d
            scope = scope.parent
        return None

    def _class(self, pf, c, ns, tparams) -> ClassInfo | None:
        name_node = c.child_by_field_name("name")
        body = c.child_by_field_name("body")
        if name_node is None:
            return None
        name = name_node.text.decode()
        if name_node.type == "template_type":  # a (partial) specialisation
            if body is None:
                return None
            info = ClassInfo(name_node.child_by_field_name("name").text.decode(), c, pf, ns, tparams or [])
            info.kind = c.type.split("_")[0]
            info.spec_args = name_node.child_by_field_name("arguments")
            info.inner = Namespace(info.name, ns)
            self._bases(pf, c, info)
            ns.specs.setdefault(info.name, []).append(info)
            for m in body.named_children:
                self._member(pf, m, info, None)
            return info
        existing = next((d for d in ns.names.get(name, ()) if isinstance(d, ClassInfo)), None)
        if body is None:
            if existing is None:
                ns.add(ClassInfo(name, c, pf, ns, tparams, c.type.split("_")[0]))
            return existing
        if existing is not None and existing.node.child_by_field_name("body") is None:
            ns.names[name].remove(existing)
        info = ClassInfo(name, c, pf, ns, tparams, c.type.split("_")[0])
        info.inner = Namespace(name, ns)
        info.inner.owner = info
        self._bases(pf, c, info)
        ns.add(info)
        for m in body.named_children:
            self._member(pf, m, info, None)
        return info

    def _bases(self, pf, c, info: ClassInfo) -> None:
        for b in c.named_children:
            if b.type == "base_class_clause":
                types = [x for x in b.named_children if x.type not in ("access_specifier", "virtual")]
                info.bases = tuple(types)
                info.base = types[0] if len(types) == 1 else None

    def _member(self, pf, m, info: ClassInfo, tparams) -> None:
        t = m.type
        if t == "function_definition":
            self._function(pf, m, info.inner, tparams, info)
        elif t == "template_declaration":
            tps, items = self._template(m)
            for inner in items:
                self._member(pf, inner, info, tps)
        elif t == "field_declaration":
            static = any(s.text == b"static" for s in m.children if s.type == "storage_class_specifier")
            tnode = m.child_by_field_name("type")
            if tnode is not None and tnode.type == "enum_specifier":
                self._enum(pf, tnode, info.inner)
            elif tnode is not None and tnode.type in ("class_specifier", "struct_specifier"):
                self._class(pf, tnode, info.inner, None)
            decls = [x for x in m.children_by_field_name("declarator")]
            for d in decls:
                if d.type == "function_declarator":
                    continue  # a declaration; the definition comes elsewhere
                name, _ = decl_name(d)
                info.fields.append(FieldInfo(name, m, d, static))
                if static:
                    const = any(
                        q.text in (b"const", b"constexpr")
                        for q in m.children
                        if q.type in ("type_qualifier", "storage_class_specifier")
                    )
                    default = field_default(m, d)
                    info.inner.add(VarInfo(name, m, pf, info.inner, tnode, d, default, const))
        elif t in ("declaration",):
            self._function_decl_or_var(pf, m, info)
        elif t in ("type_definition", "alias_declaration", "enum_specifier"):
            self._declaration(pf, m, info.inner, tparams)
        elif t in ("class_specifier", "struct_specifier"):
            self._class(pf, m, info.inner, tparams)
        elif t == "ERROR":
            self.errors.append((pf, m))

    def _function_decl_or_var(self, pf, m, info):
        pass  # constructor/method declarations without a body: the definition is collected

    def _enum(self, pf, e, ns: Namespace) -> EnumInfo:
        name_node = e.child_by_field_name("name")
        body = e.child_by_field_name("body")
        scoped = any(ch.type in ("class", "struct") for ch in e.children)
        info = EnumInfo(name_node.text.decode() if name_node else "", e, pf, ns, scoped=scoped)
        if body is not None:
            for en in body.named_children:
                if en.type == "enumerator":
                    info.members.append(
                        (en.child_by_field_name("name").text.decode(), en.child_by_field_name("value"))
                    )
        if info.name:
            ns.add(info)
        if not scoped:
            for mname, _ in info.members:
                ns.add(EnumInfo(mname, e, pf, ns, members=[("__member__", info)]))
        return info

    def _declaration(self, pf, c, ns: Namespace, tparams) -> None:
        t = c.type
        if t == "enum_specifier":
            self._enum(pf, c, ns)
            return
        if t == "alias_declaration":
            name = c.child_by_field_name("name").text.decode()
            ns.add(AliasInfo(name, c, pf, ns, c.child_by_field_name("type"), tparams))
            return
        if t == "type_definition":
            tnode = self._inner_type(pf, c, ns, None)
            for d in c.children_by_field_name("declarator"):
                name, _ = decl_name(d)
                ns.add(AliasInfo(name, c, pf, ns, tnode))
            return
        tnode = self._inner_type(pf, c, ns, tparams)
        const = any(
            q.text in (b"const", b"constexpr") for q in c.children if q.type == "type_qualifier"
        ) or any(q.type == "storage_class_specifier" and q.text == b"constexpr" for q in c.children)
        for d in c.children_by_field_name("declarator"):
            if d.type == "function_declarator":
                continue  # a prototype
            value = d.child_by_field_name("value") if d.type == "init_declarator" else None
            name, _ = decl_name(d)
            if "::" in name:  # `int32_t S::n = 1;` defines a static member
                cls_name, _, member = name.rpartition("::")
                info = self._lookup_class(ns, cls_name)
                target = [
                    v
                    for v in (info.inner.names.get(member, ()) if info and info.inner else ())
                    if isinstance(v, VarInfo)
                ]
                if target and value is not None:
                    target[0].value = value
                continue
            if name:
                ns.add(VarInfo(name, c, pf, ns, tnode, d, value, const))

    def _inner_type(self, pf, c, ns: Namespace, tparams):
        """The type of a declaration, collecting a struct/enum defined in it (`typedef struct {...}`)."""
        tnode = c.child_by_field_name("type")
        if tnode is not None and tnode.type in ("struct_specifier", "class_specifier"):
            if tnode.child_by_field_name("body"):
                self._class(pf, tnode, ns, tparams)
        elif tnode is not None and tnode.type == "enum_specifier":
            self._enum(pf, tnode, ns)
        return tnode

    def _using(self, pf, c, ns: Namespace) -> None:
        target = c.named_children[-1] if c.named_children else None
        if target is None:
            return
        if any(ch.type == "namespace" for ch in c.children):
            ns.usings.append((target, pf))
        else:
            last = target.text.decode().split("::")[-1]
            ns.using_decls[last] = (target, pf)


def collect(files: list[tuple[PFile, object]]) -> Collector:
    col = Collector()
    for pf, tree in files:
        col.collect(pf, tree)
    return col


def check_syntax(pf: PFile, node) -> None:
    if first_error(node) is not None:
        raise syntax_error(pf, node)
