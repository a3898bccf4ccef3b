"""Which files make a C++ operator: a kernel `.asc`/`.cpp` and its `.py` spec beside it.

Import-light (pathlib only): operator discovery asks these questions before the emulator or the
translator loads.
"""

from __future__ import annotations

from pathlib import Path

CXX_SUFFIXES = (".asc", ".cpp", ".cc", ".cxx")
HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".inc")


def kernel_for_spec(spec: Path) -> Path | None:
    """The C++ kernel beside a spec file (`add.py` → `add.asc`), if there is one."""
    for s in CXX_SUFFIXES:
        cand = spec.with_suffix(s)
        if cand.is_file():
            return cand
    return None


def spec_for_kernel(kernel: Path) -> Path:
    """Where a kernel's spec lives: beside it, same stem, `.py`."""
    return kernel.with_suffix(".py")


def cxx_kernels(base: Path) -> list[Path]:
    """C++ operators in `base` and `base/cpp`: kernels whose spec is beside them."""
    out = []
    for d in (base, base / "cpp"):
        if d.is_dir():
            out += [
                k
                for k in sorted(d.iterdir())
                if k.suffix in CXX_SUFFIXES and not k.stem.startswith("_") and spec_for_kernel(k).is_file()
            ]
    return out


# -- sample directories (asc-devkit `examples/` style: kernel + host main() + data scripts) --
class SampleLayout:
    """What a sample directory holds: the kernel file, the host file (the same `.asc`, or
    `main.cpp`), the data scripts (optional) and the architecture CMakeLists.txt names."""

    def __init__(self, root: Path, kernel: Path, main: Path | None):
        self.root = root
        self.kernel = kernel
        self.main = main  # None: main() is in the kernel file
        s = root / "scripts"
        self.gen_data = s / "gen_data.py" if (s / "gen_data.py").is_file() else None
        self.verify = s / "verify_result.py" if (s / "verify_result.py").is_file() else None
        self.cmake = root / "CMakeLists.txt" if (root / "CMakeLists.txt").is_file() else None
        self.arch = sample_arch(self.cmake)
        self.cmake_vars = cmake_defines(self.cmake, root)

    def defines(self, given: dict | None = None) -> dict[str, str]:
        """The `-D` macros the build passes (`target_compile_definitions`), `given` first."""
        given = given or {}
        return {k: str(given.get(k, v)) for k, v in self.cmake_vars.items()}

    def readme_vars(self) -> dict[str, str]:
        """`VAR=value` assignments in the README's shell lines (the documented defaults)."""
        import re

        out: dict[str, str] = {}
        for readme in ("README.md", "README_en.md"):
            f = self.root / readme
            if f.is_file():
                for k, v in re.findall(
                    r"(?:^|[\s`])([A-Z][A-Z0-9_]+)=([\w.-]+)", f.read_text(errors="replace"), re.M
                ):
                    out.setdefault(k, v)
        return out

    def script_args(self, script: str, defines: dict[str, str]) -> list[str]:
        """The arguments the README's run order gives `scripts/<script>` (`$VAR` filled in)."""
        import re
        import shlex

        for readme in ("README.md", "README_en.md"):
            f = self.root / readme
            if not f.is_file():
                continue
            pat = r"python3?\s+\S*scripts/" + re.escape(script) + r"([^\n#;&|]*)"
            m = re.search(pat, f.read_text(errors="replace"))
            if m:
                known = {**self.readme_vars(), "ASC_ARCH": self.arch, **defines}
                text = re.sub(
                    r"\$\{?(\w+)\}?", lambda v, known=known: known.get(v.group(1), v.group(0)), m.group(1)
                )
                return shlex.split(text)
        return []

    @property
    def name(self) -> str:
        return self.root.name


def sample_arch(cmake: Path | None) -> str:
    """`CMAKE_ASC_ARCHITECTURES` (or `--npu-arch=`) of a CMakeLists.txt; dav-2201 by default."""
    import re

    if cmake is None:
        return "dav-2201"
    text = cmake.read_text(encoding="utf-8", errors="replace")
    m = re.search(r"CMAKE_ASC_ARCHITECTURES\s+\"?(dav-\w+)", text) or re.search(r"--npu-arch=(dav-\w+)", text)
    return m.group(1) if m else "dav-2201"


def cmake_defines(cmake: Path | None, root: Path) -> dict[str, str]:
    """`target_compile_definitions(… NAME=${VAR} …)` of a CMakeLists.txt, with each variable's
    default: a `set(VAR x)`, else the README's `VAR=x`, else 0."""
    import re

    if cmake is None:
        return {}
    text = cmake.read_text(encoding="utf-8", errors="replace")
    readme = ""
    for r in ("README.md", "README_en.md"):
        if (root / r).is_file():
            readme += (root / r).read_text(encoding="utf-8", errors="replace")
    out = {}
    items = [i for b in re.findall(r"target_compile_definitions\s*\(([^)]*)\)", text) for i in b.split()[2:]]
    items += [i for b in re.findall(r"add_definitions\s*\(([^)]*)\)", text) for i in b.split()]
    for item in items:
        if True:
            m = re.fullmatch(r"-?D?(\w+)(?:=(.*))?", item)
            if not m:
                continue
            name, val = m.group(1), m.group(2) or "1"
            var = re.fullmatch(r"\$\{(\w+)\}", val)
            if var:
                d = re.search(r"^\s*" + var.group(1) + r"=(\w+)", readme, re.M) or re.search(
                    r"set\(\s*" + var.group(1) + r"\s+\"?([\w.-]+)", text
                )
                val = d.group(1) if d else "0"
            out[name] = val
    return out


def _has_main(path: Path) -> bool:
    import re

    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(r"^\s*(?:int|int32_t)\s+main\s*\(", text, re.M) is not None


def sample_layout(d: Path) -> SampleLayout | None:
    """The sample in directory `d`: `<name>.asc` with main(), or a kernel `.cpp` + `main.cpp`."""
    d = Path(d)
    if not d.is_dir():
        return None
    srcs = [p for p in sorted(d.iterdir()) if p.suffix in CXX_SUFFIXES and p.is_file()]
    if any(spec_for_kernel(p).is_file() for p in srcs):
        return None  # a kernel with a spec is a C++ operator, not a sample
    main = d / "main.cpp"
    if main.is_file():
        kern = [
            p for p in srcs if p != main and "__global__" in p.read_text(encoding="utf-8", errors="replace")
        ]
        return SampleLayout(d, kern[0], main) if kern else None
    for p in srcs:
        if _has_main(p) and "__global__" in p.read_text(encoding="utf-8", errors="replace"):
            return SampleLayout(d, p, None)
    return None


def find_samples(root: Path) -> list[SampleLayout]:
    """Every sample directory under `root` (itself included), sorted by path."""
    import os

    root = Path(root)
    out = []
    for dirpath, dirnames, _files in os.walk(root, followlinks=True):
        dirnames[:] = sorted(n for n in dirnames if n not in ("build", "scripts", ".git", "input", "output"))
        s = sample_layout(Path(dirpath))
        if s is not None:
            out.append(s)
    return sorted(out, key=lambda s: str(s.root))


def sample_for(path: Path) -> SampleLayout | None:
    """The sample a path belongs to: the directory itself, or a file in it or its scripts/."""
    p = Path(path)
    if p.is_dir():
        return sample_layout(p)
    for d in (p.parent, p.parent.parent):
        s = sample_layout(d)
        if s is not None and (p.parent == s.root or p.parent == s.root / "scripts"):
            return s
    return None
