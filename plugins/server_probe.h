#pragma once
// Server detection and introspection (DESIGN.md section 7): which server is behind an
// OpenAI-compatible endpoint, what model it serves, and its own report of build, context, slots
// and speculative settings. Pure over a Fetcher, so tests answer from captured fixtures.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "plugins/http_types.h"

namespace evalrun {

enum class ServerKind { kGeneric, kLlamaCpp, kVllm, kSglang, kMock };

const char* ServerKindName(ServerKind kind);  // "generic", "llama.cpp", "vllm", "sglang", "evalrun-mock"
// Accepts the names above and "llamacpp"/"llama-server"; nullopt otherwise.
std::optional<ServerKind> ParseServerKind(std::string_view name);

struct ServerInfo {
  ServerKind kind = ServerKind::kGeneric;
  std::string base_url;        // without a trailing slash
  std::string model;           // first id from /v1/models ("" when unknown)
  std::string build;           // llama.cpp build / vLLM version / SGLang version
  int64_t context = -1;        // n_ctx per slot (llama.cpp) or max_model_len, -1 if unknown
  int64_t slots = -1;          // parallel slots, -1 if unknown
  bool speculative = false;    // the server reports speculative decoding as configured
  bool has_tokenize = false;   // POST /tokenize is available
  bool understands_ignore_eos = false;
  bool understands_cache_prompt = false;
  nlohmann::json report;       // everything read, by endpoint: {"/props": {...}, ...}
                               // (the JSON body on HTTP 200, else {"status", "error"?}), plus
                               // "detected_by" ("/v1/models owned_by", "/props",
                               // "/get_server_info", "/version", "forced", "unreachable" or
                               // "nothing matched") and, for llama.cpp, "llama.cpp":
                               // {"chat_template": {"length", "first_line", "fnv1a64"},
                               // "speculative.n_max", ...} (fnv1a64: a 64-bit FNV-1a in hex, to
                               // tell templates apart; not a cryptographic digest)
};

// Probes base_url: /v1/models, then /props (llama.cpp), /get_server_info (SGLang), /version
// (vLLM). With `forced`, the kind is taken as given and only its endpoints are read. Never
// throws for an unreachable or odd server: the result is then kGeneric with what was learned.
// An owned_by of "llamacpp", "vllm", "sglang" or "evalrun-mock" in /v1/models decides the kind
// and only that kind's endpoint is read next; otherwise the three are tried in the order above.
// When /v1/models gets no HTTP response at all (status 0) nothing more is asked (kGeneric, or
// the forced kind). Capabilities follow the kind: llama.cpp and the mock have /tokenize,
// ignore_eos and cache_prompt; vLLM /tokenize and ignore_eos; SGLang ignore_eos; generic none.
// The ServerInfo as JSON, for results: kind, base_url, model, build, context, slots, speculative,
// has_tokenize, understands_ignore_eos, understands_cache_prompt, report.
nlohmann::json ServerInfoToJson(const ServerInfo& server);

ServerInfo DetectServer(const std::string& base_url, const Fetcher& fetch,
                        std::optional<ServerKind> forced = std::nullopt);

// Token count of `text` through the server's tokenizer (llama.cpp and the mock: POST /tokenize
// {"content": text, "add_special": false}; vLLM: POST /tokenize {"model", "prompt",
// "add_special_tokens": false}, so both count the bare text without BOS), nullopt when the
// server has none (has_tokenize false) or the call failed. Never throws.
std::optional<int64_t> CountTokens(const ServerInfo& server, const std::string& text,
                                   const Fetcher& fetch);

}  // namespace evalrun
