#!/usr/bin/env python3
"""Which binary32 formula reproduces DirectML's outputs? For the DirectML
cases (tests/data/directml, gen_directml_cases.py), computes each candidate
order of operations in numpy (binary32, one rounding per operation, no qdml
code) and prints, per operator, how many elements each candidate gets wrong.
A candidate with 0 wrong elements over every case is the finding recorded in
docs/semantics.md ("The two profiles").

    python3 tools/directml/probe_arithmetic.py [DIR]    # default tests/data/directml
"""

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent
NP = {"FLOAT32": np.float32, "INT8": np.int8, "UINT8": np.uint8, "INT32": np.int32, "UINT32": np.uint32,
      "INT64": np.int64, "UINT64": np.uint64}
f32 = np.float32


def jv(v):
    return float({"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}[v]) if isinstance(v, str) else v


def load(case):
    j = json.loads(case.read_text())
    ts = {}
    for m, e in j["tensors"].items():
        if m == "OutputTensor":
            continue
        t = NP[e["type"]]
        buf = np.load(case.parent / e["data"]) if "data" in e else np.array([jv(v) for v in e["values"]]).astype(t)
        sizes = e["sizes"]
        st = e.get("strides")
        if st is None:
            st, acc = [], 1
            for s in reversed(sizes):
                st.insert(0, acc)
                acc *= s
        ts[m] = np.lib.stride_tricks.as_strided(buf.ravel(), sizes, [s * buf.itemsize for s in st]).copy()
    return j, ts


def right4(a):
    return a.reshape((1,) * (4 - a.ndim) + a.shape)


def q_candidates(v, zp, t):
    """The quantize step, in the ways an implementation may write it: Q of docs/semantics.md
    (clamp in float, NaN -> low bound, rne, + zp), and a form with NaN -> 0 + zp."""
    info = np.iinfo(t)
    zp = zp.astype(np.int64)
    with np.errstate(invalid="ignore"):
        lo, hi = (info.min - zp).astype(f32), (info.max - zp).astype(f32)
        c = np.where(v >= lo, v, lo)
        c = np.where(c > hi, hi, c)
        qdml = (np.rint(c).astype(np.int64) + zp).astype(t)
        c2 = np.where(np.isnan(v), f32(0), np.clip(v, lo, hi))
        nan_zero = (np.rint(c2).astype(np.int64) + zp).astype(t)
        r = np.rint(np.where(np.isnan(v), f32(0), v)).astype(np.float64)
        i = np.clip(r, -2.0**31, 2.0**31 - 1).astype(np.int64)  # float -> int32, saturating, NaN -> 0
        s = (i + zp + 2**31) % 2**32 - 2**31  # + zp in int32, wrapping
        sat_wrap = np.clip(s, info.min, info.max).astype(t)
    return {"Q (NaN -> low)": qdml, "Q (NaN -> zp)": nan_zero,
            "int32(rne(v)) saturating, NaN -> 0, + zp wrapping, clamp": sat_wrap}


def mm_candidates(acc, sa, sb, so):
    """Requantized value candidates of matmul/conv: acc, per-element scales (broadcast);
    for convolution sa is InputScale and sb FilterScale."""
    a = acc.astype(f32)
    with np.errstate(all="ignore"):
        return {
            "fp32(acc) * (fp32(sa*sb) / so)": a * ((sa * sb) / so),
            "((fp32(acc) * sa) * sb) / so": ((a * sa) * sb) / so,
            "((fp32(acc) * sb) * sa) / so": ((a * sb) * sa) / so,
            "(fp32(acc) * fp32(sa*sb)) / so": (a * (sa * sb)) / so,
            "fp32(acc) * (sa * (sb / so))": a * (sa * (sb / so)),
            "fp32(acc) * ((sa / so) * sb)": a * ((sa / so) * sb),
        }


def matmul(j, ts):
    A, B = right4(ts["ATensor"]).astype(np.int64), right4(ts["BTensor"]).astype(np.int64)
    g = lambda m: right4(ts[m]).astype(np.int64) if m in ts else np.zeros((1, 1, 1, 1), np.int64)
    acc = np.matmul(A - g("AZeroPointTensor"), B - g("BZeroPointTensor"))
    acc = ((acc + 2**31) % 2**32 - 2**31).astype(np.int32)
    sa, sb, so = (right4(ts[m]).astype(f32) for m in ("AScaleTensor", "BScaleTensor", "OutputScaleTensor"))
    return acc, sa, sb, so, g("OutputZeroPointTensor")


def conv(j, ts):
    X, W = ts["InputTensor"].astype(np.int64), ts["FilterTensor"].astype(np.int64)
    p = j["params"]
    if any(s != 1 for s in p["Strides"] + p["Dilations"]) or p["GroupCount"] != 1 or W.shape[2:] != (1, 1) or \
            any(p["StartPadding"] + p["EndPadding"]):
        return None  # the order probes are 1x1, stride 1, one group
    xz = ts.get("InputZeroPointTensor", np.zeros((1,) * 4, np.int64)).astype(np.int64)
    wz = ts.get("FilterZeroPointTensor", np.zeros((1,) * 4, np.int64)).astype(np.int64)
    acc = np.einsum("nchw,oc->nohw", X - xz.reshape(1, -1, 1, 1)[:, :1], (W - wz.reshape(-1, 1, 1, 1))[:, :, 0, 0])
    if "BiasTensor" in ts:
        acc = acc + ts["BiasTensor"].astype(np.int64).reshape(1, -1, 1, 1)
    acc = ((acc + 2**31) % 2**32 - 2**31).astype(np.int32)
    sx = ts["InputScaleTensor"].astype(f32).reshape(1, -1, 1, 1)
    sw = ts["FilterScaleTensor"].astype(f32).reshape(1, -1, 1, 1)
    so = ts["OutputScaleTensor"].astype(f32).reshape(1, -1, 1, 1)
    yz = ts.get("OutputZeroPointTensor", np.zeros((1,) * 4, np.int64)).astype(np.int64).reshape(1, -1, 1, 1)
    return acc, sx, sw, so, yz


def add(j, ts):
    z = lambda m, like: ts[m].astype(np.int64) if m in ts else np.zeros_like(like, np.int64)
    A, B = ts["ATensor"].astype(np.int64), ts["BTensor"].astype(np.int64)
    da, db = (A - z("AZeroPointTensor", A)).astype(f32), (B - z("BZeroPointTensor", B)).astype(f32)
    sa, sb, so = (ts[m].astype(f32) for m in ("AScaleTensor", "BScaleTensor", "OutputScaleTensor"))
    with np.errstate(all="ignore"):
        va, vb = da * sa, db * sb
        fma = lambda x, y, c: (x.astype(np.float64) * y.astype(np.float64) + c.astype(np.float64)).astype(f32)
        cands = {
            "(fp32(a-za)*sa + fp32(b-zb)*sb) / so": (va + vb) / so,
            "fma(fp32(a-za), sa, fp32(b-zb)*sb) / so": fma(da, sa, vb) / so,
            "(a-za)*sa/so + (b-zb)*sb/so": (va / so) + (vb / so),
            "(a-za)*(sa/so) + (b-zb)*(sb/so)": da * (sa / so) + db * (sb / so),
        }
    return cands, z("OutputZeroPointTensor", A)


def dequant(j, ts):
    x = ts["InputTensor"].astype(np.int64)
    zp = ts["ZeroPointTensor"].astype(np.int64) if "ZeroPointTensor" in ts else np.zeros_like(x)
    s = ts["ScaleTensor"].astype(f32)
    with np.errstate(all="ignore"):
        return {
            "fp32(x - zp) * s (exact difference)": (x - zp).astype(f32) * s,
            "(fp32(x) - fp32(zp)) * s": (x.astype(f32) - zp.astype(f32)) * s,
            "fp32(int32 wrap(x - zp)) * s": (((x - zp + 2**31) % 2**32) - 2**31).astype(f32) * s,
            "fp32(x)*s - fp32(zp)*s": x.astype(f32) * s - zp.astype(f32) * s,
        }


def quant(j, ts, t):
    """ELEMENT_WISE_QUANTIZE_LINEAR: the quotient and the quantize step, in the ways an implementation
    may write them (docs/semantics.md section 11)."""
    x = ts["InputTensor"]
    has_zp = "ZeroPointTensor" in ts
    te = j["tensors"]

    def strides(m):
        e = te[m]
        if "strides" in e:
            return e["strides"]
        st, acc = [], 1
        for sz in reversed(e["sizes"]):
            st.insert(0, acc)
            acc *= sz
        return st

    def one(m):  # stride 0 on every dimension of size > 1
        return all(sz == 1 or st == 0 for sz, st in zip(te[m]["sizes"], strides(m)))

    def packed(m):  # row-major, dimensions of size 1 aside
        acc, ok = 1, True
        for sz, st in zip(reversed(te[m]["sizes"]), reversed(strides(m))):
            ok = ok and (sz == 1 or st == acc)
            acc *= sz
        return ok

    low_form = has_zp and one("ScaleTensor") and one("ZeroPointTensor") and packed("InputTensor") and \
        packed("OutputTensor")
    zp = ts["ZeroPointTensor"].astype(np.int64) if has_zp else np.zeros(x.shape, np.int64)
    s = ts["ScaleTensor"].astype(f32)
    info = np.iinfo(t)
    xf = x.astype(f32)  # fp32(x): rounds an INT32 beyond 2^24
    with np.errstate(all="ignore"):
        div = xf / s
        recip = xf * (f32(1) / s)
        exact_q = x.astype(np.float64) / s.astype(np.float64)  # the exact quotient (binary64), no binary32 step
        qs = q_candidates(div, zp, t)
        q = qs["Q (NaN -> low)"]
        lo, hi = (info.min - zp).astype(f32), (info.max - zp).astype(f32)
        c = np.where(div >= lo, div, lo)
        c = np.where(c > hi, hi, c)
        away = (np.trunc(c.astype(np.float64) + np.copysign(0.5, c)).astype(np.int64) + zp).astype(t)
        # each alternative below changes one thing of the directml rule (NaN -> the low end with a
        # one-element scale and zero point on packed input and output, else 0)
        nan0 = lambda v, r: np.where(np.isnan(v) & (not low_form), t(0), r)
        return {
            "Q(fp32(x) / s), NaN -> low end (qdml exact)": q,
            "Q(fp32(x) / s), NaN -> low end with a one-element scale and zero point on packed input and output, "
            "else 0 (qdml directml)": nan0(div, q),
            "Q(fp32(x) / s), NaN -> low end with a zero point, 0 without":
                np.where(np.isnan(div) & (not has_zp), t(0), q),
            "Q(fp32(x) / s), NaN -> zp": qs["Q (NaN -> zp)"],
            "Q(fp32(x) * (1/s)), NaN rule": nan0(recip, q_candidates(recip, zp, t)["Q (NaN -> low)"]),
            "Q(fp32(x) / s) with ties away from zero, NaN rule": nan0(div, away),
            "int32(rne(fp32(x) / s)) saturating, NaN -> 0, + zp wrapping, clamp (matmul's)":
                qs["int32(rne(v)) saturating, NaN -> 0, + zp wrapping, clamp"],
            "Q(x / s) of the exact quotient (binary64), NaN rule":
                nan0(exact_q, q_candidates(exact_q, zp, t)["Q (NaN -> low)"]),
        }


def clip(j, ts):
    x = ts["InputTensor"]
    if x.dtype != f32:
        return None
    p = j["params"]
    lo, hi = f32(jv(p["Min"])), f32(jv(p["Max"]))
    v = x
    if "ScaleBias" in p:
        with np.errstate(all="ignore"):
            v = v * f32(jv(p["ScaleBias"]["Scale"])) + f32(jv(p["ScaleBias"]["Bias"]))
    with np.errstate(invalid="ignore"):
        qdml_min = np.where(v > hi, hi, v)
        qdml = np.where(qdml_min < lo, lo, qdml_min)
        d3d = np.fmax(lo, np.fmin(v, hi))  # IEEE minNum/maxNum: the non-NaN operand
        t = np.where(v < hi, v, hi)  # v < Max ? v : Max, then t > Min ? t : Min
        sel = np.where(t > lo, t, lo)
    return {"max(Min, min(v, Max)), NaN passes (qdml exact)": qdml, "fmax(Min, fmin(v, Max)) (NaN -> the bound)": d3d,
            "t = v < Max ? v : Max; t > Min ? t : Min (NaN and equal values -> the bound)": sel}


def same(got, want):
    if got.dtype.kind == "f":
        return (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    return got == want


def main():
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "data" / "directml"
    wrong = {}
    for case in sorted(root.rglob("case.json")):
        j = json.loads(case.read_text())
        if "data" not in j.get("expected", {}):
            continue
        j, ts = load(case)
        want = np.load(case.parent / j["expected"]["data"])
        op = j["operator"]
        cands = {}
        if op in ("QUANTIZED_LINEAR_MATRIX_MULTIPLY", "QUANTIZED_LINEAR_CONVOLUTION"):
            r = (matmul if op.startswith("QUANTIZED_LINEAR_M") else conv)(j, ts)
            if r is None:
                continue
            acc, sa, sb, so, zp = r
            t = want.dtype.type
            want4 = want.reshape(acc.shape) if op.startswith("QUANTIZED_LINEAR_C") else right4(want)
            for nv, v in mm_candidates(acc, sa, sb, so).items():
                for nq, qv in q_candidates(v, np.broadcast_to(zp, v.shape), t).items():
                    cands[f"{nv}, {nq}"] = (qv, want4)
        elif op == "ELEMENT_WISE_QUANTIZED_LINEAR_ADD":
            cv, zp = add(j, ts)
            for nv, v in cv.items():
                for nq, qv in q_candidates(v, zp, want.dtype.type).items():
                    cands[f"{nv}, {nq}"] = (qv, want)
        elif op == "ELEMENT_WISE_QUANTIZE_LINEAR":
            cands = {k: (v, want) for k, v in quant(j, ts, want.dtype.type).items()}
        elif op == "ELEMENT_WISE_DEQUANTIZE_LINEAR":
            cands = {k: (v, want) for k, v in dequant(j, ts).items()}
        elif op == "ELEMENT_WISE_CLIP":
            r = clip(j, ts)
            if r is None:
                continue
            cands = {k: (v, want) for k, v in r.items()}
        for name, (got, w) in cands.items():
            bad = ~same(np.asarray(got), w)
            e = wrong.setdefault(op, {}).setdefault(name, [0, 0, []])
            e[0] += int(bad.sum())
            e[1] += bad.size
            if bad.any():
                e[2].append(str(case.parent.relative_to(root)))
    for op, cs in sorted(wrong.items()):
        print(op)
        for name, (bad, n, where) in sorted(cs.items(), key=lambda kv: kv[1][0]):
            print(f"  {bad:8d} of {n:8d} elements wrong: {name}" + (f"  (e.g. {', '.join(where[:3])})" if where else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
