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
        values = cmake_defines(self.cmake, self.root, given) if given else self.cmake_vars
        return {k: str(given.get(k, v)) for k, v in values.items()}

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


def cmake_defines(cmake: Path | None, root: Path, given: dict | None = None) -> dict[str, str]:
    """`target_compile_definitions(… NAME=${VAR} …)` / `add_definitions(-DNAME)` of a
    CMakeLists.txt, in the branches of `if()/elseif()/else()` its variables select. A variable
    is `given` (the user's `--param VAR=x`), else the README's `VAR=x`, else its `set(VAR x)`,
    else 0."""
    import re

    if cmake is None:
        return {}
    text = re.sub(r"#[^\n]*", "", cmake.read_text(encoding="utf-8", errors="replace"))
    readme = ""
    for r in ("README.md", "README_en.md"):
        if (root / r).is_file():
            readme += (root / r).read_text(encoding="utf-8", errors="replace")
    given = {k: str(v) for k, v in (given or {}).items()}
    env: dict[str, str] = {}

    def var(name: str) -> str | None:
        if name in given:
            return given[name]
        d = re.search(r"^\s*" + re.escape(name) + r"=(\w+)", readme, re.M)
        return d.group(1) if d else env.get(name)

    out: dict[str, str] = {}
    stack: list[list[bool]] = []  # [this branch active, a branch of this if was taken]
    for cmd, args in re.findall(r"\b(\w+)\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)", text):
        cmd = cmd.lower()
        live = all(b[0] for b in stack)
        if cmd == "if":
            ok = live and _cmake_true(args, var)
            stack.append([ok, ok])
        elif cmd in ("elseif", "else") and stack:
            top = stack[-1]
            outer = all(b[0] for b in stack[:-1])
            ok = outer and not top[1] and (cmd == "else" or _cmake_true(args, var))
            top[0], top[1] = ok, top[1] or ok
        elif cmd == "endif" and stack:
            stack.pop()
        elif not live:
            continue
        elif cmd == "set":
            words = args.split()
            if len(words) >= 2 and words[0] not in env:
                env[words[0]] = words[1].strip('"')
        elif cmd in ("target_compile_definitions", "add_definitions"):
            items = args.split()[2:] if cmd == "target_compile_definitions" else args.split()
            for item in items:
                m = re.fullmatch(r"-?D?(\w+)(?:=(.*))?", item)
                if not m or m.group(1) in ("PRIVATE", "PUBLIC", "INTERFACE"):
                    continue
                val = m.group(2) or "1"
                ref = re.fullmatch(r"\$\{(\w+)\}", val)
                out[m.group(1)] = (var(ref.group(1)) or "0") if ref else val
    return out


def _cmake_true(cond: str, var) -> bool:
    """A CMake `if()` condition of the simple kinds samples use (`[NOT] A STREQUAL "x"`, EQUAL,
    MATCHES, DEFINED, AND/OR); anything else counts as true, so no definition is lost."""
    import re

    words = re.findall(r'"[^"]*"|\S+', cond)

    def value(w: str) -> str:
        if w.startswith('"'):
            w = w[1:-1]
        ref = re.fullmatch(r"\$\{(\w+)\}", w)
        if ref:
            return var(ref.group(1)) or ""
        v = var(w) if not w.startswith('"') and re.fullmatch(r"\w+", w) else None
        return v if v is not None else w

    def term(ws: list[str]) -> bool:
        if ws and ws[0] == "NOT":
            return not term(ws[1:])
        if len(ws) == 2 and ws[0] == "DEFINED":
            return var(ws[1]) is not None
        if len(ws) == 3 and ws[1] in ("STREQUAL", "EQUAL", "MATCHES"):
            a, b = value(ws[0]), value(ws[2]) if ws[1] != "MATCHES" else ws[2].strip('"')
            if ws[1] == "MATCHES":
                return re.search(b, a) is not None
            return a == b
        return True

    return any(all(term(p) for p in _split(c, "AND")) for c in _split(words, "OR"))


def _split(words: list[str], sep: str) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    for w in words:
        if w == sep:
            parts.append([])
        else:
            parts[-1].append(w)
    return parts


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
