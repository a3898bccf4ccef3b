"""Themes from `themes/*.toml` (read with tomli) turned into Textual `Theme`s.

File format: top-level `name`, `dark`; a `[colors]` table with Textual's theme colours
(primary, secondary, accent, foreground, background, surface, panel, success, warning, error);
a `[variables]` table with extra CSS variables (the timeline's `pipe-<name>` lane colours).

Every colour is parsed with Textual's `Color.parse` when the file is read: a theme that does not
parse is refused with `file:line:col` (and so never registered, never reached by f2), instead of
taking the app down when Textual first styles with it.
"""

from __future__ import annotations

from pathlib import Path

import tomli
from textual.color import Color, ColorParseError
from textual.theme import Theme

from .. import BUNDLED_THEMES
from ..tomlpos import value_position

COLOR_KEYS = (
    "primary",
    "secondary",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
    "success",
    "warning",
    "error",
)
DEFAULT_THEME = "dark"


class ThemeFileError(ValueError):
    pass


def theme_from_toml(path: Path) -> Theme:
    """One theme file → Theme; the name defaults to the file stem."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = tomli.loads(text)
    except tomli.TOMLDecodeError as exc:
        raise ThemeFileError(f"{path}: {exc}") from None
    colors = data.get("colors", {})
    unknown = sorted(set(colors) - set(COLOR_KEYS))
    if unknown:
        raise ThemeFileError(
            f"{path}: unknown colour(s) {', '.join(unknown)}; known: {', '.join(COLOR_KEYS)}"
        )
    if "primary" not in colors:
        raise ThemeFileError(f"{path}: [colors] needs at least 'primary'")
    variables = data.get("variables", {})
    checks = [("colors", k, v) for k, v in colors.items()]
    checks += [("variables", k, v) for k, v in variables.items() if _is_colour_variable(k)]
    for table, key, value in checks:
        if not isinstance(value, str) or not _parses(value):
            line, col = value_position(text, table, key) or (1, 1)
            raise ThemeFileError(
                f"{path}:{line}:{col}: {key} = {value!r} is not a colour "
                '(use "#rrggbb", "rgb(r,g,b)" or a colour name)'
            )
    return Theme(
        name=str(data.get("name", Path(path).stem)),
        dark=bool(data.get("dark", True)),
        variables={str(k): str(v) for k, v in data.get("variables", {}).items()},
        **{k: str(v) for k, v in colors.items()},
    )


def _is_colour_variable(name: str) -> bool:
    return name.startswith("pipe-") or name == "heat"


def _parses(value: str) -> bool:
    try:
        Color.parse(value)
    except (ColorParseError, ValueError, TypeError):
        return False
    return True


def theme_dirs(extra: Path | None = None) -> list[Path]:
    dirs = [Path.cwd() / "themes", BUNDLED_THEMES]
    if extra is not None:
        dirs.insert(0, Path(extra))
    return [d for d in dirs if d.is_dir()]


def load_themes(extra: Path | None = None) -> tuple[dict[str, Theme], list[str]]:
    """All themes found (project dir first wins) and the problems met on the way."""
    themes: dict[str, Theme] = {}
    problems: list[str] = []
    for d in theme_dirs(extra):
        for f in sorted(d.glob("*.toml")):
            try:
                t = theme_from_toml(f)
            except (ThemeFileError, TypeError, ValueError) as exc:
                problems.append(str(exc))
                continue
            themes.setdefault(t.name, t)
    return themes, problems
