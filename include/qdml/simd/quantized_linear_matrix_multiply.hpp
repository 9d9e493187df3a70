// qdml/simd/quantized_linear_matrix_multiply.hpp - QUANTIZED_LINEAR_MATRIX_MULTIPLY
// on the int8 GEMM engine (simd/gemm/), bit-identical to
// qdml::reference::quantized_linear_matrix_multiply (docs/semantics.md section 5):
//   acc[m][n] = sum_k (A[m][k] - AZP[m]) * (B[k][n] - BZP[n])     (int32, wraps mod 2^32)
//   Output    = Q(fp32(acc) * (fp32(AScale[m] * BScale[n]) / OutputScale[m]), OutputZP[m])
// Each of the Batch*Channel products packs its A and B slices (a slice shared
// through zero strides is packed once) and runs the engine; given a thread
// pool (GemmOptions::executor), as tasks of fixed blocks (gemm::task_grid).
// The products' driver (detail::run_matmul and what it calls) takes any
// typed matmul with ATensor, BTensor, OutputTensor and optional zero points
// per row / column: MATRIX_MULTIPLY_INTEGER runs it too, with the int32
// store (simd/matrix_multiply_integer.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "qdml/core/fp_env.hpp"
#include "qdml/operators/quantized_linear_matrix_multiply.hpp"
#include "qdml/simd/gemm/gemm.hpp"
#include "qdml/simd/options.hpp"

namespace qdml::simd {

namespace detail {

template <class T>
gemm::Matrix<T> slice(const TensorView<const T, 4>& v, std::uint32_t b, std::uint32_t c) noexcept {
    return {&v[{b, c, 0, 0}], v.strides[2], v.strides[3]};
}

/// Whether a parameter tensor holds one value for the M rows (N columns) of `dim`.
template <class T>
bool per_tensor(const TensorView<const T, 4>& v, std::size_t dim) noexcept {
    return v.sizes[dim] == 1 || v.strides[dim] == 0;
}

/// The element type of a typed operator's view (const dropped).
template <class View>
struct ElementOf;
template <class T, std::size_t N>
struct ElementOf<TensorView<T, N>> {
    using type = std::remove_const_t<T>;
};
template <class View>
using element_of = typename ElementOf<View>::type;
/// The element type of a typed matmul's A.
template <class Op>
using left_of = element_of<decltype(std::declval<const Op&>().ATensor)>;

/// A's zero point (per row: M values, or one when per tensor) into `s`,
/// shifted as pack.hpp says.
template <class Op>
void a_zero_points(const Op& op, gemm::RequantSpec& s) {
    const auto& azp = op.AZeroPointTensor;
    s.a_zp.assign(!azp || per_tensor(*azp, 2) ? 1 : op.OutputTensor.sizes[2], gemm::left_shift<left_of<Op>>());
    for (std::uint32_t m = 0; azp && m < s.a_zp.size(); ++m) s.a_zp[m] += (*azp)[{0, 0, m, 0}];
}

/// B's zero point (per column: N values, or one when per tensor) into `s`, shifted.
template <class Op>
void b_zero_points(const Op& op, gemm::RequantSpec& s) {
    using TB = element_of<decltype(op.BTensor)>;
    const auto& bzp = op.BZeroPointTensor;
    s.b_zp.assign(!bzp || per_tensor(*bzp, 3) ? 1 : op.OutputTensor.sizes[3], gemm::right_shift<TB>());
    for (std::uint32_t n = 0; bzp && n < s.b_zp.size(); ++n) s.b_zp[n] += (*bzp)[{0, 0, 0, n}];
}

/// A's and the output's parameters (per row: M values, or one when per
/// tensor) into `s`, zero points shifted as pack.hpp says.
template <class TA, class TB, class TOut>
void left_params(const QuantizedLinearMatrixMultiply<TA, TB, TOut>& op, gemm::RequantSpec& s) {
    const std::uint32_t M = op.OutputTensor.sizes[2];
    const auto count = [&](const auto& t) -> std::uint32_t { return !t || per_tensor(*t, 2) ? 1 : M; };
    const auto& ozp = op.OutputZeroPointTensor;
    a_zero_points(op, s);
    s.a_scale.resize(count(&op.AScaleTensor));
    for (std::uint32_t m = 0; m < s.a_scale.size(); ++m) s.a_scale[m] = op.AScaleTensor[{0, 0, m, 0}];
    s.out_zp.assign(count(ozp), 0);
    for (std::uint32_t m = 0; ozp && m < s.out_zp.size(); ++m) s.out_zp[m] = (*ozp)[{0, 0, m, 0}];
    s.out_scale.resize(count(&op.OutputScaleTensor));
    for (std::uint32_t m = 0; m < s.out_scale.size(); ++m) s.out_scale[m] = op.OutputScaleTensor[{0, 0, m, 0}];
    s.out_lo = std::numeric_limits<TOut>::min();
    s.out_hi = std::numeric_limits<TOut>::max();
}

/// B's parameters (per column: N values, or one when per tensor) into `s`.
template <class TA, class TB, class TOut>
void right_params(const QuantizedLinearMatrixMultiply<TA, TB, TOut>& op, gemm::RequantSpec& s) {
    const std::uint32_t N = op.OutputTensor.sizes[3];
    b_zero_points(op, s);
    s.b_scale.resize(per_tensor(op.BScaleTensor, 3) ? 1 : N);
    for (std::uint32_t n = 0; n < s.b_scale.size(); ++n) s.b_scale[n] = op.BScaleTensor[{0, 0, 0, n}];
}

/// Buffers reused across calls on this thread (no allocation per call): A
/// packed, B packed (stateless calls), and two epilogues that consecutive
/// products alternate (one may still be pending in the Session while the
/// next is prepared), each with the slices its constants were made for.
template <class TA>
struct MatmulWorkspace {
    struct Slot {
        gemm::Epilogue e;
        const void* columns = nullptr;  ///< the B slice of e's column constants
        const TA* rows = nullptr;       ///< the A slice of e's row sums
        bool ready = false;             ///< e's row constants made (this call)
    };
    gemm::PackedLeft left;
    gemm::PackedRight right;
    Slot slots[2];
};

template <class TA>
MatmulWorkspace<TA>& workspace() {
    thread_local MatmulWorkspace<TA> w;
    return w;
}

/// The workspace of a whole-products task (run_products_parallel) on this
/// thread: not workspace<TA>(), which a sequential call on the same thread
/// may hold (a task never calls back into qdml or the pool).
template <class TA>
MatmulWorkspace<TA>& task_workspace() {
    thread_local MatmulWorkspace<TA> w;
    return w;
}

/// Runs the Batch*Channel products [i0, i1) (all by default; product i is
/// batch i / Channels, channel i % Channels) in `w`; `right(b, c, key)` gives
/// the packed B slice and sets `key` to what identifies its contents in this
/// call. Per call: one Session (AMX tile configuration, the last block's
/// epilogue of each product overlapping the next product's tiles), the row
/// constants once per epilogue; per product only what changes: the column
/// sums and bias with the B slice, A's packing and row sums with the A slice
/// (the sums only when the epilogue reads them; AMX reads whole tiles of a
/// u8 A in place).
template <class Op, class Right, class TA = left_of<Op>>
void run_products(const Op& op, simd::Isa isa, const gemm::RequantSpec& s, Right&& right,
                  MatmulWorkspace<TA>& w = workspace<TA>(), std::size_t i0 = 0,
                  std::size_t i1 = std::numeric_limits<std::size_t>::max()) {
    using TOut = element_of<decltype(op.OutputTensor)>;
    const auto& Out = op.OutputTensor;
    const std::uint32_t M = Out.sizes[2], K = op.ATensor.sizes[3], C = Out.sizes[1];
    for (auto& slot : w.slots) slot.ready = false;
    const TA* packed_a = nullptr;
    gemm::Session session(isa);
    i1 = std::min<std::size_t>(i1, std::size_t{Out.sizes[0]} * C);
    for (std::size_t i = i0; i < i1; ++i) {
        const auto b = static_cast<std::uint32_t>(i / C), c = static_cast<std::uint32_t>(i % C);
        auto& slot = w.slots[(i - i0) % 2];
        gemm::Epilogue& e = slot.e;
        const void* key = nullptr;
        const gemm::PackedRight& pb = right(b, c, key);
        if (!slot.ready)
            gemm::prepare_columns(s, pb, e);  // before rows: it fixes var_b and the multiplier mode
        else if (slot.columns != key)
            gemm::update_columns(pb, e);  // the same spec, K and N: only the sums change
        slot.columns = key;
        const TA* a_ptr = &op.ATensor[{b, c, 0, 0}];
        if (a_ptr != packed_a) {
            gemm::pack_left(slice(op.ATensor, b, c), M, K, isa, w.left, {e.needs_row_sums(), true});
            packed_a = a_ptr;
        }
        if (!slot.ready)
            gemm::prepare_rows(s, w.left, e);
        else if (slot.rows != a_ptr && e.needs_row_sums())  // (else every row's stays 0)
            gemm::update_row_sums(w.left, e);
        slot.rows = a_ptr;
        slot.ready = true;
        e.out = reinterpret_cast<std::uint8_t*>(&Out[{b, c, 0, 0}]);
        e.out_rs = Out.strides[2];
        e.out_cs = Out.strides[3];
        gemm::multiply<TOut>(w.left, pb, e, &session);
    }
    session.finish();
}

/// Whether a call of `macs` multiply-adds runs as tasks of `ex` (a pool,
/// and at least two tasks' grain: smaller calls never touch the pool).
inline bool threaded(const Executor& ex, std::uint64_t macs) noexcept {
    return !ex.calling_thread_only() && macs >= 2 * kTaskMacs;
}

/// run_products as tasks of `ex` (threaded() said so): every distinct A
/// slice packed (and, without `prepared`, every distinct B slice: one task
/// each), every product's epilogue (one task each), then the task grid of
/// every product (gemm::task_grid). `prepared` gives the packed B slice of
/// each product (PreparedQuantizedLinearMatrixMultiply). A batch of small
/// products runs as tasks of whole products instead, each in its thread's
/// task_workspace(); the calling thread's workspace() is not touched.
template <class Op>
void run_products_parallel(const Op& op, simd::Isa isa, const gemm::RequantSpec& s, const Executor& ex,
                           const std::vector<const gemm::PackedRight*>* prepared = nullptr) {
    using TA = left_of<Op>;
    using TB = element_of<decltype(op.BTensor)>;
    using TOut = element_of<decltype(op.OutputTensor)>;
    const auto& Out = op.OutputTensor;
    const std::uint32_t M = Out.sizes[2], N = Out.sizes[3], K = op.ATensor.sizes[3], C = Out.sizes[1];
    const std::size_t products = std::size_t{Out.sizes[0]} * C;
    // A batch of small products (each under four grains, which the grid
    // below would cut into two or three tasks at most): tasks of whole
    // consecutive products, at least one grain each, each task packing and
    // computing its own products as run_products does (one parallel_for,
    // no shared packing phase; on a 2-core Zen 5 the phases below made 64
    // products of 64^3 slower on two threads than on one).
    const std::uint64_t product_macs = std::max<std::uint64_t>(std::uint64_t{M} * N * K, 1);
    if (products > 1 && product_macs < 4 * kTaskMacs) {
        const std::size_t per = static_cast<std::size_t>(std::max<std::uint64_t>(1, kTaskMacs / product_macs));
        qdml::detail::parallel_for(ex, (products + per - 1) / per, [&](std::size_t t) {
            MatmulWorkspace<TA>& w = task_workspace<TA>();
            const TB* packed = nullptr;
            run_products(
                op, isa, s,
                [&](std::uint32_t b, std::uint32_t c, const void*& key) -> const gemm::PackedRight& {
                    if (prepared) {
                        const gemm::PackedRight& r = *(*prepared)[std::size_t{b} * C + c];
                        key = &r;
                        return r;
                    }
                    const TB* ptr = &op.BTensor[{b, c, 0, 0}];
                    if (ptr != packed) {
                        gemm::pack_right(slice(op.BTensor, b, c), K, N, isa, w.right, {M > 1});
                        packed = ptr;
                    }
                    key = ptr;
                    return w.right;
                },
                w, t * per, t * per + per);
        });
        return;
    }
    // The distinct slices (equal addresses: a slice shared through zero
    // strides), each with the first product that reads it.
    std::vector<std::size_t> a_first, b_first, a_of(products), b_of(products);
    {
        std::map<const void*, std::size_t> a_seen, b_seen;
        for (std::size_t i = 0; i < products; ++i) {
            const auto b = static_cast<std::uint32_t>(i / C), c = static_cast<std::uint32_t>(i % C);
            const auto a_it = a_seen.emplace(&op.ATensor[{b, c, 0, 0}], a_first.size());
            if (a_it.second) a_first.push_back(i);
            a_of[i] = a_it.first->second;
            if (prepared) continue;
            const auto b_it = b_seen.emplace(&op.BTensor[{b, c, 0, 0}], b_first.size());
            if (b_it.second) b_first.push_back(i);
            b_of[i] = b_it.first->second;
        }
    }
    const bool sums = !gemm::detail::uniform(s.b_zp) || s.b_zp[0] != 0;  // Epilogue::needs_row_sums
    std::deque<gemm::PackedLeft> lefts(a_first.size());
    std::deque<gemm::PackedRight> rights(b_first.size());
    qdml::detail::parallel_for(ex, lefts.size() + rights.size(), [&](std::size_t t) {
        const bool left = t < lefts.size();
        const std::size_t i = left ? a_first[t] : b_first[t - lefts.size()];
        const auto b = static_cast<std::uint32_t>(i / C), c = static_cast<std::uint32_t>(i % C);
        if (left)
            gemm::pack_left(slice(op.ATensor, b, c), M, K, isa, lefts[t], {sums, true});
        else
            gemm::pack_right(slice(op.BTensor, b, c), K, N, isa, rights[t - lefts.size()], {M > 1});
    });
    const auto right_of = [&](std::size_t i) -> const gemm::PackedRight& {
        return prepared ? *(*prepared)[i] : rights[b_of[i]];
    };
    std::deque<gemm::Epilogue> epilogues(products);
    qdml::detail::parallel_for(ex, products, [&](std::size_t i) {
        gemm::Epilogue& e = epilogues[i];
        gemm::prepare_columns(s, right_of(i), e);  // before rows: it fixes var_b and the multiplier mode
        gemm::prepare_rows(s, lefts[a_of[i]], e);
        const auto b = static_cast<std::uint32_t>(i / C), c = static_cast<std::uint32_t>(i % C);
        e.out = reinterpret_cast<std::uint8_t*>(&Out[{b, c, 0, 0}]);
        e.out_rs = Out.strides[2];
        e.out_cs = Out.strides[3];
    });
    const gemm::PackedRight& first = right_of(0);
    const gemm::TaskGrid g = gemm::task_grid(M, first.panels, K, isa, gemm::block_panels(first));
    if (g.tasks() > 1) {
        qdml::detail::parallel_for(ex, products * g.tasks(), [&](std::size_t t) {
            const std::size_t i = t / g.tasks();
            gemm::multiply_task<TOut>(lefts[a_of[i]], right_of(i), epilogues[i], g, t % g.tasks());
        });
        return;
    }
    // Products below the grain: whole products, as many a task as reach it.
    const std::size_t per = static_cast<std::size_t>(std::max<std::uint64_t>(1, kTaskMacs / product_macs));
    qdml::detail::parallel_for(ex, (products + per - 1) / per, [&](std::size_t t) {
        for (std::size_t i = t * per; i < std::min(products, t * per + per); ++i)
            gemm::multiply_task<TOut>(lefts[a_of[i]], right_of(i), epilogues[i], g, 0);
    });
}

/// Every product of `op` with the epilogue spec `s`: as tasks of `ex`
/// (threaded()), else on this thread, each distinct B slice packed as its
/// first product comes (the stateless form: B read on every call).
template <class Op>
void run_matmul(const Op& op, simd::Isa isa, const gemm::RequantSpec& s, const Executor& ex) {
    using TB = element_of<decltype(op.BTensor)>;
    const std::uint32_t M = op.OutputTensor.sizes[2], N = op.OutputTensor.sizes[3], K = op.ATensor.sizes[3];
    const std::uint64_t products = std::uint64_t{op.OutputTensor.sizes[0]} * op.OutputTensor.sizes[1];
    if (threaded(ex, products * M * N * K)) {
        run_products_parallel(op, isa, s, ex);
        return;
    }
    gemm::PackedRight& pb = workspace<left_of<Op>>().right;
    const TB* packed = nullptr;
    run_products(op, isa, s, [&](std::uint32_t b, std::uint32_t c, const void*& key) -> const gemm::PackedRight& {
        const TB* ptr = &op.BTensor[{b, c, 0, 0}];
        if (ptr != packed) {
            gemm::pack_right(slice(op.BTensor, b, c), K, N, isa, pb, {M > 1});
            packed = ptr;
        }
        key = ptr;
        return pb;
    });
}

/// The distinct Batch/Channel slices of `op`'s B (equal addresses: a slice
/// shared through zero strides): `first(b, c)` is called for the first
/// product that reads each, in order; returns each product's slice index.
template <class Op, class First>
std::vector<std::size_t> distinct_b_slices(const Op& op, First&& first) {
    using TB = element_of<decltype(op.BTensor)>;
    const auto& Out = op.OutputTensor;
    std::vector<const TB*> seen;
    std::vector<std::size_t> slice_of;
    for (std::uint32_t b = 0; b < Out.sizes[0]; ++b)
        for (std::uint32_t c = 0; c < Out.sizes[1]; ++c) {
            const TB* ptr = &op.BTensor[{b, c, 0, 0}];
            std::size_t i = 0;
            while (i < seen.size() && seen[i] != ptr) ++i;
            if (i == seen.size()) {
                seen.push_back(ptr);
                first(b, c);
            }
            slice_of.push_back(i);
        }
    return slice_of;
}

/// B of a matmul with constant weights, packed once (the prepared forms:
/// PreparedQuantizedLinearMatrixMultiply, PreparedMatrixMultiplyInteger,
/// PreparedMatrixMultiplyIntegerToFloat): pack() packs every distinct
/// Batch/Channel slice of `op`'s B (equal addresses: a slice shared through
/// zero strides) for `isa`, with its column sums; run() computes every
/// product of an `op` of the same desc with the epilogue spec `s` from those
/// panels, on this thread or as tasks of `executor` (as run_matmul does),
/// never reading B's buffer and never writing the panels.
class PackedRightSlices {
public:
    template <class Op>
    void pack(const Op& op, simd::Isa isa) {
        isa_ = isa;
        const auto& Out = op.OutputTensor;
        channels_ = Out.sizes[1];
        const std::uint32_t M = Out.sizes[2], N = Out.sizes[3], K = op.ATensor.sizes[3];
        slice_of_ = distinct_b_slices(op, [&](std::uint32_t b, std::uint32_t c) {
            slices_.emplace_back();
            gemm::pack_right(slice(op.BTensor, b, c), K, N, isa, slices_.back(), {M > 1});
        });
    }

    template <class Op>
    void run(const Op& op, const gemm::RequantSpec& s, const Executor& executor) const {
        const auto& Out = op.OutputTensor;
        const std::uint32_t channels = Out.sizes[1];
        if (threaded(executor, std::uint64_t{Out.sizes[0]} * channels * Out.sizes[2] * Out.sizes[3] *
                                   op.ATensor.sizes[3])) {
            std::vector<const gemm::PackedRight*> per_product(slice_of_.size());
            for (std::size_t i = 0; i < slice_of_.size(); ++i) per_product[i] = &slices_[slice_of_[i]];
            run_products_parallel(op, isa_, s, executor, &per_product);
            return;
        }
        run_products(op, isa_, s, [&](std::uint32_t b, std::uint32_t c, const void*& key) -> const gemm::PackedRight& {
            const gemm::PackedRight& r = slice_of(b, c);
            key = &r;
            return r;
        });
    }

    /// The micro-kernel family the panels were packed for.
    simd::Isa isa() const noexcept { return isa_; }
    /// The packed B slices (read-only: run never writes them).
    const std::deque<gemm::PackedRight>& slices() const noexcept { return slices_; }
    /// The packed slice of product (b, c).
    const gemm::PackedRight& slice_of(std::uint32_t b, std::uint32_t c) const noexcept {
        return slices_[slice_of_[std::size_t{b} * channels_ + c]];
    }

private:
    simd::Isa isa_ = simd::Isa::Generic;
    std::uint32_t channels_ = 1;
    std::deque<gemm::PackedRight> slices_;  // one per distinct B slice (a deque: packed in place)
    std::vector<std::size_t> slice_of_;     // slice index of each (batch, channel)
};

}  // namespace detail

/// Computes a validated matmul on the GEMM engine; same bits as the reference.
template <class TA, class TB, class TOut>
void quantized_linear_matrix_multiply(const QuantizedLinearMatrixMultiply<TA, TB, TOut>& op,
                                      const GemmOptions& options = {}) {
    const FpEnvironment fp_env;  // qdml's floating-point state (docs/semantics.md section 0)
    gemm::RequantSpec s;
    detail::left_params(op, s);
    detail::right_params(op, s);
    s.directml = options.fidelity == Fidelity::DirectML;  // ((acc * AScale[m]) * BScale[n]) / OutputScale[m]
    detail::run_matmul(op, simd::select_isa(options.isa), s, options.executor);
}

/// The implementation path that computes `op` under `options`, as
/// qdml::describe() prints it: the GEMM engine on its ISA path.
template <class TA, class TB, class TOut>
std::string path(const QuantizedLinearMatrixMultiply<TA, TB, TOut>&, const GemmOptions& options = {}) {
    return "gemm " + std::string(isa_name(simd::select_isa(options.isa)));
}

}  // namespace qdml::simd
