// qdml/core/validate.hpp - the shared validation rules of docs/semantics.md section 8:
// tensor desc structure, buffer sizes, per-level type/rank tables, equal
// sizes, output layout and overlap. Nothing here reads tensor data.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "qdml/core/data_type.hpp"
#include "qdml/core/error.hpp"
#include "qdml/core/feature_level.hpp"
#include "qdml/core/overlap.hpp"
#include "qdml/core/tensor.hpp"

namespace qdml {

/// A set of data types as a bit mask (bit = DML enum value).
struct TypeSet {
    std::uint32_t mask = 0;
    constexpr TypeSet() = default;
    constexpr TypeSet(std::initializer_list<TensorDataType> ts) {
        for (auto t : ts) mask |= 1u << static_cast<std::uint32_t>(t);
    }
    constexpr bool contains(TensorDataType t) const noexcept {
        const auto v = static_cast<std::uint32_t>(t);
        return v < 32 && (mask >> v & 1u) != 0;
    }
    std::string names() const {
        std::string s;
        for (std::uint32_t v = 1; v <= 13; ++v)
            if (mask >> v & 1u) s += (s.empty() ? "" : ", ") + std::string(name(static_cast<TensorDataType>(v)));
        return s;
    }
};

/// One row of a DirectML "Tensor support" table: dimension counts and types.
struct MemberSupport {
    std::uint32_t min_dims = 1;
    std::uint32_t max_dims = 8;
    TypeSet types;
};

namespace detail {

inline std::string sizes_str(const TensorDesc& d) {
    std::string s = "{";
    for (std::uint32_t i = 0; i < d.DimensionCount && i < kMaxDimensions; ++i)
        s += (i ? "," : "") + std::to_string(d.Sizes[i]);
    return s + "}";
}

/// Byte range [first, last) a validated tensor's elements span.
inline std::pair<std::uintptr_t, std::uintptr_t> byte_extent(const Tensor& t) {
    const auto first = reinterpret_cast<std::uintptr_t>(t.Data);
    return {first, first + byte_count(t.Desc.DataType, *min_buffer_elements(t.Desc))};
}

inline bool same_layout(const TensorDesc& a, const TensorDesc& b) {
    if (a.DataType != b.DataType || a.DimensionCount != b.DimensionCount) return false;
    const auto sa = effective_strides(a), sb = effective_strides(b);
    for (std::uint32_t i = 0; i < a.DimensionCount; ++i)
        if (a.Sizes[i] != b.Sizes[i] || sa[i] != sb[i]) return false;
    return true;
}

}  // namespace detail

/// Validation of one operator desc: every failure throws qdml::Error naming
/// the operator, the member and the rule.
class Validator {
public:
    Validator(std::string_view op, FeatureLevel level) : op_(op), level_(level) {}

    FeatureLevel level() const noexcept { return level_; }

    [[noreturn]] void fail(std::string_view member, const std::string& rule) const {
        throw Error(std::string(op_), std::string(member), rule);
    }

    /// Throws `member: rule` unless `ok`. A fixed rule is a string literal; a
    /// rule with values is a callable that formats it (below), so a rule that
    /// passes never builds a string (a std::string here would: it does not compile).
    void require(bool ok, std::string_view member, const char* rule) const {
        if (!ok) fail(member, rule);
    }
    /// The same with the rule's text made only on failure (`rule()` returns
    /// it): validation on every call formats no message when all is well.
    template <class Rule, class = std::enable_if_t<std::is_invocable_v<const Rule&>>>
    void require(bool ok, std::string_view member, const Rule& rule) const {
        if (!ok) fail(member, rule());
    }

    /// The operator exists at the target feature level.
    void available_since(FeatureLevel since) const {
        if (static_cast<std::uint32_t>(level_) < static_cast<std::uint32_t>(since))
            fail("operator", "requires DML_FEATURE_LEVEL " + to_string(since) + " (target is " +
                                 to_string(level_) + ")");
    }

    /// Structure of one bound tensor: type, rank, sizes, strides, sizes in
    /// bytes, alignment and binding (docs/semantics.md section 1).
    void tensor(std::string_view m, const Tensor& t, const MemberSupport& s) const {
        const TensorDesc& d = t.Desc;
        const auto lvl = [this] { return " (DML_FEATURE_LEVEL " + to_string(level_) + ")"; };
        require(element_bits(d.DataType) != 0, m, [&] {
            return detail::cat("DataType ", static_cast<std::uint32_t>(d.DataType), " is not a DML_TENSOR_DATA_TYPE");
        });
        require(s.types.contains(d.DataType), m, [&] {
            return detail::cat("DataType ", name(d.DataType), " is not supported; allowed: ", s.types.names(), lvl());
        });
        require((d.Flags & ~kTensorFlagOwnedByDml) == 0, m, [&] {
            return detail::cat("Flags ", d.Flags, " has bits DML_TENSOR_FLAGS does not define (only OWNED_BY_DML = 1)");
        });
        require(d.DimensionCount >= 1 && d.DimensionCount <= kMaxDimensions, m,
                [&] { return detail::cat("DimensionCount ", d.DimensionCount, " is outside 1..8"); });
        require(d.DimensionCount >= s.min_dims && d.DimensionCount <= s.max_dims, m, [&] {
            return detail::cat("DimensionCount ", d.DimensionCount, " is not supported; allowed: ", s.min_dims, "..",
                               s.max_dims, lvl());
        });
        for (std::uint32_t i = 0; i < d.DimensionCount; ++i)
            require(d.Sizes[i] >= 1, m, [&] { return detail::cat("Sizes[", i, "] is 0; every size must be >= 1"); });
        const auto count = element_count(d);
        require(count && *count <= 0xffffffffull, m,
                [&] { return "Sizes " + detail::sizes_str(d) + " hold more than 2^32-1 elements"; });
        const auto need = calc_buffer_tensor_size(d);
        require(need.has_value(), m, [&] { return "Strides make the buffer size overflow 64 bits"; });
        require(d.TotalTensorSizeInBytes >= *need, m, [&] {
            return detail::cat("TotalTensorSizeInBytes ", d.TotalTensorSizeInBytes,
                               " is below the minimum DMLCalcBufferTensorSize gives (", *need, ")");
        });
        const std::uint32_t es = element_alignment(d.DataType);
        const std::uint32_t al = d.GuaranteedBaseOffsetAlignment;
        require(al == 0 || ((al & (al - 1)) == 0 && al >= es), m, [&] {
            return detail::cat("GuaranteedBaseOffsetAlignment ", al, " must be 0 or a power of two >= ", es);
        });
        require(t.Data != nullptr, m, [&] { return "Data is null (no buffer bound)"; });
        const auto addr = reinterpret_cast<std::uintptr_t>(t.Data);
        require(addr % es == 0, m,
                [&] { return detail::cat("Data is not aligned to the element size (", es, " bytes)"); });
        require(al == 0 || addr % al == 0, m,
                [&] { return detail::cat("Data is not aligned to GuaranteedBaseOffsetAlignment ", al); });
        require(t.DataSizeInBytes == 0 || t.DataSizeInBytes >= d.TotalTensorSizeInBytes, m, [&] {
            return detail::cat("the bound buffer holds ", t.DataSizeInBytes,
                               " bytes, fewer than TotalTensorSizeInBytes ", d.TotalTensorSizeInBytes);
        });
    }

    void same_type(std::string_view m, const Tensor& t, std::string_view ref_m, const Tensor& ref) const {
        require(t.Desc.DataType == ref.Desc.DataType, m, [&] {
            return detail::cat("DataType ", name(t.Desc.DataType), " must equal ", ref_m, "'s DataType ",
                               name(ref.Desc.DataType));
        });
    }

    void same_dimension_count(std::string_view m, const Tensor& t, std::string_view ref_m, const Tensor& ref) const {
        require(t.Desc.DimensionCount == ref.Desc.DimensionCount, m, [&] {
            return detail::cat("DimensionCount ", t.Desc.DimensionCount, " must equal ", ref_m, "'s DimensionCount ",
                               ref.Desc.DimensionCount);
        });
    }

    /// Same DimensionCount and Sizes (element-wise operands; broadcast only
    /// through zero strides).
    void same_sizes(std::string_view m, const Tensor& t, std::string_view ref_m, const Tensor& ref) const {
        same_dimension_count(m, t, ref_m, ref);
        for (std::uint32_t i = 0; i < t.Desc.DimensionCount; ++i)
            require(t.Desc.Sizes[i] == ref.Desc.Sizes[i], m, [&] {
                return "Sizes " + detail::sizes_str(t.Desc) + " must equal " + std::string(ref_m) + "'s Sizes " +
                       detail::sizes_str(ref.Desc) + " (broadcast through zero Strides)";
            });
    }

    /// Exactly one element (a per-tensor scale or zero point).
    void one_element(std::string_view m, const Tensor& t) const {
        require(element_count(t.Desc).value_or(0) == 1, m,
                [&] { return "Sizes " + detail::sizes_str(t.Desc) + " must hold exactly one element (per-tensor)"; });
    }

    /// Output layout: bound to writable memory, not OWNED_BY_DML (DirectML:
    /// "only input tensors"), no stride 0 on a dimension
    /// of size > 1, no two elements at one address (decided exactly, see
    /// detail::offsets_distinct), and no overlap with any input unless
    /// `in_place_ok` and the input is the identical region.
    void output(std::string_view m, const Tensor& out,
                std::initializer_list<std::pair<std::string_view, const Tensor*>> inputs,
                bool in_place_ok = false) const {
        output<decltype(inputs)>(m, out, inputs, in_place_ok);
    }

    /// The same, for any range of (member name, tensor or null) pairs.
    template <class Inputs>
    void output(std::string_view m, const Tensor& out, const Inputs& inputs, bool in_place_ok = false) const {
        const TensorDesc& d = out.Desc;
        require(!out.ReadOnly, m,
                [&] { return "Data was bound through a const pointer; an output needs writable memory"; });
        require((d.Flags & kTensorFlagOwnedByDml) == 0, m,
                [&] { return "Flags has DML_TENSOR_FLAG_OWNED_BY_DML, which only input tensors may have"; });        const auto st = effective_strides(d);
        std::array<detail::StridedDim, kMaxDimensions> dims{};  // the dimensions of size > 1
        std::uint32_t n = 0;
        for (std::uint32_t i = 0; i < d.DimensionCount; ++i) {
            if (d.Sizes[i] == 1) continue;
            require(st[i] != 0, m, [&] {
                return detail::cat("Strides[", i, "] is 0 on a dimension of size ", d.Sizes[i],
                                   "; an output cannot broadcast");
            });
            dims[n++] = {st[i], d.Sizes[i]};
        }
        require(detail::offsets_distinct(dims, n), m,
                [&] { return "Strides make two output elements share one address"; });
        const auto [o0, o1] = detail::byte_extent(out);
        for (const auto& [im, in] : inputs) {
            if (in == nullptr) continue;
            const auto [i0, i1] = detail::byte_extent(*in);
            if (o0 >= i1 || i0 >= o1) continue;
            if (in_place_ok && out.Data == in->Data && detail::same_layout(d, in->Desc)) continue;
            fail(m, "overlaps " + std::string(im) +
                        (in_place_ok ? " (in place is allowed only on the identical region)" : ""));
        }
    }

private:
    std::string_view op_;
    FeatureLevel level_;
};

}  // namespace qdml
