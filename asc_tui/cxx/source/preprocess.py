"""The C preprocessor subset, line- and column-preserving.

Every output file has exactly the lines of its input: directives, comments and inactive `#if`
regions become blank (comments turn into spaces), macros expand in place, and Ascend C's
qualifiers (`__global__`, `__aicore__`, `__gm__`, `__mix__(1, 2)`...) are blanked with spaces of
the same length (tree-sitter's grammars do not know them) and remembered with their position.
A macro expansion that changes a line's length keeps a column map, so an error inside it still
points at the macro's use in the user's line.

`#include "local.h"` is followed (relative to the including file, then the include dirs) with
guards and `#pragma once`; system and SDK headers (`<cstdint>`, `kernel_operator.h`,
`acl/acl.h`...) stand for the kernel API twin and are never read. Macro expansion itself is
`macros.py`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ... import ASCENDC_ARCH
from ...ascendc.memory.queue import EXTERN_FIELD
from ..errors import CxxError, Unsupported
from .macros import TOKEN_RE, Macro, MacroExpander

#: Qualifiers blanked before parsing (the function's kind is read back from `PFile.quals`).
QUALIFIERS = ("__global__", "__aicore__", "__vector__", "__cube__", "__gm__", "__ubuf__", "__cbuf__")
QUALIFIERS += (
    "__inline__",
    "__simd_vf__",
    "__simt_vf__",
    "__simt__",
    "__host__",
    "__device__",
    "__restrict__",
)
QUALIFIERS += ("__ca__", "__cb__", "__cc__", "__fbuf__", "__kfc_workspace__", "__workgroup_local__")
_QUAL_RE = re.compile(
    r"\b(?:__mix__\s*\([^()]*\)|__launch_bounds__\s*\([^()]*\)|__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)|"
    + "|".join(QUALIFIERS)
    + r")"
)
#: Header names that stand for the SDK (the kernel API twin): never read, never an error.
SDK_PREFIXES = (
    "kernel_",
    "acl/",
    "aclrtlaunch_",
    "lib/",
    "tiling/",
    "register/",
    "graph/",
    "tikicpulib",
    "cpu_debug_launch",
    "securec",
    "utils/",
    "c_api/",
    "basic_api/",
    "adv_api/",
    "simt_api/",
    "tensor_api/",
    "data_utils.h",  # the samples' file helpers: the ACL twin has ReadFile/WriteFile (cxx/host/acl.py)
)

#: Macros every kernel sees (dav-2201, the 910B family); ASCENDC_CPU_DEBUG stays undefined.
PREDEFINED = {
    "__NPU_ARCH__": ASCENDC_ARCH.removeprefix("dav-"),
    "__CCE_AICORE__": "220",
    "__DAV_C220__": "1",
    "ASCEND_IS_AIC": "(__cx_is_aic())",
    "ASCEND_IS_AIV": "(__cx_is_aiv())",
    "END_TILING_DATA_DEF": "};",
    "INT8_MAX": "127",
    "INT16_MAX": "32767",
    "INT32_MAX": "2147483647",
    "INT64_MAX": "9223372036854775807LL",
    "UINT8_MAX": "255",
    "UINT16_MAX": "65535",
    "UINT32_MAX": "4294967295U",
    "UINT64_MAX": "18446744073709551615ULL",
}
_EXT_POOL = f"public: AscendC::ExternBufPool<POSITION, BUFID_SIZE> {EXTERN_FIELD}; " + " ".join(
    f"{ret} {name}({params}) {{ {'return ' if ret != 'void' else ''}{EXTERN_FIELD}.{name}({args}); }}"
    for ret, name, params, args in (
        ("void", "Reset", "", ""),
        ("void", "Init", "", ""),
        ("uint64_t", "GetBufHandle", "uint32_t i", "i"),
        ("uint64_t", "GetCurAddr", "", ""),
        ("void", "SetCurAddr", "uint64_t a", "a"),
        ("uint32_t", "GetCurBufSize", "", ""),
        ("void", "SetCurBufSize", "uint32_t n", "n"),
    )
)
PREDEFINED_FN = {
    "BEGIN_TILING_DATA_DEF": (["name"], "struct name {"),
    "TILING_DATA_FIELD_DEF": (["type", "name"], "type name"),
    "TILING_DATA_FIELD_DEF_ARR": (["type", "count", "name"], "type name[count]"),
    "TILING_DATA_FIELD_DEF_STRUCT": (["type", "name"], "type name"),
    "REGISTER_TILING_DATA_CLASS": (["a", "b"], ""),
    "GET_TILING_DATA": (["var", "tiling"], "__cx_tiling_t var = __cx_get_tiling(tiling)"),
    "GET_TILING_DATA_WITH_STRUCT": (["type", "var", "tiling"], "type var = __cx_get_tiling<type>(tiling)"),
    "KERNEL_TASK_TYPE_DEFAULT": (["t"], ""),
    # a user's TBufPool: the macro's members forward to the twin's ExternBufPool (bufpool.py)
    "EXTERN_IMPL_BUFPOOL": (["EXT_BUFPOOL", "POSITION", "BUFID_SIZE"], _EXT_POOL),
    "REGISTER_TILING_DEFAULT": (["t"], ""),
}

_DOT_TEMPLATE_RE = re.compile(r"(\.|->)(?:template)(?=\s+[A-Za-z_]\w*\s*\()")
_COMMENT_RE = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/', re.S)


@dataclass
class PFile:
    """One source file after preprocessing: same lines, qualifiers blanked, macros expanded."""

    path: str
    original: str
    text: str
    colmaps: dict[int, list[tuple[int, int, bool]]] = field(default_factory=dict)
    quals: list[tuple[int, int, str]] = field(default_factory=list)  # (row, col, qualifier)
    _lines: list | None = field(default=None, repr=False)

    def orig_col(self, row: int, col: int) -> int:
        """The 0-based column in the user's line of tree-sitter's (byte) column `col` on 0-based
        `row`: bytes to characters, then back through any macro expansion on that line."""
        if self._lines is None:
            self._lines = self.text.split("\n")
        if row < len(self._lines):
            line = self._lines[row]
            if not line.isascii():
                col = len(line.encode("utf-8")[:col].decode("utf-8", "ignore"))
        pieces = self.colmaps.get(row)
        if not pieces:
            return col
        best = (0, 0, True)
        for p in pieces:
            if p[0] <= col:
                best = p
            else:
                break
        out0, orig0, literal = best
        return orig0 + (col - out0) if literal else orig0

    def quals_between(self, start: tuple[int, int], end: tuple[int, int]) -> list[str]:
        return [q for r, c, q in self.quals if start <= (r, c) < end]


def strip_comments(text: str) -> str:
    def blank(m: re.Match) -> str:
        s = m.group(0)
        if s[0] in "\"'":
            return s
        return re.sub(r"[^\n]", " ", s)

    return _COMMENT_RE.sub(blank, text)


class Preprocessor(MacroExpander):
    """Preprocess a main file and the local headers it includes, in include order."""

    def __init__(
        self,
        defines: dict[str, str] | None = None,
        include_dirs: list[str] | None = None,
        overrides: dict[str, object] | None = None,
    ):
        self.macros: dict[str, Macro] = {k: Macro(k, v) for k, v in PREDEFINED.items()}
        for k, (ps, body) in PREDEFINED_FN.items():
            self.macros[k] = Macro(k, body, ps)
        for k, v in (defines or {}).items():
            self.macros[k] = Macro(k, str(v))
        self.include_dirs = [Path(d) for d in include_dirs or ()]
        self.overrides = dict(overrides or {})
        self.bound: dict[str, Macro] = {}  # overrides that hit an object-like #define
        self.files: list[PFile] = []
        self._once: set[str] = set()
        self._active: list[str] = []

    # -- files ------------------------------------------------------------------------------
    def run(self, path: str | Path, text: str | None = None) -> list[PFile]:
        self._file(Path(path), text)
        return self.files

    def _file(self, path: Path, text: str | None = None) -> None:
        key = str(path.resolve())
        if key in self._once:
            return
        if key in self._active:
            return  # a cycle without guards: the second visit adds nothing
        original = path.read_text(encoding="utf-8", errors="replace") if text is None else text
        original = original.replace("\r\n", "\n")
        self._active.append(key)
        pf = PFile(str(path), original, "")
        lines = strip_comments(original).split("\n")
        out: list[str] = []
        stack: list[list[bool]] = []  # [parent active, taken, now active]
        active = True
        i = 0
        while i < len(lines):
            row = i
            line = lines[i]
            extra = 0
            while line.endswith("\\") and i + 1 < len(lines):
                i += 1
                extra += 1
                line = line[:-1] + " " + lines[i]
            i += 1
            stripped = line.lstrip()
            if stripped.startswith("#"):
                col = len(line) - len(stripped)
                active = self._directive(pf, path, row, col, stripped[1:].strip(), stack, active)
                out.append("")
            elif active:
                out.append(self._expand_line(pf, row, line))
            else:
                out.append("")
            out.extend([""] * extra)
        if stack:
            raise CxxError("#if without #endif", str(path), len(lines), 1)
        pf.text = "\n".join(out)
        self._active.pop()
        self.files.append(pf)

    def _directive(self, pf: PFile, path: Path, row: int, col: int, d: str, stack, active: bool) -> bool:
        m = re.match(r"(\w+)\s*(.*)$", d)
        if not m:
            return active
        name, rest = m.group(1), m.group(2).strip()

        def err(msg: str) -> CxxError:
            return CxxError(msg, str(path), row + 1, col + 1)

        if name in ("if", "ifdef", "ifndef"):
            if not active:
                stack.append([False, True, False])
                return False
            if name == "if":
                cond = self._eval_if(rest, err)
            else:
                cond = (rest.split()[0] if rest else "") in self.macros
                cond = cond if name == "ifdef" else not cond
            stack.append([True, cond, cond])
            return cond
        if name in ("elif", "else", "endif"):
            if not stack:
                raise err(f"#{name} without #if")
            top = stack[-1]
            if name == "endif":
                stack.pop()
                return top[0]
            if not top[0] or top[1]:
                top[2] = False
                return False
            cond = True if name == "else" else self._eval_if(rest, err)
            top[1] = top[2] = cond
            return cond
        if not active:
            return active
        if name == "define":
            dm = re.match(r"([A-Za-z_]\w*)(\(([^)]*)\))?\s*(.*)$", rest)
            if not dm:
                raise err("malformed #define")
            mname = dm.group(1)
            params = [p.strip() for p in dm.group(3).split(",") if p.strip()] if dm.group(2) else None
            body = dm.group(4).strip()
            line = pf.original.split("\n")[row] if row < pf.original.count("\n") + 1 else ""
            body_col = line.find(body, line.find(mname) + len(mname)) if body else -1
            macro = Macro(mname, body, params, str(path), row + 1, max(body_col, 0))
            if params is None and mname in self.overrides:
                self.bound[mname] = Macro(mname, body, None, str(path), row + 1, max(body_col, 0))
                macro.body = _c_literal(self.overrides[mname])
            self.macros[mname] = macro
        elif name == "undef":
            self.macros.pop(rest.split()[0] if rest else "", None)
        elif name == "include":
            self._include(pf, path, rest, err)
        elif name == "pragma":
            if rest.split()[:1] == ["once"]:
                self._once.add(str(path.resolve()))
        elif name == "error":
            raise err(f"#error {rest}")
        # #line, #warning and unknown directives are ignored
        return active

    def _include(self, pf: PFile, path: Path, rest: str, err) -> None:
        m = re.match(r'"([^"]+)"|<([^>]+)>', rest)
        if not m:
            expanded = self.expand(rest).strip()
            m = re.match(r'"([^"]+)"|<([^>]+)>', expanded)
            if not m:
                raise err(f"malformed #include {rest}")
        if m.group(2):
            return  # a system header: part of the twin
        name = m.group(1)
        for d in [path.parent, *self.include_dirs]:
            cand = d / name
            if cand.is_file():
                self._file(cand)
                return
        if name.startswith(SDK_PREFIXES) or "/" not in name and name.endswith("_intf.h"):
            return
        raise err(f'missing include "{name}" (looked in {path.parent})')

    # -- expressions and expansion -------------------------------------------------------------
    def _eval_if(self, expr: str, err) -> bool:
        expr = re.sub(
            r"defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)",
            lambda m: " 1 " if (m.group(1) or m.group(2)) in self.macros else " 0 ",
            expr,
        )
        expr = self.expand(expr)
        if "?" in expr:
            raise err("not supported yet: ?: in #if")
        py = re.sub(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\b", r"\1", expr)
        py = re.sub(r"[A-Za-z_]\w*", lambda m: m.group(0) if m.group(0).startswith("0x") else "0", py)
        py = py.replace("&&", " and ").replace("||", " or ")
        py = re.sub(r"!(?!=)", " not ", py).replace("/", "//")
        try:
            return bool(eval(py, {"__builtins__": {}}, {}))  # noqa: S307 - digits and operators only
        except Exception:
            raise err(f"cannot evaluate #if {expr.strip()}") from None

    def _expand_line(self, pf: PFile, row: int, line: str) -> str:
        pieces: list[tuple[int, int, bool]] = []
        out: list[str] = []
        olen = 0
        pos = 0
        changed = False
        for m in TOKEN_RE.finditer(line):
            if m.start() < pos:
                continue
            tok = m.group(0)
            macro = self.macros.get(tok)
            if macro is None or not (tok[0].isalpha() or tok[0] == "_"):
                continue
            rep, end = self._replace(macro, line, m.end(), frozenset())
            if rep is None:
                continue
            changed = True
            lit = line[pos : m.start()]
            pieces.append((olen, pos, True))
            out.append(lit)
            olen += len(lit)
            pieces.append((olen, m.start(), False))
            out.append(rep)
            olen += len(rep)
            pos = end
        if not changed:
            text = line
        else:
            pieces.append((olen, pos, True))
            out.append(line[pos:])
            text = "".join(out)
            pf.colmaps[row] = pieces
        if "__" in text:
            text = self._blank_quals(pf, row, text)
        if "template" in text:  # `obj.template f(...)`: the disambiguator alone confuses the grammar
            text = _DOT_TEMPLATE_RE.sub(lambda m: m.group(1) + " " * 8, text)
        return text

    def _blank_quals(self, pf: PFile, row: int, text: str) -> str:
        def blank(m: re.Match) -> str:
            pf.quals.append((row, m.start(), m.group(0)))
            return " " * len(m.group(0))

        return _QUAL_RE.sub(blank, text)


def _c_literal(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def preprocess(path: str | Path, text: str | None = None, **kw) -> tuple[list[PFile], Preprocessor]:
    pp = Preprocessor(**kw)
    try:
        files = pp.run(path, text)
    except RecursionError:
        raise Unsupported("recursive macro", str(path), 1, 1) from None
    return files, pp
