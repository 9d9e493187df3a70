// qdml/exec/pthreadpool.hpp - a qdml::Executor over pthreadpool (XNNPACK's
// pool; opt-in: include it and link pthreadpool, Debian's libpthreadpool-dev).
//
//     pthreadpool_t pool = pthreadpool_create(8);
//     qdml::RunOptions o;
//     o.executor = qdml::exec::pthreadpool(pool);
//
// Each call is one pthreadpool_parallelize_1d over qdml's tasks. pthreadpool
// is not reentrant: a task of `pool` must not call qdml with an executor on
// the same pool (pass qdml::Executor{} there); qdml's own tasks never do.
// A pool created with PTHREADPOOL_FLAG_DISABLE_DENORMALS is fine: each task
// sets qdml's floating-point environment.
#pragma once

#include <pthreadpool.h>

#include <cstddef>

#include "qdml/core/executor.hpp"

namespace qdml::exec {

/// pthreadpool `pool` (which must outlive the calls; nullptr: the calling thread).
inline Executor pthreadpool(pthreadpool_t pool) noexcept {
    if (pool == nullptr) return Executor{};
    return Executor(
        pool,
        [](void* p, std::size_t count, Executor::Task task, void* context) {
            pthreadpool_parallelize_1d(static_cast<pthreadpool_t>(p), task, context, count, 0);
        },
        pthreadpool_get_threads_count(pool));
}

}  // namespace qdml::exec
