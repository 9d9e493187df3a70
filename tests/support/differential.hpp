// tests/support/differential.hpp - the differential harness: random cases
// run through the reference and through the SIMD path, outputs compared bit
// for bit. Reusable by any operator (element-wise here; matmul and
// convolution build their descs with the same pieces):
//   - cases: each with its own Rng (buffers.hpp), seeded from Catch's
//     --rng-seed and the case number, so a failing case is reproduced by
//     its seed line;
//   - shapes: 1-8 dimensions, sizes around every vector width (1, 2, 3, 7,
//     W-1, W, W+1, 2W+3, 61, 1000+), a bounded element count;
//   - layouts: packed, padded, permuted (and padded), stride 0 on any
//     dimension of an input (broadcast), misaligned base pointers;
//   - values: every integer type over its range with the extremes favoured,
//     floats with NaN, infinities, subnormals, signed zeros and ties;
//   - buffers from a GuardedPool (buffers.hpp): guard bytes on both sides
//     and a sentinel fill; compare() checks that every guard of the case's
//     pool still holds the sentinel and that the two outputs agree on every
//     byte (gaps between addressed elements included, so neither path wrote
//     outside the view). A failure prints the N-D index, both values' bits,
//     the arch and the case.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "qdml/qdml.hpp"
#include "support/buffers.hpp"
#include "support/executors.hpp"

namespace qtest::diff {

using qdml::float16;
using qdml::Tensor;
using qdml::TensorDesc;
using DT = qdml::TensorDataType;
using qtest::case_seed;
using qtest::fill;
using qtest::GuardedPool;
using qtest::Rng;

/// The RunOptions of the SIMD path for case k: the ISA cap of one of the
/// element-wise paths this CPU runs (simd::for_each_elementwise_arch: the
/// portable one, AVX2 + F16C, AVX-512), in turn, so that every path gets
/// its share of the cases; `path` receives its name.
inline qdml::RunOptions elementwise_options(std::uint64_t k, std::string* path = nullptr) {
    static const std::vector<qdml::simd::Isa> caps = [] {
        std::vector<qdml::simd::Isa> c;
        qdml::simd::for_each_elementwise_arch([&](auto tag) {
            using A = typename decltype(tag)::type;
            if constexpr (qdml::simd::kernel::is_region_v<A>) c.push_back(A::kCap);
            else c.push_back(qdml::simd::Isa::Generic);
        });
        return c;
    }();
    qdml::RunOptions o;
    o.implementation = qdml::Implementation::Simd;
    o.isa = caps[k % caps.size()];
    if (path) *path = qdml::simd::arch_name(o.isa);
    return o;
}

/// The executor of case k's SIMD run: the calling thread alone for even k,
/// else one of the test pools in turn (support/executors.hpp: 2-64
/// threads, shuffled, a foreign floating-point state); `name` receives it.
inline qdml::Executor case_executor(std::uint64_t k, std::string* name = nullptr) {
    if (k % 2 == 0) {
        if (name) *name = "the calling thread";
        return {};
    }
    const auto& e = test_executors().at(k / 2);
    if (name) *name = e.first;
    return e.second;
}

/// One random case's three runs in profile `f`: the reference on `d`, the
/// SIMD path on `s` (elementwise_options(seed), on case_executor(seed)) and
/// qdml::compile(d) (the next path) executed on `c` (on
/// case_executor(seed + 1)); `path_s` and `path_c` receive the paths and
/// executors.
template <class Desc>
void run_three(const Desc& d, const Desc& s, const Desc& c, std::uint64_t seed, qdml::Fidelity f, std::string& path_s,
               std::string& path_c) {
    qdml::RunOptions o_s = elementwise_options(seed, &path_s), o_c = elementwise_options(seed + 1, &path_c),
                     o_r{qdml::Implementation::Reference};
    o_s.fidelity = o_c.fidelity = o_r.fidelity = f;
    std::string ex_s, ex_c;
    o_s.executor = case_executor(seed, &ex_s);
    const qdml::Executor on_c = case_executor(seed + 1, &ex_c);
    path_s += ", " + ex_s;
    path_c += ", " + ex_c;
    const auto compiled = qdml::compile(d, o_c);
    qdml::run(d, o_r);
    qdml::run(s, o_s);
    compiled.execute(c, on_c);
}

/// elementwise_options for the targeted cases: each call the next path in turn.
inline qdml::RunOptions next_elementwise_options(std::string* path) {
    static std::uint64_t k = 0;
    return elementwise_options(k++, path);
}

/// Cases per operator and test executable: QDML_DIFF_CASES overrides (a soak).
inline std::size_t case_count(std::size_t default_count) {
    if (const char* s = std::getenv("QDML_DIFF_CASES")) return static_cast<std::size_t>(std::strtoull(s, nullptr, 10));
    return default_count;
}

/// A random shape of `rank` dimensions, each from the sizes that straddle
/// the vector widths, with at most about `max_elements` elements.
inline std::vector<std::uint32_t> random_sizes(Rng& r, std::uint32_t rank, std::uint64_t max_elements = 6000) {
    static const std::vector<std::uint32_t> kSizes = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 19, 31, 32, 33, 35, 61, 64, 65};
    std::vector<std::uint32_t> s(rank, 1);
    std::uint64_t n = 1;
    for (std::uint32_t i = 0; i < rank; ++i) {
        std::uint32_t v = r.chance(4) ? static_cast<std::uint32_t>(r.range(1000, 1100)) : r.pick(kSizes);
        if (r.chance(25)) v = 1;
        while (v > 1 && n * v > max_elements) v = v / 2;
        s[i] = v;
        n *= v;
    }
    // The dimension order of the picks above favours the front; shuffle.
    for (std::uint32_t i = rank; i > 1; --i) std::swap(s[i - 1], s[static_cast<std::size_t>(r.range(0, i - 1))]);
    return s;
}

/// random_sizes, or in about 3% of the cases (`big`) a shape of 40K to
/// 400K elements: calls large enough to run as several tasks on a pool
/// (simd::kTaskBytes).
inline std::vector<std::uint32_t> case_sizes(Rng& r, std::uint32_t rank) {
    std::vector<std::uint32_t> s = random_sizes(r, rank);
    if (!r.chance(3)) return s;
    const auto target = static_cast<std::uint64_t>(r.range(40000, 400000));
    std::uint64_t n = 1;
    for (auto v : s) n *= v;
    while (n < target) {
        auto& v = s[static_cast<std::size_t>(r.range(0, rank - 1))];
        const std::uint32_t grown = v * 2 + static_cast<std::uint32_t>(r.range(0, 1));
        n = n / v * grown;
        v = grown;
    }
    return s;
}

enum class Layout { Packed, Padded, Permuted, PermutedPadded };
inline const char* name(Layout l) {
    switch (l) {
        case Layout::Packed: return "packed";
        case Layout::Padded: return "padded";
        case Layout::Permuted: return "permuted";
        default: return "permuted+padded";
    }
}

/// Strides (in elements) for `sizes`: the layout's memory order, and stride
/// 0 on the dimensions in `broadcast` (an input repeating along them).
inline std::vector<std::uint32_t> make_strides(Rng& r, const std::vector<std::uint32_t>& sizes, Layout layout,
                                               const std::vector<bool>& broadcast = {}) {
    const std::size_t n = sizes.size();
    std::vector<std::size_t> order(n);  // order[0] = outermost in memory
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    if (layout == Layout::Permuted || layout == Layout::PermutedPadded)
        for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[static_cast<std::size_t>(r.range(0, i - 1))]);
    const bool pad = layout == Layout::Padded || layout == Layout::PermutedPadded;
    std::vector<std::uint32_t> st(n, 0);
    std::uint64_t acc = 1;
    for (std::size_t j = n; j-- > 0;) {
        const std::size_t d = order[j];
        if (!broadcast.empty() && broadcast[d]) continue;  // stride 0
        st[d] = static_cast<std::uint32_t>(acc);
        acc *= sizes[d] + (pad && r.chance(50) ? static_cast<std::uint32_t>(r.range(1, 3)) : 0u);
    }
    return st;
}

/// Random layout (and a broadcast on random dimensions when `may_broadcast`).
inline std::vector<std::uint32_t> random_strides(Rng& r, const std::vector<std::uint32_t>& sizes, bool may_broadcast,
                                                 std::string& why) {
    const Layout l = static_cast<Layout>(r.range(0, 3));
    std::vector<bool> bc(sizes.size(), false);
    if (may_broadcast && r.chance(50))
        for (std::size_t i = 0; i < sizes.size(); ++i) bc[i] = r.chance(40);
    std::ostringstream s;
    s << name(l);
    for (std::size_t i = 0; i < bc.size(); ++i)
        if (bc[i]) s << " bcast" << i;
    why = s.str();
    return make_strides(r, sizes, l, bc);
}

/// Scale or zero-point strides of an element-wise operator: per tensor, per
/// axis, or any layout with broadcasts.
inline std::vector<std::uint32_t> param_strides(Rng& r, const std::vector<std::uint32_t>& sizes, std::string& why) {
    const auto form = r.range(0, 2);
    if (form == 2) return random_strides(r, sizes, true, why);
    std::vector<bool> bc(sizes.size(), true);
    if (form == 1) bc[static_cast<std::size_t>(r.range(0, static_cast<std::int64_t>(sizes.size()) - 1))] = false;
    why = form == 0 ? "per-tensor" : "per-axis";
    return make_strides(r, sizes, Layout::Packed, bc);
}

/// The logical N-D index of element offset `off` of `d`, as "[i0,i1,...]".
inline std::string index_of(const TensorDesc& d, std::uint64_t off) {
    const auto st = qdml::effective_strides(d);
    std::vector<std::uint32_t> i(d.DimensionCount, 0);
    for (;;) {
        std::uint64_t o = 0;
        for (std::uint32_t k = 0; k < d.DimensionCount; ++k) o += i[k] * st[k];
        if (o == off) {
            std::ostringstream s;
            s << "[";
            for (std::uint32_t k = 0; k < d.DimensionCount; ++k) s << (k ? "," : "") << i[k];
            return s.str() + "]";
        }
        std::uint32_t k = d.DimensionCount;
        for (;;) {
            if (k == 0) return "(offset " + std::to_string(off) + ", outside the view)";
            --k;
            if (++i[k] < d.Sizes[k]) break;
            i[k] = 0;
        }
    }
}

inline std::string describe(const std::string& member, const Tensor& t) {
    std::ostringstream s;
    const auto st = qdml::effective_strides(t.Desc);
    s << member << " " << qdml::name(t.Desc.DataType) << " sizes {";
    for (std::uint32_t k = 0; k < t.Desc.DimensionCount; ++k) s << (k ? "," : "") << t.Desc.Sizes[k];
    s << "} strides {";
    for (std::uint32_t k = 0; k < t.Desc.DimensionCount; ++k) s << (k ? "," : "") << st[k];
    s << "} base%64=" << reinterpret_cast<std::uintptr_t>(t.Data) % 64 << "\n";
    return s.str();
}

/// Compares the reference's output `ref` with the SIMD path's `got` (same
/// desc, each in its own buffer of `pool`), byte for byte over the whole
/// buffer, after checking every guard of the pool (outputs and inputs).
/// `context` names the case (types, layouts, params, seed).
inline bool compare(const GuardedPool& pool, const Tensor& ref, const Tensor& got, const std::string& context) {
    const auto es = qdml::element_size(ref.Desc.DataType);
    const std::size_t bytes = static_cast<std::size_t>(ref.Desc.TotalTensorSizeInBytes);
    const auto* r = static_cast<const std::uint8_t*>(ref.Data);
    const auto* g = static_cast<const std::uint8_t*>(got.Data);
    if (!pool.guards_intact()) {  // (check_guards names the buffer and the byte)
        pool.check_guards(context);
        return false;
    }
    if (std::memcmp(r, g, bytes) == 0) return true;
    // Any NaN matches any NaN (docs/semantics.md fixes no payload or sign, and compilers
    // may commute an addition, which picks the other operand's NaN).
    const auto is_nan = [&](const std::uint8_t* p, std::uint64_t k) {
        if (ref.Desc.DataType == DT::Float32) {
            float f;
            std::memcpy(&f, p + k * 4, 4);
            return std::isnan(f);
        }
        if (ref.Desc.DataType == DT::Float16) {
            std::uint16_t h;
            std::memcpy(&h, p + k * 2, 2);
            return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
        }
        return false;
    };
    std::size_t i = 0;
    for (;; ++i) {
        if (i == bytes) return true;
        if (r[i] != g[i] && !(is_nan(r, i / es) && is_nan(g, i / es))) break;
    }
    const std::uint64_t off = i / es;
    std::ostringstream s;
    s << std::hex;
    for (std::size_t b = es; b-- > 0;) s << (r[off * es + b] >> 4) << (r[off * es + b] & 15);
    s << " (reference) vs ";
    for (std::size_t b = es; b-- > 0;) s << (g[off * es + b] >> 4) << (g[off * es + b] & 15);
    s << " (simd)";
    FAIL_CHECK("output differs at " << index_of(ref.Desc, off) << ": "
                       << s.str() << " (bits, little end last)\n"
                       << context);
    return false;
}

/// Runs `one(rng, seed)` for each of the test's cases (case_count of them),
/// each with its own seeded Rng.
template <class F>
void for_each_case(std::uint64_t salt, std::size_t default_count, F&& one) {
    const std::size_t n = case_count(default_count);
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t seed = case_seed(salt, i);
        Rng r(seed);
        one(r, seed);
    }
}

/// The interleaved layouts of simd/loops.hpp's tile form, for 4-D {N, C, H,
/// W} sizes: NHWC memory viewed as NCHW (channels innermost, padded to C +
/// pad; each channel's row of pixels C + pad elements apart, the channels
/// adjacent), and the shapes that reach its edges: C not a multiple of the
/// tile's 16 rows, H * W over and not a multiple of its 128-element chunk,
/// exact tiles, tiny tensors.
inline std::vector<std::uint32_t> nhwc_strides(const std::vector<std::uint32_t>& s, std::uint32_t pad = 0) {
    const std::uint32_t c = s[1] + pad;
    return {c * s[2] * s[3], 1, c * s[3], c};
}
inline const std::vector<std::vector<std::uint32_t>> kInterleavedShapes{
    {2, 37, 13, 23}, {1, 16, 4, 64}, {1, 5, 1, 3}, {3, 1, 2, 9}, {1, 70, 1, 130}};

/// The layouts of an operand in those tests (kInterleavedForms): 0 packed
/// NCHW, 1 NHWC, 2 NHWC with padded channels, 3 NWHC (channels innermost, the
/// rows' dimension W outside H: the tile's dimension not the plan's last outer one).
inline constexpr int kInterleavedForms = 4;
inline std::vector<std::uint32_t> interleaved_layout(const std::vector<std::uint32_t>& s, int form) {
    if (form == 0) return {};
    if (form == 3) return {s[1] * s[2] * s[3], 1, s[1], s[1] * s[2]};
    return nhwc_strides(s, form == 2 ? 3 : 0);
}

}  // namespace qtest::diff
