// bench/problems.hpp - the data of every qdml-bench row: one problem per
// operator (buffers, the DML desc, qdml's reference output), built from the
// row's name parts, so that qdml and its peers compute the same operation on
// the same data.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "support.hpp"

namespace qdml_bench {

/// Computes a desc with qdml's reference in RunOptions' default profile: the
/// output peers are checked against. (qdml::reference::run, not qdml::run:
/// a file that calls qdml::run compiles its operators' SIMD paths for every
/// type mix, which the peers' files do not need.)
template <class Desc>
void run_reference(const Desc& desc, qdml::Fidelity fidelity = qdml::RunOptions{}.fidelity) {
    qdml::reference::run(desc, qdml::FeatureLevel::Latest, fidelity);
}

/// Element-wise layouts (the suffix of the row's shape): `packed` 1-D
/// (`65536`); `bcast` {1,64,H,W} with one operand broadcast through zero
/// strides (`65536_bcast`); `strided` {1,64,H,W} whose first input is NHWC
/// memory through DML strides (`65536_strided`).
enum class Layout { packed, bcast, strided };

inline std::string shape_name(std::uint32_t n, Layout l) {
    const std::string s = std::to_string(n);
    return l == Layout::packed ? s : l == Layout::bcast ? s + "_bcast" : s + "_strided";
}

/// {1, 64, H, W} with H * W * 64 == n (n = 64 * 4^k).
inline std::array<std::uint32_t, 4> nchw_of(std::uint32_t n) {
    const auto hw = static_cast<std::uint32_t>(std::lround(std::sqrt(n / 64.0)));
    return {1, 64, hw, hw};
}

/// A desc of n elements in layout l: packed, NCHW-packed, NHWC through
/// strides (`strided`), or broadcast through `zero_mask` (1 bits: stride 0).
inline qdml::TensorDesc element_wise_desc(qdml::TensorDataType t, std::uint32_t n, Layout l, bool strided,
                                          unsigned zero_mask = 0) {
    if (l == Layout::packed) {
        return zero_mask ? qdml::TensorDesc::make(t, {n}, {0}) : qdml::TensorDesc::make(t, {n});
    }
    const auto s = nchw_of(n);
    std::array<std::uint32_t, 4> st = strided ? std::array<std::uint32_t, 4>{n, 1, s[3] * s[1], s[1]}
                                              : std::array<std::uint32_t, 4>{n, s[2] * s[3], s[3], 1};
    if (zero_mask) {  // broadcast: the other dimensions packed among themselves
        std::uint32_t packed = 1;
        for (int i = 3; i >= 0; --i) {
            st[i] = (zero_mask & (1u << i)) ? 0 : packed;
            packed *= (zero_mask & (1u << i)) ? 1 : s[i];
        }
    }
    return qdml::TensorDesc::make(t, {s[0], s[1], s[2], s[3]}, {st[0], st[1], st[2], st[3]});
}

/// A buffer of TotalTensorSizeInBytes for a desc, random values in [lo, hi].
template <class T>
Buffer<T> buffer_for(const qdml::TensorDesc& d, double lo = 0, double hi = 0, unsigned seed = 0) {
    return random_buffer<T>((d.TotalTensorSizeInBytes + sizeof(T) - 1) / sizeof(T), lo, hi, seed);
}

/// The range of random data: a whole integer type, or [-4, 4) for floats.
template <class T>
constexpr double lowest() {
    if constexpr (std::is_integral_v<T>) return static_cast<double>(std::numeric_limits<T>::lowest());
    else return -4.0;
}
template <class T>
constexpr double highest() {
    if constexpr (std::is_integral_v<T>) return static_cast<double>(std::numeric_limits<T>::max());
    else return 4.0;
}

/// ELEMENT_WISE_DEQUANTIZE_LINEAR: per-tensor scale and zero point
/// (`bcast`: per channel of {1,64,H,W}).
template <class TIn, class TOut>
struct DequantizeProblem {
    Buffer<TIn> input, zero_point;
    Buffer<TOut> scale, output, expected;
    qdml::ElementWiseDequantizeLinearDesc desc;
    std::uint32_t n;

    DequantizeProblem(std::uint32_t count, Layout l) : n(count) {
        using qdml::data_type_of;
        const auto in_desc = element_wise_desc(data_type_of<TIn>, n, l, l == Layout::strided);
        const unsigned param_mask = l == Layout::bcast ? 0b1101u : 0b1111u;  // per channel, or per tensor
        const auto param = [&](qdml::TensorDataType t) { return element_wise_desc(t, n, l, false, param_mask); };
        input = buffer_for<TIn>(in_desc, lowest<TIn>(), highest<TIn>(), 1);
        scale = buffer_for<TOut>(param(data_type_of<TOut>), 0.001, 0.01, 2);
        zero_point = buffer_for<TIn>(param(data_type_of<TIn>), lowest<TIn>() / 4, highest<TIn>() / 4, 3);
        const auto out_desc = element_wise_desc(data_type_of<TOut>, n, l, false);
        output = buffer_for<TOut>(out_desc);
        desc.InputTensor = tensor_of(in_desc, input);
        desc.ScaleTensor = tensor_of(param(data_type_of<TOut>), scale);
        desc.ZeroPointTensor = tensor_of(param(data_type_of<TIn>), zero_point);
        desc.OutputTensor = tensor_of(out_desc, output);
        run_reference(desc);
        expected = output;
    }
    double bytes() const {
        return span_bytes(desc.InputTensor) + span_bytes(desc.ScaleTensor) + span_bytes(*desc.ZeroPointTensor) +
               span_bytes(desc.OutputTensor);
    }
    void counters(benchmark::State& s) const { set_element_wise_counters(s, n, bytes()); }
};

/// Per-tensor parameters of a quantized add (zero points centred for u8).
template <class T>
struct AddParams {
    float a_scale = 0.05f, b_scale = 0.03f, out_scale = 0.07f;
    T a_zp = static_cast<T>(std::is_signed_v<T> ? 3 : 131);
    T b_zp = static_cast<T>(std::is_signed_v<T> ? -5 : 120);
    T out_zp = static_cast<T>(std::is_signed_v<T> ? 2 : 130);
};

/// ELEMENT_WISE_QUANTIZED_LINEAR_ADD, A = B = Output = T, per-tensor
/// parameters (`bcast`: B {1,1,H,W} over 64 channels; `strided`: A NHWC).
template <class T>
struct AddProblem {
    Buffer<T> a, b, output, expected;
    AddParams<T> p;
    qdml::ElementWiseQuantizedLinearAddDesc desc;
    std::uint32_t n;

    AddProblem(std::uint32_t count, Layout l) : n(count) {
        const auto t = qdml::data_type_of<T>;
        const auto a_desc = element_wise_desc(t, n, l, l == Layout::strided);
        const auto b_desc = element_wise_desc(t, n, l, false, l == Layout::bcast ? 0b0011u : 0u);
        a = buffer_for<T>(a_desc, lowest<T>(), highest<T>(), 4);
        b = buffer_for<T>(b_desc, lowest<T>(), highest<T>(), 5);
        const auto out_desc = element_wise_desc(t, n, l, false);
        output = buffer_for<T>(out_desc);
        const auto scalar = [&](qdml::TensorDataType st) {  // one element, A's rank
            return l == Layout::packed ? qdml::TensorDesc::make(st, {1}) : qdml::TensorDesc::make(st, {1, 1, 1, 1});
        };
        const auto f32 = qdml::TensorDataType::Float32;
        desc.ATensor = tensor_of(a_desc, a);
        desc.AScaleTensor = {scalar(f32), &p.a_scale};
        desc.AZeroPointTensor = qdml::Tensor{scalar(t), &p.a_zp};
        desc.BTensor = tensor_of(b_desc, b);
        desc.BScaleTensor = {scalar(f32), &p.b_scale};
        desc.BZeroPointTensor = qdml::Tensor{scalar(t), &p.b_zp};
        desc.OutputScaleTensor = {scalar(f32), &p.out_scale};
        desc.OutputZeroPointTensor = qdml::Tensor{scalar(t), &p.out_zp};
        desc.OutputTensor = tensor_of(out_desc, output);
        run_reference(desc);
        expected = output;
    }
    AddProblem(AddProblem&& o) = delete;  // desc points into p
    double bytes() const { return span_bytes(desc.ATensor) + span_bytes(desc.BTensor) + span_bytes(desc.OutputTensor); }
    void counters(benchmark::State& s) const { set_element_wise_counters(s, n, bytes()); }
};

/// ELEMENT_WISE_CLIP (or, Desc = ElementWiseClip1Desc, ELEMENT_WISE_CLIP1 with
/// the same bounds typed) without ScaleBias (`bcast`: input {1,1,H,W} over 64
/// channels; `strided`: input NHWC).
template <class T, class Desc = qdml::ElementWiseClipDesc>
struct ClipProblem {
    Buffer<T> input, output, expected;
    Desc desc;
    std::uint32_t n;

    ClipProblem(std::uint32_t count, Layout l) : n(count) {
        const auto t = qdml::data_type_of<T>;
        const auto in_desc = element_wise_desc(t, n, l, l == Layout::strided, l == Layout::bcast ? 0b0011u : 0u);
        input = buffer_for<T>(in_desc, lowest<T>(), highest<T>(), 6);
        const auto out_desc = element_wise_desc(t, n, l, false);
        output = buffer_for<T>(out_desc);
        desc.InputTensor = tensor_of(in_desc, input);
        desc.OutputTensor = tensor_of(out_desc, output);
        set_bounds(std::is_integral_v<T> ? -50.0f : -1.5f, std::is_integral_v<T> ? 60.0f : 2.0f);
        run_reference(desc);
        expected = output;
    }
    double bytes() const { return span_bytes(desc.InputTensor) + span_bytes(desc.OutputTensor); }
    void counters(benchmark::State& s) const { set_element_wise_counters(s, n, bytes()); }

private:
    void set_bounds(float lo, float hi) {
        if constexpr (std::is_same_v<Desc, qdml::ElementWiseClipDesc>) {
            desc.Min = lo;
            desc.Max = hi;
        } else {
            const auto typed = [](float v) {
                if constexpr (std::is_same_v<T, qdml::float16>)
                    return qdml::float16(v);
                else
                    return static_cast<T>(v);
            };
            desc.MinMaxDataType = qdml::data_type_of<T>;
            desc.Min = qdml::scalar_union(typed(lo));
            desc.Max = qdml::scalar_union(typed(hi));
        }
    }
};

/// DYNAMIC_QUANTIZE_LINEAR (issue 28): a packed FLOAT32 input of n random
/// values in [-3, 5), TOut output; `expected` (and the mismatch count) is
/// the quantized tensor (its scale and zero point follow from the same range).
template <class TOut>
struct DynamicQuantizeProblem {
    Buffer<float> input, scale;
    Buffer<TOut> zero_point, output, expected;
    qdml::DynamicQuantizeLinearDesc desc;
    std::uint32_t n;

    DynamicQuantizeProblem(std::uint32_t count, Layout l) : n(count) {
        using qdml::data_type_of;
        const auto in_desc = element_wise_desc(qdml::TensorDataType::Float32, n, l, false);
        const auto one = [&](qdml::TensorDataType t) {  // one element, the input's rank
            return l == Layout::packed ? qdml::TensorDesc::make(t, {1}) : qdml::TensorDesc::make(t, {1, 1, 1, 1});
        };
        input = buffer_for<float>(in_desc, -3.0, 5.0, 7);
        scale = buffer_for<float>(one(qdml::TensorDataType::Float32));
        zero_point = buffer_for<TOut>(one(data_type_of<TOut>));
        const auto out_desc = element_wise_desc(data_type_of<TOut>, n, l, false);
        output = buffer_for<TOut>(out_desc);
        desc.InputTensor = tensor_of(in_desc, input);
        desc.OutputTensor = tensor_of(out_desc, output);
        desc.OutputScaleTensor = tensor_of(one(qdml::TensorDataType::Float32), scale);
        desc.OutputZeroPointTensor = tensor_of(one(data_type_of<TOut>), zero_point);
        run_reference(desc);
        expected = output;
    }
    /// Every byte read and written once (the input is read twice: its range, then its quantization).
    double bytes() const {
        return span_bytes(desc.InputTensor) + span_bytes(desc.OutputTensor) + span_bytes(desc.OutputScaleTensor) +
               span_bytes(desc.OutputZeroPointTensor);
    }
    void counters(benchmark::State& s) const { set_element_wise_counters(s, n, bytes()); }
};

/// Zero point of a q8 type: the middle of u8, 0 for s8.
template <class T>
constexpr T mid_zero_point() {
    return static_cast<T>(std::is_signed_v<T> ? 0 : 128);
}

/// An output scale that spreads an int32 sum of `terms` products of
/// uniform q8 values (standard deviation ~74 each) over about +-40 output
/// steps: few outputs saturate.
inline float spread_scale(float in_scale_product, double terms) {
    return static_cast<float>(in_scale_product * 74.0 * 74.0 * std::sqrt(terms) / 40.0);
}

/// QUANTIZED_LINEAR_MATRIX_MULTIPLY, {M,K} x {K,N} (or {BATCH,M,K} x
/// {BATCH,K,N}), per-tensor parameters; A and Output zero points in the
/// middle of their types; B's zero point present only for a u8 B.
template <class TA, class TB, class TOut>
struct MatmulProblem {
    using A = TA;
    using B = TB;
    using Out = TOut;
    std::uint32_t batch, M, N, K;
    Buffer<TA> a;
    Buffer<TB> b;
    Buffer<TOut> output, expected;
    float a_scale = 0.02f, b_scale = 0.01f, out_scale;
    TA a_zp = mid_zero_point<TA>();
    TB b_zp = mid_zero_point<TB>();
    TOut out_zp = mid_zero_point<TOut>();
    qdml::QuantizedLinearMatrixMultiplyDesc desc;

    /// (`reference` false: `expected` is left empty, for a caller that fills
    /// it another way: the model suite, bench/models.cpp.)
    MatmulProblem(std::uint32_t batch_, std::uint32_t m, std::uint32_t n, std::uint32_t k, bool reference = true)
        : batch(batch_), M(m), N(n), K(k), out_scale(spread_scale(a_scale * b_scale, k)) {
        using qdml::data_type_of;
        const auto shape = [&](qdml::TensorDataType t, std::uint32_t r, std::uint32_t c) {
            return batch > 1 ? qdml::TensorDesc::make(t, {batch, r, c}) : qdml::TensorDesc::make(t, {r, c});
        };
        const auto scalar = [&](qdml::TensorDataType t) { return qdml::TensorDesc::make(t, {1, 1}); };
        const auto f32 = qdml::TensorDataType::Float32;
        a = buffer_for<TA>(shape(data_type_of<TA>, M, K), lowest<TA>(), highest<TA>(), 7);
        b = buffer_for<TB>(shape(data_type_of<TB>, K, N), lowest<TB>(), highest<TB>(), 8);
        output = buffer_for<TOut>(shape(data_type_of<TOut>, M, N));
        desc.ATensor = tensor_of(shape(data_type_of<TA>, M, K), a);
        desc.AScaleTensor = {scalar(f32), &a_scale};
        desc.AZeroPointTensor = qdml::Tensor{scalar(data_type_of<TA>), &a_zp};
        desc.BTensor = tensor_of(shape(data_type_of<TB>, K, N), b);
        desc.BScaleTensor = {scalar(f32), &b_scale};
        if (!std::is_signed_v<TB>) desc.BZeroPointTensor = qdml::Tensor{scalar(data_type_of<TB>), &b_zp};
        desc.OutputScaleTensor = {scalar(f32), &out_scale};
        desc.OutputZeroPointTensor = qdml::Tensor{scalar(data_type_of<TOut>), &out_zp};
        desc.OutputTensor = tensor_of(shape(data_type_of<TOut>, M, N), output);
        if (!reference) return;
        run_reference(desc);
        expected = output;
    }
    double ops() const { return 2.0 * batch * M * N * K; }
    void counters(benchmark::State& s) const { set_ops_counter(s, ops()); }
    /// The multiplier of docs/semantics.md section 5, as qdml forms it.
    float multiplier() const { return (a_scale * b_scale) / out_scale; }
};

/// MATRIX_MULTIPLY_INTEGER, {M,K} x {K,N} (or batched), int32 output:
/// MatmulProblem's operands and zero points (A's in the middle of its type,
/// B's only for a u8 B), without scales.
template <class TA, class TB>
struct MatmulIntegerProblem {
    using A = TA;
    using B = TB;
    using Out = std::int32_t;
    std::uint32_t batch, M, N, K;
    Buffer<TA> a;
    Buffer<TB> b;
    Buffer<std::int32_t> output, expected;
    TA a_zp = mid_zero_point<TA>();
    TB b_zp = mid_zero_point<TB>();
    qdml::MatrixMultiplyIntegerDesc desc;

    MatmulIntegerProblem(std::uint32_t batch_, std::uint32_t m, std::uint32_t n, std::uint32_t k)
        : batch(batch_), M(m), N(n), K(k) {
        using qdml::data_type_of;
        const auto shape = [&](qdml::TensorDataType t, std::uint32_t r, std::uint32_t c) {
            return batch > 1 ? qdml::TensorDesc::make(t, {batch, r, c}) : qdml::TensorDesc::make(t, {r, c});
        };
        const auto scalar = [&](qdml::TensorDataType t) { return qdml::TensorDesc::make(t, {1, 1}); };
        a = buffer_for<TA>(shape(data_type_of<TA>, M, K), lowest<TA>(), highest<TA>(), 7);
        b = buffer_for<TB>(shape(data_type_of<TB>, K, N), lowest<TB>(), highest<TB>(), 8);
        output = buffer_for<std::int32_t>(shape(qdml::TensorDataType::Int32, M, N));
        desc.ATensor = tensor_of(shape(data_type_of<TA>, M, K), a);
        desc.AZeroPointTensor = qdml::Tensor{scalar(data_type_of<TA>), &a_zp};
        desc.BTensor = tensor_of(shape(data_type_of<TB>, K, N), b);
        if (!std::is_signed_v<TB>) desc.BZeroPointTensor = qdml::Tensor{scalar(data_type_of<TB>), &b_zp};
        desc.OutputTensor = tensor_of(shape(qdml::TensorDataType::Int32, M, N), output);
        run_reference(desc);
        expected = output;
    }
    double ops() const { return 2.0 * batch * M * N * K; }
    void counters(benchmark::State& s) const { set_ops_counter(s, ops()); }
};

/// MATRIX_MULTIPLY_INTEGER_TO_FLOAT as ONNX Runtime's MatMulIntegerToFloat maps
/// onto it: A {M, K} with a per-tensor scale and zero point, B {K, N} with
/// per-column scales and zero points, a bias row repeated through a zero
/// stride, FLOAT32 out. `expected` holds the default profile's reference.
template <class TA, class TB>
struct MatmulIntegerToFloatProblem {
    using A = TA;
    using B = TB;
    using Out = float;
    std::uint32_t batch, M, N, K;
    Buffer<TA> a, a_zp;
    Buffer<TB> b, b_zp;
    Buffer<float> a_scale, b_scale, bias, output, expected;
    qdml::MatrixMultiplyIntegerToFloatDesc desc;

    MatmulIntegerToFloatProblem(std::uint32_t batch_, std::uint32_t m, std::uint32_t n, std::uint32_t k)
        : batch(batch_), M(m), N(n), K(k) {
        using qdml::data_type_of;
        using F = qdml::TensorDataType;
        const auto da = qdml::TensorDesc::make(data_type_of<TA>, {M, K}),
                   db = qdml::TensorDesc::make(data_type_of<TB>, {K, N}),
                   dout = qdml::TensorDesc::make(F::Float32, {M, N}),
                   dbias = qdml::TensorDesc::make(F::Float32, {M, N}, {0, 1});
        const auto one = [](qdml::TensorDataType t) { return qdml::TensorDesc::make(t, {1, 1}); };
        const auto column = [&](qdml::TensorDataType t) { return qdml::TensorDesc::make(t, {1, N}); };
        a = buffer_for<TA>(da, lowest<TA>(), highest<TA>(), 21);
        b = buffer_for<TB>(db, lowest<TB>(), highest<TB>(), 22);
        a_zp = buffer_for<TA>(one(data_type_of<TA>), lowest<TA>() / 4, highest<TA>() / 4, 23);
        b_zp = buffer_for<TB>(column(data_type_of<TB>), lowest<TB>() / 4, highest<TB>() / 4, 24);
        a_scale = buffer_for<float>(one(F::Float32), 0.001, 0.01, 25);
        b_scale = buffer_for<float>(column(F::Float32), 0.001, 0.01, 26);
        bias = buffer_for<float>(dbias, -4, 4, 27);
        output = buffer_for<float>(dout);
        desc.ATensor = tensor_of(da, a);
        desc.AScaleTensor = tensor_of(one(F::Float32), a_scale);
        desc.AZeroPointTensor = tensor_of(one(data_type_of<TA>), a_zp);
        desc.BTensor = tensor_of(db, b);
        desc.BScaleTensor = tensor_of(column(F::Float32), b_scale);
        desc.BZeroPointTensor = tensor_of(column(data_type_of<TB>), b_zp);
        desc.BiasTensor = tensor_of(dbias, bias);
        desc.OutputTensor = tensor_of(dout, output);
        run_reference(desc);
        expected = output;
    }
    double ops() const { return 2.0 * batch * M * N * K; }
    void counters(benchmark::State& s) const { set_ops_counter(s, ops()); }

    /// The exact profile's reference of this problem without BZeroPoint (every
    /// B zero point 0), computed on first use: what a peer that has no
    /// per-column weight zero point (oneDNN 2.6's matmul) is checked against.
    const Buffer<float>& expected_without_b_zero_point() {
        if (expected_no_b_zp.empty()) {
            expected_no_b_zp = buffer_for<float>(desc.OutputTensor.Desc);
            auto d = desc;
            d.BZeroPointTensor.reset();
            d.OutputTensor = tensor_of(desc.OutputTensor.Desc, expected_no_b_zp);
            run_reference(d, qdml::Fidelity::Exact);
        }
        return expected_no_b_zp;
    }

private:
    Buffer<float> expected_no_b_zp;
};

/// A convolution shape of issue 9: KHxKW_CIN_COUT_H[_sS][_dw]_LAYOUT
/// (square input, padding (KH-1)/2 on every side, one image). `one_d`
/// (issue 27): one spatial dimension (DimensionCount 1), K_CIN_COUT_W[_sS]_ncw:
/// `kh` is the kernel's width and `hw` the input's, {N, C, W} packed (`nhwc` false).
struct ConvShape {
    std::uint32_t kh, cin, cout, hw, stride, groups;
    bool nhwc;
    bool one_d = false;
    std::uint32_t pad() const { return (kh - 1) / 2; }
    std::uint32_t out_hw() const { return (hw + 2 * pad() - kh) / stride + 1; }
    std::string name() const {
        std::string s = std::to_string(kh) + (one_d ? "" : "x" + std::to_string(kh)) + "_" + std::to_string(cin) +
                        "_" + std::to_string(cout) + "_" + std::to_string(hw);
        if (stride != 1) s += "_s" + std::to_string(stride);
        if (groups == cin && groups > 1) s += "_dw";
        else if (groups != 1) s += "_g" + std::to_string(groups);
        return s + (one_d ? "_ncw" : nhwc ? "_nhwc" : "_nchw");
    }
    /// The filter taps of one output: KH * KW (one_d: K).
    std::uint32_t taps() const { return one_d ? kh : kh * kh; }
    /// OPS of one call: 2 * OH * OW * COUT * CIN/G * KH * KW (one image; one_d: 2 * OW * COUT * CIN/G * K).
    double ops() const {
        const double o = out_hw();
        return 2.0 * (one_d ? o : o * o) * cout * (cin / groups) * taps();
    }
    ConvShape with_layout(bool nhwc_) const {
        ConvShape c = *this;
        c.nhwc = nhwc_;
        return c;
    }
    bool operator==(const ConvShape& o) const { return name() == o.name(); }
};

/// Sizes {N,C,H,W} of shape `s`'s layout as DML strides of NCHW (packed) or
/// NHWC memory; `s.one_d`: {N,C,W} packed.
inline qdml::TensorDesc conv_tensor(qdml::TensorDataType t, std::uint32_t c, std::uint32_t h, const ConvShape& s) {
    if (s.one_d) return qdml::TensorDesc::make(t, {1, c, h});
    return s.nhwc ? qdml::TensorDesc::make(t, {1, c, h, h}, {c * h * h, 1, h * c, c})
                  : qdml::TensorDesc::make(t, {1, c, h, h});
}

/// The filter {Cout, Cin/G, KH, KW} of shape `s` ({Cout, Cin/G, K} one_d), packed.
inline qdml::TensorDesc conv_filter_tensor(qdml::TensorDataType t, const ConvShape& s) {
    return s.one_d ? qdml::TensorDesc::make(t, {s.cout, s.cin / s.groups, s.kh})
                   : qdml::TensorDesc::make(t, {s.cout, s.cin / s.groups, s.kh, s.kh});
}

/// A convolution desc's geometry for shape `s`: its spatial dimension count,
/// strides, padding on every side, groups (no dilation). (one_d: the arrays'
/// second entries are not read.)
template <class Desc>
void set_conv_geometry(Desc& d, const ConvShape& s) {
    d.DimensionCount = s.one_d ? 1 : 2;
    d.Strides = {s.stride, s.stride};
    d.StartPadding = {s.pad(), s.pad()};
    d.EndPadding = {s.pad(), s.pad()};
    d.GroupCount = s.groups;
}

/// QUANTIZED_LINEAR_CONVOLUTION u8 input, s8 filter {Cout, Cin/G, KH, KW},
/// int32 bias, u8 output; per-tensor scales; input and output zero points
/// 128, no filter zero point. One spatial dimension (`one_d`): input, filter,
/// output, scales, zero points and bias of 3 dimensions.
struct ConvProblem {
    ConvShape shape;
    Buffer<std::uint8_t> input, output, expected;
    Buffer<std::int8_t> filter;
    Buffer<std::int32_t> bias;
    float in_scale = 0.02f, filter_scale = 0.01f, out_scale;
    std::uint8_t in_zp = 128, out_zp = 128;
    qdml::QuantizedLinearConvolutionDesc desc;

    /// (`reference` false: `expected` is left empty, as MatmulProblem's.)
    explicit ConvProblem(const ConvShape& s, bool reference = true)
        : shape(s), out_scale(spread_scale(in_scale * filter_scale, double(s.cin / s.groups) * s.taps())) {
        using qdml::TensorDataType;
        const auto param = [&s](TensorDataType t, std::uint32_t c) {  // {1, c, 1, 1}, one_d {1, c, 1}
            return s.one_d ? qdml::TensorDesc::make(t, {1, c, 1}) : qdml::TensorDesc::make(t, {1, c, 1, 1});
        };
        const auto scalar = [&](TensorDataType t) { return param(t, 1); };
        const auto in_desc = conv_tensor(TensorDataType::UInt8, s.cin, s.hw, s);
        const auto out_desc = conv_tensor(TensorDataType::UInt8, s.cout, s.out_hw(), s);
        const auto filter_desc = conv_filter_tensor(TensorDataType::Int8, s);
        const auto bias_desc = param(TensorDataType::Int32, s.cout);
        input = buffer_for<std::uint8_t>(in_desc, 0, 255, 9);
        filter = buffer_for<std::int8_t>(filter_desc, -128, 127, 10);
        bias = buffer_for<std::int32_t>(bias_desc, -5000, 5000, 11);
        output = buffer_for<std::uint8_t>(out_desc);
        desc.InputTensor = tensor_of(in_desc, input);
        desc.InputScaleTensor = {scalar(TensorDataType::Float32), &in_scale};
        desc.InputZeroPointTensor = qdml::Tensor{scalar(TensorDataType::UInt8), &in_zp};
        desc.FilterTensor = tensor_of(filter_desc, filter);
        desc.FilterScaleTensor = {scalar(TensorDataType::Float32), &filter_scale};
        desc.BiasTensor = tensor_of(bias_desc, bias);
        desc.OutputScaleTensor = {scalar(TensorDataType::Float32), &out_scale};
        desc.OutputZeroPointTensor = qdml::Tensor{scalar(TensorDataType::UInt8), &out_zp};
        desc.OutputTensor = tensor_of(out_desc, output);
        set_conv_geometry(desc, s);
        if (!reference) return;
        run_reference(desc);
        expected = output;
    }
    double ops() const { return shape.ops(); }
    void counters(benchmark::State& s) const { set_ops_counter(s, ops()); }
    float multiplier() const { return (in_scale * filter_scale) / out_scale; }
};

/// CONVOLUTION_INTEGER (issue 27): ConvProblem's u8 input (NCHW, or NHWC
/// memory through DML strides), input zero point 128 and s8 filter, no
/// filter zero point, an int32 output in the input's layout (no bias, no
/// scales).
struct ConvIntegerProblem {
    ConvShape shape;
    Buffer<std::uint8_t> input;
    Buffer<std::int8_t> filter;
    Buffer<std::int32_t> output, expected;
    std::uint8_t in_zp = 128;
    qdml::ConvolutionIntegerDesc desc;

    explicit ConvIntegerProblem(const ConvShape& s) : shape(s) {
        using qdml::TensorDataType;
        const auto in_desc = conv_tensor(TensorDataType::UInt8, s.cin, s.hw, s);
        const auto out_desc = conv_tensor(TensorDataType::Int32, s.cout, s.out_hw(), s);
        const auto filter_desc = conv_filter_tensor(TensorDataType::Int8, s);
        input = buffer_for<std::uint8_t>(in_desc, 0, 255, 9);
        filter = buffer_for<std::int8_t>(filter_desc, -128, 127, 10);
        output = buffer_for<std::int32_t>(out_desc);
        desc.InputTensor = tensor_of(in_desc, input);
        desc.InputZeroPointTensor = qdml::Tensor{qdml::TensorDesc::make(TensorDataType::UInt8, {1, 1, 1, 1}), &in_zp};
        desc.FilterTensor = tensor_of(filter_desc, filter);
        desc.OutputTensor = tensor_of(out_desc, output);
        set_conv_geometry(desc, s);
        run_reference(desc);
        expected = output;
    }
    ConvIntegerProblem(ConvIntegerProblem&&) = delete;  // desc points into in_zp
    double ops() const { return shape.ops(); }
    void counters(benchmark::State& s) const { set_ops_counter(s, ops()); }
};

/// The convolution shapes of issue 9, NCHW; every row runs in both layouts
/// (`with_layout(true)`: the same sizes in NHWC memory through DML strides).
inline std::vector<ConvShape> conv_shapes() {
    return {{3, 64, 64, 56, 1, 1, false},
            {1, 256, 64, 56, 1, 1, false},
            {3, 32, 32, 112, 1, 32, false},
            {3, 128, 128, 28, 2, 1, false},
            {7, 3, 64, 224, 2, 1, false}};
}
/// The CONVOLUTION_INTEGER rows' shapes (issue 27): 3x3_64_64_56 in NHWC
/// memory, then the 1x1 256->64 in NHWC and 3x3_64_64_56 in NCHW.
inline std::vector<ConvShape> conv_integer_shapes() {
    return {conv_shapes()[0].with_layout(true), conv_shapes()[1].with_layout(true), conv_shapes()[0]};
}
/// The one-spatial-dimension conv rows' shapes (issue 27): 3_64_64_3136_ncw,
/// kernel 3 over a width of 3136 (56 * 56, 3x3_64_64_56's positions), padding 1 each side.
inline std::vector<ConvShape> conv_1d_shapes() { return {{3, 64, 64, 3136, 1, 1, false, true}}; }

/// The matmul shapes of issue 8: BATCHxMxNxK (a 3-D DML desc) or MxNxK.
struct MatmulShape {
    std::uint32_t batch, m, n, k;
    std::string name() const {
        const std::string mnk = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
        return batch > 1 ? std::to_string(batch) + "x" + mnk : mnk;
    }
};
inline std::vector<MatmulShape> matmul_shapes() {
    return {{1, 1024, 1024, 1024}, {1, 1, 4096, 4096}, {64, 64, 64, 64}, {1, 256, 256, 256}};
}
/// The shapes of the MATRIX_MULTIPLY_INTEGER rows (issue 27): the cube and
/// the GEMV of matmul_shapes().
inline std::vector<MatmulShape> matmul_integer_shapes() { return {{1, 1024, 1024, 1024}, {1, 1, 4096, 4096}}; }
/// The shapes of the MATRIX_MULTIPLY_INTEGER_TO_FLOAT rows (issue 27): the
/// cube and a BERT-base feed-forward product of 128 tokens.
inline std::vector<MatmulShape> matmul_integer_to_float_shapes() {
    return {{1, 1024, 1024, 1024}, {1, 128, 768, 3072}};
}

/// BENCH.md's name of one operand type: u8, s8, s32 (int32 out), f32 (float out).
template <class T>
constexpr const char* type_part() {
    if constexpr (std::is_same_v<T, float>) return "f32";
    else if constexpr (std::is_same_v<T, std::int32_t>) return "s32";
    else return std::is_signed_v<T> ? "s8" : "u8";
}

/// BENCH.md's name of a type triple (A, B, Output), e.g. "u8s8u8", "u8s8s32".
template <class TA, class TB, class TOut>
std::string q8_types() {
    return std::string(type_part<TA>()) + type_part<TB>() + type_part<TOut>();
}

/// `matmul/<impl>/<types>/<shape>` of problem P.
template <class P>
std::string matmul_row(const std::string& impl, const MatmulShape& m) {
    return "matmul/" + impl + "/" + q8_types<typename P::A, typename P::B, typename P::Out>() + "/" + m.name();
}

/// The matmul rows of issue 8: u8s8u8 at every shape of matmul_shapes(),
/// u8u8u8 and s8s8s8 at 1024^3; `f(type_tag<MatmulProblem<...>>, shape)`.
template <class F>
void for_each_matmul_row(F&& f) {
    for (const MatmulShape& m : matmul_shapes())
        f(qdml::type_tag<MatmulProblem<std::uint8_t, std::int8_t, std::uint8_t>>{}, m);
    const MatmulShape cube{1, 1024, 1024, 1024};
    f(qdml::type_tag<MatmulProblem<std::uint8_t, std::uint8_t, std::uint8_t>>{}, cube);
    f(qdml::type_tag<MatmulProblem<std::int8_t, std::int8_t, std::int8_t>>{}, cube);
}

/// Registers `<op>/<impl>/<types>/<shape>` for each of `runners`, on
/// problem P built from `args`; a row other than the reference counts, once
/// before timing, the output elements that differ from the reference
/// (`mismatches`, 0 when bit-identical): in the profile the row's
/// implementation computes (profile_of: `simd_exact` against the exact
/// reference).
template <class P, class... Args>
void register_qdml_rows(const std::string& op, const std::string& types, const std::string& shape,
                        benchmark::TimeUnit unit,
                        const std::vector<std::pair<std::string, Runner<decltype(P::desc)>>>& runners,
                        Args... args) {
    for (const auto& impl : runners) {
        const auto run = impl.second;
        const bool check = impl.first != "reference";
        add_row(op + "/" + impl.first + "/" + types + "/" + shape, [=](benchmark::State& s) {
            auto& p = cached<P>(args...);
            if (check) {  // a fast path is bit-identical to the reference: count what is not
                const qdml::Fidelity f = profile_of(impl.first);
                auto expected = p.expected;
                if (f != qdml::RunOptions{}.fidelity) {
                    run_reference(p.desc, f);
                    expected = p.output;
                }
                std::memset(static_cast<void*>(p.output.data()), 0xA5, p.output.size() * sizeof(p.output[0]));
                run(p.desc);
                s.counters["mismatches"] = static_cast<double>(
                    count_mismatches(p.output.data(), expected.data(), p.output.size()));
            }
            for (auto _ : s) {
                run(p.desc);
                benchmark::ClobberMemory();
            }
            p.counters(s);
        }, unit);
    }
}

/// Registers a peer row on problem P built from `args`: `make(P&)` sets the
/// peer up (outside the timed loop) to write P::output in P's layout, which
/// is poisoned first, so that an element the peer leaves alone counts as a
/// mismatch against P::expected.
template <class P, class Make, class... Args>
void register_peer_row(const std::string& name, benchmark::TimeUnit unit, Make make, Args... args) {
    add_row(name, [=](benchmark::State& s) {
        auto& p = cached<P>(args...);
        std::memset(static_cast<void*>(p.output.data()), 0xA5, p.output.size() * sizeof(p.output[0]));
        Peer peer = make(p);
        if (!peer.mismatches)
            peer.mismatches = [&p] { return count_mismatches(p.output.data(), p.expected.data(), p.output.size()); };
        time_peer(s, peer, p.output.size());
        p.counters(s);
    }, unit);
}

/// The element-wise forms: shape from (n, layout), microseconds; the packed
/// 2^24 rows in both profiles (qdml_runners' both_profiles).
template <class P>
void register_element_wise(const std::string& op, const std::string& types, std::uint32_t n, Layout l) {
    register_qdml_rows<P>(op, types, shape_name(n, l), benchmark::kMicrosecond,
                          qdml_runners<decltype(P::desc)>(true, n == 16777216 && l == Layout::packed), n, l);
}
/// The `/threads:N` rows of an element-wise form (issue 26): the packed
/// `simd` row of n elements on N worker threads (run_on_threads), for each N
/// of thread_counts(), with its mismatch count.
template <class P>
void register_element_wise_threads(const std::string& op, const std::string& types, std::uint32_t n) {
    for (const unsigned threads : thread_counts())
        register_qdml_rows<P>(op, types, shape_name(n, Layout::packed) + threads_suffix(threads),
                              benchmark::kMicrosecond,
                              {{"simd", run_on_threads<decltype(P::desc)>(qdml::Implementation::Simd, threads)}}, n,
                              Layout::packed);
}
template <class P, class Make>
void register_element_wise_peer(const std::string& op, const std::string& impl, const std::string& types,
                                 std::uint32_t n, Layout l, Make make) {
    register_peer_row<P>(op + "/" + impl + "/" + types + "/" + shape_name(n, l), benchmark::kMicrosecond, make, n, l);
}

/// The element-wise peer rows of issue 7 for one peer: dequantize i8/u8 ->
/// f32, add i8/u8 (and the broadcast i8 row), clip f32/i8/f16. `add(p, l)`
/// and `clip(p)` are generic over the problem type.
template <class DequantizeI8, class DequantizeU8, class Add, class Clip>
void register_element_wise_peers(const std::string& impl, DequantizeI8 dequantize_i8, DequantizeU8 dequantize_u8,
                                 Add add, Clip clip) {
    const auto add_row = [&](auto type_tag, const std::string& types, std::uint32_t n, Layout l) {
        using T = typename decltype(type_tag)::type;
        register_element_wise_peer<AddProblem<T>>("quantized_linear_add", impl, types, n, l,
                                                  [add, l](AddProblem<T>& p) { return add(p, l); });
    };
    const auto clip_row = [&](auto type_tag, const std::string& types, std::uint32_t n) {
        using T = typename decltype(type_tag)::type;
        register_element_wise_peer<ClipProblem<T>>("clip", impl, types, n, Layout::packed, clip);
    };
    for (std::uint32_t n : {65536u, 16777216u}) {
        register_element_wise_peer<DequantizeProblem<std::int8_t, float>>("dequantize_linear", impl, "i8_f32", n,
                                                                         Layout::packed, dequantize_i8);
        register_element_wise_peer<DequantizeProblem<std::uint8_t, float>>("dequantize_linear", impl, "u8_f32", n,
                                                                          Layout::packed, dequantize_u8);
        add_row(qdml::type_tag<std::int8_t>{}, "i8", n, Layout::packed);
        add_row(qdml::type_tag<std::uint8_t>{}, "u8", n, Layout::packed);
        clip_row(qdml::type_tag<float>{}, "f32", n);
        clip_row(qdml::type_tag<std::int8_t>{}, "i8", n);
        clip_row(qdml::type_tag<qdml::float16>{}, "f16", n);
    }
    add_row(qdml::type_tag<std::int8_t>{}, "i8", 65536, Layout::bcast);
}

/// The element-wise peer rows of issue 26 for one peer, at `/threads:N` for
/// each N of thread_counts(): dequantize i8 -> f32 and add i8 at 2^24, clip
/// f32 at 2^16 and 2^24 (packed), the same rows as qdml's
/// register_element_wise_threads. `dequantize_i8(p, N)`, `add(p, N)` and
/// `clip(p, N)` set the peer up on N threads.
template <class DequantizeI8, class Add, class Clip>
void register_element_wise_peers_threads(const std::string& impl, DequantizeI8 dequantize_i8, Add add, Clip clip) {
    const auto rows = [&impl](auto type_tag, const std::string& op, const std::string& types, std::uint32_t n,
                              auto make) {
        using P = typename decltype(type_tag)::type;
        const std::string name = op + "/" + impl + "/" + types + "/" + shape_name(n, Layout::packed);
        for (const unsigned threads : thread_counts())
            register_peer_row<P>(name + threads_suffix(threads), benchmark::kMicrosecond,
                                 [make, threads](P& p) { return make(p, threads); }, n, Layout::packed);
    };
    rows(qdml::type_tag<DequantizeProblem<std::int8_t, float>>{}, "dequantize_linear", "i8_f32", 16777216,
         dequantize_i8);
    rows(qdml::type_tag<AddProblem<std::int8_t>>{}, "quantized_linear_add", "i8", 16777216, add);
    for (const std::uint32_t n : {65536u, 16777216u})
        rows(qdml::type_tag<ClipProblem<float>>{}, "clip", "f32", n, clip);
}

}  // namespace qdml_bench
