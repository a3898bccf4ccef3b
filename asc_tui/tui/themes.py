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

from textual.color import Color, ColorParseError
from textual.theme import Theme

from .. import BUNDLED_THEMES
from ..tomlpos import TomlTextError, read_toml, table_line, value_position

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
TOP_KEYS = ("name", "dark", "colors", "variables")
DEFAULT_THEME = "dark"


class ThemeFileError(ValueError):
    pass


def theme_from_toml(path: Path) -> Theme:
    """One theme file → Theme; the name defaults to the file stem. Every mistake (not text, not
    TOML, a value of the wrong type, a colour that does not parse) is a `ThemeFileError` at
    `file:line:col`."""
    try:
        text, data = read_toml(path)
    except OSError as exc:
        raise ThemeFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except TomlTextError as exc:
        raise ThemeFileError(f"{path}:{exc.line or 1}:{exc.column or 1}: {exc.message}") from None

    def refuse(table: str, key: str, message: str):
        line, col = value_position(text, table, key) or (table_line(text, key) or 1, 1)
        return ThemeFileError(f"{path}:{line}:{col}: {message}")

    for key in data:
        if key not in TOP_KEYS:
            raise refuse("", key, f"unknown key {key!r}; a theme has {', '.join(TOP_KEYS)}")
    if not isinstance(data.get("name", ""), str) or data.get("name") == "":
        raise refuse("", "name", f"name must be a non-empty string, got {data['name']!r}")
    if not isinstance(data.get("dark", True), bool):
        raise refuse("", "dark", f"dark must be true or false, got {data['dark']!r}")
    for table in ("colors", "variables"):
        if not isinstance(data.get(table, {}), dict):
            raise refuse("", table, f'{table} must be a table ([{table}] with name = "value" lines)')
    colors, variables = data.get("colors", {}), data.get("variables", {})
    unknown = sorted(set(colors) - set(COLOR_KEYS))
    if unknown:
        raise refuse(
            "colors", unknown[0], f"unknown colour(s) {', '.join(unknown)}; known: {', '.join(COLOR_KEYS)}"
        )
    if "primary" not in colors:
        line = table_line(text, "colors") or 1
        raise ThemeFileError(f"{path}:{line}:1: [colors] needs at least 'primary'")
    for key, value in variables.items():
        if not isinstance(value, str):
            raise refuse("variables", key, f"variables.{key} must be a string, got {value!r}")
    checks = [("colors", k, v) for k, v in colors.items()]
    checks += [("variables", k, v) for k, v in variables.items() if _is_colour_variable(k)]
    for table, key, value in checks:
        if not isinstance(value, str) or not _parses(value):
            raise refuse(
                table,
                key,
                f'{key} = {value!r} is not a colour (use "#rrggbb", "rgb(r,g,b)" or a colour name)',
            )
    try:
        return Theme(
            name=data.get("name", Path(path).stem), dark=data.get("dark", True), variables=variables, **colors
        )
    except (TypeError, ValueError) as exc:
        raise ThemeFileError(f"{path}: {exc}") from None


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
    """All themes found (project dir first wins) and the problems met on the way: a broken
    theme is skipped and reported, never a reason for the workbench not to start."""
    themes: dict[str, Theme] = {}
    problems: list[str] = []
    for d in theme_dirs(extra):
        for f in sorted(d.glob("*.toml")):
            try:
                t = theme_from_toml(f)
            except ThemeFileError as exc:
                problems.append(str(exc))
                continue
            themes.setdefault(t.name, t)
    return themes, problems
