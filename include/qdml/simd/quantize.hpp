// qdml/simd/quantize.hpp - the fast paths of QUANTIZE and DEQUANTIZE,
// bit-identical to reference/quantize.hpp (docs/semantics.md section 18):
//   QUANTIZE:   Output[i] = Q(x(Input[i]) / Scale[b], zp, OutputType)
//   DEQUANTIZE: Output[i] = fp32(Input[i] - zp) * Scale[b]
// on the element-wise loop plan (loops.hpp) and its row kernels
// (element_wise_quantize_linear.hpp's QuantizeRow, one true division per
// lane; element_wise_dequantize_linear.hpp's DequantizeRow). A blockwise
// dimension (1 < block < size) becomes two: blocks (the quantization
// tensors' stride) and elements within a block (their stride 0), so a
// block along the innermost dimension is a row with a repeated scale and a
// block along an outer one a row of per-element scales. The 8-bit types
// take any strides. The 4-bit types (two values a byte, the first in the
// low nibble) take packed Input and Output tensors: a row's nibbles are
// unpacked to one value a byte (INT4 sign-extended) before DequantizeRow,
// and QuantizeRow's values (saturated to the 4-bit range) packed after it,
// keeping the neighbour nibble at an odd start or end; the zero points are
// unpacked once per call. Other layouts, and a split shape of more than 8
// dimensions, take the reference's loop; path() says which.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <utility>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define QDML_NIBBLES_SSE2 1
#elif defined(__ARM_NEON) || defined(__aarch64__)
#include <arm_neon.h>
#define QDML_NIBBLES_NEON 1
#endif

#include "qdml/core/fp_env.hpp"
#include "qdml/core/quantize.hpp"
#include "qdml/operators/quantize.hpp"
#include "qdml/reference/quantize.hpp"
#include "qdml/simd/arch.hpp"
#include "qdml/simd/element_wise_dequantize_linear.hpp"
#include "qdml/simd/element_wise_quantize_linear.hpp"
#include "qdml/simd/loops.hpp"
#include "qdml/simd/options.hpp"

namespace qdml::simd {

namespace detail {

/// The 8-bit type that holds a quantized type's values one a byte: int8_t
/// for INT4, uint8_t for UINT4, the type itself for INT8 and UINT8.
template <class TQ>
struct byte_of {
    using type = TQ;
};
template <bool Signed>
struct byte_of<nibble<Signed>> {
    using type = std::conditional_t<Signed, std::int8_t, std::uint8_t>;
};
template <class TQ>
using byte_of_t = typename byte_of<TQ>::type;

/// What an absent zero point reads (SCALE): implied_zero_point, repeated
/// through zero strides.
template <class TQ>
inline const byte_of_t<TQ> kImpliedZeroPoint = static_cast<byte_of_t<TQ>>(qdml::detail::implied_zero_point<TQ>());

using Strides8 = std::array<std::uint64_t, kMaxDimensions>;
using Sizes8 = std::array<std::uint32_t, kMaxDimensions>;

/// The shape the plan walks: every dimension d where the quantization
/// tensors are blockwise (1 < block[d] < sizes[d]) split into (blocks,
/// block), an element-indexed operand's strides (stride * block, stride),
/// a block-indexed one's (its stride, 0); a per-tensor dimension (block =
/// size) gives the block-indexed operands stride 0. Operand k is
/// block-indexed where `blocked[k]`. Nothing when the split shape has more
/// than kMaxDimensions dimensions of size above 1.
template <std::size_t K>
bool split_blocks(const Sizes8& sizes, const Sizes8& block, const std::array<const Strides8*, K>& strides,
                  const std::array<bool, K>& blocked, Sizes8& out_sizes, std::array<Strides8, K>& out_strides) noexcept {
    out_sizes.fill(1);
    for (auto& s : out_strides) s.fill(0);
    std::size_t n = 0;
    for (std::size_t d = 0; d < kMaxDimensions; ++d) {
        const std::uint32_t size = sizes[d], b = block[d];
        if (size == 1) continue;
        const bool split = b != 1 && b != size;
        if (n + (split ? 2 : 1) > kMaxDimensions) return false;
        for (std::size_t k = 0; k < K; ++k) {
            const std::uint64_t st = (*strides[k])[d];
            if (split) {
                out_strides[k][n] = blocked[k] ? st : st * b;
                out_strides[k][n + 1] = blocked[k] ? 0 : st;
            } else {
                out_strides[k][n] = blocked[k] && b == size ? 0 : st;
            }
        }
        if (split) {
            out_sizes[n++] = size / b;
            out_sizes[n++] = b;
        } else {
            out_sizes[n++] = size;
        }
    }
    return true;
}

/// Whether `strides` are the packed ones of `sizes` (dimensions of size 1 aside).
inline bool is_packed(const Sizes8& sizes, const Strides8& strides) noexcept {
    std::uint64_t acc = 1;
    for (std::size_t d = kMaxDimensions; d-- > 0;) {
        if (sizes[d] != 1 && strides[d] != acc) return false;
        acc *= sizes[d];
    }
    return true;
}

/// The packed strides of `sizes`.
inline Strides8 packed_strides(const Sizes8& sizes) noexcept {
    Strides8 st{};
    std::uint64_t acc = 1;
    for (std::size_t d = kMaxDimensions; d-- > 0;) {
        st[d] = acc;
        acc *= sizes[d];
    }
    return st;
}

/// The inner-block form's plan: `split` (split_blocks' shape, operands
/// float, scale, zero point) without its last dimension, the block, when
/// that dimension is the innermost one's block (the float stride 1, the
/// quantization tensors' 0, the one before it the float stride `block`);
/// each element of the plan is a block (the float operand's element size
/// block * sizeof(TFloat)).
template <class TFloat>
std::optional<std::pair<LoopPlan<3>, std::size_t>> inner_block_plan(const Sizes8& split,
                                                                    const std::array<Strides8, 3>& st) noexcept {
    std::size_t last = kMaxDimensions;
    while (last > 0 && split[last - 1] == 1) --last;
    if (last < 2) return std::nullopt;
    const std::size_t d = last - 1;
    const std::uint32_t block = split[d];
    if (st[0][d] != 1 || st[1][d] != 0 || st[2][d] != 0 || st[0][d - 1] != block || block < 8) return std::nullopt;
    Sizes8 s = split;
    s[d] = 1;
    std::array<Strides8, 3> t = st;
    for (std::size_t k = 0; k + 1 < last; ++k) t[0][k] /= block;  // (packed: multiples of the block)
    return std::pair{make_plan<3>(s, {&t[0], &t[1], &t[2]}, {block * sizeof(TFloat), sizeof(TFloat), 1}),
                     std::size_t{block}};
}

/// The 8-bit forms' plan (operands: output, input, scale, zero point).
template <class TOut, class TIn, class TFloat, class TQ>
std::optional<LoopPlan<4>> plan_8bit(const qdml::detail::QuantizationViews<TFloat, TQ>& q, const Sizes8& sizes, const Strides8& out,
                                     const Strides8& in) noexcept {
    static const Strides8 zero{};
    const Strides8& zp = q.ZeroPointTensor ? q.ZeroPointTensor->strides : zero;
    Sizes8 s;
    std::array<Strides8, 4> st;
    if (!split_blocks<4>(sizes, q.block, {&out, &in, &q.ScaleTensor.strides, &zp}, {false, false, true, true}, s, st))
        return std::nullopt;
    return make_plan<4>(s, {&st[0], &st[1], &st[2], &st[3]}, {sizeof(TOut), sizeof(TIn), sizeof(TFloat), sizeof(TQ)});
}

/// The 4-bit forms' plan (operands: the float tensor, scale, zero point one
/// a byte packed over the scale's sizes): both the float and the 4-bit
/// tensor packed, so that a float element's offset is its nibble's.
template <class TFloat>
struct Plan4 {
    LoopPlan<3> plan;  ///< the split shape's
    std::optional<std::pair<LoopPlan<3>, std::size_t>> inner;  ///< the inner-block form's, and the block
};
template <class TFloat, class TQ>
std::optional<Plan4<TFloat>> plan_4bit(const qdml::detail::QuantizationViews<TFloat, TQ>& q, const Sizes8& sizes,
                                       const Strides8& real, const Strides8& quantized) noexcept {
    if (!is_packed(sizes, real) || !is_packed(sizes, quantized)) return std::nullopt;
    static const Strides8 zero{};
    const Strides8 zp = q.ZeroPointTensor ? packed_strides(q.ScaleTensor.sizes) : zero;
    Sizes8 s;
    std::array<Strides8, 3> st;
    if (!split_blocks<3>(sizes, q.block, {&real, &q.ScaleTensor.strides, &zp}, {false, true, true}, s, st))
        return std::nullopt;
    return Plan4<TFloat>{make_plan<3>(s, {&st[0], &st[1], &st[2]}, {sizeof(TFloat), sizeof(TFloat), 1}),
                         inner_block_plan<TFloat>(s, st)};
}

/// A nibble's value as a byte: as is (UINT4) or sign-extended (INT4).
template <bool Signed>
QDML_ALWAYS_INLINE inline std::uint8_t nibble_value(unsigned v) noexcept {
    v &= 0xFu;
    return static_cast<std::uint8_t>(Signed ? (v ^ 8u) - 8u : v);
}

/// Elements [e, e + count) of the 4-bit tensor at `bytes` into dst, one a byte.
template <bool Signed>
QDML_ALWAYS_INLINE inline void unpack_nibbles(const std::uint8_t* bytes, std::uint64_t e, std::size_t count,
                                              std::uint8_t* dst) noexcept {
    std::size_t j = 0;
    if ((e & 1) != 0 && count != 0) dst[j++] = nibble_value<Signed>(bytes[e / 2] >> 4u);  // a high nibble first
    const std::uint8_t* src = bytes + (e + j) / 2;
    const std::size_t pairs = (count - j) / 2;
    std::size_t p = 0;
#if defined(QDML_NIBBLES_SSE2)
    const __m128i low4 = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
    for (; p + 16 <= pairs; p += 16) {
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + p));
        __m128i lo = _mm_and_si128(b, low4), hi = _mm_and_si128(_mm_srli_epi16(b, 4), low4);
        if (Signed) {
            lo = _mm_sub_epi8(_mm_xor_si128(lo, eight), eight);
            hi = _mm_sub_epi8(_mm_xor_si128(hi, eight), eight);
        }
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + j + 2 * p), _mm_unpacklo_epi8(lo, hi));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + j + 2 * p + 16), _mm_unpackhi_epi8(lo, hi));
    }
#elif defined(QDML_NIBBLES_NEON)
    for (; p + 16 <= pairs; p += 16) {
        const uint8x16_t b = vld1q_u8(src + p);
        uint8x16x2_t v;
        v.val[0] = vandq_u8(b, vdupq_n_u8(0x0F));
        v.val[1] = vshrq_n_u8(b, 4);
        if (Signed) {
            v.val[0] = vsubq_u8(veorq_u8(v.val[0], vdupq_n_u8(8)), vdupq_n_u8(8));
            v.val[1] = vsubq_u8(veorq_u8(v.val[1], vdupq_n_u8(8)), vdupq_n_u8(8));
        }
        vst2q_u8(dst + j + 2 * p, v);  // interleaved: low, high, low, high, ...
    }
#endif
    for (; p < pairs; ++p) {
        dst[j + 2 * p] = nibble_value<Signed>(src[p]);
        dst[j + 2 * p + 1] = nibble_value<Signed>(src[p] >> 4u);
    }
    j += 2 * pairs;
    if (j < count) dst[j] = nibble_value<Signed>(src[pairs]);  // a low nibble last
}

/// count values of the 4-bit range (one a byte) from src into elements
/// [e, e + count) of the 4-bit tensor at `bytes`; the other nibble of a
/// byte shared with an element outside keeps its bits.
QDML_ALWAYS_INLINE inline void pack_nibbles(const std::uint8_t* src, std::uint8_t* bytes, std::uint64_t e,
                                            std::size_t count) noexcept {
    std::size_t j = 0;
    if ((e & 1) != 0 && count != 0) {
        std::uint8_t& b = bytes[e / 2];
        b = static_cast<std::uint8_t>((b & 0x0Fu) | ((src[j++] & 0x0Fu) << 4u));
    }
    std::uint8_t* dst = bytes + (e + j) / 2;
    const std::size_t pairs = (count - j) / 2;
    std::size_t p = 0;
#if defined(QDML_NIBBLES_SSE2)
    const __m128i even = _mm_set1_epi16(0x000F), odd = _mm_set1_epi16(0x00F0);
    for (; p + 16 <= pairs; p += 16) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j + 2 * p));
        const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j + 2 * p + 16));
        // per 16-bit lane (an even value, an odd one): low nibble | next nibble << 4 (<= 255)
        const __m128i pa = _mm_or_si128(_mm_and_si128(a, even), _mm_and_si128(_mm_srli_epi16(a, 4), odd));
        const __m128i pc = _mm_or_si128(_mm_and_si128(c, even), _mm_and_si128(_mm_srli_epi16(c, 4), odd));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + p), _mm_packus_epi16(pa, pc));
    }
#elif defined(QDML_NIBBLES_NEON)
    for (; p + 16 <= pairs; p += 16) {
        const uint8x16x2_t v = vld2q_u8(src + j + 2 * p);  // [0] the even values, [1] the odd
        vst1q_u8(dst + p, vorrq_u8(vandq_u8(v.val[0], vdupq_n_u8(0x0F)), vshlq_n_u8(v.val[1], 4)));
    }
#endif
    for (; p < pairs; ++p)
        dst[p] = static_cast<std::uint8_t>((src[j + 2 * p] & 0x0Fu) | ((src[j + 2 * p + 1] & 0x0Fu) << 4u));
    j += 2 * pairs;
    if (j < count) dst[pairs] = static_cast<std::uint8_t>((dst[pairs] & 0xF0u) | (src[j] & 0x0Fu));
}

/// The zero points of a 4-bit desc one a byte, packed over the scale's sizes
/// (kImpliedZeroPoint's address when the desc has none).
template <class TFloat, class TQ>
const byte_of_t<TQ>* unpacked_zero_points(const qdml::detail::QuantizationViews<TFloat, TQ>& q, std::vector<byte_of_t<TQ>>& buf) {
    if (!q.ZeroPointTensor) return &kImpliedZeroPoint<TQ>;
    const auto& z = *q.ZeroPointTensor;
    if (is_packed(z.sizes, z.strides)) {  // (the common form: one pass of unpack_nibbles)
        std::uint64_t count = 1;
        for (const auto size : z.sizes) count *= size;
        buf.resize(static_cast<std::size_t>(count));
        unpack_nibbles<std::is_signed_v<byte_of_t<TQ>>>(z.data, 0, buf.size(), reinterpret_cast<std::uint8_t*>(buf.data()));
        return buf.data();
    }
    for_each_index(q.ScaleTensor.sizes, [&](const Sizes8& b) { buf.push_back(static_cast<byte_of_t<TQ>>(z[b])); });
    return buf.data();
}

/// Elements a 4-bit row kernel takes at a time (a streamed row's minimum, kStreamRowBytes).
template <class TFloat>
inline constexpr std::size_t kNibbleChunk = kStreamRowBytes / sizeof(TFloat);

/// DEQUANTIZE's 4-bit row on tag A: the row's nibbles (found from the
/// output's offset: both tensors packed) unpacked a chunk at a time, then
/// DequantizeRow on the bytes.
template <class TQ, class TOut, class A>
struct DequantizeNibbleRow {
    using B = byte_of_t<TQ>;
    const std::uint8_t* in;  ///< the 4-bit input
    const TOut* out0;        ///< the output's element 0
    bool stream = false;

    QDML_ALWAYS_INLINE void operator()(TOut* out, RowIn<TOut> scale, RowIn<B> zp, std::size_t n) const noexcept {
        constexpr std::size_t C = kNibbleChunk<TOut>;
        alignas(64) B buf[C];
        const auto e = static_cast<std::uint64_t>(out - out0);
        const DequantizeRow<B, TOut, A> row{stream};
        for (std::size_t j = 0; j < n; j += C) {
            const std::size_t c = n - j < C ? n - j : C;
            unpack_nibbles<std::is_signed_v<B>>(in, e + j, c, reinterpret_cast<std::uint8_t*>(buf));
            row(out + j, RowIn<B>{buf, 1}, RowIn<TOut>{scale.p + j * scale.step, scale.step},
                RowIn<B>{zp.p + j * zp.step, zp.step}, c);
        }
    }
};

/// QUANTIZE's 4-bit row on tag A: QuantizeRow (saturating to TQ's range)
/// a chunk at a time into bytes, packed into the row's nibbles (found from
/// the input's offset: both tensors packed). The plan's operand 0 is the
/// input: the row reads it only.
template <class TIn, class TQ, class A>
struct QuantizeNibbleRow {
    using B = byte_of_t<TQ>;
    std::uint8_t* out;  ///< the 4-bit output
    const TIn* in0;     ///< the input's element 0

    QDML_ALWAYS_INLINE void operator()(TIn* x, RowIn<TIn> scale, RowIn<B> zp, std::size_t n) const noexcept {
        constexpr std::size_t C = kNibbleChunk<TIn>;
        alignas(64) B buf[C];
        const auto e = static_cast<std::uint64_t>(x - in0);
        const QuantizeRow<TIn, B, A, TIn, QuantizeBy::Divide, TQ> row{true, false};
        for (std::size_t j = 0; j < n; j += C) {
            const std::size_t c = n - j < C ? n - j : C;
            row(buf, RowIn<TIn>{x + j, 1}, RowIn<TIn>{scale.p + j * scale.step, scale.step},
                RowIn<B>{zp.p + j * zp.step, zp.step}, c);
            pack_nibbles(reinterpret_cast<const std::uint8_t*>(buf), out, e + j, c);
        }
    }
};

/// The inner-block form of the 4-bit rows (blocks along the innermost
/// dimension: ONNX Runtime's MatMulNBits layout), where the split plan's
/// rows would be one block each: a row of `n` whole blocks of `block`
/// elements (float and 4-bit tensors packed), the scale and zero point of
/// block k at `scale + k * scale_step`, `zp + k * zp_step` (bytes). Each
/// segment of one block runs as the row kernels compute it (the same
/// steps: dequantize_step, QuantizeRow), the nibbles unpacked and packed a
/// chunk at a time.
template <class TQ, class TOut, class A>
struct DequantizeBlockRow {
    using B = byte_of_t<TQ>;
    const std::uint8_t* in;  ///< the 4-bit input
    const TOut* out0;        ///< the output's element 0
    std::size_t block;
    bool stream = false;

    QDML_ALWAYS_INLINE void operator()(char* out_row, const char* scale, const char* zp, std::int64_t scale_step,
                                       std::int64_t zp_step, std::size_t n) const noexcept {
        using F = kernel::fbatch<A>;
        constexpr std::size_t W = F::size, C = kNibbleChunk<TOut>;
        alignas(64) B buf[C];
        TOut* out = reinterpret_cast<TOut*>(out_row);
        const auto e = static_cast<std::uint64_t>(out - out0);
        const std::size_t total = n * block;
        for (std::size_t c0 = 0; c0 < total; c0 += C) {
            const std::size_t c1 = total - c0 < C ? total : c0 + C;
            unpack_nibbles<std::is_signed_v<B>>(in, e + c0, c1 - c0, reinterpret_cast<std::uint8_t*>(buf));
            std::size_t k = c0 / block;  // (one division a chunk)
            for (std::size_t j = c0; j < c1; ++k) {  // the segment [j, end) of block k
                const std::size_t end = std::min(c1, (k + 1) * block);
                const float s = to_float(*reinterpret_cast<const TOut*>(scale + static_cast<std::int64_t>(k) * scale_step));
                const B z = *reinterpret_cast<const B*>(zp + static_cast<std::int64_t>(k) * zp_step);
                const F vscale(s), vzp(static_cast<float>(z));
                const B* x = buf + (j - c0);
                TOut* o = out + j;
                const std::size_t len = end - j;
                std::size_t i = 0;
                const auto value = [&](std::size_t m) QDML_ALWAYS_INLINE {
                    return dequantize_step(kernel::load_float<A>(x + m) - vzp, vscale);  // exact difference
                };
                if (stream && reinterpret_cast<std::uintptr_t>(o) % (W * sizeof(TOut)) == 0)
                    for (; i + W <= len; i += W) kernel::store_vec<A, true>(o + i, value(i));
                else
                    for (; i + W <= len; i += W) kernel::store_vec<A>(o + i, value(i));
                for (; i < len; ++i) o[i] = from_float<TOut>(qdml::dequantize(x[i], z, s));
                j = end;
            }
        }
    }
};

template <class TIn, class TQ, class A>
struct QuantizeBlockRow {
    using B = byte_of_t<TQ>;
    std::uint8_t* out;  ///< the 4-bit output
    const TIn* in0;     ///< the input's element 0
    std::size_t block;

    QDML_ALWAYS_INLINE void operator()(char* in_row, const char* scale, const char* zp, std::int64_t scale_step,
                                       std::int64_t zp_step, std::size_t n) const noexcept {
        constexpr std::size_t C = kNibbleChunk<TIn>;
        alignas(64) B buf[C];
        const TIn* x = reinterpret_cast<const TIn*>(in_row);
        const auto e = static_cast<std::uint64_t>(x - in0);
        const std::size_t total = n * block;
        const QuantizeRow<TIn, B, A, TIn, QuantizeBy::Divide, TQ> row{true, false};
        for (std::size_t c0 = 0; c0 < total; c0 += C) {
            const std::size_t c1 = total - c0 < C ? total : c0 + C;
            std::size_t k = c0 / block;
            for (std::size_t j = c0; j < c1; ++k) {
                const std::size_t end = std::min(c1, (k + 1) * block);
                const auto* s = reinterpret_cast<const TIn*>(scale + static_cast<std::int64_t>(k) * scale_step);
                const auto* z = reinterpret_cast<const B*>(zp + static_cast<std::int64_t>(k) * zp_step);
                row(buf + (j - c0), RowIn<TIn>{x + j, 1}, RowIn<TIn>{s, 0}, RowIn<B>{z, 0}, end - j);
                j = end;
            }
            pack_nibbles(reinterpret_cast<const std::uint8_t*>(buf), out, e + c0, c1 - c0);
        }
    }
};

/// Runs `kernel(float row, scale, zp, scale step, zp step, blocks)` (on_arch'd)
/// over every row of the inner-block plan `p`: as tasks of whole rows, or
/// of column chunks of a long row (row_tasks, a function of the shape), on
/// `ex` from kMinThreadedBytes of float data.
template <class TFloat, class Kernel>
void run_block_rows(const LoopPlan<3>& p, const std::array<char*, 3>& base, std::size_t block, const Kernel& kernel,
                    const Executor& ex, std::uint64_t grain) {
    const std::uint64_t bytes = p.elements() * block * sizeof(TFloat);
    const RowTasks t = row_tasks(RowCursor<3>::rows(p), 1, p.row, block * sizeof(TFloat), grain);
    const auto task = [&](std::size_t i) {
        const std::uint64_t u0 = i / t.chunks * t.per, u1 = std::min(t.units, u0 + t.per);
        const std::uint64_t c0 = i % t.chunks * t.columns, count = std::min(p.row - c0, t.columns);
        RowCursor<3> cursor(p, base);
        cursor.seek(u0);
        for (std::uint64_t u = u0; u < u1; ++u) {
            if (u != u0) cursor.next();
            const auto ptrs = cursor.at(c0);
            kernel(ptrs[0], static_cast<const char*>(ptrs[1]), static_cast<const char*>(ptrs[2]), p.row_stride[1],
                   p.row_stride[2], static_cast<std::size_t>(count));
        }
        std::atomic_thread_fence(std::memory_order_seq_cst);  // (a task's non-temporal stores, before the join)
    };
    if (!ex.calling_thread_only() && bytes >= kMinThreadedBytes) {
        qdml::detail::parallel_for(ex, static_cast<std::size_t>(t.tasks()), task);
    } else {
        for (std::uint64_t i = 0; i < t.tasks(); ++i) task(static_cast<std::size_t>(i));
    }
}

/// Calls f(ArchTag<A>{}) for the element-wise path `isa` (as run_rows_on picks it).
template <class F>
void on_isa(ElementWiseIsa isa, F&& f) {
#if QDML_X86
    if (isa == ElementWiseIsa::Avx512) return f(ArchTag<x86::avx512bw::ElementWise>{});
    if (isa == ElementWiseIsa::Avx2) return f(ArchTag<x86::avx2::ElementWise>{});
#endif
    (void)isa;
    f(ArchTag<Arch>{});
}

template <class T>
char* bytes_of(const T* p) noexcept {
    return const_cast<char*>(reinterpret_cast<const char*>(p));
}

/// Whether a plan has no element (a size of 0).
inline bool empty_shape(const Sizes8& sizes) noexcept {
    for (auto s : sizes)
        if (s == 0) return true;
    return false;
}

/// The 4-bit forms' operands: the plans (none: not the vector path's
/// layout), the zero points one a byte, and the plans' bases (the float
/// tensor, the scale, the zero points).
template <class TFloat, class TQ>
struct Operands4 {
    std::optional<Plan4<TFloat>> plans;
    std::vector<byte_of_t<TQ>> zp;
    std::array<char*, 3> base{};

    Operands4(const qdml::detail::QuantizationViews<TFloat, TQ>& q, const Sizes8& sizes, const TFloat* real,
              const Strides8& real_strides, const Strides8& quantized_strides)
        : plans(plan_4bit(q, sizes, real_strides, quantized_strides)) {
        if (plans) base = {bytes_of(real), bytes_of(q.ScaleTensor.data), bytes_of(unpacked_zero_points(q, zp))};
    }
};

/// QUANTIZE on the vector path; false (nothing computed) where it does not take `op`.
template <class TIn, class TOut>
bool quantize_vector(const Quantize<TIn, TOut>& op, const GemmOptions& o) {
    const ElementWiseIsa isa = select_elementwise_isa(o.isa);
    if (empty_shape(op.OutputTensor.sizes)) return true;
    if constexpr (is_nibble_v<TOut>) {
        const Operands4<TIn, TOut> ops(op, op.OutputTensor.sizes, op.InputTensor.data, op.InputTensor.strides,
                                       op.OutputTensor.strides);
        const auto& plans = ops.plans;
        if (!plans) return false;
        const std::array<char*, 3>& base = ops.base;
        if (plans->inner) {
            const LoopPlan<3>& plan = plans->inner->first;
            const std::size_t block = plans->inner->second;
            // (Odd blocks: a task may start in the middle of a byte; then one task.)
            const Executor ex = block % 2 == 0 ? o.executor : Executor{};
            on_isa(isa, [&](auto tag) {
                using A = typename decltype(tag)::type;
                run_block_rows<TIn>(plan, base, block,
                                    on_arch<A>(QuantizeBlockRow<TIn, TOut, A>{op.OutputTensor.data, op.InputTensor.data, block}),
                                    ex, kTaskBytes);
            });
        } else {
            // (Rows of odd length share a byte with their neighbour: then one task.)
            const Executor ex = plans->plan.row % 2 == 0 ? o.executor : Executor{};
            run_rows_on<TIn, TIn, byte_of_t<TOut>>(isa, plans->plan, base, [&](auto tag) {
                return QuantizeNibbleRow<TIn, TOut, typename decltype(tag)::type>{op.OutputTensor.data, op.InputTensor.data};
            }, ex);
        }
    } else {
        const auto plan = plan_8bit<TOut, TIn>(op, op.OutputTensor.sizes, op.OutputTensor.strides, op.InputTensor.strides);
        if (!plan) return false;
        const TOut* zp = op.ZeroPointTensor ? op.ZeroPointTensor->data : &kImpliedZeroPoint<TOut>;
        quantize_rows<TIn, TOut, TIn>(*plan, {bytes_of(op.OutputTensor.data), bytes_of(op.InputTensor.data),
                                              bytes_of(op.ScaleTensor.data), bytes_of(zp)},
                                      true, isa, o.executor);
    }
    return true;
}

/// DEQUANTIZE on the vector path; false (nothing computed) where it does not take `op`.
template <class TIn, class TOut>
bool dequantize_vector(const Dequantize<TIn, TOut>& op, const GemmOptions& o) {
    const ElementWiseIsa isa = select_elementwise_isa(o.isa);
    if (empty_shape(op.OutputTensor.sizes)) return true;
    if constexpr (is_nibble_v<TIn>) {
        const Operands4<TOut, TIn> ops(op, op.OutputTensor.sizes, op.OutputTensor.data, op.OutputTensor.strides,
                                       op.InputTensor.strides);
        const auto& plans = ops.plans;
        if (!plans) return false;
        const std::array<char*, 3>& base = ops.base;
        const bool stream = streams(plans->plan.elements() * sizeof(TOut));
        if (plans->inner) {
            const LoopPlan<3>& plan = plans->inner->first;
            const std::size_t block = plans->inner->second;
            on_isa(isa, [&](auto tag) {
                using A = typename decltype(tag)::type;
                run_block_rows<TOut>(
                    plan, base, block,
                    on_arch<A>(DequantizeBlockRow<TIn, TOut, A>{op.InputTensor.data, op.OutputTensor.data, block, stream}),
                    o.executor, stream ? kStreamTaskBytes : kTaskBytes);
            });
        } else {
            run_rows_on<TOut, TOut, byte_of_t<TIn>>(isa, plans->plan, base, [&](auto tag) {
                return DequantizeNibbleRow<TIn, TOut, typename decltype(tag)::type>{op.InputTensor.data,
                                                                                    op.OutputTensor.data, stream};
            }, o.executor);
        }
        if (stream) kernel::stream_fence();
    } else {
        const auto plan = plan_8bit<TOut, TIn>(op, op.OutputTensor.sizes, op.OutputTensor.strides, op.InputTensor.strides);
        if (!plan) return false;
        const TIn* zp = op.ZeroPointTensor ? op.ZeroPointTensor->data : &kImpliedZeroPoint<TIn>;
        dequantize_rows<TIn, TOut>(*plan, {bytes_of(op.OutputTensor.data), bytes_of(op.InputTensor.data),
                                           bytes_of(op.ScaleTensor.data), bytes_of(zp)},
                                   isa, o.fidelity, o.executor);
    }
    return true;
}

/// Whether the vector path takes `op` (the tests of *_vector).
template <class TIn, class TOut>
bool vector_takes(const Quantize<TIn, TOut>& op) noexcept {
    if constexpr (!kAvailable) return false;
    if constexpr (is_nibble_v<TOut>)
        return plan_4bit(op, op.OutputTensor.sizes, op.InputTensor.strides, op.OutputTensor.strides).has_value();
    else
        return plan_8bit<TOut, TIn>(op, op.OutputTensor.sizes, op.OutputTensor.strides, op.InputTensor.strides).has_value();
}
template <class TIn, class TOut>
bool vector_takes(const Dequantize<TIn, TOut>& op) noexcept {
    if constexpr (!kAvailable) return false;
    if constexpr (is_nibble_v<TIn>)
        return plan_4bit(op, op.OutputTensor.sizes, op.OutputTensor.strides, op.InputTensor.strides).has_value();
    else
        return plan_8bit<TOut, TIn>(op, op.OutputTensor.sizes, op.OutputTensor.strides, op.InputTensor.strides).has_value();
}

}  // namespace detail

/// The bits of reference::quantize(op); `o.isa` caps the path, `o.executor` runs it.
template <class TIn, class TOut>
void quantize(const Quantize<TIn, TOut>& op, const GemmOptions& o = {}) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    if constexpr (kAvailable)
        if (detail::quantize_vector(op, o)) return;
    reference::quantize(op, o.fidelity);
}

/// The bits of reference::dequantize(op); `o.isa` caps the path, `o.executor` runs it.
template <class TIn, class TOut>
void dequantize(const Dequantize<TIn, TOut>& op, const GemmOptions& o = {}) {
    const FpEnvironment fp_env;
    if constexpr (kAvailable)
        if (detail::dequantize_vector(op, o)) return;
    reference::dequantize(op, o.fidelity);
}

/// The implementation path that computes `op`, as qdml::describe() prints
/// it: "element-wise " and the ISA path (arch.hpp) under `o.isa`, or
/// "scalar" for a layout the vector path leaves to the reference's loop.
template <class TIn, class TOut>
std::string path(const Quantize<TIn, TOut>& op, const GemmOptions& o = {}) {
    if (!detail::vector_takes(op)) return "scalar";
    return std::string("element-wise ") + arch_name(o.isa);
}
template <class TIn, class TOut>
std::string path(const Dequantize<TIn, TOut>& op, const GemmOptions& o = {}) {
    if (!detail::vector_takes(op)) return "scalar";
    return std::string("element-wise ") + arch_name(o.isa);
}

}  // namespace qdml::simd
