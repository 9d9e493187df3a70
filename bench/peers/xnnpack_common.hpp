// bench/peers/xnnpack_common.hpp - what the XNNPACK peer rows share:
// initialisation once, and a Peer from a set-up operator (run on the
// calling thread: no pthreadpool).
#pragma once

#include <xnnpack.h>

#include <string>

#include "../support.hpp"

namespace qdml_bench::xnnpack {

/// True once xnn_initialize succeeded (false: this CPU is unsupported).
inline bool initialized() {
    static const bool ok = xnn_initialize(nullptr) == xnn_status_success;
    return ok;
}

/// A Peer from the statuses of create and setup: runs `op`, deletes it with
/// the row. `what` names the XNNPACK operator in the label.
inline Peer peer_of(xnn_status created, xnn_status set_up, xnn_operator_t op, const std::string& what) {
    Peer p;
    std::shared_ptr<xnn_operator> owner(op, [](xnn_operator_t o) {
        if (o) xnn_delete_operator(o);
    });
    if (!initialized() || created != xnn_status_success || set_up != xnn_status_success) {
        p.info = "XNNPACK cannot do this: " + what + " status " + std::to_string(created) + "/" +
                 std::to_string(set_up);
        return p;
    }
    p.call = [op] { xnn_run_operator(op, nullptr); };
    p.info = "xnnpack:" + what;
    p.keep = owner;
    return p;
}

}  // namespace qdml_bench::xnnpack
