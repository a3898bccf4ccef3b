"""`asc-tui chips`: list the bundled chip models and their key figures."""

from __future__ import annotations

from ..npu.chip import available_chips, load_chip
from .common import print_json


def add_parser(sub) -> None:
    p = sub.add_parser("chips", help="list bundled chip models")
    p.add_argument("--json", action="store_true")


def main(args) -> int:
    rows = []
    for name in available_chips():
        c = load_chip(name)
        rows.append(
            {
                "name": c.name,
                "clock_mhz": c.clock_mhz,
                "aic": c.aic,
                "aiv": c.aiv,
                "ub_bytes": c.usable["ub"],
                "l1_bytes": c.memory.get("l1"),
                "hbm_gbps": c.hbm_gbps,
                "path": c.path,
            }
        )
    if args.json:
        print_json(rows)
        return 0
    for r in rows:
        print(
            f"{r['name']:<14} {r['clock_mhz']:>6.0f} MHz  {r['aic']:>2} AIC {r['aiv']:>2} AIV  "
            f"UB {r['ub_bytes'] // 1024} KB  HBM {r['hbm_gbps']:g} GB/s"
        )
    return 0
