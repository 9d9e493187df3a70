// qdml/core/tensor.hpp - DML_BUFFER_TENSOR_DESC mirror, the bound buffer,
// DMLCalcBufferTensorSize, and the typed strided view kernels read through
// (docs/semantics.md section 1).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

#include "qdml/core/data_type.hpp"

namespace qdml {

inline constexpr std::uint32_t kMaxDimensions = 8;
/// DML_TENSOR_FLAG_OWNED_BY_DML: the tensor is constant and bound once, at initialize.
inline constexpr std::uint32_t kTensorFlagOwnedByDml = 1;

/// Mirrors DML_BUFFER_TENSOR_DESC. Strides are in elements; absent strides
/// mean packed row-major; a stride of 0 broadcasts along its dimension.
struct TensorDesc {
    TensorDataType DataType = TensorDataType::Unknown;
    std::uint32_t DimensionCount = 0;
    std::array<std::uint32_t, kMaxDimensions> Sizes{};
    std::optional<std::array<std::uint32_t, kMaxDimensions>> Strides;
    std::uint64_t TotalTensorSizeInBytes = 0;
    std::uint32_t GuaranteedBaseOffsetAlignment = 0;
    /// DML_TENSOR_FLAGS: 0, or kTensorFlagOwnedByDml for constant weights a
    /// prepared operator reads once (qdml::simd::PreparedQuantizedLinearMatrixMultiply).
    std::uint32_t Flags = 0;

    /// A desc with the given sizes (and strides, if any) whose
    /// TotalTensorSizeInBytes is the minimum DMLCalcBufferTensorSize gives.
    /// `sizes` and `strides` are braces (`{2, 3}`) or any range of integers
    /// (std::vector, std::array, a span, ...). More than 8 sizes, a strides
    /// count that differs, or a value outside 0..2^32-1 are kept as a
    /// DimensionCount of 0, which validation rejects.
    template <class SizeRange = std::initializer_list<std::uint32_t>,
              class StrideRange = std::initializer_list<std::uint32_t>>
    static TensorDesc make(TensorDataType type, const SizeRange& sizes, const StrideRange& strides = {});
};

/// A TensorDesc bound to memory. `Data` must hold TotalTensorSizeInBytes
/// bytes; when `DataSizeInBytes` is non-zero, validation also checks that it
/// is at least TotalTensorSizeInBytes (a binding smaller than the desc).
///
/// Inputs bind const or mutable memory alike (`{desc, const_ptr}`); qdml
/// writes only through an OutputTensor, which must be bound to mutable
/// memory: a Tensor made from a const pointer is `ReadOnly`, and validation
/// rejects it as an output.
struct Tensor {
    TensorDesc Desc;
    void* Data = nullptr;
    std::uint64_t DataSizeInBytes = 0;
    bool ReadOnly = false;  ///< bound through a const pointer: an input only

    Tensor() = default;
    Tensor(const TensorDesc& desc, void* data, std::uint64_t data_size_in_bytes = 0)
        : Desc(desc), Data(data), DataSizeInBytes(data_size_in_bytes) {}
    Tensor(const TensorDesc& desc, const void* data, std::uint64_t data_size_in_bytes = 0)
        : Desc(desc), Data(const_cast<void*>(data)), DataSizeInBytes(data_size_in_bytes), ReadOnly(true) {}
    Tensor(const TensorDesc& desc, std::nullptr_t, std::uint64_t data_size_in_bytes = 0)
        : Desc(desc), DataSizeInBytes(data_size_in_bytes) {}
};

/// An optional (`_Maybenull_`) member: a std::optional<Tensor> that is also
/// made from a Tensor's arguments, so `{desc, data}` works wherever a
/// Tensor member takes it (assignment and aggregate initialization alike).
struct OptionalTensor : std::optional<Tensor> {
    using std::optional<Tensor>::optional;
    OptionalTensor() = default;
    OptionalTensor(const Tensor& t) : std::optional<Tensor>(t) {}
    OptionalTensor(const std::optional<Tensor>& t) : std::optional<Tensor>(t) {}
    template <class P, class = std::enable_if_t<std::is_constructible_v<Tensor, const TensorDesc&, P, std::uint64_t>>>
    OptionalTensor(const TensorDesc& desc, P data, std::uint64_t data_size_in_bytes = 0)
        : std::optional<Tensor>(std::in_place, desc, data, data_size_in_bytes) {}
};

/// Strides actually used: the given ones, or packed row-major.
inline std::array<std::uint64_t, kMaxDimensions> effective_strides(const TensorDesc& d) noexcept {
    std::array<std::uint64_t, kMaxDimensions> s{};
    const std::uint32_t n = d.DimensionCount <= kMaxDimensions ? d.DimensionCount : 0;
    if (d.Strides) {
        for (std::uint32_t i = 0; i < n; ++i) s[i] = (*d.Strides)[i];
    } else {
        std::uint64_t acc = 1;
        for (std::uint32_t i = n; i-- > 0;) {
            s[i] = acc;
            acc *= d.Sizes[i];  // bounded: validation caps element counts at 2^32-1
        }
    }
    return s;
}

/// Product of Sizes; nullopt if it overflows 64 bits.
inline std::optional<std::uint64_t> element_count(const TensorDesc& d) noexcept {
    std::uint64_t n = 1;
    for (std::uint32_t i = 0; i < d.DimensionCount && i < kMaxDimensions; ++i) {
        if (d.Sizes[i] != 0 && n > std::numeric_limits<std::uint64_t>::max() / d.Sizes[i])
            return std::nullopt;
        n *= d.Sizes[i];
    }
    return n;
}

/// Number of elements the buffer must span: dot(Sizes - 1, Strides) + 1;
/// nullopt on 64-bit overflow. Sizes must be >= 1.
inline std::optional<std::uint64_t> min_buffer_elements(const TensorDesc& d) noexcept {
    const auto st = effective_strides(d);
    std::uint64_t span = 0;
    for (std::uint32_t i = 0; i < d.DimensionCount && i < kMaxDimensions; ++i) {
        const std::uint64_t extent = d.Sizes[i] == 0 ? 0 : d.Sizes[i] - 1u;
        if (st[i] != 0 && extent > (std::numeric_limits<std::uint64_t>::max() - span) / st[i])
            return std::nullopt;
        span += extent * st[i];
    }
    if (span == std::numeric_limits<std::uint64_t>::max()) return std::nullopt;
    return span + 1;
}

/// DMLCalcBufferTensorSize in 64 bits: (dot(Sizes-1, Strides)+1) * elementSize
/// rounded up to 4 bytes (half a byte an element for UINT4 and INT4, the
/// last byte whole); nullopt on overflow.
inline std::optional<std::uint64_t> calc_buffer_tensor_size(const TensorDesc& d) noexcept {
    const auto elems = min_buffer_elements(d);
    const std::uint64_t es = element_size(d.DataType);  // 0 for the 4-bit types: half a byte each never overflows
    if (!elems || element_bits(d.DataType) == 0 || (es != 0 && *elems > (std::numeric_limits<std::uint64_t>::max() - 3) / es))
        return std::nullopt;
    return (byte_count(d.DataType, *elems) + 3) & ~std::uint64_t{3};
}

namespace detail {
/// Copies the integers of `r` into `out`; false when there are more than
/// `out` holds or one is outside 0..2^32-1. `n` receives the count.
template <class Range>
bool copy_dims(const Range& r, std::array<std::uint32_t, kMaxDimensions>& out, std::size_t& n) {
    n = 0;
    for (const auto& x : r) {
        using T = std::remove_cv_t<std::remove_reference_t<decltype(x)>>;
        static_assert(std::is_integral_v<T>, "TensorDesc::make: sizes and strides are integers");
        if constexpr (std::is_signed_v<T>) {
            if (x < 0) return false;
        }
        if (n == kMaxDimensions || static_cast<std::uint64_t>(x) > 0xffffffffu) return false;
        out[n++] = static_cast<std::uint32_t>(x);
    }
    return true;
}
}  // namespace detail

template <class SizeRange, class StrideRange>
TensorDesc TensorDesc::make(TensorDataType type, const SizeRange& sizes, const StrideRange& strides) {
    TensorDesc d;
    d.DataType = type;
    std::array<std::uint32_t, kMaxDimensions> sz{}, st{};
    std::size_t n = 0, m = 0;
    if (!detail::copy_dims(sizes, sz, n) || !detail::copy_dims(strides, st, m) || (m != 0 && m != n)) return d;
    d.DimensionCount = static_cast<std::uint32_t>(n);
    d.Sizes = sz;
    if (m != 0) d.Strides = st;
    d.TotalTensorSizeInBytes = calc_buffer_tensor_size(d).value_or(0);
    return d;
}

/// Whether two tensor descs are the same in every member (strides compared
/// as they take effect: null Strides and packed strides are the same).
inline bool same_desc(const TensorDesc& a, const TensorDesc& b) noexcept {
    return a.DataType == b.DataType && a.DimensionCount == b.DimensionCount && a.Sizes == b.Sizes &&
           effective_strides(a) == effective_strides(b) && a.TotalTensorSizeInBytes == b.TotalTensorSizeInBytes &&
           a.GuaranteedBaseOffsetAlignment == b.GuaranteedBaseOffsetAlignment && a.Flags == b.Flags;
}
/// Both absent, or both present with the same desc.
inline bool same_desc(const std::optional<Tensor>& a, const std::optional<Tensor>& b) noexcept {
    return a.has_value() == b.has_value() && (!a || same_desc(a->Desc, b->Desc));
}

/// Typed strided view of rank N: what kernels read and write. Built only
/// from validated descs (see make_view), so every index in `sizes` is in
/// bounds of the bound buffer.
template <class T, std::size_t N>
struct TensorView {
    T* data = nullptr;
    std::array<std::uint32_t, N> sizes{};
    std::array<std::uint64_t, N> strides{};

    std::uint64_t offset(const std::array<std::uint32_t, N>& index) const noexcept {
        std::uint64_t o = 0;
        for (std::size_t d = 0; d < N; ++d) o += index[d] * strides[d];
        return o;
    }
    T& operator[](const std::array<std::uint32_t, N>& index) const noexcept { return data[offset(index)]; }
    /// The element at index 0 (the value of a one-element tensor).
    T& scalar() const noexcept { return data[0]; }
};

/// The 4-bit form (INT4, UINT4): `data` addresses bytes, element `o` is the
/// low (even `o`) or high (odd `o`) nibble of byte o / 2; operator[] reads an
/// int32 (sign-extended for INT4) and, on a view of non-const elements,
/// returns a reference that writes the nibble and keeps its neighbour.
template <bool Signed, std::size_t N>
struct NibbleView {
    std::uint8_t* data = nullptr;
    std::array<std::uint32_t, N> sizes{};
    std::array<std::uint64_t, N> strides{};

    std::uint64_t offset(const std::array<std::uint32_t, N>& index) const noexcept {
        std::uint64_t o = 0;
        for (std::size_t d = 0; d < N; ++d) o += index[d] * strides[d];
        return o;
    }
    static std::int32_t read(const std::uint8_t* data, std::uint64_t o) noexcept {
        const std::int32_t v = (data[o / 2] >> ((o & 1) * 4)) & 0xF;
        return Signed && v >= 8 ? v - 16 : v;
    }
    static void write(std::uint8_t* data, std::uint64_t o, std::int32_t v) noexcept {
        const unsigned shift = static_cast<unsigned>(o & 1) * 4;
        data[o / 2] = static_cast<std::uint8_t>((data[o / 2] & ~(0xFu << shift)) | ((static_cast<unsigned>(v) & 0xFu) << shift));
    }
    struct Ref {
        std::uint8_t* data;
        std::uint64_t o;
        operator std::int32_t() const noexcept { return read(data, o); }
        const Ref& operator=(std::int32_t v) const noexcept {
            write(data, o, v);
            return *this;
        }
    };
};
template <bool Signed, std::size_t N>
struct TensorView<nibble<Signed>, N> : NibbleView<Signed, N> {
    typename NibbleView<Signed, N>::Ref operator[](const std::array<std::uint32_t, N>& index) const noexcept {
        return {this->data, this->offset(index)};
    }
    typename NibbleView<Signed, N>::Ref scalar() const noexcept { return {this->data, 0}; }
};
template <bool Signed, std::size_t N>
struct TensorView<const nibble<Signed>, N> : NibbleView<Signed, N> {
    std::int32_t operator[](const std::array<std::uint32_t, N>& index) const noexcept {
        return NibbleView<Signed, N>::read(this->data, this->offset(index));
    }
    std::int32_t scalar() const noexcept { return NibbleView<Signed, N>::read(this->data, 0); }
};

namespace detail {
template <class T>
auto* view_data(void* p) noexcept {
    if constexpr (is_nibble_v<T>) return static_cast<std::uint8_t*>(p);
    else return static_cast<T*>(p);
}
}  // namespace detail

/// A rank-N view of `t`, right-aligned: a desc with fewer dimensions gets
/// leading dimensions of size 1. Precondition: validated, DimensionCount <= N.
template <class T, std::size_t N>
TensorView<T, N> make_view(const Tensor& t) noexcept {
    TensorView<T, N> v;
    v.data = detail::view_data<T>(t.Data);
    const auto st = effective_strides(t.Desc);
    const std::size_t n = t.Desc.DimensionCount;
    for (std::size_t d = 0; d < N; ++d) {
        v.sizes[d] = 1;
        v.strides[d] = 0;
    }
    for (std::size_t i = 0; i < n; ++i) {
        v.sizes[N - n + i] = t.Desc.Sizes[i];
        v.strides[N - n + i] = st[i];
    }
    return v;
}

/// `v` as a rank-M view (M >= N), right-aligned: leading dimensions of size
/// 1. The same elements in the same order.
template <std::size_t M, class T, std::size_t N>
TensorView<T, M> right_align(const TensorView<T, N>& v) noexcept {
    static_assert(M >= N, "right_align only adds dimensions");
    TensorView<T, M> r;
    r.data = v.data;
    for (std::size_t d = 0; d < M; ++d) {
        r.sizes[d] = 1;
        r.strides[d] = 0;
    }
    for (std::size_t d = 0; d < N; ++d) {
        r.sizes[M - N + d] = v.sizes[d];
        r.strides[M - N + d] = v.strides[d];
    }
    return r;
}

template <std::size_t M, class T, std::size_t N>
std::optional<TensorView<T, M>> right_align(const std::optional<TensorView<T, N>>& v) noexcept {
    if (!v) return std::nullopt;
    return right_align<M>(*v);
}

/// `v` broadcast to `sizes`: every dimension of size 1 takes the target size
/// with stride 0. Precondition: each size of `v` is 1 or equals the target.
template <class T, std::size_t N>
TensorView<T, N> broadcast_to(TensorView<T, N> v, const std::array<std::uint32_t, N>& sizes) noexcept {
    for (std::size_t d = 0; d < N; ++d) {
        if (v.sizes[d] == 1) v.strides[d] = 0;
        v.sizes[d] = sizes[d];
    }
    return v;
}

/// Calls f(index) for every index of `sizes` in row-major (last fastest)
/// order: the reference's plain N-D loop.
template <std::size_t N, class F>
void for_each_index(const std::array<std::uint32_t, N>& sizes, F&& f) {
    for (std::size_t d = 0; d < N; ++d)
        if (sizes[d] == 0) return;
    std::array<std::uint32_t, N> i{};
    for (;;) {
        f(static_cast<const std::array<std::uint32_t, N>&>(i));
        std::size_t d = N;
        for (;;) {
            if (d == 0) return;
            --d;
            if (++i[d] < sizes[d]) break;
            i[d] = 0;
        }
    }
}

}  // namespace qdml
