// tools/thread_pool.hpp - the fork-join pool of qdml's own programs (the
// runner's --threads, the Python module's threads=, the tests and
// qdml-bench's /threads:N rows), given to the library through
// qdml::make_executor like any caller's pool. Not part of the library: qdml
// itself creates no thread (include/qdml/core/executor.hpp).
//
// Plain std::thread, so the same code builds with g++, clang, MinGW and
// MSVC, and a Python process gets no OpenMP runtime of ours to clash with
// PyTorch's or NumPy's. `threads` counts the calling thread, which takes
// tasks too: ThreadPool(2) starts one worker. Workers wait on a condition
// variable (no CPU burnt between calls). One parallel_for at a time: a call
// made while the pool is busy (another thread's, or from inside one of the
// pool's tasks) runs inline on its own thread, so threads that share a pool
// never oversubscribe the cores or wait for each other.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "qdml/core/executor.hpp"

namespace qdml::tools {

class ThreadPool {
public:
    explicit ThreadPool(std::size_t threads) : threads_(threads == 0 ? 1 : threads) {
        for (std::size_t t = 1; t < threads_; ++t) workers_.emplace_back([this] { work(); });
    }
    ~ThreadPool() {
        {
            const std::lock_guard<std::mutex> lock(m_);
            stop_ = true;
            ++generation_;
        }
        wake_.notify_all();
        for (auto& w : workers_) w.join();
    }
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    std::size_t size() const noexcept { return threads_; }

    /// Calls fn(i) once for every i in [0, n), on the pool's threads and the
    /// calling one; returns when all have returned.
    void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
        if (workers_.empty() || n < 2 || current() == this) {
            for (std::size_t i = 0; i < n; ++i) fn(i);
            return;
        }
        std::unique_lock<std::mutex> one_at_a_time(call_, std::try_to_lock);
        if (!one_at_a_time.owns_lock()) {  // busy with another thread's call: this one runs on its own thread
            for (std::size_t i = 0; i < n; ++i) fn(i);
            return;
        }
        {
            const std::lock_guard<std::mutex> lock(m_);
            fn_ = &fn;
            n_ = n;
            next_.store(0, std::memory_order_relaxed);
            busy_ = workers_.size();
            ++generation_;
        }
        wake_.notify_all();
        drain(fn, n);
        std::unique_lock<std::mutex> lock(m_);
        done_.wait(lock, [this] { return busy_ == 0; });
        fn_ = nullptr;
    }

    /// The pool as a qdml::Executor (it must outlive the calls).
    Executor executor() { return make_executor(*this, threads_); }

private:
    /// The pool whose task this thread is running, if any.
    static const ThreadPool*& current() noexcept {
        static thread_local const ThreadPool* pool = nullptr;
        return pool;
    }

    void drain(const std::function<void(std::size_t)>& fn, std::size_t n) {
        const ThreadPool* outer = current();
        current() = this;
        struct Restore {
            const ThreadPool* outer;
            ~Restore() { current() = outer; }
        } restore{outer};
        for (;;) {
            const std::size_t i = next_.fetch_add(1, std::memory_order_relaxed);
            if (i >= n) return;
            fn(i);
        }
    }

    void work() {
        std::uint64_t seen = 0;
        for (;;) {
            const std::function<void(std::size_t)>* fn = nullptr;
            std::size_t n = 0;
            {
                std::unique_lock<std::mutex> lock(m_);
                wake_.wait(lock, [&] { return generation_ != seen; });
                seen = generation_;
                if (stop_) return;
                fn = fn_;
                n = n_;
            }
            drain(*fn, n);
            {
                const std::lock_guard<std::mutex> lock(m_);
                if (--busy_ == 0) done_.notify_one();
            }
        }
    }

    std::size_t threads_;
    std::vector<std::thread> workers_;
    std::mutex call_, m_;
    std::condition_variable wake_, done_;
    const std::function<void(std::size_t)>* fn_ = nullptr;
    std::size_t n_ = 0, busy_ = 0;
    std::uint64_t generation_ = 0;
    std::atomic<std::size_t> next_{0};
    bool stop_ = false;
};

}  // namespace qdml::tools
