#!/usr/bin/env python3
"""Conformance cases for qdml translated from the ONNX backend node tests.

The ONNX project's node tests (a one-node model.onnx plus
test_data_set_*/input_*.pb and output_*.pb, outputs produced by ONNX's own
numpy reference) that map onto qdml operators are rewritten as qdml cases
(docs/case-format.md) under tests/data/onnx/<op>/<test>/:

    test_qlinearmatmul_*    QUANTIZED_LINEAR_MATRIX_MULTIPLY
    test_qlinearconv        QUANTIZED_LINEAR_CONVOLUTION
    test_dequantizelinear*  ELEMENT_WISE_DEQUANTIZE_LINEAR
    test_clip*              ELEMENT_WISE_CLIP

    apt-get install -y libonnx-testdata       # the node tests (Debian 12: ONNX 1.12)
    pip install numpy onnx onnxruntime         # onnx to read them; tools/gen_ort_cases.py needs all three
    python3 tools/gen_onnx_node_cases.py [--data /usr/share/libonnx-testdata/data/node] [--check]

Each expected output is ONNX's stored output, checked against the numpy
transcription of docs/semantics.md in tools/gen_ort_cases.py: a test on which they
disagree is not written and is listed on stderr.
"""

import argparse
import glob
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_ort_cases as G  # noqa: E402  (Case, docs/semantics.md in numpy, layouts)

DATA = Path("/usr/share/libonnx-testdata/data/node")
OUT = G.ROOT / "tests" / "data" / "onnx"
PREFIXES = {"test_qlinearmatmul": "matmul", "test_qlinearconv": "conv", "test_dequantizelinear": "dequantize",
            "test_clip": "clip"}


def load_test(d):
    """(node, {input name: array}, expected output) of data set 0 of the test in `d`."""
    model = onnx.load(str(d / "model.onnx"))
    (node,) = model.graph.node
    names = [i.name for i in model.graph.input]
    sets = sorted(glob.glob(str(d / "test_data_set_*")))
    arrays = [numpy_helper.to_array(onnx.load_tensor(f)) for f in sorted(glob.glob(sets[0] + "/input_*.pb"))]
    (out,) = [numpy_helper.to_array(onnx.load_tensor(f)) for f in sorted(glob.glob(sets[0] + "/output_*.pb"))]
    inputs = dict(zip(names, arrays))
    for init in model.graph.initializer:
        inputs[init.name] = numpy_helper.to_array(init)
    return node, [inputs.get(n) if n else None for n in node.input], out, len(sets)


def scalar(x):
    return np.asarray(x).reshape(-1)


def matmul(case, ins):
    a, as_, azp, b, bs, bzp, ys, yzp = ins
    out_t = yzp.dtype.type
    spec = G.spec_matmul(a, scalar(azp)[0], scalar(as_)[0], b, scalar(bzp), scalar(bs), scalar(ys)[0],
                         scalar(yzp)[0], out_t)
    sizes = list(spec.shape)
    rank = len(sizes)
    asizes, bsizes = sizes[:-1] + [a.shape[-1]], sizes[:-2] + list(b.shape[-2:])
    case.tensor("ATensor", a.dtype, asizes, a, G.broadcast_layout(a, asizes))
    G.param_entry(case, "AScaleTensor", G.f32, scalar(as_), rank)
    G.param_entry(case, "AZeroPointTensor", a.dtype, scalar(azp), rank)
    case.tensor("BTensor", b.dtype, bsizes, b, G.broadcast_layout(b, bsizes))
    G.param_entry(case, "BScaleTensor", G.f32, scalar(bs), rank, rank - 1)
    G.param_entry(case, "BZeroPointTensor", b.dtype, scalar(bzp), rank, rank - 1)
    G.param_entry(case, "OutputScaleTensor", G.f32, scalar(ys), rank)
    G.param_entry(case, "OutputZeroPointTensor", out_t, scalar(yzp), rank)
    case.tensor("OutputTensor", out_t, sizes)
    return spec


def conv(case, ins, attrs):
    x, xs, xzp, w, ws, wzp, ys, yzp = ins[:8]
    bias = ins[8] if len(ins) > 8 else None
    out_t = yzp.dtype.type
    if attrs.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise NotImplementedError("auto_pad")
    kh, kw = w.shape[2:]
    strides = attrs.get("strides", [1, 1])
    dil = attrs.get("dilations", [1, 1])
    pads = attrs.get("pads", [0, 0, 0, 0])
    group = attrs.get("group", 1)
    spec = G.spec_conv(x, scalar(xzp)[0], scalar(xs)[0], w, scalar(wzp), scalar(ws), bias, scalar(ys)[0],
                       scalar(yzp)[0], out_t, strides, dil, pads, group)
    case.tensor("InputTensor", x.dtype, x.shape, x)
    G.param_entry(case, "InputScaleTensor", G.f32, scalar(xs), 4)
    G.param_entry(case, "InputZeroPointTensor", x.dtype, scalar(xzp), 4)
    case.tensor("FilterTensor", w.dtype, w.shape, w)
    G.param_entry(case, "FilterScaleTensor", G.f32, scalar(ws), 4, 1)
    G.param_entry(case, "FilterZeroPointTensor", w.dtype, scalar(wzp), 4, 1)
    if bias is not None:
        case.tensor("BiasTensor", G.i32, [1, w.shape[0], 1, 1], bias)
    G.param_entry(case, "OutputScaleTensor", G.f32, scalar(ys), 4)
    G.param_entry(case, "OutputZeroPointTensor", out_t, scalar(yzp), 4)
    case.tensor("OutputTensor", out_t, spec.shape)
    case.params = {"Strides": list(strides), "Dilations": list(dil), "StartPadding": list(pads[:2]),
                   "EndPadding": list(pads[2:]), "GroupCount": group}
    return spec


def dequantize(case, ins, attrs):
    x, scale = ins[0], ins[1]
    zp = ins[2] if len(ins) > 2 else None
    bshape = [1] * x.ndim
    if scale.size > 1:
        bshape[attrs.get("axis", 1) % x.ndim] = scale.size
    spec = G.spec_dequantize(x, scale.reshape(bshape), None if zp is None else zp.astype(np.int64).reshape(bshape))
    strides = G.broadcast_layout(np.zeros(bshape), x.shape)
    case.tensor("InputTensor", x.dtype, x.shape, x)
    case.tensor("ScaleTensor", scale.dtype, x.shape, scale.ravel(), strides)
    if zp is not None:
        case.tensor("ZeroPointTensor", x.dtype, x.shape, zp.ravel(), strides)
    case.tensor("OutputTensor", scale.dtype, x.shape)
    return spec


def clip(case, ins):
    x = ins[0]
    lo = ins[1] if len(ins) > 1 and ins[1] is not None else None
    hi = ins[2] if len(ins) > 2 and ins[2] is not None else None
    dlo = float("-inf") if lo is None else float(lo)
    dhi = float("inf") if hi is None else float(hi)
    case.tensor("InputTensor", x.dtype, x.shape, x)
    case.tensor("OutputTensor", x.dtype, x.shape)
    as_param = (lambda v: G.json_value(G.f32(v))) if x.dtype.kind == "f" else (
        lambda v: G.json_value(G.f32(v)) if np.isinf(v) else int(v))
    case.params = {"Min": as_param(dlo), "Max": as_param(dhi)}
    return G.spec_clip(x, dlo, dhi)


def generate(data, root):
    np.seterr(all="ignore")
    g = G.Generator()
    skipped = []
    for d in sorted(Path(data).glob("test_*")):
        op_dir = next((v for k, v in PREFIXES.items() if d.name.startswith(k)), None)
        if op_dir is None:
            continue
        node, ins, expected, nsets = load_test(d)
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        operator = {"matmul": "QUANTIZED_LINEAR_MATRIX_MULTIPLY", "conv": "QUANTIZED_LINEAR_CONVOLUTION",
                    "dequantize": "ELEMENT_WISE_DEQUANTIZE_LINEAR", "clip": "ELEMENT_WISE_CLIP"}[op_dir]
        case = G.Case(op_dir, d.name[len("test_"):], operator,
                      f"ONNX backend node test {d.name} (data set 0 of {nsets}), expected output from ONNX")
        try:
            spec = {"matmul": lambda: matmul(case, ins), "conv": lambda: conv(case, ins, attrs),
                    "dequantize": lambda: dequantize(case, ins, attrs), "clip": lambda: clip(case, ins)}[op_dir]()
        except (NotImplementedError, KeyError) as e:
            skipped.append(f"{d.name}: {e}")
            continue
        g.accept(case, expected.reshape(spec.shape), spec, 0)
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    for c in g.cases:
        c.write(root)
    return g, skipped


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DATA, help="ONNX node test directory (default: %(default)s)")
    ap.add_argument("--out", type=Path, default=OUT, help="output directory (default tests/data/onnx)")
    ap.add_argument("--check", action="store_true", help="regenerate into a temporary directory and compare")
    args = ap.parse_args()
    if not args.data.is_dir():
        print(f"{args.data}: not found (apt-get install -y libonnx-testdata)", file=sys.stderr)
        return 2
    ok = True
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            g, skipped = generate(args.data, Path(tmp) / "onnx")
            diffs = G.diff_trees(Path(tmp) / "onnx", args.out)
            ok = not diffs
            print(f"{len(g.cases)} cases; " + ("identical" if ok else f"{len(diffs)} differences: {diffs[:10]}"))
    else:
        g, skipped = generate(args.data, args.out)
        print(f"wrote {len(g.cases)} cases to {args.out}")
    for s in skipped:
        print(f"skipped: {s}", file=sys.stderr)
    for rel, msg in g.disagreements:
        print(f"NOT WRITTEN (ONNX disagrees with docs/semantics.md): {rel}: {msg}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
