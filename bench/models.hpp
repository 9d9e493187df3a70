// bench/models.hpp - the model suite's registry (issue 29; rows in
// bench/models.cpp, layers in bench/models.txt): each peer file that can
// compute a network's layers adds, from its own registration, how it sets up
// one layer, under the implementation name its single-layer rows use; the
// model rows are registered in main() after every file's static set-up, one
// row per network and layout for qdml and for each implementation here that
// has all of that network's layers.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "problems.hpp"

namespace qdml_bench {

/// The matmul problem of every model layer: u8 activations, s8 weights (or
/// an s8 second activation: BERT's attention products), u8 output.
using ModelMatmul = MatmulProblem<std::uint8_t, std::int8_t, std::uint8_t>;

/// One implementation's model layers: `conv(p, threads)` sets up a
/// convolution in the layout of p.shape (one of `layouts`: "nhwc", "nchw");
/// `matmul(p, weights, threads)` a matmul whose B is a constant weight
/// (`weights`: it may be prepared outside the timed loop) or an activation
/// (computed from its plain layout in every call). Either may be empty.
/// `threads` is 1 for the unsuffixed row, else the `/threads:N` rows' N.
struct ModelImpl {
    std::vector<std::string> layouts;
    std::function<Peer(ConvProblem&, unsigned threads)> conv;
    std::function<Peer(ModelMatmul&, bool weights, unsigned threads)> matmul;
};

inline std::map<std::string, ModelImpl>& model_impls() {
    static std::map<std::string, ModelImpl> impls;
    return impls;
}

/// Adds `impl`'s convolutions in `layouts` (call from a peer file's registration).
inline void add_model_conv(const std::string& impl, std::vector<std::string> layouts,
                           std::function<Peer(ConvProblem&, unsigned)> conv) {
    auto& m = model_impls()[impl];
    m.layouts = std::move(layouts);
    m.conv = std::move(conv);
}

/// Adds `impl`'s matmuls.
inline void add_model_matmul(const std::string& impl, std::function<Peer(ModelMatmul&, bool, unsigned)> matmul) {
    model_impls()[impl].matmul = std::move(matmul);
}

/// Registers the `model/...` rows (bench/models.cpp); main() calls it.
void register_model_rows();

}  // namespace qdml_bench
