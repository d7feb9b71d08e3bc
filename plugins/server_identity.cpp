#include "plugins/server_identity.h"

#include <cstdint>
#include <initializer_list>

namespace evalrun {
namespace {

using json = nlohmann::json;

// report[a][b]... as a JSON value, or null when any step is missing.
const json* At(const json& root, std::initializer_list<const char*> path) {
  const json* node = &root;
  for (const char* key : path) {
    if (!node->is_object()) return nullptr;
    const auto it = node->find(key);
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return node;
}

// A reported scalar as text: strings as they are, integers in digits, "" for anything else.
std::string FactText(const json* value) {
  if (value == nullptr) return "";
  if (value->is_string()) return value->get<std::string>();
  if (value->is_number_integer()) return std::to_string(value->get<int64_t>());
  return "";
}

// The last component of a path ("/models/q4.gguf" -> "q4.gguf"); a model id that is no path
// stays as it is.
std::string FileName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The first model of /v1/models in the report, or null.
const json* FirstModel(const json& report) {
  const json* data = At(report, {"/v1/models", "data"});
  if (data == nullptr || !data->is_array() || data->empty()) return nullptr;
  return &(*data)[0];
}

// "8,192"
std::string WithCommas(const std::string& digits) {
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
    return digits;
  }
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

std::vector<IdentityFact> ServerIdentity(const ServerInfo& server) {
  const json& report = server.report;
  const json* first = FirstModel(report);
  // llama.cpp names its model by the path it was loaded from unless --alias is given: two
  // machines with the file in different folders serve the same model.
  std::string model = server.model;
  if (server.kind == ServerKind::kLlamaCpp && model.size() > 5 &&
      model.compare(model.size() - 5, 5, ".gguf") == 0) {
    model = FileName(model);
  }
  std::string weights = FactText(At(report, {"/props", "model_path"}));
  if (weights.empty()) weights = FactText(At(report, {"/get_server_info", "model_path"}));
  if (weights.empty() && first != nullptr) weights = FactText(At(*first, {"root"}));
  const json* meta = first != nullptr ? At(*first, {"meta"}) : nullptr;
  return {
      {"model", model},
      {"server", ServerKindName(server.kind)},
      {"build", server.build},
      {"context", server.context > 0 ? std::to_string(server.context) : ""},
      {"weights file", FileName(weights)},
      {"weights size", meta != nullptr ? FactText(At(*meta, {"size"})) : ""},
      {"parameters", meta != nullptr ? FactText(At(*meta, {"n_params"})) : ""},
      {"chat template", FactText(At(report, {"llama.cpp", "chat_template", "fnv1a64"}))},
  };
}

std::string IdentityDifference(const ServerInfo& first, const ServerInfo& other,
                               const std::string& first_url) {
  const std::vector<IdentityFact> a = ServerIdentity(first);
  const std::vector<IdentityFact> b = ServerIdentity(other);
  std::string out;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const std::string& name = a[i].first;
    const bool always = name == "model" || name == "server";
    if (a[i].second == b[i].second) continue;
    if (!always && (a[i].second.empty() || b[i].second.empty())) continue;
    const bool number = name == "context" || name == "weights size" || name == "parameters";
    const auto shown = [number](const std::string& value) {
      return number ? WithCommas(value) : "'" + value + "'";
    };
    if (!out.empty()) out += ", ";
    out += name + " " + shown(b[i].second) + " (" + first_url + ": " + shown(a[i].second) + ")";
  }
  return out;
}

}  // namespace evalrun
