// libFuzzer target: the SSE parser (plugins/sse_parser.h) fed the input split at a point the
// input itself chooses, with small caps so that the overflow paths are reached too. Each event's
// views are read in full so that a dangling view shows under AddressSanitizer.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "plugins/sse_parser.h"

namespace {

struct Reader : evalrun::SseHandler {
  size_t bytes = 0;
  void OnEvent(const evalrun::SseEvent& event) override {
    for (const char c : event.type) bytes += static_cast<unsigned char>(c);
    for (const char c : event.data) bytes += static_cast<unsigned char>(c);
    for (const char c : event.id) bytes += static_cast<unsigned char>(c);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t split = size == 0 ? 0 : data[0] % (size + 1);
  Reader reader;
  evalrun::SseParser parser(/*max_line_bytes=*/4096, /*max_body_bytes=*/16384);
  parser.Feed(input.substr(0, split), reader);
  parser.Feed(input.substr(split), reader);
  parser.Finish(reader);
  // A second stream on the same parser: Finish() then Feed() starts over.
  for (size_t i = 0; i < input.size(); i += 7) parser.Feed(input.substr(i, 7), reader);
  parser.Finish(reader);
  return 0;
}
