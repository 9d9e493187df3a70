// libFuzzer target: the .npy parser of the case runner. Any byte string must
// either parse into an array whose bytes match its shape, or be rejected
// with an InputError; nothing else (crash, leak, sanitizer report).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "npy.hpp"

namespace {
constexpr qdml::TensorDataType kTypes[] = {
    qdml::TensorDataType::Float32, qdml::TensorDataType::Float16, qdml::TensorDataType::UInt32,
    qdml::TensorDataType::UInt16,  qdml::TensorDataType::UInt8,   qdml::TensorDataType::Int32,
    qdml::TensorDataType::Int16,   qdml::TensorDataType::Int8,    qdml::TensorDataType::Float64,
    qdml::TensorDataType::UInt64,  qdml::TensorDataType::Int64};
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const auto type = kTypes[data[0] % (sizeof kTypes / sizeof kTypes[0])];
    const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        const auto a = qdml::cli::parse_npy(bytes, "fuzz.npy", type);
        if (a.bytes.size() != a.count * qdml::element_size(type)) std::abort();
        // Round trip: what we write must parse back to the same array.
        const auto again = qdml::cli::parse_npy(qdml::cli::format_npy(type, a.shape, a.bytes), "round-trip.npy", type);
        if (again.shape != a.shape || again.bytes != a.bytes) std::abort();
    } catch (const qdml::cli::InputError& e) {
        if (std::string_view(e.what()).empty()) std::abort();
    }
    return 0;
}
