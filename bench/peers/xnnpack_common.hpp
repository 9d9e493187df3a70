// bench/peers/xnnpack_common.hpp - what the XNNPACK peer rows share:
// initialisation once, the pthreadpool of the `/threads:N` rows, and a Peer
// from a set-up operator (run on the calling thread, no pthreadpool, unless
// the row's name says `/threads:N`).
#pragma once

#include <pthreadpool.h>
#include <xnnpack.h>

#include <map>
#include <memory>
#include <string>

#include "../support.hpp"

namespace qdml_bench::xnnpack {

/// True once xnn_initialize succeeded (false: this CPU is unsupported).
inline bool initialized() {
    static const bool ok = xnn_initialize(nullptr) == xnn_status_success;
    return ok;
}

/// The pthreadpool of the `/threads:N` rows: none (nullptr: the calling
/// thread) for N = 1, else pthreadpool_create(N), one per N, made on first use
/// and kept for the run. An operator is set up with the pool it runs on
/// (XNNPACK tiles its work by the pool's thread count at setup).
inline pthreadpool_t pool_of(unsigned threads) {
    if (threads <= 1) return nullptr;
    struct Destroy {
        void operator()(pthreadpool_t p) const { pthreadpool_destroy(p); }
    };
    static std::map<unsigned, std::unique_ptr<pthreadpool, Destroy>> pools;
    auto& pool = pools[threads];
    if (!pool) pool.reset(pthreadpool_create(threads));
    return pool.get();
}

/// A Peer from the statuses of create and setup: runs `op` on `pool` (the
/// one it was set up with), deletes it with the row. `what` names the
/// XNNPACK operator in the label (and the pool's threads, when there is one).
inline Peer peer_of(xnn_status created, xnn_status set_up, xnn_operator_t op, const std::string& what,
                    pthreadpool_t pool = nullptr) {
    Peer p;
    std::shared_ptr<xnn_operator> owner(op, [](xnn_operator_t o) {
        if (o) xnn_delete_operator(o);
    });
    if (!initialized() || created != xnn_status_success || set_up != xnn_status_success) {
        p.info = "XNNPACK cannot do this: " + what + " status " + std::to_string(created) + "/" +
                 std::to_string(set_up);
        return p;
    }
    p.call = [op, pool] { xnn_run_operator(op, pool); };
    p.info = "xnnpack:" + what;
    if (pool) p.info += " pthreadpool_threads=" + std::to_string(pthreadpool_get_threads_count(pool));
    p.keep = owner;
    return p;
}

}  // namespace qdml_bench::xnnpack
