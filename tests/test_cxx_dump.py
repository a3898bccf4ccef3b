"""asc_dump_gm / asc_dump_ubuf / asc_dump_l1buf / asc_dump_cbuf from C++: the elements at a raw
address land in the run log like printf, with the C++ line."""

import numpy as np
from cxxop import copy_kernel, make_op

from asc_tui.devkit.run.runner import RunRequest, run


def _line(path, needle):
    return next(i for i, s in enumerate(path.read_text().splitlines(), 1) if needle in s)


def test_asc_dumps_print_gm_and_ub_data_at_their_line(tmp_path):
    body = (
        "asc_dump_gm<float>((__gm__ float*)xg.GetPhyAddr(2), 8, 3);\n"
        "    asc_dump_ubuf<float>((__ubuf__ float*)t[2].GetPhyAddr(), 7, 3);"
    )
    path = make_op(tmp_path, copy_kernel(body))
    report = run(RunRequest(str(path), seed=5))
    assert not report.errors, report.errors
    log = {e.line: e.text for e in report.emulation.log}
    gm, ub = log[_line(path, "asc_dump_gm")], log[_line(path, "asc_dump_ubuf")]
    assert gm.startswith("asc_dump_gm id=8 size=3: [") and ub.startswith("asc_dump_ubuf id=7 size=3: [")
    values = [np.array(eval(s.split(": ", 1)[1])) for s in (gm, ub)]  # noqa: S307 - our own log text
    assert values[0].shape == (3,) and np.array_equal(values[0], values[1])  # x[2:5], in GM and in UB
    assert len(set(values[0].tolist())) == 3  # random inputs: three different elements


def test_an_asc_dump_past_the_memory_names_its_line(tmp_path):
    body = "asc_dump_gm<float>((__gm__ float*)xg.GetPhyAddr(60), 1, 8);"
    path = make_op(tmp_path, copy_kernel(body))
    report = run(RunRequest(str(path)))
    (err,) = report.errors
    assert "asc_dump_gm reads bytes [240, 272) of GM buffer" in err.message
    assert err.line == _line(path, "asc_dump_gm")
