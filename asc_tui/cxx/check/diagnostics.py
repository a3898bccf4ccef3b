"""Which clang errors are the user's: the stand-in SDK (stubs.py) is permissive, so an error
is shown only when no stand-in declaration can have caused it.

- It is in one of the user's files (never in the stand-in), and no note of it points into
  the stand-in (a candidate, a previous declaration, a macro).
- Every name it quotes is a builtin type or declared in the user's files, the code its
  ranges cover names nothing else, and it is not of a kind that depends on how much of the
  SDK is constexpr, literal, complete or templated (`_STUB_SENSITIVE`).
- An undeclared name is shown when it cannot be an SDK name the stand-in lacks: a user
  declaration is close to it (clang's "did you mean", or an edit distance of 2), or it is
  spelled like a user variable (lower-case first, no SDK prefix) and the twin and the
  translator do not know it.
- Precisely stated errors are always shown: a `LocalTensor<T>` of another element type, a
  call of a `PRECISE_NAMES` function (PipeBarrier, the ACL calls, TPipe::InitBuffer).
- Cascades are dropped: an error in a statement where a hidden error is, about a name such a
  statement declares, or a repeat of an undeclared name already reported. Parse errors come
  first (a lost `;` or `}` causes the semantic errors around it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import CxxError
from . import stubs
from .clang import Diag

#: Builtin type words: quoting them says nothing about the stand-in.
BUILTIN = set(
    "void bool char short int long unsigned signed float double auto const volatile struct class "
    "enum union int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t size_t half "
    "bfloat16_t nullptr_t decltype __fp16 _Float16 __bf16 wchar_t char16_t char32_t "
    "ssize_t intptr_t uintptr_t ptrdiff_t float16_t float32_t".split()
)
#: Prefixes of SDK names (ACL, runtime, HCCL, graph engine, data types) the stand-in may lack.
SDK_PREFIX = re.compile(r"^(?:acl|ACL_|rt[A-Z]|RT_|DT_|hccl|Hccl|HCCL|GE_|OP_|__|Ascend)")

_QUOTED = re.compile(r"'([^']*)'")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_UNDECLARED = re.compile(
    r"^(?:use of undeclared identifier|unknown type name|no template named|"
    r"use of undeclared label|undeclared identifier) '([^']+)'"
    r"(?:; did you mean (?:'([^']+)'|.*?'([^']+)')\?)?"
)
_NO_MEMBER = re.compile(r"^no (?:member|type) named '([^']+)' in (?:namespace )?'([^']+)'")
_CONVERSION = re.compile(r"no viable conversion from '([^']+)' to '([^']+)'")
_TENSOR = re.compile(r"^(?:AscendC::)?(LocalTensor|GlobalTensor)<([\w ]+)>$")


#: clang's wording → the front end's (the same error reads the same from either).
_WORDING = (
    (re.compile(r"^use of undeclared identifier "), "unknown identifier "),
    (re.compile(r"^unknown type name "), "unknown type "),
)


def wording(text: str) -> str:
    for pat, repl in _WORDING:
        text = pat.sub(repl, text)
    return text.replace("_Float16", "half").replace("__bf16", "bfloat16_t")


@dataclass(frozen=True)
class Shown:
    diag: Diag
    message: str


def is_users(d: Diag, user_files: set[str]) -> bool:
    return d.file is not None and d.file in user_files


def _stub_note(d: Diag) -> bool:
    return any(n.file is not None and n.file.startswith(stubs.SDK_DIR) for n in d.notes)


def _sdk_like(name: str, user_names: set[str]) -> bool:
    """Could `name` be an SDK name the stand-in does not declare?"""
    base = name.split("::")[-1]
    if name in user_names or base in user_names:
        return False
    if base in stubs.known_names() or SDK_PREFIX.match(name) or SDK_PREFIX.match(base):
        return True
    if "::" in name:
        head = name.split("::")[0]
        return head not in user_names  # qualified by an SDK namespace or class
    return base[:1].isupper() or base.isupper()


def _distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _near_user_name(name: str, user_names: set[str]) -> str | None:
    """A user declaration `name` is a misspelling of (edit distance ≤ 2, not an SDK name):
    then an unknown name that could have been the SDK's is the user's typo."""
    base = name.split("::")[-1]
    if len(base) < 4 or base in stubs.known_names():
        return None
    best = None
    for u in user_names:
        if abs(len(u) - len(base)) <= 2 and u[:1] == base[:1] and u != base and len(u) >= 4:
            dist = _distance(base, u)
            if dist <= 2 and (best is None or dist < best[0]):
                best = (dist, u)
    return best[1] if best else None


def _quotes_sdk(text: str, user_names: set[str]) -> bool:
    for q in _QUOTED.findall(text):
        for ident in _IDENT.findall(q):
            if ident in BUILTIN or ident in user_names:
                continue
            return True
    return False


def _precise(d: Diag, user_names: set[str]) -> str | None:
    """An error the stand-in states precisely (tensor element types, PRECISE functions)."""
    m = _CONVERSION.search(d.text)
    if m:
        a, b = _TENSOR.match(m.group(1).strip()), _TENSOR.match(m.group(2).strip())
        if a and b and a.group(1) == b.group(1) and a.group(2) != b.group(2):
            if all(w in BUILTIN for x in (a, b) for w in x.group(2).split()):
                return wording(d.text)
    if re.match(r"no matching constructor for initialization of '(?:AscendC::)?LocalTensor<", d.text):
        return wording(d.text) + " (a tensor at an address is LocalTensor<T>(position, address, length))"
    m = re.match(r"no matching (?:member )?function for call to '(\w+)'", d.text)
    if m and m.group(1) in stubs.PRECISE_NAMES:
        why = [n.text for n in d.notes if "template argument" in n.text or "requires" in n.text]
        why = why or [n.text for n in d.notes if "no known conversion" in n.text]
        return d.text + (f" ({why[0].replace('candidate template ignored: ', '')})" if why else "")
    return None


def _span(d: Diag, files: dict[str, str]) -> str:
    """The source text clang's ranges cover (the operands, the initialiser...)."""
    lines = files.get(d.file or "", "").split("\n")
    out = []
    for l1, c1, l2, c2 in d.ranges:
        for ln in range(l1, min(l2, len(lines)) + 1):
            b = lines[ln - 1].encode("utf-8")
            lo = c1 - 1 if ln == l1 else 0
            hi = c2 - 1 if ln == l2 else len(b)
            out.append(b[lo:hi].decode("utf-8", errors="ignore"))
    return " ".join(out)


_WORDS = BUILTIN | stubs._KEYWORDS | {"true", "false", "nullptr", "this"}


def _spans_sdk(d: Diag, files: dict[str, str], user_names: set[str]) -> bool:
    """Does the code the error is about use a name the user did not declare (an SDK call)?"""
    text = re.sub(r'"(?:\\.|[^"\\])*"', "", _span(d, files))
    return any(w not in _WORDS and w not in user_names for w in _IDENT.findall(text))


def _code(line: str) -> str:
    return line.split("//")[0].strip()


def _statement(d: Diag, files: dict[str, str]) -> range:
    """The lines of the statement the error is in (back to the previous `;`, `{` or `}`)."""
    lines = files.get(d.file or "", "").split("\n")
    start = d.line
    while start > 1 and not _code(lines[start - 2]).endswith((";", "{", "}", ":")) and d.line - start < 12:
        if _code(lines[start - 2]).startswith("#"):
            break
        start -= 1
    return range(start, d.line + 1)


def _previous_use(name: str, d: Diag, files: dict[str, str]) -> int | None:
    """The nearest line before the error that names `name` (its declaration or last use)."""
    pat = re.compile(r"(?<![\w.>:])" + re.escape(name.split("::")[-1]) + r"\b")
    lines = files.get(d.file or "", "").split("\n")
    for i in range(min(d.line - 1, len(lines)), 0, -1):
        if pat.search(lines[i - 1].split("//")[0]):
            return i
    return None


#: Errors that depend on how much of the SDK is constexpr, literal or complete: the stand-in
#: states none of that.
_STUB_SENSITIVE = re.compile(
    r"constant expression|non-literal|incomplete type|is not a template|constexpr|deduced type|"
    r"scalar initializer|variable-sized|prior to '::'|unexpected namespace name|dependent template|"
    r"is not a class, namespace, or enumeration"
)

#: Parse errors about a namespace or template the stand-in may lack.
_SDK_PARSE = re.compile(r"^expected namespace name|^no template named|^unknown template name")

_DECLARATOR = re.compile(r"([A-Za-z_]\w*)\s*(?:\{[^;]*\}|\([^;]*\)|=[^;]*)?;\s*$")
_NO_MATCH = re.compile(r"^no matching (?:member )?function|^no matching constructor")


def _rest_sdk(d: Diag, files: dict[str, str], user_names: set[str]) -> bool:
    """Does the call at the error (its line from the column on) pass something of the SDK?"""
    lines = files.get(d.file or "", "").split("\n")
    if not 0 < d.line <= len(lines):
        return True
    rest = lines[d.line - 1].encode("utf-8")[d.column - 1 :].decode("utf-8", errors="ignore")
    rest = re.sub(r'"(?:\\.|[^"\\])*"', "", _code(rest))
    return any(w not in _WORDS and w not in user_names for w in _IDENT.findall(rest))


_TEMPLATE_USE = re.compile(r"([A-Za-z_]\w*)\s*<")


def _sdk_template_before(d: Diag, files: dict[str, str], user_names: set[str]) -> bool:
    """Is an SDK name used with template arguments on the line before the error? Whether a
    name is a template decides how C++ parses what follows, and the stand-in may not know."""
    lines = files.get(d.file or "", "").split("\n")
    if not 0 < d.line <= len(lines):
        return False
    head = lines[d.line - 1].encode("utf-8")[: d.column].decode("utf-8", errors="ignore")
    return any(n not in user_names and n not in _WORDS for n in _TEMPLATE_USE.findall(head))


def select(
    diags: list[Diag], user_files, user_names: set[str], files: dict[str, str] | None = None
) -> list[Shown]:
    """The user's errors among clang's, in clang's order, with the message to show."""
    files = files or {}
    kept: list[tuple[Shown, bool]] = []  # (shown, precise)
    hidden: set[tuple[str, int]] = set()  # lines with an error the stand-in may cause
    for d in diags:
        if not is_users(d, user_files):
            continue
        precise = _precise(d, user_names)
        if precise is not None:
            kept.append((Shown(d, precise), True))
            continue
        key = (d.file or "", d.line)
        braces = d.text.startswith(("expected '}'", "extraneous closing brace"))  # a lost or extra brace
        if _stub_note(d) or (not braces and _sdk_template_before(d, files, user_names)):
            hidden.add(key)
            continue
        m = _UNDECLARED.match(d.text)
        if m:
            name, sugg = m.group(1), m.group(2) or m.group(3)
            near = None if sugg else _near_user_name(name, user_names)
            if (sugg and sugg in user_names) or near or not _sdk_like(name, user_names):
                text = wording(d.text) + (f"; did you mean '{near}'?" if near else "")
                kept.append((Shown(d, text), False))
            else:
                hidden.add(key)
            continue
        if d.text.startswith("'template' keyword not permitted") and _rest_sdk(d, files, user_names):
            hidden.add(key)  # `.template Member<…>` of a member the stand-in lacks
            continue
        if d.category == "Parse Issue" and _SDK_PARSE.search(d.text):
            hidden.add(key)
            continue
        if d.category == "Parse Issue":
            kept.append((Shown(d, wording(d.text)), False))
            continue
        m = _NO_MEMBER.match(d.text)
        if m:  # only the class or namespace says whether the stand-in is involved
            if _quotes_sdk(f"'{m.group(2)}'", user_names):
                hidden.add(key)
            else:
                kept.append((Shown(d, wording(d.text)), False))
            continue
        if _NO_MATCH.match(d.text) and _rest_sdk(d, files, user_names):
            hidden.add(key)
            continue
        if (
            _quotes_sdk(d.text, user_names)
            or _spans_sdk(d, files, user_names)
            or _STUB_SENSITIVE.search(d.text)
        ):
            hidden.add(key)
            continue
        kept.append((Shown(d, wording(d.text)), False))
    # an error on a line where a hidden one is, or about a name whose declaration line had an
    # error, follows from that one: not the user's (or already said)
    # names declared where a hidden error is: their later errors follow from it
    tainted: set[str] = set()
    for f, ln in hidden:
        lines = files.get(f, "").split("\n")
        end = ln
        while end < len(lines) and end - ln < 12 and not _code(lines[end - 1]).endswith((";", "{", "}")):
            end += 1  # the rest of the statement (its declarator may be lines below)
        stmt = " ".join(_code(lines[i - 1]) for i in range(max(ln, 1), min(end, len(lines)) + 1))
        tainted.update(w for w in _IDENT.findall(stmt) if w in user_names)
        decl = _DECLARATOR.search(stmt)
        if decl:  # the name it declares (an invalid declaration declares nothing clang shows)
            tainted.add(decl.group(1))
    out: list[Shown] = []
    said: set[tuple[str, int]] = set()
    for s, precise in kept:
        d = s.diag
        f = d.file or ""
        # a lost or extra brace is never a cascade of a name the stand-in lacks
        precise = precise or d.text.startswith(("expected '}'", "extraneous closing brace"))
        if not precise and any((f, ln) in hidden for ln in _statement(d, files)):
            continue
        lines = files.get(f, "").split("\n")
        here = _code(lines[d.line - 1]) if 0 < d.line <= len(lines) else ""
        if not precise and (tainted & set(_IDENT.findall(here)) or tainted & set(_QUOTED.findall(d.text))):
            continue
        m = _UNDECLARED.match(d.text)
        if m and not precise:
            prev = _previous_use(m.group(1), d, files)
            if prev is not None and ((f, prev) in hidden or (f, prev) in said):
                said.add((f, d.line))
                continue
        if not any(
            o.diag.line == d.line and o.diag.column == d.column and o.message == s.message for o in out
        ):
            out.append(s)
        said.add((f, d.line))
    # a parse error is the cause of the errors it brings (a truncated class, a lost `;`): first
    return sorted(out, key=lambda s: s.diag.category != "Parse Issue")


class ClangError(CxxError):
    """A C++ error clang found anywhere in the unit; the line is the text clang checked."""

    def __init__(self, message, file, line, column, line_text: str | None, hint=None):
        self._line_text = line_text
        super().__init__(message, file, line, column, hint)

    def source(self) -> str | None:
        if self._line_text is not None:
            return self._line_text.expandtabs(1)
        return super().source()
