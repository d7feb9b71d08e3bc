#include "plugins/server_probe.h"

#include <cstdio>
#include <utility>

namespace evalrun {
namespace {

using json = nlohmann::json;

// Introspection answers in milliseconds on a healthy server; a busy one still answers these
// (llama.cpp serves them between decode steps).
constexpr double kProbeConnectTimeoutS = 5;
constexpr double kProbeTotalTimeoutS = 20;

// What an endpoint answered: its JSON body when it answered 200 with JSON, else null; `entry`
// is what goes in ServerInfo::report under its path.
struct Answer {
  json body = nullptr;
  json entry;
  bool reached = false;  // an HTTP response arrived (any status)
};

// A JSON string of `text` with invalid UTF-8 replaced, so the report can always be written out.
json SafeString(const std::string& text) {
  return json::parse(json(text).dump(-1, ' ', false, json::error_handler_t::replace));
}

Answer Get(const std::string& base_url, const std::string& path, const Fetcher& fetch) {
  HttpRequest request;
  request.method = "GET";
  request.url = base_url + path;
  request.connect_timeout_s = kProbeConnectTimeoutS;
  request.idle_timeout_s = kProbeTotalTimeoutS;
  request.total_timeout_s = kProbeTotalTimeoutS;
  HttpResponse response;
  try {
    response = fetch(request);
  } catch (const std::exception& e) {  // a Fetcher should not throw; a probe never does
    response.status = 0;
    response.error = e.what();
  }
  Answer answer;
  answer.reached = response.status != 0;
  if (response.status != 200) {
    answer.entry = {{"status", response.status}};
    if (!response.error.empty()) answer.entry["error"] = response.error;
    return answer;
  }
  json body = json::parse(response.body, nullptr, false);
  if (body.is_discarded()) {
    answer.entry = {{"status", 200},
                    {"error", "body is not JSON"},
                    {"body_head", SafeString(response.body.substr(0, 200))}};
    return answer;
  }
  answer.body = body;
  answer.entry = std::move(body);
  return answer;
}

const json* Member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::optional<std::string> StringAt(const json& object, const char* key) {
  const json* value = Member(object, key);
  if (value == nullptr || !value->is_string()) return std::nullopt;
  return value->get<std::string>();
}

std::optional<int64_t> IntAt(const json& object, const char* key) {
  const json* value = Member(object, key);
  if (value == nullptr || !value->is_number_integer()) return std::nullopt;
  return value->get<int64_t>();
}

// The first entry of an OpenAI /v1/models list, or null.
const json* FirstModel(const json& models) {
  const json* data = Member(models, "data");
  if (data == nullptr || !data->is_array() || data->empty() || !(*data)[0].is_object()) {
    return nullptr;
  }
  return &(*data)[0];
}

std::optional<ServerKind> KindFromOwner(const std::string& owned_by) {
  if (owned_by == "llamacpp") return ServerKind::kLlamaCpp;
  if (owned_by == "vllm") return ServerKind::kVllm;
  if (owned_by == "sglang") return ServerKind::kSglang;
  if (owned_by == "evalrun-mock") return ServerKind::kMock;
  return std::nullopt;
}

// 64-bit FNV-1a in hex: tells chat templates apart across runs; not a cryptographic digest.
std::string Fnv1a64(const std::string& text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

void SetCapabilities(ServerInfo& info) {
  const ServerKind k = info.kind;
  info.has_tokenize =
      k == ServerKind::kLlamaCpp || k == ServerKind::kMock || k == ServerKind::kVllm;
  info.understands_ignore_eos = k != ServerKind::kGeneric;
  info.understands_cache_prompt = k == ServerKind::kLlamaCpp || k == ServerKind::kMock;
}

void ReadModels(const json& models, ServerInfo& info) {
  const json* first = FirstModel(models);
  if (first == nullptr) return;
  if (auto id = StringAt(*first, "id")) info.model = *id;
  // vLLM (and newer SGLang) report the served context here.
  if (auto len = IntAt(*first, "max_model_len"); len && *len > 0) info.context = *len;
}

// llama.cpp /props: per-slot context, slots, build, whether a draft model is loaded.
void ReadLlamaProps(const json& props, ServerInfo& info) {
  const json* settings = Member(props, "default_generation_settings");
  if (settings != nullptr) {
    if (auto n_ctx = IntAt(*settings, "n_ctx"); n_ctx && *n_ctx > 0) info.context = *n_ctx;
    if (const json* spec = Member(*settings, "speculative"); spec && spec->is_boolean()) {
      info.speculative = spec->get<bool>();
    }
  }
  if (auto slots = IntAt(props, "total_slots"); slots && *slots > 0) info.slots = *slots;
  if (auto build = StringAt(props, "build_info")) info.build = *build;
  if (info.model.empty()) {
    if (auto path = StringAt(props, "model_path")) info.model = *path;
  }
  json summary = json::object();
  if (auto tmpl = StringAt(props, "chat_template")) {
    summary["chat_template"] = {{"length", tmpl->size()},
                                {"first_line", tmpl->substr(0, tmpl->find('\n'))},
                                {"fnv1a64", Fnv1a64(*tmpl)}};
  }
  // The draft settings are request defaults; "speculative.n_max" is there even with no draft.
  if (settings != nullptr) {
    if (const json* params = Member(*settings, "params")) {
      for (const char* key : {"speculative.n_max", "speculative.n_min", "speculative.p_min"}) {
        if (const json* value = Member(*params, key)) summary[key] = *value;
      }
    }
  }
  if (!summary.empty()) info.report["llama.cpp"] = std::move(summary);
}

void ReadSglangInfo(const json& server_info, ServerInfo& info) {
  if (auto version = StringAt(server_info, "version")) info.build = *version;
  if (info.context < 0) {
    if (auto len = IntAt(server_info, "context_length"); len && *len > 0) info.context = *len;
  }
  if (auto running = IntAt(server_info, "max_running_requests"); running && *running > 0) {
    info.slots = *running;
  }
  if (auto algorithm = StringAt(server_info, "speculative_algorithm")) {
    info.speculative = !algorithm->empty() && *algorithm != "NONE";
  }
  if (info.model.empty()) {
    if (auto path = StringAt(server_info, "model_path")) info.model = *path;
  }
}

void ReadVllmVersion(const json& version, ServerInfo& info) {
  if (auto v = StringAt(version, "version")) info.build = *v;
}

// The endpoint that identifies each kind, and whether its answer looks like that kind's.
bool LooksLikeLlamaProps(const json& body) {
  return Member(body, "default_generation_settings") != nullptr;
}
bool LooksLikeSglangInfo(const json& body) {
  return Member(body, "model_path") != nullptr || Member(body, "tp_size") != nullptr;
}
bool LooksLikeVllmVersion(const json& body) {
  return StringAt(body, "version").has_value();
}

// Reads the endpoint of `kind` into info (and the report); returns whether it answered like one.
bool ReadKindEndpoint(ServerKind kind, const std::string& base, const Fetcher& fetch,
                      ServerInfo& info) {
  const char* path = nullptr;
  switch (kind) {
    case ServerKind::kLlamaCpp:
      path = "/props";
      break;
    case ServerKind::kSglang:
      path = "/get_server_info";
      break;
    case ServerKind::kVllm:
      path = "/version";
      break;
    case ServerKind::kGeneric:
      return true;
    case ServerKind::kMock: {
      // The mock imitating a llama.cpp server's slots (mock-server --slots) answers /props.
      Answer props = Get(base, "/props", fetch);
      if (LooksLikeLlamaProps(props.body)) {
        info.report["/props"] = props.entry;
        ReadLlamaProps(props.body, info);
      }
      return true;
    }
  }
  Answer answer = Get(base, path, fetch);
  info.report[path] = answer.entry;
  switch (kind) {
    case ServerKind::kLlamaCpp:
      if (!LooksLikeLlamaProps(answer.body)) return false;
      ReadLlamaProps(answer.body, info);
      return true;
    case ServerKind::kSglang:
      if (!LooksLikeSglangInfo(answer.body)) return false;
      ReadSglangInfo(answer.body, info);
      return true;
    case ServerKind::kVllm:
      if (!LooksLikeVllmVersion(answer.body)) return false;
      ReadVllmVersion(answer.body, info);
      return true;
    default:
      return true;
  }
}

}  // namespace

const char* ServerKindName(ServerKind kind) {
  switch (kind) {
    case ServerKind::kGeneric:
      return "generic";
    case ServerKind::kLlamaCpp:
      return "llama.cpp";
    case ServerKind::kVllm:
      return "vllm";
    case ServerKind::kSglang:
      return "sglang";
    case ServerKind::kMock:
      return "evalrun-mock";
  }
  return "generic";
}

std::optional<ServerKind> ParseServerKind(std::string_view name) {
  if (name == "generic") return ServerKind::kGeneric;
  if (name == "llama.cpp" || name == "llamacpp" || name == "llama-server") {
    return ServerKind::kLlamaCpp;
  }
  if (name == "vllm") return ServerKind::kVllm;
  if (name == "sglang") return ServerKind::kSglang;
  if (name == "evalrun-mock") return ServerKind::kMock;
  return std::nullopt;
}

nlohmann::json ServerInfoToJson(const ServerInfo& s) {
  return {{"kind", ServerKindName(s.kind)}, {"base_url", s.base_url},   {"model", s.model},
          {"build", s.build},               {"context", s.context},     {"slots", s.slots},
          {"speculative", s.speculative},   {"has_tokenize", s.has_tokenize},
          {"understands_ignore_eos", s.understands_ignore_eos},
          {"understands_cache_prompt", s.understands_cache_prompt},
          {"report", s.report}};
}

ServerInfo DetectServer(const std::string& base_url, const Fetcher& fetch,
                        std::optional<ServerKind> forced) {
  ServerInfo info;
  info.base_url = base_url;
  while (!info.base_url.empty() && info.base_url.back() == '/') info.base_url.pop_back();
  info.report = json::object();

  Answer models = Get(info.base_url, "/v1/models", fetch);
  info.report["/v1/models"] = models.entry;
  ReadModels(models.body, info);

  if (forced) {
    info.kind = *forced;
    info.report["detected_by"] = "forced";
    if (models.reached) ReadKindEndpoint(info.kind, info.base_url, fetch, info);
    SetCapabilities(info);
    return info;
  }
  if (!models.reached) {
    // Nothing answered; asking the other endpoints would only wait out more timeouts.
    info.report["detected_by"] = "unreachable";
    SetCapabilities(info);
    return info;
  }

  std::optional<ServerKind> hint;
  if (const json* first = FirstModel(models.body)) {
    if (auto owner = StringAt(*first, "owned_by")) hint = KindFromOwner(*owner);
  }
  if (hint) {
    // owned_by is decisive; the kind's own endpoint adds build, context and the rest.
    info.kind = *hint;
    info.report["detected_by"] = "/v1/models owned_by";
    ReadKindEndpoint(info.kind, info.base_url, fetch, info);
  } else {
    info.report["detected_by"] = "nothing matched";
    for (ServerKind kind : {ServerKind::kLlamaCpp, ServerKind::kSglang, ServerKind::kVllm}) {
      if (ReadKindEndpoint(kind, info.base_url, fetch, info)) {
        info.kind = kind;
        info.report["detected_by"] = kind == ServerKind::kLlamaCpp ? "/props"
                                     : kind == ServerKind::kSglang ? "/get_server_info"
                                                                   : "/version";
        break;
      }
    }
  }
  SetCapabilities(info);
  return info;
}

std::optional<int64_t> CountTokens(const ServerInfo& server, const std::string& text,
                                   const Fetcher& fetch) {
  if (!server.has_tokenize) return std::nullopt;
  json body;
  switch (server.kind) {
    case ServerKind::kLlamaCpp:
    case ServerKind::kMock:
      body = {{"content", text}, {"add_special", false}};
      break;
    // add_special_tokens false, like llama.cpp's add_special: the bare text, no BOS.
    case ServerKind::kVllm:
      body = {{"model", server.model}, {"prompt", text}, {"add_special_tokens", false}};
      break;
    default:
      return std::nullopt;
  }
  HttpRequest request;
  request.method = "POST";
  request.url = server.base_url + "/tokenize";
  request.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  request.headers = {"Content-Type: application/json"};
  request.connect_timeout_s = kProbeConnectTimeoutS;
  request.total_timeout_s = 60;
  request.idle_timeout_s = 60;
  HttpResponse response;
  try {
    response = fetch(request);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (response.status != 200) return std::nullopt;
  const json answer = json::parse(response.body, nullptr, false);
  if (auto count = IntAt(answer, "count"); count && *count >= 0) return *count;
  if (const json* tokens = Member(answer, "tokens"); tokens && tokens->is_array()) {
    return static_cast<int64_t>(tokens->size());
  }
  return std::nullopt;
}

}  // namespace evalrun
