// qdml/simd/quantized_linear_convolution.hpp - QUANTIZED_LINEAR_CONVOLUTION on
// the int8 GEMM engine (simd/gemm/), bit-identical to
// qdml::reference::quantized_linear_convolution (docs/semantics.md section 6):
//   acc = Bias[oc] + sum_{ic in group, ky, kx} (X[..] - XZP) * (F[oc][ic'][ky][kx] - FZP[oc])   (int32, wraps)
//   Output = Q(fp32(acc) * (fp32(InputScale * FilterScale[oc]) / OutputScale), OutputZP)
//
// As a GEMM per image and group (NCHW is the engine's natural form):
// - left operand: the group's filter rows, M = Cout/G output channels by
//   K = Cin/G * kH * kW taps, with the per-row filter zero point and scale;
//   the int32 bias is folded into each row's accumulator term (mod 2^32);
// - right operand: the input patches, K taps by the output pixels, never
//   materialised whole: one column block (about 512 KiB of panels) at a
//   time is packed by conv::pack_rows (conv/patches.hpp); stride 1 reads
//   each tap row in place from a zero-point-padded copy of the input (see
//   run()), other strides gather it; taps in the padding hold the input
//   zero point, so they contribute exactly 0 to (x - XZP) * (f - FZP);
// - output: rows = output channels, columns = pixels, through the output's
//   strides (or a scratch copied out, see run()).
// Depthwise convolutions (GroupCount == Cin) take the depthwise path instead;
// the NHWC form (conv/nhwc.hpp: the input as the left operand, the filter as
// the right one) computes the others where use_nhwc() says it is faster.
// mult = fp32(FilterScale[oc] * InputScale) / OutputScale: the reference's
// fp32(InputScale * FilterScale[oc]) (binary32 multiplication commutes).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "qdml/core/fp_env.hpp"
#include "qdml/operators/quantized_linear_convolution.hpp"
#include "qdml/simd/conv/depthwise.hpp"
#include "qdml/simd/conv/nhwc.hpp"
#include "qdml/simd/conv/path.hpp"
#include "qdml/simd/conv/patches.hpp"
#include "qdml/simd/conv/tasks.hpp"
#include "qdml/simd/gemm/gemm.hpp"
#include "qdml/simd/options.hpp"
#include "qdml/simd/tuning.hpp"

namespace qdml::simd {

namespace conv {

/// The convolution's sizes, as the GEMMs see them.
struct Geometry {
    std::uint32_t batch = 0, groups = 1, cin_g = 0, cout_g = 0;
    std::uint32_t H = 0, W = 0, oH = 0, oW = 0, kH = 0, kW = 0;
    std::uint32_t sy = 1, sx = 1, dy = 1, dx = 1, pt = 0, pl = 0;
    std::size_t K() const noexcept { return std::size_t{cin_g} * kH * kW; }
    std::size_t pixels() const noexcept { return std::size_t{oH} * oW; }
    /// A 1x1, stride-1, unpadded convolution: tap rows are input planes.
    bool pointwise() const noexcept { return kH == 1 && kW == 1 && sy == 1 && sx == 1 && pt == 0 && pl == 0; }
};

template <class TIn, class TFilter, class TOut>
Geometry geometry(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op) noexcept {
    Geometry g;
    g.batch = op.InputTensor.sizes[0];
    g.groups = op.GroupCount;
    g.cin_g = op.FilterTensor.sizes[1];
    g.cout_g = op.FilterTensor.sizes[0] / op.GroupCount;
    g.H = op.InputTensor.sizes[2];
    g.W = op.InputTensor.sizes[3];
    g.oH = op.OutputTensor.sizes[2];
    g.oW = op.OutputTensor.sizes[3];
    g.kH = op.FilterTensor.sizes[2];
    g.kW = op.FilterTensor.sizes[3];
    g.sy = op.Strides[0];
    g.sx = op.Strides[1];
    g.dy = op.Dilations[0];
    g.dx = op.Dilations[1];
    g.pt = op.StartPadding[0];
    g.pl = op.StartPadding[1];
    return g;
}

/// The filter side, fixed for a call (or, prepared, for the operator's
/// life): per group the packed filter rows with their row sums, the filter's
/// zero points (shifted as pack.hpp says) and scales, and the bias, per
/// output channel. Reads FilterTensor, FilterScaleTensor,
/// FilterZeroPointTensor and BiasTensor, nothing else.
struct Filter {
    simd::Isa isa = simd::Isa::Generic;
    std::vector<gemm::PackedLeft> left;  ///< per group: Cout/G rows by K taps
    std::vector<std::int32_t> zp;        ///< FZP' per output channel
    std::vector<float> scale;            ///< FilterScale per output channel
    std::vector<std::uint32_t> bias;     ///< Bias per output channel (0 without one)
    ConvForm form = ConvForm::GemmNchw;  ///< select_form(): AmxNhwc, GemmNhwc (from `input_left`) or GemmNchw
    NhwcFilter input_left;               ///< the filter as the NHWC forms' right operand
    bool directml = false;               ///< the DirectML profile's requantize (GemmOptions::fidelity)
};

/// Packs the filter for `isa`.
template <class TIn, class TFilter, class TOut>
void prepare_filter(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, simd::Isa isa, Filter& f) {
    f.isa = isa;
    f.form = select_form(op, isa);
    if (f.form != ConvForm::GemmNchw) return prepare_nhwc_filter(op, isa, f.input_left);
    const Geometry g = geometry(op);
    const std::size_t K = g.K();
    const std::uint32_t cout = g.groups * g.cout_g;
    f.left.resize(g.groups);
    f.zp.assign(cout, gemm::left_shift<TFilter>());
    f.scale.resize(cout);
    f.bias.assign(cout, 0);
    for (std::uint32_t oc = 0; oc < cout; ++oc) {
        const std::array<std::uint32_t, 4> at{0, oc, 0, 0};
        if (op.FilterZeroPointTensor) f.zp[oc] += (*op.FilterZeroPointTensor)[at];
        f.scale[oc] = op.FilterScaleTensor[at];
        if (op.BiasTensor) f.bias[oc] = static_cast<std::uint32_t>((*op.BiasTensor)[at]);
    }
    std::vector<TFilter> rows(std::size_t{g.cout_g} * K);  // one group's filter as packed [Cout/G][K]
    for (std::uint32_t group = 0; group < g.groups; ++group) {
        TFilter* dst = rows.data();
        for (std::uint32_t m = 0; m < g.cout_g; ++m)
            for (std::uint32_t ic = 0; ic < g.cin_g; ++ic)
                for (std::uint32_t ky = 0; ky < g.kH; ++ky)
                    for (std::uint32_t kx = 0; kx < g.kW; ++kx) *dst++ = op.FilterTensor[{group * g.cout_g + m, ic, ky, kx}];
        gemm::pack_left(gemm::Matrix<TFilter>{rows.data(), K, 1}, g.cout_g, K, isa, f.left[group]);
    }
}

/// Group `group`'s requantize spec (filter per row, input per tensor as the
/// right operand's, output per tensor) and its epilogue row constants, the
/// bias folded into each row's accumulator term (mod 2^32).
template <class TIn, class TFilter, class TOut>
void prepare_group(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const Filter& f, std::uint32_t group,
                   gemm::RequantSpec& s, gemm::Epilogue& e) {
    const gemm::PackedLeft& pa = f.left[group];
    const std::size_t m0 = std::size_t{group} * pa.M;
    const std::array<std::uint32_t, 4> zero{0, 0, 0, 0};
    s.a_zp.assign(f.zp.begin() + m0, f.zp.begin() + m0 + pa.M);
    s.a_scale.assign(f.scale.begin() + m0, f.scale.begin() + m0 + pa.M);
    s.b_zp.assign(1, (op.InputZeroPointTensor ? std::int32_t{(*op.InputZeroPointTensor)[zero]} : 0) +
                         gemm::right_shift<TIn>());
    s.b_scale.assign(1, op.InputScaleTensor[zero]);
    s.out_zp.assign(1, op.OutputZeroPointTensor ? std::int32_t{(*op.OutputZeroPointTensor)[zero]} : 0);
    s.out_scale.assign(1, op.OutputScaleTensor[zero]);
    out_spec<TOut>(s);
    s.directml = f.directml;  // ((acc * FilterScale[oc]) * InputScale) / OutputScale: the row's scale first
    s.col_scale_first = false;
    // The row constants need the epilogue's mode and flags, which the spec alone fixes.
    gemm::prepare_columns(s, gemm::PackedRight{}, e);
    gemm::prepare_rows(s, pa, e);
    for (std::size_t m = 0; m < pa.M; ++m) e.rows[m].bias += f.bias[m0 + m];
}

/// Writes tap row (ic, ky, kx) of image `n`'s patch matrix for output pixels
/// [c0, c1) (flat index oy * oW + ox) to dst: input elements, or the input
/// zero point where the tap falls into the padding.
template <class TIn>
void patch_row(const TensorView<const TIn, 4>& X, const Geometry& g, TIn x_zp, std::uint32_t n, std::uint32_t ic,
               std::uint32_t ky, std::uint32_t kx, std::size_t c0, std::size_t c1, TIn* dst) noexcept {
    const TIn* plane = X.data + n * X.strides[0] + ic * X.strides[1];
    const std::uint64_t xs2 = X.strides[2], xs3 = X.strides[3];
    // Output columns whose input column is inside [0, W): ox in [ox_lo, ox_hi).
    const std::int64_t off = std::int64_t{kx} * g.dx - g.pl;  // ix = ox * sx + off
    const std::int64_t lo = off >= 0 ? 0 : (-off + g.sx - 1) / g.sx;
    const std::int64_t hi = off >= std::int64_t{g.W} ? 0 : (std::int64_t{g.W} - 1 - off) / g.sx + 1;
    std::size_t c = c0;
    while (c < c1) {
        const std::uint32_t oy = static_cast<std::uint32_t>(c / g.oW);
        const std::uint32_t ox0 = static_cast<std::uint32_t>(c - std::size_t{oy} * g.oW);
        const std::uint32_t ox1 = static_cast<std::uint32_t>(std::min<std::size_t>(g.oW, ox0 + (c1 - c)));
        const std::int64_t iy = std::int64_t{oy} * g.sy + std::int64_t{ky} * g.dy - g.pt;
        TIn* out = dst + (c - c0);
        if (iy < 0 || iy >= g.H || lo >= hi) {
            std::fill(out, out + (ox1 - ox0), x_zp);
        } else {
            const std::uint32_t a = static_cast<std::uint32_t>(std::clamp<std::int64_t>(lo, ox0, ox1));
            const std::uint32_t b = static_cast<std::uint32_t>(std::clamp<std::int64_t>(hi, a, ox1));
            std::fill(out, out + (a - ox0), x_zp);
            if (b > a) {
                const TIn* src = plane + static_cast<std::uint64_t>(iy) * xs2 +
                                 static_cast<std::uint64_t>(std::int64_t{a} * g.sx + off) * xs3;
                const std::uint64_t step = g.sx * xs3;
                TIn* o = out + (a - ox0);
                if (step == 1)
                    std::memcpy(o, src, b - a);
                else
                    for (std::uint32_t j = 0; j < b - a; ++j) o[j] = src[j * step];
            }
            std::fill(out + (b - ox0), out + (ox1 - ox0), x_zp);
        }
        c += ox1 - ox0;
    }
}

/// Buffers of run(), kept per thread across calls.
template <class TIn>
struct Workspace {
    gemm::PackedRight right;
    gemm::RequantSpec spec;
    gemm::Epilogue epilogue;
    std::vector<TIn> padded;
    std::vector<std::uint8_t> scratch;
};

/// The padding of Cin/G planes of Hp x Wp (plane elements apart) and the 64
/// elements after them: the input zero point (copy_padded fills the rest).
template <class TIn>
void fill_border(const Geometry& g, const std::array<std::uint32_t, 2>& end, std::size_t Wp, std::size_t plane,
                 TIn x_zp, TIn* dst) noexcept {
    const std::size_t top = std::size_t{g.pt} * Wp, bottom = std::size_t{end[0]} * Wp;
    for (std::uint32_t c = 0; c < g.cin_g; ++c) {
        TIn* p = dst + c * plane;
        std::fill(p, p + top, x_zp);
        std::fill(p + plane - bottom, p + plane, x_zp);
        for (std::uint32_t y = 0; y < g.H; ++y) {
            TIn* row = p + top + std::size_t{y} * Wp;
            std::fill(row, row + g.pl, x_zp);
            std::fill(row + g.pl + g.W, row + Wp, x_zp);
        }
    }
    std::fill(dst + std::size_t{g.cin_g} * plane, dst + std::size_t{g.cin_g} * plane + 64, x_zp);
}

/// Image n's input channels [ic0, ic0 + Cin/G) into `dst` as planes of
/// Hp x Wp (plane elements apart) whose border (the padding) fill_border
/// filled: rows are copied into place (any strides; channel-
/// inner memory such as NHWC is read in its own order).
template <class TIn>
void copy_padded(const TensorView<const TIn, 4>& X, const Geometry& g, std::uint32_t n, std::uint32_t ic0,
                 std::size_t Wp, std::size_t plane, TIn* dst) noexcept {
    const std::uint64_t s1 = X.strides[1], s2 = X.strides[2], s3 = X.strides[3];
    const TIn* image = &X[{n, ic0, 0, 0}];
    TIn* origin = dst + std::size_t{g.pt} * Wp + g.pl;
    if (s1 < s3 && s1 < s2) {  // channels inner (NHWC): read each pixel's channels in order
        for (std::uint32_t y = 0; y < g.H; ++y)
            for (std::uint32_t x = 0; x < g.W; ++x) {
                const TIn* src = image + y * s2 + x * s3;
                TIn* d = origin + std::size_t{y} * Wp + x;
                for (std::uint32_t c = 0; c < g.cin_g; ++c) d[c * plane] = src[c * s1];
            }
        return;
    }
    for (std::uint32_t c = 0; c < g.cin_g; ++c)
        for (std::uint32_t y = 0; y < g.H; ++y) {
            const TIn* src = image + c * s1 + y * s2;
            TIn* d = origin + c * plane + std::size_t{y} * Wp;
            if (s3 == 1)
                std::memcpy(d, src, g.W);
            else
                for (std::uint32_t x = 0; x < g.W; ++x) d[x] = src[x * s3];
        }
}

/// Rows [m0, m1) of the scratch output of the stride-1 form (Cout/G rows of
/// `wide` TOut elements, output row oy at oy * Wp) into image n's output
/// channels oc0 + m0.. (any strides).
template <class TOut>
void copy_out(const std::uint8_t* scratch, std::size_t wide, std::size_t Wp, const Geometry& g,
              const TensorView<TOut, 4>& Out, std::uint32_t n, std::uint32_t oc0, std::uint32_t m0,
              std::uint32_t m1) noexcept {
    constexpr std::size_t E = sizeof(TOut);
    const std::uint64_t s1 = Out.strides[1], s2 = Out.strides[2], s3 = Out.strides[3];
    TOut* image = &Out[{n, oc0, 0, 0}];
    if (s1 < s3 && s1 < s2) {  // channels inner (NHWC): write each pixel's channels in order
        for (std::uint32_t y = 0; y < g.oH; ++y)
            for (std::uint32_t x = 0; x < g.oW; ++x) {
                const std::uint8_t* src = scratch + (std::size_t{y} * Wp + x) * E;
                TOut* d = image + y * s2 + x * s3;
                for (std::uint32_t m = m0; m < m1; ++m) std::memcpy(d + m * s1, src + m * wide * E, E);
            }
        return;
    }
    for (std::uint32_t m = m0; m < m1; ++m)
        for (std::uint32_t y = 0; y < g.oH; ++y) {
            const std::uint8_t* src = scratch + (m * wide + std::size_t{y} * Wp) * E;
            TOut* d = image + m * s1 + y * s2;
            if (s3 == 1)
                std::memcpy(d, src, g.oW * E);
            else
                for (std::uint32_t x = 0; x < g.oW; ++x) std::memcpy(d + x * s3, src + x * E, E);
        }
}

/// Columns per block: about 512 KiB of packed panels (L2), whole panels.
inline std::size_t block_columns(std::size_t K, simd::Isa isa) noexcept {
    const std::size_t panel_bytes = std::max<std::size_t>(gemm::k_groups(K, isa) * 64, 64);
    return std::max<std::size_t>(1, kConvBlockBytes / panel_bytes) * gemm::kPanel;
}

/// Computes the convolution with a prepared filter side (reads the filter's
/// members only through `f`), per group and image:
/// - stride 1 (both dimensions): every tap row is one contiguous run of the
///   input plane padded with the input zero point (a copy per image and
///   group; the input itself when unpadded and contiguous), indexed by "wide"
///   pixels oy * Wp + ox with Wp = W + pl + pr: the GEMM computes Wp - oW
///   extra columns per output row (nothing where the kernel is 1 wide and
///   unpadded), written to a scratch output and dropped when the rows are
///   copied out; the packer reads the rows in place;
/// - other strides: tap rows gathered block by block (patch_row).
/// `part`: the groups and output channels to compute (a task's, conv/tasks.hpp).
template <class TIn, class TFilter, class TOut>
void run(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const Filter& f, const Part& part = {}) {
    switch (f.form) {
        case ConvForm::AmxNhwc:
#if QDML_X86
            return run_nhwc(op, f.input_left, f.directml, part);
#else
            [[fallthrough]];  // (never selected off x86)
#endif
        case ConvForm::GemmNhwc: return run_nhwc_vector(op, f.input_left, f.isa, f.directml, part);
        case ConvForm::Depthwise:  // (prepare_filter never selects it: quantized_linear_convolution dispatches it first)
        case ConvForm::GemmNchw: break;
    }
    const Geometry g = geometry(op);
    const std::size_t K = g.K(), P = g.pixels(), taps = std::size_t{g.kH} * g.kW;
    const auto& X = op.InputTensor;
    const auto& Out = op.OutputTensor;
    const TIn x_zp = op.InputZeroPointTensor ? (*op.InputZeroPointTensor)[{0, 0, 0, 0}] : TIn{0};
    std::uint64_t out_cs = 0;
    const bool flat_out = flat_stride(g.oH, g.oW, Out.strides[2], Out.strides[3], out_cs);
    const std::size_t block = block_columns(K, f.isa);
    // The part's groups and rows of the filter (whole kernel row blocks).
    const std::uint32_t g0 = part.g0, g1 = std::min(part.g1, g.groups);
    const std::uint32_t m0 = part.c0, m1 = std::min(part.c1, g.cout_g);
    // Buffers reused across calls on this thread (no allocation, no page faults per call).
    thread_local Workspace<TIn> w;
    gemm::PackedRight& pb = w.right;
    gemm::RequantSpec& s = w.spec;
    gemm::Epilogue& e = w.epilogue;
    // One block of GEMM columns [c0, c1): pack the rows `row` gives, run the engine into `out`.
    const auto multiply_block = [&](const gemm::PackedLeft& pa, std::size_t c0, std::size_t c1, std::uint8_t* out,
                                    std::uint64_t out_rs, std::uint64_t cs, auto&& row) {
        pack_rows<TIn>(K, c1 - c0, f.isa, pb, [&](std::size_t k, TIn* buffer) { return row(k, buffer); });
        gemm::prepare_columns(s, pb, e);  // the block's columns; the rows stay
        e.out = out;
        e.out_rs = out_rs;
        e.out_cs = cs;
        gemm::multiply_range<TOut>(pa, pb, e, m0, m1, 0, pb.panels, gemm::block_panels(pb));
    };
    const std::uint32_t pr = op.EndPadding[1], pb_ = op.EndPadding[0];
    const std::size_t Wp = std::size_t{g.W} + g.pl + pr, Hp = std::size_t{g.H} + g.pt + pb_;
    const std::size_t plane = Hp * Wp, wide = (g.oH - 1) * Wp + g.oW;  // the stride-1 form's GEMM columns
    // The stride-1 form while its copies stay moderate (huge paddings or dilations take the gather).
    constexpr std::size_t kMaxCopy = kMaxCopyElements;
    const bool moderate = Hp <= kMaxCopy && Wp <= kMaxCopy && plane <= kMaxCopy / g.cin_g &&  // no overflow
                          wide <= kMaxCopy / g.cout_g;
    if (g.sy == 1 && g.sx == 1 && moderate) {
        // The input planes themselves when unpadded and contiguous, else a padded copy.
        const bool in_place = g.pt == 0 && g.pl == 0 && pr == 0 && pb_ == 0 && X.strides[3] == 1 &&
                              (g.H == 1 || X.strides[2] == g.W);
        const bool direct_out = Wp == g.oW && flat_out;  // no extra columns: the engine writes the output
        std::vector<TIn>& padded = w.padded;
        std::vector<std::uint8_t>& scratch = w.scratch;
        if (!in_place) {
            padded.resize(std::size_t{g.cin_g} * plane + 64);
            fill_border(g, op.EndPadding, Wp, plane, x_zp, padded.data());
        }
        if (!direct_out) scratch.resize(out_bytes<TOut>(std::size_t{g.cout_g} * wide));
        for (std::uint32_t group = g0; group < g1; ++group) {
            prepare_group(op, f, group, s, e);
            for (std::uint32_t n = 0; n < g.batch; ++n) {
                if (!in_place) copy_padded(X, g, n, group * g.cin_g, Wp, plane, padded.data());
                const auto plane_of = [&](std::size_t ic) -> const TIn* {
                    return in_place ? &X[{n, group * g.cin_g + static_cast<std::uint32_t>(ic), 0, 0}]
                                    : padded.data() + ic * plane;
                };
                std::uint8_t* out = direct_out ? reinterpret_cast<std::uint8_t*>(&Out[{n, group * g.cout_g, 0, 0}])
                                               : scratch.data();
                const std::uint64_t rs = direct_out ? Out.strides[1] : wide, cs = direct_out ? out_cs : 1;
                for (std::size_t c0 = 0; c0 < wide; c0 += block) {
                    const std::size_t c1 = std::min(wide, c0 + block), readable = (c1 - c0 + 15) / 16 * 16;
                    multiply_block(f.left[group], c0, c1, out + out_bytes<TOut>(c0 * cs), rs, cs, [&](std::size_t k, TIn* buffer) {
                        const std::size_t t = k % taps, ky = t / g.kW, kx = t % g.kW;
                        const std::size_t at = ky * g.dy * Wp + kx * g.dx + c0;
                        const TIn* src = plane_of(k / taps) + at;
                        if (!in_place || at + readable <= plane) return src;  // the padded copy has 64 bytes of slack
                        std::memcpy(buffer, src, c1 - c0);                    // the input's last bytes: no over-read
                        return static_cast<const TIn*>(buffer);
                    });
                }
                if (!direct_out) copy_out(scratch.data(), wide, Wp, g, Out, n, group * g.cout_g, m0, m1);
            }
        }
        return;
    }
    // Any other stride: gathered tap rows, blocks of the output's pixels.
    const std::size_t rows_block = flat_out ? block : g.oW;  // output rows one by one when they are not one run
    for (std::uint32_t group = g0; group < g1; ++group) {
        prepare_group(op, f, group, s, e);
        for (std::uint32_t n = 0; n < g.batch; ++n)
            for (std::size_t c0 = 0; c0 < P; c0 += rows_block) {
                const std::size_t c1 = std::min(P, c0 + rows_block);
                // Column c of the block is output pixel c0 + c of output channel group * Cout/G + row.
                const std::uint32_t oy = static_cast<std::uint32_t>(c0 / g.oW);
                const std::uint32_t ox = static_cast<std::uint32_t>(c0 - std::size_t{oy} * g.oW);
                std::uint8_t* out = reinterpret_cast<std::uint8_t*>(&Out[{n, group * g.cout_g, oy, ox}]);
                multiply_block(f.left[group], c0, c1, out, Out.strides[1], flat_out ? out_cs : Out.strides[3],
                               [&](std::size_t k, TIn* buffer) {
                                   const std::uint32_t ic = group * g.cin_g + static_cast<std::uint32_t>(k / taps);
                                   const std::uint32_t t = static_cast<std::uint32_t>(k % taps);
                                   patch_row(X, g, x_zp, n, ic, t / g.kW, t % g.kW, c0, c1, buffer);
                                   return static_cast<const TIn*>(buffer);
                               });
            }
    }
}

/// run() as tasks of `ex` (conv/tasks.hpp) when the convolution reaches two
/// grains and `ex` has a pool; else on the calling thread.
template <class TIn, class TFilter, class TOut>
void run(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const Filter& f, const Executor& ex) {
    if (ex.calling_thread_only() || conv_macs(op) < 2 * kConvTaskMacs) return run(op, f);
    const Geometry g = geometry(op);
    // Channel blocks of 64 at least (the NCHW form: whole kernel row blocks; the NHWC forms: panel pairs).
    const std::size_t rows = f.form == ConvForm::GemmNchw ? gemm::left_rows(f.isa) : 2 * gemm::kPanel;
    const auto unit = static_cast<std::uint32_t>((kConvTaskChannels + rows - 1) / rows * rows);
    const ConvTaskGrid grid = conv_task_grid(g.batch, g.groups, g.oH, g.oW, g.cout_g, g.K(), unit, kConvTaskMacs);
    run_tasks(op, grid, ex, [&f](const QuantizedLinearConvolution<TIn, TFilter, TOut>& sub, const Part& part) {
        run(sub, f, part);
    });
}

/// depthwise() as tasks of `ex` (row blocks of each image: conv/tasks.hpp)
/// when the convolution reaches two grains and `ex` has a pool.
template <class TIn, class TFilter, class TOut>
void depthwise(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const DepthwiseFilter& f, simd::Isa cap,
               Fidelity fidelity, const Executor& ex) {
    if (ex.calling_thread_only() || conv_macs(op) < 2 * kDepthwiseTaskMacs) return depthwise(op, f, cap, fidelity);
    const auto& o = op.OutputTensor.sizes;
    const ConvTaskGrid grid =
        conv_task_grid(o[0], 1, o[2], o[3], o[1], std::uint64_t{f.kh} * op.FilterTensor.sizes[3], 0, kDepthwiseTaskMacs);
    run_tasks(op, grid, ex, [&](const QuantizedLinearConvolution<TIn, TFilter, TOut>& sub, const Part&) {
        depthwise(sub, f, cap, fidelity);
    });
}

}  // namespace conv

/// Computes a validated convolution, same bits as the reference, in the
/// form conv::select_form() picks (conv/path.hpp): depthwise descs on the
/// depthwise path (conv/depthwise.hpp), every other on the GEMM engine.
template <class TIn, class TFilter, class TOut>
void quantized_linear_convolution(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op,
                                  const GemmOptions& options = {}) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    const Isa isa = simd::select_isa(options.isa);
    if (conv::select_form(op, isa) == conv::ConvForm::Depthwise)
        return conv::depthwise(op, conv::prepare_depthwise(op), options.isa, options.fidelity, options.executor);
    conv::Filter f;
    conv::prepare_filter(op, isa, f);
    f.directml = options.fidelity == Fidelity::DirectML;
    conv::run(op, f, options.executor);
}

/// The implementation path that computes `op` under `options`, as
/// qdml::describe() prints it: the form (conv/path.hpp; depthwise descs:
/// the depthwise form, conv::depthwise_path) and its ISA path.
template <class TIn, class TFilter, class TOut>
std::string path(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const GemmOptions& options = {}) {
    const Isa isa = simd::select_isa(options.isa);
    const conv::ConvForm form = conv::select_form(op, isa);
    if (form == conv::ConvForm::Depthwise) return conv::depthwise_path(op, options.isa);
    return std::string(conv::form_name(form)) + " " + std::string(isa_name(isa));
}

}  // namespace qdml::simd
