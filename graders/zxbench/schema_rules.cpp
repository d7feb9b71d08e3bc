// zx-bench's rule language for structured-output answers: the constraints, cross-field rules and
// paths of structuredOutput.ts v6 (a5f6a19f), ported rule by rule. It is one file because it is
// one upstream rule table kept in zx-bench's order: the first rule whose pattern matches a
// constraint decides it, so the table must be read (and reviewed against the source) as a whole.
#include "graders/zxbench/schema_rules.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/js_value.h"
#include "graders/zxbench/format_parsers.h"
#include "graders/zxbench/js_json.h"
#include "graders/zxbench/js_regex.h"

namespace evalrun::zx {
namespace {

using js::ordered_json;
using J = const ordered_json*;  // nullptr is undefined

// ---- JavaScript values ------------------------------------------------------------------------

std::string Trim(std::string_view s) { return std::string(js::JsTrim(s)); }

// text.split(',').map(t => t.trim()), without the empty pieces unless `keep_empty`.
std::vector<std::string> SplitCommaList(std::string_view text, bool drop_empty = true) {
  std::vector<std::string> out;
  for (size_t start = 0;;) {
    const size_t comma = text.find(',', start);
    std::string part = Trim(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (!drop_empty || !part.empty()) out.push_back(std::move(part));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

bool IsNum(J v) { return v != nullptr && js::IsNumber(*v); }
double Num(J v) { return js::NumberOf(*v); }

// Number(text) for the strings paths and rules hold: decimal (with exponent), 0x/0o/0b,
// Infinity; "" is 0; anything else NaN.
double JsNumber(std::string_view raw) {
  const std::string text = Trim(raw);
  if (text.empty()) return 0;
  const auto prefixed = [&](const char* p, int base) -> std::optional<double> {
    if (text.size() > 2 && text[0] == '0' && (text[1] == p[0] || text[1] == p[1])) {
      double v = 0;
      for (size_t i = 2; i < text.size(); ++i) {
        const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
        const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : 99;
        if (d >= base) return std::nan("");
        v = v * base + d;
      }
      return v;
    }
    return std::nullopt;
  };
  if (auto v = prefixed("xX", 16)) return *v;
  if (auto v = prefixed("oO", 8)) return *v;
  if (auto v = prefixed("bB", 2)) return *v;
  size_t i = 0;
  if (text[i] == '+' || text[i] == '-') ++i;
  if (text.compare(i, std::string::npos, "Infinity") == 0) {
    return text[0] == '-' ? -INFINITY : INFINITY;
  }
  size_t digits = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++digits;
  }
  if (digits == 0) return std::nan("");
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t j = i + 1;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
    const size_t exp = j;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j == exp) return std::nan("");
    i = j;
  }
  if (i != text.size()) return std::nan("");
  return std::strtod(text.c_str(), nullptr);
}

// value[key] for an object or an array (a numeric key), as JavaScript indexes.
J Index(J value, const std::string& key) {
  if (value == nullptr) return nullptr;
  if (value->is_object()) {
    const auto it = value->find(key);
    return it == value->end() ? nullptr : &*it;
  }
  if (value->is_array()) {
    const auto index = js::ArrayIndex(key);
    return index && *index < value->size() ? &(*value)[*index] : nullptr;
  }
  return nullptr;
}

// Object.values / an array's elements.
std::vector<J> Values(J value) {
  std::vector<J> out;
  if (value == nullptr) return out;
  if (value->is_array()) {
    for (const ordered_json& item : *value) out.push_back(&item);
  } else if (value->is_object()) {
    for (const auto& entry : js::ObjectEntries(*value)) out.push_back(entry.second);
  }
  return out;
}
std::vector<std::string> Keys(J value) {
  std::vector<std::string> out;
  if (value != nullptr && value->is_object()) {
    for (const auto& entry : js::ObjectEntries(*value)) out.push_back(*entry.first);
  }
  return out;
}

bool PlainObject(J v) { return v != nullptr && v->is_object(); }

J ResolvePath(J current, const std::vector<std::string>& parts, size_t from, int depth) {
  if (from == parts.size()) return current;
  if (depth > 24) return nullptr;
  const std::string& head = parts[from];
  if (head == "**") {  // any depth, breadth first
    std::vector<J> queue = {current};
    std::set<J> seen;
    for (size_t q = 0; q < queue.size(); ++q) {
      J node = queue[q];
      if (node == nullptr || !node->is_structured() || !seen.insert(node).second) continue;
      if (J hit = ResolvePath(node, parts, from + 1, depth + 1)) return hit;
      for (J child : Values(node)) queue.push_back(child);
    }
    return nullptr;
  }
  if (current != nullptr && current->is_array()) {
    const double n = JsNumber(head);
    if (!(n >= 0) || n != std::floor(n) || n >= static_cast<double>(current->size())) {
      return nullptr;
    }
    return ResolvePath(&(*current)[static_cast<size_t>(n)], parts, from + 1, depth + 1);
  }
  if (PlainObject(current)) return ResolvePath(Index(current, head), parts, from + 1, depth + 1);
  return nullptr;
}

// getPath: '[]' dropped, '[n]' becomes '.n', split at '.', empty parts dropped.
J GetPath(J value, std::string_view path) {
  std::string flat;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '[' && i + 1 < path.size() && path[i + 1] == ']') {
      ++i;
      continue;
    }
    if (path[i] == '[') {
      size_t j = i + 1;
      while (j < path.size() && std::isdigit(static_cast<unsigned char>(path[j]))) ++j;
      if (j > i + 1 && j < path.size() && path[j] == ']') {
        flat += '.';
        flat.append(path, i + 1, j - i - 1);
        i = j;
        continue;
      }
    }
    flat += path[i];
  }
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t dot = flat.find('.', start);
    std::string part = flat.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!part.empty()) parts.push_back(std::move(part));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return ResolvePath(value, parts, 0, 0);
}

std::vector<std::string> Alternatives(std::string_view field) {  // split('||'), trimmed
  std::vector<std::string> out;
  for (size_t start = 0;;) {
    const size_t bar = field.find("||", start);
    std::string part = Trim(field.substr(start, bar == std::string_view::npos ? bar : bar - start));
    if (!part.empty()) out.push_back(std::move(part));
    if (bar == std::string_view::npos) break;
    start = bar + 2;
  }
  return out;
}

J GetPathAny(J data, std::string_view spec) {
  for (const std::string& alt : Alternatives(spec)) {
    if (J v = GetPath(data, alt)) return v;
  }
  return nullptr;
}

// splitFieldPath: 'a.b[].c' -> {"a.b", "c"}.
std::pair<std::string, std::string> SplitFieldPath(std::string_view spec) {
  std::string trimmed;
  const std::string t = Trim(spec);
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '[' && i + 1 < t.size() && t[i + 1] == ']') {
      ++i;
      continue;
    }
    trimmed += t[i];
  }
  const size_t cut = trimmed.rfind('.');
  if (cut == std::string::npos || cut == 0) return {trimmed, ""};
  return {trimmed.substr(0, cut), trimmed.substr(cut + 1)};
}

// asArray: an array, an object's values, or nullopt.
std::optional<std::vector<J>> AsArray(J value) {
  if (value == nullptr || !value->is_structured()) return std::nullopt;
  return Values(value);
}

J Pick(J row, const std::string& field) {
  if (field.empty()) return row;
  if (row == nullptr || !row->is_structured()) return nullptr;
  return Index(row, field);
}

bool StrictEq(J a, J b) { return js::StrictEquals(a, b); }

bool SameJsonValue(J a, J b) {
  if ((a != nullptr && a->is_array()) || (b != nullptr && b->is_array())) {
    if (a == nullptr || b == nullptr || !a->is_array() || !b->is_array() || a->size() != b->size()) {
      return false;
    }
    for (size_t i = 0; i < a->size(); ++i) {
      if (!SameJsonValue(&(*a)[i], &(*b)[i])) return false;
    }
    return true;
  }
  if (a != nullptr && b != nullptr && a->is_object() && b->is_object()) {
    if (a->size() != b->size()) return false;
    for (const auto& [key, value] : a->items()) {
      const auto it = b->find(key);
      if (it == b->end() || !SameJsonValue(&value, &*it)) return false;
    }
    return true;
  }
  return StrictEq(a, b);
}

std::optional<ordered_json> ParseJson(std::string_view text) {
  std::string error;
  return ParseJsJsonOrdered(text, &error);
}

std::string Stringify(J v) { return v == nullptr ? std::string("\x01undefined") : js::JsStringify(*v); }

bool JsonEquivalent(J actual, std::string_view literal) {  // jsonEquivalent
  const auto parsed = ParseJson(literal);
  const ordered_json expected = parsed ? *parsed : ordered_json(std::string(literal));
  return Stringify(actual) == js::JsStringify(expected);
}

bool DecimalLiteral(std::string_view t) {  // /^-?\d+(\.\d+)?$/
  size_t i = 0;
  if (i < t.size() && t[i] == '-') ++i;
  const size_t d = i;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  if (i == d) return false;
  if (i < t.size() && t[i] == '.') {
    const size_t f = ++i;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
    if (i == f) return false;
  }
  return i == t.size();
}

ordered_json CoerceLiteral(std::string_view raw) {
  const std::string text = Trim(raw);
  if (text == "true") return true;
  if (text == "false") return false;
  if (text == "null") return nullptr;
  if (DecimalLiteral(text)) return std::strtod(text.c_str(), nullptr);
  return text;
}

ordered_json ConstraintLiteral(std::string_view raw) {  // parseConstraintLiteral
  const std::string text = Trim(raw);
  if (!text.empty() && (text[0] == '"' || text[0] == '[' || text[0] == '{')) {
    if (auto parsed = ParseJson(text)) return *parsed;
  }
  return CoerceLiteral(text);
}

int CountDecimals(double value) {
  if (!std::isfinite(value)) return -1;
  const std::string text = js::JsNumberString(value);
  if (text.find_first_of("eE") != std::string::npos) return -1;
  const size_t dot = text.find('.');
  return dot == std::string::npos ? 0 : static_cast<int>(text.size() - dot - 1);
}

bool MatchesJsonType(J value, const std::string& expected) {
  if (expected == "integer") {
    return IsNum(value) && std::isfinite(Num(value)) && std::floor(Num(value)) == Num(value);
  }
  if (expected == "number") return IsNum(value) && std::isfinite(Num(value));
  if (expected == "boolean") return value != nullptr && value->is_boolean();
  if (expected == "null") return value != nullptr && value->is_null();
  if (expected == "array") return value != nullptr && value->is_array();
  if (expected == "object") return PlainObject(value);
  if (expected == "string") return value != nullptr && value->is_string();
  return false;
}

std::string JsString(J v) {  // String(v)
  return v == nullptr ? std::string("undefined") : js::JsToString(*v);
}

double CompareValues(J left, J right) {
  if (IsNum(left) && IsNum(right)) return Num(left) - Num(right);
  const auto text = [](J v) {
    return v == nullptr || v->is_null() ? std::string() : js::JsToString(*v);
  };
  const std::string a = text(left), b = text(right);
  if (a == b) return 0;
  return a < b ? -1 : 1;
}

bool Test(const std::string& pattern, const std::string& flags, std::string_view subject) {
  return JsRegexTest(pattern, flags, subject).value_or(false);
}

size_t CountNulls(J value, std::set<J>& seen) {
  if (value == nullptr) return 0;
  if (value->is_null()) return 1;
  if (!value->is_structured() || !seen.insert(value).second) return 0;
  size_t total = 0;
  for (J child : Values(value)) total += CountNulls(child, seen);
  return total;
}
int MeasureDepth(J value) {
  if (value == nullptr || !value->is_structured()) return 0;
  const auto children = Values(value);
  if (children.empty()) return 0;
  int best = 0;
  for (J child : children) best = std::max(best, MeasureDepth(child));
  return best + 1;
}
std::pair<size_t, size_t> CountNodes(J value, std::set<J>& seen) {  // {nodes, leaves}
  if (value == nullptr || !value->is_structured()) return {0, 1};
  if (!seen.insert(value).second) return {0, 0};
  std::pair<size_t, size_t> total = {value->is_object() ? 1 : 0, 0};
  for (J child : Values(value)) {
    const auto sub = CountNodes(child, seen);
    total.first += sub.first;
    total.second += sub.second;
  }
  return total;
}

J ResolveJsonPointer(J document, const std::string& pointer) {
  if (pointer.empty()) return document;
  if (pointer[0] != '/') return nullptr;
  J current = document;
  for (size_t start = 1;;) {
    const size_t slash = pointer.find('/', start);
    std::string raw = pointer.substr(start, slash == std::string::npos ? slash : slash - start);
    std::string token;
    for (size_t i = 0; i < raw.size(); ++i) {  // ~1 -> / first, then ~0 -> ~
      if (raw.compare(i, 2, "~1") == 0) {
        token += '/';
        ++i;
      } else {
        token += raw[i];
      }
    }
    std::string unescaped;
    for (size_t i = 0; i < token.size(); ++i) {
      if (token.compare(i, 2, "~0") == 0) {
        unescaped += '~';
        ++i;
      } else {
        unescaped += token[i];
      }
    }
    if (current != nullptr && current->is_array()) {
      if (unescaped.empty() ||
          !std::all_of(unescaped.begin(), unescaped.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
        return nullptr;
      }
      const double n = JsNumber(unescaped);
      current = n < static_cast<double>(current->size()) ? &(*current)[static_cast<size_t>(n)]
                                                         : nullptr;
    } else if (current != nullptr && current->is_object()) {
      current = Index(current, unescaped);
    } else {
      return nullptr;
    }
    if (current == nullptr) return nullptr;
    if (slash == std::string::npos) return current;
    start = slash + 1;
  }
}

// ---- the rule language ------------------------------------------------------------------------

using Groups = std::vector<std::optional<std::string_view>>;

struct Rule {
  const char* pattern;  // zx-bench's regular expression for the rule
  std::function<bool(const Groups&, J data, std::string_view corpus)> check;
};

std::string G(const Groups& g, size_t i) { return i < g.size() && g[i] ? std::string(*g[i]) : ""; }
bool HasGroup(const Groups& g, size_t i) { return i < g.size() && g[i].has_value(); }

std::optional<std::vector<J>> RowsAt(J data, const std::string& path) {
  return AsArray(GetPathAny(data, path));
}

bool CompareCount(size_t hits, const std::string& op, double n) {
  const double h = static_cast<double>(hits);
  if (op == ">=") return h >= n;
  if (op == "<=") return h <= n;
  if (op == ">") return h > n;
  if (op == "<") return h < n;
  return h == n;
}

J CsvRows(J data) { return Pick(PlainObject(data) ? data : nullptr, "rows"); }

// regexPatternFixtures: five regular expressions checked on fixed samples.
bool RegexPatternFixtures(J data) {
  J patterns = Pick(PlainObject(data) ? data : nullptr, "patterns");
  if (patterns == nullptr || !patterns->is_array() || patterns->size() != 5) return false;
  struct Fixture {
    const char* name;
    std::vector<const char*> yes, no;
  };
  const Fixture fixtures[] = {
      {"手机|电话", {"13812345678", "14712345678", "16612345678", "19912345678"},
       {"12812345678", "23812345678", "1381234567"}},
      {"身份", {"11010119900307123X", "440305198712120012"},
       {"11010119900307123", "11010119901307123X"}},
      {"车牌", {"京A12345", "沪AD12345", "粤B12345"}, {"京A1234", "AA12345"}},
      {"金额|人民币", {"¥1,234,567.89", "99.9", "¥100"}, {"¥1,23,456.78", "¥1234.567"}},
      {"日期", {"2024年3月15日", "二〇二四年三月十五日"}, {"2024/3/15", "2024年3月"}},
  };
  for (const Fixture& f : fixtures) {
    std::vector<J> hits;
    for (const ordered_json& item : *patterns) {
      J name = Pick(&item, "name");
      if (PlainObject(&item) && name != nullptr && name->is_string() &&
          Test(f.name, "", name->get_ref<const std::string&>())) {
        hits.push_back(&item);
      }
    }
    if (hits.size() != 1) return false;
    J regex = Pick(hits[0], "regex");
    if (regex == nullptr || !regex->is_string()) return false;
    const std::string& pattern = regex->get_ref<const std::string&>();
    for (const char* sample : f.yes) {
      const auto hit = JsRegexTest(pattern, "", sample);
      if (!hit || !*hit) return false;
    }
    for (const char* sample : f.no) {
      if (JsRegexTest(pattern, "", sample).value_or(true)) return false;
    }
  }
  return true;
}

// csvSalesFixture: a fixed sales table converted to CSV, row by row and its total.
bool CsvSalesFixture(J data) {
  J headers = Pick(PlainObject(data) ? data : nullptr, "headers");
  const ordered_json want_headers = {"区域", "产品", "数量", "单价", "小计"};
  J rows = CsvRows(data);
  if (!SameJsonValue(headers, &want_headers) || rows == nullptr || !rows->is_array() ||
      rows->size() != 10) {
    return false;
  }
  const auto money = [](J v) -> double {
    if (v == nullptr || !v->is_string()) return std::nan("");
    std::string cleaned;
    const std::string& s = v->get_ref<const std::string&>();
    for (size_t i = 0; i < s.size();) {  // replace(/[¥￥,\s]/g, '')
      const size_t from = i;
      const char32_t cp = js::NextCodePoint(s, i);
      if (cp == U'¥' || cp == U'￥' || cp == ',' || js::IsJsSpace(cp)) continue;
      cleaned.append(s, from, i - from);
    }
    return JsNumber(cleaned);
  };
  std::vector<ordered_json> expected;
  const std::vector<std::pair<std::string, std::vector<double>>> quantities = {
      {"北京", {150, 80, 45}}, {"上海", {200, 120, 60}}, {"广州", {100, 60, 30}}};
  const double prices[] = {299, 599, 1299};
  const char* const products[] = {"产品A", "产品B", "产品C"};
  for (const auto& [region, counts] : quantities) {
    for (size_t i = 0; i < 3; ++i) {
      expected.push_back({region, products[i], counts[i], prices[i], counts[i] * prices[i]});
    }
  }
  std::vector<std::optional<ordered_json>> actual;
  for (size_t r = 0; r < 9; ++r) {
    const ordered_json& row = (*rows)[r];
    if (!row.is_array() || row.size() != 5) {
      actual.emplace_back(std::nullopt);
      continue;
    }
    ordered_json region = row[0];
    if (region.is_string()) {
      std::string s = region.get<std::string>();
      if (s.size() >= 3 && s.compare(s.size() - 3, 3, "区") == 0) s.erase(s.size() - 3);
      region = s;
    }
    const auto number = [](double d) { return std::isnan(d) ? ordered_json(nullptr) : ordered_json(d); };
    // NaN never equals: a null stands for it, and no expected cell is null
    actual.emplace_back(ordered_json::array(
        {region, row[1], number(money(&row[2])), number(money(&row[3])), number(money(&row[4]))}));
  }
  for (const ordered_json& want : expected) {
    const auto it = std::find_if(actual.begin(), actual.end(), [&](const auto& got) {
      return got && SameJsonValue(&*got, &want);
    });
    if (it == actual.end()) return false;
    actual.erase(it);
  }
  const ordered_json& total = (*rows)[9];
  if (!total.is_array() || total.size() != 5 || !total[0].is_string() ||
      total[0].get<std::string>() != "合计") {
    return false;
  }
  const bool qty_ok = (total[2].is_string() && total[2].get<std::string>().empty()) ||
                      money(&total[2]) == 845;
  return qty_ok && money(&total[4]) == 465655;
}

const std::vector<Rule>& Rules() {
  static const std::vector<Rule> rules = {
      {"^required:([\\s\\S]*)$",
       [](const Groups& g, J d, std::string_view) { return GetPathAny(d, Trim(G(g, 1))) != nullptr; }},
      {"^type:([^=]+)=(\\w+)$",
       [](const Groups& g, J d, std::string_view) {
         return MatchesJsonType(GetPathAny(d, Trim(G(g, 1))), G(g, 2));
       }},
      {"^nonempty:([\\s\\S]*)$",
       [](const Groups& g, J d, std::string_view) {
         J v = GetPathAny(d, G(g, 1));
         return v != nullptr && !v->is_null() && !(v->is_string() && v->get<std::string>().empty());
       }},
      {"^matches:([^:]+):(.+)$",
       [](const Groups& g, J d, std::string_view) {
         J v = GetPathAny(d, Trim(G(g, 1)));
         return v != nullptr && v->is_string() && Test(G(g, 2), "u", v->get_ref<const std::string&>());
       }},
      {"^minLength:([^=]+)=(\\d+)$",
       [](const Groups& g, J d, std::string_view) {
         J v = GetPathAny(d, Trim(G(g, 1)));
         return v != nullptr && v->is_array() && static_cast<double>(v->size()) >= JsNumber(G(g, 2));
       }},
      {"^minProperties:([^=]+)=(\\d+)$",
       [](const Groups& g, J d, std::string_view) {
         J v = GetPathAny(d, Trim(G(g, 1)));
         return PlainObject(v) && static_cast<double>(v->size()) >= JsNumber(G(g, 2));
       }},
      {"^someStringContainsAll:([^=]+)=(.+)$",
       [](const Groups& g, J d, std::string_view) {
         const std::string scope = Trim(G(g, 1));
         J root = scope == "." ? d : GetPathAny(d, scope);
         const auto fragments = ParseJson(G(g, 2));
         if (!fragments || !fragments->is_array() ||
             !std::all_of(fragments->begin(), fragments->end(),
                          [](const ordered_json& f) { return f.is_string(); })) {
           return false;
         }
         std::function<bool(J)> visit = [&](J v) -> bool {
           if (v == nullptr) return false;
           if (v->is_string()) {
             const std::string& s = v->get_ref<const std::string&>();
             return std::all_of(fragments->begin(), fragments->end(), [&](const ordered_json& f) {
               return s.find(f.get_ref<const std::string&>()) != std::string::npos;
             });
           }
           if (!v->is_structured()) return false;
           const auto children = Values(v);
           return std::any_of(children.begin(), children.end(), visit);
         };
         return visit(root);
       }},
      {"^arrayLookupEq:([^=]+)=(.+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_key = SplitFieldPath(G(g, 1));
         const std::string& path = path_key.first;
         const std::string& key = path_key.second;
         const auto rows = RowsAt(d, path);
         if (!rows || key.empty()) return false;
         const auto expected = ParseJson(G(g, 2));
         if (!expected || !expected->is_object()) return false;
         if (rows->size() != expected->size()) return false;
         for (const auto& [name_ptr, fields] : js::ObjectEntries(*expected)) {
           std::vector<J> matches;
           const ordered_json name(*name_ptr);
           for (J row : *rows) {
             if (StrictEq(Pick(row, key), &name)) matches.push_back(row);
           }
           if (matches.size() != 1 || !fields->is_structured()) return false;
           for (const auto& [field, value] : js::ObjectEntries(*fields)) {
             if (!SameJsonValue(Pick(matches[0], *field), value)) return false;
           }
         }
         return true;
       }},
      {"^arraySequence:([^=]+)=(.+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         if (!rows) return false;
         const auto expected = ParseJson(G(g, 2));
         if (!expected) return false;
         // rows.map(row => pick(row, field)): an undefined entry stays a hole (never equal)
         if (!expected->is_array() || expected->size() != rows->size()) return false;
         for (size_t i = 0; i < rows->size(); ++i) {
           if (!SameJsonValue(Pick((*rows)[i], field), &(*expected)[i])) return false;
         }
         return true;
       }},
      {"^arrayMappedCode:([^=]+)=([^:]+):([^:]*):(\\d+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         if (!rows || rows->empty()) return false;
         const double width = JsNumber(G(g, 4));
         return std::all_of(rows->begin(), rows->end(), [&](J row) {
           J source = Pick(row, G(g, 2));
           if (!IsNum(source) || !std::isfinite(Num(source)) ||
               std::floor(Num(source)) != Num(source)) {
             return false;
           }
           J code = Pick(row, field);
           if (code == nullptr || !code->is_string()) return false;
           const std::string& text = code->get_ref<const std::string&>();
           // String(source).padStart(width, '0'): longer than the code, it cannot equal it
           if (width > static_cast<double>(text.size())) return false;
           const std::string digits = js::JsNumberString(Num(source));
           const size_t pad = static_cast<double>(digits.size()) < width
                                  ? static_cast<size_t>(width) - digits.size()
                                  : 0;
           return text == G(g, 3) + std::string(pad, '0') + digits;
         });
       }},
      {"^minAll:([^=]+)=(-?\\d+(?:\\.\\d+)?)$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         const double min = JsNumber(G(g, 2));
         return rows && !rows->empty() && std::all_of(rows->begin(), rows->end(), [&](J row) {
                  J v = Pick(row, field);
                  return IsNum(v) && Num(v) >= min;
                });
       }},
      {"^notValueAll:([^=]+)=(.+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         const ordered_json forbidden = CoerceLiteral(G(g, 2));
         return rows && !rows->empty() && std::all_of(rows->begin(), rows->end(), [&](J row) {
                  J v = Pick(row, field);
                  return v != nullptr && !SameJsonValue(v, &forbidden);
                });
       }},
      {"^differenceEq:([^=]+)=([\\w]+)-([\\w]+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         return rows && !rows->empty() && std::all_of(rows->begin(), rows->end(), [&](J row) {
                  J t = Pick(row, field), l = Pick(row, G(g, 2)), r = Pick(row, G(g, 3));
                  return IsNum(t) && IsNum(l) && IsNum(r) &&
                         std::fabs(Num(t) - (Num(l) - Num(r))) <= 0.001;
                });
       }},
      {"^schemaValidatesAll:([^:]+):(.+)$",
       [](const Groups& g, J d, std::string_view) {
         J schema = GetPathAny(d, Trim(G(g, 1)));
         J rows = GetPathAny(d, Trim(G(g, 2)));
         return PlainObject(schema) && rows != nullptr && rows->is_array() && !rows->empty() &&
                std::all_of(rows->begin(), rows->end(), [&](const ordered_json& row) {
                  return CountSchemaViolations(row, *schema) == 0;
                });
       }},
      {"^atLeast:([^=]+)=(-?\\d+(?:\\.\\d+)?)$",
       [](const Groups& g, J d, std::string_view) {
         J v = GetPathAny(d, Trim(G(g, 1)));
         return IsNum(v) && std::isfinite(Num(v)) && Num(v) >= JsNumber(G(g, 2));
       }},
      {"^(jsonSetEq|arrayContainsAll):([^=]+)=(.+)$",
       [](const Groups& g, J d, std::string_view) {
         J actual = GetPathAny(d, Trim(G(g, 2)));
         if (actual == nullptr || !actual->is_array()) return false;
         const auto expected = ParseJson(G(g, 3));
         if (!expected || !expected->is_array()) return false;
         if (G(g, 1) == "jsonSetEq" && actual->size() != expected->size()) return false;
         std::vector<J> pool;
         for (const ordered_json& item : *actual) pool.push_back(&item);
         for (const ordered_json& value : *expected) {
           const auto it = std::find_if(pool.begin(), pool.end(),
                                        [&](J item) { return SameJsonValue(item, &value); });
           if (it == pool.end()) return false;
           pool.erase(it);
         }
         return true;
       }},
      {"^(nestedLength|nestedFields|nestedSequence|nestedSum|nestedDifference|nestedPositive|"
       "nestedMaxDecimals):([^[]+)\\[\\]\\.([^=]+?)(?:=(.+))?$",
       [](const Groups& g, J d, std::string_view) {
         J parents = GetPathAny(d, Trim(G(g, 2)));
         if (parents == nullptr || !parents->is_array() || parents->empty()) return false;
         const std::string kind = G(g, 1), path = Trim(G(g, 3));
         const bool has_expected = HasGroup(g, 4);
         const std::string expected = G(g, 4);
         const size_t dot = path.find('.');
         const std::string child_name = path.substr(0, dot);
         const std::string field = dot == std::string::npos ? "" : path.substr(dot + 1);
         return std::all_of(parents->begin(), parents->end(), [&](const ordered_json& parent) {
           J children = Pick(&parent, child_name);
           if (children == nullptr || !children->is_array() || children->empty()) return false;
           if (kind == "nestedLength") {
             return static_cast<double>(children->size()) ==
                    (has_expected ? JsNumber(expected) : std::nan(""));
           }
           if (kind == "nestedFields") {
             std::vector<std::string> keys;
             for (size_t s = 0;;) {  // (expected ?? '').split(',').map(trim).sort()
               const size_t comma = expected.find(',', s);
               keys.push_back(Trim(std::string_view(expected).substr(
                   s, comma == std::string::npos ? comma : comma - s)));
               if (comma == std::string::npos) break;
               s = comma + 1;
             }
             std::sort(keys.begin(), keys.end());
             return std::all_of(children->begin(), children->end(), [&](const ordered_json& c) {
               if (!c.is_object()) return false;
               std::vector<std::string> actual = Keys(&c);
               std::sort(actual.begin(), actual.end());
               return actual == keys;
             });
           }
           if (field.empty()) return false;
           if (kind == "nestedSequence") {
             const auto want = ParseJson(has_expected ? expected : "");
             if (!want || !want->is_array() || want->size() != children->size()) return false;
             for (size_t i = 0; i < children->size(); ++i) {
               if (!SameJsonValue(Pick(&(*children)[i], field), &(*want)[i])) return false;
             }
             return true;
           }
           if (kind == "nestedPositive") {
             return std::all_of(children->begin(), children->end(), [&](const ordered_json& c) {
               J v = Pick(&c, field);
               return IsNum(v) && Num(v) > 0;
             });
           }
           if (kind == "nestedMaxDecimals") {
             const double limit = has_expected ? JsNumber(expected) : std::nan("");
             return std::all_of(children->begin(), children->end(), [&](const ordered_json& c) {
               J v = Pick(&c, field);
               return IsNum(v) && CountDecimals(Num(v)) >= 0 && CountDecimals(Num(v)) <= limit;
             });
           }
           if (kind == "nestedSum") {
             double sum = 0;
             for (const ordered_json& c : *children) {
               J v = Pick(&c, field);
               if (!IsNum(v)) return false;
               sum += Num(v);
             }
             J target = Pick(&parent, Trim(expected));
             return IsNum(target) && std::fabs(sum - Num(target)) <= 0.001;
           }
           if (kind == "nestedDifference") {
             // /^([\w]+)-([\w]+)$/ on the expected text
             const size_t minus = expected.find('-');
             const auto word = [](const std::string& s) {
               return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) {
                 return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_';
               });
             };
             if (minus == std::string::npos) return false;
             const std::string left = expected.substr(0, minus), right = expected.substr(minus + 1);
             if (!word(left) || !word(right)) return false;
             return std::all_of(children->begin(), children->end(), [&](const ordered_json& c) {
               J t = Pick(&c, field), l = Pick(&c, left), r = Pick(&c, right);
               return IsNum(t) && IsNum(l) && IsNum(r) &&
                      std::fabs(Num(t) - (Num(l) - Num(r))) <= 0.001;
             });
           }
           return false;
         });
       }},
      {"^nestedOptionalMatch:([^[]+)\\[\\]\\.([^:]+):(.+)$",
       [](const Groups& g, J d, std::string_view) {
         J parents = GetPathAny(d, Trim(G(g, 1)));
         const std::string spec = G(g, 2);
         const size_t dot = spec.find('.');
         const std::string child_name = spec.substr(0, dot);
         const std::string field = dot == std::string::npos ? "" : spec.substr(dot + 1);
         if (parents == nullptr || !parents->is_array() || parents->empty() || child_name.empty() ||
             field.empty()) {
           return false;
         }
         const std::string pattern = G(g, 3);
         if (!JsRegexTest(pattern, "", "")) return false;  // new RegExp throws: false
         return std::all_of(parents->begin(), parents->end(), [&](const ordered_json& parent) {
           J children = Pick(&parent, child_name);
           return children != nullptr && children->is_array() &&
                  std::all_of(children->begin(), children->end(), [&](const ordered_json& c) {
                    J v = Pick(&c, field);
                    return v == nullptr ||
                           (v->is_string() && Test(pattern, "", v->get_ref<const std::string&>()));
                  });
         });
       }},
      {"^(embeddedCsvHeaders|embeddedCsvRows):([^=]+)=(.+)$",
       [](const Groups& g, J d, std::string_view) {
         J v = GetPathAny(d, Trim(G(g, 2)));
         if (v == nullptr || !v->is_string()) return false;
         const FormatParse csv =
             ParseByFormat("csv", v->get_ref<const std::string&>(), nullptr, nullptr);
         if (std::any_of(csv.violations.begin(), csv.violations.end(), IsSyntaxViolation)) {
           return false;
         }
         J parsed = csv.parsed ? &*csv.parsed : nullptr;
         if (G(g, 1) == "embeddedCsvRows") {
           J rows = Pick(parsed, "rows");
           return rows != nullptr && rows->is_array() &&
                  static_cast<double>(rows->size()) == JsNumber(G(g, 3));
         }
         const auto want = ParseJson(G(g, 3));
         return want && SameJsonValue(Pick(parsed, "headers"), &*want);
       }},
      {"^(csvSomeCell|csvAllCell):(\\d+):(.+)$",
       [](const Groups& g, J d, std::string_view) {
         J rows = CsvRows(d);
         if (rows == nullptr || !rows->is_array() || rows->empty()) return false;
         const std::string pattern = G(g, 3);
         if (!JsRegexTest(pattern, "s", "")) return false;
         const double column = JsNumber(G(g, 2));
         std::vector<bool> hits;
         for (const ordered_json& row : *rows) {
           J cell = row.is_array() && column < static_cast<double>(row.size())
                        ? &row[static_cast<size_t>(column)]
                        : nullptr;
           hits.push_back(cell != nullptr && cell->is_string() &&
                          Test(pattern, "s", cell->get_ref<const std::string&>()));
         }
         return G(g, 1) == "csvAllCell" ? std::all_of(hits.begin(), hits.end(), [](bool b) { return b; })
                                        : std::any_of(hits.begin(), hits.end(), [](bool b) { return b; });
       }},
      {"^csvColumnSetEq:(\\d+)=(.+)$",
       [](const Groups& g, J d, std::string_view) {
         J rows = CsvRows(d);
         if (rows == nullptr || !rows->is_array()) return false;
         const auto expected = ParseJson(G(g, 2));
         if (!expected || !expected->is_array() || rows->size() != expected->size()) return false;
         const double column = JsNumber(G(g, 1));
         std::vector<J> actual;
         for (const ordered_json& row : *rows) {
           actual.push_back(row.is_array() && column < static_cast<double>(row.size())
                                ? &row[static_cast<size_t>(column)]
                                : nullptr);
         }
         for (const ordered_json& value : *expected) {
           const auto it = std::find_if(actual.begin(), actual.end(),
                                        [&](J item) { return StrictEq(item, &value); });
           if (it == actual.end()) return false;
           actual.erase(it);
         }
         return true;
       }},
      {"^csvCellCount:(\\d+):([^:]+):>=(\\d+)$",
       [](const Groups& g, J d, std::string_view) {
         J rows = CsvRows(d);
         if (rows == nullptr || !rows->is_array()) return false;
         const double column = JsNumber(G(g, 1));
         size_t n = 0;
         for (const ordered_json& row : *rows) {
           if (row.is_array() && column < static_cast<double>(row.size())) {
             const ordered_json& cell = row[static_cast<size_t>(column)];
             n += cell.is_string() && cell.get_ref<const std::string&>() == G(g, 2) ? 1 : 0;
           }
         }
         return static_cast<double>(n) >= JsNumber(G(g, 3));
       }},
      {"^csvNumericRange:(\\d+):(-?\\d+(?:\\.\\d+)?):(-?\\d+(?:\\.\\d+)?)$",
       [](const Groups& g, J d, std::string_view) {
         J rows = CsvRows(d);
         if (rows == nullptr || !rows->is_array() || rows->empty()) return false;
         const double column = JsNumber(G(g, 1));
         return std::all_of(rows->begin(), rows->end(), [&](const ordered_json& row) {
           if (!row.is_array() || column >= static_cast<double>(row.size())) return false;
           const ordered_json& raw = row[static_cast<size_t>(column)];
           if (!raw.is_string() || !DecimalLiteral(raw.get_ref<const std::string&>())) return false;
           const double n = JsNumber(raw.get_ref<const std::string&>());
           return n >= JsNumber(G(g, 2)) && n <= JsNumber(G(g, 3));
         });
       }},
      {"^csvSalesFixture$", [](const Groups&, J d, std::string_view) { return CsvSalesFixture(d); }},
      {"^regexPatternFixtures$",
       [](const Groups&, J d, std::string_view) { return RegexPatternFixtures(d); }},
      {"^(schemaAccepts|schemaRejectsLiteral):([^=]+)=(.+)$",
       [](const Groups& g, J d, std::string_view) {
         const std::string path = Trim(G(g, 2));
         J schema = path == "." ? d : GetPathAny(d, path);
         if (!PlainObject(schema)) return false;
         const auto instance = ParseJson(G(g, 3));
         if (!instance) return false;
         const size_t violations = CountSchemaViolations(*instance, *schema);
         return G(g, 1) == "schemaAccepts" ? violations == 0 : violations > 0;
       }},
      {"^count:(.+):(>=|<=|==)(\\d+)$",
       [](const Groups& g, J, std::string_view corpus) {
         const auto hits = JsRegexCountGm(G(g, 1), corpus);
         return hits && CompareCount(*hits, G(g, 2), JsNumber(G(g, 3)));
       }},
      {"^keys:([^=]+)=(.+)$",
       [](const Groups& g, J d, std::string_view) {
         J node = GetPathAny(d, Trim(G(g, 1)));
         if (!PlainObject(node)) return false;
         std::vector<std::string> actual = Keys(node), expected;
         for (std::string& k : SplitCommaList(G(g, 2))) expected.push_back(std::move(k));
         std::sort(actual.begin(), actual.end());
         std::sort(expected.begin(), expected.end());
         return actual == expected;
       }},
      {"^keyOrder:([^=]+)=(.+)$",
       [](const Groups& g, J d, std::string_view) {
         J node = GetPathAny(d, Trim(G(g, 1)));
         return PlainObject(node) && Keys(node) == SplitCommaList(G(g, 2));
       }},
      {"^reAll:([^:]+):(.+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         if (!rows || rows->empty()) return false;
         const std::string pattern = G(g, 2);
         if (!JsRegexTest(pattern, "", "")) return false;
         return std::all_of(rows->begin(), rows->end(), [&](J row) {
           J v = Pick(row, field);
           return v != nullptr && v->is_string() && Test(pattern, "", v->get_ref<const std::string&>());
         });
       }},
      {"^maxDecimals:([^=]+)=(\\d+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         if (!rows || rows->empty()) return false;
         const double limit = JsNumber(G(g, 2));
         return std::all_of(rows->begin(), rows->end(), [&](J row) {
           J v = Pick(row, field);
           const int places = IsNum(v) ? CountDecimals(Num(v)) : -1;
           return places >= 0 && places <= limit;
         });
       }},
      {"^unique:(.+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         if (!rows || rows->empty()) return false;
         std::set<std::string> seen;
         for (J row : *rows) {
           if (!seen.insert(Stringify(Pick(row, field))).second) return false;
         }
         return true;
       }},
      {"^sorted:([^=]+)=(.+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto rows = AsArray(GetPathAny(d, Trim(G(g, 1))));
         if (!rows || rows->size() < 2) return false;
         std::vector<std::pair<std::string, bool>> criteria;  // field, descending
         for (const std::string& part : SplitCommaList(G(g, 2), false)) {
           const std::string t = Trim(part);
           const size_t colon = t.find(':');
           const std::string field = Trim(t.substr(0, colon));
           std::string dir = colon == std::string::npos ? "asc" : t.substr(colon + 1);
           const size_t next = dir.find(':');
           if (next != std::string::npos) dir = dir.substr(0, next);
           std::string lower = Trim(dir);
           for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
           criteria.emplace_back(field, lower == "desc");
         }
         for (size_t i = 1; i < rows->size(); ++i) {
           for (const auto& [field, desc] : criteria) {
             const double cmp = CompareValues(Pick((*rows)[i - 1], field), Pick((*rows)[i], field));
             if (cmp == 0) continue;
             if (desc ? cmp < 0 : cmp > 0) return false;
             break;
           }
         }
         return true;
       }},
      {"^ref:([^:]+)\\s+in\\s+(.+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto child_path_child_field = SplitFieldPath(G(g, 1));
         const std::string& child_path = child_path_child_field.first;
         const std::string& child_field = child_path_child_field.second;
         const auto parent_path_parent_field = SplitFieldPath(G(g, 2));
         const std::string& parent_path = parent_path_parent_field.first;
         const std::string& parent_field = parent_path_parent_field.second;
         const auto children = RowsAt(d, child_path);
         const auto parents = RowsAt(d, parent_path);
         if (!children || !parents) return false;
         std::set<std::string> allowed;
         for (J p : *parents) allowed.insert(Stringify(Pick(p, parent_field)));
         return std::all_of(children->begin(), children->end(), [&](J c) {
           return allowed.count(Stringify(Pick(c, child_field))) > 0;
         });
       }},
      {"^sumEq:([^=]+)=(.+?)(?::([\\d.]+))?$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         const std::string target_text = Trim(G(g, 2));
         ordered_json literal;
         J target = nullptr;
         if (DecimalLiteral(target_text)) {
           literal = JsNumber(target_text);
           target = &literal;
         } else {
           target = GetPathAny(d, target_text);
         }
         if (!rows || rows->empty() || !IsNum(target)) return false;
         double total = 0;
         for (J row : *rows) {
           J v = Pick(row, field);
           total = IsNum(v) ? total + Num(v) : std::nan("");
         }
         if (!std::isfinite(total)) return false;
         const double tol = HasGroup(g, 3) && !G(g, 3).empty() ? JsNumber(G(g, 3)) : 0.011;
         return std::fabs(total - Num(target)) <= tol;
       }},
      {"^productEq:([^=]+)=([^=*]+)\\*([^:]+)(?::(\\d+))?$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         if (!rows || rows->empty()) return false;
         const std::string left = Trim(G(g, 2)), right = Trim(G(g, 3));
         const bool wanted = HasGroup(g, 4) && !G(g, 4).empty();
         const double places = wanted ? JsNumber(G(g, 4)) : 0;
         const double tol = wanted ? 0.5 * std::pow(10, -places) + 1e-6 : 0.011;
         return std::all_of(rows->begin(), rows->end(), [&](J row) {
           J t = Pick(row, field), a = Pick(row, left), b = Pick(row, right);
           if (!IsNum(t) || !IsNum(a) || !IsNum(b)) return false;
           if (wanted && CountDecimals(Num(t)) > places) return false;
           return std::fabs(Num(t) - Num(a) * Num(b)) <= tol;
         });
       }},
      {"^runningTotal:([^=]+)=([^:]+)(?::([\\d.-]+))?$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         if (!rows || rows->empty()) return false;
         const std::string delta_field = Trim(G(g, 2));
         std::optional<double> previous;
         if (HasGroup(g, 3)) previous = JsNumber(G(g, 3));
         for (J row : *rows) {
           J v = Pick(row, field), delta = Pick(row, delta_field);
           if (!IsNum(v) || !IsNum(delta)) return false;
           if (previous && std::fabs(Num(v) - (*previous + Num(delta))) > 0.011) return false;
           previous = Num(v);
         }
         return true;
       }},
      {"^schemaValidates:([^:]+):(.+)$",
       [](const Groups& g, J d, std::string_view) {
         J schema = GetPathAny(d, Trim(G(g, 1)));
         J instance = GetPathAny(d, Trim(G(g, 2)));
         return PlainObject(schema) && instance != nullptr &&
                CountSchemaViolations(*instance, *schema) == 0;
       }},
      {"^schemaRejects:([^:]+):(.+)$",
       [](const Groups& g, J d, std::string_view) {
         J schema = GetPathAny(d, Trim(G(g, 1)));
         J instance = GetPathAny(d, Trim(G(g, 2)));
         return PlainObject(schema) && instance != nullptr &&
                CountSchemaViolations(*instance, *schema) > 0;
       }},
      {"^keysAll:([^=]+)=(.+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto rows = AsArray(GetPathAny(d, Trim(G(g, 1))));
         if (!rows || rows->empty()) return false;
         std::vector<std::string> expected = SplitCommaList(G(g, 2));
         std::sort(expected.begin(), expected.end());
         return std::all_of(rows->begin(), rows->end(), [&](J row) {
           if (!PlainObject(row)) return false;
           std::vector<std::string> actual = Keys(row);
           std::sort(actual.begin(), actual.end());
           return actual == expected;
         });
       }},
      {"^length:([^=]+)=(\\d+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto container = AsArray(GetPathAny(d, Trim(G(g, 1))));
         return container && static_cast<double>(container->size()) == JsNumber(G(g, 2));
       }},
      {"^ratioEq:([^=]+)=([^=*]+)\\*([^:]+)(?::(\\d+))?$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         if (!rows || rows->empty()) return false;
         const std::string source_field = Trim(G(g, 2));
         const double factor = JsNumber(Trim(G(g, 3)));
         if (!std::isfinite(factor)) return false;
         const bool limited = HasGroup(g, 4) && !G(g, 4).empty();
         const double limit = limited ? JsNumber(G(g, 4)) : 0;
         const double tol = limited ? 0.5 * std::pow(10, -limit) + 1e-6 : 0.011;
         return std::all_of(rows->begin(), rows->end(), [&](J row) {
           J t = Pick(row, field), s = Pick(row, source_field);
           if (!IsNum(t) || !IsNum(s)) return false;
           if (limited && CountDecimals(Num(t)) > limit) return false;
           return std::fabs(Num(t) - Num(s) * factor) <= tol;
         });
       }},
      {"^chainEq:([^=]+)\\.([^=]+)=([^:]+)(?::([\\d.-]+))?$",
       [](const Groups& g, J d, std::string_view) {
         const auto rows = AsArray(GetPathAny(d, Trim(G(g, 1))));
         if (!rows || rows->empty()) return false;
         const std::string left_field = Trim(G(g, 2)), right_field = Trim(G(g, 3));
         std::optional<double> previous;
         if (HasGroup(g, 4)) previous = JsNumber(G(g, 4));
         for (J row : *rows) {
           J l = Pick(row, left_field), r = Pick(row, right_field);
           if (!IsNum(l) || !IsNum(r)) return false;
           if (previous && std::fabs(Num(l) - *previous) > 0.011) return false;
           previous = Num(r);
         }
         return true;
       }},
      {"^valueEq:([^=]+)=(.+)$",
       [](const Groups& g, J d, std::string_view) {
         J actual = GetPathAny(d, Trim(G(g, 1)));
         const ordered_json literal = ConstraintLiteral(G(g, 2));
         return actual != nullptr && StrictEq(actual, &literal);
       }},
      {"^csvCell:(\\d+):(\\d+):(.+)$",
       [](const Groups& g, J d, std::string_view) {
         J rows = CsvRows(d);
         if (rows == nullptr || !rows->is_array()) return false;
         const double r = JsNumber(G(g, 1)), c = JsNumber(G(g, 2));
         if (r >= static_cast<double>(rows->size())) return false;
         const ordered_json& row = (*rows)[static_cast<size_t>(r)];
         if (!row.is_array() || c >= static_cast<double>(row.size())) return false;
         const ordered_json& cell = row[static_cast<size_t>(c)];
         return cell.is_string() && Test(G(g, 3), "s", cell.get_ref<const std::string&>());
       }},
      {"^order:(.+)\\|(.+)$",
       [](const Groups& g, J, std::string_view corpus) {
         const size_t first = corpus.find(G(g, 1)), second = corpus.find(G(g, 2));
         return first != std::string_view::npos && second != std::string_view::npos && first < second;
       }},
  };
  return rules;
}

// evaluateNovelConstraint's rules, tried after the others.
const std::vector<Rule>& NovelRules() {
  static const std::vector<Rule> rules = {
      {"^whereEq:([^=]+)=([^:]+):(>=|<=|==|>|<)(\\d+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         if (!rows) return false;
         const ordered_json target = ConstraintLiteral(G(g, 2));
         const size_t hits = static_cast<size_t>(std::count_if(
             rows->begin(), rows->end(), [&](J row) { return StrictEq(Pick(row, field), &target); }));
         return CompareCount(hits, G(g, 3), JsNumber(G(g, 4)));
       }},
      {"^whereRatio:([^=]+)=([^:]+):(\\d+)\\/(\\d+)(?::([\\d.]+))?$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         if (!rows || rows->empty()) return false;
         const ordered_json target = ConstraintLiteral(G(g, 2));
         const double hits = static_cast<double>(std::count_if(
             rows->begin(), rows->end(), [&](J row) { return StrictEq(Pick(row, field), &target); }));
         const double wanted = JsNumber(G(g, 3)) / JsNumber(G(g, 4));
         const double tol = HasGroup(g, 5) && !G(g, 5).empty() ? JsNumber(G(g, 5)) : 0.011;
         return std::fabs(hits / static_cast<double>(rows->size()) - wanted) <= tol;
       }},
      {"^uniqueTuple:([^=]+)=(.+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto rows = AsArray(GetPathAny(d, Trim(G(g, 1))));
         if (!rows || rows->empty()) return false;
         const std::vector<std::string> fields = SplitCommaList(G(g, 2));
         std::set<std::string> seen;
         for (J row : *rows) {
           std::string key = "[";  // JSON.stringify(fields.map(f => pick(row, f))): undefined -> null
           for (size_t i = 0; i < fields.size(); ++i) {
             if (i > 0) key += ',';
             J v = Pick(row, fields[i]);
             key += v == nullptr ? "null" : js::JsStringify(*v);
           }
           key += ']';
           if (!seen.insert(key).second) return false;
         }
         return true;
       }},
      {"^setEquals:([^=]+)=(.+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         if (!rows) return false;
         std::vector<std::string> pool = SplitCommaList(G(g, 2));
         if (rows->size() != pool.size()) return false;
         for (J row : *rows) {
           const auto it = std::find(pool.begin(), pool.end(), JsString(Pick(row, field)));
           if (it == pool.end()) return false;
           pool.erase(it);
         }
         return pool.empty();
       }},
      {"^beforeInArray:([^=]+)=(.+)\\|(.+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         if (!rows) return false;
         std::vector<std::string> values;
         for (J row : *rows) values.push_back(JsString(Pick(row, field)));
         const auto first = std::find(values.begin(), values.end(), Trim(G(g, 2)));
         const auto second = std::find(values.begin(), values.end(), Trim(G(g, 3)));
         return first != values.end() && second != values.end() && first < second;
       }},
      {"^keyOrderDesc:(.+)$",
       [](const Groups& g, J d, std::string_view) {
         J node = GetPathAny(d, Trim(G(g, 1)));
         if (!PlainObject(node)) return false;
         const std::vector<std::string> keys = Keys(node);
         if (keys.size() < 2) return false;
         for (size_t i = 1; i < keys.size(); ++i) {
           if (keys[i - 1] <= keys[i]) return false;
         }
         return true;
       }},
      {"^keyLengthMax:([^=]+)=(\\d+)$",
       [](const Groups& g, J d, std::string_view) {
         J container = GetPathAny(d, Trim(G(g, 1)));
         const double limit = JsNumber(G(g, 2));
         std::vector<J> objects;
         if (container != nullptr && container->is_array()) {
           for (const ordered_json& item : *container) objects.push_back(&item);
         } else {
           objects.push_back(container);
         }
         if (objects.empty()) return false;
         return std::all_of(objects.begin(), objects.end(), [&](J item) {
           if (!PlainObject(item)) return false;
           const auto keys = Keys(item);
           return !keys.empty() && std::all_of(keys.begin(), keys.end(), [&](const std::string& k) {
             return static_cast<double>(Utf16Length(k)) <= limit;
           });
         });
       }},
      {"^multipleOf:([^=]+)=([\\d.]+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         if (!rows || rows->empty()) return false;
         const double step = JsNumber(G(g, 2));
         if (!(step > 0)) return false;
         return std::all_of(rows->begin(), rows->end(), [&](J row) {
           J v = Pick(row, field);
           if (!IsNum(v)) return false;
           const double q = Num(v) / step;
           return std::fabs(q - std::floor(q + 0.5)) <= 1e-9;  // Math.round
         });
       }},
      {"^noNulls:(.+)$",
       [](const Groups& g, J d, std::string_view) {
         const std::string scope = Trim(G(g, 1));
         J target = scope == "." || scope.empty() ? d : GetPathAny(d, scope);
         if (target == nullptr) return false;
         std::set<J> seen;
         return CountNulls(target, seen) == 0;
       }},
      {"^depthEquals:([^=]+)=(\\d+)$",
       [](const Groups& g, J d, std::string_view) {
         const std::string scope = Trim(G(g, 1));
         J target = scope == "." || scope.empty() ? d : GetPathAny(d, scope);
         return target != nullptr && MeasureDepth(target) == JsNumber(G(g, 2));
       }},
      {"^nodeCount:([^=]+)=(\\d+)$",
       [](const Groups& g, J d, std::string_view) {
         const std::string scope = Trim(G(g, 1));
         J target = scope == "." || scope.empty() ? d : GetPathAny(d, scope);
         if (target == nullptr) return false;
         std::set<J> seen;
         return static_cast<double>(CountNodes(target, seen).first) == JsNumber(G(g, 2));
       }},
      {"^leafCount:([^=]+)=(\\d+)$",
       [](const Groups& g, J d, std::string_view) {
         const std::string scope = Trim(G(g, 1));
         J target = scope == "." || scope.empty() ? d : GetPathAny(d, scope);
         if (target == nullptr) return false;
         std::set<J> seen;
         return static_cast<double>(CountNodes(target, seen).second) == JsNumber(G(g, 2));
       }},
      {"^notMatchAll:([^:]+):(.+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         if (!rows || rows->empty()) return false;
         const std::string pattern = G(g, 2);
         if (!JsRegexTest(pattern, "", "")) return false;
         return std::all_of(rows->begin(), rows->end(), [&](J row) {
           J v = Pick(row, field);
           return v == nullptr || !v->is_string() ||
                  !Test(pattern, "", v->get_ref<const std::string&>());
         });
       }},
      {"^uniqueCharsAll:([^=]+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         if (!rows || rows->empty()) return false;
         return std::all_of(rows->begin(), rows->end(), [&](J row) {
           J v = Pick(row, field);
           if (v == nullptr || !v->is_string() || v->get_ref<const std::string&>().empty()) {
             return false;
           }
           const std::string& s = v->get_ref<const std::string&>();
           std::set<char32_t> seen;
           for (size_t i = 0; i < s.size();) {
             if (!seen.insert(js::NextCodePoint(s, i)).second) return false;
           }
           return true;
         });
       }},
      {"^charCount:([^=]+)=(.):(>=|<=|==)(\\d+)$",
       [](const Groups& g, J d, std::string_view) {
         const auto path_field = SplitFieldPath(G(g, 1));
         const std::string& path = path_field.first;
         const std::string& field = path_field.second;
         const auto rows = RowsAt(d, path);
         if (!rows || rows->empty()) return false;
         const std::string target = G(g, 2);
         size_t hits = 0;
         for (J row : *rows) {
           J v = Pick(row, field);
           if (v == nullptr || !v->is_string()) continue;
           const std::string& s = v->get_ref<const std::string&>();
           for (size_t i = 0; i < s.size();) {
             const size_t from = i;
             js::NextCodePoint(s, i);
             hits += s.compare(from, i - from, target) == 0 ? 1 : 0;
           }
         }
         return CompareCount(hits, G(g, 3), JsNumber(G(g, 4)));
       }},
      {"^deepEq:([^=]+)=(.+)$",
       [](const Groups& g, J d, std::string_view) {
         J actual = GetPathAny(d, Trim(G(g, 1)));
         return actual != nullptr && JsonEquivalent(actual, G(g, 2));
       }},
      {"^jsonEq:([^=]+)=(.+)$",
       [](const Groups& g, J d, std::string_view) {
         J actual = GetPathAny(d, Trim(G(g, 1)));
         if (actual == nullptr) return false;
         const auto expected = ParseJson(G(g, 2));
         return expected && SameJsonValue(actual, &*expected);
       }},
      {"^csvField:([^:]+):(\\d+):(\\d+):(.+)$",
       [](const Groups& g, J d, std::string_view) {
         J text = GetPathAny(d, Trim(G(g, 1)));
         if (text == nullptr || !text->is_string() || text->get<std::string>().empty()) return false;
         const FormatParse csv =
             ParseByFormat("csv", text->get_ref<const std::string&>(), nullptr, nullptr);
         J rows = csv.parsed ? Pick(&*csv.parsed, "rows") : nullptr;
         if (rows == nullptr || !rows->is_array()) return false;
         const double r = JsNumber(G(g, 2)), c = JsNumber(G(g, 3));
         if (r >= static_cast<double>(rows->size())) return false;
         const ordered_json& row = (*rows)[static_cast<size_t>(r)];
         if (!row.is_array() || c >= static_cast<double>(row.size())) return false;
         const ordered_json& cell = row[static_cast<size_t>(c)];
         return cell.is_string() && Test(G(g, 4), "s", cell.get_ref<const std::string&>());
       }},
      {"^jsonPointer:([^=]+)=(.+)$",
       [](const Groups& g, J d, std::string_view) {
         J pointer = GetPathAny(d, Trim(G(g, 1)));
         if (pointer == nullptr || !pointer->is_string()) return false;
         J resolved = ResolveJsonPointer(d, pointer->get<std::string>());
         return resolved != nullptr && JsonEquivalent(resolved, G(g, 2));
       }},
  };
  return rules;
}

struct CompiledRule {
  std::shared_ptr<const LineRegex> regex;
  const Rule* rule;
};

std::vector<CompiledRule> CompileAll(const std::vector<Rule>& rules) {
  std::vector<CompiledRule> compiled;
  for (const Rule& rule : rules) {
    std::string error;
    std::shared_ptr<const LineRegex> regex = LineRegex::Compile(rule.pattern, &error);
    if (!regex) throw Error(std::string("schema_compliance rule pattern: ") + error);
    compiled.push_back({std::move(regex), &rule});
  }
  return compiled;
}

bool MatchRules(const std::vector<CompiledRule>& rules, const std::string& constraint, J data,
                std::string_view corpus, bool* matched) {
  uint64_t steps = kLineStepBudget;
  Groups groups;
  for (const CompiledRule& c : rules) {
    if (c.regex->Exec(constraint, &steps, &groups) != Regex::Result::kMatch) continue;
    *matched = true;
    return c.rule->check(groups, data, corpus);
  }
  *matched = false;
  return false;
}

// evaluateConstraint: the first rule whose pattern matches decides; the novel rules come last.
bool Constraint(const std::string& constraint, J data, std::string_view corpus) {
  static const std::vector<CompiledRule> rules = CompileAll(Rules());
  static const std::vector<CompiledRule> novel = CompileAll(NovelRules());
  bool matched = false;
  const bool pass = MatchRules(rules, constraint, data, corpus, &matched);
  if (matched) return pass;
  return MatchRules(novel, constraint, data, corpus, &matched);
}

// evaluateCrossFieldRule: equal:a,b | different:a,b | nonempty:a | equals-sum:t=a+b-c.
bool CrossFieldRule(const std::string& rule, J data) {
  const size_t separator = rule.find(':');
  if (separator == std::string::npos) return false;
  const std::string kind = Trim(rule.substr(0, separator));
  const std::string payload = rule.substr(separator + 1);
  if (payload.empty()) return false;
  if (kind == "nonempty") {
    J v = GetPathAny(data, Trim(payload));
    return v != nullptr && !v->is_null() && !(v->is_string() && v->get<std::string>().empty());
  }
  if (kind == "equals-sum") {
    const size_t eq = payload.find('=');
    if (eq == std::string::npos) return false;
    J target = GetPathAny(data, Trim(payload.substr(0, eq)));
    if (!IsNum(target) || !std::isfinite(Num(target))) return false;
    // expression.split(/(?=[+-])/): a term starts at every + or -
    const std::string expression = payload.substr(eq + 1);
    std::vector<std::string> terms;
    size_t start = 0;
    for (size_t i = 1; i <= expression.size(); ++i) {
      if (i == expression.size() || expression[i] == '+' || expression[i] == '-') {
        std::string term = Trim(expression.substr(start, i - start));
        if (!term.empty()) terms.push_back(std::move(term));
        start = i;
      }
    }
    if (terms.empty()) return false;
    double total = 0;
    for (const std::string& term : terms) {
      const double sign = term[0] == '-' ? -1 : 1;
      const std::string path = Trim(term[0] == '+' || term[0] == '-' ? term.substr(1) : term);
      J v = GetPathAny(data, path);
      if (!IsNum(v) || !std::isfinite(Num(v))) return false;
      total += sign * Num(v);
    }
    return std::fabs(Num(target) - total) <= 0.011;
  }
  const size_t comma = payload.find(',');
  if (comma == std::string::npos || payload.find(',', comma + 1) != std::string::npos) return false;
  J left = GetPathAny(data, Trim(payload.substr(0, comma)));
  J right = GetPathAny(data, Trim(payload.substr(comma + 1)));
  if (left == nullptr || right == nullptr) return false;
  if (kind == "equal") return StrictEq(left, right);
  if (kind == "different") return !StrictEq(left, right);
  return false;
}

}  // namespace

const js::ordered_json* SchemaPath(const js::ordered_json* value, std::string_view path) {
  return GetPath(value, path);
}

std::vector<std::string> PathAlternatives(std::string_view field) { return Alternatives(field); }

bool EvaluateConstraint(const std::string& constraint, const js::ordered_json* data,
                        std::string_view corpus) {
  return Constraint(constraint, data, corpus);
}

bool EvaluateCrossFieldRule(const std::string& rule, const js::ordered_json* data) {
  return CrossFieldRule(rule, data);
}

}  // namespace evalrun::zx
