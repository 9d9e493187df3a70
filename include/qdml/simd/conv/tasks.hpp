// qdml/simd/conv/tasks.hpp - a convolution as tasks of the caller's pool
// (core/executor.hpp, docs/threads.md).
//
// A task computes one image's block of output rows for a block of groups
// and, within each group, a block of output channels. The rows are a
// convolution of their own (rows_of: the input rows their windows read, the
// padding they see, the output rows), which every form computes unchanged;
// the groups and channels are a Part the GEMM forms take (run, run_nhwc,
// run_nhwc_vector). Every output element is computed by one task, from the
// same taps in the same integer arithmetic and the same per-channel
// requantize as on one thread: the bits do not depend on the cut. The grid
// is a function of the shapes, the form's channel unit and fixed constants
// (tuning.hpp), never of the thread count.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "qdml/core/executor.hpp"
#include "qdml/operators/quantized_linear_convolution.hpp"
#include "qdml/simd/tuning.hpp"

namespace qdml::simd::conv {

/// The output channels a GEMM form computes: groups [g0, g1) and, in each,
/// output channels [c0, c1) of the group (a multiple of the form's channel
/// unit, conv_channel_unit; c1 past the group's: to its end). The default:
/// every output channel.
struct Part {
    std::uint32_t g0 = 0, g1 = ~0u, c0 = 0, c1 = ~0u;
};

/// How a convolution is cut into tasks: per image, blocks of `groups_per`
/// groups, of `rows_per` output rows and of `chans_per` output channels of a
/// group (channels are split only when a block holds one group).
struct ConvTaskGrid {
    std::uint32_t batch = 1, groups = 1, groups_per = 1, oH = 1, rows_per = 1, cout_g = 1, chans_per = 1;
    std::uint32_t group_blocks() const noexcept { return (groups + groups_per - 1) / groups_per; }
    std::uint32_t row_blocks() const noexcept { return (oH + rows_per - 1) / rows_per; }
    std::uint32_t chan_blocks() const noexcept { return (cout_g + chans_per - 1) / chans_per; }
    std::size_t tasks() const noexcept {
        return std::size_t{batch} * group_blocks() * row_blocks() * chan_blocks();
    }
};

/// The task grid of a convolution with `batch` images of `groups` groups,
/// oH x oW outputs, `cout_g` output channels per group and K = Cin/G * kH *
/// kW taps, channels in blocks of `unit` (0: never split, the depthwise
/// path), tasks of `grain` multiply-adds at least. Starting from whole
/// images, it halves the group block, then the row block (down to
/// kConvTaskPixels output pixels and kConvTaskRows rows), then the channel
/// block (down to `unit`), while there are fewer than kTargetTasks tasks of
/// two grains or more. Channels come last: each channel block of a pixel
/// block builds and packs the pixels' patches again (measured on Zen 2,
/// AVX2, 2026-11-28, tasks run one after another on one thread: 12-29% over
/// the single call with 32-channel blocks, 0.5-3.5% without).
inline ConvTaskGrid conv_task_grid(std::uint32_t batch, std::uint32_t groups, std::uint32_t oH, std::uint32_t oW,
                                   std::uint32_t cout_g, std::uint64_t K, std::uint32_t unit,
                                   std::uint64_t grain) noexcept {
    ConvTaskGrid g;
    g.batch = batch;
    g.groups = g.groups_per = std::max<std::uint32_t>(groups, 1);
    g.oH = g.rows_per = std::max<std::uint32_t>(oH, 1);
    g.cout_g = g.chans_per = std::max<std::uint32_t>(cout_g, 1);
    const std::uint32_t width = std::max<std::uint32_t>(oW, 1);
    const std::uint32_t min_rows =
        std::min(g.oH, std::max(kConvTaskRows, static_cast<std::uint32_t>((kConvTaskPixels + width - 1) / width)));
    const auto macs = [&] {
        return std::uint64_t{g.groups_per} * g.rows_per * width * g.chans_per * std::max<std::uint64_t>(K, 1);
    };
    while (g.tasks() < kTargetTasks && macs() >= 2 * grain) {
        if (g.groups_per > 1) {
            g.groups_per = (g.groups_per + 1) / 2;
        } else if (g.rows_per / 2 >= min_rows) {
            g.rows_per = (g.rows_per + 1) / 2;
        } else if (unit != 0 && g.chans_per >= 2 * unit) {
            g.chans_per = (g.chans_per / 2 + unit - 1) / unit * unit;
        } else {
            break;
        }
    }
    return g;
}

/// Output rows [oy0, oy1) of image n of `op` as a convolution of their own:
/// the input rows their windows reach (the padding they see as its own), or,
/// when they reach none (the block lies in the padding), the one row of
/// input zero points at `zp_rows` (Cin x W elements, channel planes).
template <class TIn, class TFilter, class TOut>
QuantizedLinearConvolution<TIn, TFilter, TOut> rows_of(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op,
                                                      std::uint32_t n, std::uint32_t oy0, std::uint32_t oy1,
                                                      const TIn* zp_rows) noexcept {
    auto sub = op;
    const auto& X = op.InputTensor;
    const std::int64_t sy = op.Strides[0], pt = op.StartPadding[0];
    const std::int64_t extent = std::int64_t{op.FilterTensor.sizes[2] - 1} * op.Dilations[0] + 1;
    const std::int64_t a = std::int64_t{oy0} * sy - pt, b = std::int64_t{oy1 - 1} * sy + extent - pt;  // rows [a, b)
    const std::int64_t lo = std::max<std::int64_t>(a, 0), hi = std::min<std::int64_t>(b, X.sizes[2]);
    sub.InputTensor.sizes[0] = 1;
    sub.OutputTensor.sizes[0] = 1;
    sub.OutputTensor.data = &op.OutputTensor[{n, 0, oy0, 0}];
    sub.OutputTensor.sizes[2] = oy1 - oy0;
    if (lo < hi) {
        sub.InputTensor.data = &X[{n, 0, static_cast<std::uint32_t>(lo), 0}];
        sub.InputTensor.sizes[2] = static_cast<std::uint32_t>(hi - lo);
        sub.StartPadding[0] = static_cast<std::uint32_t>(lo - a);
        sub.EndPadding[0] = static_cast<std::uint32_t>(b - hi);
    } else {
        sub.InputTensor.data = zp_rows;
        sub.InputTensor.sizes[2] = 1;
        sub.InputTensor.strides = {std::uint64_t{X.sizes[1]} * X.sizes[3], X.sizes[3], X.sizes[3], 1};
        sub.StartPadding[0] = 0;
        sub.EndPadding[0] = static_cast<std::uint32_t>(b - a - 1);
    }
    return sub;
}

/// Whether some row block of `g` reads no input row (rows_of needs zp_rows).
template <class TIn, class TFilter, class TOut>
bool needs_zp_rows(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const ConvTaskGrid& g) noexcept {
    const std::int64_t sy = op.Strides[0], pt = op.StartPadding[0], H = op.InputTensor.sizes[2];
    const std::int64_t extent = std::int64_t{op.FilterTensor.sizes[2] - 1} * op.Dilations[0] + 1;
    for (std::uint32_t oy0 = 0; oy0 < g.oH; oy0 += g.rows_per) {
        const std::uint32_t oy1 = std::min(g.oH, oy0 + g.rows_per);
        const std::int64_t a = std::int64_t{oy0} * sy - pt, b = std::int64_t{oy1 - 1} * sy + extent - pt;
        if (std::max<std::int64_t>(a, 0) >= std::min(b, H)) return true;
    }
    return false;
}

/// The multiply-adds of `op`.
template <class TIn, class TFilter, class TOut>
std::uint64_t conv_macs(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op) noexcept {
    const auto& o = op.OutputTensor.sizes;
    const auto& f = op.FilterTensor.sizes;
    return std::uint64_t{o[0]} * o[1] * o[2] * o[3] * f[1] * f[2] * f[3];
}

/// Runs `task(sub, part)` for every task of grid `g` through `ex`: `sub` the
/// task's rows (rows_of), `part` its groups and channels.
template <class TIn, class TFilter, class TOut, class Task>
void run_tasks(const QuantizedLinearConvolution<TIn, TFilter, TOut>& op, const ConvTaskGrid& g, const Executor& ex,
               Task&& task) {
    std::vector<TIn> zp_rows;
    if (needs_zp_rows(op, g)) {
        const TIn x_zp = op.InputZeroPointTensor ? (*op.InputZeroPointTensor)[{0, 0, 0, 0}] : TIn{0};
        zp_rows.assign(std::size_t{op.InputTensor.sizes[1]} * op.InputTensor.sizes[3], x_zp);
    }
    const std::size_t gb = g.group_blocks(), rb = g.row_blocks(), cb = g.chan_blocks();
    qdml::detail::parallel_for(ex, g.tasks(), [&](std::size_t t) {
        const std::size_t c = t % cb, r = t / cb % rb, gr = t / cb / rb % gb;
        const auto n = static_cast<std::uint32_t>(t / cb / rb / gb);
        const auto oy0 = static_cast<std::uint32_t>(r * g.rows_per);
        const std::uint32_t oy1 = std::min(g.oH, oy0 + g.rows_per);
        Part part;
        part.g0 = static_cast<std::uint32_t>(gr * g.groups_per);
        part.g1 = std::min(g.groups, part.g0 + g.groups_per);
        part.c0 = static_cast<std::uint32_t>(c * g.chans_per);
        part.c1 = std::min(g.cout_g, part.c0 + g.chans_per);
        task(rows_of(op, n, oy0, oy1, zp_rows.data()), part);
    });
}

}  // namespace qdml::simd::conv
