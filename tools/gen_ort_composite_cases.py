#!/usr/bin/env python3
"""Conformance cases for the DirectML forms that no single ONNX Runtime
quantized kernel implements, with expected outputs computed by ONNX Runtime
graphs of plain integer and float operators (composites).

ORT's QLinearMatMul / QLinearConv implement only u8.u8->u8, u8.i8->u8 and
i8.i8->i8 with per-tensor A / output parameters; its QLinearAdd needs one type
for A, B and the output; its DequantizeLinear has no UINT32 input; its Clip
has no INT16 / UINT16 kernel and no ScaleBias. DirectML allows all of these.
Here each docs/semantics.md formula is written as an ONNX graph whose every arithmetic
step is an ORT CPU kernel (binary32, one rounding per node, no fusion across
nodes), so ORT does the arithmetic and nothing of qdml runs:

    matmul   Cast->Sub zero points (int32), MatMul (int32), Cast to float,
             Mul by Div(Mul(AScale, BScale), OutputScale), QuantizeLinear(scale 1, OutputZP)
    conv     Cast->Sub zero points (float, exact small integers), Conv (float; every partial
             sum is an integer below 2^24, so exact), Cast int32, Add Bias, Cast float,
             Mul by the multiplier, QuantizeLinear(scale 1, OutputZP)
    add      DequantizeLinear(A), DequantizeLinear(B), Add, Div OutputScale,
             QuantizeLinear(scale 1, OutputZP)
    dequant  UINT32: Cast int64, Sub zero point, Cast float, Mul scale (Cast float16)
    clip     INT16/UINT16: Cast int32, Clip, Cast back; ScaleBias: Cast float, Mul, Add,
             Clip (float), Cast back (integers: clip to the type's range first, then
             Cast truncates toward zero)

QuantizeLinear with scale 1 is the docs/semantics.md Q step (x / 1 exact, ties to even,
saturation). Every case is also checked against the numpy transcription of
docs/semantics.md in gen_ort_cases.py and written only if the bits agree (tolerance 0).

    pip install numpy onnx onnxruntime
    python3 tools/gen_ort_composite_cases.py          # rewrites tests/data/ort-composite
    python3 tools/gen_ort_composite_cases.py --check  # regenerates in a temporary directory, compares
"""

import itertools
import sys

import numpy as np
import onnxruntime as ort
from onnx import helper, numpy_helper

import gen_ort_cases as base
from gen_ort_cases import (Case, Q, f16, f32, i8, i16, i32, i64, rand, rng_for, spec_clip, tname, u8,
                           u16, u32, wrap32)

OUT = base.ROOT / "tests" / "data" / "ort-composite"
Q8 = (u8, i8)


def type_mixes():
    """(A, B, Output, name) for the 8 int8/uint8 type mixes DirectML allows."""
    for ta, tb, ty in itertools.product(Q8, Q8, Q8):
        yield ta, tb, ty, tname(ta, tb, ty)


class Graph:
    """A small ONNX graph run on ORT's CPU execution provider (one thread)."""

    def __init__(self):
        self.nodes, self.inputs, self.inits, self.feeds = [], [], [], {}
        self.count = 0

    def _name(self):
        self.count += 1
        return f"t{self.count}"

    def input(self, arr):
        arr = np.asarray(arr)
        name = self._name()
        self.inputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(arr.dtype), arr.shape))
        self.feeds[name] = arr
        return name

    def const(self, arr, dtype=None):
        name = self._name()
        self.inits.append(numpy_helper.from_array(np.asarray(arr, dtype), name))
        return name

    def op(self, op_type, *inputs, **attrs):
        name = self._name()
        self.nodes.append(helper.make_node(op_type, list(inputs), [name], **attrs))
        return name

    def cast(self, x, dtype):
        return self.op("Cast", x, to=helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))

    def run(self, out, dtype):
        y = helper.make_tensor_value_info(out, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), None)
        graph = helper.make_graph(self.nodes, "g", self.inputs, [y], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", base.OPSET)])
        model.ir_version = 10
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return sess.run(None, self.feeds)[0]

    def quantize(self, v, zp, out_t, axis=None):
        """Q(v, zp, out_t): QuantizeLinear with scale 1 (per axis when zp is a vector)."""
        zp = np.asarray(zp, out_t)
        attrs = {} if zp.ndim == 0 else {"axis": axis}
        return self.op("QuantizeLinear", v, self.const(np.ones(zp.shape, f32)), self.const(zp), **attrs)


def vec(v, dtype):
    return np.asarray(v, dtype)


def col(v, dtype):
    """A per-row parameter as a {M, 1} column (a scalar stays a scalar)."""
    v = vec(v, dtype)
    return v.reshape(-1, 1) if v.ndim else v


# ---------------------------------------------------------------------------
# QUANTIZED_LINEAR_MATRIX_MULTIPLY: every type mix, per-row A / output parameters

def matmul_case(g, name, desc, a, azp, as_, b, bzp, bs, os_, ozp, out_t):
    """azp/as_/os_/ozp: scalars or length-M vectors (per row); bzp/bs: scalars
    or length-N vectors (per column). a {..., M, K}, b {..., K, N}."""
    ta, tb = a.dtype.type, b.dtype.type
    gr = Graph()
    a_c = gr.op("Sub", gr.cast(gr.input(a), i32), gr.const(col(azp, ta).astype(i32)))
    b_c = gr.op("Sub", gr.cast(gr.input(b), i32), gr.const(vec(bzp, tb).astype(i32)))
    acc = gr.cast(gr.op("MatMul", a_c, b_c), f32)
    mult = gr.op("Div", gr.op("Mul", gr.const(col(as_, f32)), gr.const(vec(bs, f32))), gr.const(col(os_, f32)))
    v = gr.op("Mul", acc, mult)
    out = gr.run(gr.quantize(v, ozp, out_t, axis=-2), out_t)

    acc_s = wrap32(np.matmul(a.astype(np.int64) - col(azp, ta).astype(np.int64),
                             b.astype(np.int64) - vec(bzp, tb).astype(np.int64)))
    mult_s = (col(as_, f32) * vec(bs, f32)) / col(os_, f32)
    spec = Q(acc_s.astype(f32) * mult_s, col(ozp, out_t), out_t)

    sizes = list(out.shape)
    rank = len(sizes)
    c = Case("matmul", name, "QUANTIZED_LINEAR_MATRIX_MULTIPLY", desc)
    asizes = sizes[:-1] + [a.shape[-1]]
    c.tensor("ATensor", ta, asizes, a, base.broadcast_layout(a, asizes))
    base.param_entry(c, "AScaleTensor", f32, as_, rank, rank - 2)
    base.param_entry(c, "AZeroPointTensor", ta, azp, rank, rank - 2)
    bsizes = sizes[:-2] + list(b.shape[-2:])
    c.tensor("BTensor", tb, bsizes, b, base.broadcast_layout(b, bsizes))
    base.param_entry(c, "BScaleTensor", f32, bs, rank, rank - 1)
    base.param_entry(c, "BZeroPointTensor", tb, bzp, rank, rank - 1)
    base.param_entry(c, "OutputScaleTensor", f32, os_, rank, rank - 2)
    base.param_entry(c, "OutputZeroPointTensor", out_t, ozp, rank, rank - 2)
    c.tensor("OutputTensor", out_t, sizes)
    g.accept(c, out, spec, 0)


def mid(t):
    info = np.iinfo(t)
    return t((int(info.min) + int(info.max) + 1) // 2)


def gen_matmul(g):
    for ta, tb, ty, t in type_mixes():
        r = rng_for("cmatmul_tails_" + t)
        a, b = rand(r, ta, (17, 33)), rand(r, tb, (33, 9))
        acc = (a.astype(np.int64) - 5) @ (b.astype(np.int64) - 3)
        os_ = float(f"{np.abs(acc).max() * 0.02 * 0.01 / 127:.4g}")
        matmul_case(g, f"tails_{t}_17x33x9", "per-tensor parameters, sizes off every SIMD width",
                    a, ta(5), 0.02, b, tb(3), 0.01, os_, mid(ty), ty)

        r = rng_for("cmatmul_rows_" + t)
        M, K, N = 5, 12, 6
        a, b = rand(r, ta, (M, K)), rand(r, tb, (K, N))
        azp, bzp = rand(r, ta, (M,)), rand(r, tb, (N,))
        as_ = r.uniform(0.01, 0.05, M).astype(f32)
        bs = r.uniform(0.01, 0.05, N).astype(f32)
        os_ = r.uniform(1.0, 3.0, M).astype(f32)
        ozp = rand(r, ty, (M,), int(mid(ty)) - 20, int(mid(ty)) + 20)
        matmul_case(g, f"per_row_per_column_{t}", "A scale/zero point and output scale/zero point per row "
                    "({M,1}), B scale/zero point per column ({1,N})", a, azp, as_, b, bzp, bs, os_, ozp, ty)

        r = rng_for("cmatmul_batch_" + t)
        lo_a, lo_b = (-4 if ta == i8 else 0), (-4 if tb == i8 else 0)
        a, b = rand(r, ta, (3, 4, 3), lo_a, 4), rand(r, tb, (1, 3, 5), lo_b, 4)
        matmul_case(g, f"batch_broadcast_ties_{t}", "{Channel, M, K} x B {1,K,N} broadcast (stride 0), "
                    "multiplier 0.5 * 1 / 1 on small values: exact .5 ties round to even",
                    a, ta(0), 0.5, b, tb(0), 1.0, 1.0, ty(0 if ty == i8 else 64), ty)

        r = rng_for("cmatmul_sat_" + t)
        a, b = rand(r, ta, (4, 8)), rand(r, tb, (8, 5))
        matmul_case(g, f"saturate_{t}", "output scale small enough that outputs saturate at both ends",
                    a, mid(ta), 0.05, b, mid(tb), 0.05, 0.01, mid(ty), ty)


# ---------------------------------------------------------------------------
# QUANTIZED_LINEAR_CONVOLUTION: every type mix

def conv_case(g, name, desc, x, xzp, xs, w, wzp, ws, bias, ys, yzp, out_t, strides=(1, 1), dil=(1, 1),
              pads=(0, 0, 0, 0), group=1):
    cout, cg, kh, kw = w.shape
    assert cg * kh * kw <= 256, "partial sums must stay below 2^24 for the float Conv to be exact"
    wzp_v = np.broadcast_to(vec(wzp, w.dtype), (cout,))
    ws_v = np.broadcast_to(vec(ws, f32), (cout,))
    gr = Graph()
    xc = gr.op("Sub", gr.cast(gr.input(x), f32), gr.const(f32(xzp)))
    wc = gr.op("Sub", gr.cast(gr.input(w), f32), gr.const(wzp_v.astype(f32).reshape(cout, 1, 1, 1)))
    conv = gr.op("Conv", xc, wc, strides=list(strides), dilations=list(dil), pads=list(pads), group=group,
                 kernel_shape=[kh, kw])
    acc = gr.cast(conv, i32)
    if bias is not None:
        acc = gr.op("Add", acc, gr.const(vec(bias, i32).reshape(1, cout, 1, 1)))
    mult = gr.op("Div", gr.op("Mul", gr.const(f32(xs)), gr.const(ws_v.reshape(1, cout, 1, 1))), gr.const(f32(ys)))
    out = gr.run(gr.quantize(gr.op("Mul", gr.cast(acc, f32), mult), yzp, out_t), out_t)
    spec = base.spec_conv(x, xzp, xs, w, wzp_v, ws_v, bias, ys, yzp, out_t, strides, dil, pads, group)

    c = Case("conv", name, "QUANTIZED_LINEAR_CONVOLUTION", desc)
    c.tensor("InputTensor", x.dtype, x.shape, x)
    base.param_entry(c, "InputScaleTensor", f32, xs, 4)
    base.param_entry(c, "InputZeroPointTensor", x.dtype, xzp, 4)
    c.tensor("FilterTensor", w.dtype, w.shape, w)
    base.param_entry(c, "FilterScaleTensor", f32, ws, 4, 1)
    base.param_entry(c, "FilterZeroPointTensor", w.dtype, wzp, 4, 1)
    if bias is not None:
        c.tensor("BiasTensor", i32, [1, cout, 1, 1], vec(bias, i32))
    base.param_entry(c, "OutputScaleTensor", f32, ys, 4)
    base.param_entry(c, "OutputZeroPointTensor", out_t, yzp, 4)
    c.tensor("OutputTensor", out_t, out.shape)
    c.params = {"Strides": list(strides), "Dilations": list(dil), "StartPadding": [pads[0], pads[1]],
                "EndPadding": [pads[2], pads[3]], "GroupCount": group}
    g.accept(c, out, spec, 0)


def gen_conv(g):
    for tx, tw, ty, t in type_mixes():
        r = rng_for("cconv_pads_" + t)
        x, w = rand(r, tx, (1, 2, 6, 7)), rand(r, tw, (3, 2, 3, 2))
        conv_case(g, f"pads_strides_dilations_{t}", "asymmetric padding with the input zero point at the "
                  "type maximum, strides {2,1}, dilations {1,2}, bias, per-channel filter scale",
                  x, np.iinfo(tx).max, 0.03, w, mid(tw), r.uniform(0.01, 0.05, 3).astype(f32),
                  r.integers(-3000, 3000, 3), 4.0, mid(ty), ty, strides=(2, 1), dil=(1, 2),
                  pads=(1, 0, 2, 1))
        r = rng_for("cconv_dw_" + t)
        conv_case(g, f"depthwise_per_channel_zp_{t}", "depthwise (GroupCount = Cin = Cout = 4), 3x3, "
                  "padding 1, per-channel filter scale and zero point",
                  rand(r, tx, (1, 4, 5, 4)), tx(3), 0.05, rand(r, tw, (4, 1, 3, 3)),
                  rand(r, tw, (4,), int(mid(tw)) - 3, int(mid(tw)) + 3), r.uniform(0.01, 0.05, 4).astype(f32),
                  r.integers(-200, 200, 4), 1.0, mid(ty), ty, pads=(1, 1, 1, 1), group=4)
        r = rng_for("cconv_groups_" + t)
        lo_x, lo_w = (-3 if tx == i8 else 0), (-3 if tw == i8 else 0)
        conv_case(g, f"groups2_ties_{t}", "GroupCount 2 (Cin 4, Cout 6), N=2, no bias; multiplier "
                  "0.5 * 1 / 1 on small values: exact .5 ties round to even",
                  rand(r, tx, (2, 4, 4, 3), lo_x, 3), tx(0), 0.5, rand(r, tw, (6, 2, 2, 2), lo_w, 3), tw(0),
                  1.0, None, 1.0, ty(0 if ty == i8 else 60), ty, group=2)


# ---------------------------------------------------------------------------
# ELEMENT_WISE_QUANTIZED_LINEAR_ADD: every type mix, bit-exact

def add_case(g, name, desc, a, azp, as_, b, bzp, bs, os_, ozp, out_t):
    gr = Graph()
    va = gr.op("DequantizeLinear", gr.input(a), gr.const(f32(as_)), gr.const(a.dtype.type(azp)))
    vb = gr.op("DequantizeLinear", gr.input(b), gr.const(f32(bs)), gr.const(b.dtype.type(bzp)))
    v = gr.op("Div", gr.op("Add", va, vb), gr.const(f32(os_)))
    out = gr.run(gr.quantize(v, ozp, out_t), out_t)
    spec = base.spec_add(a, azp, as_, b, bzp, bs, os_, ozp, out_t)
    sizes = list(out.shape)
    one = [1] * len(sizes)
    c = Case("add", name, "ELEMENT_WISE_QUANTIZED_LINEAR_ADD", desc)
    c.tensor("ATensor", a.dtype, sizes, a, base.broadcast_layout(a, sizes))
    c.tensor("AScaleTensor", f32, one, [as_])
    c.tensor("AZeroPointTensor", a.dtype, one, [azp])
    c.tensor("BTensor", b.dtype, sizes, b, base.broadcast_layout(b, sizes))
    c.tensor("BScaleTensor", f32, one, [bs])
    c.tensor("BZeroPointTensor", b.dtype, one, [bzp])
    c.tensor("OutputScaleTensor", f32, one, [os_])
    c.tensor("OutputZeroPointTensor", out_t, one, [ozp])
    c.tensor("OutputTensor", out_t, sizes)
    g.accept(c, out, spec, 0)


def gen_add(g):
    for ta, tb, ty, t in type_mixes():
        r = rng_for("cadd_random_" + t)
        add_case(g, f"random_{t}_3x5x7", "random data and zero points", rand(r, ta, (3, 5, 7)),
                 rand(r, ta, ()), r.uniform(0.01, 0.1), rand(r, tb, (3, 5, 7)), rand(r, tb, ()),
                 r.uniform(0.01, 0.1), r.uniform(0.05, 0.2), rand(r, ty, ()), ty)
        add_case(g, f"broadcast_rank6_{t}", "6 dimensions, A {2,1,3,1,2,1} + B {1,3,1,2,1,4}: zero strides "
                 "on both operands", rand(r, ta, (2, 1, 3, 1, 2, 1)), mid(ta), 0.04,
                 rand(r, tb, (1, 3, 1, 2, 1, 4)), mid(tb), 0.03, 0.06, mid(ty), ty)
        lo_a, lo_b = (-10 if ta == i8 else 0), (-10 if tb == i8 else 0)
        add_case(g, f"ties_saturate_{t}", "(A + B) / 2 with scales 1, 1, 2: exact .5 ties round to even",
                 rand(r, ta, (3, 8), lo_a, 10), ta(0), 1.0, rand(r, tb, (3, 8), lo_b, 10), tb(1), 1.0, 2.0,
                 ty(0 if ty == i8 else 50), ty)
        add_case(g, f"saturate_{t}", "small output scale: saturation at both ends", rand(r, ta, (37,)),
                 mid(ta), 0.1, rand(r, tb, (37,)), tb(0), 0.1, 0.01, mid(ty), ty)


# ---------------------------------------------------------------------------
# ELEMENT_WISE_DEQUANTIZE_LINEAR: UINT32 input

def dequant_case(g, name, desc, x, scale, zp):
    out_t = np.asarray(scale).dtype.type
    gr = Graph()
    d = gr.cast(gr.input(x), i64)
    if zp is not None:
        d = gr.op("Sub", d, gr.const(np.int64(zp)))
    v = gr.op("Mul", gr.cast(d, f32), gr.const(f32(scale)))
    out = gr.run(gr.cast(v, out_t) if out_t == f16 else v, out_t)
    spec = base.spec_dequantize(x, np.asarray(scale), zp)
    sizes = list(x.shape)
    zeros = [0] * len(sizes)
    c = Case("dequantize", name, "ELEMENT_WISE_DEQUANTIZE_LINEAR", desc)
    c.tensor("InputTensor", x.dtype, sizes, x)
    c.tensor("ScaleTensor", out_t, sizes, [scale], zeros)
    if zp is not None:
        c.tensor("ZeroPointTensor", x.dtype, sizes, [zp], zeros)
    c.tensor("OutputTensor", out_t, sizes)
    g.accept(c, out, spec, 0)


def gen_dequantize(g):
    r = rng_for("cdq_u32")
    x = rand(r, u32, (4, 9))
    ext = np.array([0, 1, 2**32 - 1, 2**32 - 2, 2**24 + 1, 2**24 + 3, 2**31, 2**31 - 1, 123456789], u32)
    dequant_case(g, "random_uint32", "UINT32 input and zero point, per-tensor FLOAT32 scale", x, f32(0.0123),
                 u32(r.integers(0, 2**32 - 1)))
    dequant_case(g, "extremes_uint32", "UINT32 extremes, zero point 0: differences that round when converted to "
                 "binary32", ext, f32(0.37), u32(0))
    dequant_case(g, "zp_max_uint32", "zero point 2^32-1: negative differences down to -(2^32-1)", ext, f32(1.0),
                 u32(2**32 - 1))
    dequant_case(g, "f16_uint32", "UINT32 with FLOAT16 scale and output (overflow to inf, ties)",
                 np.array([0, 1, 2049, 2051, 65519, 65520, 4097, 2**32 - 1], u32), f16(1.0), u32(0))
    dequant_case(g, "no_zero_point_uint32", "UINT32 without a zero point", x, f32(1e-9), None)


# ---------------------------------------------------------------------------
# ELEMENT_WISE_CLIP: INT16 / UINT16, and ScaleBias

def clip_case(g, name, desc, x, lo, hi, scale_bias=None):
    """lo/hi: the DML Min/Max (floats). scale_bias: (Scale, Bias) or None."""
    t = x.dtype.type
    gr = Graph()
    node, v = gr.input(x), x
    if scale_bias is not None:  # g(x) = x * Scale + Bias in binary32: two roundings, no FMA
        s, b = f32(scale_bias[0]), f32(scale_bias[1])
        node = gr.op("Add", gr.op("Mul", gr.cast(node, f32), gr.const(s)), gr.const(b))
        v = (x.astype(f32) * s) + b
    if x.dtype.kind == "f":
        lo_t, hi_t = f32(t(f32(lo))), f32(t(f32(hi)))  # FLOAT16: bounds rounded to binary16 first
        node = gr.op("Clip", gr.cast(node, f32), gr.const(lo_t), gr.const(hi_t))
        out = gr.run(gr.cast(node, t), t)
        spec = spec_clip(v.astype(f32), lo_t, hi_t).astype(t)
    else:
        info = np.iinfo(t)
        if scale_bias is not None:  # g(x) truncated toward zero with saturation: clip, then Cast truncates
            node = gr.op("Clip", node, gr.const(f32(info.min)), gr.const(f32(info.max)))
            v = np.trunc(np.clip(v.astype(np.float64), info.min, info.max)).astype(t)
        node = gr.cast(node, i32)
        assert lo <= hi
        lo_i, hi_i = [int(b) for b in spec_clip(np.array([info.min, info.max], t), lo, hi)]  # bounds as DML converts
        node = gr.op("Clip", node, gr.const(i32(lo_i)), gr.const(i32(hi_i)))
        out = gr.run(gr.cast(node, t), t)
        spec = spec_clip(v, lo, hi)
    c = Case("clip", name, "ELEMENT_WISE_CLIP", desc)
    c.tensor("InputTensor", t, x.shape, x)
    c.tensor("OutputTensor", t, x.shape)
    c.params = {"Min": base.json_value(f32(lo)), "Max": base.json_value(f32(hi))}
    if scale_bias is not None:
        c.params["ScaleBias"] = {"Scale": base.json_value(f32(scale_bias[0])),
                                 "Bias": base.json_value(f32(scale_bias[1]))}
    g.accept(c, out, spec, 0)


def gen_clip(g):
    for t in (i16, u16):
        n = np.dtype(t).name
        info = np.iinfo(t)
        r = rng_for("cclip_" + n)
        x = rand(r, t, (3, 11))
        span = int(info.max) - int(info.min)
        lo, hi = int(info.min) + span // 4, int(info.min) + 3 * span // 4
        clip_case(g, f"random_{n}", f"random {n}, bounds in the middle quarters", x, lo, hi)
        clip_case(g, f"fractional_bounds_{n}", "fractional bounds truncate toward zero", x, lo + 0.75, hi - 0.75)
        clip_case(g, f"infinite_bounds_{n}", "-inf / +inf bounds saturate to the type range: identity",
                  np.array([info.min, info.max, 0, 1], t), float("-inf"), float("inf"))
        clip_case(g, f"scale_bias_{n}", "ScaleBias 1.5 / -7.25: g(x) in binary32, truncated toward zero, "
                  "saturated", x, lo, hi, (1.5, -7.25))
    r = rng_for("cclip_sb")
    x = r.normal(0, 3, (4, 9)).astype(f32)
    clip_case(g, "scale_bias_f32", "ScaleBias 0.3 / 0.1 (two roundings, no FMA), Min -1, Max 1.5", x, -1.0, 1.5,
              (0.3, 0.1))
    clip_case(g, "scale_bias_f16", "FLOAT16 ScaleBias: binary32 arithmetic, bounds rounded to binary16, result "
              "rounded once", x.astype(f16), -1.1, 1.7, (0.7, -0.2))
    for t in (i8, u8, i32):
        n = np.dtype(t).name
        x = rand(r, t, (3, 7), None if t != i32 else -2**20, None if t != i32 else 2**20)
        info = np.iinfo(t)
        lo, hi = (-100.5, 90.25) if t == i8 else (20.5, 230.75) if t == u8 else (-1e6, 2e6)
        clip_case(g, f"scale_bias_{n}", "ScaleBias 1.7 / 3.5 with saturation of g(x) at the type range",
                  x, lo, hi, (1.7, 3.5))


# ---------------------------------------------------------------------------

def generate(root):
    return base.generate_with(root, gen_matmul, gen_conv, gen_add, gen_dequantize, gen_clip)


def main():
    return base.cli(generate, OUT, __doc__.split("\n")[0])


if __name__ == "__main__":
    sys.exit(main())
