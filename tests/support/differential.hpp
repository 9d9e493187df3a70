// tests/support/differential.hpp - the differential harness: random cases
// run through the reference and through the SIMD path, outputs compared bit
// for bit. Reusable by any operator (element-wise here; matmul and
// convolution build their descs with the same pieces):
//   - Rng: seeded from Catch's --rng-seed and the case number, so a failing
//     case is reproduced by its seed line;
//   - shapes: 1-8 dimensions, sizes around every vector width (1, 2, 3, 7,
//     W-1, W, W+1, 2W+3, 61, 1000+), a bounded element count;
//   - layouts: packed, padded, permuted (and padded), stride 0 on any
//     dimension of an input (broadcast), misaligned base pointers;
//   - values: every integer type over its range with the extremes favoured,
//     floats with NaN, infinities, subnormals, signed zeros and ties;
//   - Arena buffers: guard bytes on both sides and a sentinel fill; compare()
//     checks that the two outputs agree on every byte (gaps between
//     addressed elements and guards included, so neither path wrote outside
//     the view) and that the guards still hold the sentinel. A failure
//     prints the N-D index, both values' bits, the arch and the case.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "qdml/qdml.hpp"

namespace qtest::diff {

using qdml::float16;
using qdml::Tensor;
using qdml::TensorDesc;
using DT = qdml::TensorDataType;

inline constexpr std::uint8_t kSentinel = 0xA5;
inline constexpr std::size_t kGuardBytes = 64;

/// Cases per operator and test executable: QDML_DIFF_CASES overrides (a soak).
inline std::size_t case_count(std::size_t default_count) {
    if (const char* s = std::getenv("QDML_DIFF_CASES")) return static_cast<std::size_t>(std::strtoull(s, nullptr, 10));
    return default_count;
}

class Rng {
public:
    explicit Rng(std::uint64_t seed) : g_(seed) {}
    std::uint64_t bits() { return g_(); }
    /// Uniform in [lo, hi].
    std::int64_t range(std::int64_t lo, std::int64_t hi) {
        return lo + static_cast<std::int64_t>(g_() % static_cast<std::uint64_t>(hi - lo + 1));
    }
    bool chance(int percent) { return range(0, 99) < percent; }
    template <class C>
    const auto& pick(const C& c) {
        return c[static_cast<std::size_t>(range(0, static_cast<std::int64_t>(c.size()) - 1))];
    }

    /// An integer of type T: the extremes and small values often, else uniform.
    template <class T>
    T integer() {
        using L = std::numeric_limits<T>;
        switch (range(0, 9)) {
            case 0: return L::min();
            case 1: return L::max();
            case 2: return static_cast<T>(L::min() + range(0, 3));
            case 3: return static_cast<T>(L::max() - range(0, 3));
            case 4: return static_cast<T>(range(L::is_signed ? -8 : 0, 8));
            default: {
                T v;
                const std::uint64_t b = bits();
                std::memcpy(&v, &b, sizeof v);
                return v;
            }
        }
    }

    /// A binary32 value of "magnitude about `scale`" or a special one.
    float real(float scale = 1.0f) {
        switch (range(0, 19)) {
            case 0: return std::numeric_limits<float>::quiet_NaN();
            case 1: return -std::numeric_limits<float>::infinity();
            case 2: return std::numeric_limits<float>::infinity();
            case 3: return std::numeric_limits<float>::denorm_min() * static_cast<float>(range(1, 1000));
            case 4: return -0.0f;
            case 5: return 0.0f;
            case 6: return (static_cast<float>(range(-64, 64)) + 0.5f) * scale;  // ties after rounding
            case 7: {  // any bit pattern
                const auto b = static_cast<std::uint32_t>(bits());
                float f;
                std::memcpy(&f, &b, sizeof f);
                return f;
            }
            default:
                return static_cast<float>(static_cast<double>(range(-1000000, 1000000)) / 1000000.0) * scale;
        }
    }

    /// An element of any qdml element type.
    template <class T>
    T value(float scale = 1.0f) {
        if constexpr (std::is_same_v<T, float>)
            return real(scale);
        else if constexpr (std::is_same_v<T, float16>)
            return chance(10) ? float16::from_bits(static_cast<std::uint16_t>(bits())) : float16(real(scale));
        else
            return integer<T>();
    }

private:
    std::mt19937_64 g_;
};

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

/// Owns guarded, sentinel-filled buffers of one case.
class Arena {
public:
    /// A bound tensor: its buffer starts `misalign` elements past a 64-byte
    /// boundary (so never vector-aligned unless misalign is 0).
    Tensor tensor(DT t, const std::vector<std::uint32_t>& sizes, const std::vector<std::uint32_t>& strides,
                  std::size_t misalign) {
        TensorDesc d;
        d.DataType = t;
        d.DimensionCount = static_cast<std::uint32_t>(sizes.size());
        for (std::size_t i = 0; i < sizes.size(); ++i) d.Sizes[i] = sizes[i];
        if (!strides.empty()) {
            d.Strides.emplace();
            for (std::size_t i = 0; i < strides.size(); ++i) (*d.Strides)[i] = strides[i];
        }
        d.TotalTensorSizeInBytes = qdml::calc_buffer_tensor_size(d).value_or(0);
        REQUIRE(d.TotalTensorSizeInBytes > 0);
        const std::size_t bytes = static_cast<std::size_t>(d.TotalTensorSizeInBytes);
        const std::size_t shift = misalign * qdml::element_size(t);
        bufs_.emplace_back(kGuardBytes + 64 + shift + bytes + kGuardBytes, kSentinel);
        auto& b = bufs_.back();
        const auto a = reinterpret_cast<std::uintptr_t>(b.data() + kGuardBytes);
        const std::size_t pad = (64 - a % 64) % 64 + shift;
        return Tensor{d, b.data() + kGuardBytes + pad, 0};
    }

    /// Fills every element of the buffer (addressed or not) with gen().
    template <class T, class Gen>
    static void fill(const Tensor& t, Gen&& gen) {
        const auto n = *qdml::min_buffer_elements(t.Desc);
        T* p = static_cast<T*>(t.Data);
        for (std::uint64_t i = 0; i < n; ++i) p[i] = gen();
    }

    /// A copy of `t` (same desc, same bytes) in a new buffer with the same misalignment.
    Tensor clone(const Tensor& t) {
        const auto es = qdml::element_size(t.Desc.DataType);
        const std::size_t mis = (reinterpret_cast<std::uintptr_t>(t.Data) % 64) / es;
        std::vector<std::uint32_t> sizes(t.Desc.Sizes.begin(), t.Desc.Sizes.begin() + t.Desc.DimensionCount);
        std::vector<std::uint32_t> strides;
        if (t.Desc.Strides) strides.assign(t.Desc.Strides->begin(), t.Desc.Strides->begin() + t.Desc.DimensionCount);
        Tensor c = tensor(t.Desc.DataType, sizes, strides, mis);
        std::memcpy(c.Data, t.Data, static_cast<std::size_t>(t.Desc.TotalTensorSizeInBytes));
        return c;
    }

private:
    std::deque<std::vector<std::uint8_t>> bufs_;
};

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
/// desc, each in its own Arena buffer), byte for byte over the whole buffer
/// and its guards. `context` names the case (types, layouts, params, seed).
inline bool compare(const Tensor& ref, const Tensor& got, const std::string& context) {
    const auto es = qdml::element_size(ref.Desc.DataType);
    const std::size_t bytes = static_cast<std::size_t>(ref.Desc.TotalTensorSizeInBytes);
    const auto* r = static_cast<const std::uint8_t*>(ref.Data);
    const auto* g = static_cast<const std::uint8_t*>(got.Data);
    for (std::size_t i = 0; i < kGuardBytes; ++i) {
        if (r[-1 - static_cast<std::ptrdiff_t>(i)] != kSentinel || g[-1 - static_cast<std::ptrdiff_t>(i)] != kSentinel ||
            r[bytes + i] != kSentinel || g[bytes + i] != kSentinel) {
            FAIL_CHECK("arch " << qdml::simd::arch_name() << ": a guard byte around the output changed\n" << context);
            return false;
        }
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
    FAIL_CHECK("arch " << qdml::simd::arch_name() << ": output differs at " << index_of(ref.Desc, off) << ": "
                       << s.str() << " (bits, little end last)\n"
                       << context);
    return false;
}

/// A Catch2 seed for case `i` of a test: reproducible with --rng-seed.
inline std::uint64_t case_seed(std::uint64_t salt, std::size_t i) {
    return (static_cast<std::uint64_t>(Catch::rngSeed()) << 32) ^ (salt * 0x9E3779B97F4A7C15ull) ^ i;
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
