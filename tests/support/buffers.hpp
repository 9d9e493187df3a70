// tests/support/buffers.hpp - the buffers and the random generator of every
// test program (unit, differential, GEMM engine, micro-kernels):
//   - GuardedBuffer: bytes between two guards of kGuardBytes, placed at a
//     chosen offset past a 64-byte boundary, every byte starting as
//     kSentinel: a write outside the buffer shows as a changed guard, a
//     write to a byte the call should not touch as a changed sentinel;
//   - GuardedPool: the guarded buffers of one test or case (tensors bound to
//     them, clones, fills), and the checks the tests run after each call:
//     every guard of the pool intact (check_guards), and no byte of an
//     output's buffer outside its view changed (changed_outside);
//   - Rng: one generator (mt19937_64), seeded from Catch's --rng-seed (0
//     unless given) and a per-test salt (case_seed), so a failure is
//     reproduced by --rng-seed and the seed its test prints.
#pragma once

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "qdml/core/data_type.hpp"
#include "qdml/core/float16.hpp"
#include "qdml/core/shape.hpp"
#include "qdml/core/tensor.hpp"

namespace qtest {

inline constexpr std::uint8_t kSentinel = 0xA5;
inline constexpr std::size_t kGuardBytes = 64;  ///< sentinel bytes on each side of every buffer

/// `size` bytes starting `offset` bytes past a 64-byte boundary, between two
/// guards of kGuardBytes; every byte (guards, slack and contents) starts as
/// kSentinel.
class GuardedBuffer {
public:
    GuardedBuffer() = default;
    explicit GuardedBuffer(std::size_t size, std::size_t offset = 0) { assign(size, offset); }
    GuardedBuffer(const GuardedBuffer& o) { *this = o; }
    GuardedBuffer(GuardedBuffer&&) noexcept = default;  // (the vector's storage moves: data() stays)
    GuardedBuffer& operator=(GuardedBuffer&&) noexcept = default;
    GuardedBuffer& operator=(const GuardedBuffer& o) {  // same size, offset and bytes (guards included)
        if (this != &o) {
            assign(o.size_, o.offset_);
            std::memcpy(data() - kGuardBytes, o.data() - kGuardBytes, kGuardBytes + size_ + kGuardBytes);
        }
        return *this;
    }

    /// A new buffer of `size` bytes at `offset` past a 64-byte boundary, all sentinel.
    void assign(std::size_t size, std::size_t offset = 0) {
        storage_.assign(kGuardBytes + 64 + offset + size + kGuardBytes, kSentinel);
        const auto a = reinterpret_cast<std::uintptr_t>(storage_.data() + kGuardBytes);
        begin_ = kGuardBytes + (64 - a % 64) % 64 + offset;
        size_ = size;
        offset_ = offset;
    }

    std::uint8_t* data() noexcept { return storage_.data() + begin_; }
    const std::uint8_t* data() const noexcept { return storage_.data() + begin_; }
    std::size_t size() const noexcept { return size_; }
    std::uint8_t& operator[](std::size_t i) noexcept { return data()[i]; }
    std::uint8_t operator[](std::size_t i) const noexcept { return data()[i]; }

    /// Every byte (guards included) back to the sentinel.
    void reset() noexcept { std::memset(storage_.data(), kSentinel, storage_.size()); }
    /// The contents and both guards, for comparing whole buffers.
    std::vector<std::uint8_t> with_guards() const {
        return std::vector<std::uint8_t>(data() - kGuardBytes, data() + size_ + kGuardBytes);
    }
    /// Whether `p` points into the contents.
    bool holds(const void* p) const noexcept {
        const auto* b = static_cast<const std::uint8_t*>(p);
        return !storage_.empty() && b >= data() && b < data() + (size_ ? size_ : 1);
    }
    /// The first byte outside the contents (guards and slack) that lost the
    /// sentinel, as an offset from data() (negative: before it); `ok` if none.
    static constexpr std::ptrdiff_t ok = std::numeric_limits<std::ptrdiff_t>::max();
    std::ptrdiff_t broken_guard() const noexcept {
        const auto start = static_cast<std::ptrdiff_t>(begin_);
        for (std::size_t i = 0; i < storage_.size(); ++i) {
            const auto at = static_cast<std::ptrdiff_t>(i) - start;
            if ((at < 0 || at >= static_cast<std::ptrdiff_t>(size_)) && storage_[i] != kSentinel) return at;
        }
        return ok;
    }

private:
    std::vector<std::uint8_t> storage_;
    std::size_t begin_ = 0, size_ = 0, offset_ = 0;
};

/// A desc with the minimum TotalTensorSizeInBytes (strides empty: packed).
inline qdml::TensorDesc make_desc(qdml::TensorDataType t, const std::vector<std::uint32_t>& sizes,
                                  const std::vector<std::uint32_t>& strides = {}) {
    qdml::TensorDesc d;
    d.DataType = t;
    d.DimensionCount = static_cast<std::uint32_t>(sizes.size());
    for (std::size_t i = 0; i < sizes.size() && i < qdml::kMaxDimensions; ++i) d.Sizes[i] = sizes[i];
    if (!strides.empty()) {
        d.Strides.emplace();
        for (std::size_t i = 0; i < strides.size() && i < qdml::kMaxDimensions; ++i) (*d.Strides)[i] = strides[i];
    }
    d.TotalTensorSizeInBytes = qdml::calc_buffer_tensor_size(d).value_or(0);
    return d;
}

/// Element offsets of every logical element of `d`, row-major (last index fastest).
inline std::vector<std::uint64_t> logical_offsets(const qdml::TensorDesc& d) {
    const auto st = qdml::effective_strides(d);
    std::vector<std::uint64_t> offs{0};
    for (std::uint32_t dim = 0; dim < d.DimensionCount; ++dim) {
        std::vector<std::uint64_t> next;
        next.reserve(offs.size() * d.Sizes[dim]);
        for (auto o : offs)
            for (std::uint32_t i = 0; i < d.Sizes[dim]; ++i) next.push_back(o + i * st[dim]);
        offs.swap(next);
    }
    return offs;
}

/// Fills every element of `t`'s buffer (addressed or not) with gen().
template <class T, class Gen>
void fill(const qdml::Tensor& t, Gen&& gen) {
    const auto n = *qdml::min_buffer_elements(t.Desc);
    T* p = static_cast<T*>(t.Data);
    for (std::uint64_t i = 0; i < n; ++i) p[i] = gen();
}

/// The guarded buffers of one test or case. Addresses stay valid for its lifetime.
class GuardedPool {
public:
    /// A new buffer of `size` bytes, `offset` bytes past a 64-byte boundary.
    GuardedBuffer& buffer(std::size_t size, std::size_t offset = 0) {
        bufs_.emplace_back(size, offset);
        return bufs_.back();
    }

    /// A tensor bound to a new buffer of TotalTensorSizeInBytes, its data
    /// `misalign` elements past a 64-byte boundary (vector-aligned only
    /// when 0); every byte the sentinel.
    qdml::Tensor tensor(const qdml::TensorDesc& d, std::size_t misalign = 0) {
        auto& b = buffer(static_cast<std::size_t>(d.TotalTensorSizeInBytes), misalign * qdml::element_size(d.DataType));
        return qdml::Tensor{d, b.data()};
    }
    qdml::Tensor tensor(qdml::TensorDataType t, const std::vector<std::uint32_t>& sizes,
                        const std::vector<std::uint32_t>& strides = {}, std::size_t misalign = 0) {
        const qdml::TensorDesc d = make_desc(t, sizes, strides);
        REQUIRE(d.TotalTensorSizeInBytes > 0);
        return tensor(d, misalign);
    }

    /// A copy of `t` (same desc, same bytes) in a new buffer with the same misalignment.
    qdml::Tensor clone(const qdml::Tensor& t) {
        const auto es = qdml::element_size(t.Desc.DataType);
        REQUIRE(t.Desc.TotalTensorSizeInBytes > 0);
        const qdml::Tensor c = tensor(t.Desc, (reinterpret_cast<std::uintptr_t>(t.Data) % 64) / es);
        std::memcpy(c.Data, t.Data, static_cast<std::size_t>(t.Desc.TotalTensorSizeInBytes));
        return c;
    }

    /// The buffer whose contents hold `p`, or null.
    const GuardedBuffer* find(const void* p) const noexcept {
        for (const auto& b : bufs_)
            if (b.holds(p)) return &b;
        return nullptr;
    }

    /// Whether every buffer's guards still hold the sentinel.
    bool guards_intact() const noexcept {
        for (const auto& b : bufs_)
            if (b.broken_guard() != GuardedBuffer::ok) return false;
        return true;
    }
    /// The check after a call: every buffer's guards intact (one CHECK; a
    /// failure names the buffer and the byte). Returns whether they were.
    bool check_guards(const std::string& context = {}) const {
        std::size_t i = 0, size = 0;
        std::ptrdiff_t at = GuardedBuffer::ok;
        for (const auto& b : bufs_) {
            at = b.broken_guard();
            if (at != GuardedBuffer::ok) {
                size = b.size();
                break;
            }
            ++i;
        }
        INFO("guard byte " << at << " of buffer " << i << " (" << size << " bytes) lost the sentinel\n" << context);
        CHECK(at == GuardedBuffer::ok);
        return at == GuardedBuffer::ok;
    }

    /// The bytes of `x`'s buffer and guards outside the elements `x`
    /// addresses (gaps between strided elements, bytes past the last, the
    /// guards) that no longer hold the sentinel; `first` gets the offset from
    /// x.Data of the first of them. `x` must live in this pool.
    std::size_t changed_outside(const qdml::Tensor& x, std::ptrdiff_t* first = nullptr) const {
        const GuardedBuffer* b = find(x.Data);
        REQUIRE(b != nullptr);
        const auto* base = static_cast<const std::uint8_t*>(x.Data);
        const std::ptrdiff_t lo = -static_cast<std::ptrdiff_t>(kGuardBytes) - (base - b->data());
        const std::ptrdiff_t hi = static_cast<std::ptrdiff_t>(b->size() + kGuardBytes) - (base - b->data());
        std::vector<bool> addressed(static_cast<std::size_t>(hi - lo), false);
        const std::uint32_t es = qdml::element_size(x.Desc.DataType);
        for (auto o : logical_offsets(x.Desc))
            for (std::uint32_t k = 0; k < es; ++k) addressed[static_cast<std::size_t>(static_cast<std::ptrdiff_t>(o * es + k) - lo)] = true;
        std::size_t changed = 0;
        for (std::ptrdiff_t i = lo; i < hi; ++i)
            if (!addressed[static_cast<std::size_t>(i - lo)] && base[i] != kSentinel && changed++ == 0 && first) *first = i;
        return changed;
    }

private:
    std::deque<GuardedBuffer> bufs_;
};

/// The seed of case `i` of a test whose generator is salted `salt`:
/// Catch's --rng-seed mixed with both (reproduce a case with the same
/// --rng-seed; its test prints the seed where it describes a case).
inline std::uint64_t case_seed(std::uint64_t salt, std::size_t i = 0) {
    return (static_cast<std::uint64_t>(Catch::rngSeed()) << 32) ^ (salt * 0x9E3779B97F4A7C15ull) ^ i;
}

/// The one random generator of the tests.
class Rng {
public:
    explicit Rng(std::uint64_t seed) : seed_(seed), g_(seed) {}
    std::uint64_t seed() const noexcept { return seed_; }
    std::uint64_t bits() { return g_(); }
    /// Uniform in [lo, hi].
    std::int64_t range(std::int64_t lo, std::int64_t hi) {
        return lo + static_cast<std::int64_t>(g_() % static_cast<std::uint64_t>(hi - lo + 1));
    }
    std::uint32_t uniform(std::uint32_t lo, std::uint32_t hi) { return static_cast<std::uint32_t>(range(lo, hi)); }
    /// A binary32 value uniform in [lo, hi) (24 random bits).
    float between(float lo, float hi) {
        return lo + (hi - lo) * (static_cast<float>(g_() >> 40) / 16777216.0f);
    }
    bool chance(int percent) { return range(0, 99) < percent; }
    bool coin(std::uint32_t one_in) { return range(1, one_in) == 1; }
    template <class C>
    const auto& pick(const C& c) {
        return c[static_cast<std::size_t>(range(0, static_cast<std::int64_t>(std::size(c)) - 1))];
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

    /// A byte: mostly uniform, sometimes the extremes 0, 127, 128, 255.
    std::uint8_t byte() {
        static constexpr std::uint8_t extremes[] = {0, 127, 128, 255};
        return coin(8) ? extremes[uniform(0, 3)] : static_cast<std::uint8_t>(uniform(0, 255));
    }
    /// Sizes around the tile sizes (1, 4, 6, 8, 16, 32, 64) and odd ones, at most max.
    std::uint32_t size(std::uint32_t max) {
        static constexpr std::uint32_t around[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 129};
        const std::uint32_t v = coin(2) ? around[uniform(0, 19)] : uniform(1, max);
        return v > max ? max : v;
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
        else if constexpr (std::is_same_v<T, qdml::float16>)
            return chance(10) ? qdml::float16::from_bits(static_cast<std::uint16_t>(bits())) : qdml::float16(real(scale));
        else
            return integer<T>();
    }

private:
    std::uint64_t seed_;
    std::mt19937_64 g_;
};

}  // namespace qtest
