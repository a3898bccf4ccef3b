"""`asc-tui tune` (coming: its issue has not landed yet)."""

from .common import coming

add_parser, main = coming("tune")
