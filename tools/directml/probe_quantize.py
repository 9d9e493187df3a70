#!/usr/bin/env python3
"""QUANTIZE's and DEQUANTIZE's arithmetic, measured with DirectML itself.

Runs probe cases through dmlrun (tools/directml/run.sh; DMLRUN_BUILD must
name a dmlrun built from this checkout: its direct path runs both operators
and their UINT4/INT4 tensors) and prints, for each, how many elements each
candidate formula gets wrong (docs/semantics.md section 18 states the ones
with none wrong):

- QUANTIZE near ties of x / s (1024 inputs whose quotient and x * (1/s)
  round to different integers): a true division against a reciprocal multiply;
- DEQUANTIZE of random values, blockwise scales and zero points, each type:
  fp32(x - zp) * s against x * s - zp * s;
- SCALE without a zero point: the zero point DirectML implies per type;
- NaN inputs in several layouts: which value DirectML writes.

    DMLRUN_BUILD=/tmp/dmlrun python3 tools/directml/probe_quantize.py [--out DIR]
"""
import argparse
import json
import math
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np

f32 = np.float32
np.seterr(all="ignore")
RUN_SH = Path(__file__).resolve().parent / "run.sh"
RANGE = {"INT8": (-128, 127), "UINT8": (0, 255), "INT4": (-8, 7), "UINT4": (0, 15)}


def jsonable(o):
    if isinstance(o, dict):
        return {k: jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [jsonable(v) for v in o]
    if isinstance(o, float) and math.isnan(o):
        return "NaN"
    if isinstance(o, float) and math.isinf(o):
        return "Infinity" if o > 0 else "-Infinity"
    return o


def T(type_, sizes, values=None, strides=None):
    t = {"type": type_, "sizes": list(sizes)}
    if values is not None:
        t["values"] = [v.item() if hasattr(v, "item") else v for v in values]
    if strides:
        t["strides"] = list(strides)
    return t


class Runner:
    def __init__(self, out):
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.n = 0

    def run(self, op, inp, qts, out, qtype):
        self.n += 1
        p = self.out / f"probe{self.n}.json"
        p.write_text(json.dumps(jsonable({"operator": op, "tensors": {"InputTensor": inp, "QuantizationTensors": qts,
                                                                       "OutputTensor": out},
                                          "params": {"QuantizationType": qtype}})))
        o = self.out / f"probe{self.n}.out.npy"
        r = subprocess.run([str(RUN_SH), "run", str(p), "--out", str(o)], capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(f"dmlrun failed on {p}: {r.stderr.strip()}")
        return np.load(o)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None, help="where the probe cases go (default: a temporary directory)")
    args = ap.parse_args()
    r = Runner(args.out or tempfile.mkdtemp(prefix="qdq-probe-"))
    rng = np.random.default_rng(2)

    # 1. Near ties: x / s and x * fp32(1/s) round differently.
    xs, ss = [], []
    while len(xs) < 1024:
        s = f32(rng.uniform(0.01, 3))
        x0 = f32((int(rng.integers(-100, 100)) + 0.5) * np.float64(s))
        for d in (-3, -2, -1, 1, 2, 3):
            x = x0
            for _ in range(abs(d)):
                x = np.nextafter(x, f32(np.inf if d > 0 else -np.inf), dtype=f32)
            if np.rint(f32(x / s)) != np.rint(f32(x * f32(f32(1) / s))):
                xs.append(x)
                ss.append(s)
    xs, ss = np.array(xs[:1024], f32), np.array(ss[:1024], f32)
    got = r.run("QUANTIZE", T("FLOAT32", [xs.size], xs), [T("FLOAT32", [xs.size], ss)], T("INT8", [xs.size]), "SCALE")
    div = np.clip(np.rint(xs / ss), -128, 127)
    rec = np.clip(np.rint(xs * (f32(1) / ss)), -128, 127)
    print(f"QUANTIZE near ties ({xs.size}): x / s wrong {int((got != div).sum())}, x * (1/s) wrong {int((got != rec).sum())}")

    # 2. DEQUANTIZE's order, blocks of 64, every quantized type.
    for t, (lo, hi) in RANGE.items():
        n, b = 4096, 64
        s = rng.uniform(0.01, 3, n // b).astype(f32)
        z = rng.integers(lo, hi + 1, n // b)
        q = rng.integers(lo, hi + 1, n)
        got = r.run("DEQUANTIZE", T(t, [n], q), [T("FLOAT32", [n // b], s), T(t, [n // b], z)], T("FLOAT32", [n]),
                    "SCALE_ZERO_POINT")
        S, Z = np.repeat(s, b), np.repeat(z, b)
        exact = ((q - Z).astype(f32) * S).astype(f32)
        split = ((q.astype(f32) * S).astype(f32) - (Z.astype(f32) * S).astype(f32)).astype(f32)
        print(f"DEQUANTIZE {t} ({n}): fp32(x - zp) * s wrong {int((got != exact).sum())}, "
              f"x * s - zp * s wrong {int((got != split).sum())}")

    # 3. SCALE alone: the zero point DirectML implies (0.0 quantizes to it, it dequantizes to 0).
    for t in RANGE:
        got = r.run("QUANTIZE", T("FLOAT32", [1], [0.0]), [T("FLOAT32", [1], [1.0])], T(t, [1]), "SCALE")
        print(f"SCALE {t}: 0.0 quantizes to {int(got[0])}")

    # 4. NaN: per tensor, blockwise, padded input, transposed output, broadcast scale.
    nan = float("nan")
    x = [nan, 1.0, nan, -1.0, nan, 2.0, nan, 3.0]
    for t in RANGE:
        zp = 3 if RANGE[t][0] == 0 else 2
        # (name, input, quantization tensors, output, the input's elements in logical order)
        layouts = [
            ("per tensor", T("FLOAT32", [8], x), [T("FLOAT32", [1], [1.0]), T(t, [1], [zp])], T(t, [8]), x),
            ("blockwise", T("FLOAT32", [8], x), [T("FLOAT32", [2], [1.0, 1.0]), T(t, [2], [zp, zp])], T(t, [8]), x),
            ("padded input", T("FLOAT32", [2, 4], x[:4] + [0.0] * 4 + x[4:], [8, 1]),
             [T("FLOAT32", [1, 1], [1.0]), T(t, [1, 1], [zp])], T(t, [2, 4]), x),
            ("transposed output", T("FLOAT32", [2, 4], x), [T("FLOAT32", [1, 1], [1.0]), T(t, [1, 1], [zp])],
             T(t, [2, 4], strides=[1, 2]), x),
            ("broadcast scale", T("FLOAT32", [2, 4], x), [T("FLOAT32", [2, 4], [1.0], [0, 0]), T(t, [2, 4], [zp], [0, 0])],
             T(t, [2, 4]), x)]
        seen = set()
        for _, inp, qts, out, logical in layouts:
            got = r.run("QUANTIZE", inp, qts, out, "SCALE_ZERO_POINT").ravel()
            seen |= {int(v) for v, xv in zip(got, logical) if xv != xv}
        print(f"NaN {t} (zero point {zp}, {len(layouts)} layouts): DirectML writes {sorted(seen)} "
              f"(the low end is {RANGE[t][0]})")


if __name__ == "__main__":
    main()
