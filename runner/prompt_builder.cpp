#include "runner/prompt_builder.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace evalrun {

namespace {
// Plain English words: they tokenize to about one token each on every common tokenizer, so the
// calibration converges in a step or two.
constexpr const char* kWords[] = {
    "the",    "river",  "stone",   "light",  "market", "window", "garden", "paper",  "signal",
    "table",  "winter", "engine",  "silver", "forest", "number", "letter", "bridge", "orange",
    "summer", "pocket", "travel",  "camera", "doctor", "island", "planet", "yellow", "music",
    "friend", "school", "kitchen", "little", "morning", "simple", "animal", "corner", "basket",
    "castle", "dinner", "energy",  "factory", "harbor", "jacket", "ladder", "meadow", "needle",
    "office", "pepper", "quarter", "rocket", "saddle", "ticket", "valley", "wonder", "button",
    "candle", "desert", "feather", "ginger", "hammer", "insect", "jungle", "kettle", "lemon",
};
constexpr int64_t kWordCount = sizeof(kWords) / sizeof(kWords[0]);
}  // namespace

const char* FillerWord(int64_t i) {
  // A fixed multiplicative walk so neighbouring words differ and no short cycle repeats.
  return kWords[static_cast<size_t>((i * 37 + i / kWordCount) % kWordCount)];
}

PromptBuilder::PromptBuilder(ServerInfo server, Fetcher fetch, PromptTokenProbe probe,
                             std::string nonce)
    : server_(std::move(server)),
      fetch_(std::move(fetch)),
      probe_(std::move(probe)),
      nonce_(std::move(nonce)) {}

std::string PromptBuilder::Prefix(int64_t index) const {
  char prefix[64];
  std::snprintf(prefix, sizeof prefix, "Request %s-%06lld.", nonce_.c_str(),
                static_cast<long long>(index));
  return prefix;
}

std::string PromptBuilder::Text(int64_t index, int64_t words) const {
  std::string text = index >= 0 ? Prefix(index) : "Shared prompt " + nonce_ + ".";
  text.reserve(text.size() + static_cast<size_t>(words) * 8);
  for (int64_t i = 0; i < words; ++i) {
    text += ' ';
    text += FillerWord(i);
  }
  return text;
}

std::optional<int64_t> PromptBuilder::ContentTokens(const std::string& text) {
  if (method_ == "tokenize") return CountTokens(server_, text, fetch_);
  if (method_ == "probe" && probe_) return probe_(text);  // the whole chat, overhead included
  return std::nullopt;
}

void PromptBuilder::Calibrate() {
  int64_t sample_words = 200;
  std::string sample = Text(0, sample_words);
  const auto count = [&] {
    return server_.has_tokenize ? CountTokens(server_, sample, fetch_).value_or(-1) : -1;
  };
  int64_t counted = count();
  // The sample must fit the server's context, or the probe is refused (llama.cpp 0.7: HTTP 400
  // "exceeds the available context size") or cut, and the calibration learns nothing: against
  // llama-server -c 512 with a byte-level tokenizer, 200 words are about 1,400 tokens. Shrink it
  // to half the context.
  while (counted > 0 && server_.context > 0 && counted * 2 > server_.context && sample_words > 10) {
    sample_words /= 2;
    sample = Text(0, sample_words);
    counted = count();
  }
  // -1: unknown. (Plain integers: GCC 12 warns spuriously about optionals compared here.)
  const int64_t probed = probe_ ? probe_(sample).value_or(-1) : -1;
  if (counted >= 0) {
    // The tokenizer gives every length; the probe, where it answered, the template's overhead
    // (else it is taken as 0).
    method_ = "tokenize";
    overhead_ = probed >= 0 ? std::max<int64_t>(0, probed - counted) : 0;
    tokens_per_word_ =
        std::max(0.25, static_cast<double>(counted) / static_cast<double>(sample_words));
  } else if (probed >= 0) {
    // No tokenizer: every length is checked by a probe request, which counts the template too,
    // so no separate overhead is needed. Two probes give the tokens per word to start from.
    method_ = "probe";
    const int64_t small = probe_(Text(0, sample_words / 10)).value_or(-1);
    if (small >= 0 && probed > small) {
      tokens_per_word_ = static_cast<double>(probed - small) /
                         static_cast<double>(sample_words - sample_words / 10);
    }
  } else {
    method_ = "none";  // lengths are estimates; the record keeps usage.prompt_tokens anyway
  }
  calibration_["method"] = method_;
  calibration_["chat_overhead_tokens"] = overhead_;
  calibration_["tokens_per_word"] = tokens_per_word_;
  calibration_["targets"] = nlohmann::json::object();
}

int64_t PromptBuilder::WordsFor(int64_t target_tokens) {
  if (auto it = words_for_target_.find(target_tokens); it != words_for_target_.end()) {
    return it->second;
  }
  const int64_t content_target = std::max<int64_t>(1, target_tokens - overhead_);
  int64_t words = std::max<int64_t>(
      0, std::llround(static_cast<double>(content_target) / tokens_per_word_) - 6);
  std::optional<int64_t> got;
  // Proportional steps, then single words; a handful of tokenizer calls per target length.
  for (int step = 0; step < 8; ++step) {
    got = ContentTokens(Text(0, words));
    if (!got || *got == content_target) break;
    const int64_t diff = content_target - *got;
    int64_t delta = std::llround(static_cast<double>(diff) / std::max(0.25, tokens_per_word_));
    if (delta == 0) delta = diff > 0 ? 1 : -1;
    if (step >= 5) delta = diff > 0 ? 1 : -1;
    words = std::max<int64_t>(0, words + delta);
  }
  words_for_target_[target_tokens] = words;
  calibration_["targets"][std::to_string(target_tokens)] = {
      {"words", words}, {"content_tokens", got ? nlohmann::json(*got) : nlohmann::json()}};
  return words;
}

std::string PromptBuilder::Build(int64_t target_tokens, int64_t index) {
  return Text(index, WordsFor(target_tokens));
}

std::string PromptBuilder::BuildShared(int64_t target_tokens) {
  return Text(-1, WordsFor(target_tokens));
}

}  // namespace evalrun
