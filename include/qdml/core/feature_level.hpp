// qdml/core/feature_level.hpp - DML_FEATURE_LEVEL mirror; a validation target
// narrows the allowed data types and dimension counts to that level's table.
#pragma once

#include "qdml/core/requires_cxx17.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace qdml {

/// Mirrors DML_FEATURE_LEVEL (same numeric values).
enum class FeatureLevel : std::uint32_t {
    L1_0 = 0x1000,
    L2_0 = 0x2000,
    L2_1 = 0x2100,
    L3_0 = 0x3000,
    L3_1 = 0x3100,
    L4_0 = 0x4000,
    L4_1 = 0x4100,
    L5_0 = 0x5000,
    L5_1 = 0x5100,
    L5_2 = 0x5200,
    L6_0 = 0x6000,
    L6_1 = 0x6100,
    L6_2 = 0x6200,
    L6_3 = 0x6300,
    L6_4 = 0x6400,
    Latest = L6_4,
};

/// "6.2" style name.
inline std::string to_string(FeatureLevel l) {
    const auto v = static_cast<std::uint32_t>(l);
    return std::to_string(v >> 12) + "." + std::to_string((v >> 8) & 0xf);
}

/// Parses "6.2" (or "6_2"); nullopt for a level DirectML does not define.
inline std::optional<FeatureLevel> parse_feature_level(std::string_view s) {
    if (s.size() != 3 || (s[1] != '.' && s[1] != '_') || s[0] < '1' || s[0] > '9' || s[2] < '0' || s[2] > '9')
        return std::nullopt;
    const auto v = static_cast<std::uint32_t>(((s[0] - '0') << 12) | ((s[2] - '0') << 8));
    for (auto l : {FeatureLevel::L1_0, FeatureLevel::L2_0, FeatureLevel::L2_1, FeatureLevel::L3_0,
                   FeatureLevel::L3_1, FeatureLevel::L4_0, FeatureLevel::L4_1, FeatureLevel::L5_0,
                   FeatureLevel::L5_1, FeatureLevel::L5_2, FeatureLevel::L6_0, FeatureLevel::L6_1,
                   FeatureLevel::L6_2, FeatureLevel::L6_3, FeatureLevel::L6_4})
        if (static_cast<std::uint32_t>(l) == v) return l;
    return std::nullopt;
}

}  // namespace qdml
