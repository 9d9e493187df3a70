// qdml/exec/openmp.hpp - a qdml::Executor over OpenMP (opt-in: include it,
// build with -fopenmp; g++'s libgomp, clang's libomp).
//
//     qdml::RunOptions o;
//     o.executor = qdml::exec::openmp();      // OpenMP's default team size
//     o.executor = qdml::exec::openmp(8);     // or 8 threads
//
// Each call is one `#pragma omp parallel for` over qdml's tasks. Called from
// inside an active parallel region (nested), the tasks run on the calling
// thread: qdml never asks for nested parallelism.
#pragma once

#if !defined(_OPENMP)
#error "qdml/exec/openmp.hpp needs OpenMP: compile with -fopenmp (g++, clang with libomp) or /openmp (MSVC)"
#endif

#include <omp.h>

#include <cstddef>
#include <cstdint>

#include "qdml/core/executor.hpp"

namespace qdml::exec {

/// OpenMP, `threads` threads a call (0: OpenMP's default, omp_get_max_threads()).
inline Executor openmp(int threads = 0) noexcept {
    const int n = threads > 0 ? threads : omp_get_max_threads();
    return Executor(
        reinterpret_cast<void*>(static_cast<std::uintptr_t>(n)),  // (the team size, carried in the pointer)
        [](void* pool, std::size_t count, Executor::Task task, void* context) {
            const auto team = static_cast<int>(reinterpret_cast<std::uintptr_t>(pool));
            const auto last = static_cast<std::int64_t>(count);
            if (omp_in_parallel() || team < 2) {
                for (std::int64_t i = 0; i < last; ++i) task(context, static_cast<std::size_t>(i));
                return;
            }
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
            for (std::int64_t i = 0; i < last; ++i) task(context, static_cast<std::size_t>(i));
        },
        static_cast<std::size_t>(n));
}

}  // namespace qdml::exec
