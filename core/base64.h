#pragma once
// Base64 (RFC 4648, standard alphabet, padded): bytes that must travel in JSON (a bundle's
// outputs that are not UTF-8, files a sandboxed check read back).
#include <optional>
#include <string>
#include <string_view>

namespace evalrun {

std::string Base64Encode(std::string_view bytes);
std::optional<std::string> Base64Decode(std::string_view text);  // nullopt when malformed

}  // namespace evalrun
