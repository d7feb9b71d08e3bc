#pragma once
// SHA-256 through OpenSSL (the only cryptographic hash evalrun uses).
#include <string>
#include <string_view>

namespace evalrun {

// Lowercase hex digest (64 characters) of `bytes`.
std::string Sha256Hex(std::string_view bytes);

}  // namespace evalrun
