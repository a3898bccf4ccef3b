"""The operator tree: one leaf per operator file with a status mark updated in place, and a
"C++" tag after the name of a C++ operator (its kernel `.asc`/`.cpp`)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.widgets import Tree

from ..state import Status

#: status -> (mark, style); marks alone carry the meaning (NO_COLOR, monochrome terminals).
MARKS: dict[Status, tuple[str, str]] = {
    Status.NEW: ("·", "dim"),
    Status.RUNNING: ("~", "bold $accent"),
    Status.PASS: ("✓", "$success"),
    Status.WARN: ("≈", "bold $warning"),  # close to the golden, not within its thresholds
    Status.FAIL: ("✗", "bold $error"),
    Status.ERROR: ("!", "bold $error"),
    Status.REGRESSION: ("▼", "bold $warning"),
    Status.SANITIZER: ("⚑", "bold $error"),
}


class OperatorTree(Tree[Path]):
    """Operators under the watched dir; select one with enter (or n / N from anywhere)."""

    DEFAULT_CSS = """
    OperatorTree { padding: 0 0; }
    """

    def __init__(self, label: str, **kwargs):
        super().__init__(label, **kwargs)
        self.show_root = False
        self.guide_depth = 2
        self._op_nodes: dict[Path, object] = {}
        self._status: dict[Path, tuple[Status, bool]] = {}

    def set_operators(self, paths: list[Path]) -> None:
        for p in paths:
            if p not in self._op_nodes:
                self._op_nodes[p] = self.root.add_leaf(self._label(p), data=p)
        self.root.expand()

    def remove_path(self, path: Path) -> None:
        node = self._op_nodes.pop(path, None)
        self._status.pop(path, None)
        if node is not None:
            node.remove()

    def paths(self) -> list[Path]:
        return list(self._op_nodes)

    def set_status(self, path: Path, status: Status, stale: bool = False) -> None:
        if path not in self._op_nodes:
            self.set_operators([path])
        if self._status.get(path) == (status, stale):
            return
        self._status[path] = (status, stale)
        self._op_nodes[path].set_label(self._label(path))

    def status(self, path: Path) -> Status:
        return self._status.get(path, (Status.NEW, False))[0]

    def select_path(self, path: Path) -> None:
        node = self._op_nodes.get(path)
        if node is not None:
            self.move_cursor(node)

    def _label(self, path: Path) -> Text:
        status, stale = self._status.get(path, (Status.NEW, False))
        mark, style = MARKS[status]
        text = Text()
        text.append(mark + " ", style=self._resolve(style))
        text.append(path.stem)
        if path.suffix != ".py":  # a C++ kernel (.asc/.cpp); Python operators are the default
            text.append(" C++", style="dim")
        if stale:
            text.append(" ·stale", style="dim")
        return text

    def _resolve(self, style: str) -> str:
        """Theme variables ($success...) → concrete colours (Rich styles know no variables)."""
        if "$" not in style:
            return style
        try:
            variables = self.app.theme_variables
        except Exception:
            variables = {}
        out = []
        for part in style.split():
            if part.startswith("$"):
                part = variables.get(part[1:], "")
            if part:
                out.append(part)
        return " ".join(out)
