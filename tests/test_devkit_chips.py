"""The chip list the front ends show comes from the devkit."""

from __future__ import annotations

import json

from asc_tui.cli import main as cli_main
from asc_tui.devkit.chips import chip_names, chip_summaries, default_chip_name


def test_the_default_chip_is_one_of_the_bundled_chips():
    assert default_chip_name() in chip_names()


def test_chips_json_lists_every_bundled_chip_with_its_figures(capsys):
    assert cli_main(["chips", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == chip_names() == [c.name for c in chip_summaries()]
    assert all(r["ub_bytes"] > 0 and r["hbm_gbps"] > 0 and r["aic"] > 0 for r in rows)


def test_chips_lists_the_ub_a_vector_kernel_gets_as_the_profile_does(capsys):
    """One size convention: `asc-tui chips` and the profile's capacity line agree on the UB."""
    from asc_tui.devkit.chips import load_chip
    from asc_tui.devkit.text import size_text

    assert cli_main(["chips"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("ascend910b "))
    chip = load_chip("ascend910b")
    assert f"UB {size_text(chip.memory['ub'])}  " in line and "UB 192 KiB" in line
    rows = {c.name: c for c in chip_summaries()}
    assert rows["ascend910b"].ub_bytes == 196608 and rows["ascend910b"].ub_reserved == 256
