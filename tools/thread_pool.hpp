// tools/thread_pool.hpp - the fork-join pool of qdml's own programs (the
// runner's --threads, the Python module's threads=, the tests and
// qdml-bench's /threads:N rows), given to the library through
// qdml::make_executor like any caller's pool. Not part of the library: qdml
// itself creates no thread (include/qdml/core/executor.hpp).
//
// Plain std::thread, so the same code builds with g++, clang, MinGW and
// MSVC, and a Python process gets no OpenMP runtime of ours to clash with
// PyTorch's or NumPy's. `threads` counts the calling thread, which takes
// tasks too: ThreadPool(2) starts one worker. A worker done with a loop polls
// for the next one for 100 us, then sleeps on a condition variable (no CPU
// burnt by an idle pool). One parallel_for at a time: a call
// made while the pool is busy (another thread's, or from inside one of the
// pool's tasks) runs inline on its own thread, so threads that share a pool
// never oversubscribe the cores or wait for each other.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "qdml/core/executor.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>  // _mm_pause
#endif

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
            generation_.fetch_add(1, std::memory_order_release);
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
        fn_ = &fn;
        n_ = n;
        next_.store(0, std::memory_order_relaxed);
        busy_.store(workers_.size(), std::memory_order_relaxed);
        {
            const std::lock_guard<std::mutex> lock(m_);  // (a worker about to sleep sees the new generation)
            generation_.fetch_add(1, std::memory_order_release);
        }
        wake_.notify_all();
        drain(fn, n);
        if (!spin_until([this] { return busy_.load(std::memory_order_acquire) == 0; })) {
            std::unique_lock<std::mutex> lock(m_);
            done_.wait(lock, [this] { return busy_.load(std::memory_order_acquire) == 0; });
        }
        fn_ = nullptr;
    }

    /// The pool as a qdml::Executor (it must outlive the calls).
    Executor executor() { return make_executor(*this, threads_); }

private:
    /// How long a thread polls before it sleeps on a condition variable:
    /// back-to-back calls (a network's layers) find the workers awake, and
    /// an idle pool burns no CPU after that.
    static constexpr std::chrono::microseconds kSpin{100};

    /// Polls `ready` for up to kSpin; whether it became true.
    template <class Ready>
    static bool spin_until(Ready&& ready) {
        const auto until = std::chrono::steady_clock::now() + kSpin;
        for (unsigned i = 0;; ++i) {
            if (ready()) return true;
            if (i % 64 == 63 && std::chrono::steady_clock::now() > until) return false;
#if defined(__x86_64__) || defined(_M_X64)
            _mm_pause();
#endif
        }
    }

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
            const auto fresh = [&] { return generation_.load(std::memory_order_acquire) != seen; };
            if (!spin_until(fresh)) {
                std::unique_lock<std::mutex> lock(m_);
                wake_.wait(lock, fresh);
            }
            seen = generation_.load(std::memory_order_acquire);
            if (stop_) return;
            drain(*fn_, n_);
            if (busy_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                { const std::lock_guard<std::mutex> lock(m_); }  // (the caller is either before its check or asleep)
                done_.notify_one();
            }
        }
    }

    std::size_t threads_;
    std::vector<std::thread> workers_;
    std::mutex call_, m_;
    std::condition_variable wake_, done_;
    const std::function<void(std::size_t)>* fn_ = nullptr;
    std::size_t n_ = 0;
    std::atomic<std::size_t> busy_{0}, next_{0};
    std::atomic<std::uint64_t> generation_{0};
    bool stop_ = false;
};

}  // namespace qdml::tools
