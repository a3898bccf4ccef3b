"""The check's version: its sources and libclang's, so a change re-checks every unit."""

from __future__ import annotations

import hashlib
from pathlib import Path


def _version() -> str:
    h = hashlib.sha256()
    for f in sorted(Path(__file__).parent.glob("*.py")):
        h.update(f.read_bytes())
    try:
        from importlib.metadata import version

        h.update(version("libclang").encode())
    except Exception:  # noqa: BLE001 - no metadata: the sources alone
        pass
    return h.hexdigest()[:16]


VERSION = _version()
