#!/usr/bin/env python3
"""MATRIX_MULTIPLY_INTEGER_TO_FLOAT's float order, measured with DirectML itself.

DirectML's page gives no formula for how the int32 sum, the two scales and
the bias combine in binary32. This writes probe cases (random u8/i8 mixes,
per-tensor and per-row/per-column scales and zero points, scales with long
mantissas so that the candidate orders round differently, sums beyond 2^24,
a bias or none, NaN/infinite/zero/subnormal scales and biases, 32-bit
inputs, and descs DirectML may refuse), runs them through dmlrun
(tools/directml/run.sh batch; DMLRUN_BUILD must name a dmlrun built from
this checkout), and prints how many elements each candidate formula gets
wrong (bits compared; NaN equals NaN). docs/semantics.md states the one with
none wrong.

    DMLRUN_BUILD=/tmp/dmlrun python3 tools/directml/probe_matmul_integer_to_float.py --out /tmp/mmitf-probe

--sweep runs u8 x i8 products of 1x1, 4x4, 16x16 and 2x64 outputs for K = 8
to 392 and prints, per shape and K, the chunk sizes T for which "sum each
chunk of T products in k order, then add the chunks as a tree over a
power-of-two count" reproduces DirectML's output (T = 100000: one chunk,
the k-order sum). --ort needs no DirectML: it runs ONNX Runtime's
MatMulIntegerToFloat (pip install onnxruntime onnx) on random problems and
prints how many elements each candidate order gets wrong.
"""
import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_directml_cases as g  # noqa: E402
from gen_directml_cases import Case, ints, rng_for, right, run_dml  # noqa: E402

f32, i8, u8, i16, i32, u32 = np.float32, np.int8, np.uint8, np.int16, np.int32, np.uint32
np.seterr(all="ignore")
g.TYPE_NAME[np.dtype(i16)] = "INT16"


def long_scale(rng, n, lo=-9, hi=2):
    """Scales with random 24-bit mantissas: the candidate orders round differently."""
    return (rng.uniform(1, 2, n) * 2.0 ** rng.integers(lo, hi, n)).astype(f32)


def case(name, ta, tb, batch, M, K, N, rank=4, a_param="tensor", b_param="tensor", a_zp=True, b_zp=True,
         bias=True, a_values=None, b_values=None, sa=None, sb=None, bias_values=None, zps=None, bias_sizes=None,
         scale_rank=None, out_type=f32, scale_type=f32):
    rng = rng_for("mmitf/" + name)
    c = Case("matmul_integer_to_float", name, "MATRIX_MULTIPLY_INTEGER_TO_FLOAT", name)
    B0, C0 = batch
    a_sizes, b_sizes, y_sizes = right([B0, C0, M, K], rank), right([B0, C0, K, N], rank), right([B0, C0, M, N], rank)
    sr = rank if scale_rank is None else scale_rank
    c.input(rng, "ATensor", ta, a_sizes, "packed", a_values)
    as_sizes = right([1, 1, M if a_param == "row" else 1, 1], sr)
    c.tensor("AScaleTensor", scale_type, as_sizes, sa if sa is not None else long_scale(rng, int(np.prod(as_sizes))))
    if a_zp:
        c.tensor("AZeroPointTensor", ta, as_sizes, np.resize(np.asarray(zps[0], ta), int(np.prod(as_sizes)))
                 if zps else ints(rng, ta, int(np.prod(as_sizes))))
    c.input(rng, "BTensor", tb, b_sizes, "packed", b_values)
    bs_sizes = right([1, 1, 1, N if b_param == "column" else 1], sr)
    c.tensor("BScaleTensor", scale_type, bs_sizes, sb if sb is not None else long_scale(rng, int(np.prod(bs_sizes))))
    if b_zp:
        c.tensor("BZeroPointTensor", tb, bs_sizes, np.resize(np.asarray(zps[1], tb), int(np.prod(bs_sizes)))
                 if zps else ints(rng, tb, int(np.prod(bs_sizes))))
    if bias:
        bsz = bias_sizes or y_sizes
        n = int(np.prod(bsz))
        c.tensor("BiasTensor", out_type, bsz, bias_values if bias_values is not None
                 else (rng.standard_normal(n) * 10 ** rng.uniform(-2, 3)).astype(out_type))
    return c.output(out_type, y_sizes)


def load(c, member, root):
    e = c.tensors.get(member)
    if e is None:
        return None
    dt = {"FLOAT32": f32, "INT8": i8, "UINT8": u8, "INT32": i32, "UINT32": u32, "INT16": i16}[e["type"]]
    buf = np.array(e["values"], dtype=dt) if "values" in e else np.asarray(c.files[e["data"]])
    return buf.reshape(e["sizes"])


def b4(x):
    """A tensor as 4-D (right-aligned), for broadcasting."""
    return x.reshape([1] * (4 - x.ndim) + list(x.shape))


def candidates(c):
    A, B = b4(load(c, "ATensor", None)).astype(np.int64), b4(load(c, "BTensor", None)).astype(np.int64)
    sa, sb = b4(load(c, "AScaleTensor", None)).astype(f32), b4(load(c, "BScaleTensor", None)).astype(f32)
    za, zb = load(c, "AZeroPointTensor", None), load(c, "BZeroPointTensor", None)
    za = b4(za).astype(np.int64) if za is not None else np.zeros((1, 1, 1, 1), np.int64)
    zb = b4(zb).astype(np.int64) if zb is not None else np.zeros((1, 1, 1, 1), np.int64)
    bias = load(c, "BiasTensor", None)
    bias = b4(bias).astype(f32) if bias is not None else None
    Ad, Bd = A - za, B - zb
    acc64 = np.matmul(Ad, Bd)
    acc = ((acc64 + 2**31) % 2**32 - 2**31).astype(np.int64)  # int32 wrap
    fa = acc.astype(f32)
    s_prod = (sa * sb).astype(f32)

    def addb(y):
        return (y + bias).astype(f32) if bias is not None else y.astype(f32)

    def fma_b(x, s):
        if bias is None:
            return (x * s).astype(f32)
        return (x.astype(np.float64) * s.astype(np.float64) + bias.astype(np.float64)).astype(f32)

    out = {
        "((acc*sa)*sb)+bias": addb(((fa * sa).astype(f32) * sb).astype(f32)),
        "((acc*sb)*sa)+bias": addb(((fa * sb).astype(f32) * sa).astype(f32)),
        "(acc*(sa*sb))+bias": addb((fa * s_prod).astype(f32)),
        "fma(acc,sa*sb,bias)": fma_b(fa, s_prod),
        "(sa*(sb*acc))+bias": addb((sa * (sb * fa).astype(f32)).astype(f32)),
    }
    # Dequantize each operand, then a float matmul (sequential k order, binary32).
    Af = (Ad.astype(f32) * sa).astype(f32)
    Bf = (Bd.astype(f32) * sb).astype(f32)
    if A.shape[-1] <= 4096:
        K = A.shape[-1]
        s = np.zeros((Af[..., :, :1] * Bf[..., :1, :]).shape, f32)
        for k in range(K):
            s = (s + (Af[..., :, k:k + 1] * Bf[..., k:k + 1, :]).astype(f32)).astype(f32)
        out["dequantize, float matmul (k order)"] = addb(s)
        s64 = np.matmul(Af.astype(np.float64), Bf.astype(np.float64))
        out["dequantize, float64 matmul"] = addb(s64.astype(f32))
    return out


def same(x, y):
    x, y = np.asarray(x, f32).ravel(), np.asarray(y, f32).ravel()
    both_nan = np.isnan(x) & np.isnan(y)
    return (x.view(np.uint32) == y.view(np.uint32)) | both_nan


def build():
    cs = []
    mixes = list(itertools.product((u8, i8), (u8, i8)))
    short = {np.dtype(u8): "u8", np.dtype(i8): "i8", np.dtype(i32): "i32", np.dtype(u32): "u32", np.dtype(i16): "i16"}
    forms = [("tensor", "tensor"), ("row", "column"), ("row", "tensor"), ("tensor", "column")]
    for (ta, tb), k in itertools.product(mixes, range(8)):
        name = f"random_{short[np.dtype(ta)]}{short[np.dtype(tb)]}_{k}"
        rng = rng_for("sizes/" + name)
        rank = 2 + k % 3
        M, K, N = int(rng.integers(1, 24)), int(rng.integers(1, 300)), int(rng.integers(1, 24))
        batch = (int(rng.integers(1, 3)), int(rng.integers(1, 4))) if rank == 4 else (1, int(rng.integers(1, 4))) \
            if rank == 3 else (1, 1)
        ap, bp = forms[k % 4]
        cs.append(case(name, ta, tb, batch, M, K, N, rank, ap, bp, a_zp=k % 3 != 2, b_zp=k % 5 != 4, bias=k % 2 == 0))
    # Sums beyond 2^24 (float(acc) rounds) and int32 wrap.
    for K, ta, tb in [(4096, u8, u8), (20000, u8, u8), (40000, u8, u8), (61681, u8, u8), (20000, i8, i8)]:
        hi_a, hi_b = np.iinfo(ta).max, np.iinfo(tb).max
        rng = rng_for(f"big/{K}")
        a = ints(rng, ta, 3 * K, int(hi_a) - 3, int(hi_a))
        b = ints(rng, tb, K * 5, int(hi_b) - 3, int(hi_b))
        cs.append(case(f"big_{short[np.dtype(ta)]}{short[np.dtype(tb)]}_{K}", ta, tb, (1, 1), 3, K, 5, 2,
                       "row", "column", a_zp=True, b_zp=True, bias=True, a_values=a, b_values=b,
                       zps=([0 if ta == u8 else -128], [0 if tb == u8 else -128])))
    # Special scales and biases.
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 1e-40, 3e38, -2.5, 1.0], f32)
    for k in range(4):
        rng = rng_for(f"special/{k}")
        M, K, N = 10, 7, 10
        sa = np.resize(specials, M) if k in (0, 2) else None
        sb = np.resize(np.roll(specials, 3), N) if k in (1, 2) else None
        bias = rng.choice(np.concatenate([specials, rng.standard_normal(20).astype(f32)]), M * N).astype(f32) \
            if k == 3 else None
        cs.append(case(f"special_{k}", u8, i8, (1, 1), M, K, N, 2, "row", "column", bias=True, sa=sa, sb=sb,
                       bias_values=bias))
    # 32-bit and 16-bit integer inputs (the page lists them).
    for ta, tb in [(i32, i32), (u32, u32), (i32, i8), (i16, i16)]:
        rng = rng_for(f"wide/{short[np.dtype(ta)]}")
        M, K, N = 6, 9, 7
        a = ints(rng, ta, M * K, -1000 if ta != u32 else 0, 1000)
        b = ints(rng, tb, K * N, -100 if tb != u32 else 0, 100)
        cs.append(case(f"wide_{short[np.dtype(ta)]}{short[np.dtype(tb)]}", ta, tb, (1, 1), M, K, N, 2, "row",
                       "column", a_values=a, b_values=b))
    # Descs DirectML may refuse (or compute): bias broadcast by sizes, scales of fewer dimensions, no bias at rank 3.
    cs.append(case("bias_row_sizes", u8, i8, (1, 1), 4, 5, 6, 2, bias_sizes=[1, 6]))
    cs.append(case("bias_fewer_dims", u8, i8, (1, 2), 4, 5, 6, 3, bias_sizes=[4, 6]))
    cs.append(case("scales_fewer_dims", u8, i8, (2, 2), 4, 5, 6, 4, "row", "column", scale_rank=2))
    cs.append(case("scales_1d", u8, i8, (1, 1), 4, 5, 6, 2, "tensor", "tensor", scale_rank=1))
    cs.append(case("zp_mixed_types", u8, i8, (1, 1), 4, 5, 6, 2, "tensor", "tensor"))
    return cs


def chunked(P, T):
    """P: products (..., M, K, N). Chunks of T products summed in k order, then a tree over a power-of-two count."""
    K = P.shape[-2]
    parts = []
    for k0 in range(0, K, T):
        s = np.zeros(P.shape[:-2] + P.shape[-1:], f32)
        for k in range(k0, min(K, k0 + T)):
            s = (s + P[..., k, :]).astype(f32)
        parts.append(s)
    n = 1
    while n < len(parts):
        n *= 2
    parts += [None] * (n - len(parts))
    while n > 1:
        n //= 2
        for i in range(n):
            if parts[i + n] is not None:
                parts[i] = (parts[i] + parts[i + n]).astype(f32)
    return parts[0]


def sweep(out):
    cs = [case(f"sw_{M}_{N}_{K}", u8, i8, (1, 1), M, K, N, 2, bias=False)
          for (M, N) in [(1, 1), (4, 4), (16, 16), (2, 64)] for K in range(8, 400, 8)]
    res = run_dml(cs, out)
    for c in cs:
        rc, y, err = res[c.rel]
        A, B = b4(load(c, "ATensor", None)).astype(f32), b4(load(c, "BTensor", None)).astype(f32)
        sa, sb = b4(load(c, "AScaleTensor", None)), b4(load(c, "BScaleTensor", None))
        za, zb = b4(load(c, "AZeroPointTensor", None)).astype(f32), b4(load(c, "BZeroPointTensor", None)).astype(f32)
        a, b = ((A - za).astype(f32) * sa).astype(f32), ((B - zb).astype(f32) * sb).astype(f32)
        P = (a[..., :, :, None] * b[..., None, :, :]).astype(f32)
        ok = [T for T in (8, 16, 32, 64, 96, 128, 256, 100000) if same(chunked(P, T), y).all()] if rc == 0 else "refused"
        print(c.rel.split("/")[-1], ok)


def ort_check():
    import onnxruntime as ort
    from onnx import TensorProto, helper
    rng = np.random.default_rng(5)
    tp = {np.dtype(u8): TensorProto.UINT8, np.dtype(i8): TensorProto.INT8}
    tot, n, skipped = {}, 0, set()
    for t in range(40):
        ta, tb = (u8, i8)[t % 2], (u8, i8)[(t // 2) % 2]
        M, K, N = (int(v) for v in rng.integers(1, 40, 3))
        lo_a, hi_a, lo_b, hi_b = np.iinfo(ta).min, np.iinfo(ta).max, np.iinfo(tb).min, np.iinfo(tb).max
        A = rng.integers(lo_a, hi_a + 1, (M, K)).astype(ta)
        B = rng.integers(lo_b, hi_b + 1, (K, N)).astype(tb)
        sa = np.array(rng.uniform(1, 2) * 2.0 ** rng.integers(-9, 2), f32)
        per_col = t % 3 != 0
        sb = (rng.uniform(1, 2, N) * 2.0 ** rng.integers(-9, 2, N)).astype(f32) if per_col else np.array(rng.uniform(1, 2), f32)
        za = np.array(rng.integers(lo_a, hi_a + 1), ta)
        zb = rng.integers(lo_b, hi_b + 1, N).astype(tb) if per_col else np.array(rng.integers(0, 100), tb)
        bias = (rng.standard_normal(N) * 100).astype(f32)
        feeds = dict(A=A, B=B, sa=sa, sb=sb, za=za, zb=zb, bias=bias)
        ins = [helper.make_tensor_value_info(k, tp[v.dtype] if v.dtype in tp else TensorProto.FLOAT, v.shape)
               for k, v in feeds.items()]
        node = helper.make_node("MatMulIntegerToFloat", list(feeds), ["Y"], domain="com.microsoft")
        g = helper.make_graph([node], "g", ins, [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        try:
            sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        except Exception:  # ORT registers no INT8 A with UINT8 B
            skipped.add(f"{np.dtype(ta).name} x {np.dtype(tb).name}")
            continue
        y = sess.run(None, feeds)[0]
        acc = (A.astype(np.int64) - za.astype(np.int64)) @ (B.astype(np.int64) - zb.astype(np.int64))
        fa = acc.astype(f32)
        cand = {"fp32(acc)*fp32(sa*sb) + bias": ((fa * (sa * sb).astype(f32)).astype(f32) + bias).astype(f32),
                "((fp32(acc)*sa)*sb) + bias": (((fa * sa).astype(f32) * sb).astype(f32) + bias).astype(f32),
                "fma(fp32(acc), fp32(sa*sb), bias)": (fa.astype(np.float64) * (sa * sb).astype(f32).astype(np.float64)
                                                     + bias).astype(f32)}
        for k, v in cand.items():
            tot[k] = tot.get(k, 0) + int((~same(v, y)).sum())
        n += y.size
    print(f"ONNX Runtime {ort.__version__}: {n} elements; not registered: {', '.join(sorted(skipped))}")
    for k, v in tot.items():
        print(f"{k:40s} elements wrong {v}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="folder for the probe cases and DirectML's outputs")
    ap.add_argument("--sweep", action="store_true", help="the K sweep (chunk sizes per shape)")
    ap.add_argument("--ort", action="store_true", help="ONNX Runtime's order instead (no DirectML)")
    a = ap.parse_args()
    if a.ort:
        return ort_check()
    if not a.out:
        ap.error("--out is required (but with --ort)")
    if a.sweep:
        return sweep(a.out)
    cs = build()
    res = run_dml(cs, a.out)
    totals, elements, refused = {}, 0, []
    for c in cs:
        rc, y, err = res[c.rel]
        if rc != 0:
            refused.append(f"{c.rel.split('/')[-1]} ({err.splitlines()[-1] if err else rc})")
            continue
        cand = candidates(c)
        elements += y.size
        line = []
        for k, v in cand.items():
            bad = int((~same(v, y)).sum())
            totals[k] = totals.get(k, 0) + bad
            line.append(bad)
        print(f"{c.rel.split('/')[-1]:28s} {y.size:6d} elements; wrong per candidate {line}")
    print(f"\n{elements} elements computed; refused: {len(refused)}")
    for r in refused:
        print("  refused:", r)
    for k, v in totals.items():
        print(f"{k:40s} elements wrong {v}")


if __name__ == "__main__":
    sys.exit(main())
