"""`asc_tui.ascendc`: a Python twin of the Ascend C kernel API (see design/ascendc-api.md).

Use it as `from asc_tui import ascendc as AscendC`; names, argument order and semantics follow
Ascend C, with templates turned into arguments (`que.AllocTensor(half)`).

Template spelling, for people and for the C++ translator: `F<X, Y>(args)` is `F(X, Y, args)`
(template arguments lead). Vector instructions peel leading non-tensor arguments, so type-only
template arguments C++ deduces may be passed or dropped (`Duplicate<half>(d, v, n)` →
`Duplicate(half, d, v, n)` or `Duplicate(d, v, n)`), while semantic ones are passed
(`ReduceRepeat<ReduceType::SUM, T>(…)` → `ReduceRepeat(ReduceType.SUM, T, …)`). Events and
barriers also take the subscript form: `SetFlag[HardEvent.MTE2_V](EVENT_ID0)`,
`PipeBarrier[PIPE_ALL]()`. A brace-initialised params argument (`{1, 1, 8, 8}`) may be passed
as a tuple: the struct's positional constructor. C++ reference out-parameters (GatherMask's
`rsvdCnt`) are returned. Level-0 rules: `level0.py`.
"""

from . import dtypes as _dtypes
from .atomic import DisableDmaAtomic, SetAtomicAdd, SetAtomicMax, SetAtomicMin, SetAtomicNone, SetAtomicType
from .copy.datacopy import (
    DataCopy,
    DataCopyExtParams,
    DataCopyPad,
    DataCopyPadExtParams,
    DataCopyPadParams,
    DataCopyParams,
)
from .copy.gmscalar import ReadGmByPassDCache, WriteGmByPassDCache
from .copy.slicecopy import K_MAX_DIM, SliceInfo
from .cube.fixcopy import DataCopyCO12DstParams, SetFixPipeConfig, SetFixpipeNz2ndFlag, SetFixpipePreQuantFlag
from .cube.fixpipe import (
    CFG_COLUMN_MAJOR,
    CFG_NZ,
    CFG_ROW_MAJOR,
    CO2Layout,
    Fixpipe,
    FixpipeConfig,
    FixpipeParams,
    FixpipeParamsV220,
    QuantMode_t,
)
from .cube.load3d import LoadData3DParamsV2
from .cube.loaddata import LoadData, LoadData2DParams
from .cube.loadtrans import LoadData2dTransposeParams, LoadDataWithTranspose
from .cube.mmad import Mmad, MmadParams, Nd2NzParams  # Tier 2: the cube path (L1/L0A/L0B/L0C)
from .dtypes import (
    as_dtype,
    float,
    float16,
    float32,
    half,
    int8,
    int16,
    int32,
    int64,
    sizeof,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .dump import asc_dump_cbuf, asc_dump_gm, asc_dump_l1buf, asc_dump_ubuf
from .enums import (
    CMPMODE,
    PIPE_ALL,
    PIPE_FIX,
    PIPE_M,
    PIPE_MTE1,
    PIPE_MTE2,
    PIPE_MTE3,
    PIPE_S,
    PIPE_V,
    SELMODE,
    HardEvent,
    Pipe,
    QuePosition,
    RoundMode,
    TPosition,
    pipe_t,
)
from .kernel import (
    PRINTF,
    DumpTensor,
    GetBlockIdx,
    GetBlockNum,
    GetSubBlockIdx,
    GetSubBlockNum,
    KernelFunction,
    Launch,
    ascendc_assert,
    global_aicore,
    kernel,
    printf,
    trap,
)
from .matmul.matmul import (  # Tier 3: the high-level Matmul object and its host tiling
    CFG_IBSHARE_NORM,
    CFG_MDL,
    CFG_NORM,
    REGIST_MATMUL_OBJ,
    CubeFormat,
    GetMDLConfig,
    GetNormalConfig,
    GetSysWorkSpacePtr,
    Matmul,
    MatmulConfig,
    MatmulType,
    MultiCoreMatmulTiling,
    TCubeTiling,
)
from .matmul.tiling import MatmulApiTiling
from .memory.bufpool import TBufPool
from .memory.pipe import TBuf, TPipe
from .memory.queue import TQue, TQueBind
from .memory.tensorlist import ListTensorDesc, TensorDesc
from .memory.tensors import GM_ADDR, GlobalTensor, LocalTensor
from .memory.userpool import ExternBufPool
from .misc import (
    DEFAULT_BLK_NUM,
    DEFAULT_C0_SIZE,
    EVENT_ID0,
    EVENT_ID1,
    EVENT_ID2,
    EVENT_ID3,
    EVENT_ID4,
    EVENT_ID5,
    EVENT_ID6,
    EVENT_ID7,
    MAX_REPEAT_TIMES,
    ONE_BLK_SIZE,
    ONE_REPEAT_BYTE_SIZE,
    CeilDivision,
    Conditional,
    DataSyncBarrier,
    DivCeil,
    GetSystemCycle,
    GetTPipePtr,
    Hardware,
    InitSocState,
    IsSameType,
    LocalMemAllocator,
    MemDsbT,
    SetPadValue,
)
from .platform import CoreMemType, PlatformAscendC, PlatformAscendCManager
from .sync.blocksync import SyncAll
from .sync.crosscore import CrossCoreSetFlag, CrossCoreWaitFlag, GetCoreType
from .sync.hccl import (
    HCCL_DATA_TYPE_FP16,
    HCCL_DATA_TYPE_FP32,
    HCCL_DATA_TYPE_INT32,
    HCCL_REDUCE_MAX,
    HCCL_REDUCE_MIN,
    HCCL_REDUCE_PROD,
    HCCL_REDUCE_SUM,
    GetHcclContext,
    Hccl,
    HcclDataType,
    HcclReduceOp,
)
from .sync.sync import PipeBarrier, SetFlag, WaitFlag
from .vector.basic import (
    Abs,
    Add,
    Adds,
    And,
    Div,
    Exp,
    Ln,
    Max,
    Maxs,
    Min,
    Mins,
    Mul,
    Muls,
    Not,
    Or,
    Reciprocal,
    Relu,
    Rsqrt,
    Sqrt,
    Sub,
)
from .vector.ext import (
    AddRelu,
    Ands,
    Brcb,
    BrcbRepeatParams,
    Copy,
    CopyRepeatParams,
    CreateVecIndex,
    LeakyRelu,
    Ors,
    ShiftLeft,
    ShiftRight,
    SubRelu,
)
from .vector.gather import Gather, Gatherb, GatherMask, GatherMaskParams
from .vector.l0 import Compares, GetCmpMask, SetCmpMask
from .vector.level0 import (  # the level-0 vector API: masks, repeats and repeat strides
    MASK_PLACEHOLDER,
    BinaryRepeatParams,
    GatherRepeatParams,
    GetVecLen,
    MaskMode,
    ResetMask,
    SetMaskCount,
    SetMaskNorm,
    SetVectorMask,
    UnaryRepeatParams,
)
from .vector.reduce import (
    BlockReduceMax,
    BlockReduceMin,
    BlockReduceSum,
    GetReduceRepeatMaxMinSpr,
    GetReduceRepeatSumSpr,
    PairReduceSum,
    ReduceDataBlock,
    ReduceOrder,
    ReducePairElem,
    ReduceRepeat,
    ReduceType,
    WholeReduceMax,
    WholeReduceMin,
    WholeReduceSum,
)
from .vector.sort import (
    GetMrgSortResult,
    MrgSort,
    MrgSort4,
    MrgSort4Info,
    MrgSortSrcList,
    ProposalConcat,
    ProposalExtract,
    RpSort16,
    Sort32,
)
from .vector.transpose import (
    TransDataTo5HD,
    TransDataTo5HDParams,
    Transpose,
    TransposeParamsExt,
    TransposeType,
)
from .vector.typed import (
    Axpy,
    Cast,
    Compare,
    CompareScalar,
    Duplicate,
    ReduceMax,
    ReduceMin,
    ReduceSum,
    Select,
)

__all__ = [name for name in dir() if not name.startswith("_")] + list(_dtypes.LAZY)


def __getattr__(name: str):
    """`AscendC.ASCEND_IS_AIC` / `ASCEND_IS_AIV`: which side of a mixed kernel is running;
    `bfloat16` / `int4b_t`: made on first use (dtypes.py says why)."""
    if name in ("ASCEND_IS_AIC", "ASCEND_IS_AIV"):
        return (GetCoreType() == "aic") == (name == "ASCEND_IS_AIC")
    if name in _dtypes.LAZY:
        return getattr(_dtypes, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
