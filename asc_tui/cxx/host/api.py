"""The library calls host code makes: ACL (onto `acl.AclRuntime`), `data_utils.h`'s
ReadFile/WriteFile, printf, and the few `std::`/libc helpers samples use."""

from __future__ import annotations

import re

import numpy as np

from .acl import Ptr
from .values import Ref, base_type


def _ok(*_a):
    return 0


def _printf(h, where, args):
    if not args:
        return 0
    fmt = str(args[0])
    vals = list(args[1:])
    conv = re.sub(
        r"%(?:l|ll|z|h|hh)?([diuxXfeEgGsc%p])",
        lambda m: "%" + ("d" if m.group(1) in "iu" else m.group(1)),
        fmt,
    )
    try:
        h.acl.out.write(conv % tuple(vals))
    except (TypeError, ValueError):
        h.acl.out.write(fmt)
    return 0


def _acl(h, where, name, a):
    acl = h.acl
    if name in ("aclInit", "aclFinalize", "aclrtSetDevice", "aclrtResetDevice", "aclrtSynchronizeStream",
                "aclrtSynchronizeDevice", "aclrtDestroyStream", "aclrtSetCurrentContext",
                "aclrtDestroyContext", "aclrtResetDeviceForce"):  # fmt: skip
        return 0
    if name == "aclrtCreateStream":
        acl.streams += 1
        a[0].set(object())
        return 0
    if name == "aclrtCreateContext":
        a[0].set(object())
        return 0
    if name == "aclrtMalloc":
        return acl.alloc(where, a[0], a[1], True, name)
    if name == "aclrtMallocHost":
        return acl.alloc(where, a[0], a[1], False, name)
    if name == "aclrtFree":
        return acl.free(where, a[0], True, name)
    if name == "aclrtFreeHost":
        return acl.free(where, a[0], False, name)
    if name == "aclrtMemcpy":
        if isinstance(a[2], Ref) and base_type(a[2].env[a[2].name][1]) in h.struct_defs:
            a = list(a)  # `&desc` of a host struct: its C byte image is what is copied
            a[2] = _image(h, a[2], where)
        return acl.memcpy(where, *a[:5])
    if name == "aclrtMemset":
        return acl.memset(where, *a[:4])
    if name in ("aclrtGetDeviceCount",):
        a[0].set(1)
        return 0
    return None


def _image(h, ref, where) -> Ptr:
    """A host buffer holding the bytes of the struct variable `ref` names."""
    from .acl import Buffer

    value, ttext = ref.env[ref.name]
    raw = h.struct_bytes(value, ttext, ref.env)
    buf = Buffer(ref.name, len(raw), False, where)
    buf.data[:] = np.frombuffer(raw, np.uint8)
    return Ptr(buf)


def _within(h, where, call: str, p: Ptr, n: int, what: str) -> None:
    """`n` bytes from `p` lie inside its buffer (a C library call would overrun it silently)."""
    size = len(p.buf.data)
    if n < 0 or p.off < 0 or p.off + n > size:
        h.acl.fail(
            where,
            f"{call} {what} {p.buf.name!r}: {n} bytes from offset {p.off} overrun its {size} bytes",
        )


def call_builtin(h, name: str, args: list, node):
    """(True, value) when `name` is a library call this module knows; else (False, None)."""
    where = h.where(node)
    short = name.split("::")[-1]
    if short.startswith("acl"):
        v = _acl(h, where, short, args)
        if v is not None:
            return True, v
        h.unsupported(node, f"ACL call {short}")
    if short == "ReadFile":
        return True, h.acl.read_file(where, *args[:4])
    if short == "WriteFile":
        return True, h.acl.write_file(where, *args[:3])
    if short in ("printf", "PRINTF"):
        return True, _printf(h, where, args)
    if short in ("fprintf",):
        return True, _printf(h, where, args[1:])
    if short == "malloc":
        return True, h.acl.alloc(where, None, args[0], False, "malloc")
    if short == "free":
        return True, (h.acl.free(where, args[0], False, "free") if isinstance(args[0], Ptr) else 0)
    if short in ("min", "max") and name.startswith("std"):
        return True, (min if short == "min" else max)(args)
    if short in ("abs", "fabs"):
        return True, abs(args[0])
    if short in ("memset",) and isinstance(args[0], Ptr):
        p = args[0]
        _within(h, where, short, p, int(args[2]), "destination")
        p.buf.data[p.off : p.off + int(args[2])] = int(args[1]) & 0xFF
        return True, p
    if short in ("memcpy", "memcpy_s") and isinstance(args[0], Ptr):
        dst, src, n = args[0], args[-2], int(args[-1])
        if isinstance(src, Ptr):
            _within(h, where, short, src, n, "source")
            _within(h, where, short, dst, n, "destination")
            dst.buf.data[dst.off : dst.off + n] = src.buf.data[src.off : src.off + n]
            return True, 0
    if short in ("CHECK_ACL", "ACL_CHECK", "CHECK_RET", "static_cast", "void"):
        return True, args[0] if args else 0
    if name == "std::copy" or short.startswith("ostream_iterator"):
        return True, 0  # printing a range to std::cout: the emulated run has nothing to add
    if name == "std::equal" and all(isinstance(a, Ptr) for a in args[:3]):
        first, last, other = args[:3]
        n = last.off - first.off
        _within(h, where, name, first, n, "range")
        _within(h, where, name, other, n, "second range")
        return True, bool(
            (first.buf.data[first.off : last.off] == other.buf.data[other.off : other.off + n]).all()
        )
    if short in ("exit",):
        raise SystemExit(int(args[0]) if args else 0)
    return False, None
