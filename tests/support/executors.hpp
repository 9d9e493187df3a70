// tests/support/executors.hpp - the thread pools the multi-core tests run
// qdml on (core/executor.hpp): the programs' pool (tools/thread_pool.hpp)
// with 2, 3, 7, 16 and 64 threads; a shuffling executor (one thread, the
// tasks in a random order); a pool whose threads run each task in a foreign
// floating-point state (flush-to-zero, denormals-are-zero, rounding upward:
// as a pool created with pthreadpool's DISABLE_DENORMALS flag, or ONNX
// Runtime's denormal-as-zero option, leaves its workers); and a recording
// executor that keeps the task count of every parallel loop, to check that
// the task grid never depends on the pool.
#pragma once

#include <algorithm>
#include <cfenv>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "qdml/core/executor.hpp"
#include "support/fp_state.hpp"
#include "../../tools/thread_pool.hpp"

namespace qtest {

/// One thread, the tasks of each loop in a random order (seeded per loop).
struct ShuffleExecutor {
    std::uint64_t seed = 1;
    void parallel_for(std::size_t n, const std::function<void(std::size_t)>& f) {
        std::vector<std::size_t> order(n);
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::shuffle(order.begin(), order.end(), std::mt19937_64(seed++));
        for (std::size_t i : order) f(i);
    }
};

/// A pool whose threads (the calling one included) enter every task in
/// flush-to-zero + denormals-are-zero with rounding upward; the calling
/// thread's environment is restored after the loop.
struct ForeignFpExecutor {
    qdml::tools::ThreadPool& pool;
    void parallel_for(std::size_t n, const std::function<void(std::size_t)>& f) {
        std::fenv_t saved;
        std::fegetenv(&saved);
#if defined(__x86_64__) || defined(_M_X64)
        const unsigned int saved_mxcsr = _mm_getcsr();  // (MinGW-w64's fesetenv, under wine at least, restores the x87 state only)
#endif
        pool.parallel_for(n, [&](std::size_t i) {
            set_fp_state(FpState::FlushToZero);
            std::fesetround(FE_UPWARD);
            f(i);
        });
        std::fesetenv(&saved);
#if defined(__x86_64__) || defined(_M_X64)
        _mm_setcsr(saved_mxcsr);
#endif
    }
};

/// The task count of every loop, in order (run on the calling thread).
struct RecordingExecutor {
    std::mutex m;
    std::vector<std::size_t> counts;
    void parallel_for(std::size_t n, const std::function<void(std::size_t)>& f) {
        {
            const std::lock_guard<std::mutex> lock(m);
            counts.push_back(n);
        }
        for (std::size_t i = 0; i < n; ++i) f(i);
    }
};

/// Every executor of the tests, by name (made once per test program).
class TestExecutors {
public:
    TestExecutors() {
        for (std::size_t t : {2, 3, 7, 16, 64}) pools_.push_back(std::make_unique<qdml::tools::ThreadPool>(t));
        for (auto& p : pools_) all_.emplace_back("pool of " + std::to_string(p->size()), p->executor());
        all_.emplace_back("shuffled", qdml::make_executor(shuffle_, 1));
        all_.emplace_back("pool of 3 in a foreign fp state", qdml::make_executor(foreign_, 3));
    }
    const std::vector<std::pair<std::string, qdml::Executor>>& all() const { return all_; }
    /// The k-th of all(), cycling.
    const std::pair<std::string, qdml::Executor>& at(std::size_t k) const { return all_[k % all_.size()]; }

private:
    std::vector<std::unique_ptr<qdml::tools::ThreadPool>> pools_;
    ShuffleExecutor shuffle_;
    qdml::tools::ThreadPool foreign_pool_{3};
    ForeignFpExecutor foreign_{foreign_pool_};
    std::vector<std::pair<std::string, qdml::Executor>> all_;
};

inline const TestExecutors& test_executors() {
    static const TestExecutors e;
    return e;
}

}  // namespace qtest
