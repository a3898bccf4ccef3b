"""The SDK stand-in clang checks a unit against, generated from the kernel API twin.

Every header a sample includes that is not one of its own files (`kernel_operator.h`,
`acl/acl.h`, `data_utils.h` when the sample has none, `<iostream>`…) resolves to this one
header. It declares what the twin and the translator know: the twin's enums with their
enumerators, its parameter structs, its classes with their methods, its free functions, the
ACL names the host interpreter implements, and a permissive part of the C and C++ libraries.

Precise where the twin states a C++ signature (the template arguments `api.TARGS_AS_ARGS`
turns into call arguments, the element type of a tensor), permissive everywhere else: a
method or function the twin has but whose C++ signature it cannot state takes anything and
returns `__cx_any`, a value that converts to every type. A diagnostic that a permissive
declaration could cause is never shown (diagnostics.py decides); so the header only has to
make sure that the errors it lets through are the user's.
"""

from __future__ import annotations

import enum
import functools
import inspect
import re
from pathlib import Path

from ... import ascendc as _twin
from .. import api

#: Where the stand-in headers live for clang (never on disk: libclang's unsaved files).
SDK_DIR = "/__asc_tui_sdk__"
SDK_HEADER = f"{SDK_DIR}/__asc_tui_sdk.h"
PRELUDE = f"{SDK_DIR}/__asc_tui_prelude.h"
PRELUDE_PCH = f"{SDK_DIR}/__asc_tui_pch.h"

#: Namespaces of the SDK that samples open or qualify with (declared, so `ns::X` resolves).
NAMESPACES = (
    "AscendC",
    "AscendC::Std",
    "matmul",
    "matmul_tiling",
    "optiling",
    "platform_ascendc",
    "ge",
    "gert",
    "ops",
    "fe",
    "std",
    "std::chrono",
    "std::this_thread",
)

#: Functions whose C++ template arguments are required and not deducible: the twin takes
#: them as leading call arguments (api.TARGS_AS_ARGS). C++ template head, return, params.
PRECISE = {
    "PipeBarrier": ("template <pipe_t P>", "void", ""),
    "SetFlag": ("template <HardEvent E>", "void", "__cx_any id = 0"),
    "WaitFlag": ("template <HardEvent E>", "void", "__cx_any id = 0"),
}

#: ACL runtime calls with their C signatures (ACL is C: the arity is exact). What the host
#: interpreter (hostapi.py) implements; the rest of ACL stays permissive.
ACL_PRECISE = {
    "aclInit": "const char* configPath",
    "aclFinalize": "",
    "aclrtSetDevice": "int32_t deviceId",
    "aclrtResetDevice": "int32_t deviceId",
    "aclrtCreateStream": "aclrtStream* stream",
    "aclrtDestroyStream": "aclrtStream stream",
    "aclrtSynchronizeStream": "aclrtStream stream",
    "aclrtMalloc": "void** devPtr, size_t size, __cx_any policy",
    "aclrtMallocHost": "void** hostPtr, size_t size",
    "aclrtFree": "void* devPtr",
    "aclrtFreeHost": "void* hostPtr",
    "aclrtMemcpy": "void* dst, size_t destMax, const void* src, size_t count, __cx_any kind",
    "aclrtMemset": "void* devPtr, size_t maxCount, int32_t value, size_t count",
}

#: Methods whose C++ shape is known: (class, method) -> declarations in the class.
METHOD_PRECISE = {
    ("TPipe", "InitBuffer"): (
        "  template <class Q_, class = typename __cx_if<__is_class(Q_), int>::type>"
        " void InitBuffer(Q_& que, __cx_any num, __cx_any len);\n"
        "  template <class Q_, class = typename __cx_if<__is_class(Q_), int>::type>"
        " void InitBuffer(Q_& buf, __cx_any len);"
    ),
}

#: Every name whose "no matching function" is the user's (its signature is stated).
PRECISE_NAMES = set(PRECISE) | set(ACL_PRECISE) | {m for _c, m in METHOD_PRECISE}

#: Twin classes that are class templates in C++, with their template heads.
CLASS_TEMPLATES = {
    "LocalTensor": "template <class T = __cx_any>",
    "GlobalTensor": "template <class T = __cx_any>",
    "TQue": "template <auto... V>",
    "TQueBind": "template <auto... V>",
    "TBuf": "template <auto... V>",
    "TBufPool": "template <auto... V>",
    "ExternBufPool": "template <auto... V>",
    "Matmul": "template <class MA_, class MB_, class MC_, class MBias_ = __cx_any, const auto&... MV_>",
    "MatmulType": "template <auto P, auto F, class T, auto... V>",
    "LocalMemAllocator": "template <auto... V>",
    "TensorDesc": "template <class T = __cx_any>",
    "LoadData3DParamsV2": "template <class T = __cx_any>",
    "DataCopyPadExtParams": "template <class T = __cx_any>",
    "MrgSortSrcList": "template <class T = __cx_any>",
}

#: Methods that return a LocalTensor of their (required) template argument.
_TENSOR_OF_TARG = ("AllocTensor", "DeQue", "Get", "GetWithOffset", "ReinterpretCast", "Alloc")

#: C library and C++ standard library names samples use: permissive stand-ins.
STD_TYPES = (
    "string vector array map unordered_map set unordered_set pair tuple unique_ptr shared_ptr "
    "ifstream ofstream fstream stringstream ostringstream istringstream ostream istream "
    "function optional thread mutex lock_guard unique_lock atomic random_device mt19937 "
    "uniform_int_distribution uniform_real_distribution normal_distribution initializer_list "
    "numeric_limits is_same is_same_v conditional enable_if integral_constant true_type false_type "
    "remove_reference decay list deque queue stack bitset complex valarray filebuf ios ios_base"
).split()
#: Standard classes that are not templates.
STD_PLAIN = set(
    "string ifstream ofstream fstream stringstream ostringstream istringstream ostream istream "
    "thread mutex random_device mt19937 filebuf ios ios_base".split()
)
STD_FUNCS = (
    "min max abs fabs sqrt exp log pow ceil floor round fmin fmax swap move forward sort fill copy "
    "memcpy memset memcmp strlen strcmp strcpy strncpy to_string stoi stol stof stod getline "
    "make_unique make_shared make_pair make_tuple accumulate iota transform find count all_of "
    "any_of none_of reverse begin end size distance setw setprecision fixed isnan isinf isfinite "
    "tanh sin cos erf exit abort printf fprintf sprintf snprintf puts fopen fclose fread fwrite "
    "fseek ftell fflush malloc calloc realloc free atoi atof rand srand time clock sleep usleep "
    "getenv system open close read write lseek stat fstat access mkdir remove rename perror "
    "strerror memcpy_s memset_s strcpy_s sprintf_s snprintf_s fabsf sqrtf expf logf powf floorf "
    "ceilf roundf fmaxf fminf sinf cosf tanhf erff log2 log2f log10 exp2 trunc truncf fmod fmodf "
    "llabs labs strtol strtoul strtof strtod memmove strcat strncmp strstr strchr"
).split()
STD_OBJECTS = "cout cerr clog cin endl flush hex dec boolalpha noboolalpha".split()
_KEYWORDS = set(
    "alignas alignof and asm auto bool break case catch char class const constexpr continue "
    "decltype default delete do double else enum explicit export extern false float for friend "
    "goto if inline int long mutable namespace new noexcept not nullptr operator or private "
    "protected public register return short signed sizeof static struct switch template this "
    "throw true try typedef typeid typename union unsigned using virtual void volatile while".split()
)
_BASE_NAMES = {"half", "bfloat16_t", "float16_t", "float32_t", "int4b_t", "GM_ADDR", "block_idx", "block_num"}
STD_MACROS = {
    "NULL": "0",
    "EXIT_SUCCESS": "0",
    "EXIT_FAILURE": "1",
    "SEEK_SET": "0",
    "SEEK_CUR": "1",
    "SEEK_END": "2",
    "O_RDONLY": "0",
    "O_WRONLY": "1",
    "O_RDWR": "2",
    "O_CREAT": "64",
    "O_TRUNC": "512",
    "S_IRUSR": "256",
    "S_IWUSR": "128",
    "S_IRGRP": "32",
    "S_IROTH": "4",
    "EOK": "0",
    "FLT_MAX": "3.402823466e+38F",
    "FLT_MIN": "1.175494351e-38F",
    "FLT_EPSILON": "1.192092896e-07F",
    "DBL_MAX": "1.7976931348623158e+308",
    "INFINITY": "__builtin_inff()",
    "NAN": '__builtin_nanf("")',
    "assert(...)": "((void)(__VA_ARGS__))",
    "likely(x)": "__builtin_expect(!!(x), 1)",
    "unlikely(x)": "__builtin_expect(!!(x), 0)",
}


@functools.cache
def known_names() -> frozenset[str]:
    """Every SDK name the twin or the translator knows (what the stand-in declares)."""
    names = set(_twin.__all__)
    for n in _twin.__all__:
        o = getattr(_twin, n, None)
        if inspect.isclass(o):
            names.update(m for m in dir(o) if not m.startswith("_"))
    names.update(api.TARGS_AS_ARGS, api.NOOPS, api.TYPE_TRAITS, api.ALIASES)
    names.update(_front_end_names())
    names.update(STD_TYPES, STD_FUNCS, STD_OBJECTS)
    return frozenset(names)


def _front_end_names() -> set[str]:
    """Identifiers the C++ front end spells in its tables (host calls, ACL names, kernel API
    spellings without a twin of the same name): quoted identifiers in asc_tui/cxx/*.py."""
    out: set[str] = set()
    for f in Path(__file__).resolve().parents[1].glob("*.py"):
        for m in re.finditer(r"""["']([A-Za-z_][A-Za-z0-9_]{2,})["']""", f.read_text(encoding="utf-8")):
            out.add(m.group(1))
    return out


def _enums() -> tuple[str, set[str]]:
    """The twin's enums: unscoped (so `E::X` and `X` both work) unless an enumerator would clash."""
    lines, seen, emitted = [], set(), {}
    for n in _twin.__all__:
        o = getattr(_twin, n, None)
        if not (inspect.isclass(o) and issubclass(o, enum.Enum)):
            continue
        if id(o) in emitted:
            lines.append(f"using {n} = {emitted[id(o)]};")
            continue
        emitted[id(o)] = n
        members = [m.name for m in o]
        scoped = any(m in seen for m in members)
        seen.update(members)
        body = ", ".join(members)
        lines.append(f"enum {'class ' if scoped else ''}{n} : int {{ {body} }};")
    return "\n".join(lines), seen


def _is_enum(o) -> bool:
    return inspect.isclass(o) and issubclass(o, enum.Enum)


def _permissive_fn(name: str, static: bool = False) -> str:
    """A name that takes any (template) arguments and any call arguments (constexpr, so a
    constant may be initialised from it)."""
    s = "static " if static else ""
    r = f"{s}constexpr __cx_any {name}(A_&&...) {{ return {{}}; }}"
    return (
        f"template <class... T_, class... A_> {r}"
        f" template <auto V_, auto... W_, class... A_> {r}"
        f" template <class T_, auto V_, auto... W_, class... A_> {r}"
        f" template <class T_, class U_, auto V_, auto... W_, class... A_> {r}"
    )


def _methods(cls_name: str, cls) -> list[str]:
    out = []
    for m in sorted(dir(cls)):
        if m.startswith("_") or not callable(getattr(cls, m, None)) or _is_enum(getattr(cls, m, None)):
            continue
        if m in _TENSOR_OF_TARG:
            out.append(f"  template <class U_, class... A_> LocalTensor<U_> {m}(A_&&...);")
            if cls_name in ("LocalTensor",) and m != "ReinterpretCast":
                out.append(f"  template <auto V_, class U_, class... A_> LocalTensor<U_> {m}(A_&&...);")
            continue
        if (cls_name, m) in METHOD_PRECISE:
            out.append(METHOD_PRECISE[cls_name, m])
            continue
        if cls_name == "LocalTensor" and m == "GetValue":
            out.append("  template <class... A_> T GetValue(A_&&...) const;")
            continue
        out.append("  " + _permissive_fn(m))
    return out


def _class(n: str, o) -> str:
    head = re.sub(
        r"\s*=\s*__cx_any", "", CLASS_TEMPLATES.get(n, "")
    )  # the defaults: on the forward declaration
    fields = [
        f
        for f in getattr(o, "__slots__", ())
        if isinstance(f, str) and not f.startswith("_") and f.isidentifier()
    ]
    ann = [f for f in getattr(o, "__annotations__", {}) if not f.startswith("_")]
    data = [f for f in dict.fromkeys(fields + ann) if not callable(getattr(o, f, None))]
    body = [f"struct {n} {{", f"  constexpr {n}() {{}}"]
    if n == "LocalTensor":
        # (pos, addr, len): a tensor at a fixed address; never a conversion from another tensor
        body.append("  explicit LocalTensor(TPosition pos, __cx_any addr, __cx_any len);")
        body.append("  LocalTensor<T> operator[](__cx_any) const;")
        body.append("  __cx_any operator()(__cx_any) const;")
        body.append("  using PrimType = T;")
    elif n == "GlobalTensor":
        body.append("  GlobalTensor<T> operator[](__cx_any) const;")
        body.append("  __cx_any operator()(__cx_any) const;")
        body.append("  using PrimType = T;")
    elif n == "MatmulType":
        body.append("  using T_ = T; using DType = T; using Type = T;")
    else:
        body.append(f"  template <class A0_, class... A_> constexpr {n}(A0_&&, A_&&...) {{}}")
    for f in data:
        body.append(f"  __cx_any {f}{{}};")
    body += _methods(n, o)
    body.append("};")
    return (head + " " if head else "") + "\n".join(body)


@functools.cache
def sdk_header() -> str:
    """The stand-in's text (generated once per process, from the twin)."""
    enums, enumerators = _enums()
    parts = [
        "#pragma once",
        _BASE,
        "namespace AscendC {",
        enums,
    ]
    classes = [
        n
        for n in _twin.__all__
        if inspect.isclass(getattr(_twin, n, None)) and not _is_enum(getattr(_twin, n)) and n != "GM_ADDR"
    ]
    parts += [f"{CLASS_TEMPLATES.get(n, '')} struct {n};".strip() for n in classes]
    parts += [_class(n, getattr(_twin, n)) for n in classes]
    declared = set(classes) | enumerators | {n for n in _twin.__all__ if _is_enum(getattr(_twin, n, None))}
    for n in _twin.__all__:
        o = getattr(_twin, n, None)
        if n in declared or inspect.ismodule(o):
            continue
        if n in PRECISE:
            head, ret, params = PRECISE[n]
            parts.append(f"{head} {ret} {n}({params});")
        elif n in _KEYWORDS or n in _BASE_NAMES or not n.isidentifier():
            continue
        elif inspect.isfunction(o) or inspect.isbuiltin(o):
            parts.append(_permissive_fn(n))
        elif isinstance(o, int) and not isinstance(o, bool):
            parts.append(f"constexpr int64_t {n} = {int(o)};")
        elif type(o).__module__.startswith("numpy") or o is None:
            continue  # a dtype (half, float32...): the C++ types are in the base part
        else:
            parts.append(f"constexpr __cx_any {n}{{}};")
        declared.add(n)
    extra = sorted(
        n for n in set(api.TARGS_AS_ARGS) | set(api.NOOPS) if n not in declared and n not in PRECISE
    )
    parts += [_permissive_fn(n) for n in extra]
    parts += [f"{PRECISE[n][0]} {PRECISE[n][1]} {n}({PRECISE[n][2]});" for n in PRECISE if n not in declared]
    parts.append("}  // namespace AscendC")
    # what the SDK declares outside its namespace: the pipes, the event ids, the cube formats
    glob = [n for n in ("CubeFormat", "pipe_t", "HardEvent", "TPosition", "QuePosition") if n in declared]
    glob += [m.name for m in getattr(_twin, "pipe_t", ())] + [
        n for n in _twin.__all__ if n.startswith("EVENT_ID")
    ]
    parts += [f"using AscendC::{n};" for n in dict.fromkeys(glob)]
    parts.append("using namespace AscendC;  // much of the SDK is visible unqualified")
    parts.append(_host_part())
    return "\n".join(parts) + "\n"


def _host_part() -> str:
    """The host side: ACL, tiling and platform names the host interpreter implements, the C and
    C++ libraries (permissive)."""
    from ..host import acl

    names = _front_end_names()
    typedefs = "aclError aclrtStream aclrtContext aclrtEvent aclDataType aclFormat aclrtRunMode"
    out = ["typedef int aclError; typedef void* aclrtStream; typedef __cx_any aclrtContext;"]
    out.append("typedef __cx_any aclrtEvent; typedef __cx_any aclDataType; typedef __cx_any aclFormat;")
    out.append(
        "typedef __cx_any aclrtRunMode; typedef __cx_any aclrtMemMallocPolicy; "
        "typedef __cx_any aclrtMemcpyKind;"
    )
    for k in sorted(acl.CONSTANTS):
        out.append(f"constexpr int {k} = {acl.CONSTANTS[k]};")
    for n in sorted(names):
        if (
            n.startswith(("acl", "rt"))
            and n not in acl.CONSTANTS
            and n not in typedefs.split()
            and n not in ACL_PRECISE
            and n.isidentifier()
        ):
            out.append(_permissive_fn(n))
    out += [f"aclError {n}({params});" for n, params in ACL_PRECISE.items()]
    out.append(
        "template <class... A_> bool ReadFile(A_&&...); template <class... A_> bool WriteFile(A_&&...);"
    )
    out.append("namespace std {")
    for t in STD_TYPES:
        head = "" if t in STD_PLAIN else "template <class... T_> "
        out.append(
            f"{head}struct {t} {{ {t}(); template <class A0_, class... A_> {t}(A0_&&, A_&&...); "
            f"template <class... A_> __cx_any operator()(A_&&...) const; "
            f"__cx_any operator[](__cx_any) const; "
            f"template <class A_> {t}& operator=(A_&&); }};"
        )
    out += [_permissive_fn(f) for f in STD_FUNCS]
    out += [f"extern __cx_any {o};" for o in STD_OBJECTS]
    out.append("typedef unsigned long size_t; typedef long ptrdiff_t; typedef __cx_any streamsize;")
    out.append("}  // namespace std")
    out += [
        _permissive_fn(f)
        for f in STD_FUNCS
        if f not in ("min", "max", "move", "forward", "swap", "begin", "end", "size")
    ]
    out.append("typedef struct __cx_FILE FILE; extern FILE* stdout; extern FILE* stderr;")
    out.append("struct stat { __cx_any st_size, st_mode; }; struct timeval { __cx_any tv_sec, tv_usec; };")
    out.append("template <class... A_> int stat(A_&&...); template <class... A_> int gettimeofday(A_&&...);")
    for ns in NAMESPACES:
        if ns in ("AscendC", "std"):
            continue
        opens = "".join(f"namespace {p} {{ " for p in ns.split("::"))
        out.append(f"{opens}{'} ' * ns.count('::')}}}")
    # the host tiling API the interpreter implements (hostlib.py): permissive classes
    out.append("namespace matmul_tiling { using namespace AscendC; }")
    out.append("namespace matmul { using namespace AscendC; }")
    out.append(
        "namespace platform_ascendc { using AscendC::PlatformAscendC; "
        "using AscendC::PlatformAscendCManager; }"
    )
    out.append("namespace optiling { using AscendC::TCubeTiling; }")
    return "\n".join(out)


_BASE = r"""
#pragma clang system_header
typedef signed char int8_t; typedef short int16_t; typedef int int32_t; typedef long int64_t;
typedef unsigned char uint8_t; typedef unsigned short uint16_t; typedef unsigned int uint32_t;
typedef unsigned long uint64_t; typedef unsigned long size_t; typedef long ssize_t;
typedef long intptr_t; typedef unsigned long uintptr_t; typedef long ptrdiff_t;
typedef _Float16 half; typedef __bf16 bfloat16_t; typedef _Float16 float16_t; typedef float float32_t;
typedef __builtin_va_list va_list;
template <bool B_, class T_> struct __cx_if {};
template <class T_> struct __cx_if<true, T_> { typedef T_ type; };
/* A value of an SDK type the twin cannot state: converts to and from anything (to the
   arithmetic types through one conversion, so builtin operators stay unambiguous). */
struct __cx_any {
  constexpr __cx_any() {}
  template <class A_> constexpr __cx_any(A_&&) {}
  template <class A0_, class A1_, class... A_> constexpr __cx_any(A0_&&, A1_&&, A_&&...) {}
  template <class T_, class = typename __cx_if<!__is_arithmetic(T_) && !__is_enum(T_), T_>::type>
  operator T_&() const;
  constexpr operator long long() const { return 0; }
  template <class... A_> __cx_any operator()(A_&&...) const;
  template <class A_> __cx_any operator[](A_&&) const;
  template <class A_> constexpr __cx_any& operator=(A_&&) { return *this; }
  __cx_any* operator->() const;
  __cx_any& operator*() const;
  __cx_any operator-() const; __cx_any operator+() const; __cx_any operator~() const; bool operator!() const;
  __cx_any& operator++(); __cx_any operator++(int); __cx_any& operator--(); __cx_any operator--(int);
  template <class A_> __cx_any& operator+=(A_&&); template <class A_> __cx_any& operator-=(A_&&);
  template <class A_> __cx_any& operator*=(A_&&); template <class A_> __cx_any& operator/=(A_&&);
  template <class A_> __cx_any& operator%=(A_&&); template <class A_> __cx_any& operator|=(A_&&);
  template <class A_> __cx_any& operator&=(A_&&); template <class A_> __cx_any& operator^=(A_&&);
  template <class A_> __cx_any& operator<<=(A_&&); template <class A_> __cx_any& operator>>=(A_&&);
};
typedef uint8_t* GM_ADDR;
struct int4b_t { int4b_t(); template <class A_> int4b_t(A_&&); template <class T_> operator T_() const; };
inline bool __cx_is_aic(); inline bool __cx_is_aiv();
typedef __cx_any __cx_tiling_t;
template <class T_ = __cx_any, class... A_> T_ __cx_get_tiling(A_&&...);
extern "C" int __cudaPushCallConfiguration(...);
extern __cx_any block_idx; extern __cx_any block_num;
"""


def header_extra(name: str) -> str:
    """What a generated header declares beyond the SDK: `aclrtlaunch_<k>.h` the launcher of
    kernel k (`ACLRT_LAUNCH_KERNEL(k)(blocks, stream, args...)`)."""
    m = re.fullmatch(r"(?:.*/)?aclrtlaunch_(\w+)\.h", name)
    if m:
        return _permissive_fn(f"aclrtlaunch_{m.group(1)}") + "\n"
    return ""


#: The host side of the tiling-data macros: a class with a setter and a getter per field (what
#: the SDK's BEGIN_TILING_DATA_DEF makes), not the plain struct the kernel side sees.
TILING_MACROS = {
    "BEGIN_TILING_DATA_DEF": (
        ["name"],
        "struct name { template <class... A_> void SaveToBuffer(A_&&...); size_t GetDataSize() const;",
    ),
    "TILING_DATA_FIELD_DEF": (
        ["type", "name"],
        "type name; void set_##name(type v_) { name = v_; } type get_##name() const { return name; }",
    ),
    "TILING_DATA_FIELD_DEF_ARR": (
        ["type", "count", "name"],
        "type name[count]; template <class A_> void set_##name(A_&&); type* get_##name() { return name; }",
    ),
    "TILING_DATA_FIELD_DEF_STRUCT": (
        ["type", "name"],
        "type name; type& get_##name() { return name; }",
    ),
}


def user_prelude(defines: dict[str, str]) -> str:
    """After the precompiled stand-in: the build's `-D`s (replacing a predefined one)."""
    lines = ["#pragma clang force_cuda_host_device begin"]
    for k, v in defines.items():
        lines += [f"#undef {k}", f"#define {k} {v}"]
    return "\n".join(lines) + "\n"


def prelude(defines: dict[str, str]) -> str:
    """Macros every unit sees: the qualifiers defined away, the front end's predefined macros
    (preprocess.py) and the build's `-D`s; then the stand-in itself."""
    from ..source.preprocess import PREDEFINED, PREDEFINED_FN

    lines = ["#pragma clang force_cuda_host_device begin"]
    lines += [
        "#define __global__ __attribute__((global))",
        "#define __host__ __attribute__((host))",
        "#define __device__ __attribute__((device))",
        "#define __mix__(...)",
        "#define __launch_bounds__(...)",
        "#define ACLRT_LAUNCH_KERNEL(k) aclrtlaunch_##k",
    ]
    for q in (
        "__aicore__ __vector__ __cube__ __gm__ __ubuf__ __cbuf__ __simd_vf__ __simt_vf__ __simt__ "
        "__ca__ __cb__ __cc__ __fbuf__ __kfc_workspace__ __workgroup_local__"
    ).split():
        lines.append(f"#define {q}")
    for k, v in PREDEFINED.items():
        if k not in defines:
            lines.append(f"#define {k} {v}")
    for k, (ps, body) in {**PREDEFINED_FN, **TILING_MACROS}.items():
        lines.append(f"#define {k}({', '.join(ps)}) {body}")
    for k, v in STD_MACROS.items():
        lines.append(f"#define {k} {v}")
    for k, v in defines.items():
        lines.append(f"#define {k} {v}")
    lines.append(f'#include "{SDK_HEADER}"')
    return "\n".join(lines) + "\n"
