// bench/peers/onednn_common.hpp - what the oneDNN peer rows share: one CPU
// engine and stream, memory over qdml-bench's buffers, and a Peer from a
// primitive (its impl_info_str in the label).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <unordered_map>

#include "../support.hpp"

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

}  // namespace qdml_bench::onednn
