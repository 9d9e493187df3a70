// qdml/simd/conv/nhwc.hpp - the convolution's implicit GEMM with the INPUT as
// the left operand (oneDNN's brgemm form), on the AMX path (run_nhwc, below)
// and the vector paths (run_nhwc_vector, at the end: pixel blocks of patch
// rows, AVX-512 VNNI reading them in place by segments; use_nhwc says when):
//   rows M = output pixels, K = the patch (taps x Cin/G), columns N = Cout/G;
//   the filter is the packed right operand (per column: filter zero point,
//   scale, bias), the epilogue the engine's (gemm/epilogue.hpp).
// The input is copied once per image and group into a zero-point-padded
// NHWC buffer of a' bytes (pack.hpp's unsigned left form: INT8 + 128), pixel
// stride C = Cin/G. A patch is then a few contiguous runs of that buffer
// (segments: per filter row kW * C bytes when dx = 1, else per tap C bytes),
// each read in 64-byte K steps; the rows of an A tile (16 pixels of one
// output row) are sx * C bytes apart, so a strided tileloadd reads them in
// place: no im2col, no interleave. The filter's K is laid out the same way,
// each segment padded to whole 64-byte steps with zero rows (b' = 0): the
// bytes an A step reads past its segment (the next pixel's channels) add 0.
// Zero points: the input's per tensor as the engine's azp' (column term
// cb'[n], with the real K); the filter's per column as bzp'[n] against the
// row sum ra[m] of the pixel's patch (a box sum over the padded buffer,
// computed only when some bzp' != 0). Padded taps hold a' of the input zero
// point, so (a' - azp') is exactly 0 there.
// Output rows are pixels: NHWC outputs are stored by the epilogue in place;
// others go through a [pixel][channel] scratch, transposed out (NCHW) by
// 16x16 byte blocks (8x8 blocks of int32).
// The store is the output type's (TOut): 8 bits, the requantize epilogue
// (QUANTIZED_LINEAR_CONVOLUTION); std::int32_t, the engine's int32 store of
// the wrapped sums (CONVOLUTION_INTEGER, simd/convolution_integer.hpp:
// out_spec; its scales are unused).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "qdml/operators/quantized_linear_convolution.hpp"
#include "qdml/simd/kernel/transpose.hpp"
#include "qdml/simd/conv/tasks.hpp"
#include "qdml/simd/gemm/gemm.hpp"
#include "qdml/simd/tuning.hpp"

namespace qdml::simd::conv {

using simd::kernel::transpose_bytes;

/// The output's store for element type TOut (gemm/epilogue.hpp): an INT32
/// output takes the engine's int32 store (the wrapped sums, no scale, no
/// output zero point), an 8-bit one the requantize of `s`'s scales and zero
/// points into TOut's range.
template <class TOut>
void out_spec(gemm::RequantSpec& s) noexcept {
    s.out_lo = std::numeric_limits<TOut>::min();
    s.out_hi = std::numeric_limits<TOut>::max();
    s.int32_out = std::is_same_v<TOut, std::int32_t>;
}

/// The bytes of `count` output elements (the engine's output pointers and
/// scratch rows are bytes; an element is sizeof(TOut) of them).
template <class TOut>
constexpr std::size_t out_bytes(std::size_t count) noexcept {
    return count * sizeof(TOut);
}

/// A contiguous run of a pixel's patch in the padded NHWC buffer: `bytes`
/// bytes from `offset` (bytes after the pixel's first tap), read in `steps`
/// 64-byte K steps (AMX), at byte `k` of the patch row (K); (ky, kx) is its
/// first tap.
struct Segment {
    std::uint32_t ky = 0, kx = 0;
    std::size_t bytes = 0, steps = 0, offset = 0, k = 0;
};

/// The segments of a patch: one per filter row when dx == 1 (kW * C
/// contiguous bytes), else one per tap (C bytes), each taking `steps` units
/// of `unit` bytes of K. The AMX form (unit 64, its K steps) starts each
/// segment at a step; the vector forms (unit 4, one k group) lay them end to
/// end, the row's last group padded with zeros (patch_bytes): a 3x3 patch
/// of 3 channels is 28 bytes, not 3 x 12 (with 9-byte segments each padded
/// to a group, its products took 36/27 of the multiply-adds). Offsets need
/// the padded row length Wp (pixels).
inline std::vector<Segment> segments(std::uint32_t C, std::uint32_t kH, std::uint32_t kW, std::uint32_t dy,
                                     std::uint32_t dx, std::size_t Wp, std::size_t unit = 64) {
    std::vector<Segment> s;
    const bool rows = dx == 1;
    const std::size_t bytes = std::size_t{C} * (rows ? kW : 1), steps = (bytes + unit - 1) / unit;
    std::size_t k = 0;
    for (std::uint32_t ky = 0; ky < kH; ++ky)
        for (std::uint32_t kx = 0; kx < (rows ? 1u : kW); ++kx) {
            s.push_back({ky, kx, bytes, steps, (std::size_t{ky} * dy * Wp + std::size_t{kx} * dx) * C, k});
            k += unit == 4 ? bytes : steps * unit;
        }
    return s;
}

/// The bytes of a patch row (K of the NHWC form's product) of segments(..., unit).
inline std::size_t patch_bytes(const std::vector<Segment>& segs, std::size_t unit) noexcept {
    if (segs.empty()) return 0;
    const Segment& last = segs.back();
    return unit == 4 ? (last.k + last.bytes + 3) / 4 * 4 : last.k + last.steps * unit;
}

/// The K unit of the NHWC form on `isa` (segments()).
inline std::size_t segment_unit(simd::Isa isa) noexcept { return isa == simd::Isa::Amx ? 64 : 4; }

/// The filter of every group as the right operand of the NHWC form: K laid
/// out as segments() with segment_unit(isa) (zero rows where the patch row
/// has zeros: past each AMX segment, past the vector forms' last one), b' bytes;
/// PackedRight::K is the real K (taps x C), which the column term needs.
template <class TIn, class TFilter, class TOut>
void pack_filter_right(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, simd::Isa isa,
                       std::vector<gemm::PackedRight>& right) {
    const std::uint32_t C = op.FilterTensor.sizes[1], kH = op.FilterTensor.sizes[2], kW = op.FilterTensor.sizes[3];
    const std::uint32_t groups = op.GroupCount, Ng = op.FilterTensor.sizes[0] / groups;
    const std::size_t unit = segment_unit(isa);
    const std::vector<Segment> segs = segments(C, kH, kW, op.Dilations[0], op.Dilations[1], 0, unit);
    const std::size_t Kp = patch_bytes(segs, unit);
    right.resize(groups);
    // Row k of B: the filter element at offset `at[k]` of each output channel (none in a step's padding).
    const auto& F = op.FilterTensor;
    constexpr std::uint64_t kNone = ~std::uint64_t{0};
    std::vector<std::uint64_t> at(Kp, kNone);
    for (const Segment& s : segs)
        for (std::size_t t = 0; t < s.bytes; ++t)
            at[s.k + t] = F.offset({0, static_cast<std::uint32_t>(t % C), s.ky, s.kx + static_cast<std::uint32_t>(t / C)});
    std::vector<std::int8_t> b(Kp * Ng);
    for (std::uint32_t group = 0; group < groups; ++group) {
        const TFilter* rows = &F[{group * Ng, 0, 0, 0}];
        for (std::size_t k = 0; k < Kp; ++k) {
            std::int8_t* dst = b.data() + k * Ng;
            if (at[k] == kNone) {
                std::fill(dst, dst + Ng, std::int8_t{0});
                continue;
            }
            const TFilter* src = rows + at[k];
            for (std::uint32_t n = 0; n < Ng; ++n) dst[n] = gemm::as_right(src[n * F.strides[0]]);
        }
        gemm::pack_right(gemm::Matrix<std::int8_t>{b.data(), Ng, 1}, Kp, Ng, isa, right[group], {true});  // (AVX2: wide panels)
        right[group].K = std::size_t{C} * kH * kW;
    }
}

/// The stride between consecutive flat pixels (oy * oW + ox) of an (oH, oW)
/// plane with strides (s2, s3), or false when the plane is not one strided run.
inline bool flat_stride(std::uint32_t oH, std::uint32_t oW, std::uint64_t s2, std::uint64_t s3, std::uint64_t& cs) noexcept {
    if (oW == 1) cs = s2;
    else if (oH == 1 || s2 == std::uint64_t{oW} * s3) cs = s3;
    else return false;
    return true;
}

/// The filter side of the NHWC form, per output channel and group.
struct NhwcFilter {
    std::vector<gemm::PackedRight> right;  ///< per group: K (segments) by Cout/G
    std::vector<std::int32_t> zp;          ///< bzp' = FZP shifted as pack.hpp's right operand
    std::vector<float> scale;              ///< FilterScale
    std::vector<std::uint32_t> bias;       ///< Bias (0 without one)
    bool row_sums = false;                 ///< some bzp' != 0: the pixels' patch sums are needed
};

/// Whether the NHWC form computes `op` on `isa`, while its padded copy stays
/// moderate: on every vector path (AMX, AVX-512 VNNI, AVX-VNNI, AVX2) every
/// convolution but the unpadded stride-1 1x1 on channel planes (a plain GEMM
/// on the tensors, conv::run). Measured on Zen 4, 2026-11-25: AVX-512 VNNI
/// 3x3 64->64 56^2 0.55 ms NCHW / 0.53 NHWC against 0.67 / 0.84 in the NCHW
/// form; AVX2 (its A packed by pairs16_block4) 3x3 NHWC 1.47 ms against 1.72,
/// 3x3 stride-2 128->128 28^2 NCHW 0.39 against 0.59, the 3x3 NCHW and 7x7
/// stride-2 rows equal. AVX-VNNI (2026-11-26, the EVEX twin of
/// kernel_avxvnni.hpp on Zen 4; its 6-row blocks of patch rows read in
/// place): 3x3 0.63 / 0.60 ms against 0.68 / 0.88, 3x3 stride-2 NCHW 0.15
/// against 0.35, 7x7 stride-2 NCHW 1.33 against 1.8, the others equal.
template <class TIn, class TFilter, class TOut>
bool use_nhwc(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, simd::Isa isa) noexcept {
    const auto& fs = op.FilterTensor.sizes;
    const auto& xs = op.InputTensor.strides;
    if (isa == simd::Isa::Generic) return false;
    const bool pointwise = fs[2] == 1 && fs[3] == 1 && op.Strides[0] == 1 && op.Strides[1] == 1 &&
                           op.StartPadding[0] == 0 && op.StartPadding[1] == 0 && op.EndPadding[0] == 0 &&
                           op.EndPadding[1] == 0;
    if (pointwise && xs[3] == 1) return false;
    constexpr std::uint64_t kMax = kMaxCopyElements;
    const std::uint64_t Hp = std::uint64_t{op.InputTensor.sizes[2]} + op.StartPadding[0] + op.EndPadding[0];
    const std::uint64_t Wp = std::uint64_t{op.InputTensor.sizes[3]} + op.StartPadding[1] + op.EndPadding[1];
    const std::uint64_t C = fs[1], Ng = fs[0] / op.GroupCount;
    const std::uint64_t P = std::uint64_t{op.OutputTensor.sizes[2]} * op.OutputTensor.sizes[3];
    return Hp <= kMax && Wp <= kMax && Hp * Wp <= kMax / C && P <= kMax / Ng && C * fs[3] <= kMax &&
           std::uint64_t{op.Strides[1]} * C <= kMax;
}

template <class TIn, class TFilter, class TOut>
void prepare_nhwc_filter(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, simd::Isa isa, NhwcFilter& f) {
    const std::uint32_t cout = op.FilterTensor.sizes[0];
    f.zp.assign(cout, gemm::right_shift<TFilter>());
    f.scale.resize(cout);
    f.bias.assign(cout, 0);
    f.row_sums = false;
    for (std::uint32_t oc = 0; oc < cout; ++oc) {
        const std::array<std::uint32_t, 4> at{0, oc, 0, 0};
        if (op.FilterZeroPointTensor) f.zp[oc] += (*op.FilterZeroPointTensor)[at];
        f.scale[oc] = op.FilterScaleTensor[at];
        if (op.BiasTensor) f.bias[oc] = static_cast<std::uint32_t>((*op.BiasTensor)[at]);
        f.row_sums = f.row_sums || f.zp[oc] != 0;
    }
    pack_filter_right(op, isa, f.right);
}

/// Buffers of run_nhwc, kept per thread across calls.
struct NhwcWorkspace {
    gemm::AlignedArray<std::uint8_t> padded;   ///< [Hp][Wp][C] a' bytes, then the slack tiles read past
    gemm::AlignedArray<std::uint8_t> scratch;  ///< [pixel][Cout/G] outputs when the output is not NHWC
    gemm::RequantSpec spec;
    gemm::Epilogue epilogue;
    gemm::PackedLeft sums;  ///< the pixels' patch sums ra as prepare_rows reads them (M = pixels)
    std::vector<std::uint32_t> pixel_sum;
    std::vector<std::size_t> steps;
    bool rows_valid = false;                ///< epilogue.rows hold the rows of rows_key (no patch sums)
    std::array<std::uint32_t, 8> rows_key{};
};

/// The bits of a 32-bit value (the row constants' cache key).
template <class T>
std::uint32_t bits(T v) noexcept {
    static_assert(sizeof(T) == 4, "32-bit values");
    std::uint32_t u;
    std::memcpy(&u, &v, 4);
    return u;
}

/// Image n's channels [c0, c0 + C) as a' bytes into the interior of the
/// padded NHWC buffer (pixel (y, x) at ((y + pt) * Wp + pl + x) * C).
template <class TIn>
void copy_nhwc(const TensorView<const TIn, 4>& X, std::uint32_t n, std::uint32_t c0, std::uint32_t C,
               std::size_t Wp, std::uint32_t pt, std::uint32_t pl, std::uint8_t* buf) noexcept {
    const std::uint32_t H = X.sizes[2], W = X.sizes[3];
    const std::uint64_t s1 = X.strides[1], s2 = X.strides[2], s3 = X.strides[3];
    const std::uint8_t flip = gemm::as_left(TIn{0});
    const std::uint8_t* image = reinterpret_cast<const std::uint8_t*>(&X[{n, c0, 0, 0}]);
    for (std::uint32_t y = 0; y < H; ++y) {
        std::uint8_t* d = buf + ((std::size_t{y} + pt) * Wp + pl) * C;
        const std::uint8_t* row = image + y * s2;
        if (s1 == 1 && (s3 == C || W == 1)) {  // the row's channels and pixels are one run (NHWC)
            for (std::size_t i = 0; i < std::size_t{W} * C; ++i) d[i] = row[i] ^ flip;
        } else if (s1 == 1) {
            for (std::uint32_t x = 0; x < W; ++x)
                for (std::uint32_t c = 0; c < C; ++c) d[std::size_t{x} * C + c] = row[x * s3 + c] ^ flip;
        } else if (s3 == 1) {  // channel rows (NCHW): a transposition
            transpose_bytes(row, s1, d, C, C, W, flip);
        } else {
            for (std::uint32_t x = 0; x < W; ++x)
                for (std::uint32_t c = 0; c < C; ++c) d[std::size_t{x} * C + c] = row[x * s3 + c * s1] ^ flip;
        }
    }
}

/// The border of the padded NHWC buffer (Hp x Wp pixels of C bytes): the
/// input zero point as a' byte `v`.
inline void fill_nhwc_border(std::uint8_t* buf, std::size_t Hp, std::size_t Wp, std::size_t C, std::uint32_t pt,
                             std::uint32_t pb, std::uint32_t pl, std::uint32_t pr, std::uint8_t v) noexcept {
    const std::size_t row = Wp * C;
    std::memset(buf, v, pt * row);
    std::memset(buf + (Hp - pb) * row, v, pb * row);
    for (std::size_t y = pt; y < Hp - pb; ++y) {
        std::memset(buf + y * row, v, pl * C);
        std::memset(buf + y * row + (Wp - pr) * C, v, pr * C);
    }
}

/// Channels [c0, c1) of a [pixel][channel] scratch of `Ng` channels (TOut
/// elements) per pixel into image n's output channels oc0 + c0.. (any
/// strides; NCHW planes by transposition: the NHWC forms run on vector paths,
/// AVX2 at least).
template <class TOut>
void store_pixels(const std::uint8_t* scratch, std::uint32_t Ng, const TensorView<TOut, 4>& Out, std::uint32_t n,
                  std::uint32_t oc0, std::uint32_t c0, std::uint32_t c1) noexcept {
    constexpr std::size_t E = sizeof(TOut);
    const std::uint32_t oH = Out.sizes[2], oW = Out.sizes[3];
    const std::size_t P = std::size_t{oH} * oW;
    TOut* image = &Out[{n, oc0, 0, 0}];
    const std::uint64_t s1 = Out.strides[1], s2 = Out.strides[2], s3 = Out.strides[3];
    if (s3 == 1 && (oH == 1 || s2 == oW)) {  // channel planes (NCHW): a transposition
        if constexpr (E == 1)
            transpose_bytes(scratch + c0, Ng, reinterpret_cast<std::uint8_t*>(image + c0 * s1), s1, P, c1 - c0, 0);
        else
            simd::kernel::transpose_elements<E>(scratch + c0 * E, Ng * E, image + c0 * s1, s1 * E, P, c1 - c0,
                                                simd::Isa::Avx2);
        return;
    }
    for (std::uint32_t oy = 0; oy < oH; ++oy)
        for (std::uint32_t ox = 0; ox < oW; ++ox)
            for (std::uint32_t c = c0; c < c1; ++c)
                std::memcpy(image + c * s1 + oy * s2 + ox * s3, scratch + ((std::size_t{oy} * oW + ox) * Ng + c) * E, E);
}

/// ra per output pixel (flat index oy * oW + ox) into `out`: the sum of its
/// patch's a' bytes in the padded NHWC buffer `buf` (Wp pixels per row, Cin/G
/// bytes per pixel), mod 2^32, as box sums of per-pixel sums.
template <class TIn, class TFilter, class TOut>
void patch_sums(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const std::uint8_t* buf, std::size_t Wp,
                std::vector<std::uint32_t>& pixel_sum, std::uint32_t* out) {
    const std::size_t C = op.FilterTensor.sizes[1];
    const std::size_t Hp = std::size_t{op.InputTensor.sizes[2]} + op.StartPadding[0] + op.EndPadding[0];
    const std::uint32_t kH = op.FilterTensor.sizes[2], kW = op.FilterTensor.sizes[3];
    const std::uint32_t oH = op.OutputTensor.sizes[2], oW = op.OutputTensor.sizes[3];
    pixel_sum.resize(Hp * Wp);
    for (std::size_t q = 0; q < Hp * Wp; ++q) {
        std::uint32_t t = 0;
        for (std::size_t c = 0; c < C; ++c) t += buf[q * C + c];
        pixel_sum[q] = t;
    }
    for (std::uint32_t oy = 0; oy < oH; ++oy)
        for (std::uint32_t ox = 0; ox < oW; ++ox) {
            std::uint32_t t = 0;
            for (std::uint32_t ky = 0; ky < kH; ++ky)
                for (std::uint32_t kx = 0; kx < kW; ++kx)
                    t += pixel_sum[(std::size_t{oy} * op.Strides[0] + std::size_t{ky} * op.Dilations[0]) * Wp +
                                   std::size_t{ox} * op.Strides[1] + std::size_t{kx} * op.Dilations[1]];
            out[std::size_t{oy} * oW + ox] = t;
        }
}

// The epilogue's per-column side for one group: the filter's zero points and
// scales as the right operand, its column sums and the bias.
inline void group_columns(const NhwcFilter& f, std::uint32_t group, std::uint32_t Ng, const gemm::PackedRight& b,
                          gemm::RequantSpec& s, gemm::Epilogue& e) {
    const std::size_t first = std::size_t{group} * Ng;
    s.b_zp.assign(f.zp.begin() + first, f.zp.begin() + first + Ng);
    s.b_scale.assign(f.scale.begin() + first, f.scale.begin() + first + Ng);
    gemm::prepare_columns(s, b, e);
    for (std::uint32_t j = 0; j < Ng; ++j) e.col_bias[j] += f.bias[first + j];
}

// The epilogue's per-tensor side: the input as the left operand (zero point
// shifted as the kernels read it), the output's scale, zero point and range.
template <class TIn, class TFilter, class TOut>
void per_tensor_spec(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, TIn x_zp, bool directml,
                     gemm::RequantSpec& s) {
    const std::array<std::uint32_t, 4> zero{0, 0, 0, 0};
    s.a_zp.assign(1, std::int32_t{x_zp} + gemm::left_shift<TIn>());
    s.a_scale.assign(1, op.InputScaleTensor[zero]);
    s.out_zp.assign(1, op.OutputZeroPointTensor ? std::int32_t{(*op.OutputZeroPointTensor)[zero]} : 0);
    s.out_scale.assign(1, op.OutputScaleTensor[zero]);
    out_spec<TOut>(s);
    s.directml = directml;  // ((acc * FilterScale[oc]) * InputScale) / OutputScale: the column's scale first
    s.col_scale_first = true;
}

#if QDML_X86
/// Computes the convolution in the NHWC form (use_nhwc(op, Amx)), same bits
/// as the reference: per image and group, the padded copy, then blocks of up
/// to 32 pixels of one output row against pairs of 16-channel panels.
/// `part`: the groups and output channels to compute (c0 a multiple of 32).
template <class TIn, class TFilter, class TOut>
void run_nhwc(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const NhwcFilter& f, bool directml,
              const Part& part = {}) {
    const auto& X = op.InputTensor;
    const auto& Out = op.OutputTensor;
    const std::uint32_t batch = X.sizes[0], G = op.GroupCount, C = op.FilterTensor.sizes[1];
    const std::uint32_t Ng = op.FilterTensor.sizes[0] / G, oH = Out.sizes[2], oW = Out.sizes[3];
    const std::uint32_t sy = op.Strides[0], sx = op.Strides[1];
    const std::uint32_t pt = op.StartPadding[0], pl = op.StartPadding[1], pb = op.EndPadding[0], pr = op.EndPadding[1];
    const std::size_t Hp = std::size_t{X.sizes[2]} + pt + pb, Wp = std::size_t{X.sizes[3]} + pl + pr;
    const std::size_t P = std::size_t{oH} * oW, plane = Hp * Wp * C, slack = 32 * std::size_t{sx} * C + 64;
    const std::array<std::uint32_t, 4> zero{0, 0, 0, 0};
    const TIn x_zp = op.InputZeroPointTensor ? (*op.InputZeroPointTensor)[zero] : TIn{0};
    thread_local NhwcWorkspace w;
    // The K steps: A offsets of every 64-byte step of every segment, in B's order.
    const std::vector<Segment> segs =
        segments(C, op.FilterTensor.sizes[2], op.FilterTensor.sizes[3], op.Dilations[0], op.Dilations[1], Wp);
    w.steps.clear();
    for (const Segment& s : segs)
        for (std::size_t j = 0; j < s.steps; ++j) w.steps.push_back(s.offset + 64 * j);
    // The padded copy: border and slack once per call, the interior per image and group.
    w.padded.resize(plane + slack);
    std::uint8_t* buf = w.padded.data();
    fill_nhwc_border(buf, Hp, Wp, C, pt, pb, pl, pr, gemm::as_left(x_zp));
    std::memset(buf + plane, 0, slack);
    // The epilogue: the input as the left operand (per tensor), the filter as the right one (per column).
    gemm::RequantSpec& s = w.spec;
    gemm::Epilogue& e = w.epilogue;
    per_tensor_spec(op, x_zp, directml, s);
    gemm::PackedLeft& sums = w.sums;
    sums.M = P;
    sums.row_sum.resize(P);
    // Without patch sums every pixel's row constants are the same, and they
    // depend only on these values: the last call's rows serve while they repeat.
    const std::array<std::uint32_t, 8> rows_key{static_cast<std::uint32_t>(P), bits(s.a_zp[0]), bits(s.out_zp[0]),
                                                bits(s.out_lo), bits(s.out_hi), bits(s.a_scale[0]), bits(s.out_scale[0]),
                                                s.directml};
    const bool rows_kept = !f.row_sums && w.rows_valid && w.rows_key == rows_key;
    w.rows_valid = false;
    if (!f.row_sums && !rows_kept) std::memset(sums.row_sum.data(), 0, P * 4);
    // Output: NHWC rows in place, else a [pixel][channel] scratch copied out.
    std::uint64_t pixel_stride = 0;
    const bool direct = Out.strides[1] == 1 && flat_stride(oH, oW, Out.strides[2], Out.strides[3], pixel_stride);
    if (!direct) w.scratch.resize(out_bytes<TOut>(P * Ng));
    const std::size_t kx_rows = 32, a_stride[2] = {std::size_t{sx} * C, std::size_t{sx} * C};
    const gemm::Session session(simd::Isa::Amx);
    gemm::amx::Pending pd;
    const std::uint32_t g0 = part.g0, g1 = std::min(part.g1, G), c0 = part.c0, c1 = std::min(part.c1, Ng);
    for (std::uint32_t group = g0; group < g1; ++group) {
        const gemm::PackedRight& b = f.right[group];
        const std::size_t p0 = c0 / gemm::kPanel, p1 = std::min(b.panels, (std::size_t{c1} + gemm::kPanel - 1) / gemm::kPanel);
        group_columns(f, group, Ng, b, s, e);
        if (!f.row_sums && !rows_kept && group == g0) gemm::prepare_rows(s, sums, e);  // the same for every group
        for (std::uint32_t n = 0; n < batch; ++n) {
            copy_nhwc(X, n, group * C, C, Wp, pt, pl, buf);
            if (f.row_sums) {
                patch_sums(op, buf, Wp, w.pixel_sum, sums.row_sum.data());
                gemm::prepare_rows(s, sums, e);
            }
            if (direct) {
                e.out = reinterpret_cast<std::uint8_t*>(&Out[{n, group * Ng, 0, 0}]);
                e.out_rs = pixel_stride;
            } else {
                e.out = w.scratch.data();
                e.out_rs = Ng;
            }
            e.out_cs = 1;
            for (std::uint32_t oy = 0; oy < oH; ++oy)
                for (std::uint32_t ox0 = 0; ox0 < oW; ox0 += kx_rows) {
                    const std::size_t rows = std::min<std::size_t>(kx_rows, oW - ox0), m0 = std::size_t{oy} * oW + ox0;
                    const std::uint8_t* a = buf + (std::size_t{oy} * sy * Wp + std::size_t{ox0} * sx) * C;
                    // A tile rows: the block's pixels, read in place at each K step's offset.
                    const std::size_t* st = w.steps.data();
                    const std::size_t tile1 = 16 * a_stride[0];  // the second row tile: 16 pixels on
                    const auto a_of = [a, st, tile1](int t, std::size_t i) { return a + st[i] + (t ? tile1 : 0); };
                    const std::size_t k = w.steps.size();
                    for (std::size_t p = p0; p < p1; p += 2) {
                        const bool two = p1 - p >= 2;
                        if (rows > 16)
                            two ? gemm::amx::tile_steps<2, 2>(a_of, a_stride, k, b, e, m0, rows, p, pd)
                                : gemm::amx::tile_steps<2, 1>(a_of, a_stride, k, b, e, m0, rows, p, pd);
                        else
                            two ? gemm::amx::tile_steps<1, 2>(a_of, a_stride, k, b, e, m0, rows, p, pd)
                                : gemm::amx::tile_steps<1, 1>(a_of, a_stride, k, b, e, m0, rows, p, pd);
                    }
                }
            gemm::amx::drain(pd, pd.rows);
            if (!direct) store_pixels(w.scratch.data(), Ng, Out, n, group * Ng, c0, c1);
        }
    }
    w.rows_valid = !f.row_sums;
    w.rows_key = rows_key;
}
#endif

/// Bytes past the end of run_nhwc_vector's padded input and patch rows
/// that copy_segment may read or write.
inline constexpr std::size_t kPatchSlack = 16;

/// A patch row's segment: `bytes` bytes from `src` to `d`, then 4 zero
/// bytes (the last segment's: the row's zeros up to its last k group), in
/// 16-byte pieces (a call of memcpy and one of memset per segment took a
/// fifth of a 3x3 convolution with 3 input channels, 9-byte segments). It
/// writes up to 15 bytes past `bytes` and reads up to 15 past the segment:
/// within kPatchSlack at the buffers' ends, and elsewhere into the next
/// segment's bytes, which are written after (the segments of a row all have
/// the same size, in increasing order of k; the rows too).
inline void copy_segment(std::uint8_t* d, const std::uint8_t* src, std::size_t bytes) noexcept {
    for (std::size_t j = 0; j < bytes; j += 16) std::memcpy(d + j, src + j, 16);
    std::memset(d + bytes, 0, 4);  // ([bytes, bytes + 4) covers the zeros up to the group's end)
}

/// Buffers of run_nhwc_vector, kept per thread across calls.
struct NhwcVectorWorkspace {
    gemm::AlignedArray<std::uint8_t> padded;   ///< [Hp][Wp][C] a' bytes
    gemm::AlignedArray<std::uint8_t> patches;  ///< a block of patch rows (Kp bytes each)
    gemm::AlignedArray<std::uint8_t> scratch;  ///< [pixel][Cout/G] outputs when the output is not NHWC
    gemm::RequantSpec spec;
    gemm::Epilogue epilogue;
    gemm::PackedLeft left;  ///< the block's rows packed for the kernel (or read in place)
    std::vector<std::uint32_t> pixel_sum;  ///< per padded pixel, for patch_sums
};

/// Pixels per block of the vector NHWC form: about 64 KiB of patch rows
/// (L2), a multiple of 16 rows (every kernel's row block divides it).
inline std::size_t nhwc_block_pixels(std::size_t Kp) noexcept {
    return std::clamp<std::size_t>(kNhwcBlockBytes / std::max<std::size_t>(Kp, 1) / 16 * 16, kNhwcBlockMinPixels, kNhwcBlockMaxPixels);
}

/// Computes the convolution in the NHWC form on a vector micro-kernel
/// (use_nhwc(op, isa), isa not AMX), same bits as the reference: per image
/// and group, blocks of output pixels as the left operand's rows (M), the
/// filter as the packed right operand (N = Cout/G), the engine's driver and
/// epilogue (gemm::multiply). The rows of a block are the pixels' patches:
/// - a 1x1, stride-1, unpadded convolution reads them from the input (rows
///   of its Cin/G channels, one pixel stride apart): pack_left packs them,
///   or (AVX-512 VNNI, a UINT8 input, Cin/G a multiple of 4) reads them in
///   place;
/// - any other convolution copies the input once per image and group into
///   the zero-point-padded NHWC buffer of a' bytes (copy_nhwc), then per
///   block writes each pixel's patch row from its segments (kW * C bytes
///   per filter row when dx = 1), each zero-padded to whole k groups as the
///   filter's K is (a' = 0 against b' = 0 adds nothing, to the row sums
///   neither), and packs them (AVX-512 VNNI: in place).
/// Output rows are pixels: NHWC outputs are stored by the epilogue in place,
/// others through a [pixel][channel] scratch (store_pixels).
/// `part`: the groups and output channels to compute (c0 a multiple of 16).
template <class TIn, class TFilter, class TOut>
void run_nhwc_vector(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const NhwcFilter& f, simd::Isa isa,
                     bool directml, const Part& part = {}) {
    const auto& X = op.InputTensor;
    const auto& Out = op.OutputTensor;
    const std::uint32_t batch = X.sizes[0], G = op.GroupCount, C = op.FilterTensor.sizes[1];
    const std::uint32_t kH = op.FilterTensor.sizes[2], kW = op.FilterTensor.sizes[3];
    const std::uint32_t Ng = op.FilterTensor.sizes[0] / G, oW = Out.sizes[3];
    const std::uint32_t sy = op.Strides[0], sx = op.Strides[1];
    const std::uint32_t pt = op.StartPadding[0], pl = op.StartPadding[1], pb = op.EndPadding[0], pr = op.EndPadding[1];
    const std::size_t Hp = std::size_t{X.sizes[2]} + pt + pb, Wp = std::size_t{X.sizes[3]} + pl + pr;
    const std::size_t P = std::size_t{Out.sizes[2]} * oW;
    const std::array<std::uint32_t, 4> zero{0, 0, 0, 0};
    const TIn x_zp = op.InputZeroPointTensor ? (*op.InputZeroPointTensor)[zero] : TIn{0};
    thread_local NhwcVectorWorkspace w;
    const std::size_t unit = segment_unit(isa);
    const std::vector<Segment> segs = segments(C, kH, kW, op.Dilations[0], op.Dilations[1], Wp, unit);
    const std::size_t Kp = patch_bytes(segs, unit);
    // The pointwise form reads the input's pixels as rows (flat pixels, channels contiguous).
    std::uint64_t in_pixel = 0;
    const bool pointwise = kH == 1 && kW == 1 && sy == 1 && sx == 1 && pt == 0 && pl == 0 && pb == 0 && pr == 0 &&
                           X.strides[1] == 1 && flat_stride(X.sizes[2], X.sizes[3], X.strides[2], X.strides[3], in_pixel);
#if QDML_X86
    // AVX-512 VNNI reads whole blocks of 8 pixels of an output row in place
    // (the row's last block overlapping the one before it when oW % 8 != 0:
    // the pixels both compute get the same bytes twice).
    bool in_place = !pointwise && isa == simd::Isa::Avx512Vnni && oW >= 8;
    for (const Segment& sg : segs) in_place = in_place && sg.bytes % 4 == 0;
    std::vector<gemm::avx512vnni::KRun> runs;
    for (std::size_t i = 0; in_place && i < segs.size(); ++i) runs.push_back({segs[i].offset, segs[i].k / 4, segs[i].steps});
#else
    constexpr bool in_place = false;
#endif
    if (!pointwise) {
        w.padded.resize(Hp * Wp * C + kPatchSlack);  // (the patch rows' copies read up to 15 bytes past a segment)
        fill_nhwc_border(w.padded.data(), Hp, Wp, C, pt, pb, pl, pr, gemm::as_left(x_zp));
    }
    const std::size_t block = nhwc_block_pixels(Kp);
    if (!pointwise && !in_place) w.patches.resize(block * Kp + kPatchSlack);
    const std::size_t rows_M = in_place ? P : block;  // the rows whose constants the epilogue holds
    // The epilogue: the input as the left operand (per tensor), the filter as the right one (per column).
    gemm::RequantSpec& s = w.spec;
    gemm::Epilogue& e = w.epilogue;
    per_tensor_spec(op, x_zp, directml, s);
    std::uint64_t pixel_stride = 0;
    const bool direct = Out.strides[1] == 1 && flat_stride(Out.sizes[2], oW, Out.strides[2], Out.strides[3], pixel_stride);
    if (!direct) w.scratch.resize(out_bytes<TOut>(P * Ng));
    gemm::PackedLeft& pa = w.left;
    const std::uint32_t g0 = part.g0, g1 = std::min(part.g1, G), c0 = part.c0, c1 = std::min(part.c1, Ng);
    for (std::uint32_t group = g0; group < g1; ++group) {
        const gemm::PackedRight& b = f.right[group];
        const std::size_t p0 = c0 / gemm::kPanel, p1 = std::min(b.panels, (std::size_t{c1} + gemm::kPanel - 1) / gemm::kPanel);
        group_columns(f, group, Ng, b, s, e);
        const gemm::LeftPacking how{e.needs_row_sums(), true};
        // The row constants of a whole block (the row sums, when they enter, per block below).
        pa.M = rows_M;
        pa.row_sum.resize_zero(rows_M);
        gemm::prepare_rows(s, pa, e);
        for (std::uint32_t n = 0; n < batch; ++n) {
            if (!pointwise) copy_nhwc(X, n, group * C, C, Wp, pt, pl, w.padded.data());
            std::uint8_t* out = direct ? reinterpret_cast<std::uint8_t*>(&Out[{n, group * Ng, 0, 0}]) : w.scratch.data();
            const std::uint64_t out_rs = direct ? pixel_stride : Ng;
#if QDML_X86
            if (in_place) {
                if (e.needs_row_sums()) {  // ra per pixel from the padded copy
                    patch_sums(op, w.padded.data(), Wp, w.pixel_sum, pa.row_sum.data());
                    gemm::update_row_sums(pa, e);
                }
                e.out = out;
                e.out_rs = out_rs;
                e.out_cs = 1;
                const std::size_t lda = std::size_t{sx} * C;
                for (std::size_t oy = 0; oy < Out.sizes[2]; ++oy)
                    for (std::size_t x = 0; x < oW; x += 8) {
                        const std::size_t ox0 = std::min<std::size_t>(x, oW - 8), m0 = oy * oW + ox0;
                        const std::uint8_t* a = w.padded.data() + (oy * sy * Wp + ox0 * sx) * C;
                        for (std::size_t p = p0; p < p1;) {
                            const std::size_t left = p1 - p, np = left == 4 ? 2 : std::min<std::size_t>(3, left);
                            if (np == 3)
                                gemm::avx512vnni::tile8_runs<3>(a, lda, runs.data(), runs.size(), b, e, m0, p);
                            else if (np == 2)
                                gemm::avx512vnni::tile8_runs<2>(a, lda, runs.data(), runs.size(), b, e, m0, p);
                            else
                                gemm::avx512vnni::tile8_runs<1>(a, lda, runs.data(), runs.size(), b, e, m0, p);
                            p += np;
                        }
                    }
                if (!direct) store_pixels(w.scratch.data(), Ng, Out, n, group * Ng, c0, c1);
                continue;
            }
#endif
            for (std::size_t m0 = 0; m0 < P; m0 += block) {
                const std::size_t rows = std::min(block, P - m0);
                if (pointwise) {
                    const TIn* a = &X[{n, group * C, 0, 0}] + m0 * in_pixel;
                    gemm::pack_left(gemm::Matrix<TIn>{a, in_pixel, 1}, rows, C, isa, pa, how);
                } else {
                    std::uint8_t* row = w.patches.data();
                    for (std::size_t m = m0; m < m0 + rows; ++m, row += Kp) {
                        const std::size_t oy = m / oW, ox = m - oy * oW;
                        const std::uint8_t* base = w.padded.data() + (oy * sy * Wp + ox * sx) * C;
                        for (const Segment& sg : segs) copy_segment(row + sg.k, base + sg.offset, sg.bytes);
                    }
                    gemm::pack_left(gemm::Matrix<std::uint8_t>{w.patches.data(), Kp, 1}, rows, Kp, isa, pa, how);
                }
                gemm::update_row_sums(pa, e);
                e.out = out + out_bytes<TOut>(m0 * out_rs);
                e.out_rs = out_rs;
                e.out_cs = 1;
                gemm::multiply_range<TOut>(pa, b, e, 0, rows, p0, p1, gemm::block_panels(b));
            }
            if (!direct) store_pixels(w.scratch.data(), Ng, Out, n, group * Ng, c0, c1);
        }
    }
}

}  // namespace qdml::simd::conv
