// zx-bench's format parsers (parsers/index.ts at a8f5306), as schema_compliance calls them. One file
// because it is one upstream file: ten parsers and the small JSON Schema validator, side by side.
#include "graders/zxbench/format_parsers.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "core/error.h"
#include "graders/framework/regex.h"
#include "graders/zxbench/common.h"
#include "graders/zxbench/js_json.h"
#include "graders/zxbench/js_regex.h"

namespace evalrun::zx {
namespace {

using js::ordered_json;

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The end of JavaScript white space starting at `i` (\s), one code point at a time.
size_t SkipJsSpace(std::string_view s, size_t i) {
  while (i < s.size()) {
    size_t next = i;
    if (!js::IsJsSpace(js::NextCodePoint(s, next))) break;
    i = next;
  }
  return i;
}

// /^```([\w-]*)[ \t]*\r?\n/ at `at`: the index after the opening line, or npos.
size_t FenceOpening(std::string_view s, size_t at) {
  if (s.substr(at, 3) != "```") return std::string_view::npos;
  size_t i = at + 3;
  while (i < s.size() && (IsWordChar(s[i]) || s[i] == '-')) ++i;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  if (i < s.size() && s[i] == '\r') ++i;
  if (i < s.size() && s[i] == '\n') return i + 1;
  return std::string_view::npos;
}

// WHOLE_FENCE_RE on a trimmed text: the body (group 2), or nullopt.
std::optional<std::string_view> WholeFence(std::string_view s) {
  const size_t body = FenceOpening(s, 0);
  if (body == std::string_view::npos || s.size() < body + 3 ||
      s.substr(s.size() - 3) != "```") {
    return std::nullopt;
  }
  std::string_view inner = s.substr(body, s.size() - 3 - body);
  if (!inner.empty() && inner.back() == '\n') inner.remove_suffix(1);  // \r?\n? before ```
  if (!inner.empty() && inner.back() == '\r') inner.remove_suffix(1);
  return inner;
}

std::string Trim(std::string_view s) { return std::string(js::JsTrim(s)); }

FormatViolation Err(std::string type, std::string message) {
  return {std::move(type), std::move(message), true};
}
FormatViolation Warn(std::string type, std::string message) {
  return {std::move(type), std::move(message), false};
}

constexpr const char* kTrailing = "trailing_content";

// ---- JSON -----------------------------------------------------------------------------------

std::optional<ordered_json> TryParseJson(std::string_view text, std::string* error) {
  return ParseJsJsonOrdered(text, error);
}

// The characters extractFirstJsonValue may scan in all: its scan restarts after every unclosed
// bracket, quadratic on a hostile answer ("[[[[..."); zx-bench's has no bound.
constexpr size_t kJsonScanBudget = 200'000'000;

struct Region {
  size_t start, end, length;  // byte offsets; length in UTF-16 units
};

// extractFirstJsonValue: the longest balanced top-level region (among those at least half the
// largest one's length) that JSON.parse accepts.
std::optional<Region> ExtractFirstJsonValue(std::string_view content) {
  std::vector<Region> regions;
  size_t budget = kJsonScanBudget;
  size_t cursor = 0;
  while (cursor < content.size()) {
    const char first = content[cursor];
    if (first != '{' && first != '[') {
      ++cursor;
      continue;
    }
    int64_t depth = 0;
    bool in_string = false, escaped = false;
    size_t closed = std::string_view::npos;
    for (size_t j = cursor; j < content.size(); ++j) {
      if (budget-- == 0) return std::nullopt;
      const char ch = content[j];
      if (in_string) {
        if (escaped) {
          escaped = false;
        } else if (ch == '\\') {
          escaped = true;
        } else if (ch == '"') {
          in_string = false;
        }
        continue;
      }
      if (ch == '"') {
        in_string = true;
        continue;
      }
      if (ch == '{' || ch == '[') {
        ++depth;
      } else if (ch == '}' || ch == ']') {
        if (--depth == 0) {
          closed = j;
          break;
        }
      }
    }
    if (closed == std::string_view::npos) {
      ++cursor;
      continue;
    }
    regions.push_back(
        {cursor, closed + 1, Utf16Length(content.substr(cursor, closed + 1 - cursor))});
    cursor = closed + 1;
  }
  if (regions.empty()) return std::nullopt;
  size_t largest = 0;
  for (const Region& r : regions) largest = std::max(largest, r.length);
  const size_t min_length = std::max<size_t>(2, largest / 2);
  std::stable_sort(regions.begin(), regions.end(),
                   [](const Region& a, const Region& b) { return a.length > b.length; });
  for (const Region& r : regions) {
    if (r.length < min_length) break;
    std::string error;
    if (TryParseJson(content.substr(r.start, r.end - r.start), &error)) return r;
  }
  return std::nullopt;
}

struct SchemaOutcome {
  std::vector<FormatViolation> violations;
  size_t checks = 0;
};

const ordered_json* Get(const ordered_json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string TypeOf(const ordered_json& v) {  // actualJsonType
  if (v.is_null()) return "null";
  if (v.is_array()) return "array";
  if (v.is_object()) return "object";
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "boolean";
  return "number";
}

bool Primitive(const ordered_json& v) { return !v.is_object() && !v.is_array(); }

bool StrictEq(const ordered_json& a, const ordered_json& b) {  // `===`: objects by reference
  return Primitive(a) && Primitive(b) && js::StrictEquals(&a, &b);
}

// JavaScript's Number.isInteger.
bool IsInteger(const ordered_json& v) {
  if (!js::IsNumber(v)) return false;
  const double d = js::NumberOf(v);
  return std::isfinite(d) && std::trunc(d) == d;
}

const ordered_json* ResolveRef(const ordered_json& root, const std::string& ref) {
  if (ref.rfind("#/", 0) != 0) return nullptr;
  const ordered_json* current = &root;
  size_t start = 2;
  for (;;) {
    const size_t slash = ref.find('/', start);
    std::string part = ref.substr(start, slash == std::string::npos ? std::string::npos
                                                                    : slash - start);
    std::string key;
    for (size_t i = 0; i < part.size(); ++i) {  // ~1 -> /, then ~0 -> ~
      if (part[i] == '~' && i + 1 < part.size() && part[i + 1] == '1') {
        key += '/';
        ++i;
      } else {
        key += part[i];
      }
    }
    std::string unescaped;
    for (size_t i = 0; i < key.size(); ++i) {
      if (key[i] == '~' && i + 1 < key.size() && key[i + 1] == '0') {
        unescaped += '~';
        ++i;
      } else {
        unescaped += key[i];
      }
    }
    if (!current->is_object() && !current->is_array()) return nullptr;
    if (current->is_object()) {
      const auto it = current->find(unescaped);
      if (it == current->end()) return nullptr;
      current = &*it;
    } else {
      const auto index = js::ArrayIndex(unescaped);
      if (!index || *index >= current->size()) return nullptr;
      current = &(*current)[*index];
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return current->is_object() || current->is_array() ? current : nullptr;
}

struct FormatPattern {
  const char* name;
  const char* pattern;
};
constexpr FormatPattern kSchemaFormats[] = {
    {"date", "^\\d{4}-\\d{2}-\\d{2}$"},
    {"time", "^\\d{2}:\\d{2}:\\d{2}(?:\\.\\d+)?(?:[Zz]|[+-]\\d{2}:?\\d{2})?$"},
    {"date-time",
     "^\\d{4}-\\d{2}-\\d{2}[Tt ]\\d{2}:\\d{2}:\\d{2}(?:\\.\\d+)?(?:[Zz]|[+-]\\d{2}:?\\d{2})?$"},
    {"uuid", "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"},
    {"email", "^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$"},
};

std::string Num(double d) { return js::JsNumberString(d); }

// validateJsonSchema.
SchemaOutcome Validate(const ordered_json& data, const ordered_json& schema,
                       const ordered_json& root, int depth) {
  SchemaOutcome out;
  if (depth > 20) return out;
  const auto fail = [&](std::string message) {
    out.violations.push_back(Err("schema_mismatch", std::move(message)));
  };
  const auto add = [&](SchemaOutcome sub, const std::string& prefix) {
    for (FormatViolation& v : sub.violations) {
      if (!prefix.empty()) v.message = prefix + v.message;
      out.violations.push_back(std::move(v));
    }
    out.checks += sub.checks;
  };
  static const ordered_json kEmpty = ordered_json::object();
  const auto as_schema = [](const ordered_json& s) -> const ordered_json& {
    return s.is_object() ? s : kEmpty;
  };

  if (const ordered_json* ref = Get(schema, "$ref"); ref != nullptr && ref->is_string()) {
    const ordered_json* resolved = ResolveRef(root, ref->get<std::string>());
    return resolved != nullptr && resolved->is_object() ? Validate(data, *resolved, root, depth + 1)
                                                        : out;
  }

  if (const ordered_json* type = Get(schema, "type")) {
    std::vector<std::string> types;
    if (type->is_array()) {
      for (const ordered_json& t : *type) types.push_back(js::JsToString(t));
    } else {
      types.push_back(js::JsToString(*type));
    }
    if (!types.empty()) {
      ++out.checks;
      const std::string actual = TypeOf(data);
      const bool ok = std::any_of(types.begin(), types.end(), [&](const std::string& t) {
        return t == actual || (t == "integer" && IsInteger(data));
      });
      if (!ok) {
        std::string joined;
        for (size_t i = 0; i < types.size(); ++i) joined += (i ? "|" : "") + types[i];
        fail("Expected type \"" + joined + "\" but got \"" + actual + "\"");
      }
    }
  }
  if (const ordered_json* c = Get(schema, "const")) {
    ++out.checks;
    if (!StrictEq(data, *c)) {
      fail("Expected const " + js::JsStringify(*c) + " but got " + js::JsStringify(data));
    }
  }
  if (const ordered_json* e = Get(schema, "enum"); e != nullptr && e->is_array()) {
    ++out.checks;
    if (std::none_of(e->begin(), e->end(),
                     [&](const ordered_json& candidate) { return StrictEq(candidate, data); })) {
      std::string list;
      for (size_t i = 0; i < e->size(); ++i) list += (i ? ", " : "") + js::JsStringify((*e)[i]);
      fail("Value " + js::JsStringify(data) + " is not one of [" + list + "]");
    }
  }
  const auto number = [&](const char* key) -> std::optional<double> {
    const ordered_json* v = Get(schema, key);
    if (v == nullptr || !js::IsNumber(*v)) return std::nullopt;
    return js::NumberOf(*v);
  };

  if (data.is_string()) {
    const std::string& s = data.get_ref<const std::string&>();
    const double length = static_cast<double>(Utf16Length(s));
    if (const auto min = number("minLength")) {
      ++out.checks;
      if (length < *min) {
        fail("String length " + Num(length) + " is below minLength " + Num(*min));
      }
    }
    if (const auto max = number("maxLength")) {
      ++out.checks;
      if (length > *max) fail("String length " + Num(length) + " exceeds maxLength " + Num(*max));
    }
    if (const ordered_json* p = Get(schema, "pattern"); p != nullptr && p->is_string()) {
      const std::string pattern = p->get<std::string>();
      if (const auto hit = JsRegexTest(pattern, "", s)) {  // an invalid pattern is not counted
        ++out.checks;
        if (!*hit) fail("String does not match pattern " + pattern);
      }
    }
    if (const ordered_json* f = Get(schema, "format"); f != nullptr && f->is_string()) {
      const std::string name = f->get<std::string>();
      for (const FormatPattern& known : kSchemaFormats) {
        if (name != known.name) continue;
        ++out.checks;
        if (!JsRegexTest(known.pattern, "", s).value_or(false)) {
          fail("String does not match format \"" + name + "\"");
        }
      }
    }
  }
  if (js::IsNumber(data)) {
    const double d = js::NumberOf(data);
    if (const auto min = number("minimum")) {
      ++out.checks;
      if (d < *min) fail("Number " + Num(d) + " is below minimum " + Num(*min));
    }
    if (const auto max = number("maximum")) {
      ++out.checks;
      if (d > *max) fail("Number " + Num(d) + " exceeds maximum " + Num(*max));
    }
  }
  if (data.is_array()) {
    const double size = static_cast<double>(data.size());
    if (const auto min = number("minItems")) {
      ++out.checks;
      if (size < *min) fail("Array length " + Num(size) + " is below minItems " + Num(*min));
    }
    if (const auto max = number("maxItems")) {
      ++out.checks;
      if (size > *max) fail("Array length " + Num(size) + " exceeds maxItems " + Num(*max));
    }
    if (const ordered_json* items = Get(schema, "items"); items != nullptr && items->is_object()) {
      for (const ordered_json& item : data) add(Validate(item, *items, root, depth + 1), "");
    }
  }
  if (const ordered_json* one = Get(schema, "oneOf"); one != nullptr && one->is_array()) {
    ++out.checks;
    size_t matched = 0;
    for (const ordered_json& sub : *one) {
      if (Validate(data, as_schema(sub), root, depth + 1).violations.empty()) ++matched;
    }
    if (matched != 1) {
      fail("oneOf matched " + std::to_string(matched) + " subschema(s), expected exactly 1");
    }
  }
  if (const ordered_json* any = Get(schema, "anyOf"); any != nullptr && any->is_array()) {
    ++out.checks;
    const bool matched = std::any_of(any->begin(), any->end(), [&](const ordered_json& sub) {
      return Validate(data, as_schema(sub), root, depth + 1).violations.empty();
    });
    if (!matched) fail("anyOf matched no subschema");
  }
  if (const ordered_json* all = Get(schema, "allOf"); all != nullptr && all->is_array()) {
    for (const ordered_json& sub : *all) add(Validate(data, as_schema(sub), root, depth + 1), "");
  }
  if (data.is_object()) {
    if (const ordered_json* required = Get(schema, "required");
        required != nullptr && required->is_array()) {
      for (const ordered_json& key : *required) {
        ++out.checks;
        const std::string name = js::JsToString(key);
        if (!data.contains(name)) {
          out.violations.push_back(
              Err("missing_required", "Missing required field: \"" + name + "\""));
        }
      }
    }
    if (const ordered_json* properties = Get(schema, "properties");
        properties != nullptr && properties->is_object()) {
      const ordered_json* extra = Get(schema, "additionalProperties");
      if (extra != nullptr && extra->is_boolean() && !extra->get<bool>()) {
        for (const auto& [key, value] : data.items()) {
          (void)value;
          ++out.checks;
          if (!properties->contains(key)) {
            fail("Unexpected property \"" + key + "\" (additionalProperties:false)");
          }
        }
      }
      for (const auto& [key, sub] : properties->items()) {
        const auto it = data.find(key);
        if (it == data.end()) continue;
        add(Validate(*it, as_schema(sub), root, depth + 1), "[" + key + "] ");
      }
    }
  }
  return out;
}

SchemaOutcome ValidateRoot(const ordered_json& data, const ordered_json& schema) {
  return Validate(data, schema, schema, 0);
}

FormatParse ParseJson(std::string_view content, const nlohmann::json* schema) {
  FormatParse out;
  std::optional<ordered_json> ordered_schema;
  if (schema != nullptr && schema->is_object()) {
    ordered_schema = ordered_json::parse(schema->dump());
  }
  const auto validate = [&](const ordered_json& value) {
    if (!ordered_schema) return;
    SchemaOutcome outcome = ValidateRoot(value, *ordered_schema);
    for (FormatViolation& v : outcome.violations) out.violations.push_back(std::move(v));
    out.schema_checks = outcome.checks;
  };
  const std::string trimmed = Trim(content);
  std::string strict_error;
  if (auto strict = TryParseJson(trimmed, &strict_error)) {
    validate(*strict);
    out.parsed = std::move(strict);
    return out;
  }
  if (const auto fenced = WholeFence(trimmed)) {  // the whole answer is one fence
    std::string error;
    if (auto inner = TryParseJson(Trim(*fenced), &error)) {
      validate(*inner);
      out.parsed = std::move(inner);
      return out;
    }
  }
  if (const auto found = ExtractFirstJsonValue(trimmed)) {  // prose around one JSON value
    std::string error;
    auto value =
        TryParseJson(std::string_view(trimmed).substr(found->start, found->end - found->start),
                     &error);
    const std::string outside =
        Trim(trimmed.substr(0, found->start) + trimmed.substr(found->end));
    out.violations.push_back(
        Warn(kTrailing, "Non-JSON text surrounds the JSON value (" +
                               std::to_string(Utf16Length(outside)) + " chars outside)"));
    validate(*value);
    out.parsed = std::move(value);
    return out;
  }
  out.violations.push_back(Err("parse_error", strict_error));
  return out;
}

// ---- CSV ------------------------------------------------------------------------------------

struct CsvScan {
  int fields;
  bool ends_in_quotes;
};
CsvScan ScanCsvLine(std::string_view line, bool start_in_quotes) {
  int fields = 1;
  bool in_quotes = start_in_quotes;
  for (size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (in_quotes) {
      if (ch == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          ++i;
        } else {
          in_quotes = false;
        }
      }
    } else if (ch == '"') {
      in_quotes = true;
    } else if (ch == ',') {
      ++fields;
    }
  }
  if (start_in_quotes) fields = 0;
  return {fields, in_quotes};
}

std::string Join(const std::vector<std::string_view>& lines, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) {
    if (i > from) out += '\n';
    out += lines[i];
  }
  return out;
}

// splitCsvBodyAndTrailing: the table, and the prose after a blank or one-field line.
std::pair<std::string, std::optional<std::string>> SplitCsvBody(const std::string& csv) {
  const auto lines = SplitLines(csv);
  if (lines.size() < 2) return {csv, std::nullopt};
  const CsvScan header = ScanCsvLine(lines[0], false);
  bool in_quotes = header.ends_in_quotes;
  for (size_t i = 1; i < lines.size(); ++i) {
    const CsvScan scan = ScanCsvLine(lines[i], in_quotes);
    const bool was_inside = in_quotes;
    in_quotes = scan.ends_in_quotes;
    if (was_inside || in_quotes) continue;
    if (js::JsTrim(lines[i]).empty() || (header.fields > 1 && scan.fields == 1)) {
      return {Join(lines, 0, i), Join(lines, i, lines.size())};
    }
  }
  return {csv, std::nullopt};
}

std::vector<std::vector<std::string>> ParseCsvRows(std::string_view input) {
  std::vector<std::vector<std::string>> rows;
  std::string current;
  bool in_quotes = false;
  std::vector<std::string> row;
  const auto end_row = [&]() {
    row.push_back(Trim(current));
    if (std::any_of(row.begin(), row.end(), [](const std::string& c) { return !c.empty(); })) {
      rows.push_back(std::move(row));
    }
    row.clear();
    current.clear();
  };
  for (size_t i = 0; i < input.size(); ++i) {
    const char ch = input[i];
    const char next = i + 1 < input.size() ? input[i + 1] : '\0';
    if (in_quotes) {
      if (ch == '"' && next == '"') {
        current += '"';
        ++i;
      } else if (ch == '"') {
        in_quotes = false;
      } else {
        current += ch;
      }
    } else if (ch == '"') {
      in_quotes = true;
    } else if (ch == ',') {
      row.push_back(Trim(current));
      current.clear();
    } else if (ch == '\n' || (ch == '\r' && next == '\n')) {
      end_row();
      if (ch == '\r') ++i;
    } else {
      current += ch;
    }
  }
  end_row();
  return rows;
}

size_t CountNonBlankLines(std::string_view s) {
  size_t n = 0;
  for (std::string_view line : SplitLines(s)) n += js::JsTrim(line).empty() ? 0 : 1;
  return n;
}

FormatParse ParseCsv(std::string_view content, const std::vector<std::string>* expected) {
  FormatParse out;
  const FormatPayload payload = ExtractFormatPayload("csv", content);
  if (payload.trailing) {
    out.violations.push_back(
        Warn(kTrailing, "CSV body is fenced and extra text exists outside the fence"));
  }
  const auto [body, trailing] = SplitCsvBody(payload.text);
  if (trailing) {
    out.violations.push_back(Warn(kTrailing, "Discarded " +
                                                    std::to_string(CountNonBlankLines(*trailing)) +
                                                    " trailing non-CSV line(s)"));
  }
  auto rows = ParseCsvRows(body);
  if (rows.empty()) {
    out.violations.push_back(Err("empty_content", "CSV is empty"));
    return out;
  }
  const auto& headers = rows[0];
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].size() != headers.size()) {
      out.violations.push_back(Err(
          "column_mismatch", "Row " + std::to_string(i + 1) + " has " +
                                 std::to_string(rows[i].size()) + " columns, expected " +
                                 std::to_string(headers.size())));
    }
  }
  if (expected != nullptr) {
    for (const std::string& column : *expected) {
      if (std::find(headers.begin(), headers.end(), column) == headers.end()) {
        out.violations.push_back(
            Err("missing_column", "Expected column \"" + column + "\" not found in headers"));
      }
    }
  }
  ordered_json parsed = ordered_json::object();
  parsed["headers"] = headers;
  ordered_json data = ordered_json::array();
  for (size_t i = 1; i < rows.size(); ++i) data.push_back(rows[i]);
  parsed["rows"] = std::move(data);
  out.parsed = std::move(parsed);
  return out;
}

// ---- XML, SQL, HTML -------------------------------------------------------------------------

void PushTrailing(FormatParse& out, const FormatPayload& payload, const char* label) {
  if (payload.trailing) {
    out.violations.push_back(Warn(
        kTrailing, std::string(label) + " body is fenced and extra text exists outside the fence"));
  }
}

bool NameStart(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool NameChar(char c) { return IsWordChar(c) || c == '.' || c == ':' || c == '-'; }

// XML_TAG_RE at '<' = s[at]: the tag's parts, or false when no tag starts there.
bool XmlTag(std::string_view s, size_t at, bool* closing, std::string_view* name,
            std::string_view* attrs, size_t* end) {
  size_t i = at + 1;
  *closing = i < s.size() && s[i] == '/';
  if (*closing) ++i;
  if (i >= s.size() || !NameStart(s[i])) return false;
  const size_t name_start = i;
  while (i < s.size() && NameChar(s[i])) ++i;
  *name = s.substr(name_start, i - name_start);
  const size_t attrs_start = i;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '>') {
      *attrs = s.substr(attrs_start, i - attrs_start);
      *end = i + 1;
      return true;
    }
    if (c == '"' || c == '\'') {
      const size_t close = s.find(c, i + 1);
      if (close == std::string_view::npos) return false;
      i = close + 1;
      continue;
    }
    ++i;
  }
  return false;
}

// /\/\s*$/
bool EndsWithSlash(std::string_view attrs) {
  size_t end = attrs.size();
  while (end > 0) {
    // step back over trailing JavaScript white space, one code point at a time
    size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(attrs[start]) & 0xC0) == 0x80) --start;
    size_t probe = start;
    if (!js::IsJsSpace(js::NextCodePoint(attrs, probe))) break;
    end = start;
  }
  return end > 0 && attrs[end - 1] == '/';
}

FormatParse ParseXml(std::string_view content) {
  FormatParse out;
  const FormatPayload payload = ExtractFormatPayload("xml", content);
  const std::string& xml = payload.text;
  PushTrailing(out, payload, "XML");
  if (!StartsWith(xml, "<")) {  // '<?xml' starts with '<' too
    out.violations.push_back(Err("parse_error", "Content does not appear to be XML"));
    return out;
  }
  std::vector<std::pair<std::string, int64_t>> open, close;  // insertion order
  const auto bump = [](std::vector<std::pair<std::string, int64_t>>& counts,
                       std::string_view name) {
    for (auto& [n, c] : counts) {
      if (n == name) {
        ++c;
        return;
      }
    }
    counts.emplace_back(std::string(name), 1);
  };
  const auto count_of = [](const std::vector<std::pair<std::string, int64_t>>& counts,
                           const std::string& name) -> int64_t {
    for (const auto& [n, c] : counts) {
      if (n == name) return c;
    }
    return 0;
  };
  size_t i = 0;
  while ((i = xml.find('<', i)) != std::string::npos) {
    bool closing = false;
    std::string_view name, attrs;
    size_t end = 0;
    if (!XmlTag(xml, i, &closing, &name, &attrs, &end)) {
      ++i;
      continue;
    }
    if (closing) {
      bump(close, name);
    } else if (!EndsWithSlash(attrs)) {
      bump(open, name);
    }
    i = end;
  }
  for (const auto& [name, count] : open) {
    const int64_t balance = count - count_of(close, name);
    if (balance > 0) {
      out.violations.push_back(Err("unclosed_tag", "Tag \"" + name +
                                                         "\" is not properly closed (" +
                                                         std::to_string(balance) + " unclosed)"));
    }
  }
  for (const auto& [name, count] : close) {
    const int64_t balance = count_of(open, name) - count;
    if (balance < 0) {
      out.violations.push_back(Err("extra_close_tag", "Tag \"" + name + "\" has " +
                                                            std::to_string(-balance) +
                                                            " extra closing tags"));
    }
  }
  out.parsed = ordered_json(xml);
  return out;
}

std::string AsciiUpper(std::string s) {
  for (char& c : s) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return s;
}

FormatParse ParseSql(std::string_view content) {
  FormatParse out;
  const FormatPayload payload = ExtractFormatPayload("sql", content);
  PushTrailing(out, payload, "SQL");
  std::vector<std::string> statements;
  size_t start = 0;
  const std::string& sql = payload.text;
  for (;;) {
    const size_t semi = sql.find(';', start);
    const std::string part = Trim(std::string_view(sql).substr(
        start, semi == std::string::npos ? std::string::npos : semi - start));
    if (!part.empty()) statements.push_back(part);
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  if (statements.empty()) {
    out.violations.push_back(Err("empty_content", "No SQL statements found"));
    return out;
  }
  static const char* const kKeywords[] = {
      "SELECT", "INSERT",   "UPDATE",   "DELETE", "CREATE",   "ALTER",  "DROP",   "WITH",
      "EXPLAIN", "SHOW",    "DESCRIBE", "SET",    "USE",      "BEGIN",  "COMMIT", "ROLLBACK",
      "DECLARE", "DELIMITER", "GRANT",  "REVOKE", "TRUNCATE", "CALL"};
  for (size_t n = 0; n < statements.size(); ++n) {
    const std::string& stmt = statements[n];
    // stmt.replace(/^(?:\s*--[^\n]*\n)+/, ''): leading comment lines
    size_t at = 0;
    for (;;) {
      const size_t s = SkipJsSpace(stmt, at);
      if (stmt.compare(s, 2, "--") != 0) break;
      const size_t nl = stmt.find('\n', s);
      if (nl == std::string::npos) break;
      at = nl + 1;
    }
    std::string_view rest = std::string_view(stmt).substr(at);
    size_t word_end = 0;
    while (word_end < rest.size()) {
      size_t next = word_end;
      if (js::IsJsSpace(js::NextCodePoint(rest, next))) break;
      word_end = next;
    }
    const std::string first = AsciiUpper(std::string(rest.substr(0, word_end)));
    if (!first.empty() && std::none_of(std::begin(kKeywords), std::end(kKeywords),
                                       [&](const char* k) { return first == k; })) {
      out.violations.push_back(Warn("invalid_syntax", "Statement " + std::to_string(n + 1) +
                                                             ": unexpected keyword \"" + first +
                                                             "\""));
    }
    int64_t depth = 0;
    for (const char c : stmt) {
      if (c == '(') ++depth;
      if (c == ')') --depth;
      if (depth < 0) {
        out.violations.push_back(Err("unmatched_paren", "Statement " + std::to_string(n + 1) +
                                                              ": unmatched closing parenthesis"));
        break;
      }
    }
    if (depth > 0) {
      out.violations.push_back(Err("unmatched_paren", "Statement " + std::to_string(n + 1) +
                                                            ": " + std::to_string(depth) +
                                                            " unclosed parenthesis"));
    }
  }
  out.parsed = ordered_json(statements);
  return out;
}

std::string AsciiLower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

FormatParse ParseHtml(std::string_view content) {
  FormatParse out;
  const FormatPayload payload = ExtractFormatPayload("html", content);
  const std::string& html = payload.text;
  PushTrailing(out, payload, "HTML");
  const std::string lower = AsciiLower(html);
  const auto has_tag = [&](const std::string& tag) {  // /<tag[\s>]/i
    size_t at = 0;
    while ((at = lower.find("<" + tag, at)) != std::string::npos) {
      const size_t after = at + 1 + tag.size();
      size_t probe = after;
      if (after < lower.size() &&
          (lower[after] == '>' || js::IsJsSpace(js::NextCodePoint(lower, probe)))) {
        return true;
      }
      ++at;
    }
    return false;
  };
  if (!StartsWith(lower, "<!doctype")) {
    out.violations.push_back(Warn("missing_structure", "Missing DOCTYPE declaration"));
  }
  if (!has_tag("html")) out.violations.push_back(Warn("missing_structure", "Missing <html> tag"));
  if (!has_tag("head")) out.violations.push_back(Warn("missing_structure", "Missing <head> tag"));
  if (!has_tag("body")) out.violations.push_back(Warn("missing_structure", "Missing <body> tag"));
  // Open tags /<([a-zA-Z][a-zA-Z0-9]*)[^>]*(?<!\/)>/g and close tags /<\/([a-zA-Z][a-zA-Z0-9]*)>/g
  static const char* const kVoid[] = {"br",  "hr",    "img",    "input", "meta",  "link", "area",
                                      "base", "col",  "embed",  "source", "track", "wbr"};
  const auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  std::vector<std::pair<std::string, int64_t>> balance;
  const auto bump = [&](const std::string& tag, int64_t by) {
    for (auto& [t, b] : balance) {
      if (t == tag) {
        b += by;
        return;
      }
    }
    balance.emplace_back(tag, by);
  };
  for (size_t i = 0; (i = html.find('<', i)) != std::string::npos; ++i) {
    size_t j = i + 1;
    const bool close = j < html.size() && html[j] == '/';
    if (close) ++j;
    if (j >= html.size() || !((html[j] >= 'a' && html[j] <= 'z') ||
                              (html[j] >= 'A' && html[j] <= 'Z'))) {
      continue;
    }
    size_t k = j;
    while (k < html.size() && alnum(html[k])) ++k;
    const std::string tag = AsciiLower(html.substr(j, k - j));
    if (close) {
      if (k < html.size() && html[k] == '>') bump(tag, -1);
      continue;
    }
    const size_t gt = html.find('>', k);
    if (gt == std::string::npos || html[gt - 1] == '/') continue;
    if (std::none_of(std::begin(kVoid), std::end(kVoid), [&](const char* v) { return tag == v; })) {
      bump(tag, 1);
    }
  }
  for (const auto& [tag, b] : balance) {
    if (b > 0) {
      out.violations.push_back(Warn("unclosed_tag", "Tag <" + tag + "> not closed (" +
                                                           std::to_string(b) + " unclosed)"));
    }
  }
  out.parsed = ordered_json(html);
  return out;
}

// ---- YAML, regex, Mermaid, Markdown, TOML ---------------------------------------------------

FormatParse ParseYaml(std::string_view content) {
  FormatParse out;
  const FormatPayload payload = ExtractFormatPayload("yaml", content);
  PushTrailing(out, payload, "YAML");
  bool has_key = false;
  size_t number = 0;
  for (std::string_view line : [&] {
         std::vector<std::string_view> lines;  // split('\n')
         std::string_view s = payload.text;
         size_t start = 0;
         for (size_t nl; (nl = s.find('\n', start)) != std::string_view::npos; start = nl + 1) {
           lines.push_back(s.substr(start, nl - start));
         }
         lines.push_back(s.substr(start));
         return lines;
       }()) {
    ++number;
    const std::string_view trimmed = js::JsTrim(line);
    if (trimmed.empty() || StartsWith(trimmed, "#") || trimmed == "---" || trimmed == "...") {
      continue;
    }
    const std::string_view indent = line.substr(0, SkipJsSpace(line, 0));
    if (indent.find('\t') != std::string_view::npos) {
      out.violations.push_back(Err("invalid_indent", "Line " + std::to_string(number) +
                                                           ": tabs are not allowed in YAML"));
    }
    // /^[a-zA-Z_"'&*][\w\-."'&* ]*\s*:/ on the trimmed line
    const auto key_start = [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '"' ||
             c == '\'' || c == '&' || c == '*';
    };
    const auto key_char = [](char c) {
      return IsWordChar(c) || c == '-' || c == '.' || c == '"' || c == '\'' || c == '&' ||
             c == '*' || c == ' ';
    };
    bool key = false;
    if (key_start(trimmed[0])) {
      size_t i = 1;
      while (i < trimmed.size() && key_char(trimmed[i])) ++i;
      // the run may end in spaces that \s* takes; any other white space before ':' too
      key = trimmed.substr(SkipJsSpace(trimmed, i), 1) == ":";
    }
    if (key) {
      has_key = true;
    } else if (!StartsWith(trimmed, "-") && !StartsWith(trimmed, ":") &&
               line.find(':') == std::string_view::npos) {
      out.violations.push_back(
          Warn("invalid_syntax", "Line " + std::to_string(number) + ": invalid YAML syntax"));
    }
  }
  if (!has_key) out.violations.push_back(Err("invalid_syntax", "No key-value pairs found"));
  out.parsed = ordered_json(payload.text);
  return out;
}

FormatParse ParseRegexFormat(std::string_view content) {
  FormatParse out;
  const FormatPayload payload = ExtractFormatPayload("regex", content);
  const std::string& text = payload.text;
  std::string pattern = text, flags;
  // /^\/(.+)\/([gimsuy]*)$/ ('.' stops at line terminators)
  if (text.size() >= 3 && text[0] == '/' && text.find('\n') == std::string::npos &&
      text.find('\r') == std::string::npos) {
    size_t slash = text.size();
    while (slash > 1) {
      --slash;
      if (text[slash] == '/') break;
      if (std::string_view("gimsuy").find(text[slash]) == std::string_view::npos) {
        slash = 0;
        break;
      }
    }
    if (slash > 1 && text[slash] == '/') {
      pattern = text.substr(1, slash - 1);
      flags = text.substr(slash + 1);
    }
  }
  std::string error;
  for (size_t i = 0; i < flags.size(); ++i) {
    if (flags.find(flags[i], i + 1) != std::string::npos) {
      error = "Invalid flags supplied to RegExp constructor '" + flags + "'";
    }
  }
  std::string compile_flags;
  for (const char f : flags) {
    if (f != 'g' && f != 'y') compile_flags += f;
  }
  if (error.empty()) {
    try {
      (void)Regex::CompileJavaScript(pattern, compile_flags);
    } catch (const evalrun::Error& e) {
      error = std::string("Invalid regular expression: /") + pattern + "/: " + e.what();
    }
  }
  if (!error.empty()) {
    out.violations.push_back(Err("parse_error", error));
    return out;
  }
  out.parsed = ordered_json::object();  // a RegExp: no enumerable properties
  return out;
}

FormatParse ParseMermaid(std::string_view content) {
  FormatParse out;
  const FormatPayload payload = ExtractFormatPayload("mermaid", content);
  const std::string& text = payload.text;
  PushTrailing(out, payload, "Mermaid");
  static const char* const kTypes[] = {
      "graph",   "flowchart", "sequenceDiagram", "classDiagram", "stateDiagram", "erDiagram",
      "gantt",   "pie",       "gitGraph",        "journey",      "mindmap",      "timeline",
      "sankey",  "xychart",   "block-beta",      "requirementDiagram", "quadrantChart"};
  const std::string first_line(js::JsTrim(std::string_view(text).substr(0, text.find('\n'))));
  if (std::none_of(std::begin(kTypes), std::end(kTypes), [&](const char* t) {
        return first_line.find(t) != std::string::npos;
      })) {
    // firstLine.slice(0, 50): 50 UTF-16 units; cut here at a code point boundary
    std::string shown;
    size_t units = 0;
    for (size_t i = 0; i < first_line.size() && units < 50;) {
      const size_t from = i;
      const char32_t cp = js::NextCodePoint(first_line, i);
      units += cp > 0xFFFF ? 2 : 1;
      if (units <= 50) shown.append(first_line, from, i - from);
    }
    out.violations.push_back(Err(
        "invalid_syntax", "No valid Mermaid diagram type found. First line: \"" + shown + "\""));
  }
  // erDiagram: its relationship lines' cardinality marks (||--o{) are not brackets
  std::string_view source = text;
  std::string filtered;
  {
    const size_t s = SkipJsSpace(first_line, 0);
    if (AsciiLower(first_line.substr(s, 9)) == "erdiagram") {
      bool first = true;
      std::string_view rest = text;
      for (;;) {
        const size_t nl = rest.find('\n');
        const std::string_view line = rest.substr(0, nl);
        if (line.find("--") == std::string_view::npos &&
            line.find("..") == std::string_view::npos) {
          if (!first) filtered += '\n';
          filtered += line;
          first = false;
        }
        if (nl == std::string_view::npos) break;
        rest.remove_prefix(nl + 1);
      }
      source = filtered;
    }
  }
  int64_t depth = 0;
  bool unbalanced = false;
  for (const char c : source) {
    if (c == '[' || c == '{' || c == '(') ++depth;
    if (c == ']' || c == '}' || c == ')') --depth;
    if (depth < 0) {
      out.violations.push_back(Err("unmatched_bracket", "Unmatched closing bracket"));
      unbalanced = true;
      break;
    }
  }
  if (!unbalanced && depth > 0) {
    out.violations.push_back(
        Err("unmatched_bracket", std::to_string(depth) + " unclosed brackets"));
  }
  out.parsed = ordered_json(text);
  return out;
}

FormatParse ParseMarkdown(std::string_view content) {
  FormatParse out;
  const FormatPayload payload = ExtractFormatPayload("markdown", content);
  const std::string& md = payload.text;
  const bool heading = JsRegexTest("^#{1,6}\\s", "m", md).value_or(false);
  const bool list = JsRegexTest("^[-*+]\\s", "m", md).value_or(false) ||
                    JsRegexTest("^\\d+\\.\\s", "m", md).value_or(false);
  const bool paragraph = md.find("\n\n") != std::string::npos;
  if (!heading && !list && !paragraph) {
    out.violations.push_back(Warn(
        "missing_structure",
        "Content does not appear to be valid Markdown (no headings, lists, or paragraphs)"));
  }
  const size_t fences = JsRegexCountGm("^```", md).value_or(0);
  if (fences % 2 != 0) {
    out.violations.push_back(Err("unclosed_code_block",
                                   "Unclosed code block (" + std::to_string(fences) +
                                       " fences, expected even number)"));
  }
  out.parsed = ordered_json(md);
  return out;
}

FormatParse ParseToml(std::string_view content) {
  FormatParse out;
  const FormatPayload payload = ExtractFormatPayload("toml", content);
  PushTrailing(out, payload, "TOML");
  bool has_key = false;
  size_t number = 0;
  std::string_view rest = payload.text;
  const auto table_name = [](std::string_view s) {  // [\w.-]+
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
      return IsWordChar(c) || c == '.' || c == '-';
    });
  };
  for (;;) {
    ++number;
    const size_t nl = rest.find('\n');
    const std::string_view line = js::JsTrim(rest.substr(0, nl));
    if (!line.empty() && line[0] != '#') {
      const bool table = line.size() >= 2 && line.front() == '[' && line.back() == ']' &&
                         table_name(line.substr(1, line.size() - 2));
      const bool array_table = line.size() >= 4 && StartsWith(line, "[[") &&
                               line.substr(line.size() - 2) == "]]" &&
                               table_name(line.substr(2, line.size() - 4));
      if (!table && !array_table) {
        size_t k = 0;
        while (k < line.size() && (IsWordChar(line[k]) || line[k] == '.' || line[k] == '-')) ++k;
        const size_t eq = SkipJsSpace(line, k);
        if (k > 0 && eq < line.size() && line[eq] == '=') {
          has_key = true;
          // line.split('=').slice(1).join('=').trim(): everything after the first '='
          if (js::JsTrim(line.substr(line.find('=') + 1)).empty()) {
            out.violations.push_back(
                Warn("invalid_syntax", "Line " + std::to_string(number) + ": empty value"));
          }
        } else {
          out.violations.push_back(Warn(
              "invalid_syntax", "Line " + std::to_string(number) + ": invalid TOML syntax"));
        }
      }
    }
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
  if (!has_key) out.violations.push_back(Err("invalid_syntax", "No key-value pairs found"));
  out.parsed = ordered_json(payload.text);
  return out;
}

}  // namespace

FormatPayload ExtractFormatPayload(std::string_view format, std::string_view content) {
  const std::string_view trimmed = js::JsTrim(content);
  if (const auto whole = WholeFence(trimmed)) return {Trim(*whole), true, false};
  if (format == "markdown") return {std::string(trimmed), false, false};
  // ANY_FENCE_RE: the first ``` opening a line-ended fence line, up to the next ```
  for (size_t at = trimmed.find("```"); at != std::string_view::npos;
       at = trimmed.find("```", at + 1)) {
    const size_t body = FenceOpening(trimmed, at);
    if (body == std::string_view::npos) continue;
    const size_t close = trimmed.find("```", body);
    if (close == std::string_view::npos) continue;
    const size_t covered = close + 3 - at;
    return {Trim(trimmed.substr(body, close - body)), true, covered < trimmed.size()};
  }
  return {std::string(trimmed), false, false};
}

bool IsSyntaxViolation(const FormatViolation& v) {
  return v.error && v.type != "schema_mismatch" && v.type != "missing_required";
}

FormatParse ParseByFormat(std::string_view format, std::string_view content,
                          const nlohmann::json* schema,
                          const std::vector<std::string>* expected_columns) {
  if (format == "json") return ParseJson(content, schema);
  if (format == "csv") return ParseCsv(content, expected_columns);
  if (format == "xml") return ParseXml(content);
  if (format == "sql") return ParseSql(content);
  if (format == "html") return ParseHtml(content);
  if (format == "yaml") return ParseYaml(content);
  if (format == "regex") return ParseRegexFormat(content);
  if (format == "mermaid") return ParseMermaid(content);
  if (format == "markdown") return ParseMarkdown(content);
  if (format == "toml") return ParseToml(content);
  FormatParse out;
  out.violations.push_back(
      Err("unsupported", "Format \"" + std::string(format) + "\" is not supported"));
  return out;
}

size_t CountSchemaViolations(const js::ordered_json& instance, const js::ordered_json& schema) {
  return ValidateRoot(instance, schema).violations.size();
}

std::optional<bool> JsRegexTest(const std::string& pattern, const std::string& flags,
                                std::string_view subject) {
  std::shared_ptr<const Regex> regex;
  try {
    regex = Regex::CompileJavaScript(pattern, flags);
  } catch (const evalrun::Error&) {
    return std::nullopt;
  }
  return regex->Match(subject, false) == Regex::Result::kMatch;
}

std::optional<size_t> JsRegexCountGm(const std::string& pattern, std::string_view subject) {
  std::string error;
  const auto regex = LineRegex::Compile(pattern, &error, false, true);
  if (!regex) return std::nullopt;
  uint64_t steps = kLineStepBudget;
  std::vector<std::optional<std::string_view>> groups;
  size_t count = 0;
  size_t start = 0;
  while (start <= subject.size()) {
    const Regex::Result r = regex->Exec(subject, &steps, &groups, start);
    if (r == Regex::Result::kGaveUp) return std::nullopt;
    if (r == Regex::Result::kNoMatch || groups.empty() || !groups[0]) break;
    ++count;
    const size_t from = static_cast<size_t>(groups[0]->data() - subject.data());
    size_t end = from + groups[0]->size();
    if (groups[0]->empty()) {  // lastIndex steps over one character
      if (end >= subject.size()) break;
      js::NextCodePoint(subject, end);
    }
    start = end;
  }
  return count;
}

std::vector<std::string_view> SplitLines(std::string_view s) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  for (;;) {
    const size_t nl = s.find('\n', start);
    if (nl == std::string_view::npos) {
      lines.push_back(s.substr(start));
      return lines;
    }
    size_t end = nl;
    if (end > start && s[end - 1] == '\r') --end;
    lines.push_back(s.substr(start, end - start));
    start = nl + 1;
  }
}

std::string EscapeJsRegex(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (std::string_view(".*+?^${}()|[]\\").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

}  // namespace evalrun::zx
