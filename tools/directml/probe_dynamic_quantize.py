#!/usr/bin/env python3
"""DYNAMIC_QUANTIZE_LINEAR's float order, measured with DirectML itself.

Writes 169 probe cases (random inputs; products x * r at k + 0.5 and their
neighbours; zero points near k + 0.5; NaN, infinities, all-zero and
subnormal inputs; layouts; 17 descs DirectML is expected to refuse), runs
them through dmlrun (tools/directml/run.sh batch; DMLRUN_BUILD must name a
dmlrun built from this checkout, which writes the three outputs), and prints
how many scales, zero points and elements each candidate formula gets wrong
(docs/semantics.md section 15 states the one with none wrong).

    DMLRUN_BUILD=/tmp/dmlrun python3 tools/directml/probe_dynamic_quantize.py --out /tmp/dq-probe
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
from numpy.lib.stride_tricks import as_strided

f32 = np.float32
np.seterr(all="ignore")


def tensors(sizes, in_type, out_type, scale=None, zp=None, strides=None, out_strides=None):
    one = [1] * len(sizes)
    t = {"InputTensor": {"type": in_type, "sizes": sizes, "data": "input.npy"},
         "OutputTensor": {"type": out_type, "sizes": sizes},
         "OutputScaleTensor": scale or {"type": "FLOAT32", "sizes": one},
         "OutputZeroPointTensor": zp or {"type": out_type, "sizes": one}}
    if strides:
        t["InputTensor"]["strides"] = strides
    if out_strides:
        t["OutputTensor"]["strides"] = out_strides
    return t


def packed(cases, name, x, out_type, sizes=None):
    x = np.asarray(x, dtype=f32).reshape(-1)
    sizes = sizes or [x.size]
    cases[name] = (x, tensors(sizes, "FLOAT32", out_type))


def special_and_random(cases):
    rng = np.random.default_rng(1)
    for ot in ("UINT8", "INT8"):
        t = ot.lower()
        packed(cases, f"zeros_{t}", np.zeros(8), ot)
        packed(cases, f"const_pos_{t}", np.full(8, 3.0), ot)
        packed(cases, f"const_neg_{t}", np.full(8, -3.0), ot)
        packed(cases, f"nan_{t}", [1, 2, np.nan, -1, 0.5, 3, -2, 0.25], ot)
        packed(cases, f"nan_first_{t}", [np.nan, 2, 1, -1, 0.5, 3, -2, 0.25], ot)
        packed(cases, f"allnan_{t}", [np.nan] * 8, ot)
        packed(cases, f"posinf_{t}", [1, 2, np.inf, -1, 0.5, 3, -2, 0.25], ot)
        packed(cases, f"neginf_{t}", [1, 2, -np.inf, -1, 0.5, 3, -2, 0.25], ot)
        packed(cases, f"bothinf_{t}", [1, 2, -np.inf, np.inf, 0.5, 3, -2, 0.25], ot)
        packed(cases, f"allpos_{t}", [1, 2, 3, 4, 5, 6, 7, 255], ot)
        packed(cases, f"allneg_{t}", [-1, -2, -3, -4, -5, -6, -7, -255], ot)
        packed(cases, f"negzero_{t}", [-0.0] * 8, ot)
        packed(cases, f"tiny_{t}", [1e-45, -1e-45, 0, 1e-44, 0, 0, 0, 0], ot)
        packed(cases, f"huge_{t}", [3e38, -3e38, 1, -1, 0, 2e38, 0, 0], ot)
        packed(cases, f"ties_{t}", [-1, 1.5, 0.5, 2.5, -0.5, -1.5, 254, 0.0], ot)
        for k in range(6):
            n = int(rng.integers(1, 2000))
            lo = float(rng.uniform(-50, 10))
            hi = float(rng.uniform(-10, 60))
            packed(cases, f"random_{t}_{k}", rng.uniform(min(lo, hi), max(lo, hi), n), ot)
        for k in range(4):
            x = (rng.standard_normal(4096) * rng.uniform(0.01, 100)).astype(f32)
            packed(cases, f"big_{t}_{k}", x, ot, [4, 16, 64])


def product_ties(cases, count=40, n=16384):
    """x * r near k + 0.5 (r = 1 / s, s DirectML's scale)."""
    rng = np.random.default_rng(2)
    for k in range(count):
        ot = "UINT8" if k % 2 == 0 else "INT8"
        mn = f32(-rng.uniform(0, 100) * 10 ** rng.uniform(-3, 3)) if k % 4 < 3 else f32(0)
        mx = f32(rng.uniform(0, 100) * 10 ** rng.uniform(-3, 3))
        s = f32(f32(mx - mn) * f32(1 / 255.0))
        kk = rng.integers(-260, 260, n).astype(f32)
        frac = rng.choice([f32(0.5), f32(0.25), f32(0.0)], n)
        x = ((kk + frac) * s).astype(f32)
        nud = rng.integers(-2, 3, n)
        x = (np.nextafter(x, np.where(nud > 0, np.inf, -np.inf).astype(f32)) * (nud != 0) + x * (nud == 0)).astype(f32)
        x = np.clip(x, mn, mx)
        x[0] = mn
        x[1] = mx
        rng.shuffle(x)
        packed(cases, f"ties_{k}", x, ot)


def zero_point_ties(cases, n=4096):
    """Ranges whose zero point candidates disagree, and reciprocals 1/s != 255/range."""
    rng = np.random.default_rng(3)
    found = 0
    while found < 40:
        lo = -128 if found % 2 else 0
        mx = f32(rng.uniform(0.001, 1000))
        k = rng.integers(1, 255)
        mn = f32(-(k + 0.5) * mx / (255 - k - 0.5)) if rng.random() < 0.5 else f32(-rng.uniform(0, 1000))
        mn = np.nextafter(mn, f32(np.inf) if rng.random() < .5 else f32(-np.inf)) if rng.random() < .5 else mn
        r = f32(mx - mn)
        s = f32(r * f32(1 / 255.0))
        inv = f32(f32(1) / s)
        inv2 = f32(f32(255) / r)
        z = {np.rint(f32(f32(lo) - f32(mn / s))), np.rint(f32(f32(lo) - f32(mn * inv))),
             lo + np.rint(f32(-f32(mn * inv))), lo + np.rint(f32(-f32(mn / s))), np.rint(f32(f32(lo) - f32(mn * inv2))),
             np.rint(f32(f32(lo) + f32(-mn * inv)))}
        if len(z) > 1:
            x = np.array([mn, mx, 0, mn * f32(0.5), mx * f32(0.5), mn * f32(0.3), mx * f32(0.7), f32(1)], dtype=f32)
            packed(cases, f"zp_{found}", np.clip(x, mn, mx), "UINT8" if lo == 0 else "INT8")
            found += 1
    found = 0
    while found < 20:
        mn = f32(-rng.uniform(0, 100) * 10 ** rng.uniform(-3, 3))
        mx = f32(rng.uniform(0, 100) * 10 ** rng.uniform(-3, 3))
        r = f32(mx - mn)
        s = f32(r * f32(1 / 255.0))
        inv = f32(f32(1) / s)
        if inv == f32(f32(255) / r):
            continue
        x = rng.uniform(mn, mx, n).astype(f32)
        x[0] = mn
        x[1] = mx
        q = (rng.integers(-255, 255, n) + f32(0.5)).astype(f32)
        x[2:] = np.clip((q / inv).astype(f32), mn, mx)[2:]
        packed(cases, f"inv_{found}", x, "UINT8" if found % 2 == 0 else "INT8")
        found += 1


def layouts_and_refusals(cases):
    rng = np.random.default_rng(4)
    x = rng.uniform(-3, 5, 24).astype(f32)
    cases["refuse_f16_input"] = (x.astype(np.float16), tensors([24], "FLOAT16", "UINT8"))
    cases["refuse_i32_output"] = (x, tensors([24], "FLOAT32", "INT32"))
    cases["refuse_zp_type"] = (x, tensors([24], "FLOAT32", "UINT8", zp={"type": "INT8", "sizes": [1]}))
    cases["refuse_scale_f16"] = (x, tensors([24], "FLOAT32", "UINT8", scale={"type": "FLOAT16", "sizes": [1]}))
    cases["refuse_scale_two"] = (x, tensors([24], "FLOAT32", "UINT8", scale={"type": "FLOAT32", "sizes": [2]}))
    cases["refuse_zp_two"] = (x, tensors([24], "FLOAT32", "UINT8", zp={"type": "UINT8", "sizes": [2]}))
    cases["refuse_scale_fewer_dims"] = (x, tensors([2, 3, 4], "FLOAT32", "UINT8", scale={"type": "FLOAT32", "sizes": [1]}))
    cases["refuse_zp_fewer_dims"] = (x, tensors([2, 3, 4], "FLOAT32", "UINT8", zp={"type": "UINT8", "sizes": [1]}))
    cases["refuse_scale_more_dims"] = (x, tensors([24], "FLOAT32", "UINT8", scale={"type": "FLOAT32", "sizes": [1, 1]}))
    cases["refuse_i8_input"] = (x.astype(np.int8), tensors([24], "INT8", "UINT8"))
    cases["refuse_i32_input"] = (x.astype(np.int32), tensors([24], "INT32", "UINT8"))
    cases["refuse_scale_stride0_two"] = (x, tensors([24], "FLOAT32", "UINT8",
                                                    scale={"type": "FLOAT32", "sizes": [2], "strides": [0]}))
    y = rng.uniform(-7, 2, 64).astype(f32)
    cases["layout_permuted_input"] = (y, tensors([4, 4, 4], "FLOAT32", "INT8", strides=[1, 4, 16]))
    cases["layout_broadcast_input"] = (y, tensors([4, 8], "FLOAT32", "UINT8", strides=[0, 1]))
    cases["layout_padded_output"] = (y, tensors([8, 8], "FLOAT32", "UINT8", out_strides=[10, 1]))
    z = rng.uniform(-1, 9, 256).astype(f32)
    cases["dims8"] = (z, tensors([2] * 8, "FLOAT32", "INT8"))
    cases["dims4_u8"] = (z, tensors([2, 4, 8, 4], "FLOAT32", "UINT8"))


def quantize_step(v, z, lo, hi):  # section 2's Q
    v = np.where(np.isnan(v), f32(lo - z), np.clip(v, f32(lo - z), f32(hi - z)))
    return np.rint(v).astype(np.int64) + z


def zero_point_step(v, lo, hi):  # section 15's Z
    return lo if np.isnan(v) else int(np.rint(np.clip(v, f32(lo), f32(hi))))


def candidates(x, lo, hi):
    xs = x[~np.isnan(x)]
    m = f32(min(f32(0), xs.min())) if xs.size else f32(0)
    M = f32(max(f32(0), xs.max())) if xs.size else f32(0)
    R = f32(M - m)
    sd = f32(R * f32(1 / 255.0))
    r = f32(f32(1) / sd)
    se = f32(R / f32(255))
    zd = zero_point_step(f32(f32(lo) - f32(m * r)), lo, hi)
    ze = zero_point_step(f32(f32(lo) - f32(m / se)), lo, hi)
    r2 = f32(f32(255) / R)
    z2 = zero_point_step(f32(f32(lo) - f32(m * r2)), lo, hi)
    z3 = lo + zero_point_step(f32(-f32(m * r)), 0, hi - lo)
    v = (x * r).astype(f32) + f32(zd)
    v = np.where(np.isnan(v), f32(lo), np.clip(v, f32(lo), f32(hi)))
    return {
        "directml (section 15)": (sd, zd, quantize_step((x * r).astype(f32), zd, lo, hi)),
        "exact profile (divisions)": (se, ze, quantize_step((x / se).astype(f32), ze, lo, hi)),
        "x / s with DirectML's s": (sd, zd, quantize_step((x / sd).astype(f32), zd, lo, hi)),
        "r = 255 / (M - m)": (sd, z2, quantize_step((x * r2).astype(f32), z2, lo, hi)),
        "z = lo + Z(-m * r)": (sd, z3, quantize_step((x * r).astype(f32), z3, lo, hi)),
        "rne(x * r + z) in binary32": (sd, zd, np.rint(v).astype(np.int64)),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for the probe cases and DirectML's outputs")
    ap.add_argument("--no-run", action="store_true", help="evaluate outputs already in --out")
    a = ap.parse_args()
    cases = {}
    special_and_random(cases)
    product_ties(cases)
    zero_point_ties(cases)
    layouts_and_refusals(cases)
    os.makedirs(a.out, exist_ok=True)
    lst = os.path.join(a.out, "list")
    with open(lst, "w") as f:
        for name, (x, t) in cases.items():
            d = os.path.join(a.out, name)
            os.makedirs(d, exist_ok=True)
            np.save(os.path.join(d, "input.npy"), x)
            json.dump({"operator": "DYNAMIC_QUANTIZE_LINEAR", "tensors": t}, open(os.path.join(d, "case.json"), "w"))
            f.write(f"{os.path.abspath(d)}/case.json\t{os.path.abspath(d)}/dml\n")
    if not a.no_run:
        here = os.path.dirname(os.path.abspath(__file__))
        subprocess.run([os.path.join(here, "run.sh"), "batch", os.path.abspath(lst)], check=True)
    totals, tensors_n, elements, refused = {}, 0, 0, []
    for name, (buf, t) in cases.items():
        d = os.path.join(a.out, name)
        rc = open(d + "/dml.rc").read().strip()
        if rc != "0":
            refused.append(name)
            continue
        it = t["InputTensor"]
        st = it.get("strides")
        x = as_strided(buf, it["sizes"], [s * 4 for s in st]).reshape(-1) if st else buf.reshape(-1)
        y = np.load(d + "/dml.npy")
        lo, hi = (0, 255) if y.dtype == np.uint8 else (-128, 127)
        y = y.reshape(-1).astype(np.int64)
        S = np.load(d + "/dml.OutputScaleTensor.npy").reshape(-1)[0]
        Z = int(np.load(d + "/dml.OutputZeroPointTensor.npy").reshape(-1)[0])
        tensors_n += 1
        elements += y.size
        for k, (s, z, yy) in candidates(x, lo, hi).items():
            tot = totals.setdefault(k, [0, 0, 0])
            tot[0] += int(s.view(np.uint32) != S.view(np.uint32))
            tot[1] += int(z != Z)
            tot[2] += int((yy != y).sum())
    print(f"{tensors_n} tensors computed ({elements} elements); refused: {' '.join(refused)}")
    for k, (s, z, e) in totals.items():
        print(f"{k:28s} scales wrong {s:4d}  zero points wrong {z:4d}  elements wrong {e}")


if __name__ == "__main__":
    sys.exit(main())
