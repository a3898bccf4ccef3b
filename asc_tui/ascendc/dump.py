"""`asc_dump_gm<T>(addr, id, n)`, `asc_dump_ubuf`, `asc_dump_l1buf`, `asc_dump_cbuf` (L0C): the
first n elements of type T at a raw address, printed to the run log like DumpTensor (tagged with
block, time and the C++ line). `addr` is a GM address (`(__gm__ T*)g.GetPhyAddr()`) or, for the
on-chip memories, a byte address of the memory (`(__ubuf__ T*)t.GetPhyAddr()`). Each costs a
scalar print (as printf); an address range outside the memory is an error at the call.
"""

from __future__ import annotations

import sys

import numpy as np

from ..npu import state
from ..npu.errors import KernelError
from ..npu.memory.gm import GM_ADDR
from ..npu.numbers.offload import gm_ready
from .dtypes import as_dtype
from .kernel import dump_text, log
from .mmad_numbers import flush_cube


def _split(name: str, args: tuple, fr):
    if len(args) != 4:
        raise KernelError(f"{name}<T>(addr, id, dumpSize) takes a type and three arguments", *_at(fr))
    dtype, addr, desc, size = args
    return as_dtype(dtype), addr, int(desc), int(size)


def _at(fr):
    return fr.f_code.co_filename, fr.f_lineno


def _outside(name: str, what: str, lo: int, nbytes: int, cap: int, fr) -> KernelError:
    return KernelError(f"{name} reads bytes [{lo}, {lo + nbytes}) of {what}, which holds {cap} B", *_at(fr))


def asc_dump_gm(*args) -> None:
    fr = sys._getframe(1)
    dtype, addr, desc, size = _split("asc_dump_gm", args, fr)
    if not isinstance(addr, GM_ADDR):
        raise KernelError(f"asc_dump_gm expects a GM address, got {type(addr).__name__}", *_at(fr))
    buf = addr.buffer
    lo, nbytes = addr.offset * buf.dtype.itemsize, size * dtype.itemsize
    cap = buf.count * buf.dtype.itemsize
    if lo < 0 or size < 0 or lo + nbytes > cap:
        raise _outside("asc_dump_gm", f"GM buffer '{buf.name}'", lo, nbytes, cap, fr)
    data = None
    if buf.data is not None:
        gm_ready(buf)
        data = buf.data.view(np.uint8)[lo : lo + nbytes].view(dtype)
    log(f"asc_dump_gm id={desc} size={size}: {dump_text(data)}", fr)


def _local(name: str, mem: str, args: tuple, fr) -> None:
    dtype, addr, desc, size = _split(name, args, fr)
    core = state.core
    lo, nbytes = int(addr), size * dtype.itemsize
    cap = core.chip.memory.get(mem, 0)
    if lo < 0 or size < 0 or lo + nbytes > cap:
        raise _outside(name, mem.upper(), lo, nbytes, cap, fr)
    data = None
    if core.numeric:
        if mem == "l0c":  # Mmads into L0C are computed when read (mmad_numbers.py)
            flush_cube(core)
        if core.lazy is not None:  # L1/L0 regions kept as lineage (lineage.py)
            core.lazy.settle()
        data = core.memory(mem)[lo : lo + nbytes].view(dtype)
    log(f"{name} id={desc} size={size}: {dump_text(data)}", fr)


def asc_dump_ubuf(*args) -> None:
    _local("asc_dump_ubuf", "ub", args, sys._getframe(1))


def asc_dump_l1buf(*args) -> None:
    _local("asc_dump_l1buf", "l1", args, sys._getframe(1))


def asc_dump_cbuf(*args) -> None:
    _local("asc_dump_cbuf", "l0c", args, sys._getframe(1))


__all__ = ["asc_dump_gm", "asc_dump_ubuf", "asc_dump_l1buf", "asc_dump_cbuf"]
