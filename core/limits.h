#pragma once
// Every limit evalrun enforces on input it does not control — a suite folder someone shared,
// the bytes of a server, a bundle posted by a stranger, the command line — in one place.
// docs/limits.md is the reference for users and names each constant below; change both together.
// Each limit is far above anything an honest input needs and low enough that the worst input
// that passes it costs bounded memory and time.
#include <cstddef>
#include <cstdint>
#include <limits>

namespace evalrun::limits {

// --- YAML (suite.yaml, task files) ------------------------------------------------------------
inline constexpr size_t kYamlFileBytes = 16u << 20;        // one YAML file
inline constexpr size_t kYamlScalarBytes = 4u << 20;       // one scalar (a prompt, a patch)
inline constexpr int kYamlDepth = 64;                      // nested mappings/lists
// Nodes visited while turning a file into JSON, aliases expanded: an alias bomb ("billion
// laughs") is refused once its expansion passes this, before memory grows.
inline constexpr int64_t kYamlExpandedNodes = 1'000'000;
inline constexpr int64_t kYamlExpandedBytes = int64_t{64} << 20;

// --- JSON from servers and bundles ------------------------------------------------------------
inline constexpr int kJsonDepth = 256;                     // nesting of arrays/objects
inline constexpr size_t kSseLineBytes = 8u << 20;          // one SSE line / one event's data
inline constexpr size_t kResponseBodyBytes = 64u << 20;    // one response body (JSON mode)
inline constexpr size_t kTimingsBytes = 16u << 10;         // `timings`/`meta_info` kept per request
inline constexpr size_t kBundleBytes = 2048u << 20;        // a bundle file
// Server-reported token counts above this (or negative) are impossible for one request.
inline constexpr int64_t kMaxTokenCount = 100'000'000;

// --- Generation settings (task YAML, --max-tokens) -------------------------------------------
inline constexpr int64_t kMaxTokens = 10'000'000;          // max_tokens of one request
inline constexpr double kMaxWeight = 1e6;                  // a task's weight, a dimension's weight

// a + b for counts that may come from outside, saturating at INT64_MAX instead of wrapping.
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  if (b > 0 && a > std::numeric_limits<int64_t>::max() - b) return std::numeric_limits<int64_t>::max();
  if (b < 0 && a < std::numeric_limits<int64_t>::min() - b) return std::numeric_limits<int64_t>::min();
  return a + b;
}

}  // namespace evalrun::limits
