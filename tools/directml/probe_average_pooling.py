#!/usr/bin/env python3
"""QUANTIZED_LINEAR_AVERAGE_POOLING's float order and edge cases, measured with DirectML itself.

Writes probe cases (64 built to land on ties: OutputScale equal to, or a
small multiple of, a non-dyadic InputScale, windows 1x2 to 6x6 with
paddings; 210 random ones with dilations, strides, paddings, two and three
spatial dimensions and per-channel parameters; hand-made edge cases: ties
with an odd zero point, padding with and without IncludePadding, windows
without input elements, infinite and NaN averages, parameter shapes, descs
DirectML may refuse), runs them through dmlrun (tools/directml/run.sh batch;
DMLRUN_BUILD must name a dmlrun built from this checkout, whose direct path
knows the operator), prints how many elements each candidate formula gets
wrong (docs/semantics.md section 17 states the one with none wrong) and
each edge case's output or refusal.

    DMLRUN_BUILD=/tmp/dmlrun python3 tools/directml/probe_average_pooling.py --out /tmp/qavg-probe
"""
import argparse
import itertools
import json
import os
import subprocess

import numpy as np

f32 = np.float32
np.seterr(all="ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
OP = "QUANTIZED_LINEAR_AVERAGE_POOLING"


def out_size(i, s, w, sp, ep, d):
    return (i + sp + ep - ((w - 1) * d + 1)) // s + 1


def q(v, zp, lo, hi):
    """Section 2's Q: clamp in binary32 (NaN to lo - zp), round half to even, + zp."""
    v = f32(lo - zp) if np.isnan(v) else f32(min(max(v, f32(lo - zp)), f32(hi - zp)))
    return int(np.rint(v)) + zp


def candidate(c, cand):
    """The output of case `c` by one candidate formula, in numpy binary32."""
    x = c["x"].astype(np.int64)
    sp = x.shape[2:]
    nd = len(sp)
    S, W, SP, EP, D = c["S"], c["W"], c["SP"], c["EP"], c["D"]
    osz = [out_size(sp[k], S[k], W[k], SP[k], EP[k], D[k]) for k in range(nd)]
    lo, hi = c["lohi"]
    y = np.zeros(x.shape[:2] + tuple(osz), np.int64)
    for n, ch in itertools.product(range(x.shape[0]), range(x.shape[1])):
        j = ch if len(c["xs"]) > 1 else 0
        s_in, z_in, s_out, z_out = f32(c["xs"][j]), int(c["xz"][j]), f32(c["ys"][j]), int(c["yz"][j])
        for o in itertools.product(*[range(k) for k in osz]):
            taps = []
            for t in itertools.product(*[range(k) for k in W]):
                p = [o[k] * S[k] + t[k] * D[k] - SP[k] for k in range(nd)]
                if all(0 <= p[k] < sp[k] for k in range(nd)):
                    taps.append(int(x[(n, ch) + tuple(p)]) - z_in)
            div = f32(int(np.prod(W)) if c["inc"] else len(taps))

            def fsum(order):
                a = f32(0)
                for v in order:
                    a = f32(a + f32(f32(v) * s_in))
                return a

            isum = f32(sum(taps))
            if cand == "rule":  # docs/semantics.md section 17
                r = f32(f32(fsum(taps) / div) / s_out)
            elif cand == "reverse order":
                r = f32(f32(fsum(reversed(taps)) / div) / s_out)
            elif cand == "ORT rne(v + zp)":
                r = f32(f32(f32(fsum(taps) / div) / s_out) + f32(z_out))
                y[(n, ch) + o] = lo if np.isnan(r) else int(np.clip(np.rint(r), lo, hi))
                continue
            elif cand == "sum * (1/count)":
                r = f32(f32(fsum(taps) * f32(f32(1) / div)) / s_out)
            elif cand == "sum / (count * OutputScale)":
                r = f32(fsum(taps) / f32(div * s_out))
            elif cand == "fp32(S) * s / count / so":
                r = f32(f32(f32(isum * s_in) / div) / s_out)
            elif cand == "fp32(S) / count * s / so":
                r = f32(f32(f32(isum / div) * s_in) / s_out)
            elif cand == "fp32(S) * s / (count * so)":
                r = f32(f32(isum * s_in) / f32(div * s_out))
            elif cand == "fp32(S) * (s / so) / count":
                r = f32(f32(isum * f32(s_in / s_out)) / div)
            y[(n, ch) + o] = q(r, z_out, lo, hi)
    return y


CANDIDATES = ["rule", "reverse order", "ORT rne(v + zp)", "sum * (1/count)", "sum / (count * OutputScale)",
              "fp32(S) * s / count / so", "fp32(S) / count * s / so", "fp32(S) * s / (count * so)",
              "fp32(S) * (s / so) / count"]


def type_of(rng):
    t = str(rng.choice(["UINT8", "INT8"]))
    return t, ((0, 255) if t == "UINT8" else (-128, 127)), (np.uint8 if t == "UINT8" else np.int8)


def random_case(rng):
    nd = int(rng.choice([2, 2, 2, 3]))
    T, (lo, hi), dt = type_of(rng)
    W = [int(rng.integers(1, 4)) for _ in range(nd)]
    D = [int(rng.integers(1, 3)) for _ in range(nd)]
    S = [int(rng.integers(1, 3)) for _ in range(nd)]
    SP = [int(rng.integers(0, w)) for w in W]
    EP = [int(rng.integers(0, w)) for w in W]
    sp = [int(rng.integers(max(1, (W[k] - 1) * D[k] + 1 - SP[k] - EP[k]), 7)) for k in range(nd)]
    C = int(rng.integers(1, 4))
    x = rng.integers(lo, hi + 1, size=[int(rng.integers(1, 3)), C] + sp).astype(dt)
    k = C if rng.integers(0, 2) else 1
    return dict(x=x, T=T, lohi=(lo, hi), W=W, D=D, S=S, SP=SP, EP=EP, C=C,
                xs=rng.uniform(0.001, 1.0, k).astype(f32), ys=rng.uniform(0.001, 1.0, k).astype(f32),
                xz=rng.integers(lo, hi + 1, k), yz=rng.integers(lo, hi + 1, k), inc=bool(rng.integers(0, 2)))


def tie_case(rng, i):
    T, (lo, hi), dt = type_of(rng)
    W = list([(1, 2), (2, 2), (2, 4), (3, 3), (4, 4), (5, 5), (1, 8), (6, 6)][i % 8])
    C = 6
    x = rng.integers(lo, hi + 1, size=[1, C, 12, 12]).astype(dt)
    s = f32([0.1, 0.3, 0.7, 1 / 3, 0.01, 0.05, 0.0123, 2.2][(i // 8) % 8])
    k = C if i % 3 == 0 else 1
    xs = np.full(k, s, f32)
    ys = xs.copy() if i % 2 == 0 else (xs * f32(rng.choice([0.5, 2.0, 0.25, 4.0, 3.0]))).astype(f32)
    return dict(x=x, T=T, lohi=(lo, hi), W=W, D=[1, 1], S=[1, 1], C=C,
                SP=[int(rng.integers(0, w)) for w in W], EP=[int(rng.integers(0, w)) for w in W],
                xs=xs, ys=ys, xz=rng.integers(lo, hi + 1, k), yz=rng.integers(lo // 2, hi // 2 + 1, k),
                inc=bool(rng.integers(0, 2)))


def write_case(d, x, T, params, xs, ys, xz=None, yz=None, psz=None, osz=None, extra=None, strides=None):
    """A case of the direct path (dmlrun reads "data" as the buffer's raw elements)."""
    os.makedirs(d, exist_ok=True)
    nd = x.ndim - 2
    if osz is None:
        osz = list(x.shape[:2]) + [out_size(x.shape[2 + k], params["Strides"][k], params["WindowSize"][k],
                                            params["StartPadding"][k], params["EndPadding"][k],
                                            params["Dilations"][k]) for k in range(nd)]
    psz = psz or [1] * (nd + 2)
    np.save(os.path.join(d, "input.npy"), x)
    t = {"InputTensor": {"type": T, "sizes": list(x.shape), "data": "input.npy"},
         "InputScaleTensor": {"type": "FLOAT32", "sizes": psz, "data": "xs.npy"},
         "OutputScaleTensor": {"type": "FLOAT32", "sizes": psz, "data": "ys.npy"},
         "OutputTensor": {"type": T, "sizes": osz}}
    np.save(os.path.join(d, "xs.npy"), np.asarray(xs, f32).reshape(-1))
    np.save(os.path.join(d, "ys.npy"), np.asarray(ys, f32).reshape(-1))
    if xz is not None:
        t["InputZeroPointTensor"] = {"type": T, "sizes": psz, "values": [int(v) for v in np.atleast_1d(xz)]}
    if yz is not None:
        t["OutputZeroPointTensor"] = {"type": T, "sizes": psz, "values": [int(v) for v in np.atleast_1d(yz)]}
    if strides:
        t["InputTensor"]["strides"] = strides
    for k, v in (extra or {}).items():
        t[k] = {n: e for n, e in {**t.get(k, {}), **v}.items() if e is not None}
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump({"operator": OP, "tensors": t, "params": params}, f)


def params_of(nd, W, S=None, SP=None, EP=None, D=None, inc=False):
    return {"Strides": S or [1] * nd, "WindowSize": list(W), "StartPadding": SP or [0] * nd,
            "EndPadding": EP or [0] * nd, "Dilations": D or [1] * nd, "IncludePadding": inc}


def edge_cases(out):
    """name -> case directory: the hand-made cases of section 17's bullets."""
    cases = {}

    def case(name, x, T="UINT8", xs=1.0, ys=1.0, W=(1, 2), S=None, SP=None, EP=None, D=None, inc=False, **kw):
        x = np.asarray(x, dtype=np.uint8 if T == "UINT8" else np.int8)
        d = os.path.join(out, "edge", name)
        write_case(d, x, T, params_of(x.ndim - 2, W, S, SP, EP, D, inc), np.atleast_1d(xs), np.atleast_1d(ys), **kw)
        cases[name] = d

    row = [[[[10, 20, 30, 40]]]]
    two = [[[[10, 20, 30, 40]], [[50, 60, 70, 80]]]]
    pad = dict(W=(1, 2), SP=[0, 2], inc=False)  # the first window lies in the padding
    case("ties", [[[[1, 2, 5, 6, 3, 4, 7, 8]]]], W=(1, 2), S=[1, 2], yz=1)
    case("ties_int8", [[[[-1, -2, -5, -6, 3, 4, 7, 8]]]], T="INT8", W=(1, 2), S=[1, 2], yz=1)
    case("include_padding", [[[[3, 6, 9]]]], W=(1, 2), S=[1, 2], EP=[0, 1], inc=True, xz=1)
    case("exclude_padding", [[[[3, 6, 9]]]], W=(1, 2), S=[1, 2], EP=[0, 1], inc=False, xz=1)
    case("include_padding_dilated", [[[[3, 6, 9, 12]]]], W=(1, 2), D=[1, 3], SP=[0, 2], inc=True, xz=1)
    case("three_spatial", [[[[[1, 2, 3, 4]]]]], W=(1, 1, 2))
    case("overflow_to_inf", [[[[255, 255]]]], xs=3e38, yz=9)
    case("saturate_uint8", [[[[255, 255, 0, 0]]]], ys=0.5, S=[1, 2], yz=9)
    case("saturate_int8", [[[[127, 127, -128, -128]]]], T="INT8", ys=0.5, S=[1, 2], yz=9)
    for T in ["UINT8", "INT8"]:
        t2 = [[[[3, 6]], [[1, 250 if T == "UINT8" else -100]]]]
        case(f"nan_no_zp_{T}", [[[[3, 6]]]], T=T, **pad)
        case(f"nan_input_zp_{T}", [[[[3, 6]]]], T=T, xz=1, **pad)
        case(f"nan_output_zp_{T}", [[[[3, 6]]]], T=T, yz=4, **pad)
        case(f"nan_both_zp_{T}", [[[[3, 6]]]], T=T, xz=1, yz=4, **pad)
        case(f"nan_per_channel_{T}", [[[[3, 6]], [[1, 2]]]], T=T, xz=[1, 2], yz=[4, 5], xs=[1.0, 1.0],
             ys=[1.0, 1.0], psz=[1, 2, 1, 1], **pad)
        case(f"nan_scale_{T}", [[[[3, 6]]]], T=T, xs=np.nan, W=(1, 1), yz=4)
        case(f"inf_no_zp_{T}", t2, T=T, ys=0.0, W=(1, 1), xz=2)
        case(f"inf_zp_{T}", t2, T=T, ys=0.0, W=(1, 1), xz=2, yz=4)
        case(f"inf_per_channel_{T}", t2, T=T, ys=[0.0, 0.0], xs=[1.0, 1.0], xz=[2, 2], yz=[4, 5], psz=[1, 2, 1, 1],
             W=(1, 1))
        case(f"window0_{T}", [[[[3, 6]]]], T=T, W=(1, 0), osz=[1, 1, 1, 3], xz=1, yz=4)
        case(f"window0_no_zp_{T}", [[[[3, 6]]]], T=T, W=(1, 0), osz=[1, 1, 1, 3])
        case(f"refuse_zp_per_channel_scale_per_tensor_{T}", t2, T=T, yz=[4, 5], xz=[2, 2], psz=[1, 2, 1, 1],
             extra={"InputScaleTensor": {"sizes": [1, 1, 1, 1]}, "OutputScaleTensor": {"sizes": [1, 1, 1, 1]}},
             **pad)
        case(f"refuse_zp_stride0_{T}", t2, T=T, xz=2,
             extra={"OutputZeroPointTensor": {"type": T, "sizes": [1, 2, 1, 1], "strides": [0, 0, 0, 0],
                                              "values": [4]}}, **pad)
    case("per_channel", two, xs=[1.0, 2.0], ys=[1.0, 3.0], xz=[0, 10], yz=[1, 2], psz=[1, 2, 1, 1])
    case("scale_1x2_per_channel", two, xs=[1.0, 2.0], psz=[1, 2],
         extra={"OutputScaleTensor": {"sizes": [1, 1, 1, 1]}})
    case("scale_2x1x1", two, xs=[1.0, 2.0], psz=[2, 1, 1], extra={"OutputScaleTensor": {"sizes": [1, 1, 1, 1]}})
    case("scale_per_width", two, W=(1, 1), xs=[1.0, 2.0, 3.0, 4.0], psz=[1, 1, 1, 4],
         extra={"OutputScaleTensor": {"sizes": [1, 1, 1, 1]}})
    case("scale_1d", row, xs=[2.0], psz=[1])
    case("nhwc_strides", two, strides=[8, 1, 8, 2])
    case("output_size_larger", row, osz=[1, 1, 1, 4])
    case("output_size_smaller", row, osz=[1, 1, 1, 2])
    case("strides0", row, S=[1, 0], osz=[1, 1, 1, 3])
    case("dilations0", row, D=[1, 0], osz=[1, 1, 1, 3])
    case("window_beyond_padded_input", row, W=(1, 5), osz=[1, 1, 1, 1])
    case("refuse_one_spatial", [[[1, 2, 3]]], W=(2,))
    case("refuse_zp_type", row, extra={"InputZeroPointTensor": {"type": "INT8", "sizes": [1, 1, 1, 1], "values": [0]}})
    case("refuse_output_type", row, extra={"OutputTensor": {"type": "INT8"}})
    case("refuse_scale_float16", row, extra={"InputScaleTensor": {"type": "FLOAT16", "data": None, "values": [1.0]}})
    case("refuse_output_stride0", two, extra={"OutputTensor": {"strides": [0, 0, 0, 1]}})
    case("refuse_batch_mismatch", row, osz=[2, 1, 1, 3])
    return cases


def run_batch(out, dirs):
    lst = os.path.join(out, "list")
    with open(lst, "w") as f:
        f.write("".join(f"{d}/case.json\t{d}/out\n" for d in dirs))
    subprocess.run([os.path.join(HERE, "run.sh"), "batch", lst], check=False)


def result(d):
    rc = open(d + "/out.rc").read().strip()
    if rc != "0":
        return None, "rc=" + rc + " " + open(d + "/out.err").read().strip()[-80:]
    return np.load(d + "/out.npy"), None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--random", type=int, default=210)
    ap.add_argument("--ties", type=int, default=64)
    ap.add_argument("--no-run", action="store_true", help="evaluate the outputs of an earlier run")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    probes = [tie_case(rng, i) for i in range(a.ties)] + [random_case(rng) for _ in range(a.random)]
    dirs = []
    for i, c in enumerate(probes):
        d = os.path.join(a.out, f"probe_{i}")
        nd = len(c["W"])
        psz = [1, c["C"]] + [1] * nd if len(c["xs"]) > 1 else None
        write_case(d, c["x"], c["T"], params_of(nd, c["W"], c["S"], c["SP"], c["EP"], c["D"], c["inc"]),
                   c["xs"], c["ys"], c["xz"], c["yz"], psz=psz)
        dirs.append(d)
    edges = edge_cases(a.out)
    if not a.no_run:
        run_batch(a.out, dirs + list(edges.values()))
    wrong = {k: 0 for k in CANDIDATES}
    total = refused = 0
    for c, d in zip(probes, dirs):
        got, err = result(d)
        if got is None:
            refused += 1
            continue
        total += got.size
        for k in CANDIDATES:
            wrong[k] += int((candidate(c, k) != got.astype(np.int64)).sum())
    print(f"{len(probes)} probe cases, {refused} refused, {total} elements; wrong per candidate:")
    for k, v in wrong.items():
        print(f"  {k:30s} {v}")
    for n, d in edges.items():
        got, err = result(d)
        print(f"{n:44s}", err if got is None else got.ravel().tolist())


if __name__ == "__main__":
    main()
