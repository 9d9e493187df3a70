// qdml/core/requires_cxx17.hpp - qdml needs C++17: an older standard gets
// this one error, and compilation stops here instead of failing later in
// a dozen places (<string_view>, inline variables, if constexpr).
#pragma once

#if (defined(_MSVC_LANG) && _MSVC_LANG < 201703L) || (!defined(_MSVC_LANG) && __cplusplus < 201703L)
#error "qdml requires C++17 or later: compile with -std=c++17 (Meson: cpp_std=c++17; CMake: cxx_std_17)"
#include <qdml_stops_here_because_cxx17_is_required>  // a missing include ends compilation at once
#endif
