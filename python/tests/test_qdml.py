"""Tests of the qdml Python package (pytest; .ci/run runs them after pip install .).

Expected values are derived by hand from docs/semantics.md or computed here
with numpy's binary32 arithmetic, one rounding per operation in the order
the spec writes it (an oracle independent of qdml's C++ code), never copied
from qdml's output. QDML_CLI names the runner (build/tools/qdml) for the
round trips through the command line.
"""
import inspect
import json
import os
import pathlib
import re
import subprocess

import numpy as np
import pytest

import qdml

ROOT = pathlib.Path(__file__).resolve().parents[2]
f32 = np.float32


def per_tensor(value, dtype, ndim):
    """A one-element tensor with `ndim` dimensions (DML's per-tensor form)."""
    return np.full((1,) * ndim, value, dtype)


def quantize(v, zp, dtype):
    """Q(v, zp, T) of the spec in numpy: clamp in binary32 to [lo-zp, hi-zp]
    (NaN to lo-zp), round half to even, add zp."""
    lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
    v = np.where(np.isnan(v), f32(lo - zp), v).astype(f32)
    v = np.clip(v, f32(lo - zp), f32(hi - zp))
    return (np.rint(v).astype(np.int64) + zp).astype(dtype)


def same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes(), f"{a} != {b}"


# --- one test per operator --------------------------------------------------

def test_dequantize_broadcast_scale_and_zero_point():
    x = np.array([[-128, 0, 127], [5, 3, -3]], np.int8)
    scale = np.broadcast_to(np.array([0.5, 0.25, 2.0], f32), x.shape)  # per column, stride 0 on rows
    zp = np.broadcast_to(np.int8(3), x.shape)                        # per tensor, strides 0
    out = qdml.element_wise_dequantize_linear(InputTensor=x, ScaleTensor=scale, ZeroPointTensor=zp)
    # (x - 3) * scale, by hand
    same_bits(out, np.array([[-65.5, -0.75, 248.0], [1.0, 0.0, -12.0]], f32))


def test_dequantize_float16_output():
    # fp32(x - zp) * scale in binary32, then rounded once to binary16: 2049 * 1.0
    # is 2049 (exact in binary32), a tie between binary16 2048 and 2050 -> 2048
    # (even); 2051 -> 2052 (even); -3 * 0.1 rounds to binary16 once.
    x = np.array([2049, 2051, -3, 65520], np.int32)
    scale16 = np.array([1.0, 1.0, 0.0999755859375, 1.0], np.float16)
    out = qdml.element_wise_dequantize_linear(InputTensor=x, ScaleTensor=scale16)
    assert out.dtype == np.float16
    with np.errstate(over="ignore"):
        expect = (x.astype(f32) * scale16.astype(f32)).astype(np.float16)
    same_bits(out, expect)
    assert out[0] == 2048 and out[1] == 2052 and out[3] == np.inf  # 65520: the tie above 65504 rounds to inf


def test_quantize_division_ties_and_broadcast_parameters():
    # By hand: 2.25 / 0.3f = 7.4999995 (a binary32 division) -> 7, where 2.25 * (1 / 0.3f) = 7.5 would
    # give 8; 1.25 / 0.5 = 2.5 -> 2 and 1.75 / 0.5 = 3.5 -> 4 (ties to even); zero point per row.
    x = np.array([[2.25, 1.25, 1.75], [-2.25, 300.0, -np.inf]], f32)
    scale = np.array([0.3, 0.5, 0.5], f32)               # per column: broadcast to (2, 3), stride 0 on rows
    zp = np.array([[0], [-100]], np.int8)                # per row
    out = qdml.element_wise_quantize_linear(InputTensor=x, ScaleTensor=scale, ZeroPointTensor=zp)
    assert out.dtype == np.int8
    assert out.tolist() == [[7, 2, 4], [-107, 127, -128]]  # 300 / 0.5 - 100 = 500 -> 127; -inf -> -128


def test_quantize_output_dtype_and_nan_per_profile():
    x = np.array([np.nan, 5.0], f32)
    with pytest.raises(qdml.Error, match="ELEMENT_WISE_QUANTIZE_LINEAR: OutputTensor: give its dtype"):
        qdml.element_wise_quantize_linear(InputTensor=x, ScaleTensor=np.float32(1))
    # Without a zero point NaN gives 0 in the directml profile and the low end (-128) in the exact one.
    assert qdml.element_wise_quantize_linear(InputTensor=x, ScaleTensor=np.float32(1),
                                             OutputTensor=np.int8).tolist() == [0, 5]
    assert qdml.element_wise_quantize_linear(InputTensor=x, ScaleTensor=np.float32(1), OutputTensor=np.int8,
                                             fidelity="exact").tolist() == [-128, 5]


def test_add_every_operand_broadcast():
    rng = np.random.default_rng(1)
    a = rng.integers(-128, 128, (3, 4), dtype=np.int8)
    b_row = rng.integers(0, 256, 4, dtype=np.uint8)
    b = np.broadcast_to(b_row, (3, 4))
    sa, sb, so = f32(0.05), f32(0.1), f32(0.2)
    za, zb, zo = np.int8(-3), np.uint8(128), np.uint8(100)
    out = qdml.element_wise_quantized_linear_add(
        ATensor=a, AScaleTensor=per_tensor(sa, f32, 2), AZeroPointTensor=per_tensor(za, np.int8, 2),
        BTensor=b, BScaleTensor=per_tensor(sb, f32, 2), BZeroPointTensor=per_tensor(zb, np.uint8, 2),
        OutputScaleTensor=per_tensor(so, f32, 2), OutputZeroPointTensor=per_tensor(zo, np.uint8, 2))
    v = ((a.astype(np.int32) - za).astype(f32) * sa + (b.astype(np.int32) - zb).astype(f32) * sb) / so
    same_bits(out, quantize(v, int(zo), np.uint8))


def test_add_output_dtype_required_without_output_zero_point():
    one = per_tensor(1.0, f32, 1)
    a = np.array([1, 2], np.int8)
    with pytest.raises(qdml.Error, match="OutputTensor: give its dtype"):
        qdml.element_wise_quantized_linear_add(ATensor=a, AScaleTensor=one, BTensor=a, BScaleTensor=one,
                                               OutputScaleTensor=one)
    out = qdml.element_wise_quantized_linear_add(ATensor=a, AScaleTensor=one, BTensor=a, BScaleTensor=one,
                                                 OutputScaleTensor=one, OutputTensor=np.int8)
    same_bits(out, np.array([2, 4], np.int8))


def matmul_oracle(a, b, sa, za, sb, zb, so, zo, out_dtype):
    acc = (a.astype(np.int64) - za) @ (b.astype(np.int64) - zb)      # no int32 wrap at these sizes
    multiplier = f32(sa * sb) / so                                      # binary32, two roundings
    return quantize(acc.astype(f32) * multiplier, int(zo), out_dtype)


def test_matmul_transposed_and_sliced_views():
    rng = np.random.default_rng(2)
    a_t = rng.integers(0, 256, (5, 3), dtype=np.uint8)   # A = a_t.T: 3x5, strides (1, 3)
    b_wide = rng.integers(-128, 128, (5, 8), dtype=np.int8)
    b = b_wide[:, ::2]                                    # 5x4, strides (8, 2)
    sa, za, sb, zb, so, zo = f32(0.02), np.uint8(120), f32(0.03), np.int8(2), f32(0.07), np.uint8(128)
    out = qdml.quantized_linear_matrix_multiply(
        ATensor=a_t.T, AScaleTensor=per_tensor(sa, f32, 2), AZeroPointTensor=per_tensor(za, np.uint8, 2),
        BTensor=b, BScaleTensor=per_tensor(sb, f32, 2), BZeroPointTensor=per_tensor(zb, np.int8, 2),
        OutputScaleTensor=per_tensor(so, f32, 2), OutputZeroPointTensor=per_tensor(zo, np.uint8, 2))
    assert out.shape == (3, 4)
    same_bits(out, matmul_oracle(a_t.T, b, sa, za, sb, zb, so, zo, np.uint8))


def test_matmul_into_a_strided_output_view():
    a = np.array([[5, 3]], np.int8).reshape(1, 2)
    b = np.array([[1, 2, 3], [4, 5, 6]], np.int8)
    one = per_tensor(1.0, f32, 2)
    storage = np.full((2, 6), 77, np.int8)
    view = storage[:1, ::2]                              # 1x3, element strides (6, 2)
    res = qdml.quantized_linear_matrix_multiply(ATensor=a, AScaleTensor=one, BTensor=b, BScaleTensor=one,
                                                OutputScaleTensor=one, OutputTensor=view)
    assert res is view
    same_bits(storage[0, ::2], np.array([5 + 12, 10 + 15, 15 + 18], np.int8))  # [5,3] @ B by hand
    assert (storage[0, 1::2] == 77).all() and (storage[1] == 77).all()       # untouched


def test_convolution_padding_and_bias():
    # 1x1x3x3 input, one 2x2 filter, padding 1 at the start only, Bias 10;
    # scales 1, zero points 0: plain integer correlation, by hand.
    x = np.arange(1, 10, dtype=np.uint8).reshape(1, 1, 3, 3)
    w = np.array([[1, 0], [0, -1]], np.int8).reshape(1, 1, 2, 2)
    one = per_tensor(1.0, f32, 4)
    out = qdml.quantized_linear_convolution(
        InputTensor=x, InputScaleTensor=one, FilterTensor=w, FilterScaleTensor=one, OutputScaleTensor=one,
        BiasTensor=per_tensor(10, np.int32, 4),
        OutputZeroPointTensor=per_tensor(0, np.int8, 4), StartPadding=[1, 1], EndPadding=[0, 0])
    assert out.shape == (1, 1, 3, 3)
    # out[i,j] = 10 + x[i-1,j-1] - x[i,j] (taps outside the input count 0)
    xp = np.pad(x[0, 0].astype(int), ((1, 0), (1, 0)))
    expect = 10 + xp[:-1, :-1] - xp[1:, 1:]
    same_bits(out, expect.astype(np.int8).reshape(1, 1, 3, 3))


def test_clip_scale_bias_nan_and_in_place():
    x = np.array([[-2.0, 0.5, np.nan], [0.3, 1.0, np.inf]], f32)
    g = x * f32(3.0) + f32(0.1)                      # two binary32 roundings, no FMA
    # The exact profile passes NaN; the default, directml, makes it Max (docs/semantics.md section 10).
    out = qdml.element_wise_clip(InputTensor=x, Min=-1.0, Max=2.5, ScaleBias=(3.0, 0.1), fidelity="exact")
    same_bits(out, np.where(np.isnan(g), g, np.maximum(f32(-1), np.minimum(g, f32(2.5)))).astype(f32))
    out = qdml.element_wise_clip(InputTensor=x, Min=-1.0, Max=2.5, ScaleBias=(3.0, 0.1))
    same_bits(out, np.where(np.isnan(g), f32(2.5), np.maximum(f32(-1), np.minimum(g, f32(2.5)))).astype(f32))
    y = x.copy()
    assert qdml.element_wise_clip(InputTensor=y, Min=0.0, Max=0.4, OutputTensor=y) is y
    same_bits(y[0, :2], np.array([0.0, 0.4], f32))


def test_clip_float16_and_uint8_column_view():
    with np.errstate(over="ignore"):
        x16 = np.array([70000.0, -1.5, 0.1], f32).astype(np.float16)  # inf, -1.5, 0.1 in binary16
    same_bits(qdml.element_wise_clip(InputTensor=x16, Min=-1.0, Max=1000.0),
              np.array([1000.0, -1.0, 0.1], np.float16))
    x = np.arange(12, dtype=np.uint8).reshape(3, 4)
    same_bits(qdml.element_wise_clip(InputTensor=x[:, 1], Min=3.9, Max=7.5),  # bounds truncate to 3 and 7
              np.array([3, 5, 7], np.uint8))


def test_clip1_typed_bounds_min_above_max_and_in_place():
    # INT64 bounds beyond 2^53 stay exact (Python ints go to the case as JSON integers)
    x = np.array([-(2**63), 2**53 + 3, 5, 2**63 - 1], np.int64)
    same_bits(qdml.element_wise_clip1(InputTensor=x, Min=-(2**53) - 1, Max=2**53 + 1),
              np.array([-(2**53) - 1, 2**53 + 1, 5, 2**53 + 1], np.int64))
    # Min > Max: Max in the exact profile (ONNX's order), Min in the default, directml (section 13)
    u = np.array([0, 7, 255], np.uint8)
    same_bits(qdml.element_wise_clip1(InputTensor=u, Min=200, Max=3, fidelity="exact"), np.array([3, 3, 3], np.uint8))
    same_bits(qdml.element_wise_clip1(InputTensor=u, Min=200, Max=3), np.array([200, 200, 200], np.uint8))
    # FLOAT32 NaN: passes in exact, becomes Max in directml; a NaN bound is no bound
    f = np.array([np.nan, -3.0, 3.0], f32)
    same_bits(qdml.element_wise_clip1(InputTensor=f, Min=-1.0, Max=2.0, fidelity="exact"),
              np.array([np.nan, -1.0, 2.0], f32))
    same_bits(qdml.element_wise_clip1(InputTensor=f, Min=-1.0, Max=2.0), np.array([2.0, -1.0, 2.0], f32))
    same_bits(qdml.element_wise_clip1(InputTensor=f, Min=float("nan"), Max=2.0), np.array([2.0, -3.0, 2.0], f32))
    y = np.array([-5, 0, 5], np.int16)
    assert qdml.element_wise_clip1(InputTensor=y, Min=-1, Max=1, OutputTensor=y) is y
    same_bits(y, np.array([-1, 0, 1], np.int16))
    with pytest.raises(qdml.Error, match=r"params.Min: 300 is not a value of INT8"):
        qdml.element_wise_clip1(InputTensor=np.zeros(2, np.int8), Min=300, Max=1)
    with pytest.raises(qdml.Error, match=r"^ELEMENT_WISE_CLIP1: MinMaxDataType: "):
        qdml.element_wise_clip1(InputTensor=np.zeros(2, np.int8), Min=0, Max=1, MinMaxDataType="INT16")


# --- errors -----------------------------------------------------------------

def test_validation_error_carries_qdmls_message():
    one = per_tensor(1.0, f32, 2)
    a, b = np.zeros((2, 3), np.int8), np.zeros((4, 2), np.int8)
    with pytest.raises(qdml.Error, match=r"^QUANTIZED_LINEAR_MATRIX_MULTIPLY: BTensor: .*K"):
        qdml.quantized_linear_matrix_multiply(ATensor=a, AScaleTensor=one, BTensor=b, BScaleTensor=one,
                                              OutputScaleTensor=one, OutputTensor=np.int8)
    assert issubclass(qdml.Error, ValueError)


def test_feature_level_narrows_validation():
    x = np.zeros(4, np.uint8)
    scale = np.ones(4, np.float16)
    qdml.element_wise_dequantize_linear(InputTensor=x, ScaleTensor=scale, feature_level="6.2")
    with pytest.raises(qdml.Error, match=r"ScaleTensor: DataType FLOAT16 is not supported; allowed: FLOAT32 "
                                         r"\(DML_FEATURE_LEVEL 5.0\)$"):  # FLOAT16 from 6.0
        qdml.element_wise_dequantize_linear(InputTensor=x, ScaleTensor=scale, ZeroPointTensor=x,
                                            feature_level="5.0")
    with pytest.raises(qdml.Error, match="unknown level"):
        qdml.element_wise_clip(InputTensor=x, Min=0, Max=1, feature_level="9.9")
    with pytest.raises(qdml.Error, match="unknown implementation"):
        qdml.element_wise_clip(InputTensor=x, Min=0, Max=1, impl="magic")


def test_layouts_without_a_dml_equivalent_are_rejected():
    x = np.arange(6, dtype=f32)
    with pytest.raises(qdml.Error, match="negative.*ascontiguousarray"):
        qdml.element_wise_clip(InputTensor=x[::-1], Min=0, Max=1)
    raw = np.zeros(13, np.uint8)
    odd = np.lib.stride_tricks.as_strided(raw[1:].view(np.uint16), shape=(3,), strides=(3,))
    with pytest.raises(qdml.Error, match="multiple of the element size"):
        qdml.element_wise_clip(InputTensor=odd, Min=0, Max=1)
    huge = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), shape=(2,), strides=(2**32,))  # never read
    with pytest.raises(qdml.Error, match="exceed DML's 32 bits"):
        qdml.element_wise_clip(InputTensor=huge, Min=0, Max=1)
    with pytest.raises(qdml.Error, match="dtype"):
        qdml.element_wise_clip(InputTensor=x.astype(">f4"), Min=0, Max=1)
    with pytest.raises(qdml.Error, match="read-only"):
        qdml.element_wise_clip(InputTensor=x, Min=0, Max=1, OutputTensor=np.broadcast_to(f32(0), (6,)))
    with pytest.raises(qdml.Error, match="ELEMENT_WISE_CLIP: OutputTensor: overlaps InputTensor"):
        qdml.element_wise_clip(InputTensor=x[:4], Min=0, Max=1, OutputTensor=x[2:])


# --- case files ---------------------------------------------------------------

def cli():
    path = os.environ.get("QDML_CLI")
    if not path:
        pytest.skip("QDML_CLI (path of build/tools/qdml) is not set")
    return path


def test_run_case_reads_the_examples():
    cases = sorted((ROOT / "examples" / "cases").glob("*/case.json"))
    assert cases
    for case in cases:
        spec = json.loads(case.read_text())
        if spec["expected"].get("error"):
            with pytest.raises(qdml.Error, match=re.escape(str(case))):
                qdml.run_case(case)
            continue
        got = qdml.run_case(str(case))
        if "OutputTensor" in spec["expected"]:  # several outputs: a tuple, in member order
            members = [m for m in spec["tensors"] if m.startswith("Output")]
            assert isinstance(got, tuple) and len(got) == len(members), case
            for g, m in zip(got, members):
                same_bits(g, np.load(case.parent / spec["expected"][m]["data"]))
            continue
        same_bits(got, np.load(case.parent / spec["expected"]["data"]))


def test_run_case_reproduces_the_conformance_data():
    # tests/data: expected outputs from ONNX Runtime, the ONNX node tests and
    # DirectML (tools/README.md), each case in the profile its expected output
    # names; tolerance 0 = identical bits, any NaN matching any NaN.
    cases = sorted((ROOT / "tests" / "data").rglob("*.json"))
    assert len(cases) > 500
    for case in cases:
        spec = json.loads(case.read_text())
        if "operator" not in spec:
            continue  # tests/data/directml/source.json
        if spec["expected"].get("error"):
            with pytest.raises(qdml.Error):
                qdml.run_case(case)
            continue
        got = qdml.run_case(case)
        if isinstance(got, tuple):  # several outputs: "expected" keyed by output member, in member order
            expected = [spec["expected"][m] for m in spec["tensors"] if m in spec["expected"]]
        else:
            got, expected = (got,), [spec["expected"]]
        assert len(got) == len(expected), case
        for g, e in zip(got, expected):
            want = np.load(case.parent / e["data"])
            assert g.dtype == want.dtype and g.shape == want.shape, case
            tol = e.get("tolerance", 0)
            if tol == 0:
                nan = np.isnan(g) & np.isnan(want) if g.dtype.kind == "f" else np.zeros(g.shape, bool)
                assert ((g.view(f"u{g.itemsize}") == want.view(f"u{g.itemsize}")) | nan).all(), case
            else:
                assert (np.abs(g.astype(np.float64) - want.astype(np.float64)) <= tol).all(), case


def test_write_case_round_trip_agrees_with_the_cli(tmp_path):
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, (2, 6, 7), dtype=np.int8).transpose(0, 2, 1)   # 2x7x6, batch of transposes
    b = np.broadcast_to(rng.integers(0, 256, (6, 5), dtype=np.uint8), (2, 6, 5))
    tensors = dict(ATensor=a, AScaleTensor=per_tensor(0.01, f32, 3), BTensor=b,
                   BScaleTensor=np.broadcast_to(np.array([0.02, 0.03, 0.04, 0.05, np.nan], f32), (1, 1, 5)),
                   BZeroPointTensor=np.broadcast_to(per_tensor(128, np.uint8, 3), (1, 1, 5)),  # shaped as its scale
                   OutputScaleTensor=per_tensor(0.3, f32, 3),
                   OutputZeroPointTensor=per_tensor(-5, np.int8, 3))
    direct = qdml.quantized_linear_matrix_multiply(**tensors)
    path = qdml.write_case(str(tmp_path / "mm.json"), "quantized_linear_matrix_multiply", tensors,
                           expected=direct)
    case = json.loads(pathlib.Path(path).read_text())
    assert case["operator"] == "QUANTIZED_LINEAR_MATRIX_MULTIPLY"
    assert case["tensors"]["ATensor"]["strides"] == [42, 1, 7] and "data" in case["tensors"]["ATensor"]
    assert case["tensors"]["BTensor"]["strides"] == [0, 5, 1]
    assert case["tensors"]["BScaleTensor"]["values"][-1] == "NaN"
    assert case["tensors"]["OutputTensor"] == {"type": "INT8", "sizes": [2, 7, 5]}
    same_bits(qdml.run_case(path), direct)
    out = tmp_path / "out.npy"
    subprocess.run([cli(), "run", path, "--out", str(out)], check=True)
    same_bits(np.load(out), direct)
    subprocess.run([cli(), "check", path], check=True, stdout=subprocess.DEVNULL)  # equal to expected


def test_write_case_params_float16_and_expected_error(tmp_path):
    x = np.array([[1.0, -2.0], [np.inf, 0.5]], np.float16)
    out_view = np.zeros((2, 2), np.float16).T                      # column-major output
    params = {"Min": float("-inf"), "Max": np.float32(1.0), "ScaleBias": {"Scale": 2.0, "Bias": -0.5}}
    path = qdml.write_case(str(tmp_path / "clip.json"), "ELEMENT_WISE_CLIP",
                           {"InputTensor": x, "OutputTensor": out_view}, params)
    case = json.loads(pathlib.Path(path).read_text())
    assert case["params"] == {"Min": "-Infinity", "Max": 1.0, "ScaleBias": {"Scale": 2.0, "Bias": -0.5}}
    assert case["tensors"]["OutputTensor"] == {"type": "FLOAT16", "sizes": [2, 2], "strides": [1, 2]}
    expect = np.array([[1.0, -4.5], [1.0, 0.5]], np.float16)      # min(2x - 0.5, 1) by hand
    same_bits(qdml.run_case(path), expect)
    same_bits(qdml.element_wise_clip(InputTensor=x, Min=-np.inf, Max=1.0, ScaleBias=(2.0, -0.5)), expect)
    out = tmp_path / "clip.npy"
    subprocess.run([cli(), "run", path, "--out", str(out)], check=True)
    same_bits(np.load(out), expect)

    bad = qdml.write_case(str(tmp_path / "bad.json"), "ELEMENT_WISE_CLIP", {"InputTensor": x},
                          {"Min": float("nan"), "Max": 1.0}, expected={"error": True})
    with pytest.raises(qdml.Error, match="bad.json: ELEMENT_WISE_CLIP: Min: is NaN"):
        qdml.run_case(bad)
    subprocess.run([cli(), "check", bad], check=True, stdout=subprocess.DEVNULL)  # rejection counts as a pass


def test_write_case_checks_names_against_the_runners_tables(tmp_path):
    x = np.zeros(2, np.uint8)
    path = str(tmp_path / "c.json")
    with pytest.raises(qdml.Error, match="FOO: unknown operator"):
        qdml.write_case(path, "FOO", {"InputTensor": x})
    with pytest.raises(qdml.Error, match="ELEMENT_WISE_CLIP: ATensor: not a member"):
        qdml.write_case(path, "element_wise_clip", {"InputTensor": x, "ATensor": x}, {"Min": 0, "Max": 1})
    with pytest.raises(qdml.Error, match="ScaleTensor: missing"):
        qdml.write_case(path, "ELEMENT_WISE_DEQUANTIZE_LINEAR", {"InputTensor": x})
    with pytest.raises(qdml.Error, match="params.Mni: not a parameter"):
        qdml.write_case(path, "ELEMENT_WISE_CLIP", {"InputTensor": x}, {"Mni": 0, "Max": 1})
    assert not (tmp_path / "c.json").exists()


def test_every_implementation_gives_the_references_bits():
    # The default (no impl), each listed impl and impl="reference": identical
    # bits for every operator, on sizes around the vector widths (tails),
    # broadcast parameters and strided views.
    assert qdml.IMPLEMENTATIONS[0] == "reference"
    rng = np.random.default_rng(4)
    x = rng.integers(-128, 128, (3, 37), dtype=np.int8)
    scale = rng.random((1, 37), dtype=f32)
    y = rng.standard_normal((5, 133), dtype=f32)[:, ::2]
    one = per_tensor(0.05, f32, 2)
    a = rng.integers(0, 256, (67, 129), dtype=np.uint8)
    b = rng.integers(-128, 128, (129, 45), dtype=np.int8)
    x4 = rng.integers(-128, 128, (2, 8, 13, 13), dtype=np.int8)
    w4 = rng.integers(-128, 128, (16, 8, 3, 3), dtype=np.int8)
    row_scale = rng.random((67, 1), dtype=f32) / 50
    y_scale = rng.random((1, 67), dtype=f32) / 4 + 0.01  # per column of y (5, 67)
    calls = [
        lambda **i: qdml.element_wise_dequantize_linear(InputTensor=x, ScaleTensor=scale, ZeroPointTensor=np.int8(3),
                                                        **i),
        lambda **i: qdml.element_wise_clip(InputTensor=y, Min=-0.5, Max=0.7, ScaleBias=(1.5, 0.1), **i),
        lambda **i: qdml.element_wise_quantize_linear(InputTensor=y, ScaleTensor=y_scale, ZeroPointTensor=np.uint8(9),
                                                      **i),
        lambda **i: qdml.element_wise_quantized_linear_add(
            ATensor=x, AScaleTensor=one, BTensor=x[::-1].copy(), BScaleTensor=one,
            OutputScaleTensor=per_tensor(0.1, f32, 2), OutputTensor=np.uint8, **i),
        lambda **i: qdml.quantized_linear_matrix_multiply(
            ATensor=a, AScaleTensor=row_scale, AZeroPointTensor=np.broadcast_to(per_tensor(128, np.uint8, 2), (67, 1)),
            BTensor=b, BScaleTensor=per_tensor(0.02, f32, 2), OutputScaleTensor=per_tensor(0.5, f32, 2),
            OutputZeroPointTensor=per_tensor(-3, np.int8, 2), **i),
        lambda **i: qdml.quantized_linear_convolution(
            InputTensor=x4, InputScaleTensor=per_tensor(0.1, f32, 4), FilterTensor=w4,
            FilterScaleTensor=per_tensor(0.01, f32, 4), OutputScaleTensor=per_tensor(0.7, f32, 4),
            OutputZeroPointTensor=per_tensor(2, np.uint8, 4), StartPadding=[1, 0], EndPadding=[1, 2], **i),
    ]
    for call in calls:
        want = call(impl="reference")
        same_bits(call(), want)
        for impl in qdml.IMPLEMENTATIONS:
            same_bits(call(impl=impl), want)


# --- MATRIX_MULTIPLY_INTEGER (docs/semantics.md section 12) -------------------

def test_matrix_multiply_integer_hand_computed():
    # A - AZP(1) = [[0, 1, 2], [3, 4, 5]], B - BZP(-1) = [[2, 0], [3, 1], [4, 2]]
    # -> [[0*2+1*3+2*4, 0*0+1*1+2*2], [3*2+4*3+5*4, 0+4+10]] = [[11, 5], [38, 14]]
    a = np.array([[1, 2, 3], [4, 5, 6]], np.int8)
    b = np.array([[1, -1], [2, 0], [3, 1]], np.int8)
    for impl in qdml.IMPLEMENTATIONS:
        out = qdml.matrix_multiply_integer(ATensor=a, BTensor=b, AZeroPointTensor=np.array([[1]], np.int8),
                                           BZeroPointTensor=np.array([[-1]], np.int8), impl=impl)
        assert out.dtype == np.int32 and out.tolist() == [[11, 5], [38, 14]]
    # Per row (M, 1) and per column (N,): A u8 - [[10], [20]] = [[0, 2], [0, 10]],
    # B i8 - [1, 0, -1] = [[0, 2, 4], [3, 5, 7]] -> [[6, 10, 14], [30, 50, 70]]
    out = qdml.matrix_multiply_integer(ATensor=np.array([[10, 12], [20, 30]], np.uint8),
                                       AZeroPointTensor=np.array([[10], [20]], np.uint8),
                                       BTensor=np.array([[1, 2, 3], [4, 5, 6]], np.int8),
                                       BZeroPointTensor=np.array([1, 0, -1], np.int8))
    assert out.tolist() == [[6, 10, 14], [30, 50, 70]]


def test_matrix_multiply_integer_wraps_and_refuses():
    # 33026 * 255 * 255 = 2147515650 wraps to 2147515650 - 2^32 = -2147451646
    k = 33026
    a = np.broadcast_to(np.uint8(255), (1, k))
    b = np.broadcast_to(np.uint8(255), (k, 1))
    assert qdml.matrix_multiply_integer(ATensor=a, BTensor=b).tolist() == [[-2147451646]]
    with pytest.raises(qdml.Error, match=r"^MATRIX_MULTIPLY_INTEGER: AZeroPointTensor: .*per row"):
        qdml.matrix_multiply_integer(ATensor=np.zeros((2, 3), np.int8), BTensor=np.zeros((3, 4), np.int8),
                                     AZeroPointTensor=np.zeros(2, np.int8))  # (M,) is {1,1,1,M}: write (M, 1)
    with pytest.raises(qdml.Error, match=r"^MATRIX_MULTIPLY_INTEGER: OutputTensor: DataType INT8"):
        qdml.matrix_multiply_integer(ATensor=np.zeros((2, 3), np.int8), BTensor=np.zeros((3, 4), np.int8),
                                     OutputTensor=np.zeros((2, 4), np.int8))


# --- MATRIX_MULTIPLY_INTEGER_TO_FLOAT (docs/semantics.md section 16) ----------

def test_matrix_multiply_integer_to_float_hand_computed():
    # acc = [[11, 5], [38, 14]] (as above); AScale 0.5, BScale 0.25: * 0.125 = [[1.375, 0.625], [4.75, 1.75]];
    # + Bias [[1, 2], [3, 4]]. Every step is exact in binary32: both profiles, both implementations.
    a = np.array([[1, 2, 3], [4, 5, 6]], np.int8)
    b = np.array([[1, -1], [2, 0], [3, 1]], np.int8)
    for impl in qdml.IMPLEMENTATIONS:
        for fidelity in qdml.FIDELITIES:
            out = qdml.matrix_multiply_integer_to_float(
                ATensor=a, AScaleTensor=np.array([[0.5]], np.float32), AZeroPointTensor=np.array([[1]], np.int8),
                BTensor=b, BScaleTensor=np.array([[0.25]], np.float32), BZeroPointTensor=np.array([[-1]], np.int8),
                BiasTensor=np.array([[1, 2], [3, 4]], np.float32), impl=impl, fidelity=fidelity)
            assert out.dtype == np.float32 and out.tolist() == [[2.375, 2.625], [7.75, 5.75]]


def test_matrix_multiply_integer_to_float_profiles_differ():
    # INT32 A [2^24, 1, 1] x B [1, 1, 1]: exact sums integers, 16777218; directml adds in binary32 in k
    # order: 2^24 + 1 rounds to 2^24 (a tie, to even), twice: 16777216.
    one = np.array([[1.0]], np.float32)
    a = np.array([[16777216, 1, 1]], np.int32)
    b = np.ones((3, 1), np.int32)
    kw = dict(ATensor=a, AScaleTensor=one, BTensor=b, BScaleTensor=one)
    assert qdml.matrix_multiply_integer_to_float(**kw, fidelity="exact").tolist() == [[16777218.0]]
    assert qdml.matrix_multiply_integer_to_float(**kw, fidelity="directml").tolist() == [[16777216.0]]
    with pytest.raises(qdml.Error, match=r"^MATRIX_MULTIPLY_INTEGER_TO_FLOAT: BiasTensor: "):
        qdml.matrix_multiply_integer_to_float(**kw, BiasTensor=np.zeros(1, np.float32))  # not the output's shape
    with pytest.raises(qdml.Error, match=r"^MATRIX_MULTIPLY_INTEGER_TO_FLOAT: operator: requires DML_FEATURE_LEVEL 6.2"):
        qdml.matrix_multiply_integer_to_float(**kw, feature_level="6.1")


# --- DYNAMIC_QUANTIZE_LINEAR (docs/semantics.md section 15) -------------------

def test_dynamic_quantize_linear_hand_computed():
    # [-2, 0, 1, 3]: m = -2, M = 3; exact s = fp32(5 / 255), and in binary32 (numpy) 2 / s = 102 and
    # x / s = 51 x exactly: z = 102, outputs [0, 102, 153, 255]. The directml profile's s = 5 * fp32(1/255)
    # is the same float here (0.019607844), and r = 1 / s = 51: the same outputs.
    x = np.array([[-2, 0], [1, 3]], np.float32)
    for impl in qdml.IMPLEMENTATIONS:
        y, s, z = qdml.dynamic_quantize_linear(InputTensor=x, impl=impl, fidelity="exact")
        assert y.dtype == np.uint8 and y.tolist() == [[0, 102], [153, 255]]
        assert s.dtype == np.float32 and s.shape == (1, 1) and s[0, 0] == np.float32(5) / np.float32(255)
        assert z.dtype == np.uint8 and z.shape == (1, 1) and z[0, 0] == 102
        y, s, z = qdml.dynamic_quantize_linear(InputTensor=x, impl=impl, fidelity="directml")
        assert y.tolist() == [[0, 102], [153, 255]] and z[0, 0] == 102
        assert s[0, 0] == np.float32(5) * np.float32(1 / 255)
    # INT8 (the output's dtype for the zero point too), FLOAT16 input, outputs written in place
    out, scale, zp = np.zeros(4, np.int8), np.zeros(1, np.float32), np.zeros(1, np.int8)
    r = qdml.dynamic_quantize_linear(InputTensor=np.array([-2, 0, 1, 3], np.float16), OutputTensor=out,
                                     OutputScaleTensor=scale, OutputZeroPointTensor=zp, fidelity="exact")
    assert r[0] is out and r[1] is scale and r[2] is zp
    assert out.tolist() == [-128, -26, 25, 127] and zp[0] == -26  # each 128 lower than the UINT8 result
    y, _, z = qdml.dynamic_quantize_linear(InputTensor=x, OutputTensor=np.int8)
    assert y.dtype == np.int8 and z.dtype == np.int8


def test_dynamic_quantize_linear_edge_cases_and_refusals():
    # all zero: s = +0, z = lo, every output lo; NaN skipped in the range and quantized to lo
    y, s, z = qdml.dynamic_quantize_linear(InputTensor=np.zeros((2, 3), np.float32))
    assert (y == 0).all() and s[0, 0] == 0 and not np.signbit(s[0, 0]) and z[0, 0] == 0
    y, s, z = qdml.dynamic_quantize_linear(InputTensor=np.array([np.nan, 255, 0], np.float32), fidelity="exact")
    assert y.tolist() == [0, 255, 0] and s[0] == 1 and z[0] == 0
    with pytest.raises(qdml.Error, match=r"^DYNAMIC_QUANTIZE_LINEAR: InputTensor: "):
        qdml.dynamic_quantize_linear(InputTensor=np.zeros(3, np.int8))
    with pytest.raises(qdml.Error, match=r"^DYNAMIC_QUANTIZE_LINEAR: OutputZeroPointTensor: "):
        qdml.dynamic_quantize_linear(InputTensor=np.zeros(3, np.float32), OutputZeroPointTensor=np.int8)
    with pytest.raises(qdml.Error, match=r"^DYNAMIC_QUANTIZE_LINEAR: OutputScaleTensor: "):
        qdml.dynamic_quantize_linear(InputTensor=np.zeros(3, np.float32), OutputScaleTensor=np.zeros(2, np.float32))
    with pytest.raises(qdml.Error, match=r"^DYNAMIC_QUANTIZE_LINEAR: operator: requires DML_FEATURE_LEVEL 4.0"):
        qdml.dynamic_quantize_linear(InputTensor=np.zeros(3, np.float32), feature_level="3.1")


def test_convolution_integer_hand_computed():
    # X - XZP(255) = [[-255, 0], [-245, -235]]; F[0] - 127 = [[-255, -127], [-126, -125]],
    # F[1] - (-128) = 255 everywhere; EndPadding [0, 1]: oW = 2 (examples/cases/README.md)
    x = np.array([[[[0, 255], [10, 20]]]], np.uint8)
    f = np.array([[[[-128, 0], [1, 2]]], [[[127, 127], [127, 127]]]], np.int8)
    for impl in qdml.IMPLEMENTATIONS:
        out = qdml.convolution_integer(InputTensor=x, FilterTensor=f,
                                       InputZeroPointTensor=np.array([[[[255]]]], np.uint8),
                                       FilterZeroPointTensor=np.array([127, -128], np.int8).reshape(1, 2, 1, 1),
                                       EndPadding=[0, 1], impl=impl)
        assert out.dtype == np.int32 and out.tolist() == [[[[125270, 29610]], [[-187425, -59925]]]]


def test_convolution_integer_wraps_and_refuses():
    # 33026 input channels of 255 * 255: 2147515650 wraps to -2147451646
    c = 33026
    x = np.broadcast_to(np.uint8(255), (1, c, 1, 1))
    assert qdml.convolution_integer(InputTensor=x, FilterTensor=x).tolist() == [[[[-2147451646]]]]
    with pytest.raises(qdml.Error, match=r"^CONVOLUTION_INTEGER: InputZeroPointTensor: .*single element"):
        qdml.convolution_integer(InputTensor=np.zeros((1, 2, 1, 1), np.int8), FilterTensor=np.zeros((1, 2, 1, 1), np.int8),
                                 InputZeroPointTensor=np.zeros((1, 2, 1, 1), np.int8))
    with pytest.raises(qdml.Error, match=r"^CONVOLUTION_INTEGER: DimensionCount: "):
        qdml.convolution_integer(InputTensor=np.zeros((1, 1, 1, 1), np.int8), FilterTensor=np.zeros((1, 1, 1, 1), np.int8),
                                 DimensionCount=3)


def test_convolution_integer_one_spatial_dimension():
    # X - XZP(1) = [0 1 2 3 4]; F - FZP = oc0 [1 10], oc1 [-1 3] - 1 = [-2 2]; stride 2, pad 1 before:
    # taps 2*ox + kx - 1: ox 0: (pad, 0), ox 1: (1, 2), ox 2: (3, 4) (DirectML 1.15.4 gives the same)
    for impl in qdml.IMPLEMENTATIONS:
        out = qdml.convolution_integer(InputTensor=np.array([[[1, 2, 3, 4, 5]]], np.uint8),
                                       FilterTensor=np.array([[[1, 10]], [[-1, 3]]], np.int8),
                                       InputZeroPointTensor=np.array([[[1]]], np.uint8),
                                       FilterZeroPointTensor=np.array([0, 1], np.int8).reshape(1, 2, 1),
                                       Strides=[2], StartPadding=[1], EndPadding=[0], impl=impl)
        assert out.dtype == np.int32 and out.tolist() == [[[0, 21, 43], [0, 2, 2]]]

def test_quantized_linear_average_pooling_hand_computed():
    # examples/cases/average_pooling_u8_include_padding: (X - 3) * 0.5 = [[1 2 3] [4 5 6]], 2x2 window,
    # StartPadding [1, 0], EndPadding [0, 1]; window sums 3 5 3 / 12 16 9; / OutputScale 0.5 and the divisor
    # (4 with IncludePadding, else the taps 2 2 1 4 4 2), ties to even, + 10
    x = np.array([[[[5, 7, 9], [11, 13, 15]]]], np.uint8)
    one = (1, 1, 1, 1)
    for impl in qdml.IMPLEMENTATIONS:
        for include, want in [(True, [12, 12, 12, 16, 18, 14]), (False, [13, 15, 16, 16, 18, 19])]:
            out = qdml.quantized_linear_average_pooling(
                InputTensor=x, InputScaleTensor=np.full(one, 0.5, f32), InputZeroPointTensor=np.full(one, 3, np.uint8),
                OutputScaleTensor=np.full(one, 0.5, f32), OutputZeroPointTensor=np.full(one, 10, np.uint8),
                WindowSize=[2, 2], StartPadding=[1, 0], EndPadding=[0, 1], IncludePadding=include, impl=impl)
            assert out.dtype == np.uint8 and out.ravel().tolist() == want


def test_quantized_linear_average_pooling_profiles_and_refusals():
    # A window in the padding only (StartPadding 2, IncludePadding false): 0/0. Exact profile: the low end;
    # directml profile without an OutputZeroPointTensor: the high end (127); then (3 - 0)/1 = 3, (3 + 6)/2 = 4.5 -> 4
    x = np.array([[[[3, 6]]]], np.int8)
    kw = dict(InputTensor=x, InputScaleTensor=np.ones((1, 1, 1, 1), f32), OutputScaleTensor=np.ones((1, 1, 1, 1), f32),
              WindowSize=[1, 2], StartPadding=[0, 2])
    assert qdml.quantized_linear_average_pooling(**kw, fidelity="exact").ravel().tolist() == [-128, 3, 4]
    assert qdml.quantized_linear_average_pooling(**kw, fidelity="directml").ravel().tolist() == [127, 3, 4]
    with pytest.raises(qdml.Error, match=r"^QUANTIZED_LINEAR_AVERAGE_POOLING: WindowSize: WindowSize\[1\] is 0"):
        qdml.quantized_linear_average_pooling(**{**kw, "WindowSize": [1, 0]})
    with pytest.raises(qdml.Error, match=r"^QUANTIZED_LINEAR_AVERAGE_POOLING: InputScaleTensor: .*per channel"):
        qdml.quantized_linear_average_pooling(**{**kw, "InputScaleTensor": np.ones((1, 1, 1, 2), f32)})


# --- the default implementation ---------------------------------------------

FUNCTIONS = [qdml.element_wise_dequantize_linear, qdml.element_wise_quantize_linear, qdml.element_wise_quantized_linear_add,
             qdml.quantized_linear_matrix_multiply, qdml.quantized_linear_convolution, qdml.element_wise_clip,
             qdml.matrix_multiply_integer, qdml.convolution_integer, qdml.matrix_multiply_integer_to_float,
             qdml.dynamic_quantize_linear, qdml.quantized_linear_average_pooling, qdml.run_case]


def test_the_default_implementation_is_the_cpp_default():
    # qdml::run's default, RunOptions{}.implementation, is Implementation::Simd
    # (include/qdml/runtime/dispatch.hpp): the fastest bit-identical path.
    assert qdml.DEFAULT_IMPLEMENTATION == "simd"
    assert sorted(qdml.IMPLEMENTATIONS) == ["reference", "simd"]
    for f in FUNCTIONS:
        assert inspect.signature(f).parameters["impl"].default == "simd", f.__name__


# --- element-wise parameters take numpy-broadcastable shapes ------------------

def test_dequantize_parameters_broadcast_as_numpy_does():
    rng = np.random.default_rng(7)
    x = rng.integers(-128, 128, (512, 512), dtype=np.int8)
    forms = {
        "per tensor (1, 1)": (np.array([[0.0625]], f32), np.array([[-7]], np.int8)),
        "per axis 0 (C, 1)": (rng.random((512, 1), dtype=f32), rng.integers(-128, 128, (512, 1), dtype=np.int8)),
        "per axis 1 (W,)": (rng.random(512, dtype=f32), rng.integers(-128, 128, 512, dtype=np.int8)),
        "0-d": (np.float32(0.3), np.int8(5)),
        "row scale, column zero point": (rng.random((1, 512), dtype=f32),
                                         rng.integers(-128, 128, (512, 1), dtype=np.int8)),
        "no zero point": (rng.random((512, 1), dtype=f32), None),
    }
    for name, (scale, zp) in forms.items():
        full_scale = np.ascontiguousarray(np.broadcast_to(scale, x.shape))
        full_zp = None if zp is None else np.ascontiguousarray(np.broadcast_to(zp, x.shape))
        # the formula in numpy: an exact int32 difference, exact in binary32, times the scale
        diff = x.astype(np.int32) - (0 if zp is None else full_zp.astype(np.int32))
        expect = diff.astype(f32) * full_scale
        assert expect.dtype == f32
        for impl in ({}, {"impl": "reference"}):
            out = qdml.element_wise_dequantize_linear(InputTensor=x, ScaleTensor=scale, ZeroPointTensor=zp, **impl)
            same_bits(out, expect)
            same_bits(out, qdml.element_wise_dequantize_linear(InputTensor=x, ScaleTensor=full_scale,
                                                               ZeroPointTensor=full_zp, **impl))


def test_dequantize_float16_scale_broadcast():
    x = np.array([[0, 1000, 65535], [7, 8, 9]], np.uint16)
    scale = np.array([[0.5], [2.0]], np.float16)                    # (C, 1) per row
    out = qdml.element_wise_dequantize_linear(InputTensor=x, ScaleTensor=scale, ZeroPointTensor=np.uint16(8))
    # by hand: (x - 8) * scale in binary32, then binary16: (65535 - 8) * 0.5 = 32763.5, whose
    # binary16 neighbours are 32752 and 32768 (spacing 16), rounds to 32768
    same_bits(out, np.array([[-4.0, 496.0, 32768.0], [-2.0, 0.0, 2.0]], np.float16))


def test_add_scales_and_zero_points_in_any_one_value_shape():
    rng = np.random.default_rng(8)
    a = rng.integers(-128, 128, (3, 5), dtype=np.int8)
    b = rng.integers(0, 256, (3, 5), dtype=np.uint8)
    sa, sb, so = f32(0.05), f32(0.1), f32(0.2)
    za, zb, zo = np.int8(-3), np.uint8(128), np.uint8(100)
    v = ((a.astype(np.int32) - za).astype(f32) * sa + (b.astype(np.int32) - zb).astype(f32) * sb) / so
    expect = quantize(v, int(zo), np.uint8)
    shapes = {"0-d": lambda v: v, "(1,)": lambda v: np.array([v]), "(1, 1)": lambda v: np.array([[v]]),
              "broadcast_to A's shape": lambda v: np.broadcast_to(v, a.shape),
              "(1, 5), strides 0": lambda v: np.broadcast_to(np.array([v]), (1, 5))}
    for name, form in shapes.items():
        for impl in ({}, {"impl": "reference"}):
            out = qdml.element_wise_quantized_linear_add(
                ATensor=a, AScaleTensor=form(sa), AZeroPointTensor=form(za), BTensor=b, BScaleTensor=form(sb),
                BZeroPointTensor=form(zb), OutputScaleTensor=form(so), OutputZeroPointTensor=form(zo), **impl)
            same_bits(out, expect)


def test_parameters_that_do_not_broadcast_name_the_member_and_the_rule():
    x = np.zeros((4, 5), np.uint8)
    deq = "^ELEMENT_WISE_DEQUANTIZE_LINEAR: "
    rule = r" \(numpy's rule: aligned from the right, each dimension 1 or equal to InputTensor's"
    with pytest.raises(qdml.Error, match=deq + r"ScaleTensor: shape \(4,\) does not broadcast to InputTensor's "
                                         r"shape \(4, 5\)" + rule):
        qdml.element_wise_dequantize_linear(InputTensor=x, ScaleTensor=np.ones(4, f32))   # (4,) aligns with 5
    with pytest.raises(qdml.Error, match=deq + r"ZeroPointTensor: shape \(1, 4, 5\) does not broadcast"):
        qdml.element_wise_dequantize_linear(InputTensor=x, ScaleTensor=np.ones((1, 1), f32),
                                            ZeroPointTensor=np.zeros((1, 4, 5), np.uint8))  # more dimensions
    with pytest.raises(qdml.Error, match=deq + r"ScaleTensor: shape \(5, 4\) does not broadcast"):
        qdml.element_wise_dequantize_linear(InputTensor=x, ScaleTensor=np.ones((5, 4), f32))
    a = np.zeros((3, 4), np.int8)
    one = np.float32(1)
    add = "^ELEMENT_WISE_QUANTIZED_LINEAR_ADD: "
    with pytest.raises(qdml.Error, match=add + r"BScaleTensor: shape \(3,\) does not broadcast to ATensor's shape"):
        qdml.element_wise_quantized_linear_add(ATensor=a, AScaleTensor=one, BTensor=a, BScaleTensor=np.ones(3, f32),
                                               OutputScaleTensor=one, OutputTensor=np.int8)
    per_axis = r"more than one value; ELEMENT_WISE_QUANTIZED_LINEAR_ADD takes its scales and zero points per tensor"
    with pytest.raises(qdml.Error, match=add + r"OutputScaleTensor: shape \(3, 1\) gives ATensor " + per_axis):
        qdml.element_wise_quantized_linear_add(ATensor=a, AScaleTensor=one, BTensor=a, BScaleTensor=one,
                                               OutputScaleTensor=np.ones((3, 1), f32), OutputTensor=np.int8)
    with pytest.raises(qdml.Error, match=add + r"AZeroPointTensor: shape \(4,\) gives ATensor " + per_axis):
        qdml.element_wise_quantized_linear_add(ATensor=a, AScaleTensor=one, AZeroPointTensor=np.zeros(4, np.int8),
                                               BTensor=a, BScaleTensor=one, OutputScaleTensor=one,
                                               OutputTensor=np.int8)  # equal values, four elements: still per axis


def test_write_case_broadcasts_parameters_as_the_call_does(tmp_path):
    rng = np.random.default_rng(9)
    x = rng.integers(0, 256, (20, 6), dtype=np.uint8)
    tensors = dict(InputTensor=x, ScaleTensor=rng.random((20, 1), dtype=f32), ZeroPointTensor=np.uint8(100))
    direct = qdml.element_wise_dequantize_linear(**tensors)
    path = qdml.write_case(str(tmp_path / "dq.json"), "ELEMENT_WISE_DEQUANTIZE_LINEAR", tensors, expected=direct)
    case = json.loads(pathlib.Path(path).read_text())["tensors"]
    # DML's broadcast form: Input's Sizes, stride 0 where a value repeats
    assert {k: case["ScaleTensor"][k] for k in ("sizes", "strides")} == {"sizes": [20, 6], "strides": [1, 0]}
    assert case["ZeroPointTensor"] == {"type": "UINT8", "sizes": [20, 6], "strides": [0, 0], "values": [100]}
    same_bits(qdml.run_case(path), direct)
    same_bits(qdml.run_case(path, impl="reference"), direct)
    out = tmp_path / "dq.npy"
    subprocess.run([cli(), "run", path, "--out", str(out)], check=True)
    same_bits(np.load(out), direct)


def test_fidelity_chooses_the_profile():
    # docs/semantics.md section 10. Clip of NaN: the exact profile passes it,
    # DirectML's comparisons give Max; -0.0 with Min = +0.0 gives +0.0.
    x = np.array([np.nan, -0.0, 7.0], np.float32)
    for impl in qdml.IMPLEMENTATIONS:
        d = qdml.element_wise_clip(InputTensor=x, Min=0.0, Max=6.0, impl=impl, fidelity="directml")
        assert d[0] == 6.0 and not np.signbit(d[1]) and d[2] == 6.0
        e = qdml.element_wise_clip(InputTensor=x, Min=0.0, Max=6.0, impl=impl, fidelity="exact")
        assert np.isnan(e[0]) and np.signbit(e[1])
    # Matmul: ((-500 * 0.15) * 0.105) / 0.09 = -87.49999 -> -87 (DirectML); exact -87.5 -> -88.
    one = lambda v, t=np.float32: np.full((1, 1), v, t)
    t = dict(ATensor=one(-20, np.int8), BTensor=one(25, np.int8), AScaleTensor=one(0.15), BScaleTensor=one(0.105),
             OutputScaleTensor=one(0.09), OutputZeroPointTensor=one(0, np.int8))
    assert qdml.quantized_linear_matrix_multiply(**t, fidelity="directml")[0, 0] == -87
    assert qdml.quantized_linear_matrix_multiply(**t, fidelity="exact")[0, 0] == -88
    assert qdml.DEFAULT_FIDELITY == "directml"
    assert qdml.quantized_linear_matrix_multiply(**t)[0, 0] == -87
    assert sorted(qdml.FIDELITIES) == ["directml", "exact"]
    with pytest.raises(qdml.Error, match="fidelity"):
        qdml.quantized_linear_matrix_multiply(**t, fidelity="fast")
    # A DirectML case runs in its own profile; forced to exact, it gives the exact bits.
    case = ROOT / "tests" / "data" / "directml" / "clip" / "special_nan_inf_0_6" / "case.json"
    want = np.load(case.parent / "expected.npy")
    assert (qdml.run_case(case).view(np.uint32) == want.view(np.uint32)).all()
    assert np.isnan(qdml.run_case(case, fidelity="exact")[0])


# --- threads ------------------------------------------------------------------

def test_threads_give_the_references_bits():
    # Calls large enough to be cut into many tasks (a 300x257x400 matmul,
    # 2^18-element element-wise calls with strided and broadcast operands, a
    # padded 3x3 convolution of 7 row blocks and a depthwise one of 4):
    # threads=1, 2, 3, 7 and the default give the reference's bits.
    rng = np.random.default_rng(26)
    a = rng.integers(0, 256, (300, 400), dtype=np.uint8)
    b = rng.integers(-128, 128, (400, 257), dtype=np.int8)
    x = rng.integers(-128, 128, (512, 1024), dtype=np.int8)[:, ::2]
    y = rng.standard_normal((256, 1024), dtype=f32)
    one = per_tensor(0.05, f32, 2)
    c_in = rng.integers(0, 256, (1, 32, 28, 28), dtype=np.uint8)
    c_w = rng.integers(-128, 128, (64, 32, 3, 3), dtype=np.int8)
    d_in = rng.integers(-128, 128, (1, 32, 112, 112), dtype=np.int8)
    d_w = rng.integers(-128, 128, (32, 1, 3, 3), dtype=np.int8)
    calls = [
        lambda **i: qdml.quantized_linear_matrix_multiply(
            ATensor=a, AScaleTensor=per_tensor(0.02, f32, 2), BTensor=b, BScaleTensor=rng_scale(257),
            OutputScaleTensor=per_tensor(0.5, f32, 2), OutputZeroPointTensor=per_tensor(7, np.uint8, 2), **i),
        lambda **i: qdml.element_wise_dequantize_linear(InputTensor=x, ScaleTensor=np.float32(0.25),
                                                        ZeroPointTensor=np.int8(-3), **i),
        lambda **i: qdml.element_wise_clip(InputTensor=y, Min=-0.5, Max=0.7, ScaleBias=(1.5, 0.1), **i),
        lambda **i: qdml.element_wise_quantized_linear_add(
            ATensor=x, AScaleTensor=one, BTensor=np.ascontiguousarray(x[::-1]), BScaleTensor=one,
            OutputScaleTensor=per_tensor(0.1, f32, 2), OutputTensor=np.uint8, **i),
        lambda **i: qdml.quantized_linear_convolution(
            InputTensor=c_in, InputScaleTensor=per_tensor(0.02, f32, 4), FilterTensor=c_w,
            FilterScaleTensor=per_tensor(0.01, f32, 4), OutputScaleTensor=per_tensor(0.6, f32, 4),
            OutputZeroPointTensor=per_tensor(9, np.uint8, 4), StartPadding=[1, 1], EndPadding=[1, 1], **i),
        lambda **i: qdml.quantized_linear_convolution(
            InputTensor=d_in, InputScaleTensor=per_tensor(0.02, f32, 4), FilterTensor=d_w,
            FilterScaleTensor=per_tensor(0.01, f32, 4), OutputScaleTensor=per_tensor(0.05, f32, 4),
            OutputTensor=np.int8, StartPadding=[1, 1], EndPadding=[1, 1], GroupCount=32, **i),
    ]
    for call in calls:
        want = call(impl="reference")
        same_bits(call(), want)
        for t in (1, 2, 3, 7):
            same_bits(call(impl="simd", threads=t), want)


def rng_scale(n):
    return (np.arange(1, n + 1, dtype=f32) / np.float32(1000)).reshape(1, n)


def test_threads_must_be_a_count_and_need_the_fast_path():
    x = np.zeros((4, 4), np.int8)
    for bad in (0, -1, 1025, 2.0, True, "2"):
        with pytest.raises(qdml.Error, match="threads: must be an integer from 1 to 1024"):
            qdml.element_wise_dequantize_linear(InputTensor=x, ScaleTensor=np.float32(1), threads=bad)
    with pytest.raises(qdml.Error, match="threads: 2 needs impl='simd'"):
        qdml.element_wise_dequantize_linear(InputTensor=x, ScaleTensor=np.float32(1), impl="reference", threads=2)
    # (the reference with the default threads=None is fine: it computes on the calling thread)
    qdml.element_wise_dequantize_linear(InputTensor=x, ScaleTensor=np.float32(1), impl="reference")


def test_every_function_takes_threads():
    for f in FUNCTIONS:
        assert inspect.signature(f).parameters["threads"].default is None, f.__name__


def test_the_gil_is_released_while_qdml_computes():
    # While one Python thread is inside a long qdml call (a 1024^3 matmul on
    # one thread, tens of milliseconds), another Python thread keeps running
    # Python code: it counts loop turns until the calls return. Were the GIL
    # held for the calls, that thread would run only when the interpreter
    # forces a switch, and the switch interval is set to 10 s here: no turn.
    import sys
    import threading
    rng = np.random.default_rng(27)
    a = rng.integers(0, 256, (1024, 1024), dtype=np.uint8)
    b = rng.integers(-128, 128, (1024, 1024), dtype=np.int8)
    started, done = threading.Event(), threading.Event()
    turns = [0, 0]  # (during the call, calls made)

    def call():
        started.set()
        while turns[1] < 3:  # three calls, so that the count is not a start-up accident
            qdml.quantized_linear_matrix_multiply(
                ATensor=a, AScaleTensor=per_tensor(0.02, f32, 2), BTensor=b, BScaleTensor=per_tensor(0.01, f32, 2),
                OutputScaleTensor=per_tensor(0.5, f32, 2), OutputTensor=np.uint8, threads=1)
            turns[1] += 1
        done.set()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(10.0)
    try:
        t = threading.Thread(target=call)
        t.start()
        started.wait()
        while not done.is_set():
            turns[0] += 1
        t.join()
    finally:
        sys.setswitchinterval(interval)
    # Released: a Python loop turn is well under a microsecond and a 1024^3
    # matmul takes milliseconds on any CPU qdml runs, so many thousands.
    assert turns[0] > 30000, turns


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")
def test_a_forked_child_computes_on_threads_of_its_own():
    # After a threaded call made the parent's pool, a fork()ed child (as
    # multiprocessing starts workers on Linux) has none of the pool's
    # threads: its own threaded call must still finish, with the same bits
    # (an alarm ends a child that would wait for the parent's workers).
    import signal
    rng = np.random.default_rng(28)
    a = rng.integers(0, 256, (300, 400), dtype=np.uint8)
    b = rng.integers(-128, 128, (400, 257), dtype=np.int8)

    def mm(**i):
        return qdml.quantized_linear_matrix_multiply(
            ATensor=a, AScaleTensor=per_tensor(0.02, f32, 2), BTensor=b, BScaleTensor=per_tensor(0.01, f32, 2),
            OutputScaleTensor=per_tensor(0.5, f32, 2), OutputTensor=np.uint8, **i)

    want = mm(impl="reference")
    same_bits(mm(threads=2), want)  # the parent's pool of 2 exists now
    pid = os.fork()
    if pid == 0:  # the child
        signal.alarm(60)
        ok = False
        try:
            ok = mm(threads=2).tobytes() == want.tobytes()
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status


def test_quantize_dequantize_4bit_hand_computed():
    # The UINT4 example of tests/test_quantize.cpp: scale [1, 0.5] in two blocks of four, SCALE
    # (zero point 8): [8, 10, 10, 6, 15, 0, 15, 14] (ties to even, saturation).
    x = np.array([0.5, 1.5, 2.5, -2.5, 100, -100, 7, 3], np.float32)
    s = np.array([1, 0.5], np.float32)
    for impl in qdml.IMPLEMENTATIONS:
        y = qdml.quantize(InputTensor=x, QuantizationTensors=[s], OutputType="UINT4", impl=impl)
        assert y.dtype == np.uint8 and y.tolist() == [8, 10, 10, 6, 15, 0, 15, 14]
        # back: (q - 8) * s per block
        z = qdml.dequantize(InputTensor=y, QuantizationTensors=[s], InputType="UINT4", impl=impl)
        assert z.dtype == np.float32 and z.tolist() == [0, 2, 2, -2, 3.5, -4, 3.5, 3]
    # INT4 with a zero point of -3 per tensor (a 0-d array, right-aligned): NaN -> -8, 2.5 -> -1,
    # -2.5 -> -5, 100 -> 7; into a strided (every other element) int8 array in place.
    out = np.full(8, 99, np.int8)
    r = qdml.quantize(InputTensor=np.array([np.nan, 2.5, -2.5, 100], np.float32),
                      QuantizationTensors=[np.float32(1), np.int8(-3)], OutputType="INT4", OutputTensor=out[::2])
    assert r.base is out and out.tolist() == [-8, 99, -1, 99, -5, 99, 7, 99]
    # 2-D blocks: a (2, 4) INT4 input, scale and zero point (1, 2): columns 0-1 s 0.5 zp 1, 2-3 s 2 zp -2.
    q = np.array([[-8, 7, 0, 1], [3, -1, -8, 7]], np.int8)
    y = qdml.dequantize(InputTensor=q, QuantizationTensors=[np.array([[0.5, 2]], np.float32),
                                                            np.array([[1, -2]], np.int8)], InputType="INT4")
    assert y.tolist() == [[-4.5, 3, 4, 6], [1, -1, -12, 18]]
    # UINT8 SCALE: zero point 128
    assert qdml.dequantize(InputTensor=np.array([0, 128, 255], np.uint8),
                           QuantizationTensors=[np.float32(0.5)]).tolist() == [-64, 0, 63.5]


def test_quantize_dequantize_refusals():
    x = np.zeros(8, np.float32)
    with pytest.raises(qdml.Error, match=r"^QUANTIZE: InputTensor: element 0 is 9, not a INT4 value|"
                                         r"^DEQUANTIZE: InputTensor: element 0 is 9, not a INT4 value"):
        qdml.dequantize(InputTensor=np.full(4, 9, np.int8), QuantizationTensors=[np.float32(1)], InputType="INT4")
    with pytest.raises(qdml.Error, match=r"^QUANTIZE: OutputTensor: a UINT4 tensor is a uint8 array"):
        qdml.quantize(InputTensor=x, QuantizationTensors=[np.float32(1)], OutputType="UINT4",
                      OutputTensor=np.zeros(8, np.int8))
    with pytest.raises(qdml.Error, match=r"^QUANTIZE: OutputTensor: give its type"):
        qdml.quantize(InputTensor=x, QuantizationTensors=[np.float32(1)])
    with pytest.raises(qdml.Error, match=r"^QUANTIZE: QuantizationTensors\[0\]: Sizes \{3\} must divide"):
        qdml.quantize(InputTensor=x, QuantizationTensors=[np.ones(3, np.float32)], OutputType="INT8")
    with pytest.raises(qdml.Error, match=r"^QUANTIZE: QuantizationType: NONE"):
        qdml.quantize(InputTensor=x, QuantizationTensors=[np.float32(1)], OutputType="INT8", QuantizationType="NONE")
    with pytest.raises(qdml.Error, match=r"^DEQUANTIZE: operator: requires DML_FEATURE_LEVEL 6.3"):
        qdml.dequantize(InputTensor=np.zeros(2, np.int8), QuantizationTensors=[np.float32(1)], feature_level="6.2")


def test_write_case_several_outputs(tmp_path):
    # Range [0, 255] (0 and 255 among the values): scale 1 in both profiles (255 * fp32(1/255)
    # rounds to 1), zero point 0, so the output is numpy's rint (ties to even), saturated.
    x = np.array([0, 255, 2.5, 3.5, 100.4, 100.6, 7.5, 8.5, 0.5, 1.5, 254.5, 12, 13.25, 14.75, 200, 201.5,
                  64.5, 65.5, 128.5, 129.5], np.float32).reshape(4, 5)
    want = (np.rint(x).astype(np.uint8), np.ones((1, 1), np.float32), np.zeros((1, 1), np.uint8))
    out_view = np.zeros((5, 4), np.uint8).T  # the output transposed through its strides
    path = qdml.write_case(str(tmp_path / "dq.json"), "DYNAMIC_QUANTIZE_LINEAR",
                           {"InputTensor": x, "OutputTensor": out_view},
                           expected={"OutputTensor": want[0], "OutputScaleTensor": want[1],
                                     "OutputZeroPointTensor": {"data": want[2], "tolerance": 0}})
    case = json.loads(pathlib.Path(path).read_text())
    assert case["tensors"]["OutputTensor"] == {"type": "UINT8", "sizes": [4, 5], "strides": [1, 4]}
    assert case["tensors"]["OutputScaleTensor"] == {"type": "FLOAT32", "sizes": [1, 1]}
    assert case["tensors"]["OutputZeroPointTensor"] == {"type": "UINT8", "sizes": [1, 1]}
    assert set(case["expected"]) == {"OutputTensor", "OutputScaleTensor", "OutputZeroPointTensor"}
    for impl in qdml.IMPLEMENTATIONS:
        for g, w in zip(qdml.run_case(path, impl=impl), want):
            same_bits(g, w)
    subprocess.run([cli(), "check", path], check=True, stdout=subprocess.DEVNULL)
    # a wrong expected zero point fails the check
    bad = qdml.write_case(str(tmp_path / "bad.json"), "DYNAMIC_QUANTIZE_LINEAR", {"InputTensor": x},
                          expected={"OutputTensor": want[0], "OutputScaleTensor": want[1],
                                    "OutputZeroPointTensor": np.ones((1, 1), np.uint8)})
    assert subprocess.run([cli(), "check", bad], stdout=subprocess.DEVNULL).returncode != 0
    with pytest.raises(qdml.Error, match=r"^DYNAMIC_QUANTIZE_LINEAR: expected: a dict keyed by every output member"):
        qdml.write_case(str(tmp_path / "c.json"), "DYNAMIC_QUANTIZE_LINEAR", {"InputTensor": x}, expected=want[0])
    with pytest.raises(qdml.Error, match=r"^DYNAMIC_QUANTIZE_LINEAR: expected OutputScaleTensor: float64"):
        qdml.write_case(str(tmp_path / "c.json"), "DYNAMIC_QUANTIZE_LINEAR", {"InputTensor": x},
                        expected={"OutputTensor": want[0], "OutputScaleTensor": np.ones((1, 1)),
                                  "OutputZeroPointTensor": want[2]})


def test_write_case_quantization_tensors_and_4bit(tmp_path):
    # The hand-computed UINT4 example above: scale [1, 0.5] in two blocks of four, SCALE (zero point 8).
    x = np.array([0.5, 1.5, 2.5, -2.5, 100, -100, 7, 3], np.float32)
    s = np.array([1, 0.5], np.float32)
    q = np.array([8, 10, 10, 6, 15, 0, 15, 14], np.uint8)
    path = qdml.write_case(str(tmp_path / "q.json"), "QUANTIZE", {"InputTensor": x, "QuantizationTensors": [s]},
                           types={"OutputTensor": "UINT4"}, expected=q)
    case = json.loads(pathlib.Path(path).read_text())
    assert case["params"] == {"QuantizationType": "SCALE"}
    assert case["tensors"]["QuantizationTensors"] == [{"type": "FLOAT32", "sizes": [2], "values": [1.0, 0.5]}]
    assert case["tensors"]["OutputTensor"] == {"type": "UINT4", "sizes": [8]}
    for impl in qdml.IMPLEMENTATIONS:
        same_bits(qdml.run_case(path, impl=impl), q)
    subprocess.run([cli(), "check", path], check=True, stdout=subprocess.DEVNULL)
    # DEQUANTIZE of a 20-element INT4 input (a .npy file) with a zero point of 2D blocks (fewer dimensions
    # than the input: leading 1s): (q - zp) * s by hand, blocks of two columns.
    qi = np.tile(np.array([-8, 7, 0, 1, 3], np.int8), 8).reshape(2, 4, 5)[:, :, :4]  # (2, 4, 4), strided
    scale, zp = np.array([[0.5, 2]], np.float32), np.array([[1, -2]], np.int8)
    want = (qi.astype(np.float32) - np.repeat(zp, 2, axis=1)) * np.repeat(scale, 2, axis=1)
    path = qdml.write_case(str(tmp_path / "d.json"), "DEQUANTIZE",
                           {"InputTensor": qi, "QuantizationTensors": [scale, zp]},
                           types={"InputTensor": "INT4"}, expected=want)
    case = json.loads(pathlib.Path(path).read_text())
    assert case["params"] == {"QuantizationType": "SCALE_ZERO_POINT"}
    assert case["tensors"]["InputTensor"]["type"] == "INT4" and case["tensors"]["InputTensor"]["strides"] == [20, 5, 1]
    assert [t["type"] for t in case["tensors"]["QuantizationTensors"]] == ["FLOAT32", "INT4"]
    assert case["tensors"]["QuantizationTensors"][1]["sizes"] == [1, 1, 2]
    for impl in qdml.IMPLEMENTATIONS:
        same_bits(qdml.run_case(path, impl=impl), want)
    subprocess.run([cli(), "check", path], check=True, stdout=subprocess.DEVNULL)
    with pytest.raises(qdml.Error, match=r"^DEQUANTIZE: InputTensor: INT4 values lie in -8\.\.7"):
        qdml.write_case(str(tmp_path / "c.json"), "DEQUANTIZE",
                        {"InputTensor": np.full(4, 9, np.int8), "QuantizationTensors": [np.float32(1)]},
                        types={"InputTensor": "INT4"})
    with pytest.raises(qdml.Error, match=r"^QUANTIZE: types: InputTensor: 'INT4': only QUANTIZE's OutputTensor"):
        qdml.write_case(str(tmp_path / "c.json"), "QUANTIZE", {"InputTensor": x, "QuantizationTensors": [s]},
                        types={"InputTensor": "INT4"})
    with pytest.raises(qdml.Error, match=r"^QUANTIZE: OutputTensor: give its dtype"):
        qdml.write_case(str(tmp_path / "c.json"), "QUANTIZE", {"InputTensor": x, "QuantizationTensors": [s]})
