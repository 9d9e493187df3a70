#!/usr/bin/env python3
"""Conformance cases for qdml whose expected outputs come from ONNX Runtime.

Builds one-node ONNX models with onnx.helper, runs them on ONNX Runtime's CPU
execution provider (MLAS kernels) and writes each call as a qdml case
(docs/case-format.md): tests/data/ort/<op>/<name>/case.json plus
.npy files. ONNX Runtime is the independent oracle; qdml's code is never run.

    pip install numpy onnx onnxruntime
    python3 tools/gen_ort_cases.py            # rewrites tests/data/ort
    python3 tools/gen_ort_cases.py --check    # regenerates in memory, diffs against tests/data/ort

ONNX operator -> DirectML operator:
    QLinearMatMul                   QUANTIZED_LINEAR_MATRIX_MULTIPLY   tolerance 0
    QLinearConv                     QUANTIZED_LINEAR_CONVOLUTION       tolerance 0
    DequantizeLinear                ELEMENT_WISE_DEQUANTIZE_LINEAR     tolerance 0
    QuantizeLinear                  ELEMENT_WISE_QUANTIZE_LINEAR       tolerance 0
    com.microsoft QLinearAdd        ELEMENT_WISE_QUANTIZED_LINEAR_ADD  tolerance 1 (fixed-point path)
    Clip                            ELEMENT_WISE_CLIP                  tolerance 0
    Clip (integer types)            ELEMENT_WISE_CLIP1                 tolerance 0
    MatMulInteger                   MATRIX_MULTIPLY_INTEGER            tolerance 0
    ConvInteger                     CONVOLUTION_INTEGER                tolerance 0
    com.microsoft MatMulIntegerToFloat  MATRIX_MULTIPLY_INTEGER_TO_FLOAT  tolerance 0 (exact profile)
    DynamicQuantizeLinear           DYNAMIC_QUANTIZE_LINEAR            tolerance 0 (exact profile; three outputs)
    com.microsoft QLinearAveragePool  QUANTIZED_LINEAR_AVERAGE_POOLING  tolerance 0 (y_zero_point 0: ORT adds
                                    a zero point before rounding, docs/semantics.md section 17; others are probes)
    QuantizeLinear-21 (int4, uint4, blocked)    QUANTIZE       tolerance 0 (docs/semantics.md section 18)
    DequantizeLinear-21 (int4, uint4, blocked)  DEQUANTIZE     tolerance 0

Every case is also computed with a numpy transcription of docs/semantics.md (binary32
operations in the spec's order, ties to even). A tolerance-0 case on which
ONNX Runtime and docs/semantics.md disagree is not written: it is listed on stderr (and
documented in tools/README.md). An add case is written only when ONNX Runtime
is within 1 of docs/semantics.md. Random data comes from a generator seeded by the case
name, so the output is byte-for-byte reproducible and adding a case does not
change the others.
"""

import argparse
import filecmp
import json
import shutil
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "ort"
OPSET = 21
INLINE_MAX = 16  # buffers up to this many elements go inline as "values"

f32, f16 = np.float32, np.float16
u8, i8, u16, i16, u32, i32, u64, i64 = (np.uint8, np.int8, np.uint16, np.int16,
                                        np.uint32, np.int32, np.uint64, np.int64)
DML_TYPE = {np.dtype(t): n for t, n in [
    (f32, "FLOAT32"), (f16, "FLOAT16"), (u8, "UINT8"), (i8, "INT8"), (u16, "UINT16"), (i16, "INT16"),
    (u32, "UINT32"), (i32, "INT32"), (u64, "UINT64"), (i64, "INT64")]}

ort.set_default_logger_severity(3)


# ---------------------------------------------------------------------------
# ONNX Runtime

def run_ort(op, inputs, out_dtype, attrs=None, domain=""):
    """Runs one node. `inputs`: list of (array or None, constant?) in ONNX
    input order (None = omitted optional input). Constants become
    initializers, the others graph inputs."""
    names, feeds, graph_inputs, inits = [], {}, [], []
    for i, (arr, const) in enumerate(inputs):
        if arr is None:
            names.append("")
            continue
        name = f"in{i}"
        names.append(name)
        arr = np.asarray(arr)
        if const:
            inits.append(numpy_helper.from_array(arr, name))
        else:
            graph_inputs.append(helper.make_tensor_value_info(
                name, helper.np_dtype_to_tensor_dtype(arr.dtype), arr.shape))
            feeds[name] = arr
    while names and names[-1] == "":
        names.pop()
    node = helper.make_node(op, names, ["y"], domain=domain, **(attrs or {}))
    out = helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(np.dtype(out_dtype)), None)
    graph = helper.make_graph([node], "g", graph_inputs, [out], inits)
    opsets = [helper.make_opsetid("", OPSET)]
    if domain:
        opsets.append(helper.make_opsetid(domain, 1))
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 10
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)[0]


# ---------------------------------------------------------------------------
# docs/semantics.md in numpy (binary32 operations, one rounding each, in the spec's order)

def Q(v, zp, dtype):
    """docs/semantics.md section 2: clamp to [lo - zp, hi - zp] in float (NaN -> lo - zp), rne, + zp."""
    info = np.iinfo(dtype)
    zp = np.asarray(zp, np.int64)
    lo, hi = (info.min - zp).astype(f32), (info.max - zp).astype(f32)
    v = np.asarray(v, f32)
    v = np.where(np.isnan(v), lo, np.minimum(np.maximum(v, lo), hi))
    return (np.rint(v).astype(np.int64) + zp).astype(dtype)


def wrap32(acc):
    return ((np.asarray(acc, np.int64) + 2**31) % 2**32 - 2**31).astype(np.int64)


def fp32_diff(x, zp):
    return (np.asarray(x, np.int64) - np.asarray(zp, np.int64)).astype(f32)


def matmul_acc(a, azp, b, bzp):
    """a (..., M, K), b (..., K, N), numpy broadcasting of the batch dims;
    bzp scalar or a length-N vector (per column). int32, wrapping."""
    return wrap32(np.matmul(np.asarray(a, np.int64) - np.int64(azp), np.asarray(b, np.int64) - np.asarray(bzp, np.int64)))


def spec_matmul(a, azp, as_, b, bzp, bs, os_, ozp, out_t):
    mult = (f32(as_) * np.asarray(bs, f32)) / f32(os_)
    return Q(matmul_acc(a, azp, b, bzp).astype(f32) * mult, ozp, out_t)


def conv_acc(x, xzp, w, wzp, bias, strides, dil, pads, group):
    """x NCHW, w {Cout, Cin/G, kH, kW}; pads [top, left, bottom, right]; padded
    taps hold xzp; wzp scalar or per output channel. int32, wrapping."""
    n, cin, h, wd = x.shape
    cout, cg, kh, kw = w.shape
    xp = np.full((n, cin, h + pads[0] + pads[2], wd + pads[1] + pads[3]), np.int64(xzp), np.int64)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x
    oh = 1 + (xp.shape[2] - (1 + (kh - 1) * dil[0])) // strides[0]
    ow = 1 + (xp.shape[3] - (1 + (kw - 1) * dil[1])) // strides[1]
    wzp = np.broadcast_to(np.asarray(wzp, np.int64), (cout,))
    wc = np.asarray(w, np.int64) - wzp[:, None, None, None]
    acc = np.zeros((n, cout, oh, ow), np.int64)
    per_group = cout // group
    for oc in range(cout):
        g = oc // per_group
        xs_g = xp[:, g * cg:(g + 1) * cg] - np.int64(xzp)
        for oy in range(oh):
            for ox in range(ow):
                patch = xs_g[:, :, oy * strides[0]:oy * strides[0] + (kh - 1) * dil[0] + 1:dil[0],
                             ox * strides[1]:ox * strides[1] + (kw - 1) * dil[1] + 1:dil[1]]
                acc[:, oc, oy, ox] = (patch * wc[oc]).sum(axis=(1, 2, 3))
    if bias is not None:
        acc += np.asarray(bias, np.int64)[None, :, None, None]
    return wrap32(acc)


def spec_conv(x, xzp, xs, w, wzp, ws, bias, ys, yzp, out_t, strides, dil, pads, group):
    ws = np.broadcast_to(np.asarray(ws, f32), (w.shape[0],))
    mult = (f32(xs) * ws) / f32(ys)
    acc = conv_acc(x, xzp, w, wzp, bias, strides, dil, pads, group)
    return Q(acc.astype(f32) * mult[None, :, None, None], yzp, out_t)


def auto_output(real, ozp, out_t):
    """An output scale (4 significant digits) that maps the real results
    `real` into the output range with at most a few saturated elements; and,
    when `ozp` is None, a zero point that centres them."""
    info = np.iinfo(out_t)
    real = np.asarray(real, np.float64)
    hi_r, lo_r = max(float(real.max()), 0.0), min(float(real.min()), 0.0)
    if ozp is None:
        os_ = max((hi_r - lo_r) / (info.max - info.min), 1e-30) * 1.02
        ozp = int(np.clip(round((info.max + info.min) / 2 - (hi_r + lo_r) / 2 / os_), info.min, info.max))
    else:
        ozp = int(ozp)
        os_ = max(hi_r / max(info.max - ozp, 1), -lo_r / max(ozp - info.min, 1), 1e-30) * 0.98
    return float(f"{os_:.4g}"), out_t(ozp)


def spec_dequantize(x, scale, zp):
    """scale/zp already broadcastable to x; FLOAT16 scale: widen, compute, round once."""
    r = fp32_diff(x, 0 if zp is None else zp) * np.asarray(scale).astype(f32)
    return r.astype(np.asarray(scale).dtype)


def spec_quantize(x, scale, zp, out_t):
    """docs/semantics.md section 11: Q(x / scale, zp) with x and scale widened to binary32 (INT32 x by fp32),
    one binary32 division; scale/zp already broadcastable to x."""
    with np.errstate(all="ignore"):
        v = np.asarray(x).astype(f32) / np.asarray(scale).astype(f32)
    return Q(v, 0 if zp is None else zp, out_t)


def spec_add(a, azp, as_, b, bzp, bs, os_, ozp, out_t):
    va = fp32_diff(a, azp) * f32(as_)
    vb = fp32_diff(b, bzp) * f32(bs)
    return Q((va + vb) / f32(os_), ozp, out_t)


def spec_clip(x, lo, hi):
    """docs/semantics.md section 7 without ScaleBias. Float: a value equal to a bound
    passes unchanged, NaN stays NaN, Min > Max gives Min. Integer: bounds
    truncated toward zero and saturated, exact comparison."""
    x = np.asarray(x)
    if x.dtype.kind == "f":
        lo_t, hi_t = x.dtype.type(f32(lo)), x.dtype.type(f32(hi))
        y = np.where(x > hi_t, hi_t, x)
        return np.where(y < lo_t, lo_t, y).astype(x.dtype)
    info = np.iinfo(x.dtype)

    def bound(v):
        v = float(f32(v))
        if v <= info.min:
            return int(info.min)
        if v >= info.max:
            return int(info.max)
        return int(v)  # truncation toward zero
    lo_i, hi_i = bound(lo), bound(hi)
    y = [hi_i if int(v) > hi_i else int(v) for v in x.ravel()]
    y = [lo_i if v < lo_i else v for v in y]
    return np.array(y, dtype=x.dtype).reshape(x.shape)


def mismatches(got, want, tolerance):
    """Elementwise disagreement mask: tolerance 0 compares bits (NaN matches NaN)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        raise RuntimeError(f"ORT gave {got.dtype}{got.shape}, docs/semantics.md {want.dtype}{want.shape}")
    if got.dtype.kind == "f":
        nan = np.isnan(got) & np.isnan(want)
        if tolerance == 0:
            bits = np.uint16 if got.dtype == f16 else np.uint32
            return ~nan & (got.view(bits) != want.view(bits))
        return ~nan & ~(np.abs(got.astype(np.float64) - want.astype(np.float64)) <= tolerance)
    return np.abs(got.astype(np.int64) - want.astype(np.int64)) > tolerance


# ---------------------------------------------------------------------------
# Case files

def json_value(v):
    if isinstance(v, (np.floating, float)):
        v = float(v)
        if np.isnan(v):
            return "NaN"
        if np.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    return int(v)


def packed_strides(shape):
    s, r = [], 1
    for d in reversed(shape):
        s.insert(0, r)
        r *= d
    return s


def broadcast_layout(arr, sizes):
    """DML sizes/strides for `arr` broadcast (numpy rules) to `sizes`: the
    buffer is `arr` itself; dimensions it lacks or has as 1 get stride 0.
    Returns strides (None when the layout is packed)."""
    shape = (1,) * (len(sizes) - arr.ndim) + tuple(arr.shape)
    st = packed_strides(shape)
    strides = [0 if d == 1 else s for d, s in zip(shape, st)]
    return None if list(shape) == list(sizes) else strides


class Case:
    def __init__(self, op_dir, name, operator, description):
        self.dir = Path(op_dir) / name
        self.rel = f"{op_dir}/{name}"
        self.operator = operator
        self.description = description
        self.tensors = {}
        self.files = {}
        self.params = {}
        self.expected = None

    def tensor(self, member, dtype, sizes, buf=None, strides=None):
        e = {"type": DML_TYPE[np.dtype(dtype)], "sizes": [int(s) for s in sizes]}
        if strides is not None:
            e["strides"] = [int(s) for s in strides]
        if buf is not None:
            buf = np.ascontiguousarray(np.asarray(buf, dtype=dtype))
            if buf.size <= INLINE_MAX:
                e["values"] = [json_value(v) for v in buf.ravel()]
            else:
                fname = member.replace("Tensor", "").lower() + ".npy"
                self.files[fname] = buf
                e["data"] = fname
        self.tensors[member] = e
        return self

    def expect(self, arr, tolerance):
        self.files["expected.npy"] = np.ascontiguousarray(arr)
        self.expected = {"data": "expected.npy", "tolerance": tolerance}
        return self

    def write(self, root):
        d = root / self.dir
        d.mkdir(parents=True)
        for fname, arr in self.files.items():
            np.save(d / fname, arr, allow_pickle=False)
        lines = ["{", f'  "operator": {json.dumps(self.operator)},',
                 f'  "description": {json.dumps(self.description)},', '  "tensors": {']
        items = list(self.tensors.items())
        for i, (m, e) in enumerate(items):
            lines.append(f"    {json.dumps(m)}: {json.dumps(e)}" + ("," if i + 1 < len(items) else ""))
        lines.append("  },")
        lines.append(f'  "params": {json.dumps(self.params)},')
        lines.append(f'  "expected": {json.dumps(self.expected)}')
        lines.append("}")
        (d / "case.json").write_text("\n".join(lines) + "\n")


class Generator:
    def __init__(self):
        self.cases = []
        self.disagreements = []  # (case, message)
        self.probes = []  # (case, message): compared, never written
        self.add_stats = [0, 0]  # elements, elements differing by 1

    def accept(self, case, ort_out, spec_out, tolerance, probe=False):
        """Writes `case` with ONNX Runtime's output if it agrees with docs/semantics.md
        within `tolerance` (0: identical bits, any NaN matching any NaN);
        else records the disagreement. A probe is only compared and reported
        (known or machine-dependent ORT behaviour, see tools/README.md)."""
        bad = mismatches(ort_out, spec_out, tolerance)
        if probe:
            first = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.any() else None
            self.probes.append((case.rel, case.description + ": " + (
                "agrees with docs/semantics.md" if first is None else
                f"{int(bad.sum())} of {bad.size} elements differ; first at {list(first)}: ORT {ort_out[first]!r}"
                f" vs docs/semantics.md {spec_out[first]!r}")))
            return
        if tolerance:
            self.add_stats[0] += ort_out.size
            self.add_stats[1] += int(np.count_nonzero(ort_out != spec_out))
        if bad.any():
            first = tuple(int(i) for i in np.argwhere(bad)[0])
            self.disagreements.append((case.rel, f"{int(bad.sum())} of {bad.size} elements differ (tolerance "
                                       f"{tolerance}); first at {list(first)}: ORT {ort_out[first]!r} vs docs/semantics.md "
                                       f"{spec_out[first]!r}"))
            return
        if any(c.rel == case.rel for c in self.cases):
            raise RuntimeError(f"duplicate case {case.rel}")
        case.expect(ort_out, tolerance)
        self.cases.append(case)


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def rand(rng, dtype, shape, lo=None, hi=None):
    info = np.iinfo(dtype)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    return np.asarray(rng.integers(lo, hi, size=shape, endpoint=True, dtype=dtype))


def param_entry(case, member, dtype, value, rank, axis=None):
    """A matmul/conv scale or zero point: per tensor ({1,..,1}) or a vector
    along `axis` of a rank-`rank` tensor."""
    value = np.asarray(value, dtype)
    sizes = [1] * rank
    if value.size > 1:
        sizes[axis] = value.size
    case.tensor(member, dtype, sizes, value.ravel())


# ---------------------------------------------------------------------------
# QLinearMatMul -> QUANTIZED_LINEAR_MATRIX_MULTIPLY

MATMUL_TYPES = [(u8, u8, u8), (u8, i8, u8), (i8, i8, i8)]  # what ORT's CPU kernel implements


def tname(*ts):
    return "".join({u8: "u8", i8: "i8"}[t] for t in ts)


def seven_bit(x):
    """ORT's u8 x s8 kernels on x86 without VNNI (vpmaddubsw) add pairs of raw
    u8*s8 products in saturating int16; with u8 values <= 127 no pair sum can
    exceed 2*127*128 = 32512, so the result is exact on every machine."""
    x = np.asarray(x)
    return x >> 1 if x.max() > 127 else x


SEVEN_BIT_NOTE = " [u8 x i8: input values halved into 0..127, see tools/README.md]"


def matmul_case(g, name, desc, a, azp, as_, b, bzp, bs, os_, ozp, out_t, b_const=True, omit_zero_zp=False,
                probe=False):
    if a.dtype == u8 and b.dtype == i8 and not probe and a.max() > 127:
        a, desc = seven_bit(a), desc + SEVEN_BIT_NOTE
    if os_ is None:  # automatic output scale (and zero point when ozp is None)
        os_, ozp = auto_output(matmul_acc(a, azp, b, bzp) * (float(as_) * np.asarray(bs, np.float64)), ozp, out_t)
    out = run_ort("QLinearMatMul", [(a, False), (f32(as_), True), (a.dtype.type(azp), True), (b, b_const),
                                    (np.asarray(bs, f32), True), (np.asarray(bzp, b.dtype), True),
                                    (f32(os_), True), (out_t(ozp), True)], out_t)
    spec = spec_matmul(a, azp, as_, b, bzp, bs, os_, ozp, out_t)
    sizes = list(out.shape)
    rank = len(sizes)
    c = Case("matmul", name, "QUANTIZED_LINEAR_MATRIX_MULTIPLY", desc)
    c.tensor("ATensor", a.dtype, sizes[:-1] + [a.shape[-1]], a, broadcast_layout(a, sizes[:-1] + [a.shape[-1]]))
    param_entry(c, "AScaleTensor", f32, as_, rank)
    if not (omit_zero_zp and azp == 0):
        param_entry(c, "AZeroPointTensor", a.dtype, azp, rank)
    bsizes = sizes[:-2] + list(b.shape[-2:])
    c.tensor("BTensor", b.dtype, bsizes, b, broadcast_layout(b, bsizes))
    param_entry(c, "BScaleTensor", f32, bs, rank, rank - 1)
    if not (omit_zero_zp and np.all(np.asarray(bzp) == 0)):
        param_entry(c, "BZeroPointTensor", b.dtype, bzp, rank, rank - 1)
    param_entry(c, "OutputScaleTensor", f32, os_, rank)
    if not (omit_zero_zp and ozp == 0):
        param_entry(c, "OutputZeroPointTensor", out_t, ozp, rank)
    c.tensor("OutputTensor", out_t, sizes)
    g.accept(c, out, spec, 0, probe)


def gen_matmul(g):
    for ta, tb, ty in MATMUL_TYPES:
        t = tname(ta, tb, ty)
        r = rng_for("matmul_random_" + t)
        a, b = rand(r, ta, (3, 5)), rand(r, tb, (5, 4))
        matmul_case(g, f"random_{t}_3x5x4", "random data and zero points, per-tensor scales",
                    a, ta(r.integers(np.iinfo(ta).min, np.iinfo(ta).max)), 0.0123, b,
                    tb(r.integers(np.iinfo(tb).min, np.iinfo(tb).max)), 0.0456, None, None, ty)

        r = rng_for("matmul_tails_" + t)
        a, b = rand(r, ta, (17, 33)), rand(r, tb, (33, 9))
        matmul_case(g, f"tails_{t}_17x33x9", "sizes off every SIMD width (M=17, K=33, N=9)",
                    a, ta(7), 0.02, b, tb(3), 0.01, None, None, ty)

        r = rng_for("matmul_k1_" + t)
        matmul_case(g, f"k1_{t}_4x1x3", "K = 1", rand(r, ta, (4, 1)), ta(1), 0.5, rand(r, tb, (1, 3)), tb(2), 0.25,
                    None, None, ty)
        r = rng_for("matmul_1x1x1_" + t)
        matmul_case(g, f"one_{t}_1x1x1", "M = K = N = 1", rand(r, ta, (1, 1)), ta(3), 0.1, rand(r, tb, (1, 1)),
                    tb(4), 0.2, 0.3, ty(5), ty)

        # exact .5 ties: multiplier 0.5 (and 0.25), small integers so that acc * mult hits k + 0.5
        r = rng_for("matmul_ties_" + t)
        lo_a = -4 if ta == i8 else 0
        lo_b = -4 if tb == i8 else 0
        a, b = rand(r, ta, (6, 3), lo_a, 4), rand(r, tb, (3, 7), lo_b, 4)
        ozp = 64 if ty == u8 else 0
        matmul_case(g, f"ties_half_{t}", "multiplier 0.5 * 1 / 1: odd accumulators round half to even",
                    a, ta(0), 0.5, b, tb(0), 1.0, 1.0, ty(ozp), ty)
        matmul_case(g, f"ties_quarter_{t}", "multiplier 0.25 / 0.5: ties at k + 0.5 from acc = 2 mod 4",
                    a, ta(1 if ta == u8 else -1), 0.25, b, tb(0), 1.0, 0.5, ty(ozp), ty)

        # saturation at both ends
        r = rng_for("matmul_saturate_" + t)
        a, b = rand(r, ta, (5, 8)), rand(r, tb, (8, 6))
        ozp = 128 if ty == u8 else 0
        matmul_case(g, f"saturate_{t}", "output scale small enough that most outputs saturate at both ends",
                    a, ta(int(a.mean())), 0.05, b, tb(int(b.mean())), 0.05, 0.01, ty(ozp), ty)

        # extreme zero points
        info_a, info_b, info_y = np.iinfo(ta), np.iinfo(tb), np.iinfo(ty)
        r = rng_for("matmul_zp_ext_" + t)
        a, b = rand(r, ta, (4, 6)), rand(r, tb, (6, 5))
        matmul_case(g, f"zp_max_{t}", "A and output zero points at the type maximum, B's at the minimum "
                    "(results <= 0)", a, ta(info_a.max), 0.03, b, tb(info_b.min), 0.07, None, ty(info_y.max), ty)
        matmul_case(g, f"zp_min_{t}", "all zero points at the type minimum (results >= 0)", a, ta(info_a.min),
                    0.03, b, tb(info_b.min), 0.07, None, ty(info_y.min), ty)

        # per-column B scale and zero point (ORT: 1-D b_scale / b_zero_point of length N)
        r = rng_for("matmul_per_col_" + t)
        a, b = rand(r, ta, (4, 7)), rand(r, tb, (7, 5))
        bs = r.uniform(0.001, 0.05, 5).astype(f32)
        matmul_case(g, f"per_column_scale_{t}", "B scale per column (BScaleTensor {1,N}), per-tensor B zero point",
                    a, ta(5), 0.04, b, tb(2), bs, None, None, ty)
        bzp = rand(r, tb, (5,), -20 if tb == i8 else 100, 20 if tb == i8 else 150)
        matmul_case(g, f"per_column_scale_zp_{t}", "B scale and zero point per column", a, ta(5), 0.04, b, bzp, bs,
                    None, None, ty)

        # batched and broadcast
        r = rng_for("matmul_batch3d_" + t)
        matmul_case(g, f"batch3d_{t}", "{Channel, M, K} x {Channel, K, N}", rand(r, ta, (2, 3, 4)), ta(9), 0.03,
                    rand(r, tb, (2, 4, 5)), tb(1), 0.02, None, None, ty)
        r = rng_for("matmul_batch4d_" + t)
        matmul_case(g, f"batch4d_{t}", "{Batch, Channel, M, K} x {Batch, Channel, K, N}", rand(r, ta, (2, 2, 3, 3)),
                    ta(4), 0.03, rand(r, tb, (2, 2, 3, 2)), tb(6), 0.02, None, None, ty)
        r = rng_for("matmul_bcast_a_" + t)
        matmul_case(g, f"broadcast_a_{t}", "A {M,K} broadcast over B's channels: A strides {0, K, 1}",
                    rand(r, ta, (3, 4)), ta(2), 0.05, rand(r, tb, (3, 4, 2)), tb(0), 0.03, None, None, ty)
        r = rng_for("matmul_bcast_both_" + t)
        matmul_case(g, f"broadcast_both_{t}", "A {2,1,M,K} x B {1,3,K,N}: zero strides on different dimensions",
                    rand(r, ta, (2, 1, 3, 4)), ta(2), 0.05, rand(r, tb, (1, 3, 4, 2)), tb(1), 0.03, None, None, ty)

    r = rng_for("matmul_no_zp")
    matmul_case(g, "no_zero_points_u8u8u8", "all zero points 0 in ORT, omitted in DML (optional tensors)",
                rand(r, u8, (3, 4)), 0, 0.01, rand(r, u8, (4, 3)), 0, 0.02, None, 0, u8, omit_zero_zp=True)
    matmul_case(g, "no_zero_points_i8i8i8", "all zero points 0 in ORT, omitted in DML (optional tensors)",
                rand(r, i8, (3, 4)), 0, 0.01, rand(r, i8, (4, 3)), 0, 0.02, None, 0, i8, omit_zero_zp=True)
    r = rng_for("matmul_b_input")
    matmul_case(g, "b_not_constant_u8i8u8", "B fed at run time (ORT does not prepack it), per-column B params",
                rand(r, u8, (5, 6)), u8(128), 0.02, rand(r, i8, (6, 4)), rand(r, i8, (4,), -3, 3),
                r.uniform(0.01, 0.02, 4).astype(f32), None, None, u8, b_const=False)
    r = rng_for("matmul_big_mult")
    matmul_case(g, "huge_multiplier_u8u8u8", "output scale 1e-30: acc * multiplier is far out of range (~1e28)",
                rand(r, u8, (3, 3)), u8(100), 0.5, rand(r, u8, (3, 3)), u8(100), 0.5, 1e-30, u8(128), u8)
    r = rng_for("matmul_tiny_mult")
    matmul_case(g, "tiny_multiplier_i8i8i8", "multiplier ~1e-7: every output is the zero point (or +-1 from it)",
                rand(r, i8, (3, 3)), 0, 1e-4, rand(r, i8, (3, 3)), 0, 1e-3, 0.5, i8(-3), i8)
    r = rng_for("matmul_inf_mult")
    matmul_case(g, "infinite_multiplier_u8u8u8", "AScale*BScale overflows to inf; acc 0 gives inf*0 = NaN",
                np.array([[100, 101], [100, 99]], u8), u8(100), 1e20, np.array([[5, 7], [6, 5]], u8), u8(5), 1e20,
                1.0, u8(128), u8)
    r = rng_for("matmul_probe_u8i8")
    matmul_case(g, "probe_full_range_u8i8u8", "u8 x i8 with A over the full 0..255 range (int16 pair saturation in "
                "ORT's AVX2 kernel without VNNI)", rand(r, u8, (8, 32)), u8(128), 0.02, rand(r, i8, (32, 8)), i8(0),
                0.02, 0.5, u8(128), u8, probe=True)


# ---------------------------------------------------------------------------
# MatMulInteger -> MATRIX_MULTIPLY_INTEGER

def spec_matmul_integer(a, azp, b, bzp):
    """docs/semantics.md section 12: sum_k (A - AZP[m]) (B - BZP[n]) wrapped to int32; azp scalar or
    per row (length M), bzp scalar or per column (length N); numpy broadcasting of the batch dims."""
    azp = np.asarray(azp, np.int64)
    azp = azp.reshape(-1, 1) if azp.ndim else azp
    return wrap32(np.matmul(np.asarray(a, np.int64) - azp, np.asarray(b, np.int64) - np.asarray(bzp, np.int64)))


def matmul_integer_case(g, name, desc, a, azp, b, bzp, b_const=False, b_transposed=False, probe=False):
    """ONNX MatMulInteger(a, b, a_zero_point, b_zero_point); a zero point of None is omitted in both."""
    if a.dtype == u8 and b.dtype == i8 and not probe and a.max() > 127:
        a, desc = seven_bit(a), desc + SEVEN_BIT_NOTE
    try:
        out = run_ort("MatMulInteger", [(a, False), (b, b_const),
                                        (None if azp is None else np.asarray(azp, a.dtype), True),
                                        (None if bzp is None else np.asarray(bzp, b.dtype), True)], i32)
    except Exception as e:  # a form ONNX Runtime's CPU kernel does not take: reported, not written
        g.probes.append((f"matmul_integer/{name}", f"{desc}: ONNX Runtime refuses it ({str(e).splitlines()[0][:160]})"))
        return
    spec = spec_matmul_integer(a, 0 if azp is None else azp, b, 0 if bzp is None else bzp).astype(i32)
    sizes = list(out.shape)
    rank = len(sizes)
    c = Case("matmul_integer", name, "MATRIX_MULTIPLY_INTEGER", desc)
    asizes = sizes[:-1] + [a.shape[-1]]
    c.tensor("ATensor", a.dtype, asizes, a, broadcast_layout(a, asizes))
    if azp is not None:
        param_entry(c, "AZeroPointTensor", a.dtype, azp, rank, rank - 2)
    bsizes = sizes[:-2] + list(b.shape[-2:])
    if b_transposed:  # B {K, N} stored column-major: the buffer is B^T, strides {1, K}
        assert b.ndim == 2 and rank == 2
        c.tensor("BTensor", b.dtype, bsizes, np.ascontiguousarray(b.T), [1, b.shape[0]])
    else:
        c.tensor("BTensor", b.dtype, bsizes, b, broadcast_layout(b, bsizes))
    if bzp is not None:
        param_entry(c, "BZeroPointTensor", b.dtype, bzp, rank, rank - 1)
    c.tensor("OutputTensor", i32, sizes)
    g.accept(c, out, spec, 0, probe)


def gen_matmul_integer(g):
    for ta, tb in [(u8, u8), (u8, i8), (i8, u8), (i8, i8)]:
        t = tname(ta, tb)
        lo_a, hi_a, lo_b, hi_b = np.iinfo(ta).min, np.iinfo(ta).max, np.iinfo(tb).min, np.iinfo(tb).max
        r = rng_for("matmul_integer_random_" + t)
        a, b = rand(r, ta, (3, 5)), rand(r, tb, (5, 4))
        matmul_integer_case(g, f"random_{t}_3x5x4", "random data, per-tensor zero points", a,
                            ta(r.integers(lo_a, hi_a)), b, tb(r.integers(lo_b, hi_b)))
        matmul_integer_case(g, f"no_zero_points_{t}", "random data, both zero points omitted",
                            rand(r, ta, (4, 7)), None, rand(r, tb, (7, 3)), None)
        r = rng_for("matmul_integer_extremes_" + t)
        for za, zb in [(lo_a, hi_b), (hi_a, lo_b)]:
            matmul_integer_case(g, f"zp_extremes_{t}_{za}_{zb}", f"zero points {za}, {zb}: differences up to 255",
                                rand(r, ta, (6, 9)), ta(za), rand(r, tb, (9, 5)), tb(zb))
        r = rng_for("matmul_integer_per_column_" + t)
        matmul_integer_case(g, f"per_column_{t}", "per-column b_zero_point [N], B constant",
                            rand(r, ta, (5, 16)), ta(r.integers(lo_a, hi_a)), rand(r, tb, (16, 7)),
                            rand(r, tb, (7,)), b_const=True)
        matmul_integer_case(g, f"per_row_{t}", "per-row a_zero_point [M] (onnxruntime#27897: the CPU kernel may "
                            "refuse it)", rand(r, ta, (4, 6)), rand(r, ta, (4,)), rand(r, tb, (6, 3)),
                            tb(r.integers(lo_b, hi_b)))
        r = rng_for("matmul_integer_batch_" + t)
        matmul_integer_case(g, f"batch_broadcast_{t}", "A (2,3,M,K) x B (K,N): B shared through zero strides",
                            rand(r, ta, (2, 3, 4, 5)), ta(r.integers(lo_a, hi_a)), rand(r, tb, (5, 6)),
                            rand(r, tb, (6,)))
        matmul_integer_case(g, f"batch3_{t}", "A (3,M,K) x B (3,K,N)", rand(r, ta, (3, 2, 17)),
                            ta(r.integers(lo_a, hi_a)), rand(r, tb, (3, 17, 9)), tb(r.integers(lo_b, hi_b)))
        r = rng_for("matmul_integer_transposed_" + t)
        matmul_integer_case(g, f"b_transposed_{t}", "B stored transposed (strides {1, K})", rand(r, ta, (5, 33)),
                            ta(r.integers(lo_a, hi_a)), rand(r, tb, (33, 12)), rand(r, tb, (12,)), b_transposed=True)
        r = rng_for("matmul_integer_gemv_" + t)
        matmul_integer_case(g, f"gemv_{t}", "M 1, K 300, N 40", rand(r, ta, (1, 300)), ta(r.integers(lo_a, hi_a)),
                            rand(r, tb, (300, 40)), tb(r.integers(lo_b, hi_b)), b_const=True)
    # int32 wrap: K extreme products; where ONNX Runtime's answer is not the wrapped sum, the case is
    # reported (not written) and docs/semantics.md's wrap is kept.
    for k, ta, tb, za, zb, va, vb in [(33026, u8, u8, 0, 0, 255, 255), (66052, u8, u8, 255, 0, 0, 255),
                                      (140000, i8, i8, 0, 0, -128, 127)]:
        t = tname(ta, tb)
        matmul_integer_case(g, f"wrap_K{k}_{t}", f"int32 wrap: K {k} products of ({va} - {za}) * ({vb} - {zb})",
                            np.full((1, k), va, ta), ta(za), np.full((k, 1), vb, tb), tb(zb))


# ---------------------------------------------------------------------------
# com.microsoft MatMulIntegerToFloat -> MATRIX_MULTIPLY_INTEGER_TO_FLOAT (exact profile)

def spec_matmul_integer_to_float(a, azp, as_, b, bzp, bs, bias):
    """docs/semantics.md section 16, exact profile: fp32(acc) * fp32(AScale * BScale) (+ Bias), acc the
    wrapped int32 sum; as_ per tensor, bs and bzp per tensor or per column (length N)."""
    acc = spec_matmul_integer(a, azp, b, bzp).astype(f32)
    y = (acc * (f32(as_) * np.asarray(bs, f32)).astype(f32)).astype(f32)
    return y if bias is None else (y + np.asarray(bias, f32)).astype(f32)


def matmul_integer_to_float_case(g, name, desc, a, azp, as_, b, bzp, bs, bias, b_const=False):
    """ORT MatMulIntegerToFloat(a, b, a_scale, b_scale, a_zero_point, b_zero_point, bias); a zero point or
    bias of None is omitted in both. ORT takes a per-tensor a_scale; bias is 1-D (N), broadcast over rows
    (qdml: the output's sizes with zero strides)."""
    if a.dtype == u8 and b.dtype == i8 and a.max() > 127:
        a, desc = seven_bit(a), desc + SEVEN_BIT_NOTE
    inputs = [(a, False), (b, b_const), (f32(as_).reshape(1), True), (np.asarray(bs, f32).reshape(-1), True),
              (None if azp is None else np.asarray(azp, a.dtype).reshape(1), True),
              (None if bzp is None else np.asarray(bzp, b.dtype).reshape(-1), True),
              (None if bias is None else np.asarray(bias, f32), True)]
    try:
        out = run_ort("MatMulIntegerToFloat", inputs, f32, domain="com.microsoft")
    except Exception as e:  # a form ONNX Runtime's CPU kernel does not take: reported, not written
        g.probes.append((f"matmul_integer_to_float/{name}", f"{desc}: ONNX Runtime refuses it "
                         f"({str(e).splitlines()[0][:160]})"))
        return
    spec = spec_matmul_integer_to_float(a, 0 if azp is None else azp, as_, b, 0 if bzp is None else bzp, bs, bias)
    sizes = list(out.shape)
    rank = len(sizes)
    c = Case("matmul_integer_to_float", name, "MATRIX_MULTIPLY_INTEGER_TO_FLOAT", desc)
    asizes = sizes[:-1] + [a.shape[-1]]
    c.tensor("ATensor", a.dtype, asizes, a, broadcast_layout(a, asizes))
    param_entry(c, "AScaleTensor", f32, as_, rank)
    if azp is not None:
        param_entry(c, "AZeroPointTensor", a.dtype, azp, rank)
    bsizes = sizes[:-2] + list(b.shape[-2:])
    c.tensor("BTensor", b.dtype, bsizes, b, broadcast_layout(b, bsizes))
    param_entry(c, "BScaleTensor", f32, bs, rank, rank - 1)
    if bzp is not None:
        # DirectML's profile wants a zero point shaped like its scale; ORT's per-tensor b_zero_point
        # with a per-column b_scale is written per column (the same value N times).
        bzp_v = np.asarray(bzp, b.dtype)
        if bzp_v.size == 1 and np.asarray(bs).size > 1:
            bzp_v = np.full(np.asarray(bs).size, bzp_v.ravel()[0], b.dtype)
        param_entry(c, "BZeroPointTensor", b.dtype, bzp_v, rank, rank - 1)
    if bias is not None:
        bv = np.asarray(bias, f32)
        c.tensor("BiasTensor", f32, sizes, bv, [0] * (rank - 1) + [1])
    c.tensor("OutputTensor", f32, sizes)
    g.accept(c, out, spec, 0)
    if c.expected is not None:
        c.expected["fidelity"] = "exact"


def long_scales(r, n):
    """Scales with random 24-bit mantissas (the candidate float orders round differently)."""
    return (r.uniform(1, 2, n) * 2.0 ** r.integers(-9, 2, n)).astype(f32)


def gen_matmul_integer_to_float(g):
    for ta, tb in [(u8, u8), (u8, i8), (i8, i8)]:  # ORT registers no INT8 A with UINT8 B
        t = tname(ta, tb)
        lo_a, hi_a, lo_b, hi_b = np.iinfo(ta).min, np.iinfo(ta).max, np.iinfo(tb).min, np.iinfo(tb).max
        for k, (M, K, N) in enumerate([(3, 5, 4), (7, 33, 9), (16, 64, 16), (1, 300, 40), (12, 128, 24)]):
            r = rng_for(f"mmitf_random_{t}_{k}")
            per_col = k % 2 == 1
            bs = long_scales(r, N if per_col else 1)
            bzp = rand(r, tb, (N,)) if per_col else tb(r.integers(lo_b, hi_b))
            matmul_integer_to_float_case(
                g, f"random_{t}_{M}x{K}x{N}", f"random data, long-mantissa scales, b_scale and b_zero_point "
                f"{'per column' if per_col else 'per tensor'}, a bias", rand(r, ta, (M, K)), ta(r.integers(lo_a, hi_a)),
                long_scales(r, 1)[0], rand(r, tb, (K, N)), bzp, bs, (r.standard_normal(N) * 50).astype(f32),
                b_const=per_col)
        r = rng_for("mmitf_no_zp_" + t)
        matmul_integer_to_float_case(g, f"no_zero_points_no_bias_{t}", "both zero points and the bias omitted",
                                     rand(r, ta, (4, 7)), None, long_scales(r, 1)[0], rand(r, tb, (7, 3)), None,
                                     long_scales(r, 1), None)
        r = rng_for("mmitf_extremes_" + t)
        for za, zb in [(lo_a, hi_b), (hi_a, lo_b)]:
            matmul_integer_to_float_case(g, f"zp_extremes_{t}_{za}_{zb}", f"zero points {za}, {zb}",
                                         rand(r, ta, (6, 9)), ta(za), long_scales(r, 1)[0], rand(r, tb, (9, 5)),
                                         tb(zb), long_scales(r, 1), (r.standard_normal(5)).astype(f32))
        r = rng_for("mmitf_batch_" + t)
        matmul_integer_to_float_case(g, f"batch_broadcast_{t}", "A (2,3,M,K) x B (K,N): B shared through zero strides",
                                     rand(r, ta, (2, 3, 4, 5)), ta(r.integers(lo_a, hi_a)), long_scales(r, 1)[0],
                                     rand(r, tb, (5, 6)), rand(r, tb, (6,)), long_scales(r, 6),
                                     (r.standard_normal(6) * 3).astype(f32), b_const=True)
    # int32 wrap: ORT's sum wraps as the exact profile's does.
    k = 33026
    matmul_integer_to_float_case(g, f"wrap_K{k}_u8u8", f"int32 wrap: K {k} products of 255 * 255",
                                 np.full((1, k), 255, u8), u8(0), f32(0.5), np.full((k, 1), 255, u8), u8(0),
                                 np.array([0.25], f32), None)


# ---------------------------------------------------------------------------
# ConvInteger -> CONVOLUTION_INTEGER

def conv_integer_case(g, name, desc, x, xzp, w, wzp, strides=(1, 1), dil=(1, 1), pads=(0, 0, 0, 0), group=1,
                      probe=False):
    """ONNX ConvInteger(x, w, x_zero_point, w_zero_point); a zero point of None is omitted in both.
    x and w of 3 dimensions are a convolution with one spatial dimension (strides, dil of 1 entry,
    pads [left, right])."""
    one_d = x.ndim == 3
    attrs = {"strides": list(strides), "dilations": list(dil), "pads": list(pads), "group": group,
             "kernel_shape": list(w.shape[2:])}
    try:
        out = run_ort("ConvInteger", [(x, False), (w, True),
                                      (None if xzp is None else np.asarray(xzp, x.dtype), True),
                                      (None if wzp is None else np.asarray(wzp, w.dtype), True)], i32, attrs)
    except Exception as e:  # a type mix ONNX Runtime's CPU kernel does not take: reported, not written
        g.probes.append((f"conv_integer/{name}", f"{desc}: ONNX Runtime refuses it ({str(e).splitlines()[0][:160]})"))
        return
    # docs/semantics.md section 14 through the two-dimension form ({N, C, 1, W} for one spatial dimension)
    x4, w4 = (x[:, :, None, :], w[:, :, None, :]) if one_d else (x, w)
    st4, dl4 = ((1, strides[0]), (1, dil[0])) if one_d else (strides, dil)
    pd4 = (0, pads[0], 0, pads[1]) if one_d else pads
    spec = conv_acc(x4, 0 if xzp is None else xzp, w4, 0 if wzp is None else wzp, None, st4, dl4, pd4, group)
    spec = (spec[:, :, 0, :] if one_d else spec).astype(i32)
    rank = x.ndim
    c = Case("conv_integer", name, "CONVOLUTION_INTEGER", desc)
    c.tensor("InputTensor", x.dtype, x.shape, x)
    if xzp is not None:
        param_entry(c, "InputZeroPointTensor", x.dtype, xzp, rank)
    c.tensor("FilterTensor", w.dtype, w.shape, w)
    if wzp is not None:
        param_entry(c, "FilterZeroPointTensor", w.dtype, wzp, rank, 1)
    c.tensor("OutputTensor", i32, out.shape)
    n = rank - 2
    c.params = {"Strides": list(strides), "Dilations": list(dil), "StartPadding": list(pads[:n]),
                "EndPadding": list(pads[n:]), "GroupCount": group}
    g.accept(c, out, spec, 0, probe)


def gen_conv_integer(g):
    for tx, tw in [(u8, u8), (u8, i8), (i8, u8), (i8, i8)]:
        t = tname(tx, tw)
        lo_x, hi_x, lo_w, hi_w = np.iinfo(tx).min, np.iinfo(tx).max, np.iinfo(tw).min, np.iinfo(tw).max
        r = rng_for("conv_integer_basic_" + t)
        conv_integer_case(g, f"basic3x3_{t}", "N=1, Cin=2, Cout=3, 5x5 input, 3x3 kernel, per-tensor zero points",
                          rand(r, tx, (1, 2, 5, 5)), tx(r.integers(lo_x, hi_x)), rand(r, tw, (3, 2, 3, 3)),
                          tw(r.integers(lo_w, hi_w)))
        conv_integer_case(g, f"no_zero_points_{t}", "both zero points omitted", rand(r, tx, (1, 3, 4, 4)), None,
                          rand(r, tw, (2, 3, 2, 2)), None)
        r = rng_for("conv_integer_pads_" + t)
        conv_integer_case(g, f"asym_pads_strides_dilations_{t}", "pads top 1 left 0 bottom 2 right 1, strides {2,1}, "
                          "dilations {1,2}; padded taps = input zero point", rand(r, tx, (2, 2, 6, 7)), tx(hi_x - 5),
                          rand(r, tw, (2, 2, 3, 2)), tw(lo_w + 1), strides=(2, 1), dil=(1, 2), pads=(1, 0, 2, 1))
        r = rng_for("conv_integer_groups_" + t)
        conv_integer_case(g, f"groups2_{t}", "GroupCount 2, padding 1", rand(r, tx, (1, 4, 4, 4)),
                          tx(r.integers(lo_x, hi_x)), rand(r, tw, (6, 2, 2, 2)), tw(r.integers(lo_w, hi_w)),
                          pads=(1, 1, 1, 1), group=2)
        if t == "u8u8":  # ONNX Runtime's CPU ConvInteger takes a per-tensor w_zero_point only: reported
            conv_integer_case(g, f"per_channel_{t}", "per-output-channel filter zero points", rand(r, tx, (1, 4, 4, 4)),
                              tx(r.integers(lo_x, hi_x)), rand(r, tw, (6, 4, 2, 2)), rand(r, tw, (6,)))
        r = rng_for("conv_integer_dw_" + t)
        conv_integer_case(g, f"depthwise_{t}", "depthwise: Cin=Cout=GroupCount=5, 3x3, padding 1",
                          rand(r, tx, (1, 5, 4, 5)), tx(r.integers(lo_x, hi_x)), rand(r, tw, (5, 1, 3, 3)),
                          tw(r.integers(lo_w, hi_w)), pads=(1, 1, 1, 1), group=5)
        r = rng_for("conv_integer_ext_" + t)
        for zx, zw in [(lo_x, hi_w), (hi_x, lo_w)]:
            conv_integer_case(g, f"zp_extremes_{t}_{zx}_{zw}", f"zero points {zx}, {zw}: differences up to 255, "
                              "padding 1", rand(r, tx, (1, 3, 5, 5)), tx(zx), rand(r, tw, (4, 3, 3, 3)), tw(zw),
                              pads=(1, 1, 1, 1))
        r = rng_for("conv_integer_1d_" + t)
        conv_integer_case(g, f"one_d_{t}", "one spatial dimension: N=2, Cin=3, W=11, Cout=4, kW=3, stride 2, "
                          "dilation 1, pads 1, 2", rand(r, tx, (2, 3, 11)),
                          tx(r.integers(lo_x, hi_x)), rand(r, tw, (4, 3, 3)), tw(r.integers(lo_w, hi_w)), strides=(2,),
                          dil=(1,), pads=(1, 2))
        conv_integer_case(g, f"one_d_dilated_groups_{t}", "one spatial dimension: GroupCount 2, dilation 3",
                          rand(r, tx, (1, 4, 16)), tx(r.integers(lo_x, hi_x)), rand(r, tw, (2, 2, 4)),
                          tw(r.integers(lo_w, hi_w)), strides=(1,), dil=(3,), pads=(0, 0), group=2)
    # int32 wrap: 33026 taps of 255 * 255
    conv_integer_case(g, "wrap_K33026_u8u8", "int32 wrap: Cin 33026, 1x1: (255 - 0) * (255 - 0) per tap",
                      np.full((1, 33026, 1, 1), 255, u8), u8(0), np.full((1, 33026, 1, 1), 255, u8), u8(0))


# ---------------------------------------------------------------------------
# QLinearConv -> QUANTIZED_LINEAR_CONVOLUTION

CONV_TYPES = MATMUL_TYPES  # x, w, y: ORT implements u8/u8, u8/i8 (y u8) and i8/i8 (y i8)


def conv_case(g, name, desc, x, xzp, xs, w, wzp, ws, bias, ys, yzp, strides=(1, 1), dil=(1, 1), pads=(0, 0, 0, 0),
              group=1, w_const=True, omit_zp=False, probe=False):
    out_t = x.dtype.type
    if x.dtype == u8 and w.dtype == i8 and not probe and (x.max() > 127 or (xzp > 127 and any(pads))):
        # padded taps hold the input zero point, so it must be 7-bit too
        x, xzp, desc = seven_bit(x), (xzp >> 1 if any(pads) else xzp), desc + SEVEN_BIT_NOTE
    if ys is None:  # automatic output scale (and zero point when yzp is None)
        real = conv_acc(x, xzp, w, wzp, bias, strides, dil, pads, group) * float(xs) * \
            np.broadcast_to(np.asarray(ws, np.float64), (w.shape[0],))[None, :, None, None]
        ys, yzp = auto_output(real, yzp, out_t)
    attrs = {"strides": list(strides), "dilations": list(dil), "pads": list(pads), "group": group,
             "kernel_shape": list(w.shape[2:])}
    wzp_a = np.asarray(wzp, w.dtype)
    ws_a = np.asarray(ws, f32)
    out = run_ort("QLinearConv", [(x, False), (f32(xs), True), (out_t(xzp), True), (w, w_const), (ws_a, True),
                                  (wzp_a, True), (f32(ys), True), (out_t(yzp), True),
                                  (None if bias is None else np.asarray(bias, i32), True)], out_t, attrs)
    spec = spec_conv(x, xzp, xs, w, wzp, ws, bias, ys, yzp, out_t, strides, dil, pads, group)
    c = Case("conv", name, "QUANTIZED_LINEAR_CONVOLUTION", desc)
    c.tensor("InputTensor", x.dtype, x.shape, x)
    param_entry(c, "InputScaleTensor", f32, xs, 4)
    if not (omit_zp and xzp == 0):
        param_entry(c, "InputZeroPointTensor", x.dtype, xzp, 4)
    c.tensor("FilterTensor", w.dtype, w.shape, w)
    param_entry(c, "FilterScaleTensor", f32, ws_a, 4, 1)
    if not (omit_zp and np.all(wzp_a == 0)):
        param_entry(c, "FilterZeroPointTensor", w.dtype, wzp_a, 4, 1)
    if bias is not None:
        c.tensor("BiasTensor", i32, [1, w.shape[0], 1, 1], np.asarray(bias, i32))
    param_entry(c, "OutputScaleTensor", f32, ys, 4)
    if not (omit_zp and yzp == 0):
        param_entry(c, "OutputZeroPointTensor", out_t, yzp, 4)
    c.tensor("OutputTensor", out_t, out.shape)
    c.params = {"Strides": list(strides), "Dilations": list(dil), "StartPadding": [pads[0], pads[1]],
                "EndPadding": [pads[2], pads[3]], "GroupCount": group}
    g.accept(c, out, spec, 0, probe)


def gen_conv(g):
    for tx, tw, _ in CONV_TYPES:
        t = tname(tx, tw)
        r = rng_for("conv_basic_" + t)
        cout = 3
        conv_case(g, f"basic3x3_{t}", "N=1, Cin=2, Cout=3, 5x5 input, 3x3 kernel, bias, per-tensor params",
                  rand(r, tx, (1, 2, 5, 5)), tx(r.integers(0, 50)), 0.05, rand(r, tw, (cout, 2, 3, 3)), tw(0), 0.02,
                  r.integers(-500, 500, cout), None, None)
        r = rng_for("conv_pads_" + t)
        conv_case(g, f"asym_pads_strides_dilations_{t}",
                  "pads top 1 left 0 bottom 2 right 1, strides {2,1}, dilations {1,2}; padded taps = input zero point",
                  rand(r, tx, (1, 2, 6, 7)), tx(np.iinfo(tx).max - 5), 0.03, rand(r, tw, (2, 2, 3, 2)), tw(1), 0.04,
                  r.integers(-300, 300, 2), None, None, strides=(2, 1), dil=(1, 2), pads=(1, 0, 2, 1))
        r = rng_for("conv_groups_" + t)
        conv_case(g, f"groups2_{t}", "GroupCount 2: Cin=4, Cout=6, filter {6,2,2,2}, padding 1",
                  rand(r, tx, (1, 4, 4, 4)), tx(4), 0.05, rand(r, tw, (6, 2, 2, 2)), tw(2), 0.03,
                  r.integers(-200, 200, 6), None, None, pads=(1, 1, 1, 1), group=2)
        r = rng_for("conv_dw_" + t)
        conv_case(g, f"depthwise_{t}", "depthwise: Cin=Cout=GroupCount=5, 3x3, padding 1, stride 1",
                  rand(r, tx, (1, 5, 4, 5)), tx(8), 0.05, rand(r, tw, (5, 1, 3, 3)), tw(0), 0.03,
                  r.integers(-200, 200, 5), None, None, pads=(1, 1, 1, 1), group=5)
        r = rng_for("conv_dwm_" + t)
        conv_case(g, f"depthwise_multiplier2_{t}", "GroupCount 3 with 2 output channels per group (Cout=6), stride 2",
                  rand(r, tx, (1, 3, 5, 5)), tx(2), 0.05, rand(r, tw, (6, 1, 3, 3)), tw(0), 0.03,
                  r.integers(-200, 200, 6), None, None, strides=(2, 2), pads=(1, 1, 1, 1), group=3)
        r = rng_for("conv_batch_" + t)
        conv_case(g, f"batch2_1x1_{t}", "N=2, 1x1 kernel (a per-pixel matmul), no bias",
                  rand(r, tx, (2, 3, 3, 2)), tx(1), 0.05, rand(r, tw, (4, 3, 1, 1)), tw(3), 0.03, None, None, None)
        r = rng_for("conv_full_" + t)
        conv_case(g, f"kernel_covers_input_{t}", "kernel as large as the input: one output pixel",
                  rand(r, tx, (1, 2, 3, 4)), tx(6), 0.05, rand(r, tw, (3, 2, 3, 4)), tw(0), 0.01,
                  r.integers(-1000, 1000, 3), None, None)
        r = rng_for("conv_1x1in_" + t)
        conv_case(g, f"input_1x1_padded_{t}", "1x1 input, 3x3 kernel, padding 1: only the centre tap is real",
                  rand(r, tx, (1, 2, 1, 1)), tx(5), 0.05, rand(r, tw, (2, 2, 3, 3)), tw(1), 0.03, [7, -7], None,
                  None, pads=(1, 1, 1, 1))
        r = rng_for("conv_rect_" + t)
        conv_case(g, f"rect_kernel_stride3_{t}", "2x3 kernel, strides {3,2} larger than the kernel height",
                  rand(r, tx, (1, 2, 7, 8)), tx(3), 0.05, rand(r, tw, (2, 2, 2, 3)), tw(0), 0.02,
                  r.integers(-100, 100, 2), None, None, strides=(3, 2))
        # ties: multiplier 0.5 with small values
        r = rng_for("conv_ties_" + t)
        lo = -3 if tx == i8 else 0
        lw = -3 if tw == i8 else 0
        conv_case(g, f"ties_half_{t}", "multiplier 0.5 * 1 / 1 with small values: exact .5 ties round to even",
                  rand(r, tx, (1, 2, 4, 4), lo, 3), tx(0), 0.5, rand(r, tw, (3, 2, 2, 2), lw, 3), tw(0), 1.0,
                  [0, 1, -1], 1.0, tx(0 if tx == i8 else 40))
        r = rng_for("conv_sat_" + t)
        conv_case(g, f"saturate_bias_{t}", "large positive and negative biases: saturation at both ends",
                  rand(r, tx, (1, 2, 3, 3)), tx(1), 0.05, rand(r, tw, (4, 2, 2, 2)), tw(128 if tw == u8 else 0), 0.05,
                  [1000000, -1000000, 3000, -3000], 0.05, tx(0 if tx == i8 else 128))
        r = rng_for("conv_zpext_" + t)
        conv_case(g, f"zp_extremes_padded_{t}", "input and filter zero points at the type maximum, output at "
                  "the minimum, with padding", rand(r, tx, (1, 2, 4, 4)), tx(np.iinfo(tx).max), 0.02,
                  rand(r, tw, (2, 2, 3, 3)), tw(np.iinfo(tw).max), 0.02, [5, -5], None, tx(np.iinfo(tx).min),
                  pads=(2, 0, 0, 2))

    # per-channel filter quantization
    for tx, tw, _ in CONV_TYPES:
        t = tname(tx, tw)
        r = rng_for("conv_pc_" + t)
        ws = r.uniform(0.002, 0.05, 4).astype(f32)
        conv_case(g, f"per_channel_scale_{t}", "FilterScaleTensor {1,Cout,1,1}, filter zero point 0",
                  rand(r, tx, (1, 3, 5, 5)), tx(r.integers(0, 30)), 0.04, rand(r, tw, (4, 3, 3, 3)), tw(0), ws,
                  r.integers(-2000, 2000, 4), None, None, pads=(0, 1, 1, 0))
        conv_case(g, f"per_channel_scale_dw_{t}", "depthwise with per-channel filter scale",
                  rand(r, tx, (1, 4, 3, 5)), tx(3), 0.04, rand(r, tw, (4, 1, 3, 3)), tw(0), ws,
                  r.integers(-500, 500, 4), None, None, pads=(1, 1, 1, 1), group=4)
        wzp = rand(r, tw, (4,), 0 if tw == i8 else 120, 5 if tw == i8 else 135)
        conv_case(g, f"per_channel_scale_zp_{t}", "per-channel filter scale and zero point (different per channel)",
                  rand(r, tx, (1, 3, 4, 4)), tx(7), 0.04, rand(r, tw, (4, 3, 2, 2)), wzp, ws,
                  r.integers(-500, 500, 4), None, None)

    r = rng_for("conv_no_zp")
    conv_case(g, "no_zero_points_i8i8", "zero points 0 in ORT, omitted in DML", rand(r, i8, (1, 2, 4, 4)), 0, 0.05,
              rand(r, i8, (2, 2, 3, 3)), 0, 0.05, [1, 2], None, 0, pads=(1, 1, 1, 1), omit_zp=True)
    r = rng_for("conv_w_input")
    conv_case(g, "filter_not_constant_u8i8", "filter fed at run time (ORT does not prepack it)",
              rand(r, u8, (1, 3, 4, 4)), u8(128), 0.05, rand(r, i8, (2, 3, 3, 3)), i8(0),
              np.array([0.01, 0.02], f32), [100, -100], None, None, pads=(1, 1, 1, 1), w_const=False)
    r = rng_for("conv_bias_wrap")
    conv_case(g, "bias_int32_extremes_u8u8", "bias INT32_MAX + 20000 and INT32_MIN - 20000 wrap modulo 2^32: "
              "outputs 126 and 130 (130 and 126 without the wrap)", np.full((1, 1, 2, 2), 200, u8), u8(0), 1.0,
              np.array([200, 0], u8).reshape(2, 1, 1, 1), u8(100), 1.0, [2**31 - 1, -2**31], 1e9, u8(128))
    r = rng_for("conv_probe_u8i8")
    conv_case(g, "probe_full_range_u8i8", "u8 x i8 with the input over the full 0..255 range (int16 pair "
              "saturation in ORT's AVX2 kernel without VNNI)", rand(r, u8, (1, 4, 4, 4)), u8(128), 0.02,
              rand(r, i8, (4, 4, 3, 3)), i8(0), 0.02, None, 0.5, u8(128), pads=(1, 1, 1, 1), probe=True)


# ---------------------------------------------------------------------------
# DequantizeLinear -> ELEMENT_WISE_DEQUANTIZE_LINEAR

def dequant_case(g, name, desc, x, scale, zp=None, axis=None, zp_in_ort=None, probe=False):
    """scale/zp: scalars (per tensor) or 1-D along `axis` (per axis). `zp_in_ort`
    passes a zero point to ORT that DML omits (0)."""
    scale = np.asarray(scale)
    attrs = {} if axis is None else {"axis": axis}
    ort_zp = zp if zp is not None else zp_in_ort
    out_dtype = scale.dtype
    out = run_ort("DequantizeLinear", [(x, False), (scale, True),
                                       (None if ort_zp is None else np.asarray(ort_zp, x.dtype), True)],
                  out_dtype, attrs)
    sizes = list(x.shape)
    if scale.ndim == 0:
        bshape = [1] * x.ndim
    else:
        ax = axis % x.ndim
        bshape = [1] * x.ndim
        bshape[ax] = scale.size
    spec = spec_dequantize(x, scale.reshape(bshape), None if zp is None else np.asarray(zp, np.int64).reshape(bshape))
    c = Case("dequantize", name, "ELEMENT_WISE_DEQUANTIZE_LINEAR", desc)
    c.tensor("InputTensor", x.dtype, sizes, x)
    st = broadcast_layout(np.zeros(bshape), sizes)
    c.tensor("ScaleTensor", scale.dtype, sizes, scale.ravel(), st)
    if zp is not None:
        c.tensor("ZeroPointTensor", x.dtype, sizes, np.asarray(zp, x.dtype).ravel(), st)
    c.tensor("OutputTensor", out_dtype, sizes)
    g.accept(c, out, spec, 0, probe)


def gen_dequantize(g):
    for t in (u8, i8, u16, i16, i32):
        n = np.dtype(t).name
        r = rng_for("dq_random_" + n)
        x = rand(r, t, (3, 5, 7)) if t != i32 else rand(r, t, (3, 5, 7), -2**30, 2**30)
        info = np.iinfo(t)
        zp = t(r.integers(info.min, info.max)) if t != i32 else t(r.integers(-2**30, 2**30))
        dequant_case(g, f"per_tensor_{n}_3x5x7", "random input and zero point, per-tensor scale (strides all 0)",
                     x, f32(r.uniform(0.001, 0.1)), zp)
        dequant_case(g, f"per_tensor_{n}_f16", "FLOAT16 scale and output: computed in binary32, rounded once",
                     x, f16(r.uniform(0.001, 0.1)), zp)
        scale = r.uniform(0.001, 0.1, 5).astype(f32)
        zpv = rand(r, t, (5,)) if t != i32 else rand(r, t, (5,), -2**30, 2**30)
        dequant_case(g, f"per_axis1_{n}", "scale and zero point per axis 1: Sizes {3,5,7}, Strides {0,1,0}",
                     x, scale, zpv, axis=1)
        ext = np.array([info.min, info.max, info.min + 1, info.max - 1, 0, 1], t) if t != i32 else \
            np.array([info.min, info.max, 2**24 + 1, 2**24 + 3, -(2**25) - 3, 123456789], t)
        zp_e = info.min if t != i32 else t(0)
        dequant_case(g, f"extremes_{n}", "type extremes with the zero point at the type minimum"
                     + (" (int32: zero point 0, values that round when converted to binary32)" if t == i32 else ""),
                     ext, f32(0.37), t(zp_e))
    r = rng_for("dq_axis0")
    dequant_case(g, "per_axis0_u8", "per-axis on axis 0 of {4,3,2}", rand(r, u8, (4, 3, 2)),
                 r.uniform(0.01, 1, 4).astype(f32), rand(r, u8, (4,)), axis=0)
    dequant_case(g, "per_axis_last_i8", "per-axis on the last axis (axis -1) of {2,3,6}", rand(r, i8, (2, 3, 6)),
                 r.uniform(0.01, 1, 6).astype(f32), rand(r, i8, (6,)), axis=-1)
    dequant_case(g, "per_axis1_f16_i16", "per-axis FLOAT16 scales", rand(r, i16, (2, 4, 3)),
                 r.uniform(0.001, 0.01, 4).astype(f16), rand(r, i16, (4,)), axis=1)
    dequant_case(g, "no_zero_point_u8", "no zero point (optional from feature level 6.2)", rand(r, u8, (2, 9)),
                 f32(0.125))
    dequant_case(g, "no_zero_point_per_axis_i8", "per-axis scale, no zero point", rand(r, i8, (3, 4)),
                 r.uniform(0.01, 1, 3).astype(f32), axis=0)
    dequant_case(g, "zero_point_zero_omitted_i32", "ORT zero point 0, DML zero point omitted",
                 rand(r, i32, (5,), -2**31, 2**31 - 1), f32(1e-6), zp_in_ort=0)
    dequant_case(g, "rank1_single_u8", "one element", np.array([7], u8), f32(0.1), u8(3))
    dequant_case(g, "rank8_u8", "8 dimensions {1,2,1,3,1,2,1,2}, per axis 5",
                 rand(r, u8, (1, 2, 1, 3, 1, 2, 1, 2)), np.array([0.5, 0.25], f32), np.array([1, 200], u8), axis=5)
    dequant_case(g, "rank5_per_axis_first_i16", "5 dimensions, per axis 0", rand(r, i16, (3, 1, 2, 2, 2)),
                 np.array([1e-3, 2e-3, 3e-3], f32), np.array([-5, 0, 5], i16), axis=0)
    dequant_case(g, "negative_scale_u8", "negative scale: x == zp gives -0.0", np.array([10, 11, 9, 0, 255], u8),
                 f32(-0.75), u8(10))
    dequant_case(g, "random_float_scale_i8", "scales with full 24-bit mantissas: one binary32 rounding per product",
                 rand(r, i8, (4, 8)), r.uniform(0.5, 1, 4).astype(f32) / f32(3), rand(r, i8, (4,)), axis=0)
    dequant_case(g, "tiny_scale_subnormal_u8", "scale 1e-44 (subnormal): subnormal products",
                 np.array([0, 1, 2, 3, 100, 255], u8), f32(1e-44), u8(0))
    dequant_case(g, "huge_scale_overflow_i8", "scale 3e37: products overflow to +-inf",
                 np.array([-128, -12, -11, 0, 11, 12, 127], i8), f32(3e37), i8(0))
    # FLOAT16 rounding: 2049.. are halfway between binary16 neighbours (spacing 2 above 2048)
    dequant_case(g, "f16_ties_to_even_i16", "FLOAT16 output of 2048..2063: odd values are exact ties",
                 np.arange(2048, 2064, dtype=i16), f16(1.0), i16(0))
    dequant_case(g, "f16_ties_scaled_u16", "FLOAT16 scale 0.5 on 4097..4111: ties after the binary32 product",
                 np.arange(4097, 4112, 2, dtype=u16), f16(0.5), u16(0))
    dequant_case(g, "f16_overflow_i32", "FLOAT16 output overflows: 65519 -> 65504, 65520 -> inf",
                 np.array([65504, 65519, 65520, 70000, -65520, -65519, 2**30], i32), f16(1.0), i32(0))
    dequant_case(g, "f16_subnormal_u8", "FLOAT16 scale 2^-24 (smallest subnormal): subnormal and tie results",
                 np.array([0, 1, 2, 3, 5, 255, 128], u8), f16(2.0**-24), u8(0))
    dequant_case(g, "f16_subnormal_ties_u8", "FLOAT16 scale 2^-14/3 rounded; products fall between subnormals",
                 np.arange(0, 16, dtype=u8), f16(2.0**-14 / 3), u8(0))
    dequant_case(g, "probe_int32_difference_overflow", "int32 Input - ZeroPoint outside int32 (docs/semantics.md: exact in "
                 "64 bits; ORT subtracts in int32 and wraps)", np.array([2**31 - 1, -2**31, 5], i32), f32(1.0),
                 i32(-5), probe=True)


# ---------------------------------------------------------------------------
# QuantizeLinear -> ELEMENT_WISE_QUANTIZE_LINEAR

def quant_case(g, name, desc, x, scale, zp=None, axis=None, probe=False):
    """scale/zp: scalars (per tensor) or 1-D along `axis` (per axis). Without a zero point ONNX's
    output is UINT8 (DML: ZeroPointTensor omitted, OutputTensor UINT8)."""
    scale = np.asarray(scale)
    attrs = {} if axis is None else {"axis": axis}
    out_t = u8 if zp is None else np.asarray(zp).dtype.type
    out = run_ort("QuantizeLinear", [(x, False), (scale, True), (None if zp is None else np.asarray(zp), True)],
                  out_t, attrs)
    sizes = list(x.shape)
    bshape = [1] * x.ndim
    if scale.ndim > 0:
        bshape[axis % x.ndim] = scale.size
    spec = spec_quantize(x, scale.reshape(bshape), None if zp is None else np.asarray(zp, np.int64).reshape(bshape),
                         out_t)
    c = Case("quantize", name, "ELEMENT_WISE_QUANTIZE_LINEAR", desc)
    c.tensor("InputTensor", x.dtype, sizes, x)
    st = broadcast_layout(np.zeros(bshape), sizes)
    c.tensor("ScaleTensor", scale.dtype, sizes, scale.ravel(), st)
    if zp is not None:
        c.tensor("ZeroPointTensor", out_t, sizes, np.asarray(zp, out_t).ravel(), st)
    c.tensor("OutputTensor", out_t, sizes)
    g.accept(c, out, spec, 0, probe)


def gen_quantize(g):
    for t in (u8, i8):
        n = np.dtype(t).name
        info = np.iinfo(t)
        r = rng_for("q_random_" + n)
        s = f32(r.uniform(0.01, 0.1))
        zp = t(r.integers(info.min, info.max))
        x = (r.uniform(info.min - 20 - int(zp), info.max + 20 - int(zp), (3, 5, 7)) * s).astype(f32)
        quant_case(g, f"per_tensor_{n}_3x5x7", "random input over the output range and beyond, per-tensor scale "
                   "and zero point (strides all 0)", x, s, zp)
        scale = r.uniform(0.01, 0.1, 5).astype(f32)
        zpv = rand(r, t, (5,))
        quant_case(g, f"per_axis1_{n}", "scale and zero point per axis 1: Sizes {3,5,7}, Strides {0,1,0}",
                   (r.standard_normal((3, 5, 7)) * 4).astype(f32), scale, zpv, axis=1)
        quant_case(g, f"ties_scale_half_{n}", "(k + 1/2) / 0.5: exact ties after the division, to even",
                   (np.arange(-40, 40, dtype=f32) + f32(0.5)) * f32(0.5), f32(0.5), t(0 if t == i8 else 100))
        k = np.arange(-300, 300, dtype=np.float64)
        quant_case(g, f"near_ties_scale_0_3_{n}", "(k + 1/2) * 0.3 / 0.3f: quotients a rounding away from ties, "
                   "where a multiplication by 1/s rounds to the tie", ((k + 0.5) * 0.3).astype(f32), f32(0.3),
                   t(0 if t == i8 else 128))
        quant_case(g, f"saturation_{n}", "huge and infinite inputs saturate; the zero point at the type minimum",
                   np.array([3e38, -3e38, np.inf, -np.inf, 1e10, -1e10, 2.1e9, -2.2e9, 0, 300, -300], f32),
                   f32(1.0), t(info.min))
        quant_case(g, f"zero_point_max_{n}", "the zero point at the type maximum",
                   np.array([0, 1, -1, -255, -256, 0.5, -0.5, 1.5], f32), f32(1.0), t(info.max))
    r = rng_for("q_misc")
    quant_case(g, "per_axis0_u8", "per-axis on axis 0 of {4,3,2}", (r.standard_normal((4, 3, 2)) * 10).astype(f32),
               r.uniform(0.05, 1, 4).astype(f32), rand(r, u8, (4,)), axis=0)
    quant_case(g, "per_axis_last_i8", "per-axis on the last axis (axis -1) of {2,3,6}",
               (r.standard_normal((2, 3, 6)) * 10).astype(f32), r.uniform(0.05, 1, 6).astype(f32), rand(r, i8, (6,)),
               axis=-1)
    quant_case(g, "no_zero_point_u8", "no zero point (optional from feature level 6.2): UINT8 output",
               (r.standard_normal((2, 9)) * 20).astype(f32), f32(0.125))
    quant_case(g, "no_zero_point_per_axis_u8", "per-axis scale, no zero point",
               (r.standard_normal((3, 4)) * 20).astype(f32), r.uniform(0.05, 1, 3).astype(f32), axis=0)
    quant_case(g, "negative_scale_i8", "negative scale", np.array([1, -1, 2.5, -2.5, 100, -100, 0.74], f32),
               f32(-0.37), i8(3))
    quant_case(g, "subnormal_scale_u8", "scale 1e-44 (subnormal): quotients of tiny inputs, no flush",
               np.array([0, 1e-44, 2e-44, 1e-43, 1e-42, 1e-45, -1e-44, 1e-40], f32), f32(1e-44), u8(10))
    quant_case(g, "subnormal_input_i8", "subnormal inputs over a subnormal scale",
               np.array([1.4e-45, 2.8e-45, 4.2e-45, 7e-45, -7e-45, 1e-39, 0], f32), f32(2.8e-45), i8(0))
    quant_case(g, "rank1_single_i8", "one element", np.array([7.3], f32), f32(0.1), i8(-3))
    quant_case(g, "rank8_u8", "8 dimensions {1,2,1,3,1,2,1,2}, per axis 5",
               (r.standard_normal((1, 2, 1, 3, 1, 2, 1, 2)) * 50).astype(f32), np.array([0.5, 0.3], f32),
               np.array([1, 200], u8), axis=5)
    # FLOAT16 input and scale: widened to binary32, one binary32 division.
    for t in (u8, i8):
        n = np.dtype(t).name
        r = rng_for("q_f16_" + n)
        quant_case(g, f"f16_per_tensor_{n}", "FLOAT16 input and scale, per tensor",
                   (r.standard_normal((4, 6)) * 8).astype(f16), f16(0.0999755859375), t(5))
        quant_case(g, f"f16_per_axis_{n}", "FLOAT16 input and scale per axis 1",
                   (r.standard_normal((3, 4)) * 8).astype(f16), r.uniform(0.05, 0.5, 4).astype(f16), rand(r, t, (4,)),
                   axis=1)
    quant_case(g, "f16_ties_i8", "FLOAT16 (k + 1/2) / 1: ties to even; 1 / 0.15380859375 = 6.5016 (binary32) -> 7",
               np.concatenate([np.arange(-20, 20, dtype=f16) + f16(0.5), np.array([1.0], f16)]),
               f16(1.0), i8(0))
    quant_case(g, "f16_binary32_quotient_i8", "FLOAT16 1 / 0.15380859375: 6.5016 in binary32 gives 7 (a binary16 "
               "quotient, 6.5, would give 6)", np.array([1.0, 2.0, 3.0, -1.0], f16), f16(0.15380859375), i8(0))
    quant_case(g, "f16_saturation_u8", "FLOAT16 infinities and 65504", np.array([65504, -65504, np.inf, -np.inf, 0],
                                                                                f16), f16(1.0), u8(0))


# ---------------------------------------------------------------------------
# com.microsoft QLinearAdd -> ELEMENT_WISE_QUANTIZED_LINEAR_ADD

def add_case(g, name, desc, a, azp, as_, b, bzp, bs, os_, ozp):
    t = a.dtype.type
    out = run_ort("QLinearAdd", [(a, False), (f32(as_), True), (t(azp), True), (b, False), (f32(bs), True),
                                 (t(bzp), True), (f32(os_), True), (t(ozp), True)], t, domain="com.microsoft")
    spec = spec_add(a, azp, as_, b, bzp, bs, os_, ozp, t)
    sizes = list(out.shape)
    rank = len(sizes)
    c = Case("add", name, "ELEMENT_WISE_QUANTIZED_LINEAR_ADD", desc)
    one = [1] * rank
    c.tensor("ATensor", t, sizes, a, broadcast_layout(a, sizes))
    c.tensor("AScaleTensor", f32, one, [as_])
    c.tensor("AZeroPointTensor", t, one, [azp])
    c.tensor("BTensor", t, sizes, b, broadcast_layout(b, sizes))
    c.tensor("BScaleTensor", f32, one, [bs])
    c.tensor("BZeroPointTensor", t, one, [bzp])
    c.tensor("OutputScaleTensor", f32, one, [os_])
    c.tensor("OutputZeroPointTensor", t, one, [ozp])
    c.tensor("OutputTensor", t, sizes)
    g.accept(c, out, spec, 1)


def gen_add(g):
    for t in (u8, i8):
        n = tname(t)
        info = np.iinfo(t)
        r = rng_for("add_random_" + n)
        add_case(g, f"random_{n}_3x5x7", "random data, scales and zero points", rand(r, t, (3, 5, 7)),
                 rand(r, t, ()), r.uniform(0.01, 0.1), rand(r, t, (3, 5, 7)), rand(r, t, ()), r.uniform(0.01, 0.1),
                 r.uniform(0.05, 0.2), rand(r, t, ()))
        add_case(g, f"tails_{n}_37", "37 elements (SIMD tails)", rand(r, t, (37,)), t(3), 0.02, rand(r, t, (37,)),
                 t(9), 0.03, 0.04, t(5))
        add_case(g, f"broadcast_row_{n}", "B {1,7} broadcast over A {4,7}: B strides {0,1}", rand(r, t, (4, 7)),
                 t(1), 0.05, rand(r, t, (1, 7)), t(2), 0.02, 0.08, t(0))
        add_case(g, f"broadcast_scalar_{n}", "B one element broadcast: B strides all 0", rand(r, t, (2, 3, 5)),
                 t(7), 0.05, rand(r, t, (1, 1, 1)), t(2), 0.02, 0.08, t(4))
        add_case(g, f"broadcast_both_{n}", "A {3,1} + B {1,5}", rand(r, t, (3, 1)), t(1), 0.05, rand(r, t, (1, 5)),
                 t(2), 0.02, 0.08, t(6))
        add_case(g, f"saturate_{n}", "small output scale: saturation at both ends", rand(r, t, (4, 6)),
                 t(int(info.min + info.max) // 2), 0.1, rand(r, t, (4, 6)), t(0), 0.1, 0.01, t(0))
        add_case(g, f"zp_extremes_{n}", "zero points at the type limits", rand(r, t, (5, 5)), t(info.max), 0.03,
                 rand(r, t, (5, 5)), t(info.min), 0.02, 0.05, t(info.max))
        add_case(g, f"ties_{n}", "(A + B) / 2 with scales 1/1/2: exact .5 ties (ORT may round them either way)",
                 rand(r, t, (3, 8), -10 if t == i8 else 0, 10), t(0), 1.0, rand(r, t, (3, 8), -10 if t == i8 else 0, 10),
                 t(1), 1.0, 2.0, t(0 if t == i8 else 50))
        add_case(g, f"rank5_{n}", "5 dimensions", rand(r, t, (2, 1, 3, 2, 2)), t(5), 0.04, rand(r, t, (2, 1, 3, 2, 2)),
                 t(6), 0.04, 0.06, t(7))
        add_case(g, f"single_{n}", "one element", rand(r, t, (1,)), t(0), 0.5, rand(r, t, (1,)), t(0), 0.25, 1.0, t(0))


# ---------------------------------------------------------------------------
# Clip -> ELEMENT_WISE_CLIP

def clip_case(g, name, desc, x, lo, hi, dml_hi=None, probe=False):
    """lo/hi None = the ONNX input is omitted (DML: -inf / +inf). `dml_hi`:
    the DML Max when it differs from ORT's (a binary32 bound that saturates)."""
    t = x.dtype.type
    out = run_ort("Clip", [(x, False), (None if lo is None else t(lo), True), (None if hi is None else t(hi), True)], t)
    dlo = float("-inf") if lo is None else float(lo)
    dhi = float("inf") if hi is None else float(hi) if dml_hi is None else float(dml_hi)
    spec = spec_clip(x, dlo, dhi)
    c = Case("clip", name, "ELEMENT_WISE_CLIP", desc)
    c.tensor("InputTensor", t, x.shape, x)
    c.tensor("OutputTensor", t, x.shape)
    c.params = {"Min": json_value(f32(dlo)) if lo is None or x.dtype.kind == "f" else int(lo),
                "Max": json_value(f32(dhi)) if hi is None or x.dtype.kind == "f" else int(dhi)}
    g.accept(c, out, spec, 0, probe)


def gen_clip(g):
    r = rng_for("clip_f32")
    x = r.normal(0, 3, (4, 9)).astype(f32)
    clip_case(g, "random_f32", "random normal data, Min -2.5, Max 3.25", x, -2.5, 3.25)
    clip_case(g, "min_only_f32", "no max input in ORT (DML Max = +inf)", x, 0.0, None)
    clip_case(g, "max_only_f32", "no min input in ORT (DML Min = -inf)", x, None, 1.0)
    clip_case(g, "no_bounds_f32", "neither bound: identity", x, None, None)
    clip_case(g, "min_eq_max_f32", "Min == Max", x, 0.5, 0.5)
    special = np.array([np.inf, -np.inf, 3e38, -3e38, 1e-45, -1e-45, 0.0, 1.0, -1.0, 2.0, -2.0, 1.5], f32)
    clip_case(g, "specials_f32", "+-inf, +-max, subnormals, bounds exactly hit", special, -1.0, 2.0)
    clip_case(g, "nan_f32", "NaN input stays NaN", np.array([np.nan, 1.0, -np.nan, 5.0], f32), 0.0, 2.0)
    clip_case(g, "negative_zero_f32", "-0.0 input with Min +0.0: equal to the bound, passes unchanged",
              np.array([-0.0, 0.0, -1.0, 1.0], f32), 0.0, 1.0)
    clip_case(g, "min_greater_than_max_f32", "Min 2 > Max 1 (docs/semantics.md gives Min, ORT gives Max)",
              np.array([0.0, 1.5, 3.0], f32), 2.0, 1.0, probe=True)
    r = rng_for("clip_f16")
    clip_case(g, "random_f16", "FLOAT16, bounds exact in binary16", r.normal(0, 3, (3, 7)).astype(f16), -1.5, 2.25)
    clip_case(g, "specials_f16", "FLOAT16 inf, 65504, subnormals",
              np.array([np.inf, -np.inf, 65504, -65504, 6e-8, -6e-8, 0.0, 1.0], f16), -1000.0, 60000.0)
    for t in (i8, u8, i32, u32):
        n = np.dtype(t).name
        info = np.iinfo(t)
        r = rng_for("clip_" + n)
        x = rand(r, t, (3, 11))
        span = int(info.max) - int(info.min)
        lo, hi = int(info.min) + span // 4, int(info.min) + 3 * span // 4
        if t in (i32, u32):  # keep the bounds exact in binary32
            lo, hi = int(f32(lo)), int(f32(hi))
        clip_case(g, f"random_{n}", f"random {n}, bounds in the middle quarters", x, lo, hi)
        clip_case(g, f"type_bounds_{n}", "bounds at the type limits: identity"
                  + (" (DML Max 2^32 or 2^31, the binary32 above the type maximum, saturates)" if t in (i32, u32)
                     else ""), np.array([info.min, info.max, 0, 1], t), int(info.min), int(info.max),
                  dml_hi=int(f32(info.max)))
        clip_case(g, f"min_only_{n}", "no max in ORT (DML Max = +inf, saturates to the type maximum)", x, lo, None)
        clip_case(g, f"max_only_{n}", "no min in ORT (DML Min = -inf, saturates to the type minimum)", x, None, hi)
    r = rng_for("clip_64")
    big = 2**60
    clip_case(g, "exact_int64", "int64 beyond 2^53: compared exactly, no float round trip",
              np.array([big - 1, big, big + 1, -big - 1, -big, -big + 1, 0, 2**63 - 1, -2**63], i64), -big, big)
    clip_case(g, "random_int64", "random int64", rand(r, i64, (2, 9)), -2**62, 2**61)
    clip_case(g, "exact_uint64", "uint64 beyond 2^53: compared exactly",
              np.array([big - 1, big, big + 1, 2**64 - 1, 0, 2**40 - 1, 2**40, 2**40 + 1], u64), 2**40, big)
    clip_case(g, "random_uint64", "random uint64", rand(r, u64, (2, 9)), 2**62, 2**63)
    clip_case(g, "min_only_uint64", "no max in ORT: DML Max = +inf saturates to 2^64-1",
              np.array([0, 1, 2**64 - 1, 2**63], u64), 1, None)


# ---------------------------------------------------------------------------
# Clip on integer types -> ELEMENT_WISE_CLIP1 (typed bounds, docs/semantics.md section 13)

def spec_clip1(x, lo, hi):
    """docs/semantics.md section 13, exact profile, integer types: min(Max, max(Min, x)) exactly."""
    y = [min(hi, max(lo, int(v))) for v in np.asarray(x).ravel()]
    return np.array(y, dtype=x.dtype).reshape(x.shape)


def clip1_case(g, name, desc, x, lo, hi, exact=False):
    """ORT Clip with typed min/max inputs (opset 13+) as CLIP1 with the same typed bounds.
    `exact`: the case holds for the exact profile only (ONNX's order, which DirectML does not follow)."""
    t = x.dtype.type
    out = run_ort("Clip", [(x, False), (t(lo), True), (t(hi), True)], t)
    c = Case("clip1", name, "ELEMENT_WISE_CLIP1", desc)
    c.tensor("InputTensor", t, x.shape, x)
    c.tensor("OutputTensor", t, x.shape)
    c.params = {"Min": int(lo), "Max": int(hi)}
    g.accept(c, out, spec_clip1(x, int(lo), int(hi)), 0)
    if exact and c.expected is not None:
        c.expected["fidelity"] = "exact"


def gen_clip1(g):
    for t in (i8, u8, i32, u32, i64, u64):  # ORT's CPU Clip has no INT16/UINT16 kernel
        n = np.dtype(t).name
        info = np.iinfo(t)
        r = rng_for("clip1_" + n)
        x = rand(r, t, (3, 11))
        lo, hi = sorted(int(v) for v in rand(r, t, (2,)))
        clip1_case(g, f"random_{n}", f"random {n}, random typed bounds", x, lo, hi)
        ext = np.array([info.min, info.min + 1, info.max - 1, info.max, 0, 1], t)
        clip1_case(g, f"extremes_{n}", "bounds one inside the type's extremes (for 32/64 bits no binary32 value)",
                   ext, int(info.min) + 1, int(info.max) - 1)
        clip1_case(g, f"identity_{n}", "bounds at the type's extremes: identity", ext, int(info.min), int(info.max))
        clip1_case(g, f"min_eq_max_{n}", "Min == Max", x, int(lo), int(lo))
        clip1_case(g, f"min_greater_than_max_{n}", "Min > Max: ONNX (and the exact profile) give Max; DirectML, Min",
                   x, int(hi), int(lo), exact=True)
    big = 2**53
    clip1_case(g, "beyond_2p53_int64", "int64 bounds and values beyond 2^53 (no binary64 value)",
               np.array([big - 1, big, big + 1, big + 2, -big - 3, 2**63 - 1, -2**63], i64), -big - 1, big + 1)
    clip1_case(g, "beyond_2p53_uint64", "uint64 bounds and values beyond 2^53",
               np.array([big, big + 1, big + 3, 2**64 - 1, 2**64 - 2, 0], u64), big + 1, 2**64 - 2)


# ---------------------------------------------------------------------------
# DynamicQuantizeLinear -> DYNAMIC_QUANTIZE_LINEAR (exact profile, UINT8: ONNX defines only UINT8)

def spec_dynamic_quantize(x):
    """docs/semantics.md section 15, exact profile: m = min(0, min x), M = max(0, max x) (NaN skipped),
    s = (M - m) / 255, z = Z(0 - m / s), y = Q(x / s, z); binary32 steps."""
    v = x[~np.isnan(x)]
    m = f32(min(0.0, float(v.min()))) if v.size else f32(0)
    M = f32(max(0.0, float(v.max()))) if v.size else f32(0)
    s = f32(f32(M - m) / f32(255))
    z = Q(f32(f32(0) - f32(m / s)), 0, u8)
    return Q((x / s).astype(f32), z, u8), s, z


def run_ort_dynamic_quantize(x):
    """ONNX Runtime's DynamicQuantizeLinear: (y, y_scale, y_zero_point)."""
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "y_scale", "y_zero_point"])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)],
        [helper.make_tensor_value_info(n, t, None) for n, t in
         [("y", helper.np_dtype_to_tensor_dtype(np.dtype(u8))), ("y_scale", helper.np_dtype_to_tensor_dtype(np.dtype(f32))),
          ("y_zero_point", helper.np_dtype_to_tensor_dtype(np.dtype(u8)))]])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 10
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})


def dynamic_quantize_case(g, name, desc, x, probe=False):
    """One DYNAMIC_QUANTIZE_LINEAR case with its three expected outputs (exact profile), written when ONNX
    Runtime agrees with docs/semantics.md on all three; a probe (ORT's own choices, docs/semantics.md
    section 15) is only compared and reported."""
    x = np.asarray(x, f32)
    y, ys, yz = run_ort_dynamic_quantize(x)
    sy, ss, sz = spec_dynamic_quantize(x)
    rel = f"dynamic_quantize/{name}"
    bad = [(m, a, b) for m, a, b in [("OutputTensor", y, sy), ("OutputScaleTensor", ys, ss),
                                      ("OutputZeroPointTensor", yz, sz)] if mismatches(np.asarray(a), np.asarray(b), 0).any()]
    msg = "; ".join(f"{m}: ORT {np.asarray(a).ravel()[:4]!r} vs docs/semantics.md {np.asarray(b).ravel()[:4]!r}"
                    for m, a, b in bad)
    if probe:
        g.probes.append((rel, desc + ": " + (msg or "agrees with docs/semantics.md")))
        return
    if bad:
        g.disagreements.append((rel, msg))
        return
    one = [1] * x.ndim
    c = Case("dynamic_quantize", name, "DYNAMIC_QUANTIZE_LINEAR", desc)
    c.tensor("InputTensor", f32, x.shape, x)
    c.tensor("OutputTensor", u8, x.shape)
    c.tensor("OutputScaleTensor", f32, one)
    c.tensor("OutputZeroPointTensor", u8, one)
    c.files["expected_output.npy"] = np.ascontiguousarray(y)
    c.files["expected_scale.npy"] = np.asarray(ys, f32).reshape(one)
    c.files["expected_zero_point.npy"] = np.asarray(yz, u8).reshape(one)
    c.expected = {"OutputTensor": {"data": "expected_output.npy", "tolerance": 0},
                  "OutputScaleTensor": {"data": "expected_scale.npy", "tolerance": 0},
                  "OutputZeroPointTensor": {"data": "expected_zero_point.npy", "tolerance": 0},
                  "fidelity": "exact"}
    g.cases.append(c)


def gen_dynamic_quantize(g):
    for k, shape in enumerate([(1,), (7,), (3, 5), (2, 3, 17), (2, 2, 3, 4, 5), (1, 1, 1, 2, 1, 1, 1, 3), (4, 64)]):
        r = rng_for(f"dq_random_{k}")
        scale = [1.0, 0.01, 100.0, 3.7e-3, 1e6, 2.5, 0.5][k]
        dynamic_quantize_case(g, f"random_{k}", f"random normal data times {scale}, shape {shape}",
                              (r.standard_normal(shape) * scale).astype(f32))
    r = rng_for("dq_signs")
    dynamic_quantize_case(g, "all_positive", "all positive: m widened to 0, z = 0", r.uniform(0.5, 9, (5, 6)))
    dynamic_quantize_case(g, "all_negative", "all negative: M widened to 0, z = 255", -r.uniform(0.5, 9, (5, 6)))
    # range 255: s = 1 in binary32, x / s = x: the ties k + 0.5 round to even
    ties = np.array([-51, 204, 0.5, 1.5, 2.5, -0.5, -1.5, 100.5, 101.5, -50.5, 203.5, 0.0], f32)
    dynamic_quantize_case(g, "ties_scale_1", "range [-51, 204]: s = 1, z = 51, x.5 values round to even", ties)
    dynamic_quantize_case(g, "ties_zero_point", "range [-1.5, 253.5]: s = 1, -m / s = 1.5: z = 2 (even)",
                          np.array([-1.5, 253.5, 0.5, 7.25], f32))
    # binary32 -m / s = 100.5 exactly (z = 100, even) where the exact -255 m / (M - m) is 100.500001 (101):
    # the exact profile's zero point is the binary32 steps', not the exactly rounded one (--check-exact explains it)
    dynamic_quantize_case(g, "zero_point_rounding", "range [-4.29995394, 6.61037683]: binary32 -m / s = 100.5, z = 100; "
                          "exactly 100.500001", np.array([-4.299953937530518, 6.610376834869385, 0.0, 1.0, -2.0, 3.3], f32))
    dynamic_quantize_case(g, "nan_elements", "NaN elements: skipped in the range, quantized to 0",
                          np.array([np.nan, -3.0, 1.0, np.nan, 12.0, 0.25], f32))
    dynamic_quantize_case(g, "positive_infinity", "+inf: s = inf, every output 0 and z = 0",
                          np.array([1.0, np.inf, -2.0], f32))
    dynamic_quantize_case(g, "huge_range", "a range near FLT_MAX: M - m finite", np.array([3e38, -1e37, 1.0], f32))
    dynamic_quantize_case(g, "tiny_range", "a range of 2^-120: s subnormal",
                          np.array([2.0 ** -120, -2.0 ** -121, 0.0], f32))
    # ONNX Runtime's own choices (docs/semantics.md section 15): compared and reported, never written
    dynamic_quantize_case(g, "all_zero", "all zero: a range of 0 (ORT's scale 1.0, qdml's +0; the outputs agree)", np.zeros(6, f32),
                          probe=True)
    dynamic_quantize_case(g, "all_nan", "all NaN (an ORT choice, docs/semantics.md section 15)", np.full(4, np.nan, f32), probe=True)
    dynamic_quantize_case(g, "negative_infinity", "-inf (an ORT choice, docs/semantics.md section 15)", np.array([1.0, -np.inf, 2.0], f32),
                          probe=True)


# ---------------------------------------------------------------------------
# com.microsoft QLinearAveragePool -> QUANTIZED_LINEAR_AVERAGE_POOLING

def spec_average_pooling(x, xs, xzp, ys, yzp, kernel, strides, pads, include, zp_before_rounding=False):
    """docs/semantics.md section 17 (no dilations: ONNX Runtime has none): per output element, the window's
    taps inside the input in row-major order, sum = sum + fp32(x - xzp) * xs in binary32, / fp32(count),
    / ys, Q."""
    n = x.ndim - 2
    sp = x.shape[2:]
    out_sp = [(sp[k] + pads[k] + pads[n + k] - kernel[k]) // strides[k] + 1 for k in range(n)]
    deq = (x.astype(np.int64) - np.int64(xzp)).astype(f32) * f32(xs)  # one rounding per product
    v = np.zeros(x.shape[:2] + tuple(out_sp), f32)
    for o in np.ndindex(*out_sp):
        acc = np.zeros(x.shape[:2], f32)
        taps = 0
        for t in np.ndindex(*kernel):
            p = tuple(o[k] * strides[k] + t[k] - pads[k] for k in range(n))
            if all(0 <= p[k] < sp[k] for k in range(n)):
                acc = (acc + deq[(slice(None), slice(None)) + p]).astype(f32)
                taps += 1
        count = f32(int(np.prod(kernel)) if include else taps)
        v[(slice(None), slice(None)) + o] = (acc / count).astype(f32) / f32(ys)
    if zp_before_rounding:  # ONNX Runtime's windowed path: rne(v + zp) in binary32, then the clamp
        info = np.iinfo(x.dtype)
        return np.clip(np.rint((v + f32(yzp)).astype(f32)), info.min, info.max).astype(x.dtype)
    return Q(v, yzp, x.dtype)


def average_pooling_case(g, name, desc, x, xs, xzp, ys, yzp, kernel, strides=None, pads=None, include=False,
                         probe=False):
    """ONNX Runtime's com.microsoft QLinearAveragePool(x, x_scale, x_zero_point, y_scale, y_zero_point) with
    kernel_shape, strides, pads ([starts..., ends...]) and count_include_pad; NCHW or NCDHW."""
    n = x.ndim - 2
    strides = list(strides or [1] * n)
    pads = list(pads or [0] * (2 * n))
    attrs = {"kernel_shape": list(kernel), "strides": strides, "pads": pads, "count_include_pad": int(include)}
    out = run_ort("QLinearAveragePool", [(x, False), (np.asarray(xs, f32), True), (np.asarray(xzp, x.dtype), True),
                                         (np.asarray(ys, f32), True), (np.asarray(yzp, x.dtype), True)],
                  x.dtype, attrs, domain="com.microsoft")
    spec = spec_average_pooling(x, xs, xzp, ys, yzp, kernel, strides, pads, include)
    c = Case("average_pooling", name, "QUANTIZED_LINEAR_AVERAGE_POOLING", desc)
    rank = x.ndim
    c.tensor("InputTensor", x.dtype, x.shape, x)
    c.tensor("InputScaleTensor", f32, [1] * rank, [xs])
    c.tensor("InputZeroPointTensor", x.dtype, [1] * rank, [xzp])
    c.tensor("OutputScaleTensor", f32, [1] * rank, [ys])
    c.tensor("OutputZeroPointTensor", x.dtype, [1] * rank, [yzp])
    c.tensor("OutputTensor", x.dtype, out.shape)
    c.params = {"Strides": strides, "WindowSize": list(kernel), "StartPadding": pads[:n], "EndPadding": pads[n:],
                "Dilations": [1] * n, "IncludePadding": bool(include)}
    g.accept(c, out, spec, 0, probe)


def probe_average_pooling_random(g, t):
    """150 random cases with random zero points (1 to 3 spatial dimensions): the elements ONNX Runtime's
    windowed path computes otherwise than docs/semantics.md section 17, and otherwise than section 17 with
    the zero point added before rounding; its global path (window = the input, no padding) apart."""
    tn = tname(t)
    r = rng_for(f"average_pooling_random_probe_{tn}")
    lo, hi = int(np.iinfo(t).min), int(np.iinfo(t).max)
    counts = {"windowed": [0, 0, 0], "global": [0, 0, 0]}  # elements, wrong, wrong with rne(v + zp)
    for _ in range(150):
        n = int(r.integers(1, 4))
        sp = [int(r.integers(1, 6)) for _ in range(n)]
        glob = r.random() < 0.25
        kernel = sp[:] if glob else [int(r.integers(1, s + 1)) for s in sp]
        pads = [0] * (2 * n) if glob else [int(r.integers(0, k)) for k in kernel] * 2
        strides = [1] * n if glob else [int(r.integers(1, 3)) for _ in range(n)]
        x = rand(r, t, [int(r.integers(1, 3)), int(r.integers(1, 4))] + sp)
        xs = f32(r.choice([0.1, 0.3, 1 / 3, 0.05, r.uniform(0.001, 1)]))
        ys = f32(xs * f32(r.choice([1, 0.5, 2, 3, 0.7])))
        xzp, yzp, include = t(r.integers(lo, hi + 1)), t(r.integers(lo, hi + 1)), bool(r.integers(0, 2))
        attrs = {"kernel_shape": kernel, "strides": strides, "pads": pads, "count_include_pad": int(include)}
        out = run_ort("QLinearAveragePool", [(x, False), (np.asarray(xs, f32), True), (np.asarray(xzp, t), True),
                                             (np.asarray(ys, f32), True), (np.asarray(yzp, t), True)],
                      t, attrs, domain="com.microsoft")
        path = "global" if kernel == sp and not any(pads) else "windowed"
        c = counts[path]
        c[0] += out.size
        c[1] += int(np.count_nonzero(out != spec_average_pooling(x, xs, xzp, ys, yzp, kernel, strides, pads, include)))
        c[2] += int(np.count_nonzero(out != spec_average_pooling(x, xs, xzp, ys, yzp, kernel, strides, pads, include,
                                                                 zp_before_rounding=True)))
    g.probes.append((f"average_pooling/probe_random_zero_points_{tn}", "; ".join(
        f"{p} path: {c[1]} of {c[0]} elements differ from docs/semantics.md, {c[2]} from it with the zero point "
        f"added before rounding" for p, c in counts.items())))


def gen_average_pooling(g):
    for t in (u8, i8):
        tn = tname(t)
        lo, hi = int(np.iinfo(t).min), int(np.iinfo(t).max)
        xz_low = t(lo + 20)  # averages mostly above the zero point: outputs away from 0 with y_zero_point 0
        for include in (False, True):
            inc = "include" if include else "exclude"
            r = rng_for(f"average_pooling_3x3_{inc}_{tn}")
            average_pooling_case(g, f"3x3_pad1_{inc}_{tn}", f"3x3 window, stride 1, padding 1, count_include_pad "
                                 f"{int(include)}, scales 0.05 / 0.07", rand(r, t, (2, 3, 6, 5)), f32(0.05),
                                 xz_low, f32(0.07), t(0), (3, 3), pads=(1, 1, 1, 1), include=include)
            r = rng_for(f"average_pooling_asym_{inc}_{tn}")
            average_pooling_case(g, f"asym_pads_strides_{inc}_{tn}", "2x3 window, strides {2,1}, pads top 1 left 2 "
                                 "bottom 0 right 1", rand(r, t, (1, 4, 7, 6)), f32(r.uniform(0.001, 1)),
                                 t(r.integers(lo, hi)), f32(r.uniform(0.001, 1)), t(0), (2, 3), strides=(2, 1),
                                 pads=(1, 2, 0, 1), include=include)
            r = rng_for(f"average_pooling_3d_{inc}_{tn}")
            average_pooling_case(g, f"three_spatial_{inc}_{tn}", "NCDHW: 2x2x3 window, strides {1,2,1}, pads 1 on "
                                 "depth and width", rand(r, t, (1, 2, 4, 5, 4)), f32(0.3), xz_low, f32(0.2), t(0),
                                 (2, 2, 3), strides=(1, 2, 1), pads=(1, 0, 1, 0, 0, 1), include=include)
        r = rng_for(f"average_pooling_ties_{tn}")
        average_pooling_case(g, f"ties_scale_0p1_{tn}", "InputScale = OutputScale = 0.1 (non-dyadic): averages near "
                             "k + 0.5 with 2 and 4 taps, rounded in binary32", rand(r, t, (1, 8, 8, 8)), f32(0.1),
                             xz_low, f32(0.1), t(0), (2, 2), strides=(2, 1), pads=(0, 1, 0, 0))
        r = rng_for(f"average_pooling_wide_{tn}")
        average_pooling_case(g, f"window_5x5_{tn}", "5x5 window (25 taps summed in binary32), stride 2, padding 2",
                             rand(r, t, (1, 2, 9, 9)), f32(0.0123), xz_low, f32(0.02), t(0), (5, 5), strides=(2, 2),
                             pads=(2, 2, 2, 2), include=True)
        r = rng_for(f"average_pooling_sat_{tn}")
        average_pooling_case(g, f"saturate_{tn}", "OutputScale 0.01: most averages saturate at both ends",
                             rand(r, t, (1, 2, 4, 4)), f32(0.5), t((lo + hi) // 2), f32(0.01), t(0), (2, 2),
                             strides=(2, 2))
        # Probes: ONNX Runtime adds y_zero_point before rounding (rne(v + zp)); its global path (window = input,
        # no padding) sums otherwise. Compared and reported, not written.
        r = rng_for(f"average_pooling_zp_probe_{tn}")
        average_pooling_case(g, f"probe_output_zero_point_{tn}", "y_zero_point 7 (odd): ties differ from round "
                             "then add", rand(r, t, (1, 4, 8, 8)), f32(1.0), xz_low, f32(1.0), t(7), (1, 2),
                             strides=(1, 2), probe=True)
        probe_average_pooling_random(g, t)
        r = rng_for(f"average_pooling_global_probe_{tn}")
        average_pooling_case(g, f"probe_global_{tn}", "window = the whole input without padding: ORT's global "
                             "average path", rand(r, t, (2, 8, 3, 5)), f32(0.05), xz_low, f32(0.07), t(0), (3, 5),
                             probe=True)


# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# QuantizeLinear / DequantizeLinear of opset 21 (int4, uint4, blocks) -> QUANTIZE / DEQUANTIZE

Q4 = {"INT4": (np.int8, -8, 7, 22), "UINT4": (np.uint8, 0, 15, 21)}  # numpy storage, range, TensorProto value


def qdq_type(t):
    """(DML name, numpy storage type, lo, hi, TensorProto value) of a quantized type: "INT4", "UINT4", i8, u8."""
    if t in Q4:
        st, lo, hi, tp = Q4[t]
        return t, st, lo, hi, tp
    info = np.iinfo(t)
    return DML_TYPE[np.dtype(t)], t, int(info.min), int(info.max), helper.np_dtype_to_tensor_dtype(np.dtype(t))


def run_ort_qdq(op, x, scale, zp, t, attrs):
    """QuantizeLinear (x float32 -> t) or DequantizeLinear (x of t -> float32) with `scale` and `zp` as
    initializers; a 4-bit x or zero point is an initializer of the 4-bit type (ONNX Runtime's Python
    API has no 4-bit arrays), a 4-bit output is cast to int8/uint8 in the graph."""
    name, st, lo, hi, tp = qdq_type(t)
    inits = [numpy_helper.from_array(np.asarray(scale, f32), "s")]
    if zp is not None:
        inits.append(helper.make_tensor("z", tp, list(np.shape(zp)), np.asarray(zp).ravel().tolist()))
    inputs, feeds = [], {}
    if op == "QuantizeLinear":
        inputs.append(helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape))
        feeds["x"] = x
    else:
        inits.append(helper.make_tensor("x", tp, list(x.shape), x.ravel().tolist()))
    if op == "QuantizeLinear" and zp is None:
        attrs = dict(attrs, output_dtype=tp)  # without a zero point ONNX's output is uint8 unless told
    nodes = [helper.make_node(op, ["x", "s"] + (["z"] if zp is not None else []), ["y"], **attrs)]
    out_tp = TensorProto.FLOAT if op == "DequantizeLinear" else tp
    if op == "QuantizeLinear" and name in Q4:
        nodes.append(helper.make_node("Cast", ["y"], ["y8"], to=helper.np_dtype_to_tensor_dtype(np.dtype(st))))
        out_name, out_tp = "y8", helper.np_dtype_to_tensor_dtype(np.dtype(st))
    else:
        out_name = "y"
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info(out_name, out_tp, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 10
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def qdq_case(g, op, name, desc, x, scale, zp, t, axis=None, block=0):
    """One ONNX QuantizeLinear/DequantizeLinear as QUANTIZE/DEQUANTIZE: scale and zero point of the
    input's rank (per tensor: all 1; per axis: the axis' size; blocked: the axis' size / block), the
    zero point always given (ONNX's default is 0 for every type, DirectML's SCALE is not: 8 and 128
    for the unsigned ones), so the case is SCALE_ZERO_POINT."""
    name_t, st, lo, hi, _ = qdq_type(t)
    scale = np.asarray(scale, f32)
    zpv = np.zeros(scale.shape, st) if zp is None else np.asarray(zp, st)
    attrs = {} if axis is None else {"axis": axis}
    if block:
        attrs["block_size"] = block
    out = run_ort_qdq(op, x, scale, zp, t, attrs)
    # DML's view of the scale: the input's rank
    if scale.ndim == x.ndim:
        sshape = scale.shape
    else:
        sshape = [1] * x.ndim
        if scale.ndim == 1:
            sshape[axis % x.ndim] = scale.size
    S = scale.reshape(sshape)
    Z = zpv.reshape(sshape).astype(np.int64)
    rep = [x.shape[d] // sshape[d] for d in range(x.ndim)]
    Sb, Zb = S, Z
    for d, r in enumerate(rep):
        Sb, Zb = np.repeat(Sb, r, axis=d), np.repeat(Zb, r, axis=d)
    if op == "QuantizeLinear":
        with np.errstate(all="ignore"):
            v = (x / Sb).astype(f32)
        q = np.where(np.isnan(v), lo, np.clip(np.rint(np.clip(v, lo - Zb, hi - Zb)) + Zb, lo, hi))
        spec = q.astype(st)
    else:
        spec = ((x.astype(np.int64) - Zb).astype(f32) * Sb).astype(f32)
    c = Case("quantize4" if op == "QuantizeLinear" else "dequantize4", name,
             "QUANTIZE" if op == "QuantizeLinear" else "DEQUANTIZE", desc)
    if op == "QuantizeLinear":
        c.tensor("InputTensor", f32, x.shape, x)
    else:
        c.tensor("InputTensor", st, x.shape, x)
        c.tensors["InputTensor"]["type"] = name_t
    c.tensor("ScaleTensor", f32, sshape, S)
    c.tensor("ZeroPointTensor", st, sshape, zpv.reshape(sshape))
    c.tensors["ZeroPointTensor"]["type"] = name_t
    qts = [c.tensors.pop("ScaleTensor"), c.tensors.pop("ZeroPointTensor")]
    c.tensors["QuantizationTensors"] = qts
    c.tensor("OutputTensor", st if op == "QuantizeLinear" else f32, x.shape)
    if op == "QuantizeLinear":
        c.tensors["OutputTensor"]["type"] = name_t
    c.params = {"QuantizationType": "SCALE_ZERO_POINT"}
    g.accept(c, out, spec, 0)


def gen_quantize4(g):
    for t in ("INT4", "UINT4", i8, u8):
        name_t, st, lo, hi, _ = qdq_type(t)
        n = name_t.lower()
        r = rng_for("q4_" + n)
        span = hi - lo
        x = (r.uniform(lo - 3 - span / 2, hi + 3 - span / 2, (4, 32)) * 0.25).astype(f32)
        qdq_case(g, "QuantizeLinear", f"per_tensor_{n}", "per-tensor scale 0.25 and zero point", x, f32(0.25),
                 st(r.integers(lo, hi + 1)), t)
        qdq_case(g, "QuantizeLinear", f"per_axis0_{n}", "scale and zero point per axis 0 of {4,32}", x,
                 r.uniform(0.1, 0.5, 4).astype(f32), r.integers(lo, hi + 1, 4).astype(st), t, axis=0)
        for blk in (8, 16):
            qdq_case(g, "QuantizeLinear", f"blocked_axis1_b{blk}_{n}", f"blocks of {blk} along axis 1 "
                     f"(scale and zero point {{4,{32 // blk}}})", x, r.uniform(0.1, 0.5, (4, 32 // blk)).astype(f32),
                     r.integers(lo, hi + 1, (4, 32 // blk)).astype(st), t, axis=1, block=blk)
        qdq_case(g, "QuantizeLinear", f"blocked_axis0_b2_{n}", "blocks of 2 along axis 0", x,
                 r.uniform(0.1, 0.5, (2, 32)).astype(f32), r.integers(lo, hi + 1, (2, 32)).astype(st), t, axis=0,
                 block=2)
        qdq_case(g, "QuantizeLinear", f"no_zero_point_{n}", "no zero point (ONNX: 0; written as a zero point 0)",
                 x, f32(0.5), None, t)
        k = np.arange(lo - 2, hi + 2, dtype=np.float64)
        ties = np.concatenate([(k + 0.5) * 0.3, np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])]).astype(f32)
        qdq_case(g, "QuantizeLinear", f"ties_specials_{n}", "(k + 1/2) * 0.3 over 0.3: near ties; NaN, +-inf, -0",
                 ties, f32(0.3), st(0 if lo < 0 else 3), t)
        q = r.integers(lo, hi + 1, (4, 32)).astype(st)
        qdq_case(g, "DequantizeLinear", f"per_tensor_{n}", "per-tensor scale and zero point", q, f32(0.37),
                 st(r.integers(lo, hi + 1)), t)
        qdq_case(g, "DequantizeLinear", f"blocked_axis1_b16_{n}", "blocks of 16 along axis 1", q,
                 r.uniform(0.01, 3, (4, 2)).astype(f32), r.integers(lo, hi + 1, (4, 2)).astype(st), t, axis=1,
                 block=16)
        qdq_case(g, "DequantizeLinear", f"per_axis1_{n}", "per axis 1, no zero point", q,
                 r.uniform(0.01, 3, 32).astype(f32), None, t, axis=1)
        allv = np.arange(lo, hi + 1).astype(st)
        qdq_case(g, "DequantizeLinear", f"every_value_{n}", "every value of the type, scale 0.1, zero point 1",
                 allv, f32(0.1), st(1), t)


def generate_with(root, *gens):
    """Runs each gen(g) on one Generator, then rewrites `root` with its cases."""
    np.seterr(all="ignore")  # overflow to inf and inf * 0 are deliberate in some cases
    g = Generator()
    for gen in gens:
        gen(g)
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    for c in g.cases:
        c.write(root)
    return g


def generate(root):
    return generate_with(root, gen_matmul, gen_conv, gen_dequantize, gen_quantize, gen_add, gen_clip, gen_matmul_integer,
                         gen_clip1, gen_conv_integer, gen_matmul_integer_to_float, gen_dynamic_quantize,
                         gen_average_pooling, gen_quantize4)


def diff_trees(new, old):
    """Relative paths that differ between directory trees `new` and `old`."""
    diffs = []

    def walk(c, rel=""):
        diffs.extend(rel + x for x in c.left_only + c.right_only + c.diff_files + c.funny_files)
        for k, sub in c.subdirs.items():
            walk(sub, rel + k + "/")
    walk(filecmp.dircmp(new, old))
    return diffs


def cli(generate_fn, default_out, description, report=None):
    """The command line of a generator: rewrite `default_out` (or --out), or
    with --check regenerate into a temporary directory and compare. Prints
    per-operator counts, `report(g)` lines and every disagreement; the exit
    status is non-zero if --check found a difference."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--check", action="store_true", help="regenerate into a temporary directory and compare")
    ap.add_argument("--out", type=Path, default=default_out, help=f"output directory (default {default_out})")
    args = ap.parse_args()
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            g = generate_fn(Path(tmp) / "out")
            diffs = diff_trees(Path(tmp) / "out", args.out)
            ok = not diffs
            print(f"{len(g.cases)} cases; " + ("identical" if ok else f"{len(diffs)} differences: {diffs[:10]}"))
    else:
        g = generate_fn(args.out)
        ok = True
        print(f"wrote {len(g.cases)} cases to {args.out}")
    per_op = {}
    for c in g.cases:
        per_op[c.operator] = per_op.get(c.operator, 0) + 1
    for op, n in sorted(per_op.items()):
        print(f"  {op}: {n}")
    for line in (report(g) if report else []):
        print(line)
    for rel, msg in g.probes:
        print(f"probe (not written): {rel}: {msg}")
    for rel, msg in g.disagreements:
        print(f"NOT WRITTEN (ORT disagrees with docs/semantics.md): {rel}: {msg}", file=sys.stderr)
    return 0 if ok else 1


def main():
    return cli(generate, OUT, __doc__.split("\n")[0],
               lambda g: [f"  QLinearAdd: {g.add_stats[1]} of {g.add_stats[0]} elements differ by 1 from docs/semantics.md"])


if __name__ == "__main__":
    sys.exit(main())
