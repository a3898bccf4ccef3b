"""`asc-tui profile` (coming: its issue has not landed yet)."""

from .common import coming

add_parser, main = coming("profile")
