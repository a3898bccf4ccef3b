"""C macros and their expansion: object-like and function-like `#define`s, `#`, `##` and
`__VA_ARGS__`, expanded recursively with the usual "a macro is not expanded inside itself" rule.

The directives that define them (#define, #if, #include) are read by `preprocess.Preprocessor`,
which is a `MacroExpander`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .scan import outside_strings

#: A token of a line: a string or char literal, an identifier, a number (macros replace identifiers).
TOKEN_RE = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|[A-Za-z_]\w*|[0-9][\w.]*')


@dataclass
class Macro:
    name: str
    body: str
    params: list[str] | None = None  # None: object-like
    file: str | None = None
    line: int = 0  # 1-based line of the definition
    body_col: int = 0  # 0-based column of the body in the original line


class MacroExpander:
    """Expands the macros in `self.macros` (name -> Macro), which the subclass fills."""

    macros: dict[str, Macro]

    def expand(self, text: str, disabled: frozenset = frozenset()) -> str:
        out = []
        pos = 0
        for m in TOKEN_RE.finditer(text):
            if m.start() < pos:
                continue
            tok = m.group(0)
            macro = self.macros.get(tok)
            if macro is None or tok in disabled or not (tok[0].isalpha() or tok[0] == "_"):
                continue
            rep, end = self._replace(macro, text, m.end(), disabled)
            if rep is None:
                continue
            out.append(text[pos : m.start()])
            out.append(rep)
            pos = end
        out.append(text[pos:])
        return "".join(out)

    def _replace(self, macro: Macro, text: str, end: int, disabled: frozenset):
        inner = disabled | {macro.name}
        if macro.params is None:
            return self.expand(macro.body, inner), end
        j = end
        while j < len(text) and text[j] in " \t":
            j += 1
        if j >= len(text) or text[j] != "(":
            return None, end
        args, close = _split_args(text, j)
        if args is None:
            return None, end
        if len(args) == 1 and not args[0].strip() and not macro.params:
            args = []
        if len(args) != len(macro.params) and not (macro.params and macro.params[-1] == "..."):
            return None, end
        subst = {p: self.expand(a.strip(), disabled) for p, a in zip(macro.params, args)}
        if macro.params and macro.params[-1] == "...":
            subst["__VA_ARGS__"] = ", ".join(a.strip() for a in args[len(macro.params) - 1 :])
        body = re.sub(
            r"#\s*([A-Za-z_]\w*)",
            lambda m: '"' + subst[m.group(1)] + '"' if m.group(1) in subst else m.group(0),
            macro.body,
        )
        body = re.sub(r"[A-Za-z_]\w*", lambda m: subst.get(m.group(0), m.group(0)), body)
        body = re.sub(r"\s*##\s*", "", body)
        return self.expand(body, inner), close + 1


def _split_args(text: str, open_paren: int):
    args = []
    cur = open_paren + 1
    for i, ch, depth in outside_strings(text, open_paren):
        if depth == 0 and ch in ")]}":
            args.append(text[cur:i])
            return args, i
        if ch == "," and depth == 1:
            args.append(text[cur:i])
            cur = i + 1
    return None, open_paren
