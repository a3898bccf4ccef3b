"""`asc-tui chips`: list the bundled chip models and their key figures."""

from __future__ import annotations

from ..devkit.chips import chip_summaries
from ..devkit.text import size_text
from .common import print_json


def add_parser(sub) -> None:
    p = sub.add_parser("chips", help="list bundled chip models")
    p.add_argument("--json", action="store_true")


def main(args) -> int:
    rows = [c.to_dict() for c in chip_summaries()]
    if args.json:
        print_json(rows)
        return 0
    for r in rows:
        print(
            f"{r['name']:<14} {r['clock_mhz']:>6.0f} MHz  {r['aic']:>2} AIC {r['aiv']:>2} AIV  "
            f"UB {size_text(r['ub_bytes'])}  HBM {r['hbm_gbps']:g} GB/s"
        )
    return 0
