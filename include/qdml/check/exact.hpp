// qdml/check/exact.hpp - the exact checker. Recomputes an operator twice:
// exactly (int64 accumulation without wrap, binary64 arithmetic, one final
// rounding) and as docs/semantics.md's binary32 steps (a plain mirror written here,
// independent of the library's code), and compares each element of the
// output tensor qdml computed with both.
//
// Why results differ from the exact one: docs/semantics.md computes in binary32, e.g.
// fp32(acc) * (fp32(AScale * BScale) / OutputScale), three roundings before
// the final one. Near a .5 tie those roundings can push a value to the other
// side, and binary32's range can overflow (to inf), underflow (to 0 or a
// subnormal) or give NaN (inf - inf) where the exact value is finite and
// ordinary. Every such difference is explained when qdml's output equals
// the binary32 mirror; the checker names the reason. A difference where
// qdml's output is not the mirror's is UNEXPLAINED: a real bug.
//
// In the DirectML profile (docs/semantics.md section 10) the mirror also
// follows DirectML's steps where they differ, and an element moved by one of
// them is named after it (e.g. directml-requantize-order).
#pragma once

#include <array>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "qdml/core/fidelity.hpp"
#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/core/quantize_directml.hpp"
#include "qdml/operators/fidelity.hpp"
#include "qdml/operators/visit.hpp"

namespace qdml::exact {

/// Distance to a rounding boundary within which another implementation may
/// round the other way: 2^-20 relative to |value|, at least 2^-20 and at
/// most 2^-4 absolute (so it never spans the whole half-unit between
/// boundaries, however large the value).
inline double tie_window(double value) {
    return std::fmin(std::ldexp(std::fmax(1.0, std::fabs(value)), -20), 0.0625);
}

/// Why an element differs from the exactly rounded result.
enum class Reason {
    NearTie,      ///< binary32 rounding near a rounding boundary (or within one ulp, float outputs)
    Binary32,     ///< binary32 rounding elsewhere (e.g. cancellation in an add): qdml follows docs/semantics.md
    Int32Wrap,    ///< the exact sum does not fit int32; docs/semantics.md wraps the accumulator
    Overflow,     ///< a binary32 (or binary16) step, or the exact result, overflowed to infinity
    Underflow,    ///< a binary32 step underflowed (lost bits below FLT_MIN, or became 0)
    NaN,          ///< a binary32 step gave NaN from numbers (inf - inf, 0 * inf, 0 / 0)
    Unexplained,  ///< qdml's output is not docs/semantics.md's binary32 result: a bug
    // Fidelity::DirectML: the DirectML step (docs/semantics.md section 10) that moved the element
    DirectMLDequantize,       ///< (fp32(Input) - fp32(ZeroPoint)) * Scale: each converted before subtracting
    DirectMLRequantizeOrder,  ///< ((fp32(acc) * s1) * s2) / OutputScale instead of fp32(acc) * multiplier
    DirectMLQuantize,         ///< rne(v) to int32 saturating (NaN -> 0), + zero point wrapping, clamp
    DirectMLClip,             ///< clip's comparisons: NaN or a value equal to a bound becomes the bound
    DirectMLQuantizeLinear,   ///< ELEMENT_WISE_QUANTIZE_LINEAR: a NaN quotient gives 0 (DirectML's strided form)
    DirectMLClip1,            ///< ELEMENT_WISE_CLIP1: CLIP's order and comparisons, a NaN bound ignored, ScaleBias (1, 0) none
    DirectMLFloatSum,         ///< MATRIX_MULTIPLY_INTEGER_TO_FLOAT: dequantized operands summed in binary32, k in order
    DirectMLDynamicQuantize,  ///< DYNAMIC_QUANTIZE_LINEAR: s = (M - m) * fp32(1/255), x and m times r = 1 / s
    DirectMLAveragePoolingNaN,  ///< QUANTIZED_LINEAR_AVERAGE_POOLING: a NaN average gives hi, lo or 0 by OutputZeroPoint
};

inline std::string_view name(Reason r) {
    switch (r) {
        case Reason::NearTie: return "near-tie";
        case Reason::Binary32: return "binary32-rounding";
        case Reason::Int32Wrap: return "int32-wrapped";
        case Reason::Overflow: return "overflow";
        case Reason::Underflow: return "underflow";
        case Reason::NaN: return "NaN";
        case Reason::DirectMLDequantize: return "directml-dequantize: (fp32(Input) - fp32(ZeroPoint)) * Scale";
        case Reason::DirectMLRequantizeOrder: return "directml-requantize-order: ((fp32(acc) * s1) * s2) / OutputScale";
        case Reason::DirectMLQuantize:
            return "directml-quantize: rne(v) to int32 saturating (NaN -> 0), zero point added wrapping";
        case Reason::DirectMLClip: return "directml-clip: NaN or a value equal to a bound becomes the bound";
        case Reason::DirectMLQuantizeLinear:
            return "directml-quantize-linear: a NaN quotient gives 0 (no zero point, or a strided layout)";
        case Reason::DirectMLClip1:
            return "directml-clip1: Min > Max gives Min, NaN or a value equal to a bound becomes the bound, "
                   "ScaleBias (1, 0) is none";
        case Reason::DirectMLFloatSum:
            return "directml-float-sum: (fp32(A) - fp32(AZP)) * AScale times (fp32(B) - fp32(BZP)) * BScale, "
                   "summed in binary32 in k order";
        case Reason::DirectMLDynamicQuantize:
            return "directml-dynamic-quantize: s = (M - m) * fp32(1/255), the input and m multiplied by r = 1 / s";
        case Reason::DirectMLAveragePoolingNaN:
            return "directml-average-pooling-nan: a NaN average gives the high end without an OutputZeroPointTensor, "
                   "the low end with a one-element one, 0 with a per-channel one";
        default: return "UNEXPLAINED";
    }
}

/// One output element where qdml's result differs from the exact one.
struct Difference {
    std::string_view member;           ///< the output member ("OutputTensor"; DYNAMIC_QUANTIZE_LINEAR has three)
    std::vector<std::uint32_t> index;  ///< logical index into the output tensor (DimensionCount entries)
    double got = 0;                    ///< qdml's output
    double exact = 0;                  ///< the exactly rounded output
    double binary32 = 0;               ///< docs/semantics.md's binary32 steps, mirrored by the checker
    double value = 0;                  ///< the exact value before the final rounding (output units, before the zero point)
    double boundary_distance = 0;      ///< |value - nearest rounding boundary| (.5 ties; integers for truncation)
    Reason reason = Reason::Unexplained;
    double directml = 0;               ///< Fidelity::DirectML: DirectML's steps, mirrored by the checker
    bool near_tie = false;             ///< reason == NearTie
    bool accumulator_wrapped = false;  ///< the int32 accumulator wrapped (the exact sum does not fit int32)
};

struct Report {
    std::string_view operator_name;
    std::uint64_t elements = 0;           ///< output elements checked
    std::uint64_t near_tie_elements = 0;  ///< quantized outputs: elements within the tie window (agreeing or not);
                                          ///< float outputs: differing elements within one ulp
    std::vector<Difference> differences;  ///< every element that differs from the exact result

    /// Differences where qdml's output is not docs/semantics.md's binary32 result.
    std::uint64_t unexplained() const {
        std::uint64_t n = 0;
        for (const auto& d : differences) n += d.reason == Reason::Unexplained;
        return n;
    }
};

namespace detail {

/// docs/semantics.md's binary32 arithmetic, one rounding per operation, recording
/// range effects. Each operation is computed exactly enough in binary64 and
/// rounded once to binary32, which is the correctly rounded binary32
/// result (binary64 has more than 2 * 24 + 2 bits).
struct Binary32 {
    bool overflow = false, underflow = false, nan = false;

    float round(double exact, bool operands_finite, bool operands_numbers) {
        const float r = static_cast<float>(exact);
        if (std::isinf(r) && operands_finite) overflow = true;
        if (std::isnan(r) && operands_numbers) nan = true;
        if (exact != 0 && std::fabs(exact) < FLT_MIN && static_cast<double>(r) != exact) underflow = true;
        return r;
    }
    float mul(float a, float b) { return round(double{a} * b, std::isfinite(a) && std::isfinite(b), num(a, b)); }
    float add(float a, float b) { return round(double{a} + b, std::isfinite(a) && std::isfinite(b), num(a, b)); }
    float div(float a, float b) { return round(double{a} / b, std::isfinite(a) && std::isfinite(b), num(a, b)); }
    static bool num(float a, float b) { return !std::isnan(a) && !std::isnan(b); }

    /// Q(v, zp, T) of docs/semantics.md section 2: clamp in binary32 (NaN -> lo - zp), rne, + zp.
    template <class T>
    static double quantize(float v, std::int64_t zp) {
        const float lo = static_cast<float>(value_range<T>::lo - zp);
        const float hi = static_cast<float>(value_range<T>::hi - zp);
        const float c = std::isnan(v) ? lo : std::fmin(hi, std::fmax(lo, v));
        return std::nearbyint(static_cast<double>(c)) + static_cast<double>(zp);
    }

    /// The binary32 value `v` as the float output type T (binary16: rounded once).
    template <class T>
    double to_output(float v) {
        if constexpr (std::is_same_v<T, float16>) {
            const float h = static_cast<float>(float16::from_double(v));
            if (std::isinf(h) && std::isfinite(v)) overflow = true;
            if (v != 0 && std::fabs(v) < 0x1p-14f && h != v) underflow = true;
            return h;
        } else {
            return v;
        }
    }
};

/// The two evaluations of one output element.
struct Exact {
    double value = 0;      // exact, before the final rounding / conversion
    double result = 0;     // exact, in the output type's values
    double boundary = std::numeric_limits<double>::infinity();  // distance to the nearest rounding boundary
    bool wrapped = false;
    double ulp = 0;        // float outputs: one unit in the last place at `result`
    bool exact_overflow = false;  // the exact value rounds to infinity in the output type
    double binary32 = 0;   // docs/semantics.md's binary32 result
    Binary32 steps;        // range effects of the binary32 steps
    // Fidelity::DirectML: DirectML's result where its steps differ (else binary32), and the step
    double directml = 0;
    Reason directml_step = Reason::Unexplained;
    void same_in_directml() { directml = binary32; }
    /// DirectML's result `v`, moved from binary32 by `step` (when it differs).
    void directml_result(double v, Reason step) {
        directml = v;
        directml_step = step;
    }
};

/// The exact Q(v, zp, T): rne(v) + zp, saturated; `v` in binary64.
template <class T>
void quantize_exact(Exact& e, double v, std::int64_t zp) {
    e.value = v;
    const double lo = static_cast<double>(value_range<T>::lo), hi = static_cast<double>(value_range<T>::hi);
    e.result = std::fmin(hi, std::fmax(lo, std::nearbyint(v) + static_cast<double>(zp)));
    e.boundary = std::fabs(std::fabs(v - std::floor(v)) - 0.5);
}

/// Spacing of the float type T at |x|: the gap to the next value away from
/// zero; at the largest finite value and at infinity, the gap below the
/// largest finite value (2^104 for binary32, 32 for binary16).
template <class T>
double ulp_at(double x) {
    constexpr bool half = std::is_same_v<T, float16>;
    const double max = half ? 65504.0 : static_cast<double>(FLT_MAX);
    const double a = std::fabs(x);
    if (!(a < max)) return half ? 32.0 : 0x1p104;
    if constexpr (half) {
        const double next = static_cast<float>(float16::from_bits(static_cast<std::uint16_t>(float16::from_double(a).bits + 1)));
        return next - static_cast<float>(float16::from_double(a));
    } else {
        const float f = static_cast<float>(a);
        return static_cast<double>(std::nextafter(f, FLT_MAX)) - f;
    }
}

/// The exact value `v` rounded once to the float output type T.
template <class T>
void round_exact(Exact& e, double v) {
    e.value = v;
    e.result = std::is_same_v<T, float16> ? static_cast<double>(static_cast<float>(float16::from_double(v)))
                                          : static_cast<double>(static_cast<float>(v));
    e.exact_overflow = std::isinf(e.result) && std::isfinite(v);
    e.ulp = ulp_at<T>(e.result);
}

template <class T>
double as_double(T v) {
    if constexpr (std::is_same_v<T, float16>) return static_cast<float>(v);
    else return static_cast<double>(v);
}

inline bool fits_int32(std::int64_t v) {
    return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
}

/// The accumulator docs/semantics.md keeps: the exact sum modulo 2^32, as int32.
inline std::int32_t wrapped_int32(std::int64_t v) {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(v)));
}

inline bool same_value(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

/// Why `got` differs from the exact result (in profile `f`).
inline Reason classify(const Exact& e, double got, Fidelity f) {
    if (f == Fidelity::DirectML && !same_value(e.directml, e.binary32))
        return same_value(got, e.directml) ? e.directml_step : Reason::Unexplained;
    if (!same_value(got, e.binary32)) return Reason::Unexplained;
    if (e.wrapped) return Reason::Int32Wrap;
    if (e.steps.nan) return Reason::NaN;
    if (e.steps.overflow || e.exact_overflow) return Reason::Overflow;
    if (e.steps.underflow) return Reason::Underflow;
    const bool near = e.ulp > 0 ? std::fabs(got - e.result) <= e.ulp : e.boundary <= tie_window(e.value);
    return near ? Reason::NearTie : Reason::Binary32;
}

/// Compares every element of `out` (the output member `member`) against exact(i).
template <class View, class F>
void compare(const View& out, F&& exact, Report& r, Fidelity f, std::string_view member = "OutputTensor") {
    for_each_index(out.sizes, [&](const auto& i) {
        const Exact e = exact(i);
        const double got = as_double(out[i]);
        ++r.elements;
        const bool same = same_value(got, e.result);
        if (e.ulp == 0) r.near_tie_elements += e.boundary <= tie_window(e.value);
        else if (!same) r.near_tie_elements += std::fabs(got - e.result) <= e.ulp;
        if (same) return;
        Difference d;
        d.member = member;
        for (const auto v : i) d.index.push_back(v);
        d.got = got;
        d.exact = e.result;
        d.binary32 = e.binary32;
        d.directml = e.directml;
        d.value = e.value;
        d.boundary_distance = e.boundary;
        d.reason = classify(e, got, f);
        d.near_tie = d.reason == Reason::NearTie;
        d.accumulator_wrapped = e.wrapped;
        r.differences.push_back(std::move(d));
    });
}

template <class TIn, class TOut>
void check(const ElementWiseDequantizeLinear<TIn, TOut>& op, Report& r, Fidelity f) {
    compare(op.OutputTensor, [&](const auto& i) {
        Exact e;
        const std::int64_t zp = op.ZeroPointTensor ? std::int64_t{(*op.ZeroPointTensor)[i]} : 0;
        const std::int64_t x = std::int64_t{op.InputTensor[i]} - zp;
        const float scale = static_cast<float>(as_double(op.ScaleTensor[i]));
        round_exact<TOut>(e, static_cast<double>(x) * scale);  // |x| < 2^33: the product is exact
        e.binary32 = e.steps.to_output<TOut>(e.steps.mul(static_cast<float>(x), scale));
        Binary32 d;  // DirectML: fp32(Input) - fp32(ZeroPoint), then * Scale
        const float diff = d.add(static_cast<float>(op.InputTensor[i]), -static_cast<float>(zp));
        e.directml_result(d.to_output<TOut>(d.mul(diff, scale)), Reason::DirectMLDequantize);
        return e;
    }, r, f);
}

/// ELEMENT_WISE_QUANTIZE_LINEAR (docs/semantics.md section 11): exactly, the
/// input's value divided by the scale in binary64 (one rounding, far below
/// the tie window), then rne, + zp, saturated; in binary32, fp32(x) / s and Q.
template <class TIn, class TOut>
void check(const ElementWiseQuantizeLinear<TIn, TOut>& op, Report& r, Fidelity f) {
    compare(op.OutputTensor, [&](const auto& i) {
        Exact e;
        const bool has_zp = op.ZeroPointTensor.has_value();
        const bool nan_to_low = quantize_nan_to_low_directml(op);
        const std::int64_t zp = has_zp ? std::int64_t{(*op.ZeroPointTensor)[i]} : 0;
        const double x = as_double(op.InputTensor[i]);  // exact (an int32 too)
        const float scale = static_cast<float>(as_double(op.ScaleTensor[i]));
        quantize_exact<TOut>(e, x / static_cast<double>(scale), zp);
        Binary32& s = e.steps;
        const float x32 = static_cast<float>(x);  // fp32: rounds an INT32 beyond 2^24
        const float v = s.div(x32, scale);
        e.binary32 = Binary32::quantize<TOut>(v, zp);
        if (std::isnan(v) && !nan_to_low)
            e.directml_result(0.0, Reason::DirectMLQuantizeLinear);
        else
            e.same_in_directml();
        return e;
    }, r, f);
}

/// QUANTIZE (docs/semantics.md section 18): section 11's exact profile per
/// block, the same in both profiles.
template <class TIn, class TOut>
void check(const Quantize<TIn, TOut>& op, Report& r, Fidelity f) {
    compare(op.OutputTensor, [&](const auto& i) {
        Exact e;
        const auto b = op.block_of(i);
        const std::int64_t zp = op.zero_point(b);
        const double x = as_double(op.InputTensor[i]);
        const float scale = static_cast<float>(as_double(op.ScaleTensor[b]));
        quantize_exact<TOut>(e, x / static_cast<double>(scale), zp);
        e.binary32 = Binary32::quantize<TOut>(e.steps.div(static_cast<float>(x), scale), zp);
        e.same_in_directml();
        return e;
    }, r, f);
}

/// DEQUANTIZE (section 18): section 3's exact profile per block, the same in both profiles.
template <class TIn, class TOut>
void check(const Dequantize<TIn, TOut>& op, Report& r, Fidelity f) {
    compare(op.OutputTensor, [&](const auto& i) {
        Exact e;
        const auto b = op.block_of(i);
        const std::int64_t x = std::int64_t{op.InputTensor[i]} - op.zero_point(b);
        const float scale = static_cast<float>(as_double(op.ScaleTensor[b]));
        round_exact<TOut>(e, static_cast<double>(x) * scale);  // |x| < 2^9: the product is exact
        e.binary32 = e.steps.to_output<TOut>(e.steps.mul(static_cast<float>(x), scale));
        e.same_in_directml();
        return e;
    }, r, f);
}

template <class TA, class TB, class TOut>
void check(const ElementWiseQuantizedLinearAdd<TA, TB, TOut>& op, Report& r, Fidelity f) {
    const float as = op.AScaleTensor.scalar(), bs = op.BScaleTensor.scalar(), os = op.OutputScaleTensor.scalar();
    const std::int64_t azp = op.AZeroPointTensor ? op.AZeroPointTensor->scalar() : 0;
    const std::int64_t bzp = op.BZeroPointTensor ? op.BZeroPointTensor->scalar() : 0;
    const std::int64_t ozp = op.OutputZeroPointTensor ? op.OutputZeroPointTensor->scalar() : 0;
    compare(op.OutputTensor, [&](const auto& i) {
        Exact e;
        const std::int64_t a = op.ATensor[i] - azp, b = op.BTensor[i] - bzp;
        // a * as and b * bs are exact in binary64 (9 + 24 bits); the sum and the
        // quotient round once each, far below the tie window.
        quantize_exact<TOut>(e, (static_cast<double>(a) * as + static_cast<double>(b) * bs) / os, ozp);
        Binary32& s = e.steps;
        e.binary32 = Binary32::quantize<TOut>(
            s.div(s.add(s.mul(static_cast<float>(a), as), s.mul(static_cast<float>(b), bs)), os), ozp);
        e.same_in_directml();  // DirectML's add is these steps
        return e;
    }, r, f);
}

/// The exact sum of a matrix multiplication's output element i (int64, no
/// wrap): sum over k of (A[m][k] - AZP[m]) * (B[k][n] - BZP[n]).
template <class Op, class Index>
std::int64_t matmul_sum(const Op& op, const Index& i) {
    const std::uint32_t b = i[0], c = i[1], m = i[2], n = i[3];
    const std::int64_t azp = op.AZeroPointTensor ? (*op.AZeroPointTensor)[i] : 0;
    const std::int64_t bzp = op.BZeroPointTensor ? (*op.BZeroPointTensor)[i] : 0;
    std::int64_t acc = 0;
    for (std::uint32_t k = 0; k < op.ATensor.sizes[3]; ++k)
        acc += (op.ATensor[{b, c, m, k}] - azp) * (op.BTensor[{b, c, k, n}] - bzp);
    return acc;
}

/// The requantize epilogue of matmul and convolution, three ways: exact acc *
/// (sa * sb / so); fp32(wrapped acc) * (fp32(sa * sb) / so); and DirectML's
/// ((fp32(wrapped acc) * s1) * s2) / so (s1 = sa for matmul, sb = the filter's
/// scale for convolution) with its quantize step.
template <class TOut>
Exact requantize_both(std::int64_t acc, float sa, float sb, float so, std::int64_t ozp, bool filter_first = false) {
    Exact e;
    quantize_exact<TOut>(e, static_cast<double>(acc) * (static_cast<double>(sa) * sb / so), ozp);
    e.wrapped = !fits_int32(acc);
    Binary32& s = e.steps;
    const float mult = s.div(s.mul(sa, sb), so);
    const float acc32 = static_cast<float>(wrapped_int32(acc));
    e.binary32 = Binary32::quantize<TOut>(s.mul(acc32, mult), ozp);
    Binary32 d;
    const float v = d.div(d.mul(d.mul(acc32, filter_first ? sb : sa), filter_first ? sa : sb), so);
    // DirectML's quantize step: rne(v) to int32 saturating, NaN -> 0, + zp wrapping, then clamp.
    double q = 0;
    if (!std::isnan(v)) q = std::fmin(2147483647.0, std::fmax(-2147483648.0, std::nearbyint(static_cast<double>(v))));
    double sum = q + static_cast<double>(ozp);
    if (sum > 2147483647.0) sum -= 4294967296.0;
    if (sum < -2147483648.0) sum += 4294967296.0;
    const double dml = std::fmin(std::numeric_limits<TOut>::max(), std::fmax(std::numeric_limits<TOut>::min(), sum));
    const bool order_alone = same_value(dml, Binary32::quantize<TOut>(v, ozp));
    e.directml_result(dml, order_alone ? Reason::DirectMLRequantizeOrder : Reason::DirectMLQuantize);
    return e;
}

template <class TA, class TB, class TOut>
void check(const QuantizedLinearMatrixMultiply<TA, TB, TOut>& op, Report& r, Fidelity f) {
    compare(op.OutputTensor, [&](const auto& i) {
        const std::int64_t acc = matmul_sum(op, i);
        const std::int64_t ozp = op.OutputZeroPointTensor ? (*op.OutputZeroPointTensor)[i] : 0;
        return requantize_both<TOut>(acc, op.AScaleTensor[i], op.BScaleTensor[i], op.OutputScaleTensor[i], ozp);
    }, r, f);
}

/// An integer operator's element: the exact sum `acc`; docs/semantics.md's
/// result is it wrapped to int32 (the same in both profiles).
inline Exact integer_sum(std::int64_t acc) {
    Exact e;
    e.value = e.result = static_cast<double>(acc);
    e.wrapped = !fits_int32(acc);
    e.binary32 = static_cast<double>(wrapped_int32(acc));
    e.same_in_directml();
    return e;
}

/// MATRIX_MULTIPLY_INTEGER (docs/semantics.md section 12): the exact sum in
/// int64; docs/semantics.md's result is that sum wrapped to int32 (the same in
/// both profiles), so the only explained difference is int32-wrapped.
template <class TA, class TB>
void check(const MatrixMultiplyInteger<TA, TB>& op, Report& r, Fidelity f) {
    compare(op.OutputTensor, [&](const auto& i) { return integer_sum(matmul_sum(op, i)); }, r, f);
}

/// MATRIX_MULTIPLY_INTEGER_TO_FLOAT (docs/semantics.md section 16): exactly,
/// the integer sum times AScale * BScale plus the bias, rounded once (the sum
/// in int64 for 8- and 16-bit operands; for 32-bit ones, whose products
/// exceed int64, in binary64, within 2^-40 of it); in binary32, the exact
/// profile's fp32(wrapped acc) * fp32(AScale * BScale) + Bias, and
/// DirectML's dequantized operands summed in k order, + Bias.
template <class TA, class TB, class TF>
void check(const MatrixMultiplyIntegerToFloat<TA, TB, TF>& op, Report& r, Fidelity f) {
    constexpr bool narrow = sizeof(TA) <= 2 && sizeof(TB) <= 2;
    compare(op.OutputTensor, [&](const auto& i) {
        const std::uint32_t b = i[0], c = i[1], m = i[2], n = i[3];
        const std::int64_t azp = op.AZeroPointTensor ? std::int64_t{(*op.AZeroPointTensor)[i]} : 0;
        const std::int64_t bzp = op.BZeroPointTensor ? std::int64_t{(*op.BZeroPointTensor)[i]} : 0;
        const float sa = static_cast<float>(as_double(op.AScaleTensor[i]));
        const float sb = static_cast<float>(as_double(op.BScaleTensor[i]));
        const float bias = op.BiasTensor ? static_cast<float>(as_double((*op.BiasTensor)[i])) : 0.0f;
        std::int64_t acc = 0;       // narrow operands: exact
        std::uint64_t wrap = 0;     // the sum modulo 2^64 (so modulo 2^32)
        double acc_wide = 0;        // 32-bit operands
        Binary32 d;                 // DirectML's steps
        float s = 0.0f;
        for (std::uint32_t k = 0; k < op.ATensor.sizes[3]; ++k) {
            const std::int64_t x = op.ATensor[{b, c, m, k}], y = op.BTensor[{b, c, k, n}];
            if constexpr (narrow) acc += (x - azp) * (y - bzp);
            else acc_wide += static_cast<double>(x - azp) * static_cast<double>(y - bzp);
            wrap += static_cast<std::uint64_t>(x - azp) * static_cast<std::uint64_t>(y - bzp);
            const float xa = d.mul(d.add(static_cast<float>(x), -static_cast<float>(azp)), sa);
            const float yb = d.mul(d.add(static_cast<float>(y), -static_cast<float>(bzp)), sb);
            s = d.add(s, d.mul(xa, yb));
        }
        const double sum = narrow ? static_cast<double>(acc) : acc_wide;
        Exact e;
        round_exact<TF>(e, sum * (static_cast<double>(sa) * sb) + bias);
        e.wrapped = narrow ? !fits_int32(acc) : !(std::fabs(acc_wide) <= 2147483647.0);
        Binary32& s32 = e.steps;
        const float acc32 = static_cast<float>(static_cast<std::int32_t>(static_cast<std::uint32_t>(wrap)));
        float v = s32.mul(acc32, s32.mul(sa, sb));
        if (op.BiasTensor) v = s32.add(v, bias);
        e.binary32 = s32.to_output<TF>(v);
        if (op.BiasTensor) s = d.add(s, bias);
        e.directml_result(d.to_output<TF>(s), Reason::DirectMLFloatSum);
        return e;
    }, r, f);
}

/// The exact sum of a convolution's output element i = {n, oc, oy, ox}
/// (int64, no wrap, no Bias): over the group's input channels and the taps
/// inside the input, (X - XZP) * (F - FZP[oc]).
template <class Op, class Index>
std::int64_t convolution_sum(const Op& op, const Index& i) {
    const auto& X = op.InputTensor;
    const auto& F = op.FilterTensor;
    const std::uint32_t H = X.sizes[2], W = X.sizes[3];
    const std::uint32_t group_in = F.sizes[1], group_out = F.sizes[0] / op.GroupCount;
    const std::uint32_t n = i[0], oc = i[1], oy = i[2], ox = i[3];
    const std::int64_t xzp = op.InputZeroPointTensor ? (*op.InputZeroPointTensor)[i] : 0;
    const std::int64_t fzp = op.FilterZeroPointTensor ? (*op.FilterZeroPointTensor)[i] : 0;
    std::int64_t acc = 0;
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
    return acc;
}

template <class TIn, class TFilter, class TOut>
void check(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, Report& r, Fidelity f) {
    compare(op.OutputTensor, [&](const auto& i) {
        const std::int64_t acc = (op.BiasTensor ? (*op.BiasTensor)[i] : 0) + convolution_sum(op, i);
        const std::int64_t ozp = op.OutputZeroPointTensor ? (*op.OutputZeroPointTensor)[i] : 0;
        return requantize_both<TOut>(acc, op.InputScaleTensor[i], op.FilterScaleTensor[i], op.OutputScaleTensor[i], ozp,
                                     true);
    }, r, f);
}

/// CONVOLUTION_INTEGER (docs/semantics.md section 14): as MATRIX_MULTIPLY_INTEGER,
/// the exact int64 sum, wrapped to int32 in both profiles.
template <class TIn, class TFilter>
void check(const ConvolutionInteger<TIn, TFilter>& op, Report& r, Fidelity f) {
    compare(op.OutputTensor, [&](const auto& i) { return integer_sum(convolution_sum(op, i)); }, r, f);
}

/// QUANTIZED_LINEAR_AVERAGE_POOLING (docs/semantics.md section 17): exactly,
/// the integer sum S of the window's X - InputZeroPoint times InputScale,
/// divided by the count and by OutputScale in binary64 (S * InputScale is
/// exact; two roundings far below the tie window), then rne, + zp,
/// saturated (a window without input elements: 0/0, NaN, the low end); in
/// binary32, the products summed in window order, / fp32(count), /
/// OutputScale and Q; DirectML's NaN rule.
template <class T>
void check(const QuantizedLinearAveragePooling<T>& op, Report& r, Fidelity f) {
    const auto& X = op.InputTensor;
    const auto& W = op.WindowSize;
    compare(op.OutputTensor, [&](const auto& i) {
        Exact e;
        Binary32& s = e.steps;
        const std::int64_t xzp = op.InputZeroPointTensor ? std::int64_t{(*op.InputZeroPointTensor)[i]} : 0;
        const std::int64_t ozp = op.OutputZeroPointTensor ? std::int64_t{(*op.OutputZeroPointTensor)[i]} : 0;
        const float xs = op.InputScaleTensor[i], ys = op.OutputScaleTensor[i];
        std::int64_t sum = 0, taps = 0;
        float sum32 = 0.0f;
        for (std::uint32_t a = 0; a < W[0]; ++a)
            for (std::uint32_t b = 0; b < W[1]; ++b)
                for (std::uint32_t c = 0; c < W[2]; ++c) {
                    const std::uint32_t t[3] = {a, b, c};
                    std::array<std::uint32_t, 5> at{i[0], i[1], 0, 0, 0};
                    bool inside = true;
                    for (int k = 0; k < 3; ++k) {
                        const std::int64_t p = std::int64_t{i[2 + k]} * op.Strides[k] +
                                               std::int64_t{t[k]} * op.Dilations[k] - op.StartPadding[k];
                        inside = inside && p >= 0 && p < X.sizes[2 + k];
                        at[2 + k] = static_cast<std::uint32_t>(p);
                    }
                    if (!inside) continue;
                    const std::int64_t d = std::int64_t{X[at]} - xzp;
                    sum += d;
                    ++taps;
                    sum32 = s.add(sum32, s.mul(static_cast<float>(d), xs));
                }
        const std::int64_t count =
            op.IncludePadding ? std::int64_t{W[0]} * std::int64_t{W[1]} * std::int64_t{W[2]} : taps;
        quantize_exact<T>(e, static_cast<double>(sum) * xs / static_cast<double>(count) / ys, ozp);
        const float v = s.div(s.div(sum32, static_cast<float>(count)), ys);
        e.binary32 = Binary32::quantize<T>(v, ozp);
        if (std::isnan(v)) {
            const double nan_out = !op.OutputZeroPointTensor ? std::numeric_limits<T>::max()
                                   : op.OutputZeroPointOneElement ? std::numeric_limits<T>::min()
                                                                  : 0.0;
            e.directml_result(nan_out, Reason::DirectMLAveragePoolingNaN);
        } else {
            e.same_in_directml();
        }
        return e;
    }, r, f);
}

/// A clip's g(x) (docs/semantics.md sections 7 and 13): in binary64 (exact enough)
/// into `v`, and in binary32 (FLOAT16 widened, integers fp32(x)) into `v32`.
template <class Op, class T>
void clip_g(const Op& op, T x, Binary32& s, double& v, float& v32) {
    v = as_double(x);
    v32 = static_cast<float>(v);
    if (op.ScaleBias) {
        v = v * op.ScaleBias->Scale + op.ScaleBias->Bias;
        v32 = s.add(s.mul(v32, op.ScaleBias->Scale), op.ScaleBias->Bias);
    }
}

/// An integer clip's exact g(x) back in T (truncated, saturated, NaN to 0), the
/// value and its distance to a truncation boundary recorded in `e`.
template <class T>
double clip_truncate_exact(Exact& e, double v) {
    const double tlo = static_cast<double>(std::numeric_limits<T>::min());
    const double thi = static_cast<double>(std::numeric_limits<T>::max());
    e.value = v;
    e.boundary = std::fabs(v - std::nearbyint(v));  // truncation flips at integers
    return std::isnan(v) ? 0.0 : std::fmin(thi, std::fmax(tlo, std::trunc(v)));
}

template <class T>
void check(const ElementWiseClip<T>& op, Report& r, Fidelity f) {
    constexpr bool is_float_type = std::is_same_v<T, float> || std::is_same_v<T, float16>;
    compare(op.OutputTensor, [&](const auto& i) {
        Exact e;
        Binary32& s = e.steps;
        const T x = op.InputTensor[i];
        double v;
        float v32;
        clip_g(op, x, s, v, v32);
        if constexpr (is_float_type) {
            const auto clamp = [&](auto g) {  // max(Min, min(g, Max)); NaN stays; Min > Max gives Min
                const auto lo = static_cast<decltype(g)>(as_double(from_float<T>(op.Min)));
                const auto hi = static_cast<decltype(g)>(as_double(from_float<T>(op.Max)));
                return std::isnan(g) ? g : std::fmax(lo, std::fmin(g, hi));
            };
            round_exact<T>(e, clamp(v));
            e.binary32 = s.to_output<T>(clamp(v32));
            const float lo = static_cast<float>(as_double(from_float<T>(op.Min)));
            const float hi = static_cast<float>(as_double(from_float<T>(op.Max)));
            const float t = v32 < hi ? v32 : hi;  // DirectML: v < Max ? v : Max, then t > Min ? t : Min
            Binary32 d;
            e.directml_result(d.to_output<T>(t > lo ? t : lo), Reason::DirectMLClip);
        } else {
            const T lo = truncate_saturate<T>(op.Min), hi = truncate_saturate<T>(op.Max);
            const auto clamp = [&](T g) { return lo > hi ? lo : g < lo ? lo : g > hi ? hi : g; };
            if (!op.ScaleBias) {  // compared exactly: no float step at all
                e.result = e.binary32 = as_double(clamp(x));
            } else {
                const double t = clip_truncate_exact<T>(e, v);
                e.result = std::fmax(as_double(lo), std::fmin(t, as_double(hi)));  // Min > Max gives Min
                e.binary32 = as_double(clamp(truncate_saturate<T>(v32)));
            }
            e.same_in_directml();  // integer clip: DirectML's steps are these
        }
        return e;
    }, r, f);
}

/// ELEMENT_WISE_CLIP1 (docs/semantics.md section 13): min(Max, max(Min, g(x))) with
/// the typed bounds; g in binary64 (exact) and in binary32; DirectML's order,
/// comparisons and ScaleBias (1, +-0) rule mirrored separately.
template <class T>
void check(const ElementWiseClip1<T>& op, Report& r, Fidelity f) {
    constexpr bool is_float_type = std::is_same_v<T, float> || std::is_same_v<T, float16>;
    const bool unit = op.ScaleBias && op.ScaleBias->Scale == 1.0f && op.ScaleBias->Bias == 0.0f;
    compare(op.OutputTensor, [&](const auto& i) {
        Exact e;
        Binary32& s = e.steps;
        const T x = op.InputTensor[i];
        double v;
        float v32;
        clip_g(op, x, s, v, v32);
        if constexpr (is_float_type) {
            const double lo = as_double(op.Min), hi = as_double(op.Max);
            const auto clamp = [&](auto g) {  // min(Max, max(Min, g)): comparisons with NaN are false
                using G = decltype(g);
                const G t = g < static_cast<G>(lo) ? static_cast<G>(lo) : g;
                return t > static_cast<G>(hi) ? static_cast<G>(hi) : t;
            };
            round_exact<T>(e, clamp(v));
            e.binary32 = s.to_output<T>(clamp(v32));
            const float g = unit ? static_cast<float>(as_double(x)) : v32;  // DirectML: (1, +-0) is none
            Binary32 d;
            e.directml_result(d.to_output<T>(clamp1_directml(g, static_cast<float>(lo), static_cast<float>(hi))),
                              Reason::DirectMLClip1);
        } else {
            const T lo = op.Min, hi = op.Max;
            const auto clamp = [&](T g) { return lo > hi ? hi : g < lo ? lo : g > hi ? hi : g; };
            const auto clamp_directml = [&](T g) { return lo > hi ? lo : g < lo ? lo : g > hi ? hi : g; };
            if (!op.ScaleBias) {  // compared exactly: no float step at all
                e.result = e.binary32 = as_double(clamp(x));
                e.directml_result(as_double(clamp_directml(x)), Reason::DirectMLClip1);
            } else {
                const double t = clip_truncate_exact<T>(e, v);
                e.result = lo > hi ? as_double(hi) : std::fmin(as_double(hi), std::fmax(as_double(lo), t));
                e.binary32 = as_double(clamp(truncate_saturate<T>(v32)));
                e.directml_result(as_double(clamp_directml(unit ? x : truncate_saturate<T>(v32))), Reason::DirectMLClip1);
            }
        }
        return e;
    }, r, f);
}

/// DYNAMIC_QUANTIZE_LINEAR (docs/semantics.md section 15), its three outputs:
/// exactly, the range m, M (exact), s = (M - m) / 255 in binary64, z = the
/// exact Z(lo - m / s) and Q(x / s, z) from them; in binary32 the exact
/// profile's steps; DirectML's (s = (M - m) * fp32(1/255), r = 1 / s, z =
/// Z(lo - m * r), Q(x * r, z)) mirrored separately. An element moved by a
/// rounded s or z is explained when qdml's output is the mirror's.
template <class TIn, class TOut>
void check(const DynamicQuantizeLinear<TIn, TOut>& op, Report& r, Fidelity f) {
    float m = 0.0f, M = 0.0f;  // NaN skipped, -0 counted as 0 (comparisons with NaN are false)
    for_each_index(op.InputTensor.sizes, [&](const auto& i) {
        const float x = static_cast<float>(as_double(op.InputTensor[i]));
        if (x < m) m = x;
        if (x > M) M = x;
    });
    const double lo = std::numeric_limits<TOut>::min();
    const double range = static_cast<double>(M) - m;  // binary64 (one rounding at most; or infinite)
    const double scale = range / 255.0;
    Binary32 s32;  // the exact profile's binary32 steps
    const float s = s32.div(s32.add(M, -m), 255.0f);
    const float z32 = static_cast<float>(Binary32::quantize<TOut>(s32.add(static_cast<float>(lo), -s32.div(m, s)), 0));
    Binary32 d32;  // DirectML's
    const float sd = d32.mul(d32.add(M, -m), kOneOver255);
    const float rd = d32.div(1.0f, sd);
    const float zd = static_cast<float>(Binary32::quantize<TOut>(d32.add(static_cast<float>(lo), -d32.mul(m, rd)), 0));
    Exact ze;  // the exact zero point: Z(lo - m * 255 / (M - m)) (NaN for a range of 0: lo)
    quantize_exact<TOut>(ze, lo - static_cast<double>(m) * 255.0 / range, 0);
    compare(op.OutputScaleTensor, [&](const auto&) {
        Exact e;
        round_exact<float>(e, scale);
        e.steps = s32;
        e.binary32 = s;
        e.directml_result(sd, Reason::DirectMLDynamicQuantize);
        return e;
    }, r, f, "OutputScaleTensor");
    compare(op.OutputZeroPointTensor, [&](const auto&) {
        Exact e = ze;
        e.steps = s32;
        e.binary32 = z32;
        e.directml_result(zd, Reason::DirectMLDynamicQuantize);
        return e;
    }, r, f, "OutputZeroPointTensor");
    compare(op.OutputTensor, [&](const auto& i) {
        Exact e;
        const float x = static_cast<float>(as_double(op.InputTensor[i]));
        quantize_exact<TOut>(e, static_cast<double>(x) * 255.0 / range, static_cast<std::int64_t>(ze.result));
        e.steps = s32;
        e.binary32 = Binary32::quantize<TOut>(e.steps.div(x, s), static_cast<std::int64_t>(z32));
        Binary32 d = d32;
        e.directml_result(Binary32::quantize<TOut>(d.mul(x, rd), static_cast<std::int64_t>(zd)),
                          Reason::DirectMLDynamicQuantize);
        return e;
    }, r, f);
}

}  // namespace detail

/// Checks the output tensor (tensors) of `desc`, as computed by qdml (any
/// implementation) in profile `fidelity`, against the exact result and
/// docs/semantics.md's binary32 steps (DirectML's, where they differ, in the
/// DirectML profile: a difference they explain names the DirectML step).
/// Validates `desc` first (throws qdml::Error). Reads only.
template <class Desc>
Report check_exact(const Desc& desc, Fidelity fidelity = kDefaultFidelity) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    validate(desc, FeatureLevel::Latest, fidelity);
    Report r;
    r.operator_name = Desc::OperatorName;
    visit_typed(desc, [&](const auto& op) { detail::check(op, r, fidelity); });
    const std::size_t dims = desc.OutputTensor.Desc.DimensionCount;  // views are right-aligned to 4-D
    if constexpr (std::is_same_v<Desc, QuantizedLinearAveragePoolingDesc>)  // {N, C, 1, H, W}: the depth inserted
        for (auto& d : r.differences)
            if (dims == 4 && d.index.size() == 5) d.index.erase(d.index.begin() + 2);
    for (auto& d : r.differences)
        if (d.index.size() > dims) d.index.erase(d.index.begin(), d.index.end() - static_cast<std::ptrdiff_t>(dims));
    return r;
}

}  // namespace qdml::exact

// Compiling the checker once. Each file that calls check_exact compiles it
// for the operators it names (every type combination of each). A program
// that calls it from many files can compile it once: with
// QDML_EXTERN_CHECK_EXACT defined in all of its files, check_exact is
// declared as instantiated elsewhere for every operator, and one file writes
// QDML_INSTANTIATE_CHECK_EXACT() after including this header (qdml's own
// programs: src/check_exact.cpp, with the compiled-once dispatch;
// docs/api.md). Without the macro nothing changes.
#define QDML_DETAIL_CHECK_EXACT_INSTANCE(EXT, Desc) \
    EXT template qdml::exact::Report qdml::exact::check_exact<Desc>(const Desc&, qdml::Fidelity);
#if defined(QDML_EXTERN_CHECK_EXACT)
QDML_DETAIL_FOR_EACH_DESC(QDML_DETAIL_CHECK_EXACT_INSTANCE, extern)
#endif
/// Makes check_exact for every operator in this translation unit, for the
/// programs built with QDML_EXTERN_CHECK_EXACT: write it once in the whole
/// program, at namespace scope.
#define QDML_INSTANTIATE_CHECK_EXACT() QDML_DETAIL_FOR_EACH_DESC(QDML_DETAIL_CHECK_EXACT_INSTANCE, )
