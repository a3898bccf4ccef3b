"""How CANN's Matmul tiling splits C over cores when the single-core problem is given with
SetShape (its general path): choose mDim × nDim ≤ the core count that loads the least of A and
B into L1 per core, preferring fewer L0-sized loops, then more cores.

Everything counts in fractal units: m16 = ⌈M/16⌉, n16 = ⌈N/16⌉ rows/columns of 16, k = ⌈K/c0⌉
slices of 32 bytes. Kept to the plain case (one batch, no split K, no operand resident in L1);
its result decides which axis a sample's kernel offsets by blockIdx, so it follows CANN's rules
step by step: candidate factors, the L1 load-size estimate, the "big package" condition and
the mapping of odd single-core sizes onto sizes with enough factors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

_BIG = 2**31 - 1


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def map_shape(shape: int, round_up: bool) -> int:
    """Sizes from 16 up mapped onto powers of two (capped at 1024), as CANN's MapShape."""
    seed = 16
    if shape < seed:
        return shape
    while seed < 1024:
        if seed < shape <= seed * 2:
            break
        seed *= 2
    return seed * 2 if round_up else seed


def _divisor_count(n: int) -> int:
    return sum(1 for i in range(1, n + 1) if n % i == 0)


def _layer_count(n: int, lo: int, hi: int) -> int:
    return max((_divisor_count(f) for f in range(hi, lo - 1, -1) if n % f == 0), default=0)


def _enough_factors(dim: int) -> bool:
    """A single-core size that splits into base blocks in enough ways."""
    if dim <= 8:
        return True
    l0 = _layer_count(dim, 1, 64)
    l1 = _layer_count(dim, 65, 128) if dim > 128 else 0
    return not (l0 <= 2 or (dim > 128 and l0 + l1 <= 4))


def best_single_core(ori: int, mapped: int, cores: int) -> int:
    """The per-core size nearest ⌈ori/cores⌉ (walking toward ⌈mapped/cores⌉) with enough factors."""
    if cores == 1 and _enough_factors(ori):
        return ori
    best, target = _cdiv(ori, cores), _cdiv(mapped, cores)
    while best != target:
        if _enough_factors(best):
            return best
        best += 1 if best < target else -1
    return best


@dataclass
class _Best:
    m: int = 1
    n: int = 1
    load: int = _BIG
    cores: int = 1
    loops: int = _BIG
    big_package: bool = False


def _load_size(cm: int, cn: int, k: int, dm: int, dn: int, m16: int, n16: int, l1: int) -> int:
    """Fractal rows of A and B each core brings into L1 for a dm × dn split (CANN's estimate)."""
    k_bytes = k * 16 * 16 * 2
    n0 = min(16, cn)
    m0 = min(16, min(cm, 128 // n0) if n0 else 0)
    k0 = min(64 // m0, 64 // n0, k) if m0 and n0 else k
    frac = k0 * 16 * 32
    if (cm + cn) * k_bytes <= l1 or (cm + 2 * n0) * k_bytes <= l1 or (cn + 2 * m0) * k_bytes <= l1:
        return m16 * dn + n16 * dm
    if (n0 * k_bytes + m0 * frac) * 2 > l1 and (m0 * k_bytes + n0 * frac) * 2 > l1:
        return m16 * _cdiv(n16, n0) + n16 * _cdiv(m16, m0)
    if (m0 + n0) * k_bytes * 2 <= l1:
        m1 = _cdiv(l1 - n0 * k_bytes * 2, k_bytes * 2 * m0) * m0
        n1 = _cdiv(l1 - m0 * k_bytes * 2, k_bytes * 2 * n0) * n0
        return min(m16 * dn + n16 * _cdiv(m16, m1), n16 * dm + m16 * _cdiv(n16, n1))
    best = _BIG
    if cm * k_bytes + n0 * frac * 2 <= l1 or (m0 * k_bytes + n0 * frac) * 2 <= l1:
        best = m16 * dn + n16 * _cdiv(m16, m0)
    if cn * k_bytes + m0 * frac * 2 <= l1 or (n0 * k_bytes + m0 * frac) * 2 <= l1:
        best = min(best, n16 * dm + m16 * _cdiv(n16, n0))
    return best


def _loops(cm: int, cn: int, k: int) -> int:
    """L0-sized steps (at most 128 fractals of C, 64 of A or B) of one core's work."""
    n0 = min(16, cn, 64)
    m0 = min(cm, 128 // n0, 64) if n0 else 0
    n0 = min(cn, 128 // m0, 64) if m0 else 0
    m0 = min(cm, 128 // n0, 64) if n0 else 0
    k0 = min(64 // m0, 64 // n0, k) if m0 and n0 else k
    return _cdiv(cm, m0) * _cdiv(cn, n0) * _cdiv(k, k0)


def _candidates(n16_or_m16: int, mapped: int, cores: int) -> list[int]:
    return [
        i
        for i in range(1, min(cores, n16_or_m16) + 1)
        if n16_or_m16 % i == 0 or mapped % i == 0 or cores % i == 0
    ]


def _add(factors: list[int], f: int) -> list[int]:
    return sorted(set(factors) | {f})


def split_dims(
    m: int, n: int, k: int, c0: int, cores: int, l1: int, l0c: int, l0a: int, trans_a: bool, trans_b: bool
):
    """(mDim, nDim) of C over `cores` for an M × N × K matmul (K in elements of c0 per 32 B)."""
    m16, n16, k32 = _cdiv(m, 16), _cdiv(n, 16), _cdiv(k, c0)
    m_map, n_map = map_shape(m16, True), map_shape(n16, True)
    if (
        n16 * m16 <= cores
        and m16 * k32 <= l0a // 512
        and n16 * k32 <= l0a // 512
        and m16 * n16 <= l0c // 1024
    ):
        n_dim = 1 if n16 <= 32 else n_map // 32  # a mini shape: whole in one core's buffers
        m_dim = 1 if m16 <= 32 else m_map // 32
        cn = n16 if n_dim == 1 else _cdiv(n_map, n_dim)
        cm = m16 if m_dim == 1 else _cdiv(m_map, m_dim)
        return _cdiv(m16, cm), _cdiv(n16, cn)
    ms, ns = _candidates(m16, m_map, cores), _candidates(n16, n_map, cores)
    if cores > 1:
        opt = math.sqrt(m16 / n16 * cores)
        md, nd = math.ceil(opt), math.ceil(cores / opt)
        ms = _add(_add(ms, md), cores // nd if nd else 1)
        ns = _add(_add(ns, nd), cores // md if md else 1)
    best = _Best()
    for dn in ns:
        if not 0 < dn <= cores:
            continue
        for dm in ms:
            if not 0 < dn * dm <= cores:
                continue
            cm, cn = _cdiv(m16, dm), _cdiv(n16, dn)
            # "big package": keep each core's B (A when transposed) at least 16 fractals wide once
            # a split that does has been found (2: take this one, 1: refuse it)
            wide = not ((not trans_b and n16 >= 16 and cn < 16) or (trans_a and m16 >= 16 and cm < 16))
            if trans_b and not trans_a:
                package = 0
            elif not best.big_package:
                package = 2 if wide else 0
            else:
                package = 0 if wide else 1
            load = _load_size(cm, cn, k32, dm, dn, m16, n16, l1)
            loops = _loops(cm, cn, k32)
            used = dm * dn
            fewer_loops = package == 0 and (loops < best.loops or (used > best.cores and loops == best.loops))
            less_load = not fewer_loops and used == best.cores and load < best.load
            if (package == 2 or fewer_loops or less_load) and package != 1:
                best = _Best(dm, dn, load, used, loops, (cn >= 16 if not trans_b else True)
                             and (cm >= 16 if trans_a else True) and used > 1)  # fmt: skip
    cm, cn = _cdiv(m16, best.m), _cdiv(n16, best.n)
    bn, bm = best_single_core(n16, n_map, best.n), best_single_core(m16, m_map, best.m)
    if _cdiv(n16, bn) * _cdiv(m16, bm) <= cores:
        cm, cn = bm, bn
    return min(_cdiv(m16, cm), cores), min(_cdiv(n16, cn), cores)
