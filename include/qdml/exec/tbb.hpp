// qdml/exec/tbb.hpp - a qdml::Executor over oneTBB (opt-in: include it and
// link TBB; Debian's libtbb-dev).
//
//     tbb::task_arena arena(8);
//     qdml::RunOptions o;
//     o.executor = qdml::exec::tbb(arena);   // the tasks run in `arena`
//     o.executor = qdml::exec::tbb();        // or in the calling thread's arena
//
// Each call is one tbb::parallel_for over qdml's tasks (grain 1: they are
// already coarse). TBB nests: a call from inside a TBB task is fine.
#pragma once

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <cstddef>

#include "qdml/core/executor.hpp"

namespace qdml::exec {

namespace detail {
inline void tbb_loop(std::size_t count, Executor::Task task, void* context) {
    ::tbb::parallel_for(std::size_t{0}, count, [=](std::size_t i) { task(context, i); });
}
}  // namespace detail

/// oneTBB in `arena` (which must outlive the calls).
inline Executor tbb(::tbb::task_arena& arena) noexcept {
    return Executor(
        &arena,
        [](void* pool, std::size_t count, Executor::Task task, void* context) {
            static_cast<::tbb::task_arena*>(pool)->execute([&] { detail::tbb_loop(count, task, context); });
        },
        static_cast<std::size_t>(arena.max_concurrency()));
}

/// oneTBB in the calling thread's current arena.
inline Executor tbb() noexcept {
    return Executor(
        nullptr,  // (no state)
        [](void*, std::size_t count, Executor::Task task, void* context) { detail::tbb_loop(count, task, context); },
        static_cast<std::size_t>(::tbb::this_task_arena::max_concurrency()));
}

}  // namespace qdml::exec
