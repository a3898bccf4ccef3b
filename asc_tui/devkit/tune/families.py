"""After a config times out, the configs that would wait out the same limit are not run.

A looping kernel costs the whole timeout (60 s by default) per config; a tune of 50 configs
would take most of an hour to say "every config timed out". So the first timeout of a config
stops its *family*:

- **every config of the operator**, when the timeout comes before any config has completed
  (finished with a time or with an error of its own, cached results included): nothing shows
  the kernel can end at all, so it most likely loops whatever the parameters;
- otherwise the configs that share **every parameter value but the swept one** with the
  timed-out config. The swept parameter is the free parameter (more than one candidate value
  after `--param` pins) with the most values, the first in PARAMS order on a tie: the axis a
  sweep spends its configs on. Moving along it keeps whatever else made the config loop or
  crawl (a tiling, a block count), so its other values are not worth a timeout each.

Skipped configs come back as outcomes that say why ("not run: ..."), never cached, so a
later tune (a larger `--timeout`, a fixed kernel) runs them.
"""

from __future__ import annotations

from .space import SearchSpace


def swept_parameter(space: SearchSpace) -> str | None:
    """The free parameter with the most candidate values (first in PARAMS order on a tie)."""
    free = [n for n in space.names if len(space.values[n]) > 1]
    return max(free, key=lambda n: len(space.values[n])) if free else None


def family(space: SearchSpace, params: dict, any_completed: bool) -> tuple[list[str], str]:
    """Keys of the valid configs a timeout of `params` stops (its own included), and the
    family in words for the report."""
    if not any_completed:
        return [c.key for c in space.valid], "every config of the operator (none had completed)"
    swept = swept_parameter(space)
    same = [n for n in space.names if n != swept]
    keys = [c.key for c in space.valid if all(c.params[n] == params[n] for n in same)]
    if swept is None:
        return keys, "this config"
    fixed = " ".join(f"{n}={params[n]}" for n in same if len(space.values[n]) > 1)
    return keys, f"the {swept} sweep" + (f" at {fixed}" if fixed else "")
