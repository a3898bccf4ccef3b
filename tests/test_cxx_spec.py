"""A C++ operator's spec is where its CASES, PARAMS and CONSTRAINTS errors point."""

from cxxop import copy_kernel, make_op

from asc_tui.devkit.run.runner import RunRequest, run


def test_a_constraint_violation_names_the_spec_and_its_constraints_line(tmp_path):
    path = make_op(tmp_path, copy_kernel(), params='{"block_dim": Param(1, values=[1, 2])}')
    spec = tmp_path / "copy.py"
    spec.write_text(
        spec.read_text() + '\nCONSTRAINTS = [Constraint(lambda c, p: p.block_dim == 1, "one block")]\n'
    )
    spec.write_text(spec.read_text().replace("import In,", "import Constraint, In,"))
    report = run(RunRequest(str(path), params={"block_dim": 2}))
    assert report.errors and "one block" in report.errors[0].message
    err = report.errors[0]
    lines = spec.read_text().splitlines()
    assert err.file == str(spec), err.file
    assert err.line is not None and lines[err.line - 1].startswith("CONSTRAINTS"), err.line


def test_an_unknown_case_names_the_spec(tmp_path):
    path = make_op(tmp_path, copy_kernel())
    report = run(RunRequest(str(path), case="nope"))
    err = report.errors[0]
    spec = tmp_path / "copy.py"
    assert err.file == str(spec) and spec.read_text().splitlines()[err.line - 1].startswith("CASES")


def test_a_failed_build_header_names_no_none_case(tmp_path):
    import io

    from asc_tui.cli.debug_cmd import print_report
    from asc_tui.devkit.debug.debugger import DebugRequest, debug

    path = make_op(tmp_path, copy_kernel())
    (tmp_path / "copy.py").write_text((tmp_path / "copy.py").read_text() + "\nsyntax error(\n")
    out = io.StringIO()
    print_report(debug(DebugRequest(str(path))), out)
    header = out.getvalue().splitlines()[0]
    assert "None" not in header and "copy" in header, header
