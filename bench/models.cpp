// The model suite of qdml-bench (issue 29): `model/<impl>/u8s8u8/<network>`
// rows, each the time of one pass over every convolution or matmul of a
// network at batch 1 (bench/models.txt: ResNet-50 v1.5 and MobileNetV2 1.0
// at 224 x 224, `_nhwc` and `_nchw`; BERT-base at sequence length 128), the
// layers called back to back, each layer instance with its own input,
// weights and output. OPS = the sum of the layers' OPS (BENCH.md).
//   qdml        the prepared operators (qdml::Compiled): weights flagged
//               constant (DML_TENSOR_FLAG_OWNED_BY_DML) and packed once
//               outside the timed loop, as conv/simd_prepared and
//               matmul/simd_prepared; BERT's attention products (B an
//               activation) compiled without the flag, so B is read from
//               its plain layout in every call.
//   <peer>      each implementation that added its layers to the registry
//               (bench/models.hpp) and has all of the network's layers:
//               onednn (NHWC convolutions, matmuls), onednn_e2e (NCHW
//               convolutions with their reorders timed), xnnpack (NHWC
//               convolutions).
//   .../threads:N  the same on N worker threads (N > 1 of thread_counts()).
// Expected outputs: one pass of qdml's prepared operators on one thread,
// before any row is timed (the scalar reference would take minutes for these
// 30 GOP; the suite's tests hold the SIMD paths bit-identical to it); the
// label counts every other row's output elements that differ from them.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "models.hpp"
#include "qdml/simd/quantized_linear_convolution_prepared.hpp"
#include "qdml/simd/quantized_linear_matrix_multiply_prepared.hpp"

#ifndef QDML_BENCH_MODELS
#error "QDML_BENCH_MODELS: the path of bench/models.txt (bench/meson.build defines it)"
#endif

namespace qdml_bench {
namespace {

/// One line of bench/models.txt: `count` layers of one shape.
struct ModelLayer {
    bool conv = true;
    ConvShape c{};
    MatmulShape m{};
    bool weights = true;  ///< a matmul's B is a constant weight
    unsigned count = 1;
};

struct Network {
    std::string name;
    std::vector<ModelLayer> layers;  ///< in file order
    bool has_conv = false, has_matmul = false;
};

/// bench/models.txt, parsed; a malformed line stops qdml-bench with its
/// line number and the rule it breaks.
std::vector<Network> load_models() {
    std::ifstream in(QDML_BENCH_MODELS);
    if (!in) throw std::runtime_error(std::string("qdml-bench: cannot read ") + QDML_BENCH_MODELS);
    std::vector<Network> nets;
    std::string line;
    for (unsigned number = 1; std::getline(in, line); ++number) {
        const auto hash = line.find('#');
        if (hash != std::string::npos) line.resize(hash);
        std::istringstream words(line);
        std::string net, op;
        if (!(words >> net)) continue;
        const auto fail = [&](const std::string& why) {
            throw std::runtime_error(std::string(QDML_BENCH_MODELS) + ":" + std::to_string(number) + ": " + why);
        };
        ModelLayer l;
        std::uint32_t v[6] = {};
        if (!(words >> op >> l.count) || l.count == 0) fail("expected '<network> conv|matmul <count >= 1> ...'");
        const int numbers = op == "conv" ? 6 : 5;  // (see the file's header)
        for (int i = 0; i < numbers; ++i)
            if (!(words >> v[i])) fail("expected " + std::to_string(numbers) + " numbers after the count");
        std::string extra;
        if (words >> extra) fail("more than " + std::to_string(numbers) + " numbers after the count");
        if (op == "conv") {
            l.c = ConvShape{v[0], v[1], v[2], v[3], v[4], v[5], false};
            if (v[0] % 2 == 0 || v[4] == 0 || v[5] == 0 || v[1] % v[5] != 0 || v[2] % v[5] != 0 || v[3] < v[0])
                fail("conv: k odd, stride >= 1, groups dividing cin and cout, hw >= k");
        } else if (op == "matmul") {
            l.conv = false;
            l.m = MatmulShape{v[0], v[1], v[2], v[3]};
            l.weights = v[4] != 0;
            if (v[0] == 0 || v[1] == 0 || v[2] == 0 || v[3] == 0 || v[4] > 1)
                fail("matmul: batch, m, n, k >= 1; weights 0 or 1");
        } else {
            fail("the operation is 'conv' or 'matmul', not '" + op + "'");
        }
        if (nets.empty() || nets.back().name != net) {
            for (const Network& n : nets)
                if (n.name == net) fail("network '" + net + "' continues after another network's lines");
            nets.push_back({net, {}, false, false});
        }
        (l.conv ? nets.back().has_conv : nets.back().has_matmul) = true;
        nets.back().layers.push_back(l);
    }
    return nets;
}

const std::vector<Network>& models() {
    static const std::vector<Network> nets = load_models();
    return nets;
}

/// A convolution with its filter constant, prepared once (conv/simd_prepared).
Peer qdml_conv(ConvProblem& p, unsigned threads) {
    auto desc = std::make_shared<qdml::QuantizedLinearConvolutionDesc>(p.desc);
    desc->FilterTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
    return compiled_peer(desc, threads);
}

/// A matmul, prepared; B flagged constant only when it is a weight.
Peer qdml_matmul(ModelMatmul& p, bool weights, unsigned threads) {
    auto desc = std::make_shared<qdml::QuantizedLinearMatrixMultiplyDesc>(p.desc);
    if (weights) desc->BTensor.Desc.Flags = qdml::kTensorFlagOwnedByDml;
    return compiled_peer(desc, threads);
}

/// One network's layers in one layout, built (with their expected outputs)
/// on first use and kept while rows of the same network and layout run.
struct ModelProblems {
    std::vector<std::unique_ptr<ConvProblem>> convs;
    std::vector<std::unique_ptr<ModelMatmul>> matmuls;
    std::vector<bool> matmul_weights;
    double ops = 0;
    std::size_t outputs = 0;

    ModelProblems(const Network& net, bool nhwc) {
        for (const ModelLayer& l : net.layers)
            for (unsigned i = 0; i < l.count; ++i) {
                if (l.conv) {
                    convs.push_back(std::make_unique<ConvProblem>(l.c.with_layout(nhwc), false));
                    ConvProblem& p = *convs.back();
                    qdml_conv(p, 1).call();
                    p.expected = p.output;
                    ops += p.ops();
                    outputs += p.output.size();
                } else {
                    matmuls.push_back(std::make_unique<ModelMatmul>(l.m.batch, l.m.m, l.m.n, l.m.k, false));
                    matmul_weights.push_back(l.weights);
                    ModelMatmul& p = *matmuls.back();
                    qdml_matmul(p, l.weights, 1).call();
                    p.expected = p.output;
                    ops += p.ops();
                    outputs += p.output.size();
                }
            }
    }
};

ModelProblems& problems_of(const Network& net, bool nhwc) {
    static std::unique_ptr<ModelProblems> current;
    static std::string key;
    const std::string k = net.name + (nhwc ? "_nhwc" : "_nchw");
    if (!current || key != k) {
        current.reset();
        current = std::make_unique<ModelProblems>(net, nhwc);
        key = k;
    }
    return *current;
}

/// Poisons a problem's output (so that an element a peer leaves alone counts).
template <class P>
void poison(P& p) {
    std::memset(static_cast<void*>(p.output.data()), 0xA5, p.output.size() * sizeof(p.output[0]));
}

/// QDML_BENCH_LAYERS set: each layer's own time (the median of 9 calls, after
/// the row's timed loop), one CSV line per layer on stderr: row, layer index,
/// shape, OPS, microseconds, the path or primitive (the per-layer table of
/// docs/perf/models.md).
void print_layers(const std::string& row, const ModelProblems& mp, const std::vector<Peer>& peers) {
    std::size_t i = 0;
    const auto one = [&](const std::string& shape, double ops) {
        std::vector<double> us;
        for (int r = 0; r < 9; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            peers[i].call();
            us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(us.begin(), us.end());
        std::fprintf(stderr, "layer,%s,%zu,%s,%.0f,%.2f,%s\n", row.c_str(), i, shape.c_str(), ops, us[4],
                     peers[i].info.c_str());
        ++i;
    };
    for (const auto& p : mp.convs) one(p->shape.name(), p->ops());
    for (const auto& p : mp.matmuls) one(MatmulShape{p->batch, p->M, p->N, p->K}.name(), p->ops());
}

/// The row of `impl` (its conv and matmul set-ups) over `net` in `nhwc`.
void model_row(benchmark::State& s, const std::string& row, const Network& net, bool nhwc, const ModelImpl& impl,
               unsigned threads) {
    ModelProblems& mp = problems_of(net, nhwc);
    std::vector<Peer> peers;
    std::string info;
    for (auto& p : mp.convs) {
        poison(*p);
        peers.push_back(impl.conv(*p, threads));
    }
    for (std::size_t i = 0; i < mp.matmuls.size(); ++i) {
        poison(*mp.matmuls[i]);
        peers.push_back(impl.matmul(*mp.matmuls[i], mp.matmul_weights[i], threads));
    }
    for (const Peer& peer : peers) {
        if (!peer.call) {
            s.SkipWithError(("a layer cannot run: " + peer.info).c_str());
            return;
        }
        if (info.find(peer.info) == std::string::npos) info += (info.empty() ? "" : ", ") + peer.info;
    }
    for (const Peer& peer : peers) peer.call();
    std::size_t bad = 0;
    for (auto& p : mp.convs) bad += count_mismatches(p->output.data(), p->expected.data(), p->output.size());
    for (auto& p : mp.matmuls) bad += count_mismatches(p->output.data(), p->expected.data(), p->output.size());
    for (auto _ : s) {
        for (const Peer& peer : peers) peer.call();
        benchmark::ClobberMemory();
    }
    if (const char* dump = std::getenv("QDML_BENCH_LAYERS"); dump && *dump) print_layers(row, mp, peers);
    s.SetLabel(std::to_string(peers.size()) + " layers: " + peer_label(info, bad, mp.outputs));
    s.counters["mismatches"] = static_cast<double>(bad);
    set_ops_counter(s, mp.ops);
}

}  // namespace

void register_model_rows() {
    std::map<std::string, ModelImpl> impls = model_impls();
    impls["qdml"] = ModelImpl{{"nhwc", "nchw"}, qdml_conv, qdml_matmul};
    std::vector<unsigned> counts{1};
    for (const unsigned t : thread_counts())
        if (t > 1) counts.push_back(t);
    for (const Network& net : models())
        for (const char* layout : {"nhwc", "nchw"}) {
            if (!net.has_conv && std::string(layout) == "nchw") continue;  // (no layout: one row)
            for (const auto& [name, impl] : impls) {
                if ((net.has_conv && !impl.conv) || (net.has_matmul && !impl.matmul)) continue;
                if (net.has_conv && std::find(impl.layouts.begin(), impl.layouts.end(), layout) == impl.layouts.end())
                    continue;
                const bool nhwc = std::string(layout) == "nhwc";
                const std::string row =
                    "model/" + name + "/u8s8u8/" + net.name + (net.has_conv ? std::string("_") + layout : "");
                for (const unsigned threads : counts) {
                    const std::string full = row + (threads > 1 ? threads_suffix(threads) : "");
                    add_row(full,
                            [full, &net, nhwc, impl = impl, threads](benchmark::State& s) {
                                model_row(s, full, net, nhwc, impl, threads);
                            },
                            benchmark::kMillisecond);
                }
            }
        }
}

}  // namespace qdml_bench
