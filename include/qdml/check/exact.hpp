// qdml/check/exact.hpp - the exact checker. Recomputes an operator with
// exact integer accumulation (int64, no wrap) and binary64 arithmetic, and
// compares each element of the output tensor qdml computed (in binary32, as
// SPEC.md prescribes) with the exactly rounded result.
//
// Why results differ by one step: SPEC.md computes fp32(acc) * mult with
// mult = fp32(AScale * BScale) / OutputScale, three binary32 roundings
// before the final rounding to an integer. When the exact real value lies
// within about 2^-22 relative of a .5 tie, those roundings can push it to
// the other side of the tie, and the result differs from the exactly
// rounded one by one step. Every golden implementation (ONNX Runtime, a
// GPU driver, TFLite's fixed-point path) makes such choices differently,
// which is why golden references disagree by one step on exactly these
// elements. The checker marks each difference as `near_tie` (explained by
// binary32 rounding) or not (a real discrepancy worth investigating).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "qdml/runtime/dispatch.hpp"

namespace qdml::exact {

/// Relative distance to a rounding boundary within which binary32
/// arithmetic may round the other way: 2^-20 of max(1, |value|), far above
/// the few binary32 roundings (each <= 2^-24 relative) SPEC.md performs.
inline double tie_window(double value) { return std::ldexp(std::fmax(1.0, std::fabs(value)), -20); }

/// One output element where qdml's result differs from the exact one.
struct Difference {
    std::vector<std::uint32_t> index;  ///< logical index into the output tensor (DimensionCount entries)
    double got = 0;                    ///< qdml's output
    double exact = 0;                  ///< the exactly rounded output
    double value = 0;                  ///< the exact value before the final rounding (output units, before the zero point)
    double boundary_distance = 0;      ///< |value - nearest rounding boundary| (.5 ties; integers for truncation)
    bool near_tie = false;             ///< boundary_distance <= tie_window(value): explained by binary32 rounding
    bool accumulator_wrapped = false;  ///< the int32 accumulator wrapped (the exact sum does not fit int32)
};

struct Report {
    std::string_view operator_name;
    std::uint64_t elements = 0;          ///< output elements checked
    std::uint64_t near_tie_elements = 0;  ///< quantized outputs: elements within the tie window (agreeing or not);
                                          ///< float outputs: differing elements within one ulp
    std::vector<Difference> differences;  ///< every element that differs from the exact result

    /// Differences neither near a tie nor caused by the (specified) int32 wrap.
    std::uint64_t unexplained() const {
        std::uint64_t n = 0;
        for (const auto& d : differences) n += !d.near_tie && !d.accumulator_wrapped;
        return n;
    }
};

namespace detail {

/// The exact evaluation of one output element.
struct Exact {
    double value = 0;      // before the final rounding / conversion
    double result = 0;     // in the output type's values
    double boundary = 0;   // distance to the nearest rounding boundary
    bool wrapped = false;
    double ulp = 0;        // float outputs: one unit in the last place of `result`
};

/// Q(v, zp, T) in binary64: rne(v) + zp, saturated.
template <class T>
Exact quantize_exact(double v, std::int64_t zp, bool wrapped = false) {
    Exact e;
    e.value = v;
    const double lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    e.result = std::fmin(hi, std::fmax(lo, std::nearbyint(v) + static_cast<double>(zp)));
    e.boundary = std::fabs(std::fabs(v - std::floor(v)) - 0.5);
    e.wrapped = wrapped;
    return e;
}

/// Conversion of the exact value `v` to a float output type.
template <class T>
Exact round_exact(double v) {
    Exact e;
    e.value = v;
    // Float outputs have no .5 tie: SPEC.md's binary32 steps may move the
    // result by one unit in the last place, which counts as explained.
    if constexpr (std::is_same_v<T, float16>) {
        const float16 h = float16::from_double(v);
        e.result = static_cast<float>(h);
        const float16 next = float16::from_bits(static_cast<std::uint16_t>((h.bits & 0x7fffu) == 0x7bffu ? h.bits : h.bits + 1));
        e.ulp = std::fabs(static_cast<double>(static_cast<float>(next)) - std::fabs(e.result));
    } else {
        const float f = static_cast<float>(v);
        e.result = f;
        e.ulp = static_cast<double>(std::nextafter(std::fabs(f), std::numeric_limits<float>::max())) - std::fabs(f);
    }
    e.boundary = std::numeric_limits<double>::infinity();
    return e;
}

template <class T>
double as_double(T v) {
    if constexpr (std::is_same_v<T, float16>) return static_cast<float>(v);
    else return static_cast<double>(v);
}

inline bool fits_int32(std::int64_t v) {
    return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
}

/// Compares every element of `out` against exact(i).
template <class View, class F>
void compare(const View& out, F&& exact, Report& r) {
    for_each_index(out.sizes, [&](const auto& i) {
        const Exact e = exact(i);
        const double got = as_double(out[i]);
        ++r.elements;
        const bool near = e.ulp > 0 ? std::fabs(got - e.result) <= e.ulp : e.boundary <= tie_window(e.value);
        const bool same = (std::isnan(got) && std::isnan(e.result)) || got == e.result;
        if (e.ulp == 0 || !same) r.near_tie_elements += near;
        if (same) return;
        Difference d;
        for (const auto v : i) d.index.push_back(v);
        d.got = got;
        d.exact = e.result;
        d.value = e.value;
        d.boundary_distance = e.boundary;
        d.near_tie = near;
        d.accumulator_wrapped = e.wrapped;
        r.differences.push_back(std::move(d));
    });
}

template <class TIn, class TOut>
void check(const ElementWiseDequantizeLinear<TIn, TOut, kMaxDimensions>& op, Report& r) {
    compare(op.OutputTensor, [&](const auto& i) {
        const std::int64_t zp = op.ZeroPointTensor ? std::int64_t{(*op.ZeroPointTensor)[i]} : 0;
        const double v = static_cast<double>(std::int64_t{op.InputTensor[i]} - zp) * as_double(op.ScaleTensor[i]);
        return round_exact<TOut>(v);
    }, r);
}

/// Every rank runs through the rank-8 loop above (leading sizes 1): one
/// instantiation per type combination instead of eight.
template <class TIn, class TOut, std::size_t Rank>
void check(const ElementWiseDequantizeLinear<TIn, TOut, Rank>& op, Report& r) {
    check(op.template with_rank<kMaxDimensions>(), r);
}

template <class TA, class TB, class TOut>
void check(const ElementWiseQuantizedLinearAdd<TA, TB, TOut, kMaxDimensions>& op, Report& r) {
    const double as = op.AScaleTensor.scalar(), bs = op.BScaleTensor.scalar(), os = op.OutputScaleTensor.scalar();
    const std::int64_t azp = op.AZeroPointTensor ? op.AZeroPointTensor->scalar() : 0;
    const std::int64_t bzp = op.BZeroPointTensor ? op.BZeroPointTensor->scalar() : 0;
    const std::int64_t ozp = op.OutputZeroPointTensor ? op.OutputZeroPointTensor->scalar() : 0;
    compare(op.OutputTensor, [&](const auto& i) {
        // (a - azp) * as and (b - bzp) * bs are exact in binary64 (9 + 24 bits);
        // their sum and the quotient round once each, far below the tie window.
        const double v = (static_cast<double>(op.ATensor[i] - azp) * as + static_cast<double>(op.BTensor[i] - bzp) * bs) / os;
        return quantize_exact<TOut>(v, ozp);
    }, r);
}

/// Every rank runs through the rank-8 loop above (leading sizes 1): one
/// instantiation per type combination instead of eight.
template <class TA, class TB, class TOut, std::size_t Rank>
void check(const ElementWiseQuantizedLinearAdd<TA, TB, TOut, Rank>& op, Report& r) {
    check(op.template with_rank<kMaxDimensions>(), r);
}

template <class TA, class TB, class TOut>
void check(const QuantizedLinearMatrixMultiply<TA, TB, TOut>& op, Report& r) {
    const auto& A = op.ATensor;
    const auto& B = op.BTensor;
    const std::uint32_t K = A.sizes[3];
    compare(op.OutputTensor, [&](const auto& i) {
        const std::uint32_t b = i[0], c = i[1], m = i[2], n = i[3];
        const std::int64_t azp = op.AZeroPointTensor ? (*op.AZeroPointTensor)[i] : 0;
        const std::int64_t bzp = op.BZeroPointTensor ? (*op.BZeroPointTensor)[i] : 0;
        std::int64_t acc = 0;
        for (std::uint32_t k = 0; k < K; ++k) acc += (A[{b, c, m, k}] - azp) * (B[{b, c, k, n}] - bzp);
        const double scale = static_cast<double>(op.AScaleTensor[i]) * op.BScaleTensor[i] / op.OutputScaleTensor[i];
        const std::int64_t ozp = op.OutputZeroPointTensor ? (*op.OutputZeroPointTensor)[i] : 0;
        return quantize_exact<TOut>(static_cast<double>(acc) * scale, ozp, !fits_int32(acc));
    }, r);
}

template <class TIn, class TFilter, class TOut>
void check(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, Report& r) {
    const auto& X = op.InputTensor;
    const auto& F = op.FilterTensor;
    const std::uint32_t H = X.sizes[2], W = X.sizes[3];
    const std::uint32_t group_in = F.sizes[1], group_out = F.sizes[0] / op.GroupCount;
    compare(op.OutputTensor, [&](const auto& i) {
        const std::uint32_t n = i[0], oc = i[1], oy = i[2], ox = i[3];
        const std::int64_t xzp = op.InputZeroPointTensor ? (*op.InputZeroPointTensor)[i] : 0;
        const std::int64_t fzp = op.FilterZeroPointTensor ? (*op.FilterZeroPointTensor)[i] : 0;
        std::int64_t acc = op.BiasTensor ? (*op.BiasTensor)[i] : 0;
        for (std::uint32_t icg = 0; icg < group_in; ++icg)
            for (std::uint32_t ky = 0; ky < F.sizes[2]; ++ky)
                for (std::uint32_t kx = 0; kx < F.sizes[3]; ++kx) {
                    const std::int64_t y = std::int64_t{oy} * op.Strides[0] + std::int64_t{ky} * op.Dilations[0] - op.StartPadding[0];
                    const std::int64_t x = std::int64_t{ox} * op.Strides[1] + std::int64_t{kx} * op.Dilations[1] - op.StartPadding[1];
                    if (y < 0 || y >= H || x < 0 || x >= W) continue;
                    const std::uint32_t ic = oc / group_out * group_in + icg;
                    acc += (X[{n, ic, static_cast<std::uint32_t>(y), static_cast<std::uint32_t>(x)}] - xzp) *
                           (F[{oc, icg, ky, kx}] - fzp);
                }
        const double scale = static_cast<double>(op.InputScaleTensor[i]) * op.FilterScaleTensor[i] / op.OutputScaleTensor[i];
        const std::int64_t ozp = op.OutputZeroPointTensor ? (*op.OutputZeroPointTensor)[i] : 0;
        return quantize_exact<TOut>(static_cast<double>(acc) * scale, ozp, !fits_int32(acc));
    }, r);
}

template <class T>
void check(const ElementWiseClip<T, kMaxDimensions>& op, Report& r) {
    constexpr bool is_float_type = std::is_same_v<T, float> || std::is_same_v<T, float16>;
    compare(op.OutputTensor, [&](const auto& i) {
        Exact e;
        double v = as_double(op.InputTensor[i]);
        if (op.ScaleBias) v = v * op.ScaleBias->Scale + op.ScaleBias->Bias;  // exact enough in binary64
        e.value = v;
        if constexpr (is_float_type) {
            const double lo = as_double(from_float<T>(op.Min)), hi = as_double(from_float<T>(op.Max));
            const double c = std::isnan(v) ? v : std::fmax(lo, std::fmin(v, hi));
            e = round_exact<T>(c);  // fmax(lo, fmin(v, hi)) is lo when Min > Max, as the spec says
        } else if (!op.ScaleBias) {
            // Integers without ScaleBias are compared exactly; the reference is exact.
            const T x = op.InputTensor[i], lo = truncate_saturate<T>(op.Min), hi = truncate_saturate<T>(op.Max);
            e.result = as_double(lo > hi ? lo : x < lo ? lo : x > hi ? hi : x);
            e.boundary = std::numeric_limits<double>::infinity();
        } else {
            const double lo = static_cast<double>(std::numeric_limits<T>::min());
            const double hi = static_cast<double>(std::numeric_limits<T>::max());
            const double t = std::fmin(hi, std::fmax(lo, std::trunc(v)));
            const double mn = as_double(truncate_saturate<T>(op.Min)), mx = as_double(truncate_saturate<T>(op.Max));
            e.result = std::fmax(mn, std::fmin(t, mx));
            e.boundary = std::fabs(v - std::nearbyint(v));  // truncation flips at integers
        }
        return e;
    }, r);
}

/// Every rank runs through the rank-8 loop above (leading sizes 1): one
/// instantiation per type combination instead of eight.
template <class T, std::size_t Rank>
void check(const ElementWiseClip<T, Rank>& op, Report& r) {
    check(op.template with_rank<kMaxDimensions>(), r);
}

}  // namespace detail

/// Checks the output tensor of `desc`, as computed by qdml (any
/// implementation), against the exact result. Validates `desc` first
/// (throws qdml::Error). Reads only.
template <class Desc>
Report check_exact(const Desc& desc) {
    validate(desc);
    Report r;
    r.operator_name = Desc::OperatorName;
    visit_typed(desc, [&](const auto& op) { detail::check(op, r); });
    const std::size_t dims = desc.OutputTensor.Desc.DimensionCount;  // views are right-aligned to 4-D
    for (auto& d : r.differences)
        if (d.index.size() > dims) d.index.erase(d.index.begin(), d.index.end() - static_cast<std::ptrdiff_t>(dims));
    return r;
}

}  // namespace qdml::exact
