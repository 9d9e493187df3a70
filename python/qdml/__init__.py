"""qdml: DirectML's quantized operators on the CPU, bit for bit.

One function per operator, keyword arguments named as the DirectML desc
members, numpy arrays in and out::

    out = qdml.element_wise_clip(InputTensor=x, Min=-1.0, Max=1.0)

Tensors map to DML buffer tensors without copies: Sizes = ``a.shape``,
Strides = ``a.strides`` in elements (0 where ``np.broadcast_to`` repeats a
value), so transposed, sliced and broadcast views work as they are. Strides
that are negative or not a multiple of the element size have no DML
equivalent and raise :class:`Error` (pass ``np.ascontiguousarray(a)``); so
does a byte order other than the machine's. A 0-d array is a 1-D tensor of
one element. Optional tensors are ``None``.

The element-wise operators' scales and zero points take any shape that
broadcasts to their operand's (numpy's rule): dequantize's Scale and
ZeroPoint become ``np.broadcast_to(p, InputTensor.shape)`` views, stride 0
where a value repeats, DirectML's own form (a ``(1, 1)`` scale is per
tensor, a ``(C, 1)`` scale per axis 0 of a ``(C, W)`` input); the add's
become one element with ATensor's dimension count, as DirectML's add takes
them per tensor only. A shape that does not broadcast raises :class:`Error`.

``OutputTensor`` is ``None`` (a new array; its dtype from the desc where the
desc fixes it, else give it), a dtype (a new array of that type), or an
array, written in place (any writable view) and returned. Every call takes
``impl``, default ``DEFAULT_IMPLEMENTATION``: C++ ``qdml::run``'s default,
``"simd"`` (the fastest path, bit-identical to the reference); ``"reference"``
runs the scalar oracle (``IMPLEMENTATIONS`` lists both), and
``feature_level`` (``"latest"`` or a DML_FEATURE_LEVEL such as ``"6.2"``,
for validation), and ``fidelity``: ``"directml"`` (DirectML's own bits and
refusals) or ``"exact"`` (docs/semantics.md sections 0-9); ``None`` is C++
``qdml::RunOptions``' default, ``DEFAULT_FIDELITY`` (for ``run_case``: the
case's ``expected.fidelity`` first), and ``threads``: how many threads compute
a ``"simd"`` call (None: the CPUs this process may use; the reference always
computes on the calling thread). The bits never depend on it; the pool is
qdml's programs' own (one per thread count, started on first use), and
every call releases the GIL while it computes, so Python threads of your
own run qdml calls in parallel too. Invalid descs raise
:class:`Error` (a ValueError) with qdml's message,
``"OPERATOR: Member: rule"``.

``write_case`` writes a case file in the format of docs/case-format.md;
``run_case`` computes any case file in process, as ``qdml run`` does.
"""

import json
import math
import os

import numpy as np

from ._qdml import (DEFAULT_FIDELITY, DEFAULT_IMPLEMENTATION, DEFAULT_MAX_WORK, FIDELITIES, IMPLEMENTATIONS,
                    LATEST_FEATURE_LEVEL, Error)
from . import _qdml

Error.__module__ = __name__  # shown as qdml.Error

__all__ = [
    "Error", "element_wise_dequantize_linear", "element_wise_quantize_linear", "element_wise_quantized_linear_add",
    "quantized_linear_matrix_multiply", "quantized_linear_convolution", "element_wise_clip",
    "matrix_multiply_integer", "convolution_integer", "element_wise_clip1", "matrix_multiply_integer_to_float", "dynamic_quantize_linear", "quantized_linear_average_pooling", "quantize", "dequantize", "write_case", "run_case", "DEFAULT_IMPLEMENTATION", "DEFAULT_MAX_WORK", "IMPLEMENTATIONS",
    "LATEST_FEATURE_LEVEL", "DEFAULT_FIDELITY", "FIDELITIES",
]

_TYPES = {
    np.dtype(np.int8): "INT8", np.dtype(np.uint8): "UINT8", np.dtype(np.int16): "INT16",
    np.dtype(np.uint16): "UINT16", np.dtype(np.int32): "INT32", np.dtype(np.uint32): "UINT32",
    np.dtype(np.int64): "INT64", np.dtype(np.uint64): "UINT64", np.dtype(np.float16): "FLOAT16",
    np.dtype(np.float32): "FLOAT32", np.dtype(np.float64): "FLOAT64",
}


def _array(op, member, a):
    """`a` as an ndarray (no copy of an ndarray), 0-d as 1-D, checked for a DML type."""
    a = np.asarray(a)
    if a.ndim == 0:
        a = a.reshape(1)
    if a.dtype not in _TYPES or not a.dtype.isnative:
        raise Error(f"{op}: {member}: numpy dtype {a.dtype.str} has no DML data type "
                    f"(allowed: {', '.join(sorted({t.name for t in _TYPES}))}, native byte order)")
    return a


def _strides(op, member, a):
    """DML element strides of `a` (0 for a dimension of size 1)."""
    out = []
    for size, s in zip(a.shape, a.strides):
        if size == 1:
            out.append(0)
            continue
        if s < 0 or s % a.itemsize:
            raise Error(f"{op}: {member}: numpy strides {a.strides} (bytes) are "
                        f"{'negative' if s < 0 else 'not a multiple of the element size ' + str(a.itemsize)}; "
                        "DML strides are unsigned element counts (pass np.ascontiguousarray(...))")
        out.append(s // a.itemsize)
    if any(v > 0xFFFFFFFF for v in list(a.shape) + out):
        raise Error(f"{op}: {member}: sizes {a.shape} or element strides {tuple(out)} exceed DML's 32 bits")
    return out


def _tensor(op, member, a):
    return (_TYPES[a.dtype], a.__array_interface__["data"][0], list(a.shape), _strides(op, member, a))


def _json_value(v):
    """Params and inline values as JSON: numpy scalars as Python numbers,
    non-finite floats as "NaN", "Infinity", "-Infinity" (case-format.md)."""
    if isinstance(v, dict):
        return {str(k): _json_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, np.ndarray)):
        return [_json_value(x) for x in v]
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    return v


def _params(**kw):
    p = {k: v for k, v in kw.items() if v is not None}
    sb = p.get("ScaleBias")
    if isinstance(sb, (tuple, list)):
        p["ScaleBias"] = {"Scale": sb[0], "Bias": sb[1]}
    return _json_value(p)


def _output_layout(op, t, params):
    """(shape, dtype or None) of the output a desc implies."""
    if op == "ELEMENT_WISE_DEQUANTIZE_LINEAR":
        return t["InputTensor"].shape, t["ScaleTensor"].dtype
    if op in ("ELEMENT_WISE_CLIP", "ELEMENT_WISE_CLIP1"):
        return t["InputTensor"].shape, t["InputTensor"].dtype
    if op == "MATRIX_MULTIPLY_INTEGER":
        a, b = t["ATensor"].shape, t["BTensor"].shape
        return a[:-1] + b[-1:], np.dtype(np.int32)
    if op == "MATRIX_MULTIPLY_INTEGER_TO_FLOAT":
        a, b = t["ATensor"].shape, t["BTensor"].shape
        return a[:-1] + b[-1:], t["AScaleTensor"].dtype
    if op == "ELEMENT_WISE_QUANTIZE_LINEAR":
        zp = t.get("ZeroPointTensor")
        return t["InputTensor"].shape, None if zp is None else zp.dtype
    if op == "QUANTIZED_LINEAR_AVERAGE_POOLING":
        # N C H W or N C D H W; the output has the input's type
        x = t["InputTensor"].shape
        n = len(x) - 2
        if len(x) not in (4, 5):
            return x, t["InputTensor"].dtype  # validation names what is wrong
        spatial = []
        for i in range(n):
            stride = (params.get("Strides") or [1] * n)[i]
            window = (params.get("WindowSize") or [1] * n)[i]
            dilation = (params.get("Dilations") or [1] * n)[i]
            pad = (params.get("StartPadding") or [0] * n)[i] + (params.get("EndPadding") or [0] * n)[i]
            extent = x[2 + i] + pad - (window - 1) * dilation - 1
            spatial.append(max(extent // stride + 1, 1) if stride else 1)  # validation names what is wrong
        return (x[0], x[1], *spatial), t["InputTensor"].dtype
    zp = t.get("OutputZeroPointTensor")
    dtype = None if zp is None else zp.dtype
    if op == "ELEMENT_WISE_QUANTIZED_LINEAR_ADD":
        return t["ATensor"].shape, dtype
    if op == "QUANTIZED_LINEAR_MATRIX_MULTIPLY":
        a, b = t["ATensor"].shape, t["BTensor"].shape
        return a[:-1] + b[-1:], dtype
    if op == "CONVOLUTION_INTEGER":
        dtype = np.dtype(np.int32)
    # convolution: N C H W and OC C/G KH KW, or N C W and OC C/G KW (one spatial dimension)
    x, f = t["InputTensor"].shape, t["FilterTensor"].shape
    n = len(x) - 2
    if len(x) not in (3, 4) or len(f) != len(x):
        return x, dtype  # validation names what is wrong
    spatial = []
    for i in range(n):
        stride = (params.get("Strides") or [1] * n)[i]
        dilation = (params.get("Dilations") or [1] * n)[i]
        pad = (params.get("StartPadding") or [0] * n)[i] + (params.get("EndPadding") or [0] * n)[i]
        extent = x[2 + i] + pad - (f[2 + i] - 1) * dilation - 1
        spatial.append(max(extent // stride + 1, 1) if stride else 1)  # validation names what is wrong
    return (x[0], f[0], *spatial), dtype


# The element-wise operators' parameter tensors: (operand, members, per
# tensor only). Each member takes any shape that numpy broadcasts to the
# operand's (docs/semantics.md sections 1, 3 and 4).
_PARAMETERS = {
    "ELEMENT_WISE_DEQUANTIZE_LINEAR": ("InputTensor", ("ScaleTensor", "ZeroPointTensor"), False),
    "ELEMENT_WISE_QUANTIZE_LINEAR": ("InputTensor", ("ScaleTensor", "ZeroPointTensor"), False),
    "ELEMENT_WISE_QUANTIZED_LINEAR_ADD": ("ATensor", ("AScaleTensor", "AZeroPointTensor", "BScaleTensor",
                                                      "BZeroPointTensor", "OutputScaleTensor",
                                                      "OutputZeroPointTensor"), True),
}


def _broadcast_parameter(op, member, p, operand, shape, per_tensor):
    """`p` in DML's form for an operand of `shape`: its np.broadcast_to view
    (stride 0 where a value repeats), or for a per-tensor member the one
    element with Sizes all 1 and the operand's dimension count. No copy."""
    try:
        b = np.broadcast_to(p, shape)
    except ValueError:
        raise Error(f"{op}: {member}: shape {p.shape} does not broadcast to {operand}'s shape {shape} "
                    f"(numpy's rule: aligned from the right, each dimension 1 or equal to {operand}'s, "
                    f"none more than {operand} has)") from None
    if not per_tensor:
        return b
    if any(n > 1 and s != 0 for n, s in zip(b.shape, b.strides)):
        raise Error(f"{op}: {member}: shape {p.shape} gives {operand} more than one value; {op} takes "
                    "its scales and zero points per tensor (one element, e.g. shape (1,) * "
                    f"{operand}.ndim), not per axis")
    return b[(slice(0, 1),) * b.ndim]


def _inputs(op, tensors):
    t = {m: _array(op, m, a) for m, a in tensors.items() if a is not None}
    operand, members, per_tensor = _PARAMETERS.get(op, (None, (), False))
    if operand in t:
        for m in members:
            if m in t:
                t[m] = _broadcast_parameter(op, m, t[m], operand, t[operand].shape, per_tensor)
    return t


def _cores():
    """The CPUs this process may run on (its affinity mask, where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _threads(op, threads, impl):
    """The thread count of a call: ``threads``, or for None the process's
    cores with impl "simd" and 1 with the reference (which computes on the
    calling thread)."""
    if threads is None:
        return _cores() if impl == "simd" else 1
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 1024:
        raise Error(f"{op}: threads: must be an integer from 1 to 1024, got {threads!r}")
    if threads > 1 and impl != "simd":
        raise Error(f"{op}: threads: {threads} needs impl='simd' (the reference computes on the calling thread)")
    return threads


def _call(op, tensors, params, out, impl, feature_level, fidelity, threads):
    t = _inputs(op, tensors)
    if out is None or not isinstance(out, np.ndarray):
        shape, dtype = _output_layout(op, t, params)
        if out is not None:
            dtype = np.dtype(out)
        if dtype is None:
            zp = "ZeroPointTensor" if op == "ELEMENT_WISE_QUANTIZE_LINEAR" else "OutputZeroPointTensor"
            raise Error(f"{op}: OutputTensor: give its dtype (OutputTensor=np.uint8 or an array): "
                        f"there is no {zp} to take it from")
        out = np.empty(shape, dtype)
    o = _array(op, "OutputTensor", out)
    if not o.flags.writeable:
        raise Error(f"{op}: OutputTensor: the array is read-only")
    descs = {m: _tensor(op, m, a) for m, a in t.items()}
    descs["OutputTensor"] = _tensor(op, "OutputTensor", o)
    _qdml.run_operator(op, descs, json.dumps(params, allow_nan=False), impl, feature_level, fidelity or "",
                       _threads(op, threads, impl))
    return out


def element_wise_dequantize_linear(*, InputTensor, ScaleTensor, ZeroPointTensor=None, OutputTensor=None,
                                   impl=DEFAULT_IMPLEMENTATION, feature_level="latest", fidelity=None, threads=None):
    """DML_ELEMENT_WISE_DEQUANTIZE_LINEAR: fp32(Input - ZeroPoint) * Scale. Scale
    and ZeroPoint: any shape that broadcasts to Input's (a (1, 1) scale per
    tensor, (C, 1) per axis 0 of a (C, W) input), passed as stride-0 views."""
    return _call("ELEMENT_WISE_DEQUANTIZE_LINEAR",
                 dict(InputTensor=InputTensor, ScaleTensor=ScaleTensor, ZeroPointTensor=ZeroPointTensor),
                 {}, OutputTensor, impl, feature_level, fidelity, threads)


def element_wise_quantize_linear(*, InputTensor, ScaleTensor, ZeroPointTensor=None, OutputTensor=None,
                                 impl=DEFAULT_IMPLEMENTATION, feature_level="latest", fidelity=None, threads=None):
    """DML_ELEMENT_WISE_QUANTIZE_LINEAR: saturate(rne(x / Scale) + ZeroPoint), one
    binary32 division (docs/semantics.md section 11). Input float32, float16 or
    int32; Scale float32 (float16 with a float16 input); the output int8 or
    uint8, the zero point's dtype (without a zero point, give OutputTensor).
    Scale and ZeroPoint: any shape that broadcasts to Input's, passed as
    stride-0 views."""
    return _call("ELEMENT_WISE_QUANTIZE_LINEAR",
                 dict(InputTensor=InputTensor, ScaleTensor=ScaleTensor, ZeroPointTensor=ZeroPointTensor),
                 {}, OutputTensor, impl, feature_level, fidelity, threads)


def element_wise_quantized_linear_add(*, ATensor, AScaleTensor, BTensor, BScaleTensor, OutputScaleTensor,
                                      AZeroPointTensor=None, BZeroPointTensor=None, OutputZeroPointTensor=None,
                                      OutputTensor=None, impl=DEFAULT_IMPLEMENTATION, feature_level="latest", fidelity=None, threads=None):
    """DML_ELEMENT_WISE_QUANTIZED_LINEAR_ADD. Scales and zero points: one value
    each (per tensor), any shape that broadcasts to A's ((), (1,), (1, 1), ...);
    DML gets one element with A's number of dimensions."""
    return _call("ELEMENT_WISE_QUANTIZED_LINEAR_ADD",
                 dict(ATensor=ATensor, AScaleTensor=AScaleTensor, AZeroPointTensor=AZeroPointTensor,
                      BTensor=BTensor, BScaleTensor=BScaleTensor, BZeroPointTensor=BZeroPointTensor,
                      OutputScaleTensor=OutputScaleTensor, OutputZeroPointTensor=OutputZeroPointTensor),
                 {}, OutputTensor, impl, feature_level, fidelity, threads)


def quantized_linear_matrix_multiply(*, ATensor, AScaleTensor, BTensor, BScaleTensor, OutputScaleTensor,
                                     AZeroPointTensor=None, BZeroPointTensor=None, OutputZeroPointTensor=None,
                                     OutputTensor=None, impl=DEFAULT_IMPLEMENTATION, feature_level="latest", fidelity=None, threads=None):
    """DML_QUANTIZED_LINEAR_MATRIX_MULTIPLY: 2-4 dimensions, output [..., M, N]."""
    return _call("QUANTIZED_LINEAR_MATRIX_MULTIPLY",
                 dict(ATensor=ATensor, AScaleTensor=AScaleTensor, AZeroPointTensor=AZeroPointTensor,
                      BTensor=BTensor, BScaleTensor=BScaleTensor, BZeroPointTensor=BZeroPointTensor,
                      OutputScaleTensor=OutputScaleTensor, OutputZeroPointTensor=OutputZeroPointTensor),
                 {}, OutputTensor, impl, feature_level, fidelity, threads)


def quantized_linear_convolution(*, InputTensor, InputScaleTensor, FilterTensor, FilterScaleTensor,
                                 OutputScaleTensor, InputZeroPointTensor=None, FilterZeroPointTensor=None,
                                 BiasTensor=None, OutputZeroPointTensor=None, OutputTensor=None,
                                 Strides=None, Dilations=None, StartPadding=None, EndPadding=None,
                                 GroupCount=None, DimensionCount=None, impl=DEFAULT_IMPLEMENTATION,
                                 feature_level="latest", fidelity=None, threads=None):
    """DML_QUANTIZED_LINEAR_CONVOLUTION: NCHW input, OIHW filter (or NCW and OIW: one spatial
    dimension); params as DML, one entry per spatial dimension (defaults: Strides 1, Dilations 1,
    paddings 0, GroupCount 1)."""
    params = _params(Strides=Strides, Dilations=Dilations, StartPadding=StartPadding, EndPadding=EndPadding,
                     GroupCount=GroupCount, DimensionCount=DimensionCount)
    return _call("QUANTIZED_LINEAR_CONVOLUTION",
                 dict(InputTensor=InputTensor, InputScaleTensor=InputScaleTensor,
                      InputZeroPointTensor=InputZeroPointTensor, FilterTensor=FilterTensor,
                      FilterScaleTensor=FilterScaleTensor, FilterZeroPointTensor=FilterZeroPointTensor,
                      BiasTensor=BiasTensor, OutputScaleTensor=OutputScaleTensor,
                      OutputZeroPointTensor=OutputZeroPointTensor),
                 params, OutputTensor, impl, feature_level, fidelity, threads)


def element_wise_clip(*, InputTensor, Min, Max, ScaleBias=None, OutputTensor=None,
                      impl=DEFAULT_IMPLEMENTATION, feature_level="latest", fidelity=None, threads=None):
    """DML_ELEMENT_WISE_CLIP: max(Min, min(g(x), Max)), g(x) = x * Scale + Bias
    with ScaleBias=(Scale, Bias) (or {"Scale": s, "Bias": b}), else x.
    OutputTensor=InputTensor computes in place."""
    return _call("ELEMENT_WISE_CLIP", dict(InputTensor=InputTensor),
                 _params(Min=Min, Max=Max, ScaleBias=ScaleBias), OutputTensor, impl, feature_level, fidelity, threads)


def element_wise_clip1(*, InputTensor, Min, Max, ScaleBias=None, MinMaxDataType=None, OutputTensor=None,
                       impl=DEFAULT_IMPLEMENTATION, feature_level="latest", fidelity=None, threads=None):
    """DML_ELEMENT_WISE_CLIP1: min(Max, max(Min, g(x))), g(x) = x * Scale + Bias
    with ScaleBias=(Scale, Bias) (or {"Scale": s, "Bias": b}), else x. Min and Max
    are values of the tensor's type (MinMaxDataType, default the output's type),
    never converted: Python ints stay exact for INT64/UINT64.
    OutputTensor=InputTensor computes in place."""
    return _call("ELEMENT_WISE_CLIP1", dict(InputTensor=InputTensor),
                 _params(Min=Min, Max=Max, ScaleBias=ScaleBias, MinMaxDataType=MinMaxDataType), OutputTensor, impl,
                 feature_level, fidelity, threads)


def matrix_multiply_integer(*, ATensor, BTensor, AZeroPointTensor=None, BZeroPointTensor=None, OutputTensor=None,
                            impl=DEFAULT_IMPLEMENTATION, feature_level="latest", fidelity=None, threads=None):
    """DML_MATRIX_MULTIPLY_INTEGER: sum_k (A - AZeroPoint)(B - BZeroPoint), INT32 (wrapping).
    2-4 dimensions, output [..., M, N]; AZeroPoint per tensor or per row ((M, 1)),
    BZeroPoint per tensor or per column ((1, N) or (N,))."""
    return _call("MATRIX_MULTIPLY_INTEGER",
                 dict(ATensor=ATensor, AZeroPointTensor=AZeroPointTensor, BTensor=BTensor,
                      BZeroPointTensor=BZeroPointTensor),
                 {}, OutputTensor, impl, feature_level, fidelity, threads)


def matrix_multiply_integer_to_float(*, ATensor, AScaleTensor, BTensor, BScaleTensor, AZeroPointTensor=None,
                                     BZeroPointTensor=None, BiasTensor=None, OutputTensor=None,
                                     impl=DEFAULT_IMPLEMENTATION, feature_level="latest", fidelity=None, threads=None):
    """DML_MATRIX_MULTIPLY_INTEGER_TO_FLOAT (feature level 6.2): the integer product of A and B
    (8-, 16- or 32-bit integers, zero points per tensor or per row / column) scaled to float32
    or float16 (the scales' type), plus BiasTensor (the output's shape). 2-4 dimensions, output
    [..., M, N]. fidelity="exact": fp32(acc) * fp32(AScale * BScale) + Bias (ONNX Runtime's
    MatMulIntegerToFloat); "directml": the dequantized operands summed in float32 in k order
    (docs/semantics.md section 16)."""
    return _call("MATRIX_MULTIPLY_INTEGER_TO_FLOAT",
                 dict(ATensor=ATensor, AScaleTensor=AScaleTensor, AZeroPointTensor=AZeroPointTensor,
                      BTensor=BTensor, BScaleTensor=BScaleTensor, BZeroPointTensor=BZeroPointTensor,
                      BiasTensor=BiasTensor),
                 {}, OutputTensor, impl, feature_level, fidelity, threads)

def dynamic_quantize_linear(*, InputTensor, OutputTensor=None, OutputScaleTensor=None, OutputZeroPointTensor=None,
                            impl=DEFAULT_IMPLEMENTATION, feature_level="latest", fidelity=None, threads=None):
    """DML_DYNAMIC_QUANTIZE_LINEAR (feature level 4.0): quantizes a float32 or float16 tensor
    with a scale and zero point computed from its range widened to include 0 (NaN skipped);
    returns (OutputTensor, OutputScaleTensor, OutputZeroPointTensor), ONNX's
    DynamicQuantizeLinear's (y, y_scale, y_zero_point). OutputTensor: None (uint8, ONNX's
    type), a dtype (np.uint8 or np.int8) or an array; the scale (float32) and zero point
    (the output's dtype) have one element each and the input's dimension count: None or
    arrays of that shape, written in place. fidelity="exact": s = (M - m) / 255, x / s;
    "directml": s = (M - m) * float32(1/255), x * (1 / s) (docs/semantics.md section 15)."""
    op = "DYNAMIC_QUANTIZE_LINEAR"
    x = _array(op, "InputTensor", InputTensor)
    one = (1,) * x.ndim
    outs = {}
    for member, given, default in (("OutputTensor", OutputTensor, np.uint8),
                                   ("OutputScaleTensor", OutputScaleTensor, np.float32),
                                   ("OutputZeroPointTensor", OutputZeroPointTensor, None)):
        if given is None or not isinstance(given, np.ndarray):
            dtype = np.dtype(given) if given is not None else (
                np.dtype(default) if default is not None else outs["OutputTensor"].dtype)
            given = np.empty(x.shape if member == "OutputTensor" else one, dtype)
        o = _array(op, member, given)
        if not o.flags.writeable:
            raise Error(f"{op}: {member}: the array is read-only")
        outs[member] = o
    descs = {"InputTensor": _tensor(op, "InputTensor", x)}
    descs.update({m: _tensor(op, m, o) for m, o in outs.items()})
    _qdml.run_operator(op, descs, "{}", impl, feature_level, fidelity or "", _threads(op, threads, impl))
    return outs["OutputTensor"], outs["OutputScaleTensor"], outs["OutputZeroPointTensor"]


# QUANTIZE and DEQUANTIZE's 4-bit types: numpy has none, so their arrays are
# int8 (INT4) or uint8 (UINT4), one element an entry; qdml packs them two a byte.
_QUANTIZED_TYPES = {"INT8": np.int8, "UINT8": np.uint8, "INT4": np.int8, "UINT4": np.uint8}


def _quantized_type(op, member, given, dtype):
    """The DML type name of the quantized side: `given` ("INT8", "UINT8", "INT4", "UINT4"),
    else the numpy dtype's (int8, uint8)."""
    if given is None:
        if dtype is None:
            return None
        given = _TYPES.get(np.dtype(dtype))
        if given not in ("INT8", "UINT8"):
            raise Error(f"{op}: {member}: dtype {np.dtype(dtype).name} is not a quantized type (int8, uint8; "
                        "for 4 bits give the type name: 'INT4' or 'UINT4')")
        return given
    if given not in _QUANTIZED_TYPES:
        raise Error(f"{op}: {member}: {given!r} is none of {', '.join(_QUANTIZED_TYPES)}")
    return given


def _quantization_tensors(op, given, x=None):
    """QUANTIZE/DEQUANTIZE's QuantizationTensors as a list of one or two
    ([scale] or [scale, zero_point]); with the input `x`, as arrays, each of
    fewer dimensions right-aligned (leading sizes 1)."""
    qts = list(given) if isinstance(given, (list, tuple)) else [given]
    if not 1 <= len(qts) <= 2:
        raise Error(f"{op}: QuantizationTensors: give [scale] or [scale, zero_point], got {len(qts)} tensors")
    if x is None:
        return qts
    qts = [_array(op, f"QuantizationTensors[{k}]", a) for k, a in enumerate(qts)]
    return [a.reshape((1,) * (x.ndim - a.ndim) + a.shape) if a.ndim < x.ndim else a for a in qts]


def _qdq(op, InputTensor, QuantizationTensors, QuantizationType, OutputTensor, qtype_name, impl, feature_level,
         fidelity, threads):
    quantize = op == "QUANTIZE"
    x = _array(op, "InputTensor", InputTensor)
    qts = _quantization_tensors(op, QuantizationTensors, x)
    if QuantizationType is None:
        QuantizationType = "SCALE_ZERO_POINT" if len(qts) == 2 else "SCALE"
    params = {"QuantizationType": QuantizationType}
    t = {f"QuantizationTensors[{k}]": a for k, a in enumerate(qts)}
    zp = t.get("QuantizationTensors[1]")
    if quantize:
        out_dtype = OutputTensor.dtype if isinstance(OutputTensor, np.ndarray) else (
            OutputTensor if OutputTensor is not None else (None if zp is None else zp.dtype))
        qname = _quantized_type(op, "OutputTensor", qtype_name, out_dtype)
        if qname is None:
            raise Error(f"{op}: OutputTensor: give its type (OutputType='UINT8', 'INT4', ... or OutputTensor=np.uint8 "
                        "or an array): there is no zero point to take it from")
        out_shape, out_np = x.shape, _QUANTIZED_TYPES[qname]
        quantized = ["OutputTensor", "QuantizationTensors[1]"]
    else:
        qname = _quantized_type(op, "InputTensor", qtype_name, x.dtype)
        out_shape, out_np = x.shape, t["QuantizationTensors[0]"].dtype
        quantized = ["InputTensor", "QuantizationTensors[1]"]
    if OutputTensor is None or not isinstance(OutputTensor, np.ndarray):
        OutputTensor = np.empty(out_shape, out_np)
    o = _array(op, "OutputTensor", OutputTensor)
    if not o.flags.writeable:
        raise Error(f"{op}: OutputTensor: the array is read-only")
    t["InputTensor"], t["OutputTensor"] = x, o
    descs = {}
    for m, a in t.items():
        d = _tensor(op, m, a)
        if m in quantized and qname in ("INT4", "UINT4"):
            if a.dtype != np.dtype(_QUANTIZED_TYPES[qname]):
                raise Error(f"{op}: {m}: a {qname} tensor is a {np.dtype(_QUANTIZED_TYPES[qname]).name} array "
                            f"(one element an entry), got {a.dtype.name}")
            d = (qname,) + d[1:]
        descs[m] = d
    _qdml.run_operator(op, descs, json.dumps(params, allow_nan=False), impl, feature_level, fidelity or "",
                       _threads(op, threads, impl))
    return OutputTensor


def quantize(*, InputTensor, QuantizationTensors, QuantizationType=None, OutputTensor=None, OutputType=None,
             impl=DEFAULT_IMPLEMENTATION, feature_level="latest", fidelity=None, threads=None):
    """DML_QUANTIZE (feature level 6.3): saturate(rne(x / scale) + zero_point), one float32
    division, NaN to the type's low end (docs/semantics.md section 18). QuantizationTensors:
    [scale] or [scale, zero_point]; each with Input's number of dimensions (fewer: leading 1s)
    and sizes that divide Input's (one value per block: (1, 1) per tensor, (N, K // 32) blocks
    of 32 along K). QuantizationType: "SCALE" or "SCALE_ZERO_POINT" (default by the count;
    SCALE's zero point is 8 for UINT4, 128 for UINT8, 0 for the signed types). OutputType:
    "INT8", "UINT8", "INT4" or "UINT4" (default: the zero point's or OutputTensor's dtype);
    a 4-bit tensor is an int8 (INT4) or uint8 (UINT4) array, one element an entry."""
    return _qdq("QUANTIZE", InputTensor, QuantizationTensors, QuantizationType, OutputTensor, OutputType, impl,
                feature_level, fidelity, threads)


def dequantize(*, InputTensor, QuantizationTensors, QuantizationType=None, OutputTensor=None, InputType=None,
               impl=DEFAULT_IMPLEMENTATION, feature_level="latest", fidelity=None, threads=None):
    """DML_DEQUANTIZE (feature level 6.3): float32(x - zero_point) * scale per block, the
    output the scale's dtype (float32 or float16). QuantizationTensors and QuantizationType as
    quantize's. InputType: "INT4" or "UINT4" for a 4-bit input (an int8 or uint8 array, one
    element an entry; the zero point likewise), else the input's dtype (int8, uint8)."""
    return _qdq("DEQUANTIZE", InputTensor, QuantizationTensors, QuantizationType, OutputTensor, InputType, impl,
                feature_level, fidelity, threads)


def convolution_integer(*, InputTensor, FilterTensor, InputZeroPointTensor=None, FilterZeroPointTensor=None,
                        OutputTensor=None, Strides=None, Dilations=None, StartPadding=None, EndPadding=None,
                        GroupCount=None, DimensionCount=None, impl=DEFAULT_IMPLEMENTATION, feature_level="latest",
                        fidelity=None, threads=None):
    """DML_CONVOLUTION_INTEGER: sum (Input - InputZeroPoint)(Filter - FilterZeroPoint), INT32 (wrapping).
    NCHW input, OIHW filter (or NCW and OIW); InputZeroPoint per tensor, FilterZeroPoint per tensor
    or per output channel ((1, Cout, 1, 1)); params as QUANTIZED_LINEAR_CONVOLUTION's."""
    params = _params(Strides=Strides, Dilations=Dilations, StartPadding=StartPadding, EndPadding=EndPadding,
                     GroupCount=GroupCount, DimensionCount=DimensionCount)
    return _call("CONVOLUTION_INTEGER",
                 dict(InputTensor=InputTensor, InputZeroPointTensor=InputZeroPointTensor, FilterTensor=FilterTensor,
                      FilterZeroPointTensor=FilterZeroPointTensor),
                 params, OutputTensor, impl, feature_level, fidelity, threads)

def quantized_linear_average_pooling(*, InputTensor, InputScaleTensor, OutputScaleTensor, InputZeroPointTensor=None,
                                     OutputZeroPointTensor=None, OutputTensor=None, Strides=None, WindowSize=None,
                                     StartPadding=None, EndPadding=None, Dilations=None, IncludePadding=None,
                                     DimensionCount=None, impl=DEFAULT_IMPLEMENTATION, feature_level="latest",
                                     fidelity=None, threads=None):
    """DML_QUANTIZED_LINEAR_AVERAGE_POOLING: the window's (Input - InputZeroPoint) * InputScale summed in
    binary32, divided by its size (IncludePadding) or by its taps inside the input, by OutputScale, then
    quantized with OutputZeroPoint (ties to even). NCHW or NCDHW input (two or three spatial dimensions);
    scales and zero points per tensor ((1, 1, 1, 1)) or per channel ((1, C, 1, 1)); params as DML, one
    entry per spatial dimension (defaults: Strides, WindowSize, Dilations 1, paddings 0, IncludePadding
    False). The output has the input's type."""
    params = _params(Strides=Strides, WindowSize=WindowSize, StartPadding=StartPadding, EndPadding=EndPadding,
                     Dilations=Dilations, IncludePadding=IncludePadding, DimensionCount=DimensionCount)
    return _call("QUANTIZED_LINEAR_AVERAGE_POOLING",
                 dict(InputTensor=InputTensor, InputScaleTensor=InputScaleTensor,
                      InputZeroPointTensor=InputZeroPointTensor, OutputScaleTensor=OutputScaleTensor,
                      OutputZeroPointTensor=OutputZeroPointTensor),
                 params, OutputTensor, impl, feature_level, fidelity, threads)

# ---------------------------------------------------------------------------
# Case files (docs/case-format.md)

_INLINE_MAX = 16  # buffers of up to this many elements go inline as "values"


def _buffer(op, member, a):
    """The memory-order buffer of `a` (dot(sizes-1, strides)+1 elements from
    element [0,...,0]) and its DML strides, None when packed row-major."""
    strides = _strides(op, member, a)
    span = sum((n - 1) * s for n, s in zip(a.shape, strides)) + 1
    buf = np.lib.stride_tricks.as_strided(a, shape=(span,), strides=(a.itemsize,), writeable=False)
    packed, acc = [], 1
    for n in reversed(a.shape):
        packed.insert(0, acc if n != 1 else 0)
        acc *= n
    return buf, (None if strides == packed else strides)


def _check_members(op, tensors, params):
    """The runner's member and param lists: unknown or missing names raise Error."""
    known = _qdml.operators()
    if op not in known:
        raise Error(f"{op}: unknown operator (known: {', '.join(known)})")
    members, param_names = known[op]
    for m in tensors:
        if m not in dict(members):
            raise Error(f"{op}: {m}: not a member (members: {', '.join(n for n, _ in members)})")
    for m, kind in members:
        if kind == "required" and tensors.get(m) is None:
            raise Error(f"{op}: {m}: missing (required by {op})")
    for p in params:
        if p not in param_names:
            raise Error(f"{op}: params.{p}: not a parameter of {op} ({', '.join(param_names) or 'it has none'})")


def _case_outputs(op, t, outs, params, types):
    """The output arrays of a case (their values are never written): each
    given array as it is, a dtype or type name or None as the operator
    function would allocate it."""
    res = {}
    if op == "DYNAMIC_QUANTIZE_LINEAR":
        x = t["InputTensor"]
        for m, default in (("OutputTensor", np.uint8), ("OutputScaleTensor", np.float32),
                           ("OutputZeroPointTensor", None)):
            given = outs.get(m)
            if not isinstance(given, np.ndarray):
                dtype = np.dtype(given) if given is not None else (
                    np.dtype(default) if default is not None else res["OutputTensor"].dtype)
                given = np.empty(x.shape if m == "OutputTensor" else (1,) * x.ndim, dtype)
            res[m] = _array(op, m, given)
        return res
    out = outs.get("OutputTensor")
    if not isinstance(out, np.ndarray):
        if op in ("QUANTIZE", "DEQUANTIZE"):
            x, qts = t["InputTensor"], t["QuantizationTensors"]
            if op == "QUANTIZE":
                name = types.get("OutputTensor")
                dtype = (np.dtype(_QUANTIZED_TYPES[name]) if name else np.dtype(out) if out is not None
                         else qts[1].dtype if len(qts) > 1 else None)
            else:
                dtype = np.dtype(out) if out is not None else qts[0].dtype
            shape = x.shape
        else:
            shape, dtype = _output_layout(op, t, params)
            dtype = np.dtype(out) if out is not None else dtype
        if dtype is None:
            raise Error(f"{op}: OutputTensor: give its dtype (there is no zero point to take it from)")
        out = np.empty(shape, dtype)
    res["OutputTensor"] = _array(op, "OutputTensor", out)
    return res


def write_case(path, operator, tensors, params=None, expected=None, types=None):
    """Writes a case file: `operator` is a DML operator name (or this module's
    function name); `tensors` maps DML member names to arrays, each output's
    dtype, shape and strides taken from its entry if given as an array (its
    values are ignored) or its dtype if given as one, else as the operator
    function would allocate it; `params` by DML name; `expected` an array
    (bit-exact), a dict {"data": array, "tolerance": t}, or {"error": True};
    for an operator with several outputs (DYNAMIC_QUANTIZE_LINEAR) a dict
    keyed by output member, each an array or {"data": ..., "tolerance": ...}.
    QUANTIZE and DEQUANTIZE take tensors["QuantizationTensors"] = [scale] or
    [scale, zero_point] (fewer dimensions than the input: leading 1s, as
    quantize() reads them; QuantizationType defaults by the count), and
    `types` names 4-bit tensors: {"OutputTensor": "INT4"} (QUANTIZE) or
    {"InputTensor": "UINT4"} (DEQUANTIZE), each an int8 or uint8 array one
    element an entry (the zero point takes the same type). Buffers of up to
    16 elements are written inline ("values"), larger ones to
    `<case stem>.<member>.npy` next to the JSON; strided and broadcast views
    keep their strides, and the element-wise operators' scales and zero
    points are broadcast as the operator functions do (so the case means
    what the call means). Returns `path`."""
    op = operator.upper()
    params = _params(**(params or {}))
    types = dict(types or {})
    if op in ("QUANTIZE", "DEQUANTIZE") and "QuantizationTensors" in tensors:  # the list, as the functions take it
        qts = _quantization_tensors(op, tensors["QuantizationTensors"])
        named = {m: a for m, a in tensors.items() if m != "QuantizationTensors"}
        named.update({f"QuantizationTensors[{k}]": a for k, a in enumerate(qts)})
        _check_members(op, named, params)
    else:
        _check_members(op, tensors, params)
    members = _qdml.operators()[op][0]
    output_members = [m for m, kind in members if kind == "output"]
    qdq = op in ("QUANTIZE", "DEQUANTIZE")
    for m, name in types.items():
        if m not in dict(members) or m.startswith("QuantizationTensors"):
            raise Error(f"{op}: types: {m} is not a tensor member of {op}")
        if not qdq or name not in ("INT4", "UINT4") or m != ("OutputTensor" if op == "QUANTIZE" else "InputTensor"):
            raise Error(f"{op}: types: {m}: {name!r}: only QUANTIZE's OutputTensor and DEQUANTIZE's InputTensor "
                        "take a type name, 'INT4' or 'UINT4' (other tensors' types are their dtypes)")
    if qdq:
        x = _array(op, "InputTensor", tensors["InputTensor"])
        qts = _quantization_tensors(op, tensors["QuantizationTensors"], x)
        params.setdefault("QuantizationType", "SCALE_ZERO_POINT" if len(qts) == 2 else "SCALE")
        t = {"InputTensor": x, "QuantizationTensors": qts}
    else:
        t = _inputs(op, {m: a for m, a in tensors.items() if m not in output_members})
    outs = _case_outputs(op, t, {m: tensors.get(m) for m in output_members}, params, types)
    nibble = next(iter(types.values()), None)  # the 4-bit type of the quantized side, if any
    quantized = {"OutputTensor", "QuantizationTensors[1]"} if op == "QUANTIZE" else {"InputTensor",
                                                                                     "QuantizationTensors[1]"}
    directory, stem = os.path.dirname(path), os.path.splitext(os.path.basename(path))[0]

    def npy(name, a):
        file = f"{stem}.{name}.npy"
        np.save(os.path.join(directory, file), a)
        return file

    def type_name(m, a):
        if nibble is not None and m in quantized:
            if a.dtype != np.dtype(_QUANTIZED_TYPES[nibble]):
                raise Error(f"{op}: {m}: a {nibble} tensor is a {np.dtype(_QUANTIZED_TYPES[nibble]).name} array "
                            f"(one element an entry), got {a.dtype.name}")
            lo, hi = (-8, 7) if nibble == "INT4" else (0, 15)
            if m != "OutputTensor" and a.size and (a.min() < lo or a.max() > hi):
                raise Error(f"{op}: {m}: {nibble} values lie in {lo}..{hi}")
            return nibble
        return _TYPES[a.dtype]

    def input_entry(m, a, file_name):
        buf, strides = _buffer(op, m, a)
        entry = {"type": type_name(m, a), "sizes": list(a.shape)}
        if strides is not None:
            entry["strides"] = strides
        if buf.size <= _INLINE_MAX:
            entry["values"] = _json_value(buf.tolist())
        else:
            entry["data"] = npy(file_name, buf)
        return entry

    case_tensors = {}
    for m, a in t.items():
        if m == "QuantizationTensors":
            case_tensors[m] = [input_entry(f"QuantizationTensors[{k}]", q, f"QuantizationTensors{k}")
                               for k, q in enumerate(a)]
        else:
            case_tensors[m] = input_entry(m, a, m)
    for m, a in outs.items():
        o = {"type": type_name(m, a), "sizes": list(a.shape)}
        _, strides = _buffer(op, m, a)
        if strides is not None:
            o["strides"] = strides
        case_tensors[m] = o
    case = {"operator": op, "tensors": case_tensors, "params": params}

    def expected_entry(m, e, file_name):
        data, tol = (e["data"], e.get("tolerance", 0)) if isinstance(e, dict) else (e, 0)
        data = np.ascontiguousarray(_array(op, f"expected {m}", data))
        if data.dtype != outs[m].dtype or data.size != outs[m].size:
            raise Error(f"{op}: expected {m}: {data.dtype.name} with {data.size} elements, the output is "
                        f"{outs[m].dtype.name} with {outs[m].size}")
        return {"data": npy(file_name, data), "tolerance": _json_value(tol)}

    if expected is not None:
        if isinstance(expected, dict) and expected.get("error"):
            case["expected"] = {"error": True}
        elif len(output_members) > 1:
            if not isinstance(expected, dict) or set(expected) != set(output_members):
                raise Error(f"{op}: expected: a dict keyed by every output member ({', '.join(output_members)}), "
                            "or {'error': True}")
            case["expected"] = {m: expected_entry(m, expected[m], f"expected.{m}") for m in output_members}
        else:
            case["expected"] = expected_entry("OutputTensor", expected, "expected")
    with open(path, "w") as f:
        f.write(_format_case(case))
    return path


def _format_case(case):
    """The case as JSON, one line per top-level field and per tensor (as the examples are written)."""
    dump = lambda v: json.dumps(v, allow_nan=False)
    fields = []
    for key, value in case.items():
        if key == "tensors":
            value = "{\n" + ",\n".join(f"  {dump(m)}: {dump(t)}" for m, t in value.items()) + "\n }"
        else:
            value = dump(value)
        fields.append(f" {dump(key)}: {value}")
    return "{\n" + ",\n".join(fields) + "\n}\n"


def run_case(path, impl=DEFAULT_IMPLEMENTATION, feature_level="latest", max_work=DEFAULT_MAX_WORK, fidelity=None,
             threads=None):
    """Computes a case file in process (the runner's loader and limits, as
    `qdml run`): returns the output tensor, shape Sizes, logical order (what
    `qdml run --out` writes); for an operator with several outputs
    (DYNAMIC_QUANTIZE_LINEAR) a tuple of them, in member order. Raises Error
    for any input the runner rejects."""
    outs = _qdml.run_case(os.fspath(path), impl, feature_level, max_work, fidelity or "",
                          _threads(os.fspath(path), threads, impl))
    return outs[0] if len(outs) == 1 else tuple(outs)
