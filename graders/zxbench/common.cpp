#include "graders/zxbench/common.h"

#include <algorithm>
#include <cmath>

#include "core/js_value.h"

namespace evalrun::zx {

const nlohmann::json& Member(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kNull;
  if (!object.is_object()) return kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

const js::ordered_json& Member(const js::ordered_json& object, const char* key) {
  static const js::ordered_json kNull;
  if (!object.is_object()) return kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

bool IsIntegral(const nlohmann::json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return true;
  return v.is_number_float() && std::isfinite(v.get<double>()) &&
         std::floor(v.get<double>()) == v.get<double>();
}

bool OneOf(const nlohmann::json& v, std::initializer_list<std::string_view> options) {
  return v.is_string() && std::find(options.begin(), options.end(),
                                    v.get_ref<const std::string&>()) != options.end();
}

Grade ZxGrade(int zx_score, nlohmann::json evidence, std::string reason,
              std::string_view evaluator) {
  Grade grade;
  grade.score = zx_score / 100.0;
  grade.passed = zx_score >= 60;
  grade.reason = std::move(reason);
  evidence["zx_score"] = zx_score;
  evidence["zx_evaluator"] = evaluator;
  grade.evidence = std::move(evidence);
  return grade;
}

Grade StatusGrade(GradeStatus status, std::string reason, nlohmann::json evidence) {
  Grade grade;
  grade.status = status;
  grade.reason = std::move(reason);
  grade.evidence = std::move(evidence);
  return grade;
}

void ReplaceAll(std::string& s, std::string_view from, std::string_view to) {
  std::string out;
  size_t pos = 0;
  for (size_t hit; (hit = s.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(s, pos, hit - pos);
    out.append(to);
  }
  out.append(s, pos, std::string::npos);
  s = std::move(out);
}

std::string NormalizeNewlines(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r') {
      out += '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool StartsWithNoCase(std::string_view s, size_t i, std::string_view lower) {
  if (i > s.size() || s.size() - i < lower.size()) return false;
  for (size_t k = 0; k < lower.size(); ++k) {
    if (AsciiLower(s[i + k]) != lower[k]) return false;
  }
  return true;
}

size_t SkipJsSpaces(std::string_view s, size_t i) {
  while (i < s.size()) {
    size_t next = i;
    if (!js::IsJsSpace(js::NextCodePoint(s, next))) break;
    i = next;
  }
  return i;
}

std::vector<std::string_view> JsSplit(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t at; (at = text.find(separator, start)) != std::string_view::npos; start = at + 1) {
    parts.push_back(text.substr(start, at - start));
  }
  parts.push_back(text.substr(start));
  return parts;
}

}  // namespace evalrun::zx
