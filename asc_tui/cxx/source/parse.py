"""tree-sitter parsing of preprocessed files (CUDA grammar: C++ plus `<<<...>>>` launches)."""

from __future__ import annotations

from functools import lru_cache

from ..errors import CxxError
from .preprocess import PFile


@lru_cache(maxsize=1)
def _parser():
    import tree_sitter
    import tree_sitter_cuda

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))


def parse(pf: PFile):
    """The syntax tree of a preprocessed file (ERROR nodes are reported where they are used)."""
    return _parser().parse(pf.text.encode("utf-8"))


def reparse_call_args(pf: PFile, name_node, params_node) -> list | None:
    """`T obj(A::B, n * sizeof(half), n)` that tree-sitter read as a function declaration: the
    arguments as expression nodes at their own rows and columns (the file re-parsed with every
    other byte blanked and the words `obj(...)` made a call in a function), or None when they
    do not parse as expressions."""
    src = pf.text.encode("utf-8")
    a, b = name_node.start_byte, params_node.end_byte
    head, tail = b"void __cx(){", b";}"
    buf = bytearray(c if c == 10 else 32 for c in src)
    buf[a:b] = src[a:b]
    # the function header goes on the first earlier line long enough to hold it
    pos = 0
    while pos < a and (buf.find(b"\n", pos) if buf.find(b"\n", pos) != -1 else len(buf)) - pos < len(head):
        nl = buf.find(b"\n", pos)
        if nl == -1:
            return None
        pos = nl + 1
    if pos + len(head) > a:
        return None
    buf[pos : pos + len(head)] = head
    end = next((i for i in range(b, len(buf) - 1) if buf[i] != 10 and buf[i + 1] != 10), None)
    if end is None:
        return None
    buf[end : end + 2] = tail
    tree = _parser().parse(bytes(buf))
    if tree.root_node.has_error:
        return None
    stack = [tree.root_node]
    while stack:
        n = stack.pop()
        if n.type == "call_expression" and n.start_byte == a:
            args = n.child_by_field_name("arguments")
            _KEEP.append(tree)
            return [c for c in args.named_children if c.type != "comment"]
        stack.extend(n.named_children)
    return None


_KEEP: list = []  # trees whose nodes a translation holds on to


def first_error(node):
    """The first ERROR or MISSING node under `node`, or None."""
    if not node.has_error:
        return None
    stack = [node]
    while stack:
        n = stack.pop()
        if n.is_error or n.is_missing:
            return n
        stack.extend(c for c in reversed(n.children) if c.has_error or c.is_missing)
    return None


def syntax_error(pf: PFile, node) -> CxxError:
    bad = first_error(node) or node
    row, col = bad.start_point
    if bad.is_missing:
        msg = f"syntax error: expected {bad.type!r}"
    else:
        text = bad.text.decode("utf-8", "replace").strip().split("\n")[0][:40]
        msg = f"syntax error near {text!r}" if text else "syntax error"
    return CxxError(msg, pf.path, row + 1, pf.orig_col(row, col) + 1)
