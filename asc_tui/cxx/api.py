"""What the translator knows about the kernel API twin (`asc_tui.ascendc`).

Ascend C templates become arguments in the twin (`que.AllocTensor<half>()` →
`que.AllocTensor(half)`); this table says which template arguments turn into leading call
arguments, how twin classes are constructed from their template arguments, and the static
result types the arithmetic needs (`GetBlockIdx()` is int64_t, `GetValue` is the element type).
"""

from __future__ import annotations

from .. import ascendc as _twin
from . import ctype as T

#: Methods and functions whose template arguments become leading call arguments.
TARGS_AS_ARGS = {"AllocTensor", "DeQue", "Get", "ReinterpretCast", "PipeBarrier", "SetFlag", "WaitFlag"}

#: Twin classes constructed from their template arguments (`TQue<pos, depth>` → `TQue(pos, depth)`).
TEMPLATE_CTORS = {"TQue", "TQueBind", "TBuf", "GlobalTensor"}

#: Twin classes whose default construction is an empty handle assigned later.
HANDLE_CLASSES = {"LocalTensor"}

#: Ascend C spellings the twin lacks but that need no emulation (hardware state setup).
NOOPS = {"InitSocState", "SetAtomicNone", "SetSysWorkspace", "SetMaskNorm", "ResetMask", "DataSyncBarrier"}

_INT = {
    "GetBlockIdx": T.INT64,
    "GetBlockNum": T.INT64,
    "GetSubBlockIdx": T.INT64,
    "GetSubBlockNum": T.INT64,
    "GetTaskRation": T.INT64,
    "GetSize": T.UINT32,
    "GetLength": T.UINT32,
    "GetPhyAddr": T.UINT64,
    "GetTensorCountInQue": T.INT32,
    "VacantInQue": T.BOOL,
    "HasTensorInQue": T.BOOL,
    "EnQue": T.BOOL,
    "GetRankId": T.UINT32,
    "GetRankDim": T.UINT32,
}

ALIASES = {"block_idx": ("_AC.GetBlockIdx()", T.INT64), "block_num": ("_AC.GetBlockNum()", T.INT64)}


def twin_has(name: str) -> bool:
    return name in _twin.__all__ or hasattr(_twin, name)


def twin_type(name: str) -> bool:
    """A twin name that is a type (class or enum), not a value such as PIPE_ALL."""
    return isinstance(getattr(_twin, name, None), type)


def result_type(name: str, recv: T.CType | None, targs: list) -> T.CType:
    """The static type of a twin call `recv.name<targs>(...)` (or a free function)."""
    if name in _INT:
        return _INT[name]
    if name in ("AllocTensor", "DeQue", "Get", "ReinterpretCast", "GetWithOffset"):
        elem = targs[0] if targs and isinstance(targs[0], T.CType) else _elem(recv)
        return T.CType("twin", "LocalTensor", args=(elem,) if elem else ())
    if name == "GetValue":
        e = _elem(recv)
        return e if e is not None else T.OPAQUE
    if name in ("sizeof",):
        return T.UINT64
    return T.OPAQUE


def _elem(recv: T.CType | None):
    if recv is not None and recv.kind == "twin" and recv.args and isinstance(recv.args[0], T.CType):
        return recv.args[0]
    return None


def dtype_expr(t: T.CType) -> str | None:
    """The twin's dtype object for a scalar type (`half` → `_AC.half`)."""
    name = T.DTYPE_NAMES.get(t.name)
    if name is None:
        return None
    return f"_AC.{name}"
