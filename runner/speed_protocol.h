#pragma once
// `evalrun speed`: the fixed speed protocol (DESIGN.md section 7). Prefill and decode measured
// separately at stated lengths, a concurrency sweep with same and distinct prompts, and the
// presets quick, llama-bench, uni-bench and full.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/speed_result.h"
#include "plugins/openai_backend.h"
#include "plugins/server_probe.h"

namespace evalrun {

enum class PromptsMode { kDistinct, kSame, kBoth };

// Everything `evalrun speed` runs with. Unset values (-1 / empty / nullopt) are filled by the
// preset in ApplyPreset; explicit flags always win.
struct SpeedConfig {
  std::string endpoint;                  // base URL, no trailing slash, no /v1
  std::string model;                     // "" -> the server's first model
  std::string preset = "quick";          // quick | llama-bench | uni-bench | full
  std::vector<int64_t> prompt_lengths;   // -p: prefill tests
  int64_t gen_tokens = -1;               // -n: decode length
  int repetitions = -1;                  // -r: requests per prefill/decode test, rounds per sweep
  std::vector<int> concurrency;          // -c: the sweep; empty after ApplyPreset = no sweep
  std::optional<PromptsMode> prompts;    // --prompts
  std::vector<int64_t> depths;           // decode at depth (full preset)
  Thinking thinking = Thinking::kAuto;
  int64_t short_prompt_tokens = 128;     // prompt length for decode and sweep tests
  double idle_timeout_s = 60;            // longest silence inside one response
  double connect_timeout_s = 10;
  std::optional<ServerKind> server_kind; // --server: skip detection
  std::map<std::string, std::string> labels;
  bool warmup = true;
  bool capture_environment = true;
};

inline constexpr const char* kSpeedPresets[] = {"quick", "llama-bench", "uni-bench", "full"};

// Fills unset fields from the preset; throws Error (exit 2) for an unknown preset, naming the
// closest one.
void ApplyPreset(SpeedConfig& config);

// Runs the protocol against config.endpoint. `log` receives one human line per step (stderr in
// the CLI). `stop` (may be null) is polled between rounds; when set, running requests are
// cancelled and the result holds what was measured. Throws Error only when nothing can be run
// (endpoint unreachable).
SpeedResult RunSpeed(const SpeedConfig& config, const std::function<void(const std::string&)>& log,
                     const std::atomic<bool>* stop = nullptr);

}  // namespace evalrun
