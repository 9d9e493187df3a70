// tools/npy.hpp - reading and writing NumPy .npy files (format versions 1.0,
// 2.0 and 3.0; little-endian, C order) for the case runner. Every malformed
// file gets an InputError naming the file and the rule it breaks; nothing
// is read past the end of the bytes given.
#pragma once

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "qdml/core/data_type.hpp"

namespace qdml::cli {

/// Bad input: a case file, a .npy file or a command line the runner rejects.
/// what() is "<file>: <rule>".
class InputError : public std::runtime_error {
public:
    InputError(const std::string& file, const std::string& rule) : std::runtime_error(file + ": " + rule) {}
};

/// The .npy dtype string of a DML data type (numpy's own spelling).
/// The type of a .npy file's elements for tensors of type `t`: the 4-bit
/// types are stored one element an entry (INT4 as int8, UINT4 as uint8, as
/// numpy and ONNX's numpy_helper unpack them), every other type as itself.
inline TensorDataType npy_storage_type(TensorDataType t) {
    if (t == TensorDataType::Int4) return TensorDataType::Int8;
    if (t == TensorDataType::UInt4) return TensorDataType::UInt8;
    return t;
}

inline std::string_view npy_descr(TensorDataType t) {
    switch (npy_storage_type(t)) {
        case TensorDataType::Int8: return "|i1";
        case TensorDataType::UInt8: return "|u1";
        case TensorDataType::Int16: return "<i2";
        case TensorDataType::UInt16: return "<u2";
        case TensorDataType::Int32: return "<i4";
        case TensorDataType::UInt32: return "<u4";
        case TensorDataType::Int64: return "<i8";
        case TensorDataType::UInt64: return "<u8";
        case TensorDataType::Float16: return "<f2";
        case TensorDataType::Float32: return "<f4";
        case TensorDataType::Float64: return "<f8";
        default: return "";
    }
}

/// A loaded array: its shape and its elements' bytes (little-endian).
struct NpyArray {
    std::vector<std::uint64_t> shape;
    std::uint64_t count = 1;
    std::vector<std::uint8_t> bytes;
};

namespace detail {

/// Parser of the header's Python dict literal, e.g.
/// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class NpyHeaderParser {
public:
    NpyHeaderParser(std::string_view text, const std::string& file) : s_(text), file_(file) {}

    std::string descr;
    std::optional<bool> fortran_order;
    std::optional<std::vector<std::uint64_t>> shape;

    void parse() {
        expect('{');
        bool have_descr = false;
        for (;;) {
            skip_space();
            if (peek() == '}') break;
            const std::string key = quoted();
            expect(':');
            if (key == "descr") {
                descr = quoted();
                have_descr = true;
            } else if (key == "fortran_order") {
                fortran_order = boolean();
            } else if (key == "shape") {
                shape = tuple();
            } else {
                fail("header has unknown key '" + key + "'");
            }
            skip_space();
            if (peek() == ',') ++i_;
        }
        if (!have_descr) fail("header has no 'descr'");
        if (!fortran_order) fail("header has no 'fortran_order'");
        if (!shape) fail("header has no 'shape'");
    }

private:
    std::string_view s_;
    const std::string& file_;
    std::size_t i_ = 0;

    [[noreturn]] void fail(const std::string& rule) const { throw InputError(file_, "malformed .npy: " + rule); }
    void skip_space() {
        while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    char peek() {
        skip_space();
        if (i_ >= s_.size()) fail("header ends early");
        return s_[i_];
    }
    void expect(char c) {
        if (peek() != c) fail(std::string("header: expected '") + c + "' at offset " + std::to_string(i_));
        ++i_;
    }
    std::string quoted() {
        const char q = peek();
        if (q != '\'' && q != '"') fail("header: expected a quoted string at offset " + std::to_string(i_));
        const std::size_t end = s_.find(q, ++i_);
        if (end == std::string_view::npos) fail("header: unterminated string");
        std::string r(s_.substr(i_, end - i_));
        i_ = end + 1;
        return r;
    }
    bool boolean() {
        skip_space();
        if (s_.substr(i_, 4) == "True") return i_ += 4, true;
        if (s_.substr(i_, 5) == "False") return i_ += 5, false;
        fail("header: 'fortran_order' must be True or False");
    }
    std::vector<std::uint64_t> tuple() {
        expect('(');
        std::vector<std::uint64_t> dims;
        for (;;) {
            if (peek() == ')') break;
            if (!std::isdigit(static_cast<unsigned char>(s_[i_]))) fail("header: shape entries must be integers >= 0");
            std::uint64_t v = 0;
            while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
                const unsigned d = static_cast<unsigned>(s_[i_++] - '0');
                if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10) fail("header: shape entry overflows 64 bits");
                v = v * 10 + d;
            }
            if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 long suffix
            dims.push_back(v);
            if (dims.size() > 32) fail("header: shape has more than 32 dimensions");
            if (peek() == ',') ++i_;
        }
        ++i_;
        return dims;
    }
};

inline std::string read_file_bytes(const std::filesystem::path& path, const std::string& what) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw InputError(path.string(), what + " not found (or not a regular file)");
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError(path.string(), "cannot open " + what);
    std::ostringstream ss;
    ss << f.rdbuf();
    if (f.bad()) throw InputError(path.string(), "error reading " + what);
    return std::move(ss).str();
}

}  // namespace detail

/// What a .npy header says: the array's shape, its element count and where
/// its data starts.
struct NpyHeader {
    std::vector<std::uint64_t> shape;
    std::uint64_t count = 1;
    std::uint64_t data_start = 0;
};

/// Parses the header of a .npy file of `file_size` bytes whose first bytes
/// are `prefix` (at least the magic, the version, the header length and the
/// header; see npy_header_length) and checks that its dtype is the one of
/// `want` and that the file holds exactly the data its shape describes.
inline NpyHeader parse_npy_header(std::string_view prefix, const std::string& file, TensorDataType want,
                                  std::uint64_t file_size) {
    auto fail = [&](const std::string& rule) -> void { throw InputError(file, rule); };
    if (prefix.size() < 10 || std::memcmp(prefix.data(), "\x93NUMPY", 6) != 0)
        fail("not a .npy file (bad magic; expected \\x93NUMPY)");
    const unsigned major = static_cast<unsigned char>(prefix[6]);
    std::uint64_t header_len = 0, header_start = 0;
    if (major == 1) {
        header_len = static_cast<unsigned char>(prefix[8]) | (static_cast<unsigned>(static_cast<unsigned char>(prefix[9])) << 8);
        header_start = 10;
    } else if (major == 2 || major == 3) {
        if (prefix.size() < 12) fail("truncated: .npy header length missing");
        for (int k = 3; k >= 0; --k) header_len = (header_len << 8) | static_cast<unsigned char>(prefix[8 + k]);
        header_start = 12;
    } else {
        fail("unsupported .npy format version " + std::to_string(major));
    }
    if (header_len > file_size - header_start || header_len > prefix.size() - header_start)
        fail("truncated: header promises " + std::to_string(header_len) + " bytes, file has " +
             std::to_string(file_size - header_start));
    detail::NpyHeaderParser h(prefix.substr(header_start, header_len), file);
    h.parse();
    if (*h.fortran_order) fail("Fortran-order arrays are not supported; save with C order (np.ascontiguousarray)");
    if (!h.descr.empty() && h.descr[0] == '>' && h.descr.size() == 3 && h.descr[2] != '1')
        fail("big-endian dtype '" + h.descr + "' is not supported; save little-endian (arr.astype('<" +
             h.descr.substr(1) + "'))");
    std::string got = h.descr;
    if (got.size() == 3 && got[2] == '1' && (got[0] == '<' || got[0] == '>' || got[0] == '=')) got[0] = '|';
    if (got.size() == 3 && got[0] == '=') got[0] = '<';  // this runner only runs little-endian
    const std::string_view expect = npy_descr(want);
    if (expect.empty() || got != expect)
        fail("dtype '" + h.descr + "' does not match type " + std::string(name(want)) + " (expects '" +
             std::string(expect) + "')");
    NpyHeader r;
    r.shape = *h.shape;
    const std::uint64_t es = element_size(npy_storage_type(want));
    for (auto d : r.shape) {
        if (d != 0 && r.count > std::numeric_limits<std::uint64_t>::max() / es / d)
            fail("shape's element count overflows 64 bits");
        r.count *= d;
    }
    r.data_start = header_start + header_len;
    const std::uint64_t have = file_size - r.data_start, need = r.count * es;
    if (have < need)
        fail("truncated: shape needs " + std::to_string(need) + " bytes of data, file has " + std::to_string(have));
    if (have > need) fail("has " + std::to_string(have - need) + " bytes after the data its shape describes");
    return r;
}

/// How many leading bytes of a .npy file parse_npy_header needs: the magic,
/// version and length fields (12 bytes) plus the header length they state.
inline std::uint64_t npy_header_length(std::string_view first12) {
    if (first12.size() < 10) return 12;
    if (static_cast<unsigned char>(first12[6]) == 1)
        return 10 + (static_cast<unsigned char>(first12[8]) | (static_cast<unsigned>(static_cast<unsigned char>(first12[9])) << 8));
    if (first12.size() < 12) return 12;
    std::uint64_t len = 0;
    for (int k = 3; k >= 0; --k) len = (len << 8) | static_cast<unsigned char>(first12[8 + k]);
    return 12 + len;
}

/// Parses the .npy file contents `bytes` and checks that its dtype is the one
/// of `want`. `file` names the source in errors.
inline NpyArray parse_npy(std::string_view bytes, const std::string& file, TensorDataType want) {
    const NpyHeader h = parse_npy_header(bytes, file, want, bytes.size());
    NpyArray a;
    a.shape = h.shape;
    a.count = h.count;
    a.bytes.assign(bytes.begin() + static_cast<std::ptrdiff_t>(h.data_start), bytes.end());
    return a;
}

/// An open .npy file whose header has been read and checked; read() copies
/// leading data bytes straight into the caller's memory (no staging copy).
class NpyReader {
public:
    NpyReader(const std::filesystem::path& path, TensorDataType want) : file_(path.string()) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec)) throw InputError(file_, ".npy file not found (or not a regular file)");
        const auto size = std::filesystem::file_size(path, ec);
        if (ec) throw InputError(file_, "cannot read .npy file: " + ec.message());
        f_.open(path, std::ios::binary);
        if (!f_) throw InputError(file_, "cannot open .npy file");
        std::string prefix(static_cast<std::size_t>(std::min<std::uint64_t>(size, 12)), '\0');
        f_.read(prefix.data(), static_cast<std::streamsize>(prefix.size()));
        const std::uint64_t want_bytes = std::min<std::uint64_t>(size, npy_header_length(prefix));
        prefix.resize(static_cast<std::size_t>(want_bytes));
        if (want_bytes > 12) f_.read(prefix.data() + 12, static_cast<std::streamsize>(want_bytes - 12));
        if (!f_) throw InputError(file_, "error reading .npy file");
        header_ = parse_npy_header(prefix, file_, want, size);
        f_.seekg(static_cast<std::streamoff>(header_.data_start));
    }

    const NpyHeader& header() const noexcept { return header_; }

    /// Reads the next `n` bytes of the data (at most count * element size in
    /// all), from its start on.
    void read(void* dst, std::uint64_t n) {
        f_.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
        if (!f_) throw InputError(file_, "error reading .npy file");
    }

private:
    std::string file_;
    std::ifstream f_;
    NpyHeader header_;
};

/// The header of a version 1.0 .npy file of `t` elements in C order with
/// the given shape (padded to 64 bytes, as numpy writes it).
inline std::string npy_header(TensorDataType t, const std::vector<std::uint64_t>& shape) {
    std::string dict = "{'descr': '" + std::string(npy_descr(t)) + "', 'fortran_order': False, 'shape': (";
    for (std::size_t i = 0; i < shape.size(); ++i) dict += std::to_string(shape[i]) + (shape.size() == 1 ? "," : i + 1 < shape.size() ? ", " : "");
    dict += "), }";
    std::size_t total = 10 + dict.size() + 1;
    dict.append((64 - total % 64) % 64, ' ');
    dict += '\n';
    std::string out("\x93NUMPY\x01\x00", 8);
    out += static_cast<char>(dict.size() & 0xff);
    out += static_cast<char>((dict.size() >> 8) & 0xff);
    return out + dict;
}

/// The bytes of a version 1.0 .npy file holding `data` (elements of type `t`,
/// C order) with the given shape.
inline std::string format_npy(TensorDataType t, const std::vector<std::uint64_t>& shape, const std::vector<std::uint8_t>& data) {
    return npy_header(t, shape).append(reinterpret_cast<const char*>(data.data()), data.size());
}

/// Why `path` cannot name an output file (a directory, or a missing parent
/// directory), or an empty string when it can.
inline std::string output_path_problem(const std::filesystem::path& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(path, ec)) return "is a directory; --out takes a file name";
    const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    if (!fs::exists(dir, ec)) return "directory '" + dir.string() + "' does not exist";
    if (!fs::is_directory(dir, ec)) return "'" + dir.string() + "' is not a directory";
    return {};
}

/// Writes a file through a temporary file next to it and a rename, so a
/// failure never leaves a partial file behind; `write` produces the content.
template <class Write>
void write_file_atomic(const std::filesystem::path& path, Write&& write) {
    if (const std::string why = output_path_problem(path); !why.empty())
        throw InputError(path.string(), "cannot write output file: " + why);
    const std::filesystem::path tmp = path.string() + ".tmp";
    std::error_code ignored;
    {
        errno = 0;
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f) {
            const int err = errno;  // before anything else can overwrite it
            throw InputError(path.string(), "cannot create output file " + tmp.string() +
                                                (err ? ": " + std::generic_category().message(err) : ""));
        }
        write(f);
        f.close();
        if (!f) {
            const int err = errno;
            std::filesystem::remove(tmp, ignored);
            throw InputError(path.string(),
                             "error writing output file" + (err ? ": " + std::generic_category().message(err) : ""));
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp, ignored);  // its own error code: ec keeps the rename's reason
        throw InputError(path.string(), "cannot write output file: " + ec.message());
    }
}

}  // namespace qdml::cli
