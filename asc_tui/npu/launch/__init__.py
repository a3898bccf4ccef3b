"""Launch a kernel on the emulated chip (`launch`): the per-launch context (`context.py`), the
guards around a launch (`guards.py`), one pass over the blocks (`blocks.py`) and the launch's
steps, retries and reruns (`launcher.py`)."""

from ..pipes import PIPE_NAMES
from .context import Run, RunWarning, make_gm
from .guards import KernelTimeout
from .launcher import launch

__all__ = ["launch", "make_gm", "Run", "RunWarning", "KernelTimeout", "PIPE_NAMES"]
