// qdml/core/executor.hpp - qdml on many cores, through the caller's thread pool.
//
// qdml never creates a thread. A call computes on the calling thread unless
// it is given an Executor: a type-erased fork-join loop over the caller's
// own engine (OpenMP, oneTBB, pthreadpool: the opt-in headers qdml/exec/*.hpp;
// any object with parallel_for(n, fn): make_executor below).
//
// The determinism contract (docs/semantics.md section 0, docs/threads.md):
// a call cuts its work into tasks by the shapes, strides, ISA path and fixed
// grain constants only, never by the executor or its number of workers;
// each output element is written by exactly one task; no task reads
// another's output. So 1, 2 or 64 workers, in any order, give the bits of
// the calling thread alone, which are the reference's.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <type_traits>
#include <utility>

#include "qdml/core/fp_env.hpp"

namespace qdml {

/// A thread pool's fork-join loop, type-erased (trivially copyable, no
/// allocation): run(count, task, context) must call task(context, i) exactly
/// once for every i in [0, count), on any threads, concurrently or not, in
/// any order, and return when all have returned. A task never throws (qdml
/// catches inside and rethrows on the calling thread after run returns).
/// The default Executor is the calling thread alone.
///
/// workers() is a hint for what the caller reports (the benchmark rows);
/// qdml never partitions by it.
class Executor {
public:
    using Task = void (*)(void* context, std::size_t index);
    using Run = void (*)(void* pool, std::size_t count, Task task, void* context);

    /// The calling thread only.
    constexpr Executor() noexcept = default;
    /// `run(pool, count, task, context)` over `pool` (which must outlive
    /// every call given this Executor); `workers`: the pool's threads.
    constexpr Executor(void* pool, Run run, std::size_t workers) noexcept
        : pool_(pool), run_(run), workers_(run == nullptr || workers == 0 ? 1 : workers) {}

    /// Whether every task runs on the calling thread (no pool).
    constexpr bool calling_thread_only() const noexcept { return run_ == nullptr; }
    constexpr std::size_t workers() const noexcept { return workers_; }
    /// Runs the loop on the pool (precondition: !calling_thread_only()).
    void run(std::size_t count, Task task, void* context) const { run_(pool_, count, task, context); }

private:
    void* pool_ = nullptr;
    Run run_ = nullptr;
    std::size_t workers_ = 1;
};

/// An Executor over any pool object with a fork-join `parallel_for(n, fn)`
/// that calls fn(i) (ONNX Runtime's ThreadPool::TrySimpleParallelFor shape,
/// a TBB-like wrapper of your own) or fn(i, n) (oneDNN's
/// threadpool_iface::parallel_for) once for every i in [0, n) and returns
/// when all have finished. `pool` must outlive the Executor's calls;
/// `workers` is the pool's thread count (a hint, never used to partition).
template <class Pool>
Executor make_executor(Pool& pool, std::size_t workers) noexcept {
    return Executor(
        static_cast<void*>(&pool),
        [](void* p, std::size_t count, Executor::Task task, void* context) {
            static_cast<Pool*>(p)->parallel_for(count, [task, context](auto i, auto...) {
                task(context, static_cast<std::size_t>(i));
            });
        },
        workers);
}

namespace detail {

/// How many qdml tasks this thread is running (nested qdml calls made from
/// inside one compute on this thread: a pool is never re-entered by qdml).
inline int& task_depth() noexcept {
    static thread_local int depth = 0;
    return depth;
}

/// Calls f(i) for every i in [0, n) through `ex`: inline on the calling
/// thread when `ex` has no pool, when n < 2, or when this thread is already
/// running a qdml task; else as n tasks of the pool, each in qdml's
/// floating-point environment (a pool's worker may be in any state:
/// pthreadpool's DISABLE_DENORMALS flag, ONNX Runtime's denormal-as-zero
/// option). The first exception a task throws is rethrown here, after
/// every task has returned (tasks after it do nothing).
template <class F>
void parallel_for(const Executor& ex, std::size_t n, F&& f) {
    if (n == 0) return;
    if (n == 1 || ex.calling_thread_only() || task_depth() > 0) {
        for (std::size_t i = 0; i < n; ++i) f(i);
        return;
    }
    using Fn = std::remove_reference_t<F>;
    struct Context {
        explicit Context(Fn* fn) noexcept : f(fn) {}
        Fn* f;
        std::atomic<bool> failed{false};
        std::mutex m;
        std::exception_ptr error;
    } context(&f);
    ex.run(
        n,
        [](void* c, std::size_t i) {
            auto& ctx = *static_cast<Context*>(c);
            if (ctx.failed.load(std::memory_order_relaxed)) return;
            const FpEnvironment fp;
            ++task_depth();
            try {
                (*ctx.f)(i);
            } catch (...) {
                const std::lock_guard<std::mutex> lock(ctx.m);
                if (!ctx.error) ctx.error = std::current_exception();
                ctx.failed.store(true, std::memory_order_relaxed);
            }
            --task_depth();
        },
        &context);
    if (context.error) std::rethrow_exception(context.error);
}

}  // namespace detail
}  // namespace qdml
