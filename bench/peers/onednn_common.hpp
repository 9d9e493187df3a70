// bench/peers/onednn_common.hpp - what the oneDNN peer rows share: one CPU
// engine and stream, memory over qdml-bench's buffers, a Peer from a
// primitive (its impl_info_str in the label), and the OpenMP thread count of
// the `/threads:N` rows.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include "../support.hpp"

// oneDNN's OpenMP (main.cpp sets it to 1 thread); weak, so the binary needs
// no OpenMP when no peer brings it.
extern "C" void omp_set_num_threads(int) __attribute__((weak));
extern "C" int omp_get_max_threads() __attribute__((weak));

namespace qdml_bench::onednn {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

inline dnnl::engine& engine() {
    static dnnl::engine e(dnnl::engine::kind::cpu, 0);
    return e;
}
inline dnnl::stream& stream() {
    static dnnl::stream s(engine());
    return s;
}

template <class T>
constexpr dt data_type() {
    if constexpr (std::is_same_v<T, float>) return dt::f32;
    else if constexpr (std::is_same_v<T, qdml::float16>) return dt::f16;
    else if constexpr (std::is_same_v<T, std::int8_t>) return dt::s8;
    else if constexpr (std::is_same_v<T, std::uint8_t>) return dt::u8;
    else return dt::s32;
}

template <class T>
memory make_memory(const memory::dims& dims, tag layout, T* data) {
    return memory({dims, data_type<T>(), layout}, engine(), const_cast<std::remove_const_t<T>*>(data));
}

/// A Peer that executes `prim` with `args`; the label names oneDNN's choice.
inline Peer peer_of(dnnl::primitive prim, std::unordered_map<int, memory> args, const char* impl_info) {
    Peer p;
    auto state = std::make_shared<std::pair<dnnl::primitive, std::unordered_map<int, memory>>>(prim, std::move(args));
    p.call = [s = state.get()] {
        s->first.execute(stream(), s->second);
        stream().wait();
    };
    p.info = std::string("onednn:") + impl_info;
    p.keep = state;
    return p;
}

/// A Peer whose set-up failed: the row is skipped with oneDNN's message.
inline Peer unsupported(const dnnl::error& e) {
    Peer p;
    p.info = std::string("oneDNN cannot do this: ") + e.what();
    return p;
}

/// oneDNN's OpenMP at `threads` threads while this lives, back to 1 (every
/// unsuffixed row's setting, main.cpp) after.
struct OmpThreads {
    explicit OmpThreads(unsigned threads) { omp_set_num_threads(static_cast<int>(threads)); }
    ~OmpThreads() { omp_set_num_threads(1); }
    OmpThreads(const OmpThreads&) = delete;
    OmpThreads& operator=(const OmpThreads&) = delete;
};

/// A `/threads:N` row's set-up from a one-thread `make(p)`: oneDNN's
/// OpenMP at `threads` threads from the primitive's creation (oneDNN splits
/// a primitive's work by the thread count it sees then) through the timed
/// calls, back to 1 when the row ends (with the Peer); the label says the
/// OpenMP thread count oneDNN saw. When oneDNN's CPU runtime is not OpenMP
/// (its threads are not ours to set), N > 1 is skipped and N = 1 is the
/// unsuffixed row.
template <class P, class Make>
auto on_threads(unsigned threads, Make make) {
    return [threads, make](P& p) {
        if (dnnl::version()->cpu_runtime != DNNL_RUNTIME_OMP || !omp_set_num_threads || !omp_get_max_threads) {
            if (threads <= 1) return make(p);
            Peer peer;
            peer.info = "oneDNN's CPU runtime is not OpenMP: its thread count is not set by qdml-bench";
            return peer;
        }
        auto omp = std::make_shared<OmpThreads>(threads);
        const int seen = omp_get_max_threads();
        Peer peer = make(p);
        peer.info += " omp_threads=" + std::to_string(seen);
        peer.keep = std::make_shared<std::pair<std::shared_ptr<void>, std::shared_ptr<OmpThreads>>>(
            std::move(peer.keep), std::move(omp));
        return peer;
    };
}

}  // namespace qdml_bench::onednn
