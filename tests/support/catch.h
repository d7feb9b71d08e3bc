#pragma once
// The Catch2 every test includes, v2 (Debian 12, Ubuntu 22.04: one header, <catch2/catch.hpp>)
// or v3 (Debian 13, Ubuntu 24.04: a compiled library, <catch2/catch_all.hpp>). tests/CMakeLists.txt
// finds whichever is installed and defines EVALRUN_CATCH2_MAJOR; the tests are written once,
// against the v2 spellings, and this header gives v3 the same names.
#if EVALRUN_CATCH2_MAJOR >= 3
#include <catch2/catch_all.hpp>

#include <string>

namespace Catch {
// v2's string matchers lived in namespace Catch; v3 moved them to Catch::Matchers and renamed
// Contains (a string's substring) to ContainsSubstring, giving Contains to ranges.
inline Matchers::StringContainsMatcher Contains(const std::string& text,
                                                CaseSensitive sensitivity = CaseSensitive::Yes) {
  return Matchers::ContainsSubstring(text, sensitivity);
}
using Matchers::EndsWith;
using Matchers::Matches;
using Matchers::StartsWith;
}  // namespace Catch
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
