// libFuzzer target: Date.parse as V8 reads dates (graders/zxbench/js_date.h), which reads text the
// model wrote (an RSS pubDate). Any input: no crash, no undefined behaviour, and a date within
// ECMAScript's time range when there is one.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "graders/zxbench/js_date.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (const auto t = evalrun::zx::JsDateParse(input)) {
    if (!(std::fabs(*t) <= 8.64e15)) std::abort();
  }
  return 0;
}
