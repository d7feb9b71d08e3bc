#pragma once
// Prompts of a stated token length for the speed protocol. Each prompt starts with a unique
// prefix ("Request <nonce>-<index>.") so that no prefix cache can serve it, followed by filler
// words. Lengths are calibrated against the server: through its tokenizer (POST /tokenize) where
// it has one, otherwise by probe requests read back through usage.prompt_tokens. The chat
// template's own tokens are measured once (a probe) and subtracted, so the figure that matters,
// usage.prompt_tokens, lands on the requested length.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "plugins/http_types.h"
#include "plugins/server_probe.h"

namespace evalrun {

// Asks the server for usage.prompt_tokens of a one-user-message chat with this content
// (max_tokens 1); nullopt when it could not tell. The seam for tests.
using PromptTokenProbe = std::function<std::optional<int64_t>(const std::string& content)>;

class PromptBuilder {
 public:
  PromptBuilder(ServerInfo server, Fetcher fetch, PromptTokenProbe probe, std::string nonce);

  // Measures the chat template overhead (one probe). Call once before Build(); records what it
  // learned in calibration().
  void Calibrate();
  // A user message of about `target_tokens` prompt tokens as the server counts them, unique for
  // (`index`, this builder's nonce). Calibrates the filler length for each new target once.
  std::string Build(int64_t target_tokens, int64_t index);
  // The same prompt text for every call with the same target: for same-prompt (cache hit) tests.
  std::string BuildShared(int64_t target_tokens);

  // {"method": "tokenize"|"probe"|"none", "chat_overhead_tokens": n,
  //  "targets": {"512": {"words": w, "content_tokens": c}}}
  const nlohmann::json& calibration() const { return calibration_; }

 private:
  std::string Prefix(int64_t index) const;
  std::string Text(int64_t index, int64_t words) const;
  int64_t WordsFor(int64_t target_tokens);
  std::optional<int64_t> ContentTokens(const std::string& text);

  ServerInfo server_;
  Fetcher fetch_;
  PromptTokenProbe probe_;
  std::string nonce_;
  int64_t overhead_ = 0;            // chat template tokens around the user content
  double tokens_per_word_ = 1.3;    // filled by calibration
  std::string method_ = "none";
  std::map<int64_t, int64_t> words_for_target_;
  nlohmann::json calibration_ = nlohmann::json::object();
};

// Filler word `i` of the fixed, deterministic word sequence.
const char* FillerWord(int64_t i);

}  // namespace evalrun
