"""msprof-op CSVs: the files and columns we write, the lossless round trip, real-tool input."""

from __future__ import annotations

import csv

import pytest

from asc_tui.devkit.profile.msprof import FILES, MsprofError, read_dir, write_dir
from asc_tui.devkit.profile.profiler import profile
from asc_tui.devkit.run.runner import RunRequest, run
from asc_tui.npu.chip import load_chip


@pytest.fixture(scope="module")
def prof():
    return profile(run(RunRequest("add_custom", params={"buffer_num": 1}, timing_only=True)))


def _header(path):
    with open(path, newline="") as fh:
        return next(csv.reader(fh))


def test_writes_the_four_files_with_msprof_column_names(prof, tmp_path):
    files = write_dir(prof, tmp_path)
    assert sorted(p.split("/")[-1] for p in files) == sorted(FILES)
    basic = _header(tmp_path / "OpBasicInfo.csv")
    assert basic[:4] == ["Op Name", "Op Type", "Task Duration(us)", "Block Dim"]
    pipe = _header(tmp_path / "PipeUtilization.csv")
    for col in (
        "block_id",
        "sub_block_id",
        "aiv_time(us)",
        "aiv_total_cycles",
        "aiv_vec_ratio",
        "aiv_mte2_time(us)",
        "aiv_mte2_ratio",
        "aiv_mte3_ratio",
        "aiv_scalar_ratio",
    ):
        assert col in pipe
    mem = _header(tmp_path / "Memory.csv")
    for col in ("GM_to_UB_datas(KB)", "UB_to_GM_datas(KB)", "aiv_gm_to_ub_bw(GB/s)", "aiv_mte2_instructions"):
        assert col in mem
    assert "aiv_vec_wait_ratio" in _header(tmp_path / "ResourceConflictRatio.csv")


def test_values_are_the_profile_figures(prof, tmp_path):
    write_dir(prof, tmp_path)
    with open(tmp_path / "Memory.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == prof.block_dim
    c = prof.cores[0]
    assert float(rows[0]["GM_to_UB_datas(KB)"]) * 1024 == c.read_bytes
    assert int(rows[0]["aiv_mte2_instructions"]) == c.instructions["mte2"]
    gib_s = c.read_bytes / 1024**3 / (c.time_us * 1e-6)
    assert float(rows[0]["aiv_gm_to_ub_bw(GB/s)"]) == pytest.approx(gib_s)


def test_export_import_export_is_lossless(prof, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    write_dir(prof, a)
    back = read_dir(a)
    write_dir(back, b)
    for name in FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert back.source == "msprof"
    assert back.time_us == prof.time_us and back.block_dim == prof.block_dim
    assert back.clock_mhz == prof.clock_mhz
    for orig, got in zip(prof.cores, back.cores, strict=True):
        assert (got.block, got.time_us, got.cycles) == (orig.block, orig.time_us, orig.cycles)
        assert got.busy_us == orig.busy_us and got.ratio == orig.ratio
        assert got.read_bytes == orig.read_bytes and got.write_bytes == orig.write_bytes
        for q in ("vec", "mte2", "mte3"):
            assert got.wait_ratio[q] == orig.wait_ratio[q]
        for q in ("mte2", "mte3"):  # msprof has instruction counts for the MTEs only
            assert got.instructions[q] == orig.instructions[q]


def test_imported_breakdown_matches_except_the_unmeasured_sync_wait(prof, tmp_path):
    write_dir(prof, tmp_path)
    back = read_dir(tmp_path)
    orig = {b.key: b.time_us for b in prof.breakdown}
    for b in back.breakdown:
        if b.key == "sync_wait":
            assert b.time_us is None
        else:
            assert b.time_us == pytest.approx(orig[b.key])
    assert back.bottleneck == prof.bottleneck
    assert back.pipeline.overlap is None and back.lines == ()


REAL_BASIC = (
    "Op Name,Op Type,Task Duration(us),Block Dim,Mix Block Dim,Device Id,Pid,"
    "Current Freq,Rated Freq,\nadd_custom_0,vector,2041.400024,8,NA,4,1304945,1650,"
    "1650,\n"
)


def test_reads_a_real_tool_directory_with_na_cells_and_trailing_commas(tmp_path):
    d = tmp_path / "OPPROF_20240101_ABC"
    d.mkdir()
    (d / "OpBasicInfo.csv").write_text(REAL_BASIC)
    rows = [
        "block_id,sub_block_id,aic_time(us),aic_total_cycles,aiv_time(us),aiv_total_cycles,"
        "aiv_vec_time(us),aiv_vec_ratio,aic_cube_time(us),aic_cube_ratio,aiv_mte2_time(us),"
        "aiv_mte2_ratio,aiv_mte3_time(us),aiv_mte3_ratio,"
    ]
    for i in range(8):
        rows.append(f"{i},vector0,NA,NA,2030.0,3349500,210.0,0.103,NA,NA,1750.0,0.862,780.0,0.384,")
    (d / "PipeUtilization.csv").write_text("\n".join(rows) + "\n")
    (d / "Memory_20240101.csv").write_text(
        "block_id,sub_block_id,aiv_time(us),aiv_mte2_instructions,GM_to_UB_datas(KB),"
        "UB_to_GM_datas(KB),\n" + "".join(f"{i},vector0,2030.0,10241,40960,20480,\n" for i in range(8))
    )
    p = read_dir(tmp_path, load_chip("ascend910b4"))  # finds the OPPROF_* subdirectory
    assert p.operator == "add_custom_0" and p.time_us == pytest.approx(2041.4)
    assert p.clock_mhz == 1650 and p.block_dim == 8 and len(p.cores) == 8
    rows = {b.key: b for b in p.breakdown}
    assert rows["mte2"].time_us == pytest.approx(1750.0) and p.bottleneck == "mte2"
    assert p.cores[0].instructions["mte2"] == 10241
    assert p.gm_read == pytest.approx(8 * 40960 * 1024)
    assert "small_dma" in {a.rule for a in p.pipeline.advice}


def test_a_directory_without_msprof_files_is_an_error_that_says_so(tmp_path):
    with pytest.raises(MsprofError, match="OpBasicInfo"):
        read_dir(tmp_path)
