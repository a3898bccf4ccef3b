"""Tiling structs are filled by name: a field the tiling object lacks is an error, not a silent 0."""

from cxxop import copy_kernel, make_op

from asc_tui.devkit.run.runner import RunRequest, run

STRUCT = "struct TD {\n    uint32_t n;\n    float scaleTypo;\n};\n"


def _kernel(tmp_path, fetch: str):
    kernel = copy_kernel("Muls(t, t, td.scaleTypo, n);")
    kernel = kernel.replace("uint32_t n)\n{", fetch + "\n    uint32_t n = td.n;")
    kernel = kernel.replace("using namespace AscendC;\n", "using namespace AscendC;\n" + STRUCT)
    return make_op(
        tmp_path, kernel, fields="n: int\n    scale: float", tiling="case.n, 0.5", golden="x * 0.5"
    )


def _assert_names_the_field(report, path):
    assert report.errors, "a missing tiling field must not read as 0"
    err = report.errors[0]
    assert "scaleTypo" in err.message and "TD" in err.message, err.message
    assert err.file == str(path) and err.line == 6, (err.file, err.line)  # the field's line in the struct
    assert "k.asc" not in err.message and "copy.asc:6:5" in err.message


def test_a_struct_parameter_field_missing_from_the_tiling_is_an_error(tmp_path):
    path = _kernel(tmp_path, "TD td)\n{")
    _assert_names_the_field(run(RunRequest(str(path))), path)


def test_a_get_tiling_data_field_missing_from_the_tiling_is_an_error(tmp_path):
    path = _kernel(tmp_path, "GM_ADDR tiling)\n{\n    GET_TILING_DATA_WITH_STRUCT(TD, td, tiling);")
    _assert_names_the_field(run(RunRequest(str(path))), path)


def test_a_field_with_a_default_member_initialiser_may_be_missing(tmp_path):
    path = _kernel(tmp_path, "TD td)\n{")
    src = path.read_text().replace("float scaleTypo;", "float scaleTypo = 0.5f;")
    path.write_text(src)
    report = run(RunRequest(str(path)))
    assert not report.errors, report.errors
    assert report.precision.verdict == "PASS"
