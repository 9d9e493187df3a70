// qdml/core/error.hpp - the one error type: operator, member, rule.
#pragma once

#include "qdml/core/requires_cxx17.hpp"

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace qdml {

/// Thrown by validation (and by the case-file tools): names the operator,
/// the DML member and the broken rule with the offending values.
class Error : public std::runtime_error {
public:
    Error(std::string op, std::string member, std::string rule)
        : std::runtime_error(op + ": " + member + ": " + rule),
          op_(std::move(op)),
          member_(std::move(member)),
          rule_(std::move(rule)) {}
    const std::string& operator_name() const noexcept { return op_; }
    const std::string& member() const noexcept { return member_; }
    const std::string& rule() const noexcept { return rule_; }

private:
    std::string op_, member_, rule_;
};

namespace detail {
/// Concatenates streamable values into a string (error messages only).
template <class... Args>
std::string cat(const Args&... args) {
    std::ostringstream os;
    (os << ... << args);
    return os.str();
}
}  // namespace detail

}  // namespace qdml
