// qdml/simd/conv/nhwc.hpp - the convolution's implicit GEMM with the INPUT as
// the left operand (oneDNN's brgemm form), on the AMX path:
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
// 16x16 byte blocks.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "qdml/operators/quantized_linear_convolution.hpp"
#include "qdml/simd/conv/transpose.hpp"
#include "qdml/simd/gemm/gemm.hpp"

namespace qdml::simd::conv {

/// A contiguous run of a pixel's patch in the padded NHWC buffer: `bytes`
/// bytes from `offset` (bytes after the pixel's first tap), read in `steps`
/// 64-byte K steps; (ky, kx) is its first tap.
struct Segment {
    std::uint32_t ky = 0, kx = 0;
    std::size_t bytes = 0, steps = 0, offset = 0;
};

/// The segments of a patch: one per filter row when dx == 1 (kW * C
/// contiguous bytes), else one per tap (C bytes). Offsets need the padded
/// row length Wp (pixels).
inline std::vector<Segment> segments(std::uint32_t C, std::uint32_t kH, std::uint32_t kW, std::uint32_t dy,
                                     std::uint32_t dx, std::size_t Wp) {
    std::vector<Segment> s;
    const bool rows = dx == 1;
    const std::size_t bytes = std::size_t{C} * (rows ? kW : 1);
    for (std::uint32_t ky = 0; ky < kH; ++ky)
        for (std::uint32_t kx = 0; kx < (rows ? 1u : kW); ++kx)
            s.push_back({ky, kx, bytes, (bytes + 63) / 64, (std::size_t{ky} * dy * Wp + std::size_t{kx} * dx) * C});
    return s;
}

/// The filter of every group as the right operand of the NHWC form: K laid
/// out as segments() (64-byte steps, zero rows past each segment), b' bytes;
/// PackedRight::K is the real K (taps x C), which the column term needs.
template <class TIn, class TFilter, class TOut>
void pack_filter_right(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, gemm::Isa isa,
                       std::vector<gemm::PackedRight>& right) {
    const std::uint32_t C = op.FilterTensor.sizes[1], kH = op.FilterTensor.sizes[2], kW = op.FilterTensor.sizes[3];
    const std::uint32_t groups = op.GroupCount, Ng = op.FilterTensor.sizes[0] / groups;
    const std::vector<Segment> segs = segments(C, kH, kW, op.Dilations[0], op.Dilations[1], 0);
    std::size_t Kp = 0;
    for (const Segment& s : segs) Kp += s.steps * 64;
    right.resize(groups);
    // Row k of B: the filter element at offset `at[k]` of each output channel (none in a step's padding).
    const auto& F = op.FilterTensor;
    constexpr std::uint64_t kNone = ~std::uint64_t{0};
    std::vector<std::uint64_t> at(Kp, kNone);
    std::size_t k0 = 0;
    for (const Segment& s : segs) {
        for (std::size_t t = 0; t < s.bytes; ++t)
            at[k0 + t] = F.offset({0, static_cast<std::uint32_t>(t % C), s.ky, s.kx + static_cast<std::uint32_t>(t / C)});
        k0 += s.steps * 64;
    }
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
        gemm::pack_right(gemm::Matrix<std::int8_t>{b.data(), Ng, 1}, Kp, Ng, isa, right[group]);
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

/// Whether the NHWC form computes `op` on `isa`: the AMX path, every
/// convolution but the unpadded stride-1 1x1 on channel planes (a plain GEMM
/// on the tensors, conv::run), while the padded copy stays moderate.
template <class TIn, class TFilter, class TOut>
bool use_nhwc(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, gemm::Isa isa) noexcept {
    if (isa != gemm::Isa::Amx) return false;
    const auto& fs = op.FilterTensor.sizes;
    const bool pointwise = fs[2] == 1 && fs[3] == 1 && op.Strides[0] == 1 && op.Strides[1] == 1 &&
                           op.StartPadding[0] == 0 && op.StartPadding[1] == 0 && op.EndPadding[0] == 0 &&
                           op.EndPadding[1] == 0;
    if (pointwise && op.InputTensor.strides[3] == 1) return false;
    constexpr std::uint64_t kMax = std::uint64_t{1} << 26;
    const std::uint64_t Hp = std::uint64_t{op.InputTensor.sizes[2]} + op.StartPadding[0] + op.EndPadding[0];
    const std::uint64_t Wp = std::uint64_t{op.InputTensor.sizes[3]} + op.StartPadding[1] + op.EndPadding[1];
    const std::uint64_t C = fs[1], Ng = fs[0] / op.GroupCount;
    const std::uint64_t P = std::uint64_t{op.OutputTensor.sizes[2]} * op.OutputTensor.sizes[3];
    return Hp <= kMax && Wp <= kMax && Hp * Wp <= kMax / C && P <= kMax / Ng && C * fs[3] <= kMax &&
           std::uint64_t{op.Strides[1]} * C <= kMax;
}

template <class TIn, class TFilter, class TOut>
void prepare_nhwc_filter(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, gemm::Isa isa, NhwcFilter& f) {
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
    std::array<std::uint32_t, 7> rows_key{};
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

#if QDML_GEMM_X86
/// Computes the convolution in the NHWC form (use_nhwc(op, Amx)), same bits
/// as the reference: per image and group, the padded copy, then blocks of up
/// to 32 pixels of one output row against pairs of 16-channel panels.
template <class TIn, class TFilter, class TOut>
void run_nhwc(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const NhwcFilter& f) {
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
    s.a_zp.assign(1, std::int32_t{x_zp} + gemm::left_shift<TIn>());
    s.a_scale.assign(1, op.InputScaleTensor[zero]);
    s.out_zp.assign(1, op.OutputZeroPointTensor ? std::int32_t{(*op.OutputZeroPointTensor)[zero]} : 0);
    s.out_scale.assign(1, op.OutputScaleTensor[zero]);
    s.out_lo = std::numeric_limits<TOut>::min();
    s.out_hi = std::numeric_limits<TOut>::max();
    gemm::PackedLeft& sums = w.sums;
    sums.M = P;
    sums.row_sum.resize(P);
    // Without patch sums every pixel's row constants are the same, and they
    // depend only on these values: the last call's rows serve while they repeat.
    const std::array<std::uint32_t, 7> rows_key{static_cast<std::uint32_t>(P), bits(s.a_zp[0]), bits(s.out_zp[0]),
                                                bits(s.out_lo), bits(s.out_hi), bits(s.a_scale[0]), bits(s.out_scale[0])};
    const bool rows_kept = !f.row_sums && w.rows_valid && w.rows_key == rows_key;
    w.rows_valid = false;
    if (!f.row_sums && !rows_kept) std::memset(sums.row_sum.data(), 0, P * 4);
    // Output: NHWC rows in place, else a [pixel][channel] scratch copied out.
    std::uint64_t pixel_stride = 0;
    const bool direct = Out.strides[1] == 1 && flat_stride(oH, oW, Out.strides[2], Out.strides[3], pixel_stride);
    if (!direct) w.scratch.resize(P * Ng);
    const std::size_t kx_rows = 32, a_stride[2] = {std::size_t{sx} * C, std::size_t{sx} * C};
    const gemm::Session session(gemm::Isa::Amx);
    gemm::amx::Pending pd;
    for (std::uint32_t group = 0; group < G; ++group) {
        const gemm::PackedRight& b = f.right[group];
        s.b_zp.assign(f.zp.begin() + std::size_t{group} * Ng, f.zp.begin() + std::size_t{group + 1} * Ng);
        s.b_scale.assign(f.scale.begin() + std::size_t{group} * Ng, f.scale.begin() + std::size_t{group + 1} * Ng);
        gemm::prepare_columns(s, b, e);
        for (std::uint32_t j = 0; j < Ng; ++j) e.col_bias[j] += f.bias[std::size_t{group} * Ng + j];
        if (!f.row_sums && !rows_kept && group == 0) gemm::prepare_rows(s, sums, e);  // the same for every group
        for (std::uint32_t n = 0; n < batch; ++n) {
            copy_nhwc(X, n, group * C, C, Wp, pt, pl, buf);
            if (f.row_sums) {  // ra per pixel: the sum of its patch's a' bytes
                w.pixel_sum.resize(Hp * Wp);
                for (std::size_t q = 0; q < Hp * Wp; ++q) {
                    std::uint32_t t = 0;
                    for (std::size_t c = 0; c < C; ++c) t += buf[q * C + c];
                    w.pixel_sum[q] = t;
                }
                const std::uint32_t kH = op.FilterTensor.sizes[2], kW = op.FilterTensor.sizes[3];
                for (std::uint32_t oy = 0; oy < oH; ++oy)
                    for (std::uint32_t ox = 0; ox < oW; ++ox) {
                        std::uint32_t t = 0;
                        for (std::uint32_t ky = 0; ky < kH; ++ky)
                            for (std::uint32_t kx = 0; kx < kW; ++kx)
                                t += w.pixel_sum[(std::size_t{oy} * sy + std::size_t{ky} * op.Dilations[0]) * Wp +
                                                 std::size_t{ox} * sx + std::size_t{kx} * op.Dilations[1]];
                        sums.row_sum[std::size_t{oy} * oW + ox] = t;
                    }
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
                    for (std::size_t p = 0; p < b.panels; p += 2) {
                        const bool two = b.panels - p >= 2;
                        if (rows > 16)
                            two ? gemm::amx::tile_steps<2, 2>(a_of, a_stride, k, b, e, m0, rows, p, pd)
                                : gemm::amx::tile_steps<2, 1>(a_of, a_stride, k, b, e, m0, rows, p, pd);
                        else
                            two ? gemm::amx::tile_steps<1, 2>(a_of, a_stride, k, b, e, m0, rows, p, pd)
                                : gemm::amx::tile_steps<1, 1>(a_of, a_stride, k, b, e, m0, rows, p, pd);
                    }
                }
            gemm::amx::drain(pd, pd.rows);
            if (direct) continue;
            TOut* image = &Out[{n, group * Ng, 0, 0}];
            const std::uint64_t s1 = Out.strides[1], s2 = Out.strides[2], s3 = Out.strides[3];
            if (s3 == 1 && (oH == 1 || s2 == oW)) {  // channel planes (NCHW): a transposition
                transpose_bytes(w.scratch.data(), Ng, reinterpret_cast<std::uint8_t*>(image), s1, P, Ng, 0);
            } else {
                for (std::uint32_t oy = 0; oy < oH; ++oy)
                    for (std::uint32_t ox = 0; ox < oW; ++ox)
                        for (std::uint32_t c = 0; c < Ng; ++c)
                            std::memcpy(image + c * s1 + oy * s2 + ox * s3,
                                        w.scratch.data() + (std::size_t{oy} * oW + ox) * Ng + c, 1);
            }
        }
    }
    w.rows_valid = !f.row_sums;
    w.rows_key = rows_key;
}
#endif

}  // namespace qdml::simd::conv
