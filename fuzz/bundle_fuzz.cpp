// libFuzzer target: the bundle reader (results/bundle.h, ParseBundle) and the checks verify and
// report run on what it returns: the result hash, the changed parts. A stranger's bundle may only
// ever be refused with an evalrun::Error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/error.h"
#include "results/bundle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const evalrun::Bundle bundle = evalrun::ParseBundle(text, "fuzz.evalrun.json");
    (void)evalrun::ComputeResultHash(bundle.document);
    (void)evalrun::ChangedBundleParts(bundle.document);
  } catch (const evalrun::Error&) {
  }
  return 0;
}
