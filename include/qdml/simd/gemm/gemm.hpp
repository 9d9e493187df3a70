// qdml/simd/gemm/gemm.hpp - the int8 GEMM engine's driver: out = requantize(left x right)
// for an M x K left operand and a K x N right operand, both packed
// (pack.hpp), with the epilogue constants of epilogue.hpp. It knows nothing
// of DirectML: matmul packs B as the right operand (once, when it is
// constant), convolution packs its filter as the left (NCHW) or the right (NHWC) operand.
//
// Blocking: the right operand is walked in column blocks of about 1 MiB of
// panels (L2), inside them every row block of the left operand (L1), inside
// that the block's panels; one micro-kernel call covers the whole K (AMX:
// x86/amx/gemm_kernel.hpp runs the loops, its epilogue pipelined with the tiles).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "qdml/simd/gemm/epilogue.hpp"
#include "qdml/simd/gemm/kernel_generic.hpp"
#include "qdml/simd/gemm/pack.hpp"
#include "qdml/simd/isa.hpp"
#include "qdml/simd/tuning.hpp"
#include "qdml/simd/x86/amx/gemm_kernel.hpp"
#include "qdml/simd/x86/avx2/gemm_kernel.hpp"
#include "qdml/simd/x86/avx512vnni/gemm_kernel.hpp"
#include "qdml/simd/x86/avxvnni/gemm_kernel.hpp"

namespace qdml::simd::gemm {

/// The left layout and rows per block of `isa`'s micro-kernel.
inline LeftLayout left_layout(Isa isa) noexcept {
    switch (isa) {
#if QDML_X86
        case Isa::Avx2: return avx2::kLayout;
        case Isa::AvxVnni: return avxvnni::kLayout;
        case Isa::Avx512Vnni: return avx512vnni::kLayout;
        case Isa::Amx: return amx::kLayout;
#endif
        default: return generic::kLayout;
    }
}

inline std::size_t left_rows(Isa isa) noexcept {
    switch (isa) {
#if QDML_X86
        case Isa::Avx2: return avx2::kRows;
        case Isa::AvxVnni: return avxvnni::kRows;
        case Isa::Avx512Vnni: return avx512vnni::kRows;
        case Isa::Amx: return amx::kRows;
#endif
        default: return generic::kRows;
    }
}

/// Packs the left operand for the kernel of `isa` (K groups as the right operand's).
template <class TA>
void pack_left(Matrix<TA> a, std::size_t M, std::size_t K, Isa isa, PackedLeft& out, LeftPacking how = {}) {
    pack_left(a, M, K, left_layout(isa), left_rows(isa), k_groups(K, isa), out, how);
}

/// The per-thread kernel state of `isa` (AMX: the tile configuration) held
/// for a series of multiply() calls on this thread, so that a batch of
/// products loads it once; without a Session, multiply() sets it up and
/// releases it in each call. A multiply() given the session may leave the
/// epilogue of its last AMX block pending here, to overlap the next
/// product's tiles: finish() (or the destructor, or the next multiply() with
/// the session) completes it.
class Session {
public:
    explicit Session(Isa isa) noexcept {
#if QDML_X86
        if (isa == Isa::Amx && !amx::configured()) {
            amx::configure();
            amx::configured() = owner_ = true;
        }
#else
        (void)isa;
#endif
    }
    ~Session() {
        finish();
#if QDML_X86
        if (owner_) {
            amx::release();
            amx::configured() = false;
        }
#endif
    }
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    /// Stores whatever epilogue a multiply() left pending.
    void finish() noexcept {
#if QDML_X86
        if (pending_.done < pending_.rows) amx::drain(pending_, pending_.rows);
#endif
    }

#if QDML_X86
    amx::Pending& pending() noexcept { return pending_; }
#endif

private:
    bool owner_ = false;
#if QDML_X86
    amx::Pending pending_;
#endif
};

#if QDML_X86
/// Row m0 alone (M = 1, or a last row block of one) times panels p0..p1-1 on
/// the AVX-512 VNNI kernel: kRowPanels streams of B at a time.
inline void row_panels(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t p0, std::size_t p1,
                       std::size_t m0 = 0) {
    for (std::size_t p = p0; p < p1; p += avx512vnni::kRowPanels)
        avx512vnni::tiles(a, b, e, m0, 1, p, std::min<std::size_t>(avx512vnni::kRowPanels, p1 - p));
}
#endif

/// The panels per column block of `b` (about kGemmBlockBytes of panels, a multiple of 4).
inline std::size_t block_panels(const PackedRight& b) noexcept {
    const std::size_t panel_bytes = std::max<std::size_t>(b.groups * b.group_bytes(), 1);
    return std::max<std::size_t>(4, kGemmBlockBytes / panel_bytes / 4 * 4);
}

/// Rows [m_begin, m_end) x panels [p_begin, p_end) of out = the epilogue of
/// (a x b), in column blocks of at most `block` panels (each over every row
/// of the range). m_begin is a multiple of left_rows(b.isa); an AMX range
/// runs and drains its own blocks (no Session: for a task of any thread).
template <class TOut>
void multiply_range(const PackedLeft& a, const PackedRight& b, const Epilogue& e, std::size_t m_begin,
                    std::size_t m_end, std::size_t p_begin, std::size_t p_end, std::size_t block) {
    const Isa isa = b.isa;
    const std::size_t mr_max = left_rows(isa);
#if QDML_X86
    if (isa == Isa::Amx && a.M == 1) {  // GEMV: the VNNI row kernel (one row: the Rows and Groups4 layouts coincide)
#if defined(QDML_GEMM_TEST_AMX_EMULATION)  // (testing aid, x86/amx/emulation.hpp: no AVX-512 VNNI here)
        if (!isa_available(Isa::Avx512Vnni)) {
            for (std::size_t p = p_begin; p < p_end; ++p) generic::tile<TOut>(a, b, e, 0, 1, p);
            return;
        }
#endif
        row_panels(a, b, e, p_begin, p_end);
        return;
    }
    if (isa == Isa::Amx) {
        Session local(isa);  // (nothing when this thread's tiles are configured already)
        amx::Pending& pd = local.pending();
        for (std::size_t p0 = p_begin; p0 < p_end; p0 += block)
            amx::block(a, b, e, p0, std::min(p_end, p0 + block), pd, m_begin, m_end);
        amx::drain(pd, pd.rows);
        return;
    }
#endif
#if QDML_X86
    if (isa == Isa::Avx2) {  // the fused form where it applies (x86/avx2/gemm_kernel.hpp), else the tiles
        avx2::FusedPlan plan = avx2::fused_plan(b, e);
        const std::size_t m_fused = m_begin + (m_end - m_begin) / avx2::kRows * avx2::kRows;
        for (std::size_t p0 = p_begin; p0 < p_end; p0 += block) {
            const std::size_t p1 = std::min(p_end, p0 + block);
            if (plan.ok && p1 - p0 <= 2) {  // few panels: each along the row blocks, one call
                for (std::size_t p = p0; p < p1; ++p) avx2::fused_rows(plan, a, b, e, m_begin, m_end, p);
                for (std::size_t m0 = m_begin; m0 < m_end; m0 += mr_max)
                    for (std::size_t p = p0; p < p1; ++p)
                        if (m0 >= m_fused || p >= plan.full)
                            avx2::tiles(a, b, e, m0, std::min(mr_max, m_end - m0), p);
                continue;
            }
            for (std::size_t m0 = m_begin; m0 < m_end; m0 += mr_max) {
                const std::size_t mr = std::min(mr_max, m_end - m0);
                const std::size_t from = mr == avx2::kRows ? avx2::fused_panels(plan, a, b, e, m0, p0, p1) : p0;
                for (std::size_t p = from; p < p1; ++p) avx2::tiles(a, b, e, m0, mr, p);
            }
        }
        return;
    }
#endif
    for (std::size_t p0 = p_begin; p0 < p_end; p0 += block) {
        const std::size_t p1 = std::min(p_end, p0 + block);
        for (std::size_t m0 = m_begin; m0 < m_end; m0 += mr_max) {
            const std::size_t mr = std::min(mr_max, m_end - m0);
            switch (isa) {
#if QDML_X86
                case Isa::Avx512Vnni:
                    if (mr == 1) {
                        row_panels(a, b, e, p0, p1, m0);
                        break;
                    }
                    avx512vnni::panels(a, b, e, m0, mr, p0, p1);
                    break;
                case Isa::AvxVnni:
                    for (std::size_t p = p0; p < p1; ++p) avxvnni::tiles(a, b, e, m0, mr, p);
                    break;
                case Isa::Avx2:
                    for (std::size_t p = p0; p < p1; ++p) avx2::tiles(a, b, e, m0, mr, p);
                    break;
#endif
                default:
                    for (std::size_t p = p0; p < p1; ++p) generic::tile<TOut>(a, b, e, m0, mr, p);
            }
        }
    }
}

/// How a product of M rows, `panels` panels of B and depth K is cut into
/// tasks (core/executor.hpp): blocks of `rows` rows (a multiple of the
/// kernel's, at least kTaskMacs multiply-adds with the column block) by
/// blocks of `panels_per` panels (the column block of multiply():
/// block_panels), both halved while there are fewer than kTargetTasks
/// tasks of at least two grains each. A function of the shapes and ISA
/// path only.
struct TaskGrid {
    std::size_t rows = 1, panels_per = 1, m_blocks = 0, p_blocks = 0;
    std::size_t tasks() const noexcept { return m_blocks * p_blocks; }
};

inline TaskGrid task_grid(std::size_t M, std::size_t panels, std::size_t K, Isa isa, std::size_t block) noexcept {
    TaskGrid g;
    const std::size_t mr = left_rows(isa);
    g.panels_per = std::max<std::size_t>(1, std::min(block, panels));
    const std::uint64_t row_macs = std::uint64_t{g.panels_per} * kPanel * std::max<std::size_t>(K, 1);
    const std::uint64_t want = (kTaskMacs + row_macs - 1) / row_macs;  // rows to reach the grain
    g.rows = static_cast<std::size_t>(std::min<std::uint64_t>((want + mr - 1) / mr * mr, (M + mr - 1) / mr * mr));
    g.rows = std::max(g.rows, mr);
    const auto count = [&] {
        g.m_blocks = (M + g.rows - 1) / g.rows;
        g.p_blocks = (panels + g.panels_per - 1) / g.panels_per;
    };
    count();
    // Fewer tasks than many-core machines have cores, each of two grains or
    // more: halve the row block (down to the kernel's rows), then the
    // column block (down to 4 panels), while that holds.
    const std::uint64_t total = std::uint64_t{M} * panels * kPanel * std::max<std::size_t>(K, 1);
    while (g.tasks() < kTargetTasks && total / g.tasks() >= 2 * kTaskMacs) {
        if (g.rows > mr)
            g.rows = std::max(mr, g.rows / 2 / mr * mr);
        else if (g.panels_per > 4)
            g.panels_per /= 2;
        else
            break;
        count();
    }
    return g;
}

/// Task t of grid g (t < g.tasks(); consecutive tasks share a column
/// block, which neighbouring workers then read from a shared cache): rows [m0, m1) x panels [p0, p1) of the
/// product, through multiply_range.
template <class TOut>
void multiply_task(const PackedLeft& a, const PackedRight& b, const Epilogue& e, const TaskGrid& g, std::size_t t) {
    const std::size_t pb = t / g.m_blocks, mb = t % g.m_blocks;  // column blocks outer, as multiply() walks
    const std::size_t m0 = mb * g.rows, p0 = pb * g.panels_per;
    multiply_range<TOut>(a, b, e, m0, std::min(a.M, m0 + g.rows), p0, std::min(b.panels, p0 + g.panels_per),
                         g.panels_per);
}

/// out = the epilogue of (a x b). Precondition: a and b packed for the same
/// isa, a.K == b.K, `e` prepared from both (prepare_columns, prepare_rows).
/// With `session` (a Session of b.isa on this thread), AMX may leave the
/// last block's epilogue pending in it: `e` and its output must then stay
/// as they are until the next multiply() with the session returns or
/// session->finish() (a batch alternates between two Epilogues).
template <class TOut>
void multiply(const PackedLeft& a, const PackedRight& b, const Epilogue& e,
              [[maybe_unused]] Session* session = nullptr) {
    const std::size_t block = block_panels(b);
#if QDML_X86
    if (b.isa == Isa::Amx && a.M > 1) {
        Session local(b.isa);  // (nothing when `session` or a caller configured the tiles)
        amx::Pending& pd = session ? session->pending() : local.pending();
        for (std::size_t p0 = 0; p0 < b.panels; p0 += block)
            amx::block(a, b, e, p0, std::min(b.panels, p0 + block), pd, 0, a.M);
        if (!session) amx::drain(pd, pd.rows);
        return;
    }
    if (b.isa == Isa::Amx && session) session->finish();
#endif
    multiply_range<TOut>(a, b, e, 0, a.M, 0, b.panels, block);
}

}  // namespace qdml::simd::gemm
