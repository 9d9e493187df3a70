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

/// out = the epilogue of (a x b). Precondition: a and b packed for the same
/// isa, a.K == b.K, `e` prepared from both (prepare_columns, prepare_rows).
/// With `session` (a Session of b.isa on this thread), AMX may leave the
/// last block's epilogue pending in it: `e` and its output must then stay
/// as they are until the next multiply() with the session returns or
/// session->finish() (a batch alternates between two Epilogues).
template <class TOut>
void multiply(const PackedLeft& a, const PackedRight& b, const Epilogue& e,
              [[maybe_unused]] Session* session = nullptr) {
    const Isa isa = b.isa;
    const std::size_t M = a.M, mr_max = left_rows(isa);
    const std::size_t panel_bytes = std::max<std::size_t>(b.groups * b.group_bytes(), 1);
    const std::size_t block = std::max<std::size_t>(4, kGemmBlockBytes / panel_bytes / 4 * 4);
#if QDML_X86
    if (isa == Isa::Amx && M == 1) {  // GEMV: the VNNI row kernel (one row: the Rows and Groups4 layouts coincide)
        if (session) session->finish();
#if defined(QDML_GEMM_TEST_AMX_EMULATION)  // (testing aid, x86/amx/emulation.hpp: no AVX-512 VNNI here)
        if (!isa_available(Isa::Avx512Vnni)) {
            for (std::size_t p = 0; p < b.panels; ++p) generic::tile<TOut>(a, b, e, 0, 1, p);
            return;
        }
#endif
        row_panels(a, b, e, 0, b.panels);
        return;
    }
    if (isa == Isa::Amx) {
        Session local(isa);  // (nothing when `session` or a caller configured the tiles)
        amx::Pending& pd = session ? session->pending() : local.pending();
        for (std::size_t p0 = 0; p0 < b.panels; p0 += block) amx::block(a, b, e, p0, std::min(b.panels, p0 + block), pd);
        if (!session) amx::drain(pd, pd.rows);
        return;
    }
#endif
    for (std::size_t p0 = 0; p0 < b.panels; p0 += block) {
        const std::size_t p1 = std::min(b.panels, p0 + block);
        for (std::size_t m0 = 0; m0 < M; m0 += mr_max) {
            const std::size_t mr = std::min(mr_max, M - m0);
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

}  // namespace qdml::simd::gemm
