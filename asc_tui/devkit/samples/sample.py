"""A sample directory run as an operator: gen_data → host main() → verify, in a scratch copy.

The documented run order of the public samples is `mkdir build && cd build`, `python3
../scripts/gen_data.py`, `./demo`, `python3 ../scripts/verify_result.py output/output.bin
output/golden.bin`. `run_sample` does the same in a scratch copy of the directory (the user's
files are never written), with `main()` interpreted onto the ACL twin (cxx/host/run.py); the
kernels and headers are read from the user's own files so every error names them. The output is
checked twice: by the sample's verify script (exit code and output kept) and by asc-tui's
precision check against `output/golden.bin`.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import runpy
import shutil
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

from ...cxx.files import SampleLayout, sample_for, sample_layout
from ...npu.errors import BuildError, ErrorInfo, OperatorError
from ..chips import ARCH_CHIPS, chip_name, load_chip  # noqa: F401 - ARCH_CHIPS: tests
from ..precision import PrecisionReport, compare
from ..pristine import SampleFiles
from .result import SampleRun

#: A sample's one case: it runs what its gen_data script generates (a spec could name others).
SAMPLE_CASE = "default"
#: Constructs outside the scope (the SIMT/register API of dav-3510).
OUT_OF_SCOPE_RE = re.compile(r"\b(__simd_vf__|__simt_vf__|reg_\w+|AscendC::Reg::|MicroAPI::)")


class ScriptTimeout(Exception):
    pass


def out_of_scope(s: SampleLayout) -> str | None:
    """Why a sample is out of scope (another architecture, the register/SIMT API), or None."""
    if s.arch not in ARCH_CHIPS:
        return f"architecture {s.arch} (only dav-2201, the 910B family)"
    for f in (s.kernel, s.main):
        if f is None:
            continue
        for i, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            m = OUT_OF_SCOPE_RE.search(line.split("//")[0])
            if m:
                return f"register/SIMT API {m.group(1)} at {f.name}:{i}"
    return None


#: The files of a sample that make its result: the code, its headers, the build and the scripts.
SOURCE_GLOBS = ("*.asc", "*.cpp", "*.cc", "*.h", "*.hpp", "CMakeLists.txt", "scripts/*.py")


def source_hash(s: SampleLayout) -> str:
    """A digest of the sample's sources (history tells a code change from a model change)."""
    digest = hashlib.sha256()
    for pattern in SOURCE_GLOBS:
        for f in sorted(s.root.glob(pattern)):
            if f.is_file():
                digest.update(f.relative_to(s.root).as_posix().encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()[:16]


def is_sample(ref: str | Path) -> bool:
    return Path(ref).is_dir() and sample_layout(Path(ref)) is not None


def run_script(path: Path, argv: list[str], cwd: Path, timeout_s: float | None) -> tuple[int, str, float]:
    """Run a sample's Python script in this process (numpy is loaded already), in `cwd`, with
    `argv`; (exit code, its output, seconds). A raise is exit 1 with the traceback's last frame
    of the script; a hang past `timeout_s` raises ScriptTimeout."""
    out = io.StringIO()
    old_cwd, old_argv, old_path = os.getcwd(), sys.argv, list(sys.path)
    code = 0
    t0 = time.perf_counter()

    def fire(signum, frame):
        raise ScriptTimeout

    use_alarm = timeout_s and hasattr(signal, "setitimer") and _main_thread()
    if use_alarm:
        prev = signal.signal(signal.SIGALRM, fire)
        signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        os.chdir(cwd)
        sys.argv = [str(path), *argv]
        sys.path.insert(0, str(path.parent))
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                runpy.run_path(str(path), run_name="__main__")
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except ScriptTimeout:
                raise
            except Exception as exc:
                frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
                where = f"{path.name}:{frames[-1].lineno}: " if frames else ""
                out.write(f"{where}{type(exc).__name__}: {exc}\n")
                code = 1
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, prev)
        os.chdir(old_cwd)
        sys.argv, sys.path[:] = old_argv, old_path
    return code, out.getvalue(), time.perf_counter() - t0


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def output_dtype(s: SampleLayout) -> np.dtype:
    """The output's dtype: what the verify script reads it as (else float32)."""
    if s.verify is not None:
        text = s.verify.read_text(encoding="utf-8", errors="replace")
        m = re.search(r"dtype\s*=\s*np\.(\w+)", text)
        var = re.search(r"dtype\s*=\s*([A-Za-z_]\w*)\s*[,)]", text)
        if m is None and var:  # `dtype=output_type` after `output_type = np.int32`
            m = re.search(rf"\b{var.group(1)}\s*=\s*np\.(\w+)", text)
        if m and m.group(1) in ("float32", "float16", "int32", "int8", "uint8", "int16", "int64", "uint32"):
            return np.dtype(m.group(1))
    return np.dtype(np.float32)


def scratch_copy(s: SampleLayout) -> Path:
    """A copy of the sample directory (without build/, input/, output/) and its `build/`."""
    base = Path(tempfile.mkdtemp(prefix="asc-tui-sample-"))
    dst = base / s.name
    shutil.copytree(s.root, dst, ignore=shutil.ignore_patterns("build", "input", "output", ".git"))
    (dst / "build").mkdir()
    return dst / "build"


def run_sample(request, sanitizer=None, configure=None) -> dict:
    """The whole loop for one sample directory (a `RunRequest`); the user's mistakes become
    `errors`. Returns the `RunReport` fields (the runner builds it; stages as tuples), the
    sample's own as a frozen `SampleRun`."""
    rep = _run_sample(request, sanitizer, configure)
    return dict(rep, sample=SampleRun.of(rep["sample"]))


def _run_sample(request, sanitizer=None, configure=None) -> dict:
    started = time.perf_counter()
    s = sample_for(Path(request.op).resolve())
    stages: list[tuple] = []
    errors: list[ErrorInfo] = []
    extra: dict = {"launches": [], "verify": None, "stdout": "", "gen_data_s": None, "status": None}
    rep = dict(
        operator=s.name,
        path=str(s.kernel),
        case=SAMPLE_CASE,
        chip=None,
        params=dict(request.params),
        block_dim=None,
        stages=(),
        emulation=None,
        precision=None,
        errors=(),
        sample=extra,
        source_hash=source_hash(s),
    )
    if request.case not in (None, SAMPLE_CASE):
        errors.append(_no_such_case(s, request.case).info())
        return dict(rep, case=str(request.case), errors=tuple(errors))
    why = out_of_scope(s)
    if why and not request.chip:
        extra["status"] = "OUT OF SCOPE"
        errors.append(ErrorInfo("scope", f"out of scope: {why}", str(s.kernel), None, None, None))
        return dict(rep, errors=tuple(errors))
    chip = load_chip(chip_name(request.chip, arch=s.arch))
    rep = dict(rep, chip=chip.name)
    defines = s.defines(request.params)
    build = scratch_copy(s)
    timeout = request.timeout_s
    step = "build"
    try:
        from ...cxx.check import check_unit

        for unit in (s.kernel, s.main):  # the whole C++ of the sample, before any script runs
            if unit is not None:
                check_unit(str(unit), defines)
        step = "gen_data"
        if s.gen_data is not None:
            _gen_data(s, build, defines, timeout, extra, stages)
        step = "emulate"
        em, block_dim, overwritten = _emulate(
            s, build, chip, request, started, defines, sanitizer, configure, extra, stages, errors
        )
        rep = dict(rep, emulation=em, block_dim=block_dim)
    except OperatorError as exc:
        errors.append(exc.info())
        stages.append((step, 0.0, False, exc.message))
        extra["status"] = "FAIL"
        _cleanup(build)
        return dict(rep, stages=tuple(stages), errors=tuple(errors))
    out_bin, golden = build / "output" / "output.bin", build / "output" / "golden.bin"
    if s.verify is not None and golden.is_file():
        _verify(s, build, defines, timeout, extra, stages, errors)
    precision = _precision(s, out_bin, golden, overwritten, extra, errors)
    if precision is None:  # (else its verdict carries them)
        errors += [ErrorInfo("precision", o.message, o.file, o.line, None, None) for o in overwritten]
    _cleanup(build)
    return dict(rep, stages=tuple(stages), errors=tuple(errors), precision=precision)


def _gen_data(s: SampleLayout, build: Path, defines: dict, timeout, extra: dict, stages: list) -> None:
    """Run scripts/gen_data.py in the build directory; a failure or timeout is a `BuildError`
    naming the script (and its line when the traceback gives one)."""
    t0 = time.perf_counter()
    try:
        code, text, secs = run_script(
            build.parent / "scripts" / "gen_data.py",
            s.script_args("gen_data.py", defines),
            build,
            timeout,
        )
    except ScriptTimeout:
        raise BuildError(f"scripts/gen_data.py did not finish in {timeout:g} s", str(s.gen_data)) from None
    extra["gen_data_s"] = secs
    extra["gen_data_output"] = text
    if code != 0:
        line = _script_line(text, s.gen_data.name)
        raise BuildError(
            f"scripts/gen_data.py failed (exit {code}): {text.strip()[-300:]}", str(s.gen_data), line
        )
    stages.append(("gen_data", time.perf_counter() - t0, True, f"{secs * 1000:.0f} ms"))


def _emulate(
    s, build: Path, chip, request, started: float, defines: dict, sanitizer, configure, extra, stages, errors
):
    """Run the host main() with its kernel launches emulated, keeping gen_data.py's files as
    written; returns (the last launch's result, its block count, the inputs main() overwrote)."""
    t1 = time.perf_counter()
    overrides = {k: _num(v) for k, v in request.params.items() if k not in defines}
    _check_params(s, overrides, defines)
    guard = SampleFiles(build, _outputs(s, build, defines))
    left = time_left(request.timeout_s, started)
    acl = _host(s, build, chip, request, left, overrides, defines, sanitizer, configure, guard.before_write)
    overwritten = guard.restore()  # verify and the golden read gen_data.py's files as written
    extra["stdout"] = acl.out.getvalue()
    extra["exit_code"] = acl.exit_code
    if acl.exit_code:
        errors.append(
            ErrorInfo("exit", f"main() returned {acl.exit_code}", str(s.main or s.kernel), None, None, None)
        )
    extra["launches"] = [
        {"kernel": ln.kernel, "line": ln.line, "blocks": ln.blocks, "time_us": ln.result.time_us}
        for ln in acl.launches
    ]
    extra["emulations"] = [ln.result for ln in acl.launches]
    em = acl.launches[-1].result if acl.launches else None
    n = len(acl.launches)
    stages.append(("emulate", time.perf_counter() - t1, True, f"main() ran, {n} launch(es)"))
    return em, (acl.launches[-1].blocks if n else None), overwritten


def _verify(
    s: SampleLayout, build: Path, defines: dict, timeout, extra: dict, stages: list, errors: list
) -> None:
    """Run scripts/verify_result.py on main()'s output; its exit code is the sample's own verdict."""
    t2 = time.perf_counter()
    try:
        code, text, _secs = run_script(
            build.parent / "scripts" / "verify_result.py",
            s.script_args("verify_result.py", defines) or ["output/output.bin", "output/golden.bin"],
            build,
            timeout,
        )
    except ScriptTimeout:
        code, text = 1, f"verify_result.py did not finish in {timeout:g} s"
    extra["verify"] = {"exit": code, "output": text}
    stages.append(("verify", time.perf_counter() - t2, code == 0, f"verify_result.py exit {code}"))
    if code != 0:
        errors.append(
            ErrorInfo(
                "verify",
                # (its output is the report's sample["verify"], shown once, after the precision line)
                f"verify_result.py failed (exit {code})",
                str(s.verify),
                None,
                None,
                None,
            )
        )


def _precision(s: SampleLayout, out_bin: Path, golden: Path, overwritten, extra: dict, errors: list):
    """The output compared with the golden by asc-tui's own rule (None when there is nothing to
    compare: the reason goes into `extra`)."""
    precision = None
    if golden.is_file() and out_bin.is_file():
        dt = output_dtype(s)
        got, want = np.fromfile(out_bin, dt), np.fromfile(golden, dt)
        if got.size == want.size:
            precision = PrecisionReport((compare("output", got, want),), overwritten)
        else:
            errors.append(
                ErrorInfo(
                    "precision",
                    f"output.bin has {got.size} elements, golden.bin {want.size}",
                    str(s.kernel),
                    None,
                    None,
                    None,
                )
            )
    elif golden.is_file():  # a profiling sample: gen_data writes a golden that main() never meets
        extra["precision"] = "not checked: main() writes no output/output.bin to compare with golden.bin"
    else:
        extra["precision"] = "not checked: no golden"
    return precision


def _outputs(s, build: Path, defines: dict) -> tuple[Path, ...]:
    """The files main() is meant to write: output/output.bin and the verify script's first
    argument (the output it checks)."""
    args = s.script_args("verify_result.py", defines) if s.verify is not None else []
    return (build / "output" / "output.bin", *([build / args[0]] if args else []))


def time_left(timeout_s: float | None, since: float) -> float | None:
    """What is left of a run's timeout for its launches: the emulator's deadline (which names
    the kernel line) then comes before the worker's, which counts from the start of the run."""
    return None if timeout_s is None else max(timeout_s - (time.perf_counter() - since), 0.1)


def _no_such_case(s: SampleLayout, case: str) -> BuildError:
    """A case a sample does not have: at the config's `case` line when it came from there."""
    from ...config import written_at

    message = f"sample {s.name} has one case, {SAMPLE_CASE!r}, not {case!r}"
    written = written_at(case)
    if written is not None:
        file, line, column = written
        return BuildError(f"config case: {message}", file, line, column=column)
    return BuildError(message, str(s.kernel), hint="a sample runs the data its gen_data script writes")


def _host(s, build, chip, request, timeout_s, overrides, defines, sanitizer, configure, before_write=None):
    from ...cxx.host.run import run_host

    old = os.getcwd()
    os.chdir(build)
    try:
        return run_host(
            str(s.kernel),
            str(s.main) if s.main else None,
            chip=chip,
            numeric=not request.timing_only,
            timeout_s=timeout_s,
            overrides=overrides,
            defines=defines,
            sanitizer=sanitizer,
            configure=configure,
            before_write=before_write,
        )
    finally:
        os.chdir(old)


def _check_params(s, overrides: dict, defines: dict) -> None:
    """Every `--param` names a constant of the sample (or a CMake -D definition)."""
    if not overrides:
        return
    from ...cxx.host.run import sample_constants

    known = sample_constants(str(s.kernel), str(s.main) if s.main else None, defines)
    bad = [k for k in overrides if k not in known]
    if bad:
        raise BuildError(
            f"sample {s.name} has no constant {', '.join(map(repr, bad))}; parameters: "
            f"{', '.join(sorted(set(known) | set(defines))) or 'none'}",
            str(s.kernel),
            1,
        )


def _cleanup(build: Path) -> None:
    shutil.rmtree(build.parent.parent, ignore_errors=True)


def _script_line(text: str, name: str) -> int | None:
    m = re.search(re.escape(name) + r":(\d+):", text)
    return int(m.group(1)) if m else None


def _num(v):
    if isinstance(v, str):
        try:
            return int(v, 0)
        except ValueError:
            try:
                return float(v)
            except ValueError:
                return v
    return v
