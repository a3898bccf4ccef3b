"""C++ kernel file → runnable Python kernel: preprocess, parse, translate from the entry, load.

`translate()` returns a `Program`: the generated chunks compiled under the C++ file names (so
records, hot lines and tracebacks name the `.asc` and its headers), the entry function and how
its parameters are filled at launch. Results are cached by content (see cache.py).
"""

from __future__ import annotations

import hashlib
import linecache
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from .. import ascendc
from . import ctype as T
from . import runtime
from .errors import CxxError
from .kernel.codegen import Translator
from .source.decls import FuncInfo, Namespace, VarInfo, all_decls
from .source.parse import parse, syntax_error
from .source.preprocess import preprocess
from .source.symbols import collect


def _version() -> str:
    """The translator's own source: any change to it invalidates cached translations."""
    h = hashlib.sha256()
    for f in sorted(Path(__file__).parent.rglob("*.py")):
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


VERSION = _version()


@dataclass(frozen=True)
class ParamSpec:
    """How one kernel parameter is filled at launch: kind in gm|int|float|bool|struct|tiling|raw."""

    name: str
    kind: str
    conv: str | None = None  # int: "s32"/"u32"...; float: "f32"...; struct: class name


@dataclass(frozen=True)
class Bound:
    """A C++ constant a PARAMS entry overrides: where its literal is (for --apply)."""

    name: str
    file: str
    line: int  # 1-based
    col: int  # 0-based char column of the literal
    text: str


@dataclass
class Program:
    path: str
    entry: str
    kernel: str
    params: tuple[ParamSpec, ...]
    core_type: str
    chunks: tuple[tuple[str, object], ...]  # (file, code object)
    methods: tuple[tuple[str, str, str], ...]
    sources: dict[str, str]  # file -> original text (the ones translated from)
    bound: dict[str, Bound] = field(default_factory=dict)
    constants: dict[str, object] = field(default_factory=dict)
    cube_only: bool = False  # ASCENDC_CUBE_ONLY: the Matmul runs on the AIC itself, no server
    _ns: dict | None = None

    def load(self) -> dict:
        """Execute the chunks into a fresh namespace (once); return it."""
        if self._ns is None:
            ns = {
                "_AC": ascendc,
                "_cx": runtime,
                "_G": SimpleNamespace(),  # the kernel's mutable globals and static members
                "_CUBE_ONLY": self.cube_only,
                "__name__": f"asc_tui_cxx_{Path(self.path).stem}",
            }
            for _file, code in self.chunks:
                exec(code, ns)  # noqa: S102 - generated from the user's kernel
            for cls, attr, fn in self.methods:
                setattr(ns[cls], attr, ns[fn])
            self._ns = ns
        for f, text in self.sources.items():
            remember(f, text)
        return self._ns

    def entry_function(self):
        return self.load()[self.entry]


def remember(path: str, text: str) -> None:
    linecache.cache[path] = (len(text), None, text.splitlines(True), path)


def kernels(root: Namespace) -> list[FuncInfo]:
    out = [d for d in all_decls(root) if isinstance(d, FuncInfo) and "__global__" in d.quals]
    return sorted(out, key=lambda f: (f.pf.path, f.node.start_point))


_CUBE_ONLY = re.compile(r"^[ \t]*#[ \t]*define[ \t]+ASCENDC_CUBE_ONLY\b", re.M)


def core_type_of(f: FuncInfo) -> str:
    q = " ".join(f.quals)
    if "__mix__" in q:
        return "mix"
    if "__cube__" in q:
        return "aic"
    if "__vector__" not in q and "REGIST_MATMUL_OBJ" in f.pf.original:
        # a plain `__aicore__` kernel with a high-level Matmul: the compiler makes it mixed
        # (1 AIC : 2 AIV, the AIVs calling the Matmul), or cube only under ASCENDC_CUBE_ONLY
        return "aic" if _CUBE_ONLY.search(f.pf.original) else "mix"
    return "aiv"


def analyse(path: str | Path, overrides: dict | None = None, text: str | None = None, defines=None):
    """Preprocess, parse and collect: (files, trees, collector, preprocessor)."""
    files, pp = preprocess(path, text, overrides=overrides, defines=defines)
    trees = [(pf, parse(pf)) for pf in files]
    col = collect(trees)
    return files, trees, col, pp


def translate(
    path: str | Path,
    kernel: str | None = None,
    overrides: dict | None = None,
    template_values=None,
    text: str | None = None,
    defines: dict | None = None,
) -> Program:
    """Translate the kernel `kernel` (or the file's only `__global__` function)."""
    path = str(Path(path))
    overrides = dict(overrides or {})
    files, trees, col, pp = analyse(path, overrides, text, defines)
    found = kernels(col.root)
    if kernel:
        cands = [f for f in found if f.name == kernel] or [
            f for ds in col.root.names.get(kernel, ()) for f in [ds] if isinstance(f, FuncInfo)
        ]
        if not cands:
            raise CxxError(
                f"no kernel function {kernel!r} in {Path(path).name}; kernels: "
                f"{', '.join(f.name for f in found) or 'none'}",
                path,
                1,
                1,
            )
        f = cands[0]
    else:
        if not found:
            for pf, node in col.errors:
                raise syntax_error(pf, node)
            raise CxxError(
                "no __global__ kernel function found",
                path,
                1,
                1,
                hint="mark the entry `__global__ __aicore__`",
            )
        if len(found) > 1:
            raise CxxError(
                f"{Path(path).name} has several kernels ({', '.join(f.name for f in found)}); "
                "set KERNEL = '<name>' in the spec",
                path,
                1,
                1,
            )
        f = found[0]
    tr = Translator(col.root, overrides)
    targs = {}
    if f.tparams:
        given = template_values or {}
        for tp in f.tparams:
            if tp.name in given and given[tp.name] is not None:
                v = given[tp.name]
                if tp.is_type:
                    t = v if isinstance(v, T.CType) else T.from_dtype_name(_dtype_name(v))
                    if t is None:
                        raise CxxError(f"template parameter {tp.name}: {v!r} is not a type", *_where(f))
                    targs[tp.name] = t
                else:
                    targs[tp.name] = v
        targs = tr.bind_targs(f, f.tparams, [], f.pf, f.node, targs)
    try:
        entry = tr.function(f, targs)
    except CxxError as exc:
        # an unknown name may be a declaration a syntax error swallowed: report that instead
        if exc.bare_message.startswith(("unknown ", "no ")):
            for pf, node in col.errors:
                if pf.path != exc.file or node.start_point[0] + 1 <= (exc.line or 0):
                    raise syntax_error(pf, node) from None
        raise
    from .kernel.scope import FuncCtx

    fctx = FuncCtx(f.pf, None, dict(targs), None, f.ns, None)
    params = []
    for p in tr.params(f, fctx):
        params.append(_param_spec(p.c_name, p.type))
    chunks = tuple((file, _compile(src, file)) for file, src in tr.chunks)
    bound = {}
    for name, m in pp.bound.items():
        bound[name] = Bound(name, m.file, m.line, m.body_col, m.body)
    for name, v in tr.bound.items():
        bound[name] = _var_literal(v)
    constants = {}
    for name in overrides:
        if name in bound:
            constants[name] = overrides[name]
    return Program(
        path=path,
        entry=entry,
        kernel=f.name,
        params=tuple(params),
        core_type=core_type_of(f),
        chunks=chunks,
        methods=tuple(tr.methods),
        sources={pf.path: pf.original for pf in files},
        bound=bound,
        constants=constants,
        cube_only="ASCENDC_CUBE_ONLY" in pp.macros,
    )


def _compile(src: str, file: str):
    try:
        return compile(src, file, "exec")
    except SyntaxError as exc:  # a translator bug: still an error that names the user's line
        raise CxxError(
            "internal error in asc-tui: the translation of this line failed",
            file,
            exc.lineno,
            1,
            hint=f"please report it: the translation is not valid Python ({exc.msg})",
        ) from None


def _where(f: FuncInfo):
    return f.where()


def _dtype_name(v) -> str:
    if isinstance(v, str):
        return v
    try:
        from ..ascendc.dtypes import dtype_name

        return dtype_name(v)
    except Exception:
        return str(v)


def _param_spec(name: str, t: T.CType) -> ParamSpec:
    if t.kind == "ptr":
        return ParamSpec(name, "gm")
    if t.kind == "int":
        return ParamSpec(name, "int", f"{'s' if t.signed else 'u'}{t.bits}")
    if t.kind == "bool":
        return ParamSpec(name, "bool")
    if t.kind == "float":
        return ParamSpec(name, "float", {"float": "f32", "half": "f16", "bfloat16_t": "bf16"}.get(t.name))
    if t.kind == "class":
        return ParamSpec(name, "struct", t.decl.py)
    if t.kind == "twin":
        return ParamSpec(name, "tiling")  # a kernel API struct (TCubeTiling...): the tiling object
    return ParamSpec(name, "raw")


def _var_literal(v) -> Bound:
    node = v.value
    row, col = node.start_point
    return Bound(v.name, v.pf.path, row + 1, v.pf.orig_col(row, col), node.text.decode())


def constants_of(path: str | Path, defines: dict | None = None) -> dict[str, Bound]:
    """Every object-like `#define` and namespace-scope const/constexpr with a literal value,
    in the kernel file and its local headers (what a PARAMS entry may bind to)."""
    files, _trees, col, pp = analyse(path, defines=defines)
    out: dict[str, Bound] = {}
    for name, m in pp.macros.items():
        if m.params is None and m.file is not None and _is_number(m.body):
            out[name] = Bound(name, m.file, m.line, m.body_col, m.body)
    for d in all_decls(col.root):
        if isinstance(d, VarInfo) and d.const and d.value is not None and d.value.type == "number_literal":
            out.setdefault(d.name, _var_literal(d))
    return out


def _is_number(text: str) -> bool:
    t = text.strip().strip("()").rstrip("uUlLfF")
    try:
        float(int(t, 0)) if not any(c in t for c in ".eE") or t.lower().startswith("0x") else float(t)
        return True
    except ValueError:
        return False


def content_hash(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()
