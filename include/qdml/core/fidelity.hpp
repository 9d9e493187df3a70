// qdml/core/fidelity.hpp - the two profiles (docs/semantics.md section 10):
// `Exact`, the exactly specified arithmetic and rules of sections 0-9, and
// `DirectML`, DirectML 1.15.4's own arithmetic and refusals, bit for bit, as
// measured with DirectML itself (tools/directml, tests/data/directml).
#pragma once

#include "qdml/core/requires_cxx17.hpp"  // first: a C++14 build stops here with one clear error

#include <optional>
#include <string_view>

namespace qdml {

/// Which answer qdml gives where DirectML and the exact rules differ.
enum class Fidelity {
    Exact,     ///< docs/semantics.md sections 0-9: exact integer differences, the documented float order
    DirectML,  ///< DirectML's bits and refusals (docs/semantics.md section 10)
};

/// The profile every entry computes unless told otherwise (qdml::RunOptions,
/// qdml::dml::ExecuteOptions, the typed reference and SIMD calls, the runner,
/// Python): DirectML's answer, which is what qdml's users ask for.
inline constexpr Fidelity kDefaultFidelity = Fidelity::DirectML;

inline constexpr std::string_view to_string(Fidelity f) noexcept {
    return f == Fidelity::DirectML ? "directml" : "exact";
}

/// "directml" or "exact"; nothing for anything else.
inline std::optional<Fidelity> parse_fidelity(std::string_view s) noexcept {
    if (s == "directml") return Fidelity::DirectML;
    if (s == "exact") return Fidelity::Exact;
    return std::nullopt;
}

}  // namespace qdml
