// libFuzzer target: ReadChunk (plugins/chunk_reader.h), the per-event JSON reader, reusing one
// ChunkFields across inputs as the stream path does. Raw spans it returns must lie inside the
// input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "plugins/chunk_reader.h"

namespace {

void CheckInside(std::string_view span, std::string_view input) {
  if (span.empty()) return;
  if (span.data() < input.data() || span.data() + span.size() > input.data() + input.size()) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static evalrun::ChunkFields fields;
  static std::string error;
  const std::string input(reinterpret_cast<const char*>(data), size);  // exact-size heap copy
  const std::string_view view(input);
  if (evalrun::ReadChunk(view, fields, &error)) {
    for (const std::string_view span :
         {fields.model, fields.system_fingerprint, fields.usage_json, fields.timings_json,
          fields.meta_info_json, fields.error_json, fields.tool_calls_json, fields.message_json}) {
      CheckInside(span, view);
    }
  }
  return 0;
}
