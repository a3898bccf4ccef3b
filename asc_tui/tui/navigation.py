"""What starts runs: saved files, a reloaded config, and the selection / run / case / chip keys."""

from __future__ import annotations

from pathlib import Path

from ..config import Config, ConfigError, load_config
from ..devkit.run.discovery import declared_cases
from .lifecycle import while_mounted
from .messages import FilesChanged
from .state import OperatorState
from .widgets.log_pane import Level
from .widgets.operator_tree import OperatorTree


class Navigation:
    """Mixin for `Workbench` (its selection, case, chip and file-change handlers); uses the app's
    `submit`, `show_operator`, `log_line`, `update_status`, `pane` and `apply_keymap`, and its
    `rerunner` when a deleted operator leaves the queue."""

    ops: dict[Path, OperatorState]
    selected: Path | None
    chip: str | None
    config: Config
    config_error: ConfigError | None

    def on_tree_node_highlighted(self, event) -> None:
        path = event.node.data
        if isinstance(path, Path) and path != self.selected:
            self.select_operator(path, move_cursor=False)

    def select_operator(self, path: Path, move_cursor: bool = True) -> None:
        self.selected = path
        if move_cursor:
            self.pane(OperatorTree).select_path(path)
        st = self.ops.setdefault(path, OperatorState(path))
        with self.batch_update():
            self.show_operator(st)
            self.update_status()

    def _step_operator(self, step: int) -> None:
        paths = list(self.ops)
        if not paths:
            return
        i = paths.index(self.selected) if self.selected in paths else -1
        self.select_operator(paths[(i + step) % len(paths)])

    def action_next_operator(self) -> None:
        self._step_operator(1)

    def action_prev_operator(self) -> None:
        self._step_operator(-1)

    def action_rerun(self) -> None:
        if self.selected is not None:
            self.log_line(f"{self.selected.stem}: rerun", Level.DIM)
            self.submit([self.selected])

    def action_run_all(self) -> None:
        self.log_line(f"run all ({len(self.ops)} operators)", Level.DIM)
        self.submit(list(self.ops))

    def action_next_case(self) -> None:
        if self.selected is None:
            return
        st = self.ops[self.selected]
        cases = declared_cases(self.selected)
        if not cases:
            self.notify("no CASES literal found in the operator", severity="warning")
            return
        cur = st.case if st.case in cases else cases[0]
        self.set_case(cases[(cases.index(cur) + 1) % len(cases)])

    def set_case(self, case: str) -> None:
        """Run the selected operator on `case` from now on (the palette's "Case: x")."""
        if self.selected is None:
            return
        self.ops[self.selected].case = case
        self.log_line(f"{self.selected.stem}: case {case}", Level.DIM)
        self.update_status()
        self.submit([self.selected])

    def set_chip(self, chip: str) -> None:
        """Rerun everything on `chip` (the palette's "Chip: x")."""
        self.chip = chip
        self.log_line(f"chip {chip}: rerun all", Level.DIM)
        self.update_status()
        self.submit([self.selected, *[p for p in self.ops if p != self.selected]])

    def action_next_chip(self) -> None:
        from ..devkit.chips import chip_names

        chips = chip_names()
        cur = self.chip if self.chip in chips else (chips[0] if chips else None)
        if not chips:
            return
        self.set_chip(chips[(chips.index(cur) + 1) % len(chips)])

    @while_mounted
    def on_files_changed(self, msg: FilesChanged) -> None:
        cs = msg.changes
        tree = self.pane(OperatorTree)
        for p in cs.removed:
            if p in self.ops:
                self.forget_operator(p)
        if cs.config and self.config.source:
            self.reload_config()
        targets = list(self.ops) if cs.everything else sorted(cs.operators)
        for p in cs.operators:
            if p not in self.ops:
                self.ops[p] = OperatorState(p)
                tree.set_operators([p])
        names = ", ".join(Path(x).name for x in cs.paths)
        self.log_line(f"saved {names} → rerun {len(targets)} operator(s)", Level.DIM)
        if self.selected in targets:  # what the user looks at goes first
            targets.remove(self.selected)
            targets.insert(0, self.selected)
        self.submit(targets)

    def forget_operator(self, path: Path) -> None:
        """A deleted operator file leaves the tree, the bench table and the run queue; if it was
        selected, the selection moves to its neighbour and the log says where."""
        paths = list(self.ops)
        i = paths.index(path)
        del self.ops[path]
        self.pane(OperatorTree).remove_path(path)
        self.pane("#bench-table").remove_operator(path.stem)
        if self.rerunner is not None:
            self.rerunner.forget(path)
        if path != self.selected:
            self.log_line(f"{path.name} deleted: removed from the operators", Level.WARN)
            return
        rest = paths[:i] + paths[i + 1 :]
        if rest:
            nxt = rest[min(i, len(rest) - 1)]
            self.log_line(f"{path.name} deleted: now showing {nxt.stem}", Level.WARN)
            self.notify(f"{path.name} was deleted: selected {nxt.stem}", severity="warning")
            self.select_operator(nxt)
        else:
            self.selected = None
            self.log_line(f"{path.name} deleted: no operators left in {self.ops_dir}", Level.WARN)
            self.notify(f"{path.name} was deleted: no operators left", severity="warning")
            with self.batch_update():
                self.show_operator(None)
                self.update_status()

    def reload_config(self) -> None:
        try:
            self.config = load_config(Path(self.config.source))
            self.config_error = None
            self.apply_keymap()
            self.log_line(f"config reloaded from {self.config.source}", Level.OK)
        except ConfigError as exc:
            for p in exc.problems:
                self.log_line(f"config error: {p.format()}", Level.ERROR)
