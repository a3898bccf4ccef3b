"""Run a host program (a sample's `main()`) with its kernels on the emulated NPU.

`run_host(kernel_file, main_file=None, …)` interprets `main()` (host.py) against the ACL twin
(acl.py); each launch translates its kernel (cached, with the template arguments of the launch
and the parameter overrides) and runs it through `npu.launch`, as the loader's C++ operators do.
Returns the `AclRuntime`: its launches (EmulationResults, in order) and the program's stdout.
"""

from __future__ import annotations

from pathlib import Path

from ...ascendc.memory.tensors import value_words
from ...npu.launch import launch as npu_launch
from ...npu.memory.gm import GM_ADDR
from ..cache import get_program
from ..errors import CxxError
from ..operator import SIDE_MACROS, CxxKernel, CxxLaunch
from ..source.decls import AliasInfo, ClassInfo, FuncInfo, VarInfo, all_decls
from ..translate import analyse, core_type_of, kernels
from . import lib as hostlib
from . import values as hostvalues
from .acl import AclRuntime
from .interp import Host

HOST_EXCLUDE = ("__global__", "__aicore__", "__vector__", "__cube__")


def _units(kernel_file: str, main_file: str | None, overrides, defines):
    kfiles, _t, kcol, _pp = analyse(kernel_file, overrides, defines=defines)
    if main_file is None:
        return kfiles, kcol, kfiles, kcol
    mfiles, _t, mcol, _pp = analyse(main_file, overrides, defines=defines)
    return kfiles, kcol, mfiles, mcol


def find_main(col) -> FuncInfo | None:
    for d in all_decls(col.root):
        if isinstance(d, FuncInfo) and d.name == "main" and d.owner is None:
            return d
    return None


def run_host(
    kernel_file: str,
    main_file: str | None = None,
    chip=None,
    numeric: bool = True,
    timeout_s: float | None = None,
    overrides: dict | None = None,
    defines: dict | None = None,
    sanitizer=None,
    configure=None,
    before_write=None,
) -> AclRuntime:
    """Interpret the sample's main() on the ACL twin; `before_write(path, where)` is called
    before each WriteFile."""
    overrides = dict(overrides or {})
    defines = dict(defines or {})
    kfiles, kcol, mfiles, mcol = _units(kernel_file, main_file, overrides, defines)
    main = find_main(mcol)
    if main is None:
        raise CxxError(
            "no host main() in " + Path(main_file or kernel_file).name, main_file or kernel_file, 1, 1
        )
    kinfo = {f.name: f for f in kernels(kcol.root)}
    split = any(m in pf.original for pf in kfiles for side in SIDE_MACROS.values() for m in side)
    funcs, consts, structs, kconsts, struct_nodes = _host_decls(kcol, mcol)
    acl = AclRuntime(chip, numeric, timeout_s)
    acl.before_write = before_write
    launch = _launcher(
        acl, kinfo, kernel_file, defines, split, overrides, chip, numeric, sanitizer, timeout_s, configure
    )

    host = Host(None, funcs, consts, acl, launch, set(kinfo))
    host.const_eval = _const_evaluator(kconsts, overrides)
    host.structs.update(structs)
    host.overrides.update(overrides)
    for d in struct_nodes:
        host.define_struct(d)
    try:
        code = host.call_function(main, [1, ["./demo"]])
    finally:
        acl.release_addresses()
    acl.exit_code = int(code) if isinstance(code, int) else 0
    return acl


def _host_decls(kcol, mcol):
    """What host code sees of both units: its functions, constants (and the kernel's, for
    constant evaluation), structs with their fields and nodes; type aliases go to `ALIASES`."""
    funcs, consts, structs, kconsts, struct_nodes = {}, {}, {}, {}, []
    hostvalues.ALIASES.clear()
    for col in {id(kcol): kcol, id(mcol): mcol}.values():
        for d in all_decls(col.root):
            if isinstance(d, FuncInfo) and d.owner is None and not set(d.quals) & set(HOST_EXCLUDE):
                if d.node.child_by_field_name("body") is not None:
                    funcs.setdefault(d.name, d)
            elif isinstance(d, VarInfo) and d.value is not None:
                consts.setdefault(d.name, (d.value, d.pf))
                kconsts.setdefault(d.name, (d, col))
            elif isinstance(d, ClassInfo) and not d.tparams:
                structs[d.name] = [f.name for f in d.fields if not f.static]
                if d.node is not None and d.node.type in ("struct_specifier", "class_specifier"):
                    struct_nodes.append(d.node)
            elif isinstance(d, AliasInfo) and d.type_node is not None and not d.tparams:
                hostvalues.ALIASES[d.name] = d.type_node.text.decode()
    return funcs, consts, structs, kconsts, struct_nodes


def _launcher(
    acl, kinfo, kernel_file, defines, split, overrides, chip, numeric, sanitizer, timeout_s, configure
):
    """The `<<<...>>>` launch the host interpreter calls: the kernel translated for these
    template arguments, its arguments checked against its parameters, run on the emulator."""

    def launch(where, name, targs, blocks, args):
        f = kinfo.get(name)
        if f is None:
            acl.fail(where, f"no __global__ kernel {name!r}; kernels: {', '.join(kinfo) or 'none'}")
        tvals = {}
        for tp, v in zip(f.tparams or [], targs):
            tvals[tp.name] = v
        if len(targs) > len(f.tparams or []):
            acl.fail(
                where,
                f"{name} takes {len(f.tparams or [])} template arguments, the launch gives {len(targs)}",
            )
        kern = CxxKernel(kernel_file, name, core_type_of(f), name, defines, split)
        args = [hostlib.launch_value(a) for a in args]  # structs go by value

        def run(gm_args, n):
            side_defs = kern.program_defines(kern.sides()[0])
            prog = get_program(kernel_file, name, overrides, tvals, side_defs)
            if len(args) != len(prog.params):
                acl.fail(where, f"{name} takes {len(prog.params)} arguments, the launch passes {len(args)}")
            gms, fields = [], {}
            for i, (p, v) in enumerate(zip(prog.params, gm_args)):
                if p.kind == "gm" and not (v is None or isinstance(v, GM_ADDR)):
                    acl.fail(
                        where,
                        f"{name}'s parameter {i + 1} ({p.name}) is a GM pointer (GM_ADDR); the launch "
                        f"passes {value_words(v)}",
                        hint="pass device memory from aclrtMalloc, in the kernel's parameter order",
                    )
                if p.kind == "gm":
                    gms.append(v)
                else:
                    fields[p.name] = v
            kern.core_type = prog.core_type if not split else kern.core_type
            data = CxxLaunch(fields, tvals, {k: v for k, v in overrides.items()})
            return npu_launch(
                kern,
                gms,
                data,
                n,
                chip,
                numeric,
                sanitizer=sanitizer,
                timeout_s=timeout_s,
                configure=configure,
            )

        return acl.launch(where, name, blocks, args, run)

    return launch


def _const_evaluator(kconsts: dict, overrides: dict):
    """A namespace-scope constant's value as the kernel translator computes it (class templates,
    specialisations, static constexpr members: `constexpr uint32_t M = Scenario<2>::M;`)."""
    from ..kernel.codegen import Translator
    from ..kernel.scope import FuncCtx

    translators: dict = {}

    def value(name: str):
        d, col = kconsts[name]
        tr = translators.get(id(col))
        if tr is None:
            tr = translators[id(col)] = Translator(col.root, overrides)
        return tr.const_value(d.value, FuncCtx(d.pf, None, {}, None, d.ns, None))

    return value


def sample_constants(kernel_file: str, main_file: str | None = None, defines=None) -> dict:
    """The integer constants a sample's parameters may name: namespace-scope `constexpr`/`const`
    and object-like `#define`s of its files, and the `constexpr` locals of `main()`; name -> the
    `Bound` literal (where `--apply` edits it)."""
    import re

    from ..translate import Bound, constants_of

    out = {}
    for f in filter(None, (kernel_file, main_file)):
        for k, b in constants_of(f, defines).items():
            out.setdefault(k, b)
        text = Path(f).read_text(encoding="utf-8", errors="replace")
        for i, line in enumerate(text.splitlines(), 1):
            for m in re.finditer(r"\bconstexpr\s+[\w:]+\s+(\w+)\s*=\s*([0-9][\w.]*)\s*;", line):
                out.setdefault(m.group(1), Bound(m.group(1), f, i, m.start(2), m.group(2)))
    return out
