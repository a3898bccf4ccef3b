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
TARGS_AS_ARGS = {
    "AllocTensor",
    "DeQue",
    "GetDataPtr",
    "Get",
    "ReinterpretCast",
    "PipeBarrier",
    "SetFlag",
    "WaitFlag",
    "Alloc",
    "Fixpipe",
    "ReduceRepeat",
    "ReduceDataBlock",
    "ReducePairElem",
    "SetVectorMask",
    "ReadGmByPassDCache",
    "WriteGmByPassDCache",
    "CrossCoreSetFlag",
    "CrossCoreWaitFlag",
    "SetAtomicAdd",
    "SetAtomicMax",
    "SetAtomicMin",
    "SetAtomicType",
    "asc_dump_gm",
    "asc_dump_ubuf",
    "asc_dump_l1buf",
    "asc_dump_cbuf",
}

#: Twin classes constructed from their template arguments (`TQue<pos, depth>` → `TQue(pos, depth)`).
TEMPLATE_CTORS = {
    "TQue",
    "TQueBind",
    "TBuf",
    "GlobalTensor",
    "LocalMemAllocator",
    "Matmul",
    "MatmulType",
    "TensorDesc",
}

#: Twin classes whose 3-argument constructor takes the element type too (`LocalTensor<T>(pos,
#: addr, len)` → `LocalTensor(T, pos, addr, len)`, a tensor at a fixed address).
ADDRESS_CTORS = {"LocalTensor"}

#: Twin classes whose default construction is an empty handle assigned later.
HANDLE_CLASSES = {"LocalTensor"}

#: Type traits whose result is a type, evaluated at translation by the twin's function of the
#: same meaning: C++ name → (twin function, the member that names the result or "" for `_t`).
TYPE_TRAITS = {
    "Conditional": ("Conditional", "type"),
    "conditional": ("Conditional", "type"),
    "conditional_t": ("Conditional", ""),
}

#: Ascend C spellings the twin lacks but that need no emulation (hardware state setup).
NOOPS = {"SetAtomicNone", "SetSysWorkspace", "SetMaskNorm", "ResetMask", "DataSyncBarrier"}

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

#: Kernel API structs whose fields all have one C type (`tiling.N * 4` is int arithmetic).
STRUCT_FIELD_TYPES = {"TCubeTiling": T.INT32}

#: Ascend C constructors whose argument order differs from the twin's field order, by arity.
_FIX_11 = ("nSize", "mSize", "srcStride", "dstStride", "reluEn", "quantPre", "deqScalar", "ndNum")
CXX_ORDERS = {
    ("FixpipeParamsV220", 5): ("nSize", "mSize", "srcStride", "dstStride", "reluEn"),
    ("FixpipeParamsV220", 11): _FIX_11 + ("srcNdStride", "dstNdStride", "unitFlag"),
    ("FixpipeParams", 11): _FIX_11 + ("srcNdStride", "dstNdStride", "unitFlag"),
    ("MmadParams", 6): ("m", "n", "k", "unitFlag", "cmatrixSource", "cmatrixInitVal"),
}


def struct_args(name: str, args: list[str]) -> list[str]:
    """Positional constructor arguments as the twin needs them (keywords where orders differ)."""
    order = CXX_ORDERS.get((name, sum(1 for a in args if "=" not in a.split("(")[0])))
    if order is None:
        return args
    pos = [a for a in args if "=" not in a.split("(")[0]]
    return [f"{k}={v}" for k, v in zip(order, pos)] + [a for a in args if a not in pos]


ALIASES = {"block_idx": ("_AC.GetBlockIdx()", T.INT64), "block_num": ("_AC.GetBlockNum()", T.INT64)}


def twin_has(name: str) -> bool:
    return name in _twin.__all__ or hasattr(_twin, name)


def twin_ref(name: str) -> str:
    """The generated code's spelling of a kernel API name."""
    return f"_AC.{name}"


def twin_type(name: str) -> bool:
    """A twin name that is a type (class or enum), not a value such as PIPE_ALL."""
    return isinstance(getattr(_twin, name, None), type)


def twin_method(cls: str, method: str) -> bool:
    """False only when the twin class is known and lacks the method."""
    obj = getattr(_twin, cls, None)
    return not isinstance(obj, type) or hasattr(obj, method) or method in getattr(obj, "__slots__", ())


def result_type(name: str, recv: T.CType | None, targs: list) -> T.CType:
    """The static type of a twin call `recv.name<targs>(...)` (or a free function)."""
    if name == "GetPhyAddr" and recv is not None and recv.kind == "twin" and recv.name == "GlobalTensor":
        e = _elem(recv)  # `__gm__ T*`
        return T.CType("ptr", f"{e}*", elem=e) if e is not None else T.GM_ADDR
    if name in _INT:
        return _INT[name]
    if name in ("AllocTensor", "DeQue", "Get", "ReinterpretCast", "GetWithOffset", "Alloc"):
        types = [a for a in targs if isinstance(a, T.CType)]
        elem = types[0] if types else _elem(recv)
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
