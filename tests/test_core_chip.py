"""Chip models are data: bundled TOMLs, user files by path, clear errors for bad files."""

from __future__ import annotations

import pytest

from asc_tui.devkit.run.runner import RunRequest, run
from asc_tui.npu.chip import CHIP_DIR, available_chips, load_chip, parse_chip
from asc_tui.npu.errors import ChipError


def test_bundled_chips_are_listed():
    assert {"ascend910b", "ascend910b4", "ascend310p", "ascend910a"} <= set(available_chips())


def test_every_number_in_a_bundled_chip_file_has_a_comment():
    for path in CHIP_DIR.glob("*.toml"):
        for i, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#")[0].strip()
            if "=" in code and any(ch.isdigit() for ch in code.split("=", 1)[1]):
                # the number's source is on its line or in the comment block just above
                above = path.read_text().splitlines()[max(0, i - 12) : i - 1]
                commented = any(a.strip().startswith("#") or (a.startswith("[") and "#" in a) for a in above)
                assert "#" in line or commented, f"{path.name}:{i} has no source comment"


def test_910b_facts():
    c = load_chip("ascend910b")
    assert (c.aic, c.aiv) == (24, 48)
    assert c.usable["ub"] == 192 * 1024 - 256
    assert c.memory["l0c"] == 128 * 1024 and c.event_ids == 8


def test_user_chip_file_by_path(tmp_path):
    text = (
        (CHIP_DIR / "ascend910b.toml")
        .read_text()
        .replace('name = "ascend910b"', 'name = "mychip"')
        .replace("aiv = 48", "aiv = 2")
    )
    path = tmp_path / "mychip.toml"
    path.write_text(text)
    r = run(RunRequest("add_custom", chip=str(path), timing_only=True))
    assert r.chip == "mychip" and r.emulation.cores_used == 2


def test_malformed_toml_names_file_and_line(tmp_path):
    with pytest.raises(ChipError) as exc:
        parse_chip("[chip]\nname = 'x'\nclock_mhz = \n", "bad.toml")
    assert exc.value.file == "bad.toml" and exc.value.line == 3


def test_missing_section_is_reported():
    with pytest.raises(ChipError, match=r"no \[cores\] section"):
        parse_chip("[chip]\nname='x'\nclock_mhz=1\n", "x.toml")


def test_a_smaller_ub_refuses_a_large_tile():
    r = run(RunRequest("add_custom", chip="ascend910b", params=dict(tile_length=16384, buffer_num=2)))
    assert r.errors and "fit in UB" in r.errors[0].message


def _bundled_with(old: str, new: str) -> str:
    text = (CHIP_DIR / "ascend910b.toml").read_text()
    assert old in text
    return text.replace(old, new)


@pytest.mark.parametrize("key", ["aic = 24", "aiv = 48", "aiv_per_aic = 2", "ids_per_type = 8"])
def test_every_count_must_be_a_positive_whole_number(key):
    name = key.split(" =")[0]
    for bad in ("0", "-1", "2.5"):
        with pytest.raises(ChipError, match=rf"{name} must be a positive whole number") as exc:
            parse_chip(_bundled_with(key, f"{name} = {bad}"), "c.toml")
        assert exc.value.column == len(name) + 4


def test_an_unknown_table_is_refused_with_a_did_you_mean():
    with pytest.raises(ChipError, match=r"unknown table 'memroy' \(did you mean 'memory'\?\)") as exc:
        parse_chip(_bundled_with("[memory]", "[memroy]\nx = 1\n[memory]"), "c.toml")
    assert exc.value.line is not None and exc.value.column == 1
