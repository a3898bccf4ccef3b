"""The auto-tuner: search space with static pruning, strategies, cached parallel evaluation.

Entry point: `tune(TuneRequest(op, ...), listeners, cancel) -> TuneReport`. See
README.md ("Tuning") for the user-facing description.
"""

from .cache import Outcome, TuneCache
from .progress import CancelToken, Progress, TuneEvent
from .session import TuneReport, TuneRequest, tune
from .space import Config, Pruned, SearchSpace, build_space, config_key
from .strategies import STRATEGIES, make_strategy

__all__ = [
    "tune",
    "TuneRequest",
    "TuneReport",
    "TuneEvent",
    "CancelToken",
    "Progress",
    "Outcome",
    "TuneCache",
    "Config",
    "Pruned",
    "SearchSpace",
    "build_space",
    "config_key",
    "STRATEGIES",
    "make_strategy",
]
