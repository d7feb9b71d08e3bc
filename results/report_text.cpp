// What every report of a run says the same way (results/report_text.h).
#include "results/report_text.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace evalrun::report_text {

using nlohmann::json;

const json* Child(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string JsonText(const json& object, std::string_view key) {
  const json* value = Child(object, key);
  if (value == nullptr) return "";
  if (value->is_string()) return value->get<std::string>();
  if (value->is_number() || value->is_boolean()) {
    return value->dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return "";
}

std::string Join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

std::vector<std::pair<std::string, int>> GpuCounts(const json& environment) {
  std::vector<std::pair<std::string, int>> counts;
  for (const char* vendor : {"nvidia", "rocm"}) {
    const json* probe = Child(environment, vendor);
    const json* gpus = probe != nullptr ? Child(*probe, "gpus") : nullptr;
    if (gpus == nullptr || !gpus->is_array()) continue;
    for (const json& gpu : *gpus) {
      std::string name = JsonText(gpu, "name");
      if (name.empty()) name = "unnamed GPU";
      const auto it = std::find_if(counts.begin(), counts.end(),
                                   [&name](const auto& entry) { return entry.first == name; });
      if (it == counts.end()) {
        counts.emplace_back(name, 1);
      } else {
        ++it->second;
      }
    }
  }
  return counts;
}

// Text from outside as one line of valid UTF-8 that XML accepts: invalid bytes and the
// non-characters U+FFFE/U+FFFF become U+FFFD (nlohmann's replace handler is the project's one
// UTF-8 validator); control characters, line breaks included, become spaces.
std::string CleanText(std::string_view raw) {
  std::string text;
  if (std::all_of(raw.begin(), raw.end(), [](char c) { return (c & 0x80) == 0; })) {
    text = std::string(raw);
  } else {
    const std::string quoted =
        json(std::string(raw)).dump(-1, ' ', false, json::error_handler_t::replace);
    text = json::parse(quoted).get<std::string>();
  }
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == 0xEF && i + 2 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0xBF &&
        (static_cast<unsigned char>(text[i + 2]) & 0xFE) == 0xBE) {
      out += "\xEF\xBF\xBD";
      i += 2;
    } else if (c < 0x20 || c == 0x7F) {
      out += ' ';
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// The one escaping function for markdown: one line, and a backslash before every character that
// could end a table cell, open an HTML tag a forum would swallow ("<think>"), or start a link,
// emphasis or code span.
std::string MdText(std::string_view raw) {
  const std::string text = CleanText(raw);
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (std::string_view("\\|<>[]`*").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string Fixed(std::optional<double> value, int decimals) {
  if (!value || !std::isfinite(*value)) return std::string(kAbsent);
  return fmt::format("{:.{}f}", *value, decimals);
}

std::string PrefillCell(std::optional<double> prefill_tps, std::optional<double> cached_tokens,
                        std::optional<double> prompt_tokens) {
  if (prefill_tps && std::isfinite(*prefill_tps)) return Fixed(prefill_tps, 1);
  if (cached_tokens && prompt_tokens && *cached_tokens > 0) {
    return "cached " + Fixed(cached_tokens, 0) + " of " + Fixed(prompt_tokens, 0);
  }
  return std::string(kAbsent);
}

std::string SuiteText(const RunInfo& info) {
  std::string name = !info.suite_name.empty() ? info.suite_name : info.suite_spec;
  if (name.empty()) name = "unnamed suite";
  if (info.suite_commit.empty()) return name + " (unpinned)";
  return name + "@" + info.suite_commit.substr(0, 12);
}

}  // namespace evalrun::report_text
