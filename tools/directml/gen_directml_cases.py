#!/usr/bin/env python3
"""Conformance cases whose expected outputs are DirectML's own.

Builds case files (docs/case-format.md) for qdml's operators, runs every
one through Microsoft's DirectML.dll with tools/directml/run.sh (dmlrun.exe
under wine, README.md beside this file) and writes it to tests/data/directml
with DirectML's output as `expected` (tolerance 0), or, where DirectML
refused the desc, `{"error": true}` with DirectML's refusal quoted in the
description. Every expected output carries `"fidelity": "directml"`: the
qdml profile it is a reference for. Nothing of qdml computes an expected
value; qdml's case loader only reads the files inside dmlrun.

    DMLRUN_BUILD=/tmp/dmlrun python3 tools/directml/gen_directml_cases.py       # rewrites tests/data/directml
    DMLRUN_BUILD=/tmp/dmlrun python3 tools/directml/gen_directml_cases.py --out DIR

Kept out on purpose (docs/semantics.md, "The two profiles"): FLOAT16,
INT16 and UINT16 tensors (this device has no 16-bit shader ops: DirectML
refuses them here), and matrix multiplications with K > 61681 (this stack
adds only the first 61681 products; the case `matmul/k_limit_61682`, kept
out of the data, shows it with --probe-k-limit).

Random data comes from a generator seeded by a CRC of the case name, so the
inputs are reproducible and adding a case changes no other one.
"""

import argparse
import itertools
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent
OUT = ROOT / "tests" / "data" / "directml"
RUN_SH = Path(__file__).resolve().parent / "run.sh"
K_LIMIT = 61681  # this stack adds only the first 61681 products of a matmul's K
INLINE_MAX = 16

f32, i8, u8, i32, u32, i64, u64 = np.float32, np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64
Q8 = (u8, i8)
Q4 = {"INT4": i8, "UINT4": u8}  # the 4-bit types (FL 6.3), by name: numpy has none
Q4_RANGE = {"INT4": (-8, 7), "UINT4": (0, 15)}
TYPE_NAME = {np.dtype(f32): "FLOAT32", np.dtype(i8): "INT8", np.dtype(u8): "UINT8", np.dtype(i32): "INT32",
             np.dtype(u32): "UINT32", np.dtype(i64): "INT64", np.dtype(u64): "UINT64", np.dtype(np.float16): "FLOAT16"}
SHORT = {np.dtype(i8): "i8", np.dtype(u8): "u8", np.dtype(i32): "i32", np.dtype(u32): "u32", np.dtype(i64): "i64",
         np.dtype(u64): "u64", np.dtype(f32): "f32"}


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def ints(rng, t, n, lo=None, hi=None):
    info = np.iinfo(t)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    return rng.integers(lo, hi, size=n, endpoint=True, dtype=np.int64 if t != u64 else np.uint64).astype(t)


def packed(sizes):
    st, acc = [], 1
    for s in reversed(sizes):
        st.append(acc)
        acc *= s
    return st[::-1]


def span(sizes, strides):
    return sum((s - 1) * t for s, t in zip(sizes, strides)) + 1


def layout(rng, sizes, kind):
    """Strides for `sizes`: packed, padded, permuted (a random dimension order),
    or broadcast (random dimensions of stride 0)."""
    r = len(sizes)
    if kind == "packed":
        return None
    if kind == "padded":
        st, acc = [0] * r, 1
        for d in reversed(range(r)):
            st[d] = acc
            acc *= sizes[d] + int(rng.integers(0, 3))
        return st
    if kind == "permuted":
        order = list(rng.permutation(r))
        st, acc = [0] * r, 1
        for d in order:
            st[d] = acc
            acc *= sizes[d]
        return st
    if kind == "broadcast":
        keep = [bool(rng.integers(0, 2)) or s == 1 for s in sizes]
        st = packed([s if k else 1 for s, k in zip(sizes, keep)])
        return [t if k and s > 1 else 0 for t, s, k in zip(st, sizes, keep)]
    raise ValueError(kind)


class Case:
    def __init__(self, op_dir, name, operator, description):
        self.rel = f"{op_dir}/{name}"
        self.operator, self.description = operator, description
        self.tensors, self.files, self.params = {}, {}, {}

    def tensor(self, member, dtype, sizes, buf=None, strides=None):
        if dtype in Q4:  # a 4-bit type: its values one an entry, as int8 (INT4) or uint8 (UINT4)
            tname, dtype = dtype, Q4[dtype]
        else:
            tname = TYPE_NAME[np.dtype(dtype)]
        e = {"type": tname, "sizes": [int(s) for s in sizes]}
        if strides is not None:
            e["strides"] = [int(s) for s in strides]
        if buf is not None:
            buf = np.ascontiguousarray(np.asarray(buf, dtype=dtype).ravel())
            if buf.size <= INLINE_MAX:
                e["values"] = [v.item() if not isinstance(v, np.floating) or np.isfinite(v)
                               else {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}[repr(float(v))]
                               for v in buf]
            else:
                fname = member.replace("Tensor", "").lower() + ".npy"
                self.files[fname] = buf
                e["data"] = fname
        self.tensors[member] = e
        return self

    def input(self, rng, member, dtype, sizes, kind="packed", values=None):
        """An input tensor with layout `kind` and random (or the given) buffer contents."""
        st = layout(rng, sizes, kind)
        n = span(sizes, st if st is not None else packed(sizes))
        buf = values(n) if callable(values) else values
        if buf is None:
            buf = ints(rng, dtype, n)
        return self.tensor(member, dtype, sizes, np.resize(np.asarray(buf, dtype), n), st)

    def output(self, dtype, sizes, strides=None):
        return self.tensor("OutputTensor", dtype, sizes, None, strides)

    def json_text(self, expected):
        lines = ["{", f'  "operator": {json.dumps(self.operator)},', f'  "description": {json.dumps(self.description)},',
                 '  "tensors": {']
        items = list(self.tensors.items())
        lines += [f"    {json.dumps(m)}: {json.dumps(e)}" + ("," if k + 1 < len(items) else "") for k, (m, e) in enumerate(items)]
        lines += ["  },", f'  "params": {json.dumps(self.params)}']
        if expected is not None:
            lines[-1] += ","
            lines.append(f'  "expected": {json.dumps(expected)}')
        return "\n".join(lines + ["}"]) + "\n"

    def write(self, root, expected=None, extra_files=()):
        d = Path(root) / self.rel
        d.mkdir(parents=True, exist_ok=True)
        for fname, arr in list(self.files.items()) + list(extra_files):
            np.save(d / fname, arr, allow_pickle=False)
        (d / "case.json").write_text(self.json_text(expected))
        return d / "case.json"


def float_values(rng, n, special=False):
    v = (rng.standard_normal(n) * 4).astype(f32)
    if special:
        pool = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 1.4e-45, 3.4e38, -3.4e38, 0.5, -0.5,
                         2.5, -2.5, 1.0], f32)
        pick = rng.random(n) < 0.4
        v[pick] = rng.choice(pool, size=int(pick.sum()))
    return v


def rand_scale(rng, lo=-9, hi=-2):
    return f32(np.exp2(rng.uniform(lo, hi)) * (1 + rng.random()))


def rand_sizes(rng, rank, max_elems=4096, max_dim=9):
    while True:
        s = [int(rng.integers(1, max_dim + 1)) for _ in range(rank)]
        if np.prod(s) <= max_elems:
            return s


def param_strides(rng, sizes, param):
    """Strides of a scale or zero point: per tensor, per (a random) axis, or a value per element (None)."""
    r = len(sizes)
    if param == "tensor":
        return [0] * r
    if param == "axis":
        st = [0] * r
        st[int(rng.integers(0, r))] = 1
        return st
    return None


# ---------------------------------------------------------------------------
# ELEMENT_WISE_DEQUANTIZE_LINEAR

def dequant_case(name, desc, t, sizes, x_kind="packed", param="tensor", zp=True, x_values=None, scale=None,
                 zp_value=None, scales=None):
    rng = rng_for("dequantize/" + name)
    c = Case("dequantize", name, "ELEMENT_WISE_DEQUANTIZE_LINEAR", desc)
    c.input(rng, "InputTensor", t, sizes, x_kind, x_values)
    pst = param_strides(rng, sizes, param)
    n = span(sizes, pst) if pst is not None else int(np.prod(sizes))
    sv = scales if scales is not None else [rand_scale(rng) if scale is None else scale for _ in range(n)]
    c.tensor("ScaleTensor", f32, sizes, np.resize(np.asarray(sv, f32), n), pst)
    if zp:
        zv = ints(rng, t, n) if zp_value is None else np.full(n, zp_value, t)
        c.tensor("ZeroPointTensor", t, sizes, zv, pst)
    return c.output(f32, sizes)


def gen_dequantize():
    cases = []
    for t in (i8, u8, i32, u32):
        for k in range(12):
            name = f"random_{SHORT[np.dtype(t)]}_{k}"
            rng = rng_for("sizes/" + name)
            rank = 1 + k % 8
            sizes = rand_sizes(rng, rank, 2048, 6)
            kind = ["packed", "padded", "permuted", "broadcast"][k % 4]
            param = ["tensor", "axis", "full"][k % 3]
            cases.append(dequant_case(name, f"{rank} dimensions {sizes}, input {kind}, scale/zero point per {param}"
                                      f"{', no zero point' if k % 5 == 4 else ''}", t, sizes, kind, param, zp=k % 5 != 4))
    # The int32/uint32 conversion: values far from the zero point (beyond 2^24 apart).
    for t in (i32, u32):
        s = SHORT[np.dtype(t)]
        info = np.iinfo(t)
        rng = rng_for("conv32/" + s)
        big = np.concatenate([ints(rng, t, 200), np.array([info.min, info.max, info.min + 1, info.max - 1, 0, 1], t),
                              (np.arange(64, dtype=np.int64) + (1 << 24) - 32).astype(t),
                              (np.arange(64, dtype=np.int64) * 3 + (1 << 25) + 1).astype(t)])
        for zpv in ([0, 1, 7, -1, -123456789, info.min, info.max] if t == i32 else [0, 1, 7, 123456789, info.max, 1 << 31]):
            zpv = int(zpv)
            cases.append(dequant_case(f"convert_{s}_zp{zpv}", f"{s.upper()} values far from the zero point {zpv}: "
                                      "how Input - ZeroPoint becomes binary32", t, [big.size], "packed", "tensor", True,
                                      big, f32(1.0), zpv))
    # Scales: infinities, NaN, zero, subnormal.
    for nm, sv in [("scale_inf", np.inf), ("scale_nan", np.nan), ("scale_subnormal", 1.4e-45), ("scale_tiny", 1e-38),
                   ("scale_huge", 3.0e38), ("scale_neg_zero", -0.0)]:
        cases.append(dequant_case(nm, f"every INT8 value, scale {sv}", i8, [256], "packed", "tensor", True,
                                  np.arange(-128, 128), f32(sv), 3))
    cases.append(dequant_case("no_zero_point_u8_rank8", "8 dimensions, no zero point", u8, [2, 1, 3, 2, 1, 2, 2, 3],
                              "permuted", "axis", False))
    return cases


# ---------------------------------------------------------------------------
# ELEMENT_WISE_QUANTIZE_LINEAR

def quant_case(name, desc, t_in, t_out, sizes, x_kind="packed", param="tensor", zp=True, x_values=None, scale=None,
               zp_value=None, scales=None, out_strides=None, zp_param=None):
    """x_values: the input buffer (or a function of the rng and its length); scales: the scale buffer;
    scale: one value for every scale; zp_value: one value for every zero point; zp_param: the zero
    point's pattern where it differs from the scale's."""
    rng = rng_for("quantize/" + name)
    c = Case("quantize", name, "ELEMENT_WISE_QUANTIZE_LINEAR", desc)
    pst = param_strides(rng, sizes, param)
    zst = pst if zp_param is None else param_strides(rng, sizes, zp_param)
    n = span(sizes, pst) if pst is not None else int(np.prod(sizes))
    nz = span(sizes, zst) if zst is not None else int(np.prod(sizes))
    sv = np.resize(np.asarray(scales if scales is not None else
                              [rand_scale(rng, -7, 0) if scale is None else scale for _ in range(n)], f32), n)
    info = np.iinfo(t_out)
    zv = ints(rng, t_out, nz) if zp_value is None else np.full(nz, zp_value, t_out)
    if x_values is None:  # quotients spread over the output range and a little beyond it
        def x_values(rng_, m, sv=sv):
            q = rng_.uniform(info.min - 40, info.max + 40, m) - (0 if not zp else float(np.mean(zv)))
            return (q * float(np.max(np.abs(sv)))).astype(t_in) if t_in != i32 else np.clip(
                np.rint(q * float(np.max(np.abs(sv)))), -2**31, 2**31 - 1).astype(i32)
    c.input(rng, "InputTensor", t_in, sizes, x_kind, (lambda m: x_values(rng, m)) if callable(x_values) else x_values)
    c.tensor("ScaleTensor", f32, sizes, sv, pst)
    if zp:
        c.tensor("ZeroPointTensor", t_out, sizes, zv, zst)
    return c.output(t_out, sizes, out_strides)


def gen_quantize():
    cases = []
    # Random shapes, layouts and parameter patterns, FLOAT32 and INT32 inputs.
    for t_in in (f32, i32):
        for t_out in (i8, u8):
            for k in range(10 if t_in == f32 else 6):
                name = f"random_{SHORT[np.dtype(t_in)]}_{SHORT[np.dtype(t_out)]}_{k}"
                rng = rng_for("sizes/" + name)
                rank = 1 + k % 8
                sizes = rand_sizes(rng, rank, 2048, 6)
                kind = ["packed", "padded", "permuted", "broadcast"][k % 4]
                param = ["tensor", "axis", "full"][k % 3]
                zp = k % 5 != 4
                cases.append(quant_case(name, f"{rank} dimensions {sizes}, input {kind}, scale/zero point per {param}"
                                        f"{', no zero point' if not zp else ''}", t_in, t_out, sizes, kind, param, zp))
    # Ties and near-ties after the division: (k + 1/2) * s for scales that are and are not powers of two
    # (a reciprocal multiply, ties away from zero and ties to even differ here).
    for sv in (0.5, 0.3, 0.1, 0.7, 1.3, 3.0, 0.0625, 0.017):
        for t_out in (i8, u8):
            nm = f"ties_{SHORT[np.dtype(t_out)]}_s{sv}"
            info = np.iinfo(t_out)
            k = np.arange(info.min - 8, info.max + 8, dtype=np.float64)
            x = np.concatenate([((k + 0.5) * sv).astype(f32), (k * sv).astype(f32),
                                np.nextafter(((k + 0.5) * sv).astype(f32), f32(np.inf)),
                                np.nextafter(((k + 0.5) * sv).astype(f32), f32(-np.inf))])
            cases.append(quant_case(nm, f"x = (k + 1/2) * {sv}, k * {sv} and their neighbours, scale {sv}: ties",
                                    f32, t_out, [x.size], "packed", "tensor", True, x, f32(sv), 0))
    # INT32 inputs beyond 2^24: how the input becomes binary32.
    rng = rng_for("quantize/int32_values")
    big = np.concatenate([np.array([-2**31, 2**31 - 1, -2**31 + 1, 2**31 - 2, 0, 1, -1], np.int64),
                          np.arange(64, dtype=np.int64) + (1 << 24) - 32, np.arange(64, dtype=np.int64) * 3 + (1 << 25) + 1,
                          -(np.arange(64, dtype=np.int64) + (1 << 24) - 32),
                          rng.integers(-2**31, 2**31, 200)]).astype(i32)
    for sv in (2.0**25, 2.0**17, 3.0 * 2**23, 123456.7, 0.3):
        for t_out in (i8, u8):
            cases.append(quant_case(f"int32_{SHORT[np.dtype(t_out)]}_s{sv:g}", f"INT32 values near 2^24, 2^25 and the "
                                    f"extremes, scale {sv:g}: fp32(x) / s or the exact quotient", i32, t_out, [big.size],
                                    "packed", "tensor", True, big, f32(sv), 0 if t_out == i8 else 128))
    # Special inputs (NaN, +-inf, huge, subnormal) with and without a zero point, at the zero point extremes.
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 1.4e-45, 3.4e38, -3.4e38, 3e9, -3e9,
                        2.1e9, -2.2e9, 127.5, -128.5, 255.5, 0.5, -0.5, 1.5, 2.5, -2.5, 1.0, 126.5, 254.5], f32)
    for t_out in (i8, u8):
        info = np.iinfo(t_out)
        for zpv in sorted({int(info.min), int(info.max), 0, 1, -1 if t_out == i8 else 128}):
            cases.append(quant_case(f"special_{SHORT[np.dtype(t_out)]}_zp{zpv}", f"NaN, infinities, huge and subnormal "
                                    f"inputs, scale 1, zero point {zpv}", f32, t_out, [special.size], "packed", "tensor",
                                    True, special, f32(1.0), zpv))
        cases.append(quant_case(f"special_{SHORT[np.dtype(t_out)]}_no_zp", "NaN, infinities, huge and subnormal inputs, "
                                "scale 1, no zero point", f32, t_out, [special.size], "packed", "tensor", False, special,
                                f32(1.0)))
    # Scales: zero, -0, subnormal, tiny, huge, negative, infinite, NaN.
    xs = np.concatenate([np.linspace(-300, 300, 121).astype(f32), special])
    for nm, sv in [("scale_zero", 0.0), ("scale_neg_zero", -0.0), ("scale_subnormal", 1.4e-45), ("scale_subnormal2", 3e-39),
                   ("scale_tiny", 1e-38), ("scale_huge", 3.0e38), ("scale_negative", -0.37), ("scale_inf", np.inf),
                   ("scale_neg_inf", -np.inf), ("scale_nan", np.nan)]:
        for t_out in (i8, u8):
            for zp in (True, False):
                cases.append(quant_case(f"{nm}_{SHORT[np.dtype(t_out)]}{'' if zp else '_no_zp'}",
                                        f"scale {sv}, {'zero point 3' if zp else 'no zero point'}", f32, t_out, [xs.size],
                                        "packed", "tensor", zp, xs, f32(sv), 3))
    # Which form DirectML takes for a NaN quotient: the low end only with a one-element scale and zero
    # point on packed input and output; 0 for every other layout (the same special values, INT8, zero point -3).
    sp = special[:24]
    for nm, desc, kw in [
            ("nan_packed_rank4", "packed {2,3,2,2}, one-element scale and zero point", dict(sizes=[2, 3, 2, 2])),
            ("nan_packed_rank8", "packed, 8 dimensions", dict(sizes=[1, 2, 1, 3, 1, 2, 2, 1])),
            ("nan_input_padded", "input padded", dict(x_kind="padded")),
            ("nan_input_permuted", "input permuted", dict(x_kind="permuted")),
            ("nan_input_broadcast", "input broadcast", dict(x_kind="broadcast")),
            ("nan_output_transposed", "output transposed", dict(out_strides=[1, 4, 12, 24])),
            ("nan_scale_axis", "scale per axis, zero point per tensor", dict(param="axis", zp_param="tensor")),
            ("nan_zp_axis", "scale per tensor, zero point per axis", dict(param="tensor", zp_param="axis")),
            ("nan_full", "scale and zero point per element", dict(param="full")),
            ("nan_no_zp", "no zero point", dict(zp=False))]:
        args = dict(sizes=[4, 3, 2, 1], x_kind="packed", param="tensor", zp=True, out_strides=None, zp_param=None)
        args.update(kw)
        n = int(np.prod(args["sizes"]))
        cases.append(quant_case(nm, f"NaN, infinities and ties, INT8, zero point -3: {desc}", f32, i8, args["sizes"],
                                args["x_kind"], args["param"], args["zp"], lambda rng_, m: np.resize(sp, m), f32(0.5),
                                -3, None, args["out_strides"], args["zp_param"]))
    cases.append(quant_case("rank8_no_zp_strided_out", "8 dimensions, no zero point, scale per axis, transposed output",
                            f32, i8, [2, 1, 3, 2, 1, 2, 2, 3], "permuted", "axis", False,
                            out_strides=[1, 2, 2, 6, 12, 12, 24, 48]))
    # What DirectML refuses (validation mirrors it; docs/feature-levels.md).
    def refuse(name, desc, edit):
        c = quant_case(name, desc, f32, u8, [2, 3], "packed", "tensor", True, None, f32(0.5), 3)
        edit(c)
        return c
    cases.append(refuse("refuse_scale_int32", "ScaleTensor INT32", lambda c: c.tensor(
        "ScaleTensor", i32, [2, 3], [1], [0, 0])))
    cases.append(refuse("refuse_zp_type", "ZeroPointTensor INT8 with a UINT8 output", lambda c: c.tensor(
        "ZeroPointTensor", i8, [2, 3], [3], [0, 0])))
    cases.append(refuse("refuse_output_i32", "OutputTensor INT32 (and its zero point)", lambda c: (c.tensor(
        "ZeroPointTensor", i32, [2, 3], [3], [0, 0]), c.output(i32, [2, 3]))))
    cases.append(refuse("refuse_input_u8", "InputTensor UINT8", lambda c: c.tensor(
        "InputTensor", u8, [2, 3], np.arange(6))))
    cases.append(refuse("refuse_scale_sizes", "ScaleTensor of Sizes {1, 1} (no implicit broadcast)", lambda c: c.tensor(
        "ScaleTensor", f32, [1, 1], [0.5])))
    cases.append(refuse("refuse_zp_dims", "ZeroPointTensor of one dimension fewer", lambda c: c.tensor(
        "ZeroPointTensor", u8, [3], [3], [0])))
    return cases


# ---------------------------------------------------------------------------
# ELEMENT_WISE_QUANTIZED_LINEAR_ADD

def add_case(name, desc, ta, tb, ty, sizes, a_kind="packed", b_kind="packed", scales=None, zps=None, zp_present=(1, 1, 1),
             a_values=None, b_values=None, out_strides=None):
    rng = rng_for("add/" + name)
    c = Case("add", name, "ELEMENT_WISE_QUANTIZED_LINEAR_ADD", desc)
    r = len(sizes)
    one = [1] * r
    sa, sb, so = scales if scales is not None else (rand_scale(rng, -6, -3), rand_scale(rng, -6, -3), rand_scale(rng, -5, -2))
    za, zb, zo = zps if zps is not None else (ints(rng, ta, 1)[0], ints(rng, tb, 1)[0], ints(rng, ty, 1)[0])
    c.input(rng, "ATensor", ta, sizes, a_kind, a_values)
    c.tensor("AScaleTensor", f32, one, [sa])
    if zp_present[0]:
        c.tensor("AZeroPointTensor", ta, one, [za])
    c.input(rng, "BTensor", tb, sizes, b_kind, b_values)
    c.tensor("BScaleTensor", f32, one, [sb])
    if zp_present[1]:
        c.tensor("BZeroPointTensor", tb, one, [zb])
    c.tensor("OutputScaleTensor", f32, one, [so])
    if zp_present[2]:
        c.tensor("OutputZeroPointTensor", ty, one, [zo])
    return c.output(ty, sizes, out_strides)


def all_pairs(ta, tb):
    """A {256, 1} x B {1, 256} through stride 0: every (a, b) pair of the two 8-bit types once."""
    va = np.arange(np.iinfo(ta).min, np.iinfo(ta).max + 1)
    vb = np.arange(np.iinfo(tb).min, np.iinfo(tb).max + 1)
    return va, vb


def gen_add():
    cases = []
    kinds = ["packed", "padded", "permuted", "broadcast"]
    for (ta, tb, ty), k in itertools.product(itertools.product(Q8, Q8, Q8), range(8)):
        mix = "".join(SHORT[np.dtype(t)] for t in (ta, tb, ty))
        name = f"random_{mix}_{k}"
        rng = rng_for("sizes/" + name)
        rank = 1 + k
        sizes = rand_sizes(rng, rank, 2048, 6)
        ka, kb = kinds[k % 4], kinds[(k + 1 + (k // 4)) % 4]
        zpp = (1, 1, 1) if k % 3 else (0, 1, 0) if k % 2 else (1, 0, 1)
        cases.append(add_case(name, f"{rank} dimensions {sizes}, A {ka}, B {kb}, zero points present {zpp}", ta, tb, ty,
                              sizes, ka, kb, zp_present=zpp))
    # Every (a, b) pair, scales chosen so that many exact values are ties (x.5) or near them.
    for (ta, tb, ty) in itertools.product(Q8, Q8, Q8):
        mix = "".join(SHORT[np.dtype(t)] for t in (ta, tb, ty))
        va, vb = all_pairs(ta, tb)
        for nm, sc, zp in [("ties", (f32(0.5), f32(0.25), f32(1.0)), (0, 0, 0)),
                           ("ties_div", (f32(0.1), f32(0.3), f32(0.2)), (3, 5, 1)),
                           ("random_scales", None, None)]:
            name = f"pairs_{nm}_{mix}"
            c = add_case(name, f"every (A, B) pair once (A {{256,1}}, B {{1,256}} through stride 0), scales {nm}",
                         ta, tb, ty, [256, 256], scales=sc, zps=zp)
            c.tensor("ATensor", ta, [256, 256], va, [1, 0]).tensor("BTensor", tb, [256, 256], vb, [0, 1])
            cases.append(c)
    # Probe scale triples for the float order of the add (per tensor), on all i8 x u8 pairs.
    for k in range(12):
        rng = rng_for(f"order/{k}")
        sc = (rand_scale(rng, -8, 0), rand_scale(rng, -8, 0), rand_scale(rng, -8, 0))
        va, vb = all_pairs(i8, u8)
        c = add_case(f"order_probe_{k}", "float order of the add: every (A, B) pair, random scales", i8, u8, u8, [256, 256],
                     scales=sc, zps=(int(rng.integers(-128, 128)), int(rng.integers(0, 256)), int(rng.integers(0, 256))))
        c.tensor("ATensor", i8, [256, 256], va, [1, 0]).tensor("BTensor", u8, [256, 256], vb, [0, 1])
        cases.append(c)
    for nm, sc in [("scale_inf", (np.inf, 0.5, 1.0)), ("scale_nan", (0.5, np.nan, 1.0)), ("out_scale_inf", (0.5, 0.5, np.inf)),
                   ("out_scale_subnormal", (0.5, 0.5, 1.4e-45)), ("scales_subnormal", (1e-40, 3e-41, 1e-38)),
                   ("out_scale_neg", (0.5, 0.25, -1.0)), ("saturate", (1.0, 1.0, 0.01))]:
        va, vb = all_pairs(u8, i8)
        c = add_case(nm, f"every (A, B) pair, scales {sc}", u8, i8, i8, [256, 256], scales=tuple(f32(s) for s in sc),
                     zps=(128, 0, 0))
        c.tensor("ATensor", u8, [256, 256], va, [1, 0]).tensor("BTensor", i8, [256, 256], vb, [0, 1])
        cases.append(c)
    cases.append(add_case("output_permuted", "output with permuted strides", i8, i8, u8, [3, 4, 5], "padded", "packed",
                          out_strides=[1, 3, 12]))
    return cases


# ---------------------------------------------------------------------------
# QUANTIZED_LINEAR_MATRIX_MULTIPLY

def right(sizes, r):
    return list(sizes[len(sizes) - r:])


def b_input(c, rng, tb, b_sizes, rank, b_kind, b_values, b_bcast):
    """A matmul's BTensor of layout `b_kind`, or with `b_bcast` shared across the batch (stride 0 on its
    leading dimensions)."""
    if not b_bcast:
        c.input(rng, "BTensor", tb, b_sizes, b_kind, b_values)
        return
    st = packed(b_sizes)
    bst = [0 if d < rank - 2 else st[d] for d in range(rank)]
    nb = span(b_sizes, bst)
    c.tensor("BTensor", tb, b_sizes, ints(rng, tb, nb) if b_values is None else np.resize(np.asarray(b_values, tb), nb), bst)


def matmul_case(name, desc, ta, tb, ty, batch, M, K, N, rank=4, a_param="tensor", b_param="tensor", zp_present=(1, 1, 1),
                a_values=None, b_values=None, a_kind="packed", b_kind="packed", scales=None, zps=None, b_bcast=False,
                param_rank=None, zp_param=None):
    rng = rng_for("matmul/" + name)
    c = Case("matmul", name, "QUANTIZED_LINEAR_MATRIX_MULTIPLY", desc)
    B0, C0 = batch
    a_sizes, b_sizes, y_sizes = right([B0, C0, M, K], rank), right([B0, C0, K, N], rank), right([B0, C0, M, N], rank)
    c.input(rng, "ATensor", ta, a_sizes, a_kind, a_values)
    pr = rank if param_rank is None else param_rank

    def param(member, t, per, n_per, values=None, sizes_override=None):
        full = [1, 1, M if per == "row" else 1, N if per == "column" else 1]
        sizes = right(full, pr) if sizes_override is None else sizes_override
        n = int(np.prod(sizes))
        if values is None:
            values = [rand_scale(rng, -7, -3) for _ in range(n)] if t == f32 else ints(rng, t, n)
        c.tensor(member, t, sizes, np.resize(np.asarray(values, t), n))

    zp_param = zp_param or (a_param, b_param, a_param)
    sc = scales or {}
    zv = zps or {}
    param("AScaleTensor", f32, a_param, M, sc.get("a"))
    if zp_present[0]:
        param("AZeroPointTensor", ta, zp_param[0], M, zv.get("a"))
    b_input(c, rng, tb, b_sizes, rank, b_kind, b_values, b_bcast)
    param("BScaleTensor", f32, b_param, N, sc.get("b"))
    if zp_present[1]:
        param("BZeroPointTensor", tb, zp_param[1], N, zv.get("b"))
    param("OutputScaleTensor", f32, a_param, M, sc.get("o"))
    if zp_present[2]:
        param("OutputZeroPointTensor", ty, zp_param[2], M, zv.get("o"))
    return c.output(ty, y_sizes)


def gen_matmul():
    cases = []
    pers = [("tensor", "tensor"), ("row", "tensor"), ("tensor", "column"), ("row", "column")]
    for (ta, tb, ty), k in itertools.product(itertools.product(Q8, Q8, Q8), range(7)):
        mix = "".join(SHORT[np.dtype(t)] for t in (ta, tb, ty))
        name = f"random_{mix}_{k}"
        rng = rng_for("sizes/" + name)
        rank = 2 + k % 3
        M, K, N = (int(rng.integers(1, 20)) for _ in range(3))
        batch = (int(rng.integers(1, 3)), int(rng.integers(1, 3))) if rank == 4 else (1, int(rng.integers(1, 3))) if rank == 3 else (1, 1)
        ap, bp = pers[k % 4]
        zpp = (1, 1, 1) if k % 3 else (0, 1, 0) if k % 2 else (1, 0, 1)
        kinds = ["packed", "padded", "permuted"]
        cases.append(matmul_case(name, f"rank {rank}, batch {batch}, M {M} K {K} N {N}, A/output per {ap}, B per {bp}, "
                                 f"zero points present {zpp}", ta, tb, ty, batch, M, K, N, rank, ap, bp, zpp,
                                 a_kind=kinds[k % 3], b_kind=kinds[(k + 1) % 3], b_bcast=(rank == 4 and k % 2 == 1)))
    # Larger shapes (a few hundred K), every mix.
    for (ta, tb, ty) in itertools.product(Q8, Q8, Q8):
        mix = "".join(SHORT[np.dtype(t)] for t in (ta, tb, ty))
        cases.append(matmul_case(f"large_{mix}", "M 33 K 300 N 40, per row and column", ta, tb, ty, (1, 1), 33, 300, 40,
                                 2, "row", "column"))
    # Every product a * b of two 8-bit values once (K = 1): the requantization's float order,
    # per tensor, per row, per column, per row and column.
    for k, (ap, bp) in itertools.product(range(6), pers):
        ta, tb = (i8, u8) if k % 2 else (u8, i8)
        va, vb = all_pairs(ta, tb)
        rng = rng_for(f"mmorder/{k}/{ap}/{bp}")
        name = f"order_{ap}_{bp}_{k}"
        sc = {"a": [rand_scale(rng, -8, 0) for _ in range(256 if ap == "row" else 1)],
              "b": [rand_scale(rng, -8, 0) for _ in range(256 if bp == "column" else 1)],
              "o": [rand_scale(rng, -9, -1) for _ in range(256 if ap == "row" else 1)]}
        cases.append(matmul_case(name, f"requantization order: every product once (K 1), A/output per {ap}, B per {bp}",
                                 ta, tb, u8, (1, 1), 256, 1, 256, 2, ap, bp, (0, 0, 1), a_values=va, b_values=vb,
                                 scales=sc, zps={"o": [int(v) for v in rng.integers(0, 256, 256)]}))
    # The same, output scales chosen so that the results stay in range (|value| < 128), and scale
    # triples searched so that the candidate float orders disagree on some elements (the inputs
    # are chosen with numpy; the expected outputs are still DirectML's).
    for k in range(16):
        ta, tb = (i8, u8) if k % 2 else (u8, i8)
        va, vb = all_pairs(ta, tb)
        acc = (va.astype(np.int64)[:, None] * vb.astype(np.int64)[None, :]).astype(f32)
        rng = rng_for(f"mmorder_in_range/{k}")
        while True:
            sa, sb = rand_scale(rng, -8, 0), rand_scale(rng, -8, 0)
            so = f32(sa * sb * f32(np.abs(acc).max() / 126) * f32(1 + rng.random() / 8))
            spec = acc * ((sa * sb) / so)
            alt = ((acc * sa) * sb) / so
            if np.count_nonzero(np.rint(spec) != np.rint(alt)) >= 2:
                break
        cases.append(matmul_case(f"order_in_range_{k}", "requantization order: every product once (K 1), per tensor, "
                                 "results in range, scales where fp32(acc)*(fp32(sa*sb)/so) and ((acc*sa)*sb)/so round apart",
                                 ta, tb, i8, (1, 1), 256, 1, 256, 2, zp_present=(0, 0, 0), a_values=va, b_values=vb,
                                 scales={"a": [sa], "b": [sb], "o": [so]}))
    # The quantize step's edges: infinite, NaN and huge finite values with several output zero points.
    for nm, sc in [("inf", (np.inf, 1.0, 1.0)), ("nan", (np.nan, 1.0, 1.0)), ("huge", (1e6, 1e4, 1.0)),
                   ("above_2p31", (1.0, 2 ** 17 + 2 ** 16, 1.0))]:
        for ty, zpv in [(u8, 0), (u8, 1), (u8, 200), (u8, 255), (i8, -128), (i8, -1), (i8, 0), (i8, 5), (i8, 127)]:
            va, vb = all_pairs(i8, i8)
            cases.append(matmul_case(f"edge_{nm}_{SHORT[np.dtype(ty)]}_zp{zpv}", f"quantize step edges: AScale {sc[0]}, "
                                     f"BScale {sc[1]}, output zero point {zpv}", i8, i8, ty, (1, 1), 256, 1, 256, 2,
                                     zp_present=(0, 0, 1), a_values=va, b_values=vb,
                                     scales={"a": [sc[0]], "b": [sc[1]], "o": [sc[2]]}, zps={"o": [zpv]}))
    # Ties: multiplier 0.5 and 0.25.
    for (ta, tb, ty) in itertools.product(Q8, Q8, Q8):
        mix = "".join(SHORT[np.dtype(t)] for t in (ta, tb, ty))
        va, vb = all_pairs(ta, tb)
        cases.append(matmul_case(f"ties_{mix}", "every product once, AScale*BScale/OutputScale = 0.5: every odd product a tie",
                                 ta, tb, ty, (1, 1), 256, 1, 256, 2, zp_present=(0, 0, 0), a_values=va, b_values=vb,
                                 scales={"a": [0.5], "b": [0.25], "o": [0.25]}))
    # int32 wrap: K up to the stack's limit with extreme values.
    for K, ta, tb, azp, bzp in [(33025, u8, u8, 0, 0), (33026, u8, u8, 0, 0), (40000, u8, u8, 0, 0),
                                (61681, u8, u8, 0, 0), (61681, i8, i8, 0, 0), (50000, u8, i8, 255, 127),
                                (61681, i8, u8, -128, 255)]:
        hi_a = np.iinfo(ta).max if azp != np.iinfo(ta).max else np.iinfo(ta).min
        hi_b = np.iinfo(tb).max if bzp != np.iinfo(tb).max else np.iinfo(tb).min
        a = np.full(K, hi_a, ta)
        b = np.concatenate([np.full(K, hi_b, tb), np.full(K, np.iinfo(tb).min if hi_b > 0 else np.iinfo(tb).max, tb)])
        name = f"wrap_K{K}_{SHORT[np.dtype(ta)]}{SHORT[np.dtype(tb)]}"
        c = matmul_case(name, f"int32 accumulator wrap: K {K} of extreme products (zero points {azp}, {bzp})", ta, tb, i8,
                        (1, 1), 1, K, 2, 2, zp_present=(1, 1, 0), a_values=a, b_values=b,
                        scales={"a": [1.0], "b": [1.0], "o": [float(2 ** 24)]}, zps={"a": [azp], "b": [bzp]})
        c.tensor("BTensor", tb, [K, 2], b, [1, K])
        cases.append(c)
    # Scales with infinities, NaN, subnormals; outputs that saturate.
    for nm, sc in [("scale_inf", (np.inf, 0.5, 1.0)), ("scale_nan", (0.5, np.nan, 1.0)), ("out_scale_inf", (0.5, 0.5, np.inf)),
                   ("scales_subnormal", (1e-20, 1e-21, 1e-40)), ("product_underflow", (1e-30, 1e-30, 1e-38)),
                   ("product_overflow", (1e30, 1e30, 1e38)), ("out_scale_neg", (0.5, 0.25, -1.0))]:
        va, vb = all_pairs(u8, i8)
        cases.append(matmul_case(nm, f"every product once, scales {sc}", u8, i8, u8, (1, 1), 256, 1, 256, 2,
                                 zp_present=(1, 0, 1), a_values=va, b_values=vb,
                                 scales={"a": [sc[0]], "b": [sc[1]], "o": [sc[2]]}, zps={"a": [128], "o": [100]}))
    # Parameter tensors of fewer dimensions (right-aligned).
    cases.append(matmul_case("params_rank1", "rank 4 tensors, per-tensor parameters of 1 dimension", u8, u8, u8, (2, 2), 5, 7,
                             6, 4, param_rank=1))
    cases.append(matmul_case("params_rank2_row_col", "rank 3 tensors, per-row/column parameters of 2 dimensions", i8, u8,
                             i8, (1, 3), 6, 9, 5, 3, "row", "column", param_rank=2))
    # Refusals: a scale and its zero point of different Sizes.
    cases.append(matmul_case("refuse_b_scale_tensor_zp_column", "per-tensor BScale with a per-column BZeroPoint", u8, i8,
                             u8, (1, 1), 4, 5, 6, 2, "tensor", "tensor", zp_param=("tensor", "column", "tensor")))
    cases.append(matmul_case("refuse_a_scale_row_zp_tensor", "per-row AScale with a per-tensor AZeroPoint", u8, u8, u8,
                             (1, 1), 4, 5, 6, 2, "row", "tensor", zp_param=("tensor", "tensor", "row")))
    cases.append(matmul_case("refuse_b_scale_column_zp_tensor", "per-column BScale with a per-tensor BZeroPoint", i8, i8,
                             i8, (1, 1), 4, 5, 6, 2, "tensor", "column", zp_param=("tensor", "tensor", "tensor")))
    cases.append(matmul_case("refuse_out_scale_row_zp_tensor", "per-row OutputScale with a per-tensor OutputZeroPoint", u8,
                             u8, u8, (1, 1), 4, 5, 6, 2, "row", "tensor", zp_param=("row", "tensor", "tensor")))
    # A scale and its zero point with equal values but different DimensionCount (same Sizes right-aligned),
    # and with equal Sizes through stride 0 (per-tensor values written per column).
    c = matmul_case("params_zp_fewer_dims", "AScale {1,1}, AZeroPoint {1}: one value each, different DimensionCount", u8, u8,
                    u8, (1, 1), 4, 5, 6, 2)
    c.tensor("AZeroPointTensor", u8, [1], [7])
    cases.append(c)
    c = matmul_case("params_zp_stride0_column", "per-tensor BScale written {1,N} with stride 0, per-column BZeroPoint", u8,
                    i8, u8, (1, 1), 4, 5, 6, 2, "tensor", "column")
    c.tensor("BScaleTensor", f32, [1, 6], [0.0625], [0, 0])
    cases.append(c)
    return cases


def k_limit_case():
    """A = 1, B = 0 but for B[61680] = 3 (the 61681st product) and B[61681] = 5 (the 61682nd):
    the exact sum is 8; 3 if only the first 61681 products count."""
    b = np.zeros(K_LIMIT + 1, i8)
    b[K_LIMIT - 1], b[K_LIMIT] = 3, 5
    return matmul_case("k_limit_61682", "K 61682, A = 1, B = 3 at k = 61680 and 5 at k = 61681, else 0: the exact sum is 8",
                       u8, i8, i8, (1, 1), 1, K_LIMIT + 1, 1, 2, zp_present=(0, 0, 0), a_values=np.ones(K_LIMIT + 1),
                       b_values=b, scales={"a": [1.0], "b": [1.0], "o": [1.0]})


# ---------------------------------------------------------------------------
# MATRIX_MULTIPLY_INTEGER

def mmi_case(name, desc, ta, tb, batch, M, K, N, rank=4, a_zp="tensor", b_zp="tensor", a_values=None, b_values=None,
             a_kind="packed", b_kind="packed", b_bcast=False, zps=None, zp_rank=None, out_type=i32):
    """A {B,C,M,K} x B {B,C,K,N} -> INT32 {B,C,M,N}, right-aligned to `rank`; a_zp/b_zp: "tensor", "row"/"column"
    or None (absent), of `zp_rank` dimensions (default `rank`)."""
    rng = rng_for("matmul_integer/" + name)
    c = Case("matmul_integer", name, "MATRIX_MULTIPLY_INTEGER", desc)
    B0, C0 = batch
    a_sizes, b_sizes, y_sizes = right([B0, C0, M, K], rank), right([B0, C0, K, N], rank), right([B0, C0, M, N], rank)
    c.input(rng, "ATensor", ta, a_sizes, a_kind, a_values)
    zr = rank if zp_rank is None else zp_rank
    zv = zps or {}
    if a_zp:
        sizes = right([1, 1, M if a_zp == "row" else 1, 1], zr)
        n = int(np.prod(sizes))
        c.tensor("AZeroPointTensor", ta, sizes, np.resize(np.asarray(zv["a"], ta), n) if "a" in zv else ints(rng, ta, n))
    b_input(c, rng, tb, b_sizes, rank, b_kind, b_values, b_bcast)
    if b_zp:
        sizes = right([1, 1, 1, N if b_zp == "column" else 1], zr)
        n = int(np.prod(sizes))
        c.tensor("BZeroPointTensor", tb, sizes, np.resize(np.asarray(zv["b"], tb), n) if "b" in zv else ints(rng, tb, n))
    return c.output(out_type, y_sizes)


def gen_matmul_integer():
    cases = []
    mixes = list(itertools.product(Q8, Q8))
    zp_forms = [("tensor", "tensor"), ("row", "column"), ("row", None), (None, "column"), (None, None), ("tensor", "column")]
    kinds = ["packed", "padded", "permuted"]
    for (ta, tb), k in itertools.product(mixes, range(6)):
        mix = SHORT[np.dtype(ta)] + SHORT[np.dtype(tb)]
        name = f"random_{mix}_{k}"
        rng = rng_for("sizes/" + name)
        rank = 2 + k % 3
        M, K, N = (int(rng.integers(1, 20)) for _ in range(3))
        batch = (int(rng.integers(1, 3)), int(rng.integers(1, 4))) if rank == 4 else (1, int(rng.integers(1, 4))) if rank == 3 else (1, 1)
        az, bz = zp_forms[k]
        cases.append(mmi_case(name, f"rank {rank}, batch {batch}, M {M} K {K} N {N}, AZeroPoint {az}, BZeroPoint {bz}",
                              ta, tb, batch, M, K, N, rank, az, bz, a_kind=kinds[k % 3], b_kind=kinds[(k + 1) % 3],
                              b_bcast=(rank == 4 and k % 2 == 1)))
    for ta, tb in mixes:
        mix = SHORT[np.dtype(ta)] + SHORT[np.dtype(tb)]
        cases.append(mmi_case(f"large_{mix}", "M 33 K 300 N 40, per-row and per-column zero points", ta, tb, (1, 1), 33,
                              300, 40, 2, "row", "column"))
        # Every (a, b) pair once (K 1), with per-row and per-column zero points, random and at the extremes.
        va, vb = all_pairs(ta, tb)
        cases.append(mmi_case(f"pairs_{mix}", "every product once (K 1), per-row and per-column random zero points", ta,
                              tb, (1, 1), 256, 1, 256, 2, "row", "column", a_values=va, b_values=vb))
        for za, zb in [(np.iinfo(ta).min, np.iinfo(tb).max), (np.iinfo(ta).max, np.iinfo(tb).min)]:
            cases.append(mmi_case(f"pairs_{mix}_zp{za}_{zb}", f"every product once (K 1), zero points {za}, {zb} per tensor",
                                  ta, tb, (1, 1), 256, 1, 256, 2, "tensor", "tensor", a_values=va, b_values=vb,
                                  zps={"a": [za], "b": [zb]}))
    # int32 wrap: K up to the stack's limit with extreme differences (up to 255 * 255 per product).
    for K, ta, tb, azp, bzp in [(33026, u8, u8, 0, 0), (61681, u8, u8, 0, 0), (61681, i8, i8, 0, 0),
                                (61681, u8, u8, 255, 0), (50000, u8, i8, 0, -128), (61681, i8, u8, -128, 255),
                                (61681, u8, i8, 255, 127)]:
        lo_a, hi_a = np.iinfo(ta).min, np.iinfo(ta).max
        lo_b, hi_b = np.iinfo(tb).min, np.iinfo(tb).max
        a = np.full(K, hi_a if abs(int(hi_a) - azp) >= abs(int(lo_a) - azp) else lo_a, ta)
        b0 = hi_b if abs(int(hi_b) - bzp) >= abs(int(lo_b) - bzp) else lo_b
        b1 = lo_b if b0 == hi_b else hi_b
        b = np.concatenate([np.full(K, b0, tb), np.full(K, b1, tb)])
        name = f"wrap_K{K}_{SHORT[np.dtype(ta)]}{SHORT[np.dtype(tb)]}_zp{azp}_{bzp}"
        c = mmi_case(name, f"int32 accumulator wrap: K {K} of extreme products (zero points {azp}, {bzp})", ta, tb, (1, 1),
                     1, K, 2, 2, "tensor", "tensor", a_values=a, zps={"a": [azp], "b": [bzp]})
        c.tensor("BTensor", tb, [K, 2], b, [1, K])
        cases.append(c)
    # Zero point shapes: fewer dimensions (right-aligned), stride 0, per batch, and shapes outside the docs.
    cases.append(mmi_case("zp_rank1_tensor", "rank 4, AZeroPoint {1} and BZeroPoint {1}", u8, i8, (2, 2), 5, 7, 6, 4,
                          "tensor", "tensor", zp_rank=1))
    cases.append(mmi_case("zp_rank2_row_col", "rank 3, AZeroPoint {M,1}, BZeroPoint {1,N}", i8, u8, (1, 3), 6, 9, 5, 3,
                          "row", "column", zp_rank=2))
    cases.append(mmi_case("zp_rank1_col", "rank 2, BZeroPoint {N} (1 dimension; DML_FEATURE_LEVEL_5_2)", u8, u8, (1, 1),
                          4, 5, 6, 2, None, "column", zp_rank=1))
    c = mmi_case("refuse_azp_rank1_M", "rank 2, AZeroPoint {M} (1 dimension, M values: right-aligned it is {1,1,1,M})", u8, u8,
                 (1, 1), 4, 5, 6, 2, "tensor", None)
    c.tensor("AZeroPointTensor", u8, [4], [1, 2, 3, 4])
    cases.append(c)
    c = mmi_case("azp_rank3_bzp_rank2", "rank 4 A/B/Output, AZeroPoint {1,M,1}, BZeroPoint {1,N}: the zero points' "
                 "DimensionCounts differ", u8, i8, (2, 1), 4, 5, 6, 4, "row", "column")
    c.tensor("AZeroPointTensor", u8, [1, 4, 1], [9, 8, 7, 6])
    c.tensor("BZeroPointTensor", i8, [1, 6], [-3, -2, -1, 0, 1, 2])
    cases.append(c)
    c = mmi_case("refuse_azp_stride0_row", "AZeroPoint {1,1,M,N} with strides {0,0,1,0}: per row written at the output's size", u8,
                 u8, (1, 1), 4, 5, 6, 4, None, None)
    c.tensor("AZeroPointTensor", u8, [1, 1, 4, 6], [10, 20, 30, 40], [0, 0, 1, 0])
    cases.append(c)
    c = mmi_case("bzp_stride0_tensor", "BZeroPoint {1,1,1,N} with strides {0,0,0,0}: one value repeated", i8, i8, (1, 1),
                 4, 5, 6, 4, None, None)
    c.tensor("BZeroPointTensor", i8, [1, 1, 1, 6], [-7], [0, 0, 0, 0])
    cases.append(c)
    c = mmi_case("refuse_azp_per_batch", "A {2,3,M,K}, AZeroPoint {2,1,M,1}: a zero point per batch (not in the docs)", u8, u8,
                 (2, 3), 4, 5, 6, 4, None, None)
    c.tensor("AZeroPointTensor", u8, [2, 1, 4, 1], list(range(1, 9)))
    cases.append(c)
    c = mmi_case("refuse_bzp_per_channel", "B {2,3,K,N}, BZeroPoint {1,3,1,N}: a zero point per channel (not in the docs)", i8,
                 i8, (2, 3), 4, 5, 6, 4, None, None)
    c.tensor("BZeroPointTensor", i8, [1, 3, 1, 6], list(range(-9, 9)))
    cases.append(c)
    c = mmi_case("refuse_azp_per_column", "AZeroPoint {1,1,1,K}: per column of A (not in the docs)", u8, u8, (1, 1), 4, 5, 6, 4,
                 None, None)
    c.tensor("AZeroPointTensor", u8, [1, 1, 1, 5], [1, 2, 3, 4, 5])
    cases.append(c)
    c = mmi_case("refuse_bzp_per_row", "BZeroPoint {1,1,K,1}: per row of B (not in the docs)", u8, u8, (1, 1), 4, 5, 6, 4, None,
                 None)
    c.tensor("BZeroPointTensor", u8, [1, 1, 5, 1], [1, 2, 3, 4, 5])
    cases.append(c)
    c = mmi_case("refuse_azp_full", "AZeroPoint {1,1,M,K}: one per element of A (not in the docs)", u8, u8, (1, 1), 2, 3, 2, 4,
                 None, None)
    c.tensor("AZeroPointTensor", u8, [1, 1, 2, 3], [1, 2, 3, 4, 5, 6])
    cases.append(c)
    # Batch broadcast through Sizes 1 (no zero strides), and through zero strides.
    c = mmi_case("refuse_bcast_b_sizes1", "A {2,3,M,K}, B {1,1,K,N}, Output {2,3,M,N}: B broadcast by Sizes 1", u8, i8, (2, 3), 4,
                 5, 6, 4, "tensor", "tensor")
    c.input(rng_for("bcast_b"), "BTensor", i8, [1, 1, 5, 6])
    cases.append(c)
    c = mmi_case("refuse_bcast_a_sizes1", "A {1,3,M,K}, B {2,1,K,N}, Output {2,3,M,N}: both broadcast by Sizes 1", i8, u8, (2, 3),
                 4, 5, 6, 4, None, None)
    c.input(rng_for("bcast_a1"), "ATensor", i8, [1, 3, 4, 5])
    c.input(rng_for("bcast_a2"), "BTensor", u8, [2, 1, 5, 6])
    cases.append(c)
    c = mmi_case("refuse_bcast_b_rank2", "A {2,3,M,K} (rank 4), B {K,N} (rank 2): DimensionCounts differ", u8, u8, (2, 3), 4, 5,
                 6, 4, None, None)
    c.input(rng_for("bcast_b_rank2"), "BTensor", u8, [5, 6])
    cases.append(c)
    cases.append(mmi_case("bcast_stride0", "rank 4, B {2,3,K,N} with zero strides on batch and channel", u8, u8, (2, 3), 7,
                          9, 8, 4, "row", "column", b_bcast=True))
    # Degenerate sizes and strided outputs.
    cases.append(mmi_case("ones_M1_K1_N1", "M = K = N = 1", i8, i8, (1, 1), 1, 1, 1, 2, "tensor", "tensor"))
    cases.append(mmi_case("gemv_M1", "M 1 K 64 N 33", u8, i8, (1, 1), 1, 64, 33, 2, "tensor", "column"))
    c = mmi_case("out_padded", "Output {2,M,N} with padded strides", u8, u8, (1, 2), 3, 4, 5, 3, "row", "column")
    c.output(i32, [2, 3, 5], [24, 8, 1])
    cases.append(c)
    c = mmi_case("azp_stride0_tensor", "AZeroPoint {1,1,M,1} with strides {0,0,0,0}: per row in shape, one value", u8, u8,
                 (1, 1), 4, 5, 6, 4, None, None)
    c.tensor("AZeroPointTensor", u8, [1, 1, 4, 1], [7], [0, 0, 0, 0])
    cases.append(c)
    c = mmi_case("azp_padded", "AZeroPoint {1,1,M,1} with strides {0,0,2,1}: every other buffer element", u8, u8, (1, 1), 4,
                 5, 6, 4, None, None)
    c.tensor("AZeroPointTensor", u8, [1, 1, 4, 1], [1, 99, 2, 99, 3, 99, 4], [0, 0, 2, 1])
    cases.append(c)
    c = mmi_case("refuse_bzp_stride0_MN", "BZeroPoint {1,1,M,N} with strides {0,0,0,1}: per column written at the "
                 "output's size", u8, u8, (1, 1), 4, 5, 6, 4, None, None)
    c.tensor("BZeroPointTensor", u8, [1, 1, 4, 6], [1, 2, 3, 4, 5, 6], [0, 0, 0, 1])
    cases.append(c)
    c = mmi_case("refuse_azp_stride0_batch", "A {2,3,M,K}, AZeroPoint {2,3,M,1} with strides {0,0,1,0}", u8, u8, (2, 3), 4,
                 5, 6, 4, None, None)
    c.tensor("AZeroPointTensor", u8, [2, 3, 4, 1], [1, 2, 3, 4], [0, 0, 1, 0])
    cases.append(c)
    c = mmi_case("refuse_bzp_rank5", "BZeroPoint {1,1,1,1,N}: 5 dimensions", u8, u8, (1, 1), 4, 5, 6, 4, None, None)
    c.tensor("BZeroPointTensor", u8, [1, 1, 1, 1, 6], [1, 2, 3, 4, 5, 6])
    cases.append(c)
    # Refusals (expected): types and shapes outside the docs.
    cases.append(mmi_case("refuse_out_i8", "OutputTensor INT8", u8, u8, (1, 1), 4, 5, 6, 2, None, None, out_type=i8))
    cases.append(mmi_case("refuse_out_u32", "OutputTensor UINT32", u8, u8, (1, 1), 4, 5, 6, 2, None, None, out_type=u32))
    c = mmi_case("refuse_azp_type", "A UINT8 with an INT8 AZeroPoint", u8, u8, (1, 1), 4, 5, 6, 2, None, None)
    c.tensor("AZeroPointTensor", i8, [1, 1], [3])
    cases.append(c)
    c = mmi_case("refuse_a_i32", "A INT32", u8, u8, (1, 1), 4, 5, 6, 2, None, None)
    c.input(rng_for("a_i32"), "ATensor", i32, [4, 5], values=lambda n: np.arange(n))
    cases.append(c)
    c = mmi_case("refuse_k_mismatch", "A {M,5}, B {4,N}", u8, u8, (1, 1), 4, 5, 6, 2, None, None)
    c.input(rng_for("kmis"), "BTensor", u8, [4, 6])
    cases.append(c)
    c = mmi_case("refuse_azp_M_wrong", "AZeroPoint {1,1,3,1} with M = 4", u8, u8, (1, 1), 4, 5, 6, 4, None, None)
    c.tensor("AZeroPointTensor", u8, [1, 1, 3, 1], [1, 2, 3])
    cases.append(c)
    cases.append(mmi_case("zp_rank4_ab_rank2", "A, B, Output of 2 dimensions, zero points {1,1,M,1} and {1,1,1,N}", u8,
                          i8, (1, 1), 4, 5, 6, 2, "row", "column", zp_rank=4))
    return cases


# ---------------------------------------------------------------------------
# QUANTIZED_LINEAR_CONVOLUTION

def spatial_sizes(sizes, spatial):
    """{N, C, H, W} as a convolution with `spatial` spatial dimensions sees it: {N, C, W} for 1 (H is 1)."""
    return sizes if spatial == 2 else sizes[:2] + sizes[3:]


def conv_case(name, desc, tx, tw, ty, N, Cin, H, W, Cout, kH, kW, G=1, strides=(1, 1), dil=(1, 1), pads=(0, 0, 0, 0),
              per_channel=False, bias=True, zp_present=(1, 1, 1), x_values=None, w_values=None, scales=None, zps=None,
              zp_per_channel=None, x_kind="packed", bias_values=None, spatial=2, ch_sizes=None):
    """spatial 1: H = kH = 1, the height's stride, dilation and padding 1, 1, 0 (3-D tensors, 1-entry params);
    ch_sizes: the sizes of the per-channel FilterScale, FilterZeroPoint and Bias (default {1,Cout,1,1}, {1,Cout,1} for 1-D)."""
    rng = rng_for("conv/" + name)
    c = Case("conv", name, "QUANTIZED_LINEAR_CONVOLUTION", desc)
    c.input(rng, "InputTensor", tx, spatial_sizes([N, Cin, H, W], spatial), x_kind, x_values)
    sc, zv = scales or {}, zps or {}
    one = [1, 1, 1, 1]
    c.tensor("InputScaleTensor", f32, one, sc.get("x", [rand_scale(rng, -6, -3)]))
    if zp_present[0]:
        c.tensor("InputZeroPointTensor", tx, one, zv.get("x", ints(rng, tx, 1)))
    c.input(rng, "FilterTensor", tw, spatial_sizes([Cout, Cin // G, kH, kW], spatial), "packed", w_values)
    ch = ch_sizes or spatial_sizes([1, Cout, 1, 1], spatial)
    c.tensor("FilterScaleTensor", f32, ch if per_channel else one,
             sc.get("w", [rand_scale(rng, -7, -4) for _ in range(Cout if per_channel else 1)]))
    zpc = per_channel if zp_per_channel is None else zp_per_channel
    if zp_present[1]:
        c.tensor("FilterZeroPointTensor", tw, ch if zpc else one, zv.get("w", ints(rng, tw, Cout if zpc else 1)))
    if bias:
        c.tensor("BiasTensor", i32, ch, ints(rng, i32, Cout, -20000, 20000) if bias_values is None else bias_values)
    c.tensor("OutputScaleTensor", f32, one, sc.get("y", [rand_scale(rng, -4, 0)]))
    if zp_present[2]:
        c.tensor("OutputZeroPointTensor", ty, one, zv.get("y", ints(rng, ty, 1)))
    oH = 1 + (H + pads[0] + pads[2] - (1 + (kH - 1) * dil[0])) // strides[0]
    oW = 1 + (W + pads[1] + pads[3] - (1 + (kW - 1) * dil[1])) // strides[1]
    c.params = conv_params(strides, dil, pads, G, spatial)
    return c.output(ty, spatial_sizes([N, Cout, oH, oW], spatial))


def conv_params(strides, dil, pads, G, spatial):
    if spatial == 1:
        assert strides[0] == 1 and dil[0] == 1 and pads[0] == 0 and pads[2] == 0
        return {"Strides": [strides[1]], "Dilations": [dil[1]], "StartPadding": [pads[1]], "EndPadding": [pads[3]],
                "GroupCount": G}
    return {"Strides": list(strides), "Dilations": list(dil), "StartPadding": [pads[0], pads[1]],
            "EndPadding": [pads[2], pads[3]], "GroupCount": G}


def gen_conv():
    cases = []
    for (tx, tw, ty), k in itertools.product(itertools.product(Q8, Q8, Q8), range(6)):
        mix = "".join(SHORT[np.dtype(t)] for t in (tx, tw, ty))
        name = f"random_{mix}_{k}"
        rng = rng_for("sizes/" + name)
        G = [1, 1, 2, 3, 1, 1][k]
        Cin = G * int(rng.integers(1, 4))
        Cout = G * int(rng.integers(1, 4))
        kH, kW = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        st = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        dl = (1 + (k == 4), 1 + (k == 5))
        pads = tuple(int(v) for v in rng.integers(0, 2, 4))
        H, W = int(rng.integers(kH * dl[0], 9)), int(rng.integers(kW * dl[1], 9))
        zpp = (1, 1, 1) if k % 3 else (0, 1, 0) if k % 2 else (1, 0, 1)
        cases.append(conv_case(name, f"N 2 Cin {Cin} {H}x{W}, Cout {Cout} {kH}x{kW}, groups {G}, strides {st}, dilations "
                               f"{dl}, pads {pads}, {'per-channel' if k % 2 else 'per-tensor'} filter, zero points {zpp}",
                               tx, tw, ty, 2, Cin, H, W, Cout, kH, kW, G, st, dl, pads, per_channel=bool(k % 2),
                               bias=k != 3, zp_present=zpp, x_kind=["packed", "padded", "permuted"][k % 3]))
    for (tx, tw, ty) in itertools.product(Q8, Q8, Q8):
        mix = "".join(SHORT[np.dtype(t)] for t in (tx, tw, ty))
        cases.append(conv_case(f"depthwise_{mix}", "depthwise 3x3, 8 channels, pads 1, per-channel", tx, tw, ty, 1, 8, 7, 7,
                               8, 3, 3, 8, pads=(1, 1, 1, 1), per_channel=True))
        cases.append(conv_case(f"large_{mix}", "Cin 16 10x10, Cout 24 3x3, pads 1, per-channel", tx, tw, ty, 1, 16, 10, 10,
                               24, 3, 3, pads=(1, 1, 1, 1), per_channel=True))
        # Stride 2 on channel planes (qdml: the NHWC pairs form between two transpositions, depthwise-planes-pairs).
        cases.append(conv_case(f"depthwise_s2_{mix}", "depthwise 3x3, 16 channels, 2 images, strides 2, pads 1, "
                               "per-channel", tx, tw, ty, 2, 16, 9, 11, 16, 3, 3, 16, strides=(2, 2),
                               pads=(1, 1, 1, 1), per_channel=True))
    # Requantization order: a 1x1 filter over every 8-bit input value, one channel per random filter scale.
    for k in range(8):
        tx, tw = (u8, i8) if k % 2 else (i8, u8)
        rng = rng_for(f"convorder/{k}")
        w = ints(rng, tw, 32)
        cases.append(conv_case(f"order_per_channel_{k}", "requantization order: 1x1 filter, 32 channels, per-channel "
                               "scales, every input value", tx, tw, u8, 1, 1, 16, 16, 32, 1, 1, per_channel=True,
                               bias=bool(k % 3), zp_present=(0, 0, 1), x_values=all_pairs(tx, tw)[0], w_values=w,
                               scales={"x": [rand_scale(rng, -8, 0)], "w": [rand_scale(rng, -8, 0) for _ in range(32)],
                                       "y": [rand_scale(rng, -9, -1)]}))
    # The same with output scales keeping results in range, and the quantize step's edges.
    for k in range(8):
        tx, tw = (u8, i8) if k % 2 else (i8, u8)
        rng = rng_for(f"convorder_in_range/{k}")
        w = ints(rng, tw, 32)
        sx, sw = rand_scale(rng, -8, 0), [rand_scale(rng, -8, 0) for _ in range(32)]
        sy = f32(sx * max(sw) * 255 * 128 / 126)
        cases.append(conv_case(f"order_in_range_{k}", "requantization order: 1x1 filter, 32 channels, per-channel "
                               "scales, every input value, results in range", tx, tw, i8, 1, 1, 16, 16, 32, 1, 1,
                               per_channel=True, bias=False, zp_present=(0, 0, 0), x_values=all_pairs(tx, tw)[0], w_values=w,
                               scales={"x": [sx], "w": sw, "y": [sy]}))
    for k in range(8):  # per-tensor scales searched so that the candidate orders round apart
        tx, tw = (u8, i8) if k % 2 else (i8, u8)
        rng = rng_for(f"convorder_search/{k}")
        w = ints(rng, tw, 32)
        acc = (all_pairs(tx, tw)[0].astype(np.int64)[:, None] * w.astype(np.int64)[None, :]).astype(f32)
        while True:
            sx, sw = rand_scale(rng, -8, 0), rand_scale(rng, -8, 0)
            sy = f32(sx * sw * f32(max(np.abs(acc).max(), 1) / 126) * f32(1 + rng.random() / 8))
            if np.count_nonzero(np.rint(acc * ((sx * sw) / sy)) != np.rint(((acc * sx) * sw) / sy)) >= 1:
                break
        cases.append(conv_case(f"order_search_{k}", "requantization order: 1x1 filter, 32 channels, per-tensor scales "
                               "where fp32(acc)*(fp32(sx*sw)/sy) and ((acc*sx)*sw)/sy round apart", tx, tw, i8, 1, 1, 16,
                               16, 32, 1, 1, bias=False, zp_present=(0, 0, 0), x_values=all_pairs(tx, tw)[0], w_values=w,
                               scales={"x": [sx], "w": [sw], "y": [sy]}))
    for nm, sc in [("inf", (np.inf, 1.0)), ("nan", (np.nan, 1.0)), ("huge", (1e6, 1e4))]:
        for ty, zpv in [(u8, 0), (u8, 200), (i8, -128), (i8, 0), (i8, 127)]:
            cases.append(conv_case(f"edge_{nm}_{SHORT[np.dtype(ty)]}_zp{zpv}", f"quantize step edges: InputScale {sc[0]}, "
                                   f"FilterScale {sc[1]}, output zero point {zpv}", i8, i8, ty, 1, 1, 16, 16, 3, 1, 1,
                                   bias=False, zp_present=(0, 0, 1), x_values=all_pairs(i8, i8)[0],
                                   w_values=np.array([1, -1, 0], i8), scales={"x": [sc[0]], "w": [sc[1]], "y": [1.0]},
                                   zps={"y": [zpv]}))
    # Ties.
    for (tx, tw, ty) in itertools.product(Q8, Q8, Q8):
        mix = "".join(SHORT[np.dtype(t)] for t in (tx, tw, ty))
        cases.append(conv_case(f"ties_{mix}", "multiplier 0.5: odd accumulators are ties", tx, tw, ty, 1, 1, 16, 16, 4, 1,
                               1, bias=True, zp_present=(0, 0, 0), x_values=all_pairs(tx, tw)[0],
                               bias_values=np.array([0, 1, -1, 3], i32),
                               scales={"x": [0.5], "w": [0.25], "y": [0.25]}))
    c = conv_case("params_zp_fewer_dims", "InputScale {1,1,1,1}, InputZeroPoint {1}: different DimensionCount", u8, i8, u8,
                  1, 2, 5, 5, 4, 3, 3)
    c.tensor("InputZeroPointTensor", u8, [1], [9])
    cases.append(c)
    # Refusal: per-channel filter scale with a per-tensor filter zero point, and the reverse.
    cases.append(conv_case("refuse_scale_channel_zp_tensor", "per-channel FilterScale with a per-tensor FilterZeroPoint",
                           u8, i8, u8, 1, 2, 5, 5, 4, 3, 3, per_channel=True, zp_per_channel=False))
    cases.append(conv_case("refuse_scale_tensor_zp_channel", "per-tensor FilterScale with a per-channel FilterZeroPoint",
                           u8, u8, u8, 1, 2, 5, 5, 4, 3, 3, per_channel=False, zp_per_channel=True))
    # Per-channel parameters of fewer dimensions than the output: aligned with its first dimensions.
    for sizes in ([1, 4], [1, 4, 1], [4, 1, 1], [4, 1], [4]):
        tag = "x".join(map(str, sizes))
        cases.append(conv_case(f"params_channel_{tag}", f"per-channel FilterScale and FilterZeroPoint {sizes}, Bias "
                               "{1,4,1,1}", u8, i8, u8, 1, 2, 5, 5, 4, 3, 3, per_channel=True, bias=False,
                               ch_sizes=sizes))
    # One spatial dimension (DimensionCount 1, 3-D tensors, feature level 4.0).
    for k, (tx, tw, ty) in enumerate(itertools.product(Q8, Q8, Q8)):
        mix = "".join(SHORT[np.dtype(t)] for t in (tx, tw, ty))
        rng = rng_for("sizes/conv1d/" + mix)
        G = [1, 2, 1, 3][k % 4]
        Cin, Cout = G * int(rng.integers(1, 5)), G * int(rng.integers(1, 5))
        kW, sw, dw = int(rng.integers(1, 5)), int(rng.integers(1, 3)), 1 + (k % 3 == 2)
        pads = (0, int(rng.integers(0, 3)), 0, int(rng.integers(0, 3)))
        W = int(rng.integers(kW * dw, 24))
        cases.append(conv_case(f"one_d_{mix}", f"1-D: N 2 Cin {Cin} W {W}, Cout {Cout} kW {kW}, groups {G}, stride "
                               f"{sw}, dilation {dw}, pads {pads[1]},{pads[3]}, per-channel", tx, tw, ty, 2, Cin, 1, W,
                               Cout, 1, kW, G, (1, sw), (1, dw), pads, per_channel=True, spatial=1,
                               x_kind=["packed", "padded", "permuted"][k % 3]))
    cases.append(conv_case("one_d_params_4d", "1-D with per-channel FilterScale, FilterZeroPoint and Bias {1,Cout,1,1}",
                           u8, i8, i8, 1, 3, 1, 9, 4, 1, 3, pads=(0, 1, 0, 1), per_channel=True, spatial=1,
                           ch_sizes=[1, 4, 1, 1]))
    cases.append(conv_case("one_d_depthwise", "1-D depthwise, 8 channels, kW 5, pads 2", i8, i8, u8, 1, 8, 1, 20, 8, 1,
                           5, 8, pads=(0, 2, 0, 2), per_channel=True, spatial=1))
    return cases


# ---------------------------------------------------------------------------
# CONVOLUTION_INTEGER

def convi_case(name, desc, tx, tw, N, Cin, H, W, Cout, kH, kW, G=1, strides=(1, 1), dil=(1, 1), pads=(0, 0, 0, 0),
               x_zp="tensor", w_zp="tensor", x_values=None, w_values=None, zps=None, x_kind="packed", out_type=i32,
               spatial=2, zp_sizes=None):
    """Input {N,Cin,H,W} x Filter {Cout,Cin/G,kH,kW} -> INT32 {N,Cout,oH,oW} ({N,C,W} with spatial 1: H = kH = 1);
    x_zp: "tensor" or None (absent); w_zp: "tensor", "channel" ({1,Cout,1,1}, {1,Cout,1} for 1-D) or None;
    zp_sizes: (input's, filter's) sizes instead."""
    rng = rng_for("conv_integer/" + name)
    c = Case("conv_integer", name, "CONVOLUTION_INTEGER", desc)
    zv = zps or {}
    zs = zp_sizes or (spatial_sizes([1, 1, 1, 1], spatial), None)
    c.input(rng, "InputTensor", tx, spatial_sizes([N, Cin, H, W], spatial), x_kind, x_values)
    if x_zp:
        c.tensor("InputZeroPointTensor", tx, zs[0], zv.get("x", ints(rng, tx, 1)))
    c.input(rng, "FilterTensor", tw, spatial_sizes([Cout, Cin // G, kH, kW], spatial), "packed", w_values)
    if w_zp:
        n = Cout if w_zp == "channel" else 1
        c.tensor("FilterZeroPointTensor", tw, zs[1] or spatial_sizes([1, n, 1, 1], spatial),
                 np.resize(np.asarray(zv["w"], tw), n) if "w" in zv else ints(rng, tw, n))
    oH = 1 + (H + pads[0] + pads[2] - (1 + (kH - 1) * dil[0])) // strides[0]
    oW = 1 + (W + pads[1] + pads[3] - (1 + (kW - 1) * dil[1])) // strides[1]
    c.params = conv_params(strides, dil, pads, G, spatial)
    return c.output(out_type, spatial_sizes([N, Cout, oH, oW], spatial))


def gen_conv_integer():
    cases = []
    mixes = list(itertools.product(Q8, Q8))
    zp_forms = [("tensor", "tensor"), ("tensor", "channel"), (None, "channel"), ("tensor", None), (None, None),
                ("tensor", "channel")]
    for (tx, tw), k in itertools.product(mixes, range(6)):
        mix = SHORT[np.dtype(tx)] + SHORT[np.dtype(tw)]
        name = f"random_{mix}_{k}"
        rng = rng_for("sizes/conv_integer/" + name)
        G = [1, 1, 2, 3, 1, 1][k]
        Cin, Cout = G * int(rng.integers(1, 4)), G * int(rng.integers(1, 4))
        kH, kW = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        st = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        dl = (1 + (k == 4), 1 + (k == 5))
        pads = tuple(int(v) for v in rng.integers(0, 2, 4))
        H, W = int(rng.integers(kH * dl[0], 9)), int(rng.integers(kW * dl[1], 9))
        xz, wz = zp_forms[k]
        cases.append(convi_case(name, f"N 2 Cin {Cin} {H}x{W}, Cout {Cout} {kH}x{kW}, groups {G}, strides {st}, "
                                f"dilations {dl}, pads {pads}, InputZeroPoint {xz}, FilterZeroPoint {wz}", tx, tw, 2, Cin,
                                H, W, Cout, kH, kW, G, st, dl, pads, xz, wz, x_kind=["packed", "padded", "permuted"][k % 3]))
    lo_hi = {np.dtype(u8): (0, 255), np.dtype(i8): (-128, 127)}
    for tx, tw in mixes:
        mix = SHORT[np.dtype(tx)] + SHORT[np.dtype(tw)]
        cases.append(convi_case(f"depthwise_{mix}", "depthwise 3x3, 8 channels, pads 1, per-channel FilterZeroPoint", tx,
                                tw, 1, 8, 7, 7, 8, 3, 3, 8, pads=(1, 1, 1, 1), w_zp="channel"))
        cases.append(convi_case(f"large_{mix}", "Cin 16 10x10, Cout 24 3x3, pads 1, per-channel FilterZeroPoint", tx, tw,
                                1, 16, 10, 10, 24, 3, 3, pads=(1, 1, 1, 1), w_zp="channel"))
        # Every input value against filters at the types' extremes, zero points at the extremes:
        # differences of +-255 (and the padding, which is the input zero point, adds 0).
        (xl, xh), (wl, wh) = lo_hi[np.dtype(tx)], lo_hi[np.dtype(tw)]
        for xzv, wzv in [(xl, wh), (xh, wl)]:
            cases.append(convi_case(f"zp_extremes_{mix}_zp{xzv}_{wzv}", f"every input value, filter values at the "
                                    f"extremes, InputZeroPoint {xzv}, FilterZeroPoint {wzv}, pads 1", tx, tw, 1, 1, 16, 16,
                                    4, 2, 2, pads=(1, 1, 1, 1), x_values=all_pairs(tx, tw)[0],
                                    w_values=np.array([wl, wh, wh, wl, wh, wh, wl, wl, 0, wl, wh, 0, wl, wh, 1, 0], tw),
                                    zps={"x": [xzv], "w": [wzv]}))
    # The int32 wrap: K = Cin = 33026 products of 255 * 255 (or -255 * 255) pass 2^31.
    for (tx, tw, xzv, wzv, v) in [(u8, u8, 0, 0, (255, 255)), (u8, i8, 0, 127, (255, -128)),
                                  (i8, u8, 127, 0, (-128, 255)), (i8, i8, -128, 127, (127, -128))]:
        mix = SHORT[np.dtype(tx)] + SHORT[np.dtype(tw)]
        cin = 33026
        cases.append(convi_case(f"wrap_K{cin}_{mix}", f"Cin {cin}, 1x1: every product {(v[0] - xzv) * (v[1] - wzv)}, "
                                "the sum wraps mod 2^32", tx, tw, 1, cin, 1, 2, 2, 1, 1,
                                x_values=np.full(2 * cin, v[0], tx), w_values=np.concatenate(
                                    [np.full(cin, v[1], tw), np.resize(np.array([v[1], wzv], tw), cin)]),
                                zps={"x": [xzv], "w": [wzv]}))
    # Refusals, as for the other operators: DirectML's verdict is recorded either way.
    cases.append(convi_case("refuse_out_i8", "OutputTensor INT8", u8, i8, 1, 2, 5, 5, 4, 3, 3, out_type=i8))
    cases.append(convi_case("refuse_out_u32", "OutputTensor UINT32", u8, i8, 1, 2, 5, 5, 4, 3, 3, out_type=u32))
    c = convi_case("refuse_xzp_channel", "InputZeroPoint {1,Cin,1,1}", u8, i8, 1, 2, 5, 5, 4, 3, 3, x_zp=None)
    c.tensor("InputZeroPointTensor", u8, [1, 2, 1, 1], [1, 2])
    cases.append(c)
    c = convi_case("refuse_wzp_type", "FilterZeroPoint UINT8 for an INT8 filter", u8, i8, 1, 2, 5, 5, 4, 3, 3, w_zp=None)
    c.tensor("FilterZeroPointTensor", u8, [1, 1, 1, 1], [3])
    cases.append(c)
    c = convi_case("refuse_wzp_count", "FilterZeroPoint {1,3,1,1} with Cout 4", u8, i8, 1, 2, 5, 5, 4, 3, 3, w_zp=None)
    c.tensor("FilterZeroPointTensor", i8, [1, 3, 1, 1], [1, 2, 3])
    cases.append(c)
    c = convi_case("refuse_input_i32", "InputTensor INT32", u8, i8, 1, 2, 5, 5, 4, 3, 3, x_zp=None)
    c.input(rng_for("convi_i32"), "InputTensor", i32, [1, 2, 5, 5], values=lambda n: np.arange(n))
    cases.append(c)
    cases.append(convi_case("refuse_groups", "GroupCount 3 with Cin 4", u8, i8, 1, 4, 5, 5, 3, 3, 3, G=3))
    # Zero points of fewer dimensions than the output: aligned with its first dimensions.
    for xs, ws in (([1, 1], [1, 4]), ([1, 1, 1], [1, 4, 1]), ([1, 1, 1], [4, 1, 1]), ([1, 1], [4, 1]), ([1], [4])):
        tag = "x".join(map(str, ws))
        cases.append(convi_case(f"zp_channel_{tag}", f"InputZeroPoint {xs}, per-channel FilterZeroPoint {ws}", u8, i8,
                                1, 2, 5, 5, 4, 3, 3, w_zp="channel", zp_sizes=(xs, ws)))
    # One spatial dimension (DimensionCount 1, 3-D tensors, feature level 4.0).
    for k, (tx, tw) in enumerate(mixes):
        mix = SHORT[np.dtype(tx)] + SHORT[np.dtype(tw)]
        rng = rng_for("sizes/conv_integer_1d/" + mix)
        G = [1, 2, 1, 3][k]
        Cin, Cout = G * int(rng.integers(1, 5)), G * int(rng.integers(1, 5))
        kW, sw, dw = int(rng.integers(1, 5)), int(rng.integers(1, 3)), 1 + (k == 2)
        pads = (0, int(rng.integers(0, 3)), 0, int(rng.integers(0, 3)))
        W = int(rng.integers(kW * dw, 24))
        cases.append(convi_case(f"one_d_{mix}", f"1-D: N 2 Cin {Cin} W {W}, Cout {Cout} kW {kW}, groups {G}, stride "
                                f"{sw}, dilation {dw}, pads {pads[1]},{pads[3]}, per-channel FilterZeroPoint", tx, tw, 2,
                                Cin, 1, W, Cout, 1, kW, G, (1, sw), (1, dw), pads, w_zp="channel", spatial=1,
                                x_kind=["packed", "padded", "permuted"][k % 3]))
    for xs, ws in (([1, 1, 1, 1], [1, 3, 1, 1]), ([1, 1], [1, 3]), ([1, 1, 1], [1, 1, 3])):
        tag = "x".join(map(str, ws))
        cases.append(convi_case(f"one_d_zp_{tag}", f"1-D, InputZeroPoint {xs}, per-channel FilterZeroPoint {ws}", u8,
                                u8, 1, 2, 1, 7, 3, 1, 3, pads=(0, 1, 0, 1), w_zp="channel", spatial=1, zp_sizes=(xs, ws)))
    c = convi_case("zp_fewer_dims", "InputZeroPoint {1} and FilterZeroPoint {1}: one dimension", u8, i8, 1, 2, 5, 5, 4,
                   3, 3, x_zp=None, w_zp=None)
    c.tensor("InputZeroPointTensor", u8, [1], [9])
    c.tensor("FilterZeroPointTensor", i8, [1], [-3])
    cases.append(c)
    return cases


# ---------------------------------------------------------------------------
# ELEMENT_WISE_CLIP

def clip_case(name, desc, t, sizes, lo, hi, scale_bias=None, x_kind="packed", x_values=None, out_strides=None):
    rng = rng_for("clip/" + name)
    c = Case("clip", name, "ELEMENT_WISE_CLIP", desc)
    if x_values is None and t == f32:
        x_values = lambda n: float_values(rng, n, special=True)
    c.input(rng, "InputTensor", t, sizes, x_kind, x_values)
    c.params = {"Min": lo, "Max": hi}
    if scale_bias is not None:
        c.params["ScaleBias"] = {"Scale": scale_bias[0], "Bias": scale_bias[1]}
    return c.output(t, sizes, out_strides)


def jf(v):
    v = float(v)
    return v if np.isfinite(v) else ("Infinity" if v > 0 else "-Infinity")


def gen_clip():
    cases = []
    kinds = ["packed", "padded", "permuted", "broadcast"]
    for t, k in itertools.product((f32, i8, u8, i32, u32, i64, u64), range(8)):
        s = SHORT[np.dtype(t)]
        name = f"random_{s}_{k}"
        rng = rng_for("sizes/" + name)
        rank = 1 + k
        sizes = rand_sizes(rng, rank, 2048, 6)
        if t == f32:
            lo, hi = sorted(float(f32(v)) for v in rng.standard_normal(2) * 3)
        else:
            info = np.iinfo(t)
            lo, hi = sorted(float(v) for v in rng.uniform(float(info.min) * 0.6, float(info.max) * 0.6, 2))
            lo, hi = float(f32(lo)), float(f32(hi))
        sb = None
        if k % 3 == 2 and t not in (i64, u64):
            sb = (float(f32(rng.uniform(-2, 2))), float(f32(rng.uniform(-50, 50))))
        cases.append(clip_case(name, f"{rank} dimensions {sizes}, input {kinds[k % 4]}, Min {lo} Max {hi}"
                               f"{', ScaleBias ' + str(sb) if sb else ''}", t, sizes, lo, hi, sb, kinds[k % 4]))
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 1.4e-45, -1.4e-45, 1.0, -1.0, 2.0, -2.0,
                        3.4e38, -3.4e38, 0.5, 6.0, -6.0, 1e-38], f32)
    for nm, lo, hi, sb in [("nan_inf_0_6", 0.0, 6.0, None), ("nan_inf_neg", -1.0, 1.0, None),
                           ("nan_inf_unbounded", "-Infinity", "Infinity", None), ("min_gt_max", 2.0, -2.0, None),
                           ("min_eq_max", 1.0, 1.0, None), ("zero_bounds", 0.0, 0.0, None), ("neg_zero_bounds", -0.0, -0.0, None),
                           ("scale_bias", -4.0, 4.0, (2.0, 0.5)), ("scale_bias_inf_nan", -4.0, 4.0, (0.0, 1.0)),
                           ("scale_bias_nan_result", "-Infinity", "Infinity", (np.inf, "-Infinity")),
                           ("subnormal_bounds", -1e-40, 1e-40, None), ("max_only", "-Infinity", 0.5, None),
                           ("min_only", -0.5, "Infinity", None)]:
        desc = f"FLOAT32 NaN, infinities, signed zeros, subnormals; Min {lo} Max {hi}" + (f", ScaleBias {sb}" if sb else "")
        sbj = None if sb is None else (jf(sb[0]) if not isinstance(sb[0], str) else sb[0], sb[1] if isinstance(sb[1], str) else jf(sb[1]))
        cases.append(clip_case(f"special_{nm}", desc, f32, [special.size], lo, hi, sbj, x_values=special))
    for t in (i8, u8, i32, u32, i64, u64):
        s = SHORT[np.dtype(t)]
        info = np.iinfo(t)
        ext = np.array([info.min, info.min + 1, -1 if info.min else 0, 0, 1, info.max - 1, info.max], dtype=object)
        vals = np.array([int(v) for v in ext], t)
        cases.append(clip_case(f"extremes_{s}", "type extremes, bounds beyond the type's range (saturated)", t, [vals.size],
                               -1e30, 1e30, x_values=vals))
        cases.append(clip_case(f"fraction_bounds_{s}", "fractional bounds: truncation toward zero", t, [vals.size], -2.7,
                               2.7, x_values=vals))
        cases.append(clip_case(f"min_gt_max_{s}", "Min > Max", t, [vals.size], 5.0, -5.0, x_values=vals))
        if t in (i64, u64):
            cases.append(clip_case(f"refuse_scale_bias_{s}", "ScaleBias on a 64-bit integer tensor", t, [vals.size], -10.0,
                                   10.0, (2.0, 1.0), x_values=vals))
        else:
            cases.append(clip_case(f"scale_bias_{s}", "ScaleBias on integers: g(x) in binary32, back by truncation", t,
                                   [vals.size], -1e30, 1e30, (0.75, 0.5), x_values=vals))
            cases.append(clip_case(f"scale_bias_nan_{s}", "ScaleBias giving NaN (x * inf + -inf) and infinities", t,
                                   [vals.size], -1e30, 1e30, ("Infinity", "-Infinity"), x_values=vals))
    cases.append(clip_case("inplace_layout_f32", "output with permuted strides", f32, [4, 3, 2], -1.0, 1.0,
                           out_strides=[1, 4, 12]))
    return cases


# ---------------------------------------------------------------------------
# ELEMENT_WISE_CLIP1 (typed Min/Max, docs/semantics.md section 13)

def jv(v, t):
    """A Min/Max of type t as the case format writes it (exact ints; NaN and infinities as strings)."""
    if np.dtype(t).kind == "f":
        v = float(v)
        if np.isnan(v):
            return "NaN"
        return v if np.isfinite(v) else ("Infinity" if v > 0 else "-Infinity")
    return int(v)


def clip1_case(name, desc, t, sizes, lo, hi, scale_bias=None, x_kind="packed", x_values=None, out_strides=None,
               min_max_type=None):
    rng = rng_for("clip1/" + name)
    c = Case("clip1", name, "ELEMENT_WISE_CLIP1", desc)
    if x_values is None and t == f32:
        x_values = lambda n: float_values(rng, n, special=True)
    c.input(rng, "InputTensor", t, sizes, x_kind, x_values)
    mt = t if min_max_type is None else min_max_type
    c.params = {"Min": jv(lo, mt), "Max": jv(hi, mt)}
    if min_max_type is not None:
        c.params["MinMaxDataType"] = TYPE_NAME[np.dtype(min_max_type)]
    if scale_bias is not None:
        c.params["ScaleBias"] = {"Scale": jv(scale_bias[0], f32), "Bias": jv(scale_bias[1], f32)}
    return c.output(t, sizes, out_strides)


def gen_clip1():
    cases = []
    kinds = ["packed", "padded", "permuted", "broadcast"]
    for t, k in itertools.product((f32, i8, u8, i32, u32, i64, u64), range(6)):
        s = SHORT[np.dtype(t)]
        name = f"random_{s}_{k}"
        rng = rng_for("sizes/clip1/" + name)
        rank = 1 + k + (k > 3)  # 1-5, 7
        sizes = rand_sizes(rng, rank, 2048, 6)
        if t == f32:
            lo, hi = sorted(float(f32(v)) for v in rng.standard_normal(2) * 3)
        else:
            lo, hi = sorted(int(v) for v in ints(rng, t, 2))
        sb = None
        if k % 3 == 2 and t not in (i64, u64):
            sb = (float(f32(rng.uniform(-2, 2))), float(f32(rng.uniform(-50, 50))))
        cases.append(clip1_case(name, f"{rank} dimensions {sizes}, input {kinds[k % 4]}, Min {lo} Max {hi}"
                                f"{', ScaleBias ' + str(sb) if sb else ''}", t, sizes, lo, hi, sb, kinds[k % 4]))
    nan, inf = float("nan"), float("inf")
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 1.4e-45, -1.4e-45, 1.0, -1.0, 2.0,
                        -2.0, 3.4e38, -3.4e38, 0.5, 6.0, -6.0, 1e-38], f32)
    for nm, lo, hi, sb in [("basic", -1.0, 2.0, None), ("min_gt_max", 2.0, -1.0, None), ("min_eq_max", 1.0, 1.0, None),
                           ("zero_bounds", 0.0, 0.0, None), ("neg_zero_min", -0.0, 0.0, None),
                           ("neg_zero_max", 0.0, -0.0, None), ("neg_zero_bounds", -0.0, -0.0, None),
                           ("nan_min", nan, 2.0, None), ("nan_max", -1.0, nan, None), ("nan_both", nan, nan, None),
                           ("nan_min_gt", nan, -1.0, None), ("unbounded", -inf, inf, None),
                           ("subnormal_bounds", -1e-40, 1e-40, None), ("scale_bias", -4.0, 4.0, (2.0, 0.5)),
                           ("scale_bias_one", -4.0, 4.0, (1.0, 0.0)), ("scale_bias_one_negzero", -4.0, 4.0, (1.0, -0.0)),
                           ("scale_bias_nan", -inf, inf, (inf, -inf)), ("scale_bias_nan_max", -1.0, nan, (2.0, 0.0))]:
        desc = f"FLOAT32 NaN, infinities, signed zeros, subnormals; Min {lo} Max {hi}" + (f", ScaleBias {sb}" if sb else "")
        cases.append(clip1_case(f"special_{nm}", desc, f32, [special.size], lo, hi, sb, x_values=special))
    rng = rng_for("clip1/fma")
    cases.append(clip1_case("scale_bias_fma_f32", "2000 FLOAT32 values, ScaleBias (0.1, 0.3): two roundings or an FMA",
                            f32, [2000], -1e30, 1e30, (0.1, 0.3), x_values=(rng.uniform(-100, 100, 2000)).astype(f32)))
    for t in (i8, u8, i32, u32, i64, u64):
        s = SHORT[np.dtype(t)]
        info = np.iinfo(t)
        vals = np.array([int(v) for v in (info.min, info.min + 1, -1 if info.min else 0, 0, 1, 2, 3, info.max - 2,
                                          info.max - 1, info.max)], t)
        cases.append(clip1_case(f"extremes_{s}", "type extremes as bounds", t, [vals.size], info.min, info.max,
                                x_values=vals))
        cases.append(clip1_case(f"near_extremes_{s}", "bounds one inside the extremes (no binary32 value for 32/64 bits)",
                                t, [vals.size], info.min + 1, info.max - 1, x_values=vals))
        cases.append(clip1_case(f"min_gt_max_{s}", "Min > Max", t, [vals.size], 3, 1, x_values=vals))
        cases.append(clip1_case(f"min_eq_max_{s}", "Min = Max", t, [vals.size], 2, 2, x_values=vals))
        if t in (i64, u64):
            cases.append(clip1_case(f"refuse_scale_bias_{s}", "ScaleBias on a 64-bit integer tensor", t, [vals.size], 0,
                                    10, (2.0, 1.0), x_values=vals))
            big = np.array([2**53 - 1, 2**53, 2**53 + 1, 2**53 + 2, 2**62 + 1, 2**63 - 1], t)
            cases.append(clip1_case(f"beyond_2p53_{s}", "bounds and values beyond 2^53 (no binary64 value)", t, [big.size],
                                    2**53 + 1, 2**62 + 1, x_values=big))
        else:
            cases.append(clip1_case(f"scale_bias_{s}", "ScaleBias on integers: g(x) in binary32, back by truncation", t,
                                    [vals.size], info.min, info.max, (0.75, 0.5), x_values=vals))
            cases.append(clip1_case(f"scale_bias_half_{s}", "ScaleBias (0.5, 0.25): truncation toward zero", t,
                                    [vals.size], info.min, info.max, (0.5, 0.25), x_values=vals))
            cases.append(clip1_case(f"scale_bias_nan_{s}", "ScaleBias giving NaN (x * inf + -inf) and infinities", t,
                                    [vals.size], info.min, info.max, (inf, -inf), x_values=vals))
            cases.append(clip1_case(f"scale_bias_nan_scale_{s}", "ScaleBias with a NaN scale", t, [vals.size], info.min,
                                    info.max, (nan, 0.0), x_values=vals))
    big32 = np.array([16777217, 16777219, 2147483647, -2147483647, 123456789, -16777217], i32)
    for nm, sb in [("one", (1.0, 0.0)), ("one_negzero", (1.0, -0.0)), ("nearly_one", (1.0000001, 0.0)),
                   ("one_bias1", (1.0, 1.0)), ("half_big", (0.5, 0.0))]:
        cases.append(clip1_case(f"scale_bias_{nm}_i32", f"INT32 beyond 2^24, ScaleBias {sb}", i32, [big32.size],
                                -2**31, 2**31 - 1, sb, x_values=big32))
    cases.append(clip1_case("scale_bias_one_u32", "UINT32 beyond 2^24, ScaleBias (1, 0)", u32, [4], 0, 2**32 - 1,
                            (1.0, 0.0), x_values=np.array([16777217, 4294967295, 4294967041, 3], u32)))
    cases.append(clip1_case("inplace_layout_i32", "output with permuted strides", i32, [4, 3, 2], -100, 100,
                            out_strides=[1, 4, 12]))
    return cases


def min_max_type_cases():
    """CLIP1 with a MinMaxDataType other than the output's: DirectML's page forbids it, DirectML 1.15.4
    computes it (converting the bounds); qdml refuses it, so these stay out of the data (--probe-min-max-type)."""
    return [clip1_case("min_max_type_i32_for_i8", "MinMaxDataType INT32 for INT8 tensors", i8, [4], -5, 5,
                       min_max_type=i32),
            clip1_case("min_max_type_f32_for_i32", "MinMaxDataType FLOAT32 for INT32 tensors", i32, [4], -5.0, 5.0,
                       x_values=np.array([-7, -3, 4, 9], i32), min_max_type=f32)]



# ---------------------------------------------------------------------------
# MATRIX_MULTIPLY_INTEGER_TO_FLOAT (docs/semantics.md section 16). K stays at
# 64 or below: above a shape-dependent K (96 at the least measured) DirectML
# on this stack splits the sum (probe_matmul_integer_to_float.py --sweep),
# which the directml profile does not follow.

def mmitf_case(name, desc, ta, tb, batch, M, K, N, rank=4, a_param="tensor", b_param="tensor", a_zp=True, b_zp=True,
               bias=True, a_kind="packed", b_kind="packed", b_bcast=False, a_values=None, b_values=None, zps=None,
               scales=None, bias_values=None, param_rank=None):
    """A {B,C,M,K} x B {B,C,K,N} -> FLOAT32 {B,C,M,N}, right-aligned to `rank`; scales (and zero points, of the
    same shape) per "tensor" or per "row" / "column", of `param_rank` dimensions (default `rank`)."""
    rng = rng_for("matmul_integer_to_float/" + name)
    c = Case("matmul_integer_to_float", name, "MATRIX_MULTIPLY_INTEGER_TO_FLOAT", desc)
    B0, C0 = batch
    a_sizes, b_sizes, y_sizes = right([B0, C0, M, K], rank), right([B0, C0, K, N], rank), right([B0, C0, M, N], rank)
    pr = rank if param_rank is None else param_rank
    sv, zv = scales or {}, zps or {}
    c.input(rng, "ATensor", ta, a_sizes, a_kind, a_values)
    sizes = right([1, 1, M if a_param == "row" else 1, 1], pr)
    n = int(np.prod(sizes))
    c.tensor("AScaleTensor", f32, sizes, np.resize(np.asarray(sv["a"], f32), n) if "a" in sv
             else np.array([rand_scale(rng, -6, 1) for _ in range(n)], f32))
    if a_zp:
        c.tensor("AZeroPointTensor", ta, sizes, np.resize(np.asarray(zv["a"], ta), n) if "a" in zv else ints(rng, ta, n))
    b_input(c, rng, tb, b_sizes, rank, b_kind, b_values, b_bcast)
    sizes = right([1, 1, 1, N if b_param == "column" else 1], pr)
    n = int(np.prod(sizes))
    c.tensor("BScaleTensor", f32, sizes, np.resize(np.asarray(sv["b"], f32), n) if "b" in sv
             else np.array([rand_scale(rng, -6, 1) for _ in range(n)], f32))
    if b_zp:
        c.tensor("BZeroPointTensor", tb, sizes, np.resize(np.asarray(zv["b"], tb), n) if "b" in zv else ints(rng, tb, n))
    if bias:
        n = int(np.prod(y_sizes))
        c.tensor("BiasTensor", f32, y_sizes, np.resize(np.asarray(bias_values, f32), n) if bias_values is not None
                 else (rng.standard_normal(n) * 10 ** rng.uniform(-2, 3)).astype(f32))
    return c.output(f32, y_sizes)


def gen_matmul_integer_to_float():
    cases = []
    mixes = list(itertools.product(Q8, Q8))
    forms = [("tensor", "tensor"), ("row", "column"), ("row", "tensor"), ("tensor", "column")]
    kinds = ["packed", "padded", "permuted"]
    for (ta, tb), k in itertools.product(mixes, range(8)):
        mix = SHORT[np.dtype(ta)] + SHORT[np.dtype(tb)]
        name = f"random_{mix}_{k}"
        rng = rng_for("sizes/" + name)
        rank = 2 + k % 3
        M, K, N = int(rng.integers(1, 20)), int(rng.integers(1, 65)), int(rng.integers(1, 20))
        batch = (int(rng.integers(1, 3)), int(rng.integers(1, 4))) if rank == 4 else (1, int(rng.integers(1, 4))) \
            if rank == 3 else (1, 1)
        ap, bp = forms[k % 4]
        a_zp, b_zp, bias = k % 3 != 2, k % 5 != 4, k % 2 == 0
        cases.append(mmitf_case(name, f"rank {rank}, batch {batch}, M {M} K {K} N {N}, scales {ap}/{bp}, zero points "
                                      f"{'A' if a_zp else ''}{'B' if b_zp else ''}, {'bias' if bias else 'no bias'}",
                                ta, tb, batch, M, K, N, rank, ap, bp, a_zp, b_zp, bias, kinds[k % 3], kinds[(k + 1) % 3],
                                b_bcast=(rank == 4 and k % 2 == 1)))
    # 32-bit operands: large values and zero points (DirectML converts each to binary32 before subtracting).
    for ta, tb in [(i32, i32), (u32, u32), (i32, i8), (u8, i32), (i32, u32)]:
        mix = SHORT[np.dtype(ta)] + SHORT[np.dtype(tb)]
        rng = rng_for("wide/" + mix)
        M, K, N = 5, 9, 6
        big = lambda t, n: ints(rng, t, n) if np.dtype(t).itemsize == 4 else ints(rng, t, n)
        cases.append(mmitf_case(f"wide_{mix}", f"{TYPE_NAME[np.dtype(ta)]} x {TYPE_NAME[np.dtype(tb)]}: values and zero "
                                "points over the whole range", ta, tb, (1, 1), M, K, N, 2, "row", "column",
                                a_values=big(ta, M * K), b_values=big(tb, K * N)))
        cases.append(mmitf_case(f"wide_{mix}_near_2p24", f"{TYPE_NAME[np.dtype(ta)]} x {TYPE_NAME[np.dtype(tb)]}: values "
                                "near 2^24, zero points 1 (fp32(A) rounds)", ta, tb, (1, 1), 4, 3, 4, 2, "tensor",
                                "tensor", a_values=ints(rng, ta, 12, 16777210, 16777230) if ta != u8 else None,
                                b_values=ints(rng, tb, 12, 16777210, 16777230) if tb not in (i8, u8) else None,
                                zps={"a": [1], "b": [1]}, scales={"a": [1.0], "b": [1.0]}))
    # Special scales and biases: NaN, infinities, zeros, subnormals, huge.
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 1e-40, 3e38, -2.5, 1.0], f32)
    for k in range(4):
        rng = rng_for(f"mmitf_special/{k}")
        sv = {}
        if k in (0, 2):
            sv["a"] = np.resize(specials, 10)
        if k in (1, 2):
            sv["b"] = np.resize(np.roll(specials, 3), 10)
        bias_values = rng.choice(np.concatenate([specials, rng.standard_normal(20).astype(f32)]), 100).astype(f32) \
            if k == 3 else None
        cases.append(mmitf_case(f"special_{k}", "NaN, infinite, zero, subnormal and huge "
                                + ("scales" if k < 3 else "biases"), u8, i8, (1, 1), 10, 7, 10, 2, "row", "column",
                                scales=sv, bias_values=bias_values))
    # Extreme operands and zero points: every (a, b) product of each 8-bit mix once (K 1), and a long K.
    for ta, tb in mixes:
        mix = SHORT[np.dtype(ta)] + SHORT[np.dtype(tb)]
        va, vb = all_pairs(ta, tb)
        cases.append(mmitf_case(f"pairs_{mix}", "every product once (K 1), per-row and per-column scales and zero "
                                "points", ta, tb, (1, 1), 256, 1, 256, 2, "row", "column", a_values=va, b_values=vb))
    cases.append(mmitf_case("k64_extremes", "K 64 of extreme operands, zero points at the other end", u8, i8, (1, 1), 8,
                            64, 8, 2, "row", "column", a_values=np.full(512, 255), b_values=np.full(512, -128),
                            zps={"a": [0], "b": [127]}))
    # Layouts: batch broadcast through zero strides, a padded output, a bias repeated through zero strides.
    cases.append(mmitf_case("bcast_stride0", "rank 4, B {2,3,K,N} with zero strides on batch and channel", u8, u8,
                            (2, 3), 7, 9, 8, 4, "row", "column", b_bcast=True))
    c = mmitf_case("out_padded", "Output {2,M,N} with padded strides", u8, i8, (1, 2), 3, 4, 5, 3, "row", "column")
    c.output(f32, [2, 3, 5], [24, 8, 1])
    cases.append(c)
    c = mmitf_case("bias_stride0_column", "Bias {M,N} with strides {0,1}: one bias per column", u8, i8, (1, 1), 4, 5, 6,
                   2, "tensor", "column", bias=False)
    c.tensor("BiasTensor", f32, [4, 6], [1.5, -2, 3.25, 0.125, -7, 100], [0, 1])
    cases.append(c)
    cases.append(mmitf_case("scales_rank1", "rank 4 A and B, scales and zero points {1}", u8, i8, (2, 2), 4, 5, 6, 4,
                            param_rank=1))
    cases.append(mmitf_case("scales_rank3_a_rank2", "rank 2 A and B, scales and zero points of 3 dimensions {1,M,1}, "
                            "{1,1,N}", i8, u8, (1, 1), 4, 5, 6, 2, "row", "column", param_rank=3))
    cases.append(mmitf_case("no_zero_points_no_bias", "neither zero point, no bias", i8, i8, (1, 1), 6, 17, 5, 2, "row",
                            "column", a_zp=False, b_zp=False, bias=False))
    c = mmitf_case("scale_stride0_row", "AScale and AZeroPoint {1,1,M,N} with strides {0,0,1,0}: per row written at "
                   "the output's size", u8, i8, (1, 1), 4, 5, 6, 4, "tensor", "tensor")
    c.tensor("AScaleTensor", f32, [1, 1, 4, 6], [0.5, 0.25, 2.0, 1.0], [0, 0, 1, 0])
    c.tensor("AZeroPointTensor", u8, [1, 1, 4, 6], [1, 2, 3, 4], [0, 0, 1, 0])
    cases.append(c)
    # Refusals.
    cases.append(mmitf_case("refuse_bias_row_sizes", "Bias {1,N} against Output {M,N}", u8, i8, (1, 1), 4, 5, 6, 2,
                            bias=False))
    cases[-1].tensor("BiasTensor", f32, [1, 6], np.arange(6, dtype=f32))
    cases.append(mmitf_case("refuse_bias_fewer_dims", "Bias {M,N} against Output {1,M,N}", u8, i8, (1, 1), 4, 5, 6, 3,
                            bias=False))
    cases[-1].tensor("BiasTensor", f32, [4, 6], np.arange(24, dtype=f32))
    c = mmitf_case("refuse_azp_type", "A UINT8 with an INT8 AZeroPoint", u8, i8, (1, 1), 4, 5, 6, 2, a_zp=False)
    c.tensor("AZeroPointTensor", i8, [1, 1], [3])
    cases.append(c)
    c = mmitf_case("refuse_azp_unlike_scale", "AScale {M,1}, AZeroPoint {1,1}: a zero point shaped unlike its scale",
                   u8, i8, (1, 1), 4, 5, 6, 2, "row", "column")
    c.tensor("AZeroPointTensor", u8, [1, 1], [7])
    cases.append(c)
    c = mmitf_case("refuse_out_i32", "OutputTensor INT32", u8, i8, (1, 1), 4, 5, 6, 2, bias=False)
    c.output(i32, [4, 6])
    cases.append(c)
    c = mmitf_case("refuse_scale_per_k", "AScale and AZeroPoint {1,K}: per column of A", u8, i8, (1, 1), 3, 4, 5, 2)
    c.tensor("AScaleTensor", f32, [1, 4], [0.5, 1, 2, 3])
    c.tensor("AZeroPointTensor", u8, [1, 4], [1, 2, 3, 4])
    cases.append(c)
    c = mmitf_case("refuse_bcast_b_sizes1", "A {2,1,M,K}, B {1,1,K,N}: B broadcast by Sizes 1", u8, i8, (2, 1), 3, 4,
                   5, 4)
    c.input(rng_for("mmitf_bcast_b"), "BTensor", i8, [1, 1, 4, 5])
    cases.append(c)
    c = mmitf_case("refuse_rank5", "A, B, Output of 5 dimensions", u8, i8, (1, 1), 3, 4, 5, 4, bias=False)
    for m, e in c.tensors.items():
        e["sizes"] = [1] + e["sizes"]
        if "strides" in e:
            e["strides"] = [0] + e["strides"]
    cases.append(c)
    return cases


# ---------------------------------------------------------------------------
# QUANTIZED_LINEAR_AVERAGE_POOLING

def pool_case(name, desc, t, sizes, window, strides=None, dil=None, pads=None, include=False, param="tensor",
              zps=("in", "out"), x_kind="packed", x_values=None, scales=None, zp_values=None, out_strides=None):
    """Input {N,C,(D,)H,W} of type t -> Output of t; param: "tensor" ({1,...,1}), "channel" ({1,C,1,...}) or
    "fewer" ({1,C}: aligned with the output's first dimensions); zps: which zero points are present."""
    rng = rng_for("average_pooling/" + name)
    c = Case("average_pooling", name, "QUANTIZED_LINEAR_AVERAGE_POOLING", desc)
    n = len(sizes) - 2
    strides, dil = list(strides or [1] * n), list(dil or [1] * n)
    pads = list(pads or [0] * (2 * n))
    c.input(rng, "InputTensor", t, sizes, x_kind, x_values)
    C = sizes[1]
    k = 1 if param == "tensor" else C
    psz = [1] * len(sizes) if param == "tensor" else [1, C] + [1] * n if param == "channel" else [1, C]
    xs, ys = scales if scales is not None else (rand_scale(rng, -6, 0) * np.ones(k, f32),
                                                rand_scale(rng, -6, 0) * np.ones(k, f32))
    xs = np.resize(np.asarray(xs, f32), k)
    ys = np.resize(np.asarray(ys, f32), k)
    c.tensor("InputScaleTensor", f32, psz, xs)
    zv = zp_values or {}
    if "in" in zps:
        c.tensor("InputZeroPointTensor", t, psz, np.resize(np.asarray(zv["in"], t), k) if "in" in zv else ints(rng, t, k))
    c.tensor("OutputScaleTensor", f32, psz, ys)
    if "out" in zps:
        c.tensor("OutputZeroPointTensor", t, psz, np.resize(np.asarray(zv["out"], t), k) if "out" in zv else
                 ints(rng, t, k))
    out = [sizes[0], C] + [1 + (sizes[2 + i] + pads[i] + pads[n + i] - (1 + (window[i] - 1) * dil[i])) // strides[i]
                           for i in range(n)]
    c.params = {"Strides": strides, "WindowSize": list(window), "StartPadding": pads[:n], "EndPadding": pads[n:],
                "Dilations": dil, "IncludePadding": bool(include)}
    return c.output(t, out, out_strides)


def gen_average_pooling():
    cases = []
    zp_forms = [("in", "out"), ("in", "out"), ("out",), ("in",), (), ("in", "out")]
    for t, k in itertools.product(Q8, range(12)):
        name = f"random_{SHORT[np.dtype(t)]}_{k}"
        rng = rng_for("sizes/average_pooling/" + name)
        n = 3 if k % 4 == 3 else 2
        window = [int(rng.integers(1, 4)) for _ in range(n)]
        dil = [int(rng.integers(1, 3)) if k % 3 == 1 else 1 for _ in range(n)]
        strides = [int(rng.integers(1, 3)) for _ in range(n)]
        pads = [int(rng.integers(0, w)) for w in window] + [int(rng.integers(0, w)) for w in window]
        sp = [int(rng.integers(max(1, (window[i] - 1) * dil[i] + 1 - pads[i] - pads[n + i]), 7 if n == 3 else 10))
              for i in range(n)]
        sizes = [int(rng.integers(1, 3)), int(rng.integers(1, 5))] + sp
        param = ["tensor", "channel"][k % 2]
        cases.append(pool_case(name, f"{n} spatial dims, window {window}, strides {strides}, dilations {dil}, pads "
                               f"{pads}, IncludePadding {k % 2 == 1}, {param} parameters, zero points {zp_forms[k % 6]}",
                               t, sizes, window, strides, dil, pads, k % 2 == 1, param, zp_forms[k % 6],
                               x_kind=["packed", "padded", "permuted"][k % 3]))
    for t in Q8:
        s = SHORT[np.dtype(t)]
        # Ties: OutputScale equal to (or a multiple of) a non-dyadic InputScale: the binary32 steps decide.
        for j, (sc, mult) in enumerate([(0.1, 1), (0.3, 2), (0.7, 1), (1 / 3, 0.5), (0.05, 1), (0.0123, 4)]):
            window = [(2, 2), (1, 2), (3, 3), (2, 4), (4, 4), (5, 5)][j]
            sc = f32(sc)
            cases.append(pool_case(f"ties_{s}_{j}", f"InputScale {sc}, OutputScale {f32(sc * mult)}: averages near "
                                   f"k + 0.5, window {window}, padding 1, IncludePadding {j % 2 == 0}", t,
                                   [1, 4, 10, 10], window, pads=[1, 1, 1, 1], include=j % 2 == 0,
                                   param="channel" if j % 3 == 0 else "tensor", scales=(sc, f32(sc * mult))))
        # A window without input elements (0/0 = NaN), per zero-point form; infinities (OutputScale 0).
        for zname, zps, param in [("no_zp", (), "tensor"), ("zp", ("in", "out"), "tensor"),
                                  ("out_zp", ("out",), "tensor"), ("zp_per_channel", ("in", "out"), "channel")]:
            cases.append(pool_case(f"nan_window_{zname}_{s}", f"window 1x2 with StartPadding 2: the first output of "
                                   f"each row averages no element (0/0); zero points {zps}, {param} parameters", t,
                                   [1, 2, 3, 4], [1, 2], pads=[0, 2, 0, 0], param=param, zps=zps))
            cases.append(pool_case(f"infinite_{zname}_{s}", f"OutputScale 0: +-inf and 0/0 averages; zero points "
                                   f"{zps}, {param} parameters", t, [1, 2, 2, 4], [1, 1], param=param, zps=zps,
                                   scales=(f32(1), f32(0)), zp_values={"in": [3], "out": [5]}))
        cases.append(pool_case(f"overflow_{s}", "InputScale 3e38: the sum overflows to +-inf", t, [1, 2, 2, 4], [2, 2],
                               scales=(f32(3e38), f32(1)), zp_values={"in": [0 if t == u8 else 0], "out": [9]}))
        cases.append(pool_case(f"saturate_{s}", "OutputScale small: outputs at both ends", t, [1, 3, 6, 6], [2, 2],
                               strides=[2, 2], scales=(f32(0.5), f32(0.004))))
        cases.append(pool_case(f"window_7x7_{s}", "7x7 window, 49 taps summed in binary32, padding 3, per channel",
                               t, [1, 3, 9, 9], [7, 7], pads=[3, 3, 3, 3], include=True, param="channel"))
        cases.append(pool_case(f"out_strided_{s}", "the output transposed through its strides (NHWC memory)", t,
                               [1, 3, 5, 5], [2, 2], out_strides=[48, 1, 12, 3]))
        cases.append(pool_case(f"input_broadcast_{s}", "the input broadcast through zero strides", t, [2, 3, 6, 6],
                               [3, 3], pads=[1, 1, 1, 1], x_kind="broadcast"))
    # (Parameters of fewer dimensions are kept out: with zero points {1,C} this stack fails in CompileOperator,
    # hr 0x8007023E; the probe's scale_1x2_per_channel, a scale {1,C} alone, is computed per channel.)
    # Refusals, DirectML's verdict recorded either way.
    cases.append(pool_case("refuse_one_spatial", "one spatial dimension (3-D tensors)", u8, [1, 2, 6], [2]))
    c = pool_case("refuse_zp_type", "InputZeroPoint INT8 for a UINT8 input", u8, [1, 2, 4, 4], [2, 2], zps=("out",))
    c.tensor("InputZeroPointTensor", i8, [1, 1, 1, 1], [3])
    cases.append(c)
    c = pool_case("refuse_output_type", "Output INT8 for a UINT8 input", u8, [1, 2, 4, 4], [2, 2], zps=("in",))
    c.output(i8, [1, 2, 3, 3])
    cases.append(c)
    c = pool_case("refuse_scale_int32", "InputScale INT32", u8, [1, 2, 4, 4], [2, 2])
    c.tensor("InputScaleTensor", i32, [1, 1, 1, 1], [1])
    cases.append(c)
    c = pool_case("refuse_zp_unlike_scale", "OutputZeroPoint per channel {1,2,1,1}, OutputScale per tensor", u8,
                  [1, 2, 4, 4], [2, 2], zps=("in",))
    c.tensor("OutputZeroPointTensor", u8, [1, 2, 1, 1], [3, 4])
    cases.append(c)
    c = pool_case("refuse_batch_mismatch", "Output batch 2 for an input batch 1", u8, [1, 2, 4, 4], [2, 2])
    c.output(u8, [2, 2, 3, 3])
    cases.append(c)
    return cases


# ---------------------------------------------------------------------------
# QUANTIZE and DEQUANTIZE (feature level 6.3): blocks, implied zero points, 4-bit tensors

def qtype_range(t):
    if t in Q4_RANGE:
        return Q4_RANGE[t]
    info = np.iinfo(t)
    return int(info.min), int(info.max)


def qtype_short(t):
    return t.lower() if t in Q4 else SHORT[np.dtype(t)]


def qints(rng, t, n):
    lo, hi = qtype_range(t)
    return rng.integers(lo, hi, size=n, endpoint=True).astype(Q4.get(t, t) if isinstance(t, str) else t)


def block_sizes(rng, sizes, kind):
    """Sizes of a scale: per tensor (all 1), per element (equal), or blocks (a random divisor per dimension)."""
    if kind == "tensor":
        return [1] * len(sizes)
    if kind == "full":
        return list(sizes)
    out = []
    for s in sizes:
        divs = [d for d in range(1, s + 1) if s % d == 0]
        out.append(int(rng.choice(divs)))
    return out


def qdq_case(op, name, desc, t_float, t_q, sizes, qtype="SCALE_ZERO_POINT", blocks="blocks", in_kind="packed",
             out_strides=None, x_values=None, scale=None, zp_value=None, scale_sizes=None, zp_sizes=None,
             scale_type=None, zp_type=None, count=None):
    """One QUANTIZE or DEQUANTIZE case: t_float the float side, t_q the quantized side (a numpy type or
    "INT4"/"UINT4"); scale_sizes/zp_sizes/scale_type/zp_type/count override the regular ones (refusals)."""
    op_dir = "fl63_" + op.lower()
    rng = rng_for(op_dir + "/" + name)
    c = Case(op_dir, name, op, desc)
    ss = scale_sizes or block_sizes(rng, sizes, blocks)
    ns = int(np.prod(ss))
    sv = np.full(ns, scale, f32) if scale is not None else np.array([rand_scale(rng, -5, 1) for _ in range(ns)], f32)
    lo, hi = qtype_range(t_q)
    zv = np.full(int(np.prod(zp_sizes or ss)), zp_value) if zp_value is not None else qints(rng, t_q, int(np.prod(zp_sizes or ss)))
    if op == "QUANTIZE":
        if x_values is None:  # quotients over the output range and a little beyond it
            def x_values(m):
                return (rng.uniform(lo - 4 - (hi - lo) / 2, hi + 4 - lo - (hi - lo) / 2, m) * float(np.max(np.abs(sv)))).astype(f32)
        c.input(rng, "InputTensor", t_float, sizes, in_kind, x_values)
    else:
        st = layout(rng, sizes, in_kind)
        n = span(sizes, st if st is not None else packed(sizes))
        xv = np.resize(np.asarray(x_values, Q4.get(t_q, t_q)), n) if x_values is not None else qints(rng, t_q, n)
        c.tensor("InputTensor", t_q, sizes, xv, st)
    c.tensor("ScaleTensor", scale_type or t_float, ss, sv.astype(scale_type or t_float))
    qts = [c.tensors.pop("ScaleTensor")]
    if qtype == "SCALE_ZERO_POINT" or (count or 1) > 1:
        c.tensor("ZeroPointTensor", zp_type or t_q, zp_sizes or ss, zv)
        qts.append(c.tensors.pop("ZeroPointTensor"))
    if count is not None:
        qts = qts[:count]
    out = c.tensors.pop("InputTensor")
    c.tensors = {"InputTensor": out, "QuantizationTensors": qts}
    c.output(t_q if op == "QUANTIZE" else t_float, sizes, out_strides)
    c.params = {"QuantizationType": qtype}
    return c


QDQ_TYPES = (i8, u8, "INT4", "UINT4")


def gen_qdq(op):
    cases = []
    # Random shapes (1-8 dimensions), layouts and block patterns, both quantization types.
    for t_q in QDQ_TYPES:
        for k in range(8):
            name = f"random_{qtype_short(t_q)}_{k}"
            rng = rng_for(f"sizes/{op}/{name}")
            rank = 1 + k % 8
            sizes = rand_sizes(rng, rank, 1536, 8)
            kind = ["packed", "padded", "permuted", "broadcast"][k % 4]
            blocks = ["blocks", "tensor", "full", "blocks"][k % 4]
            qtype = "SCALE" if k % 3 == 2 else "SCALE_ZERO_POINT"
            out_strides = None
            if k % 4 == 2:  # a transposed output: its dimensions in reverse order
                st, acc = [0] * rank, 1
                for d in range(rank):
                    st[d] = acc
                    acc *= sizes[d]
                out_strides = st
            cases.append(qdq_case(op, name, f"{rank} dimensions {sizes}, input {kind}, scale {blocks}, {qtype}"
                                  f"{', output transposed' if out_strides else ''}", f32, t_q, sizes, qtype, blocks, kind,
                                  out_strides))
    if op == "QUANTIZE":
        # Ties and near-ties of x / s (a reciprocal multiply and ties away from zero differ here).
        for t_q in QDQ_TYPES:
            lo, hi = qtype_range(t_q)
            for sv in (0.5, 0.3, 1.3, 0.017):
                k = np.arange(lo - 3, hi + 3, dtype=np.float64)
                x = np.concatenate([((k + 0.5) * sv).astype(f32), (k * sv).astype(f32),
                                    np.nextafter(((k + 0.5) * sv).astype(f32), f32(np.inf)),
                                    np.nextafter(((k + 0.5) * sv).astype(f32), f32(-np.inf))])
                cases.append(qdq_case(op, f"ties_{qtype_short(t_q)}_s{sv}", f"x = (k + 1/2) * {sv}, k * {sv} and their "
                                      f"neighbours, scale {sv}, zero point 0: ties", f32, t_q, [x.size], blocks="tensor",
                                      x_values=x, scale=sv, zp_value=0))
        # Special inputs, with and without a zero point (SCALE: the implied one).
        special = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 3.4e38, -3.4e38, 3e9, -3e9,
                            0.5, -0.5, 1.5, 2.5, -2.5, 7.5, -8.5, 15.5, 127.5, -128.5, 255.5], f32)
        for t_q in QDQ_TYPES:
            lo, hi = qtype_range(t_q)
            for zpv in sorted({lo, hi, 0 if lo < 0 else 1}):
                cases.append(qdq_case(op, f"special_{qtype_short(t_q)}_zp{zpv}", f"NaN, infinities, huge and subnormal "
                                      f"inputs, scale 1, zero point {zpv}", f32, t_q, [special.size], blocks="tensor",
                                      x_values=special, scale=1.0, zp_value=zpv))
            cases.append(qdq_case(op, f"special_{qtype_short(t_q)}_scale", "NaN, infinities, huge and subnormal inputs, "
                                  "scale 1, SCALE (the implied zero point)", f32, t_q, [special.size], "SCALE", "tensor",
                                  x_values=special, scale=1.0))
            cases.append(qdq_case(op, f"nan_{qtype_short(t_q)}_blocks_strided", "NaN and ties, blockwise scale and zero "
                                  "point, padded input, transposed output", f32, t_q, [4, 6], blocks="blocks",
                                  in_kind="padded", out_strides=[1, 4], x_values=np.resize(special, 64)))
    else:
        # Every value of the type against one scale, with a zero point, and with SCALE (the implied zero point).
        for t_q in QDQ_TYPES:
            lo, hi = qtype_range(t_q)
            allv = np.arange(lo, hi + 1)
            for sv in (0.37, 3e-39, 3.0e38):
                cases.append(qdq_case(op, f"all_{qtype_short(t_q)}_s{sv:g}", f"every value, scale {sv:g}, zero point 3",
                                      f32, t_q, [allv.size], blocks="tensor", x_values=allv, scale=sv, zp_value=3))
                cases.append(qdq_case(op, f"all_{qtype_short(t_q)}_s{sv:g}_scale", f"every value, scale {sv:g}, SCALE "
                                      "(the implied zero point)", f32, t_q, [allv.size], "SCALE", "tensor", x_values=allv,
                                      scale=sv))
    # 4-bit tensors with odd sizes and nibble strides (transposed, padded) on both sides.
    for t_q in ("INT4", "UINT4"):
        for nm, sizes, kind, ost in [("odd_1d", [7], "packed", None), ("odd_2d_transposed", [3, 5], "permuted", [1, 3]),
                                     ("padded_3d", [2, 3, 3], "padded", None), ("broadcast_in", [3, 4], "broadcast", None)]:
            cases.append(qdq_case(op, f"nibbles_{qtype_short(t_q)}_{nm}", f"4-bit layout: sizes {sizes}, input {kind}"
                                  f"{', output strides ' + str(ost) if ost else ''}", f32, t_q, sizes, blocks="blocks",
                                  in_kind=kind, out_strides=ost))
    # What DirectML refuses.
    base = dict(t_float=f32, t_q=u8, sizes=[4, 6], blocks="blocks")
    for nm, desc, kw in [
            ("refuse_none", "QuantizationType NONE with the scale alone", dict(qtype="NONE")),
            ("refuse_scale_two_tensors", "SCALE with a zero point too", dict(qtype="SCALE", count=2)),
            ("refuse_zp_missing", "SCALE_ZERO_POINT with the scale alone", dict(count=1)),
            ("refuse_scale_int8", "an INT8 scale", dict(scale_type=i8, scale=1)),
            ("refuse_zp_type", "a zero point of another type (INT8 for UINT8)", dict(zp_type=i8, zp_value=3)),
            ("refuse_zp_u8_for_u4", "a UINT8 zero point for UINT4", dict(t_q="UINT4", zp_type=u8, zp_value=3)),
            ("refuse_block_not_dividing", "a scale of Sizes {4,4} for {4,6}", dict(scale_sizes=[4, 4])),
            ("refuse_scale_larger", "a scale of Sizes {8,6} for {4,6}", dict(scale_sizes=[8, 6])),
            ("refuse_scale_fewer_dims", "a scale of one dimension", dict(scale_sizes=[6])),
            ("refuse_zp_sizes", "a zero point of other Sizes than the scale", dict(scale_sizes=[2, 3], zp_sizes=[4, 3]))]:
        a = dict(base)
        a.update(kw)
        cases.append(qdq_case(op, nm, desc, a.pop("t_float"), a.pop("t_q"), a.pop("sizes"), **a))
    return cases


def gen_dynamic_quantize():
    """DYNAMIC_QUANTIZE_LINEAR's cases: probe_dynamic_quantize.py's sets (specials, random ranges,
    zero-point and product near-ties, layouts, refusals), smaller where the probe's are large."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import probe_dynamic_quantize as probe
    found = {}
    probe.special_and_random(found)
    probe.product_ties(found, count=12, n=1024)
    probe.zero_point_ties(found, n=512)
    probe.layouts_and_refusals(found)
    np_type = {"FLOAT32": f32, "FLOAT16": np.float16, "INT8": i8, "UINT8": u8, "INT32": i32}
    what = {"zeros": "all zeros", "const_pos": "all equal, positive", "const_neg": "all equal, negative",
            "nan": "a NaN among the values (skipped by the range)", "nan_first": "a NaN first",
            "allnan": "all NaN", "posinf": "+inf among the values", "neginf": "-inf among the values",
            "bothinf": "+-inf among the values", "allpos": "all positive (the range widened to 0)",
            "allneg": "all negative (the range widened to 0)", "negzero": "all -0", "tiny": "subnormal range",
            "huge": "a range that overflows binary32 (3e38 - -3e38)", "ties": "quotients at k + 0.5",
            "random": "a random range", "big": "4096 normal values, 3-D", "zp": "a range whose zero point "
            "candidates (operation orders) disagree", "inv": "1/s differs from 255/range, quotients near k + 0.5",
            "refuse": "refused by DirectML's validation", "layout": "strided layout", "dims8": "8 dimensions",
            "dims4": "4 dimensions"}
    cases = []
    for name, (x, t) in found.items():
        if t["InputTensor"]["type"] == "FLOAT16":
            continue  # this device refuses every FLOAT16 tensor (tools/directml/README.md): not DirectML's verdict
        key = next((k for k in sorted(what, key=len, reverse=True) if name.startswith(k)), None)
        desc = f"{what.get(key, name)} ({name}; tools/directml/probe_dynamic_quantize.py)"
        c = Case("dynamic_quantize_linear", name, "DYNAMIC_QUANTIZE_LINEAR", desc)
        for m, e in t.items():
            buf = x if m == "InputTensor" else None
            c.tensor(m, np_type[e["type"]], e["sizes"], buf, e.get("strides"))
        cases.append(c)
    return cases


GENERATORS = {"fl63_quantize": lambda: gen_qdq("QUANTIZE"), "fl63_dequantize": lambda: gen_qdq("DEQUANTIZE"),
              "dequantize": gen_dequantize, "quantize": gen_quantize, "add": gen_add, "matmul": gen_matmul, "matmul_integer": gen_matmul_integer,
              "conv": gen_conv, "conv_integer": gen_conv_integer, "clip": gen_clip, "clip1": gen_clip1,
              "average_pooling": gen_average_pooling, "dynamic_quantize_linear": gen_dynamic_quantize,
              "matmul_integer_to_float": gen_matmul_integer_to_float}


# ---------------------------------------------------------------------------
# Running DirectML

def winpath(p):
    return "Z:" + str(Path(p).resolve()).replace("/", "\\")


def dml_info():
    r = subprocess.run([str(RUN_SH), "info"], capture_output=True, text=True, check=True)
    return r.stdout


def run_dml(cases, stage):
    """Writes each case (no expected) under `stage`, runs them all in one dmlrun batch;
    returns {rel: (rc, output or None, err text)}."""
    lines = []
    for c in cases:
        path = c.write(stage)
        lines.append(f"{winpath(path)}\t{winpath(path.parent / 'dml')}")
    lst = Path(stage) / "list.txt"
    lst.write_text("\n".join(lines) + "\n")
    subprocess.run([str(RUN_SH), "batch", str(lst)], check=True)
    res = {}
    for c in cases:
        d = Path(stage) / c.rel
        rc = int((d / "dml.rc").read_text().strip())
        err = (d / "dml.err").read_text().strip()
        out = np.load(d / "dml.npy") if rc == 0 else None
        extra = sorted(d.glob("dml.*Tensor.npy"))  # the other outputs of an operator with several
        if out is not None and extra:
            out = {"OutputTensor": out, **{f.name[4:-4]: np.load(f) for f in extra}}
        res[c.rel] = (rc, out, err)
    return res


def debian_version(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True)
    return r.stdout.strip() or "?"


def source_json(info):
    fields = dict(line.split(": ", 1) for line in info.splitlines() if ": " in line)
    return {
        "generator": "tools/directml/gen_directml_cases.py",
        "runner": "tools/directml/dmlrun.cpp (dmlrun.exe: MinGW-w64, under wine)",
        "DirectML.dll": "from PyPI's onnxruntime-directml 1.24.4 win_amd64 wheel",
        "DirectML version": fields.get("version", "?"),
        "feature level": fields.get("DML_FEATURE_LEVEL max", "?"),
        "device": "D3D12 from vkd3d 1.12 (linked into dmlrun.exe) on Mesa lavapipe (llvmpipe, CPU Vulkan)",
        "Debian packages": {p: debian_version(p) for p in ("wine64", "mesa-vulkan-drivers", "g++-mingw-w64-x86-64-posix")},
        "info": info.strip().splitlines(),
        "profile": "directml: every expected output is DirectML's; qdml checks them with --fidelity directml",
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--only", nargs="*", choices=sorted(GENERATORS), help="operators to generate (default all)")
    ap.add_argument("--probe-k-limit", action="store_true", help="run the K > 61681 probe only and print DirectML's answer")
    ap.add_argument("--probe-min-max-type", action="store_true",
                    help="run CLIP1 with a MinMaxDataType other than the output's and print DirectML's answers")
    args = ap.parse_args()
    stage = Path(tempfile.mkdtemp(prefix="dmlgen-"))
    try:
        if args.probe_k_limit:
            c = k_limit_case()
            rc, out, err = run_dml([c], stage)[c.rel]
            print(f"{c.rel}: rc {rc}, DirectML output {None if out is None else out.ravel().tolist()} (exact 8; 3 if only "
                  f"the first {K_LIMIT} products count) {err}")
            return 0
        if args.probe_min_max_type:
            cs = min_max_type_cases()
            res = run_dml(cs, stage)
            for c in cs:
                rc, out, err = res[c.rel]
                print(f"{c.rel}: params {c.params}: rc {rc}, DirectML output "
                      f"{None if out is None else out.ravel().tolist()} {err}")
            return 0
        ops = args.only or sorted(GENERATORS)
        cases = [c for op in ops for c in GENERATORS[op]()]
        seen = set()
        for c in cases:
            assert c.rel not in seen, c.rel
            seen.add(c.rel)
        info = dml_info()
        res = run_dml(cases, stage)
        counts = {}
        for c in cases:
            rc, out, err = res[c.rel]
            op_dir = c.rel.split("/")[0]
            if op_dir in ops and (args.out / op_dir).exists() and op_dir not in counts:
                shutil.rmtree(args.out / op_dir)
            counts.setdefault(op_dir, [0, 0])
            if rc == 0 and isinstance(out, dict):  # several outputs: expected keyed by member
                expected = {m: {"data": f"expected.{m}.npy", "tolerance": 0} for m in out}
                c.write(args.out, {**expected, "fidelity": "directml"},
                        [(f"expected.{m}.npy", o) for m, o in out.items()])
                counts[op_dir][0] += 1
            elif rc == 0:
                c.write(args.out, {"data": "expected.npy", "tolerance": 0, "fidelity": "directml"},
                        [("expected.npy", out)])
                counts[op_dir][0] += 1
            elif rc == 3:
                msg = re.sub(r"Z:\\\S*case\.json: ", "", " ".join(line for line in err.splitlines() if line))
                c.description += f" (DirectML refuses it: {msg[-200:]})"
                c.write(args.out, {"error": True, "fidelity": "directml"})
                counts[op_dir][1] += 1
            else:
                print(f"{c.rel}: dmlrun failed ({rc}): {err}", file=sys.stderr)
                return 1
        (args.out / "source.json").write_text(json.dumps(source_json(info), indent=2) + "\n")
        for op, (ok, refused) in sorted(counts.items()):
            print(f"{op}: {ok} computed by DirectML, {refused} refused by it")
        return 0
    finally:
        shutil.rmtree(stage, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
