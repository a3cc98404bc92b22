#!/usr/bin/env python3
"""An independent check of the f64 reference of the CVO accuracy checker
(golden/src/numerics/cvo/accuracy.rs, docs/cvo.md section 6): the correctly
rounded BF16 result of EXP, SIN, COS, GELU, SQRT and RECIP for all 65,536
inputs, from mpmath at 256 bits, with the DAZ/FTZ rules of docs/numerics.md
section 1.1. Writes one line per input, `func input result` in hex:

    python3 scripts/cvo_reference_mpmath.py > /tmp/cvo-mpmath.txt
    PCCX_CVO_MPMATH=/tmp/cvo-mpmath.txt cargo test -p pccx-golden --release \
        --lib mpmath_agrees -- --ignored

The Rust test then asserts that accuracy.rs's reference gives the same
bits on every input. Needs python3 with mpmath; minutes of CPU.
"""
import sys
from mpmath import mp, mpf, exp, sin, cos, sqrt, erfc, inf

mp.prec = 256


def decode(bits):
    """The operand value after DAZ: ('nan',), ('inf', neg), ('zero', neg) or
    ('fin', neg, mpf)."""
    neg = bool(bits >> 15)
    e = (bits >> 7) & 0xFF
    f = bits & 0x7F
    if e == 0xFF:
        return ('nan',) if f else ('inf', neg)
    if e == 0:
        return ('zero', neg)
    v = mpf(128 + f) * mpf(2) ** (e - 134)
    return ('fin', neg, -v if neg else v)


def round_bf16(v):
    """One rounding of a real to BF16: 8 significant bits, to nearest, ties
    to even, unbounded exponent; then >= 2^128 is Inf, < 2^-126 is the zero
    of the value's sign. Returns (bits, tie) where tie flags an exact or
    too-close midpoint (none expected)."""
    if v == 0:
        # No function here is exactly 0 at a finite non-zero BF16 input.
        raise ValueError("an exact zero result")
    neg = v < 0
    a = -v if neg else v
    m, e = mp.frexp(a)            # a = m * 2^e, m in [0.5, 1)
    scaled = m * 256              # in [128, 256)
    q = int(mp.floor(scaled))
    rem = scaled - q
    tie = abs(rem - mpf(0.5)) < mpf(2) ** -200
    if rem > 0.5 or (rem == 0.5 and q % 2 == 1):
        q += 1
    E = e - 8
    if q == 256:
        q, E = 128, E + 1
    top = E + 7                   # the rounded value is q * 2^E, q in 128..255
    sign = 0x8000 if neg else 0
    if top > 127:
        return sign | 0x7F80, tie
    if top < -126:
        return sign, tie
    return sign | (top + 127) << 7 | (q & 0x7F), tie


def special(func, d):
    """The IEEE result for the non-finite and zero operands (CONTRACT 7)."""
    kind = d[0]
    if kind == 'nan':
        return 0x7FC0
    neg = d[1]
    if func == 'exp':
        return {'inf': 0x0000 if neg else 0x7F80, 'zero': 0x3F80}[kind]
    if func in ('sin', 'cos'):
        if kind == 'inf':
            return 0x7FC0
        return (0x8000 if neg else 0) if func == 'sin' else 0x3F80
    if func == 'gelu':
        if kind == 'inf':
            return 0x8000 if neg else 0x7F80
        return 0x8000 if neg else 0
    if func == 'sqrt':
        if kind == 'inf':
            return 0x7FC0 if neg else 0x7F80
        return 0x8000 if neg else 0
    if func == 'recip':
        if kind == 'inf':
            return 0x8000 if neg else 0
        return 0xFF80 if neg else 0x7F80
    raise ValueError(func)


FUNCS = {
    'exp': exp,
    'sin': sin,
    'cos': cos,
    'gelu': lambda x: x * erfc(-x / sqrt(2)) / 2,
    'sqrt': sqrt,
    'recip': lambda x: 1 / x,
}


def main():
    out = sys.stdout
    ties = 0
    for name, f in FUNCS.items():
        for bits in range(65536):
            d = decode(bits)
            if d[0] != 'fin':
                r = special(name, d)
            elif name == 'sqrt' and d[1]:
                r = 0x7FC0
            else:
                r, tie = round_bf16(f(d[2]))
                ties += tie
            out.write(f"{name} {bits:04x} {r:04x}\n")
    print(f"midpoint ties or near-ties: {ties}", file=sys.stderr)


if __name__ == '__main__':
    main()
