"""C++ operators: a kernel file `<name>.asc`/`.cpp` plus a spec `<name>.py` beside it.

The spec is an ordinary operator module without a kernel function; optionally `KERNEL =
"<entry>"` and `DEFINES = {"NAME": value}` (the `-D` macros a build would pass). At launch the
kernel gets the spec's `tensors()` as GM addresses, in order, then its other parameters by name
from the Launch's tiling object (scalars converted to the C++ type; a struct parameter or a
`GM_ADDR tiling` read with `GET_TILING_DATA` filled field by field). Template parameters of the
kernel take the tiling field or parameter of the same name. A PARAMS entry named like a
`constexpr`/`const` or object-like `#define` of the kernel file (or its local headers) overrides
that constant at translation; its current choice is the C++ literal, which `--apply` edits.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..ascendc.kernel import KernelFunction, Launch
from ..ascendc.sync.crosscore import GetCoreType
from ..npu.coop import WAITING_CALLS
from ..npu.errors import InternalError, KernelError, is_library_file, is_user_file, report_hint
from . import runtime
from .cache import get_program
from .check import check_beside
from .errors import CxxError, in_cxx_words
from .translate import Bound, Program, constants_of

#: What the compiler defines when it builds the cube or the vector side of a kernel.
SIDE_MACROS = {
    "aic": {"__DAV_C220_CUBE__": "1", "__DAV_CUBE__": "1"},
    "aiv": {"__DAV_C220_VEC__": "1", "__DAV_VEC__": "1"},
}


@dataclass
class CxxLaunch:
    """The tiling object a C++ kernel receives: the spec's tiling plus the parameter values."""

    tiling: Any
    params: dict = field(default_factory=dict)
    overrides: dict = field(default_factory=dict)
    _bound: dict | None = field(default=None, repr=False, compare=False)

    def __getattr__(self, name):  # the spec's tiling fields stay readable (`lnch.tiling.n`)
        if name.startswith("_") or name in ("tiling", "params", "overrides"):
            raise AttributeError(name)
        return getattr(self.tiling, name)


class CxxKernel(KernelFunction):
    """The kernel entry of a C++ operator: translates (cached) and calls the generated Python."""

    def __init__(
        self,
        path: str,
        kernel: str | None,
        core_type: str,
        name: str,
        defines: dict | None = None,
        split=False,
    ):
        super().__init__(self._run, core_type)
        self.path = path
        self.kernel = kernel
        self.defines = dict(defines or {})
        self.split = split  # the source tests the side macros: one translation per side
        self.__name__ = name

    def sides(self) -> tuple[str, ...]:
        return ("aic", "aiv") if self.core_type == "mix" else (self.core_type,)

    def program(self, data: CxxLaunch, side: str | None = None) -> Program:
        tvals = dict(data.params)
        tvals.update(_fields(data.tiling))
        return get_program(self.path, self.kernel, data.overrides, tvals, self.program_defines(side))

    def program_defines(self, side: str | None) -> dict:
        if not self.split:
            return self.defines
        return {**self.defines, **SIDE_MACROS[side or self.sides()[0]]}

    def may_wait(self, tiling) -> bool:
        """Whether the kernel's C++ (with its headers) names a call that waits for other blocks:
        the launcher then runs the blocks as cooperative threads (npu/coop.py)."""
        data = tiling if isinstance(tiling, CxxLaunch) else CxxLaunch(tiling)
        try:
            texts = [t for side in self.sides() for t in self.program(data, side).sources.values()]
        except Exception:  # noqa: BLE001 - the launch reports it from the block, as always
            return True
        return any(name in text for text in texts for name in WAITING_CALLS)

    def explain(self, exc: Exception):
        """An exception the translated code raised itself (`p * 2` of a struct), as a compiler
        would word it at its C++ line; one the translation should never raise is an internal
        error at that line. None when asc-tui's own code raised (the launcher says so)."""
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if not is_library_file(f.filename)]
        if not frames or not is_user_file(frames[-1].filename) or frames[-1].filename.endswith(".py"):
            return None
        file, line = frames[-1].filename, frames[-1].lineno
        words = in_cxx_words(exc)
        if words is not None:
            return KernelError(words, file, line)
        return InternalError(
            "internal error in asc-tui: the translation of this line failed",
            file,
            line,
            hint=report_hint(exc),
        )

    def _run(self, *args):
        *gm, data = args
        if not isinstance(data, CxxLaunch):
            data = CxxLaunch(data)
        side = GetCoreType() if self.split and self.core_type == "mix" else None
        cache = data._bound
        if cache is None:
            cache = data._bound = {}
        bound = cache.get(side)
        if bound is None or bound[0] != tuple(gm):
            prog = self.program(data, side)
            ns = prog.load()
            call = _bind(prog, list(gm), data.tiling, ns)
            bound = cache[side] = (tuple(gm), ns[prog.entry], call)
        return bound[1](*bound[2])


def _fields(tiling) -> dict:
    if tiling is None:
        return {}
    if isinstance(tiling, dict):
        return dict(tiling)
    try:
        return dict(vars(tiling))
    except TypeError:
        slots = getattr(type(tiling), "__slots__", ())
        return {k: getattr(tiling, k) for k in slots if hasattr(tiling, k)}


_CONV = {
    "s8": runtime.s8,
    "s16": runtime.s16,
    "s32": runtime.s32,
    "s64": runtime.s64,
    "u8": lambda v: int(v) & 0xFF,
    "u16": lambda v: int(v) & 0xFFFF,
    "u32": lambda v: int(v) & 0xFFFFFFFF,
    "u64": lambda v: int(v) & 0xFFFFFFFFFFFFFFFF,
    "f32": runtime.f32,
    "f16": runtime.f16,
    "bf16": runtime.bf16,
}


def _bind(prog: Program, gm: list, tiling, ns: dict) -> tuple:
    """The entry's arguments: GM addresses in order, then the rest by name from the tiling."""
    fields = _fields(tiling)
    out = []
    gm_left = list(gm)
    for p in prog.params:
        if p.kind == "gm" and gm_left:
            out.append(gm_left.pop(0))
            continue
        if p.kind == "gm":
            out.append(fields.get(p.name, tiling))  # GM_ADDR tiling (GET_TILING_DATA) or workspace
            continue
        if p.kind == "tiling":
            out.append(fields.get(p.name, tiling))
            continue
        if p.kind == "struct":
            src = fields.get(p.name, tiling)
            out.append(runtime.fill_struct(ns[p.conv], src))
            continue
        if p.name not in fields:
            raise CxxError(
                f"kernel parameter {p.name!r} has no field of that name in the tiling object "
                f"({type(tiling).__name__}: {', '.join(fields) or 'no fields'})",
                prog.path,
                1,
                1,
                hint="name the tiling dataclass fields like the kernel's parameters",
            )
        v = fields[p.name]
        if p.kind == "int":
            v = _CONV[p.conv](int(v))
        elif p.kind == "float":
            v = _CONV.get(p.conv, float)(float(v))
        elif p.kind == "bool":
            v = bool(v)
        out.append(v)
    if gm_left:
        raise CxxError(
            f"the spec declares {len(gm)} tensors but kernel {prog.kernel} takes "
            f"{len(gm) - len(gm_left)} GM pointers",
            prog.path,
            1,
            1,
        )
    return tuple(out)


def literal_value(b: Bound):
    text = b.text.strip().strip("()").rstrip("uUlL")
    try:
        return int(text, 0)
    except ValueError:
        return float(text.rstrip("fF"))


@dataclass(frozen=True)
class CxxBinding:
    """What the loader needs about a C++ kernel file."""

    path: str
    kernel: CxxKernel
    bound: dict[str, Bound]  # PARAMS entries bound to C++ constants
    sources: tuple[str, ...]  # kernel file and the local headers it includes


def bind_operator(kernel_path: Path, module, params: dict) -> CxxBinding:
    """Check the kernel translates (with the current parameter values) and wrap the spec's
    tiling so each launch carries the parameter values the translation depends on."""
    path = str(kernel_path)
    entry = getattr(module, "KERNEL", None)
    if entry is not None and not isinstance(entry, str):
        raise CxxError(
            "KERNEL in a C++ operator's spec is the entry function's name (a string)",
            str(kernel_path.with_suffix(".py")),
            1,
            1,
        )
    defines = {k: str(v) for k, v in dict(getattr(module, "DEFINES", {}) or {}).items()}
    pending = check_beside(path, defines)  # the whole file, with its headers, beside the translation
    try:
        return _bind_operator(kernel_path, module, params, path, entry, defines, pending)
    except CxxError:
        pending.result()  # clang's error (at the user's line) first, if it has one
        raise


def _bind_operator(kernel_path, module, params, path, entry, defines, pending) -> CxxBinding:
    consts = constants_of(path, defines)
    bound = {k: consts[k] for k in params if k in consts}
    from ..operator import Param

    for k, b in bound.items():
        p = params[k]
        params[k] = Param(literal_value(b), p.values, p.doc) if isinstance(p, Param) else literal_value(b)
    overrides = {k: (params[k].default if isinstance(params[k], Param) else params[k]) for k in bound}
    from .translate import analyse, core_type_of, kernels

    files, _t, col, _pp = analyse(path, overrides, defines=defines)
    found = [f for f in kernels(col.root) if entry is None or f.name == entry]
    core = core_type_of(found[0]) if found else "aiv"
    split = any(m in pf.original for pf in files for side in SIDE_MACROS.values() for m in side)
    kern = CxxKernel(path, entry, core, Path(path).stem, defines, split)
    if not (found and found[0].tparams):  # a template kernel needs the launch's values first
        for side in kern.sides():
            kern.core_type = get_program(path, entry, overrides, {}, kern.program_defines(side)).core_type
    user_tiling = module.tiling
    names = set(params)

    def tiling(case, p):
        r = user_tiling(case, p)
        if isinstance(r, tuple) and len(r) == 2 and not isinstance(r, Launch):
            r = Launch(*r)
        if not isinstance(r, Launch):
            return r
        values = {k: p[k] for k in names if k in p}
        data = CxxLaunch(r.tiling, values, {k: values[k] for k in bound if k in values})
        for side in kern.sides():  # translate now (cached): C++ errors are build errors
            kern.program(data, side)
        return Launch(r.block_dim, data, where=r.where)

    tiling.__wrapped__ = user_tiling
    module.tiling = tiling
    pending.result()
    return CxxBinding(path, kern, bound, tuple(pf.path for pf in files))
