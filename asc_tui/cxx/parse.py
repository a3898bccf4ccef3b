"""tree-sitter parsing of preprocessed files (CUDA grammar: C++ plus `<<<...>>>` launches)."""

from __future__ import annotations

from functools import lru_cache

from .errors import CxxError
from .preprocess import PFile


@lru_cache(maxsize=1)
def _parser():
    import tree_sitter
    import tree_sitter_cuda

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))


def parse(pf: PFile):
    """The syntax tree of a preprocessed file (ERROR nodes are reported where they are used)."""
    return _parser().parse(pf.text.encode("utf-8"))


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
