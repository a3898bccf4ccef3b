"""Command palette (ctrl+p): every workbench action, plus one entry per operator and theme."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from ..devkit.run.discovery import declared_cases
from .keymap import ACTIONS


class WorkbenchCommands(Provider):
    """Context-aware: operator entries come from the tree the app shows right now."""

    def _commands(self) -> list[tuple[str, str, object]]:
        app = self.app
        out = []
        keys = getattr(app, "effective_keys", lambda: {})()
        for spec in ACTIONS:
            key = keys.get(spec.id, spec.keys)
            out.append((spec.title, f"{spec.help}  [{key}]", partial(app.run_action, spec.action)))
        for path in getattr(app, "operator_paths", lambda: [])():
            out.append((f"Open {path.stem}", f"select operator {path}", partial(app.select_operator, path)))
        selected = getattr(app, "selected", None)
        if selected is not None:
            for case in declared_cases(selected):
                out.append(
                    (f"Case: {case}", f"run {selected.stem} on case {case}", partial(app.set_case, case))
                )
        from ..devkit.chips import chip_names

        for chip in chip_names():
            out.append(
                (f"Chip: {chip}", "rerun every operator on this chip model", partial(app.set_chip, chip))
            )
        for name in getattr(app, "theme_names", lambda: [])():
            out.append((f"Theme: {name}", "switch theme", partial(setattr, app, "theme", name)))
        return out

    async def discover(self) -> Hits:
        for title, help_text, cb in self._commands():
            yield DiscoveryHit(title, cb, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, cb in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), cb, help=help_text)
