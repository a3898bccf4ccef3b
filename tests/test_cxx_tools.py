"""C++ operators in the tools: --apply edits the C++ literal, saves of kernels/headers rerun."""

from cxxop import copy_kernel, make_op

from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.watch import classify
from asc_tui.devkit.tune.apply import choice_free_hash, plan_apply


def test_apply_edits_the_bound_constexpr_literal_in_the_cpp_file(tmp_path):
    path = make_op(
        tmp_path,
        copy_kernel(),
        params='{"DEPTH": Param(1, values=[1, 2]), "block_dim": Param(1, values=[1, 2])}',
    )
    plan = plan_apply(path, {"DEPTH": 2, "block_dim": 2})
    assert plan.changed
    assert "-constexpr int32_t DEPTH = 1;" in plan.diff() and "+constexpr int32_t DEPTH = 2;" in plan.diff()
    assert '+PARAMS = {"DEPTH": Param(2, values=[1, 2]), "block_dim": Param(2' in plan.diff()
    plan.write()
    assert "constexpr int32_t DEPTH = 2;" in path.read_text()
    assert not plan_apply(path, {"DEPTH": 2, "block_dim": 2}).changed


def test_apply_keeps_the_spec_default_in_step_and_the_listing_shows_the_cpp_literal(tmp_path):
    path = make_op(tmp_path, copy_kernel(), params='{"DEPTH": Param(1, values=[1, 2])}')
    plan_apply(path, {"DEPTH": 2}).write()
    assert "Param(2, values=[1, 2])" in (tmp_path / "copy.py").read_text()
    assert load_operator(path).params["DEPTH"].default == 2
    path.write_text(path.read_text().replace("DEPTH = 2;", "DEPTH = 1;"))  # edited by hand
    assert load_operator(path).params["DEPTH"].default == 1  # the C++ literal is the current choice


def test_apply_edits_a_define_in_a_header(tmp_path):
    (tmp_path / "cfg.h").write_text("#pragma once\n#define TILE 64u  // elements\n")
    kernel = '#include "cfg.h"\n' + copy_kernel("PipeBarrier<PIPE_V>();").replace(
        "n * sizeof(float)", "TILE * sizeof(float)"
    )
    path = make_op(tmp_path, kernel, params='{"TILE": Param(64, values=[64, 128])}')
    plan = plan_apply(path, {"TILE": 128})
    plan.write()
    assert (tmp_path / "cfg.h").read_text() == "#pragma once\n#define TILE 128u  // elements\n"


def test_the_tune_cache_key_ignores_the_bound_literals(tmp_path):
    path = make_op(tmp_path, copy_kernel(), params='{"DEPTH": Param(1, values=[1, 2])}')
    before = choice_free_hash(path, "x")
    plan_apply(path, {"DEPTH": 2}).write()
    assert choice_free_hash(path, "x") == before
    path.write_text(path.read_text().replace("DataCopy(yg, t, n);", "DataCopy(yg, t, n); // edited"))
    assert choice_free_hash(path, "x") != before


def test_saves_of_a_kernel_its_spec_or_a_header_rerun(tmp_path):
    (tmp_path / "cpp").mkdir()
    path = make_op(tmp_path / "cpp", copy_kernel())
    spec = path.with_suffix(".py")
    assert classify([(1, str(path))], tmp_path).operators == {path.resolve()}
    assert classify([(1, str(spec))], tmp_path).operators == {path.resolve()}
    (tmp_path / "cpp" / "cfg.h").write_text("")
    assert classify([(1, str(tmp_path / "cpp" / "cfg.h"))], tmp_path).everything


def test_saving_an_included_header_reruns_the_cpp_operator_with_the_new_code(tmp_path):
    import queue

    from asc_tui.devkit.run.runner import RunRequest
    from asc_tui.devkit.run.watch import FileWatcher, Rerunner
    from asc_tui.devkit.run.worker import RunWorker

    ops = tmp_path / "ops"
    (ops / "cpp").mkdir(parents=True)
    (ops / "cpp" / "scale.h").write_text("#pragma once\nconstexpr float S = 2.0f;\n")
    path = make_op(ops / "cpp", '#include "scale.h"\n' + copy_kernel("Muls(t, t, S, n);"), golden="x * 3")
    results: queue.Queue = queue.Queue()
    worker = RunWorker(timeout_s=30)
    rr = Rerunner(worker, lambda p: RunRequest(str(p)), on_result=lambda p, r: results.put((p, r)))
    w = FileWatcher(ops, lambda cs: rr.submit([path] if cs.affects(path) else [])).start()
    try:
        assert w.wait_ready()
        (ops / "cpp" / "scale.h").write_text("#pragma once\nconstexpr float S = 3.0f;\n")
        p, r = results.get(timeout=60)
        assert p == path and r.report.precision.verdict == "PASS"
    finally:
        w.stop()
        rr.stop()
        worker.close()
