// zx-bench's textStructure.ts parsers (a5f6a19f), rule for rule.
#include "graders/zxbench/text_structure.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>

#include "graders/zxbench/format_parsers.h"
#include "graders/zxbench/js_json.h"
#include "graders/zxbench/js_regex.h"

namespace evalrun::zx {
namespace {

using js::ordered_json;

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool NameStart(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool NameChar(char c) { return IsWordChar(c) || c == '.' || c == ':' || c == '-'; }
bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool SpaceAt(std::string_view s, size_t i, size_t* next = nullptr) {  // \s at i
  if (i >= s.size()) return false;
  size_t n = i;
  const bool space = js::IsJsSpace(js::NextCodePoint(s, n));
  if (next != nullptr) *next = n;
  return space;
}
size_t SkipSpace(std::string_view s, size_t i) {
  size_t next = i;
  while (SpaceAt(s, i, &next)) i = next;
  return i;
}
std::string TrimEnd(std::string_view s) {  // String.prototype.trimEnd
  const std::string_view t = js::JsTrim(s);
  if (t.empty()) return {};
  return std::string(s.substr(0, static_cast<size_t>(t.data() - s.data()) + t.size()));
}
std::string_view TrimStart(std::string_view s) {
  const std::string_view t = js::JsTrim(s);
  if (t.empty()) return {};
  return s.substr(static_cast<size_t>(t.data() - s.data()));
}

// /&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/: an ampersand that starts no entity.
bool BareAmpersand(std::string_view s) {
  for (size_t i = s.find('&'); i != std::string_view::npos; i = s.find('&', i + 1)) {
    const std::string_view rest = s.substr(i + 1);
    bool entity = false;
    for (std::string_view name : {"amp;", "lt;", "gt;", "quot;", "apos;"}) {
      entity = entity || StartsWith(rest, name);
    }
    if (!entity && StartsWith(rest, "#")) {
      size_t j = 1;
      const bool hex = rest.size() > 1 && rest[1] == 'x';
      if (hex) ++j;
      const size_t digits = j;
      while (j < rest.size() && (hex ? std::isxdigit(static_cast<unsigned char>(rest[j])) != 0
                                     : (rest[j] >= '0' && rest[j] <= '9'))) {
        ++j;
      }
      // '#x' followed by no hex digit may still be '#' + digits? 'x' is no digit: no entity
      entity = j > digits && j < rest.size() && rest[j] == ';';
    }
    if (!entity) return true;
  }
  return false;
}

// The markup tokenizer's alternatives at '<' (source[i] == '<'): the token's end, and for CDATA
// the contents.
size_t MarkupToken(std::string_view s, size_t i, std::optional<std::string_view>* cdata) {
  if (StartsWith(s.substr(i), "<!--")) {
    const size_t end = s.find("-->", i + 4);
    if (end != std::string_view::npos) return end + 3;
  }
  if (StartsWith(s.substr(i), "<![CDATA[")) {
    const size_t end = s.find("]]>", i + 9);
    if (end != std::string_view::npos) {
      *cdata = s.substr(i + 9, end - i - 9);
      return end + 3;
    }
  }
  if (StartsWith(s.substr(i), "<?")) {
    const size_t end = s.find("?>", i + 2);
    if (end != std::string_view::npos) return end + 2;
  }
  if (StartsWith(s.substr(i), "<!")) {
    const size_t end = s.find('>', i + 2);
    if (end != std::string_view::npos) return end + 1;
  }
  if (StartsWith(s.substr(i), "</") && i + 2 < s.size() && NameStart(s[i + 2])) {
    size_t j = i + 3;
    while (j < s.size() && NameChar(s[j])) ++j;
    j = SkipSpace(s, j);
    if (j < s.size() && s[j] == '>') return j + 1;
  }
  if (i + 1 < s.size() && NameStart(s[i + 1])) {
    size_t j = i + 2;
    while (j < s.size() && NameChar(s[j])) ++j;
    while (j < s.size()) {
      const char c = s[j];
      if (c == '>') return j + 1;
      if (c == '"' || c == '\'') {
        const size_t close = s.find(c, j + 1);
        if (close == std::string_view::npos) break;
        j = close + 1;
        continue;
      }
      ++j;
    }
  }
  return i + 1;  // a lone '<'
}

struct AttrMatch {
  size_t start, end;
  std::string key, value;
};
// /([\w:.-]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s=/>]+)))?/g over a tag's tail.
std::vector<AttrMatch> Attributes(std::string_view tail) {
  std::vector<AttrMatch> out;
  const auto key_char = [](char c) { return IsWordChar(c) || c == ':' || c == '.' || c == '-'; };
  size_t i = 0;
  while (i < tail.size()) {
    if (!key_char(tail[i])) {
      ++i;
      continue;
    }
    AttrMatch m;
    m.start = i;
    while (i < tail.size() && key_char(tail[i])) ++i;
    m.key = std::string(tail.substr(m.start, i - m.start));
    m.end = i;
    size_t j = SkipSpace(tail, i);
    if (j < tail.size() && tail[j] == '=') {
      j = SkipSpace(tail, j + 1);
      if (j < tail.size() && (tail[j] == '"' || tail[j] == '\'')) {
        const size_t close = tail.find(tail[j], j + 1);
        if (close != std::string_view::npos) {
          m.value = std::string(tail.substr(j + 1, close - j - 1));
          m.end = close + 1;
        }
      }
      if (m.end == i) {  // no quoted value: [^\s=/>]+
        size_t k = j;
        size_t next = k;
        while (k < tail.size() && tail[k] != '=' && tail[k] != '/' && tail[k] != '>' &&
               !SpaceAt(tail, k, &next)) {
          size_t step = k;
          js::NextCodePoint(tail, step);
          k = step;
        }
        if (k > j) {
          m.value = std::string(tail.substr(j, k - j));
          m.end = k;
        }
      }
    }
    i = m.end;
    out.push_back(std::move(m));
  }
  return out;
}

// ---- YAML scalars -----------------------------------------------------------------------

std::vector<std::string> SplitTopLevel(std::string_view value, char delimiter = ',') {
  std::vector<std::string> result;
  char quote = 0;
  bool escaped = false;
  int64_t depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (quote != 0) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == quote) {
        quote = 0;
      }
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{' || c == '(') {
      ++depth;
    } else if (c == ']' || c == '}' || c == ')') {
      --depth;
    } else if (c == delimiter && depth == 0) {
      result.emplace_back(js::JsTrim(value.substr(start, i - start)));
      start = i + 1;
    }
  }
  result.emplace_back(js::JsTrim(value.substr(start)));
  return result;
}

std::string StripComment(std::string_view line) {
  char quote = 0;
  bool escaped = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      bool after_space = i == 0;
      if (!after_space) {  // the code point before '#' is white space
        size_t start = i - 1;
        while (start > 0 && (static_cast<unsigned char>(line[start]) & 0xC0) == 0x80) --start;
        after_space = SpaceAt(line, start);
      }
      if (after_space) return std::string(line.substr(0, i));
    }
  }
  return std::string(line);
}

bool DecimalNumber(std::string_view v) {  // /^-?\d+(?:\.\d+)?$/
  size_t i = 0;
  if (i < v.size() && v[i] == '-') ++i;
  const size_t digits = i;
  while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
  if (i == digits) return false;
  if (i < v.size() && v[i] == '.') {
    const size_t frac = ++i;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
    if (i == frac) return false;
  }
  return i == v.size();
}

ordered_json Scalar(std::string_view raw) {
  const std::string_view value = js::JsTrim(raw);
  if (value.empty() || value == "~" || Lower(value) == "null") return nullptr;
  if (value == "true") return true;
  if (value == "false") return false;
  if (DecimalNumber(value)) return std::stod(std::string(value));
  if (value.front() == '"' && value.back() == '"') {
    std::string error;
    if (auto parsed = ParseJsJsonOrdered(value, &error)) return *parsed;
    return value.size() >= 2 ? std::string(value.substr(1, value.size() - 2)) : std::string();
  }
  if (value.front() == '\'' && value.back() == '\'') {
    std::string inner = value.size() >= 2 ? std::string(value.substr(1, value.size() - 2)) : "";
    std::string out;
    for (size_t i = 0; i < inner.size(); ++i) {
      out += inner[i];
      if (inner[i] == '\'' && i + 1 < inner.size() && inner[i + 1] == '\'') ++i;
    }
    return out;
  }
  if (value.front() == '[' && value.back() == ']') {
    ordered_json list = ordered_json::array();
    const std::string_view inner =
        value.size() >= 2 ? value.substr(1, value.size() - 2) : std::string_view();
    for (const std::string& part : SplitTopLevel(inner)) {
      if (!part.empty()) list.push_back(Scalar(part));
    }
    return list;
  }
  if (value.front() == '{' && value.back() == '}') {
    ordered_json map = ordered_json::object();
    const std::string_view inner =
        value.size() >= 2 ? value.substr(1, value.size() - 2) : std::string_view();
    for (const std::string& pair : SplitTopLevel(inner)) {
      size_t cut = pair.find(':');
      if (cut == std::string::npos) cut = pair.find('=');
      if (cut != std::string::npos && cut > 0) {
        map[std::string(js::JsTrim(std::string_view(pair).substr(0, cut)))] =
            Scalar(std::string_view(pair).substr(cut + 1));
      }
    }
    return map;
  }
  return std::string(value);
}

// String(v) for a scalar's value (a key).
std::string ToKey(const ordered_json& v) {
  if (v.is_object()) return "[object Object]";
  if (v.is_array()) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (i > 0) out += ',';
      if (!v[i].is_null()) out += ToKey(v[i]);
    }
    return out;
  }
  return js::JsToString(v);
}

// `key in {}`: Object.prototype's own names count as present.
bool InObject(const ordered_json& object, const std::string& key) {
  static const char* const kPrototype[] = {
      "constructor",      "__proto__",       "hasOwnProperty",   "isPrototypeOf",
      "propertyIsEnumerable", "toLocaleString", "toString",       "valueOf",
      "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__"};
  return object.contains(key) || std::any_of(std::begin(kPrototype), std::end(kPrototype),
                                             [&](const char* p) { return key == p; });
}

bool LineTerminator(char32_t c) { return c == '\n' || c == '\r' || c == 0x2028 || c == 0x2029; }

// /^(.+?):(?:\s+(.*)|\s*)$/: the key (group 1) and the value (group 2, "" when absent).
bool SplitPair(std::string_view text, std::string* key, std::string* value) {
  for (size_t i = 0; i < text.size();) {
    const size_t at = i;
    const char32_t cp = js::NextCodePoint(text, i);
    if (LineTerminator(cp)) return false;  // '.' stops here, and so does every later colon
    if (cp != ':' || at == 0) continue;
    const std::string_view rest = text.substr(at + 1);
    // \s+(.*)$: white space, then anything without a line terminator
    const size_t after = SkipSpace(rest, 0);
    bool ok = false;
    if (after > 0) {
      ok = true;
      for (size_t j = after; j < rest.size();) {
        if (LineTerminator(js::NextCodePoint(rest, j))) ok = false;
      }
      if (!ok) {
        // backtracking: \s+ may give back white space; a terminator after the first space
        // kills (.*) anyway. \s*$ is the other branch.
        ok = after == rest.size();
      }
    } else {
      ok = rest.empty();
    }
    if (!ok) continue;
    *key = std::string(text.substr(0, at));
    *value = std::string(rest.substr(after));
    return true;
  }
  return false;
}

struct YamlLine {
  size_t indent;
  std::string text;
  size_t number;
};

class YamlBlockParser {
 public:
  YamlBlockParser(std::vector<YamlLine> lines, std::vector<std::string>* errors)
      : lines_(std::move(lines)), errors_(errors) {}

  ordered_json Document() {
    ordered_json doc = lines_.empty() ? ordered_json(nullptr) : Block(lines_[0].indent, 0);
    if (index_ < lines_.size()) {
      errors_->push_back("Unparsed YAML content at line " + std::to_string(lines_[index_].number));
    }
    return doc;
  }

 private:
  static constexpr int kMaxDepth = 256;  // zx-bench's recursion has no bound; a deeper answer fails

  bool More(size_t indent_at_least) const {
    return index_ < lines_.size() && lines_[index_].indent >= indent_at_least;
  }

  ordered_json Value(const std::string& raw, size_t child_indent, int depth) {
    // /^&([\w-]+)(?:\s+(.*))?$/
    if (StartsWith(raw, "&")) {
      size_t i = 1;
      while (i < raw.size() && (IsWordChar(raw[i]) || raw[i] == '-')) ++i;
      if (i > 1) {
        const std::string name = raw.substr(1, i - 1);
        std::optional<std::string> rest;
        bool ok = i == raw.size();
        if (!ok && SpaceAt(raw, i)) {
          const size_t after = SkipSpace(raw, i);
          ok = true;
          for (size_t j = after; j < raw.size();) {
            if (LineTerminator(js::NextCodePoint(raw, j))) ok = false;
          }
          if (ok) rest = raw.substr(after);
        }
        if (ok) {
          ordered_json value = rest && !rest->empty() ? Scalar(*rest)
                               : More(child_indent)   ? Block(lines_[index_].indent, depth + 1)
                                                      : ordered_json(nullptr);
          anchors_[name] = value;
          return value;
        }
      }
    }
    // /^\*([\w-]+)$/
    if (raw.size() > 1 && raw[0] == '*' &&
        std::all_of(raw.begin() + 1, raw.end(), [](char c) { return IsWordChar(c) || c == '-'; })) {
      const auto it = anchors_.find(raw.substr(1));
      if (it == anchors_.end()) {
        errors_->push_back("Undefined YAML alias " + raw.substr(1));
        return nullptr;
      }
      return it->second;
    }
    if (raw == "|" || raw == ">") {
      std::string content;
      bool first = true;
      while (More(child_indent)) {
        if (!first) content += raw == "|" ? '\n' : ' ';
        content += lines_[index_++].text;
        first = false;
      }
      return content;
    }
    if (raw.empty() && More(child_indent)) return Block(lines_[index_].indent, depth + 1);
    return Scalar(raw);
  }

  ordered_json Block(size_t indent, int depth) {
    if (depth > kMaxDepth) {
      errors_->push_back("YAML nesting deeper than " + std::to_string(kMaxDepth));
      index_ = lines_.size();
      return nullptr;
    }
    const bool sequence = index_ < lines_.size() && StartsWith(lines_[index_].text, "- ");
    ordered_json target = sequence ? ordered_json::array() : ordered_json::object();
    while (index_ < lines_.size() && lines_[index_].indent == indent) {
      const YamlLine& line = lines_[index_++];
      std::string key, value;
      if (sequence) {
        if (!StartsWith(line.text, "- ")) {
          errors_->push_back("Mixed YAML sequence/mapping at line " + std::to_string(line.number));
          break;
        }
        const std::string item(js::JsTrim(std::string_view(line.text).substr(2)));
        if (SplitPair(item, &key, &value)) {
          ordered_json object = ordered_json::object();
          object[std::string(js::JsTrim(key))] = Value(value, indent + 2, depth);
          if (index_ < lines_.size() && lines_[index_].indent > indent) {
            ordered_json rest = Block(lines_[index_].indent, depth + 1);
            if (rest.is_object()) {
              for (auto& [k, v] : rest.items()) object[k] = v;
            }
          }
          target.push_back(std::move(object));
        } else {
          target.push_back(Value(item, indent + 2, depth));
        }
      } else {
        if (!SplitPair(line.text, &key, &value)) {
          errors_->push_back("Invalid YAML mapping at line " + std::to_string(line.number));
          continue;
        }
        const std::string name = ToKey(Scalar(js::JsTrim(key)));
        if (InObject(target, name)) errors_->push_back("Duplicate YAML key " + name);
        target[name] = Value(value, indent + 1, depth);
      }
      if (index_ < lines_.size() && lines_[index_].indent > indent) {
        errors_->push_back("Unexpected YAML indentation at line " +
                           std::to_string(lines_[index_].number));
        ++index_;
      }
    }
    return target;
  }

  std::vector<YamlLine> lines_;
  std::vector<std::string>* errors_;
  size_t index_ = 0;
  std::map<std::string, ordered_json> anchors_;
};

// /^---\s*(?:#.*)?$/
bool DocumentStart(std::string_view line) {
  if (!StartsWith(line, "---")) return false;
  const size_t i = SkipSpace(line, 3);
  if (i == line.size()) return true;
  if (line[i] != '#') return false;
  for (size_t j = i; j < line.size();) {
    if (LineTerminator(js::NextCodePoint(line, j))) return false;
  }
  return true;
}
bool DocumentEnd(std::string_view line) {  // /^\.\.\.\s*$/
  return StartsWith(line, "...") && SkipSpace(line, 3) == line.size();
}

std::unique_ptr<LineRegex> Compile(const char* pattern) {
  std::string error;
  return LineRegex::Compile(pattern, &error);
}

// exec with captures; empty when no match (or the budget ran out).
std::vector<std::optional<std::string_view>> Exec(const LineRegex& re, std::string_view line,
                                                  uint64_t* steps) {
  std::vector<std::optional<std::string_view>> groups;
  if (re.Exec(line, steps, &groups) != Regex::Result::kMatch) groups.clear();
  return groups;
}
std::string Group(const std::vector<std::optional<std::string_view>>& g, size_t i) {
  return i < g.size() && g[i] ? std::string(*g[i]) : std::string();
}

}  // namespace

const std::string* MarkupNode::Attr(std::string_view key) const {
  for (const auto& [k, v] : attrs) {
    if (k == key) return &v;
  }
  return nullptr;
}

MarkupParse ParseMarkup(std::string_view source, bool html) {
  static const char* const kVoid[] = {"area",  "base", "br",    "col",    "embed",
                                      "hr",    "img",  "input", "link",   "meta",
                                      "param", "source", "track", "wbr"};
  MarkupParse out;
  MarkupNode document;
  document.name = "#document";
  std::vector<MarkupNode*> stack = {&document};
  size_t i = 0;
  while (i < source.size()) {
    if (source[i] != '<') {  // [^<]+
      size_t end = source.find('<', i);
      if (end == std::string_view::npos) end = source.size();
      const std::string_view raw = source.substr(i, end - i);
      if (!html && BareAmpersand(raw)) out.errors.push_back("Bare or invalid XML entity");
      stack.back()->text += raw;
      stack.back()->raw_text += raw;
      i = end;
      continue;
    }
    std::optional<std::string_view> cdata;
    const size_t end = MarkupToken(source, i, &cdata);
    const std::string_view raw = source.substr(i, end - i);
    i = end;
    if (raw == "<") {
      out.errors.push_back("Unclosed or invalid tag");
      continue;
    }
    if (StartsWith(raw, "<!--") || StartsWith(raw, "<?") ||
        Lower(raw.substr(0, 9)) == "<!doctype") {
      continue;
    }
    if (StartsWith(raw, "<![CDATA[")) {
      stack.back()->text += cdata.value_or(std::string_view());
      stack.back()->raw_text += raw;
      continue;
    }
    if (StartsWith(raw, "</")) {
      const std::string name(js::JsTrim(raw.substr(2, raw.size() - 3)));
      MarkupNode* current = stack.back();
      const bool same = html ? Lower(current->name) == Lower(name) : current->name == name;
      if (!same || stack.size() == 1) {
        // the document node never matches: its name cannot be written as a tag
        out.errors.push_back("Mismatched closing tag " + name);
      } else {
        stack.pop_back();
      }
      continue;
    }
    // an opening tag: /^<([A-Za-z_][\w.:-]*)/
    if (raw.size() < 2 || !NameStart(raw[1])) {
      out.errors.push_back("Invalid opening tag");
      continue;
    }
    size_t name_end = 2;
    while (name_end < raw.size() && NameChar(raw[name_end])) ++name_end;
    MarkupNode node;
    node.name = html ? Lower(raw.substr(1, name_end - 1)) : std::string(raw.substr(1, name_end - 1));
    std::string_view tail = raw.substr(name_end, raw.size() - 1 - name_end);
    {  // .replace(/\/\s*$/, '')
      size_t cut = tail.size();
      while (cut > 0) {
        size_t start = cut - 1;
        while (start > 0 && (static_cast<unsigned char>(tail[start]) & 0xC0) == 0x80) --start;
        if (!SpaceAt(tail, start)) break;
        cut = start;
      }
      if (cut > 0 && tail[cut - 1] == '/') tail = tail.substr(0, cut - 1);
    }
    const std::vector<AttrMatch> matches = Attributes(tail);
    std::string leftover;
    size_t from = 0;
    for (const AttrMatch& m : matches) {
      leftover += tail.substr(from, m.start - from);
      from = m.end;
      const std::string key = html ? Lower(m.key) : m.key;
      bool duplicate = false;
      for (auto& [k, v] : node.attrs) {
        if (k == key) {
          duplicate = true;
          v = m.value;
        }
      }
      if (duplicate) {
        out.errors.push_back("Duplicate attribute " + key);
      } else {
        node.attrs.emplace_back(key, m.value);
      }
      if (!html && BareAmpersand(m.value)) {
        out.errors.push_back("Bare or invalid XML entity in attribute " + key);
      }
    }
    leftover += tail.substr(std::min(from, tail.size()));
    if (!html && !js::JsTrim(leftover).empty()) {
      out.errors.push_back("Invalid attributes on " + node.name);
    }
    const bool self_closing = raw.size() >= 2 && raw.substr(raw.size() - 2) == "/>";
    const bool is_void = html && std::any_of(std::begin(kVoid), std::end(kVoid),
                                             [&](const char* v) { return node.name == v; });
    stack.back()->children.push_back(std::move(node));
    if (!self_closing && !is_void) stack.push_back(&stack.back()->children.back());
  }
  if (stack.size() != 1) out.errors.push_back("Unclosed tag " + stack.back()->name);
  if (document.children.size() != 1) {
    out.errors.push_back("Expected one root element, found " +
                         std::to_string(document.children.size()));
  }
  if (!document.children.empty()) out.root = std::move(document.children.front());
  return out;
}

std::vector<const MarkupNode*> Descendants(const MarkupNode* node, std::string_view name) {
  std::vector<const MarkupNode*> out;
  if (node == nullptr) return out;
  const std::string wanted = Lower(name);
  std::function<void(const MarkupNode&)> walk = [&](const MarkupNode& n) {
    for (const MarkupNode& child : n.children) {
      if (Lower(child.name) == wanted) out.push_back(&child);
      walk(child);
    }
  };
  walk(*node);
  return out;
}

std::vector<const MarkupNode*> DirectChildren(const MarkupNode* node, std::string_view name) {
  std::vector<const MarkupNode*> out;
  if (node == nullptr) return out;
  const std::string wanted = Lower(name);
  for (const MarkupNode& child : node->children) {
    if (Lower(child.name) == wanted) out.push_back(&child);
  }
  return out;
}

std::string NodeText(const MarkupNode& node) {
  std::string out = node.text;
  for (const MarkupNode& child : node.children) out += NodeText(child);
  return out;
}

YamlParse ParseYamlDocuments(std::string_view source) {
  YamlParse out;
  std::vector<std::vector<std::string_view>> blocks(1);
  for (std::string_view line : SplitLines(source)) {
    if (DocumentStart(line)) {
      if (std::any_of(blocks.back().begin(), blocks.back().end(),
                      [](std::string_view l) { return !js::JsTrim(l).empty(); })) {
        blocks.emplace_back();
      }
      continue;
    }
    if (DocumentEnd(line)) {
      blocks.emplace_back();
      continue;
    }
    blocks.back().push_back(line);
  }
  for (const auto& block : blocks) {
    if (std::none_of(block.begin(), block.end(), [](std::string_view l) {
          const std::string_view t = js::JsTrim(l);
          return !t.empty() && t[0] != '#';
        })) {
      continue;
    }
    std::vector<YamlLine> lines;
    for (size_t n = 0; n < block.size(); ++n) {
      const std::string_view raw = block[n];
      // /^\s*\t/: the leading white space holds a tab
      if (raw.substr(0, SkipSpace(raw, 0)).find('\t') != std::string_view::npos) {
        out.errors.push_back("YAML line " + std::to_string(n + 1) + ": tab indentation");
      }
      const std::string clean = TrimEnd(StripComment(raw));
      if (js::JsTrim(clean).empty()) continue;
      size_t indent = 0;
      while (indent < clean.size() && clean[indent] == ' ') ++indent;
      lines.push_back({indent, std::string(TrimStart(clean)), n + 1});
    }
    YamlBlockParser parser(std::move(lines), &out.errors);
    out.documents.push_back(parser.Document());
  }
  return out;
}

TomlParse ParseTomlDocument(std::string_view source) {
  TomlParse out;
  std::vector<std::string> declared;
  ordered_json* current = &out.root;
  const auto lines = SplitLines(source);
  const auto name_ok = [](std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
      return IsWordChar(c) || c == '.' || c == '-';
    });
  };
  const auto count = [](std::string_view s, char c) {
    return static_cast<size_t>(std::count(s.begin(), s.end(), c));
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string stripped = StripComment(lines[i]);
    const std::string line(js::JsTrim(stripped));
    if (line.empty()) continue;
    const bool array_table = line.size() >= 4 && StartsWith(line, "[[") &&
                             line.substr(line.size() - 2) == "]]" &&
                             name_ok(std::string_view(line).substr(2, line.size() - 4));
    const bool section = !array_table && line.size() >= 2 && line.front() == '[' &&
                         line.back() == ']' &&
                         name_ok(std::string_view(line).substr(1, line.size() - 2));
    if (section || array_table) {
      const std::string full =
          array_table ? line.substr(2, line.size() - 4) : line.substr(1, line.size() - 2);
      if (section) {
        if (std::find(declared.begin(), declared.end(), full) != declared.end()) {
          out.errors.push_back("Duplicate TOML table " + full);
        }
        declared.push_back(full);
      }
      std::vector<std::string> parts;
      for (size_t s = 0;;) {
        const size_t dot = full.find('.', s);
        parts.push_back(full.substr(s, dot == std::string::npos ? std::string::npos : dot - s));
        if (dot == std::string::npos) break;
        s = dot + 1;
      }
      ordered_json* parent = &out.root;
      for (size_t p = 0; p + 1 < parts.size(); ++p) {
        if (!parent->contains(parts[p])) (*parent)[parts[p]] = ordered_json::object();
        ordered_json& next = (*parent)[parts[p]];
        if (!next.is_object()) {
          out.errors.push_back("Invalid TOML table " + parts[p]);
          break;
        }
        parent = &next;
      }
      const std::string& name = parts.back();
      if (array_table) {
        if (!parent->contains(name)) (*parent)[name] = ordered_json::array();
        ordered_json& list = (*parent)[name];
        if (!list.is_array()) {
          out.errors.push_back("TOML table " + name + " is not an array");
        } else {
          list.push_back(ordered_json::object());
          current = &list.back();
        }
      } else {
        if (!parent->contains(name)) (*parent)[name] = ordered_json::object();
        ordered_json& table = (*parent)[name];
        if (!table.is_object()) {
          out.errors.push_back("Invalid TOML table " + name);
        } else {
          current = &table;
        }
      }
      continue;
    }
    // /^([\w.-]+)\s*=\s*(.*)$/
    size_t k = 0;
    while (k < line.size() && (IsWordChar(line[k]) || line[k] == '.' || line[k] == '-')) ++k;
    const size_t eq = SkipSpace(line, k);
    if (k == 0 || eq >= line.size() || line[eq] != '=') {
      out.errors.push_back("Invalid TOML line " + std::to_string(i + 1));
      continue;
    }
    const std::string key = line.substr(0, k);
    std::string raw = line.substr(SkipSpace(line, eq + 1));
    while (i + 1 < lines.size() && count(raw, '[') > count(raw, ']')) {
      raw += "\n" + StripComment(lines[++i]);
    }
    if (current->contains(key)) out.errors.push_back("Duplicate TOML key " + key);
    const std::string value(js::JsTrim(raw));
    if (value.empty() || (value.front() == '[' && value.back() != ']') ||
        (value.front() == '{' && value.back() != '}')) {
      out.errors.push_back("Invalid TOML value at line " + std::to_string(i + 1));
    }
    // /^(?:["'\[{]|true$|false$|-?\d|\d{4}-\d{2}-\d{2})/
    const bool known =
        !value.empty() &&
        (value[0] == '"' || value[0] == '\'' || value[0] == '[' || value[0] == '{' ||
         value == "true" || value == "false" || (value[0] >= '0' && value[0] <= '9') ||
         (value.size() > 1 && value[0] == '-' && value[1] >= '0' && value[1] <= '9'));
    if (!value.empty() && !known) {
      out.errors.push_back("Unsupported or unquoted TOML value at line " + std::to_string(i + 1));
    }
    std::string scalar_text = value;
    if (!value.empty() && value.front() == '{') {  // value.replace(/([\w.-]+)\s*=/g, '$1:')
      scalar_text.clear();
      for (size_t j = 0; j < value.size();) {
        size_t w = j;
        while (w < value.size() && (IsWordChar(value[w]) || value[w] == '.' || value[w] == '-')) {
          ++w;
        }
        if (w > j) {
          const size_t e = SkipSpace(value, w);
          scalar_text.append(value, j, w - j);
          if (e < value.size() && value[e] == '=') {
            scalar_text += ':';
            j = e + 1;
          } else {
            j = w;
          }
          continue;
        }
        scalar_text += value[j++];
      }
    }
    (*current)[key] = Scalar(scalar_text);
  }
  return out;
}

MarkdownBlocks ParseMarkdownBlocks(std::string_view source) {
  MarkdownBlocks out;
  static const auto heading_re = Compile("^(#{1,6})\\s+(.+)$");
  static const auto ordered_re = Compile("^(\\d+)\\.\\s+(.+)$");
  uint64_t steps = kLineStepBudget;
  const auto lines = SplitLines(source);
  struct Open {
    std::string language;
    std::vector<std::string_view> lines;
    size_t line;
  };
  std::optional<Open> fence;
  const auto cells = [](std::string_view row) {
    std::string_view t = js::JsTrim(row);
    if (!t.empty() && t.front() == '|') t.remove_prefix(1);
    if (!t.empty() && t.back() == '|') t.remove_suffix(1);
    std::vector<std::string> row_cells;
    for (size_t s = 0;;) {
      const size_t bar = t.find('|', s);
      row_cells.emplace_back(js::JsTrim(t.substr(s, bar == std::string_view::npos ? bar : bar - s)));
      if (bar == std::string_view::npos) break;
      s = bar + 1;
    }
    return row_cells;
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = js::JsTrim(lines[i]);
    if (StartsWith(line, "```")) {
      if (fence) {
        std::string body;
        for (size_t k = 0; k < fence->lines.size(); ++k) {
          if (k > 0) body += '\n';
          body += fence->lines[k];
        }
        out.fences.push_back({fence->language, body, fence->line});
        fence.reset();
      } else {
        fence = Open{std::string(js::JsTrim(line.substr(3))), {}, i + 1};
      }
      continue;
    }
    if (fence) {
      fence->lines.push_back(lines[i]);
      continue;
    }
    if (const auto g = Exec(*heading_re, line, &steps); !g.empty()) {
      out.headings.push_back({static_cast<int>(Group(g, 1).size()), Group(g, 2), i + 1});
    }
    if (const auto g = Exec(*ordered_re, line, &steps); !g.empty()) {
      out.ordered.push_back({std::stod(Group(g, 1)), Group(g, 2)});
    }
    if (StartsWith(line, "> ")) out.quotes.emplace_back(line.substr(2));
    if (line.size() >= 3 && (line[0] == '-' || line[0] == '*' || line[0] == '_') &&
        std::all_of(line.begin(), line.end(), [&](char c) { return c == line[0]; })) {
      ++out.separators;
    }
    if (StartsWith(line, "|") && (i == 0 || !StartsWith(js::JsTrim(lines[i - 1]), "|"))) {
      MarkdownBlocks::Table table{{}, i + 1};
      for (size_t j = i; j < lines.size() && StartsWith(js::JsTrim(lines[j]), "|"); ++j) {
        table.rows.push_back(cells(lines[j]));
      }
      const auto rule = [](const std::string& cell) {  // /^:?-{3,}:?$/
        std::string_view c = cell;
        if (!c.empty() && c.front() == ':') c.remove_prefix(1);
        if (!c.empty() && c.back() == ':') c.remove_suffix(1);
        return c.size() >= 3 && std::all_of(c.begin(), c.end(), [](char ch) { return ch == '-'; });
      };
      if (table.rows.size() >= 2 && std::all_of(table.rows[1].begin(), table.rows[1].end(), rule)) {
        out.tables.push_back(std::move(table));
      }
    }
  }
  if (fence) out.errors.push_back("Unclosed Markdown fence at line " + std::to_string(fence->line));
  return out;
}

SqlTokens TokenizeSql(std::string_view source) {
  SqlTokens out;
  size_t i = 0;
  int64_t depth = 0;
  while (i < source.size()) {
    const char c = source[i];
    size_t next = i;
    if (SpaceAt(source, i, &next)) {
      i = next;
      continue;
    }
    if (StartsWith(source.substr(i), "--") || c == '#') {
      ++out.comments;
      const size_t end = source.find('\n', i);
      i = end == std::string_view::npos ? source.size() : end + 1;
      continue;
    }
    if (StartsWith(source.substr(i), "/*")) {
      ++out.comments;
      const size_t end = source.find("*/", i + 2);
      if (end == std::string_view::npos) {
        out.errors.push_back("Unclosed SQL comment");
        break;
      }
      i = end + 2;
      continue;
    }
    if (c == '\'' || c == '"' || c == '`') {
      char quote = c;
      std::string value(1, c);
      ++i;
      while (i < source.size()) {
        value += source[i++];
        if (value.back() == quote) {
          if (i < source.size() && source[i] == quote) {
            value += source[i++];
            continue;
          }
          quote = 0;
          break;
        }
        if (value.back() == '\\' && i < source.size()) value += source[i++];
      }
      if (quote != 0) out.errors.push_back("Unclosed SQL string");
      if (c == '`') {
        std::string inner = value.size() >= 2 ? value.substr(1, value.size() - 2) : "";
        for (char& ch : inner) {
          if (ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
        }
        out.tokens.push_back(inner);
      } else {
        out.tokens.push_back(value);
      }
      continue;
    }
    if (c == '(') ++depth;
    if (c == ')' && --depth < 0) out.errors.push_back("Unmatched SQL closing parenthesis");
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_') {
      size_t j = i + 1;
      while (j < source.size() && (IsWordChar(source[j]) || source[j] == '$')) ++j;
      std::string word(source.substr(i, j - i));
      for (char& ch : word) {
        if (ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
      }
      out.tokens.push_back(word);
      i = j;
      continue;
    }
    if (c >= '0' && c <= '9') {
      size_t j = i;
      while (j < source.size() && source[j] >= '0' && source[j] <= '9') ++j;
      if (j + 1 < source.size() && source[j] == '.' && source[j + 1] >= '0' &&
          source[j + 1] <= '9') {
        ++j;
        while (j < source.size() && source[j] >= '0' && source[j] <= '9') ++j;
      }
      out.tokens.emplace_back(source.substr(i, j - i));
      i = j;
      continue;
    }
    js::NextCodePoint(source, next);
    out.tokens.emplace_back(source.substr(i, next - i));
    i = next;
  }
  if (depth != 0) out.errors.push_back("Unbalanced SQL parentheses");
  return out;
}

const std::vector<std::string>* MermaidStructure::Entity(std::string_view name) const {
  for (const auto& [n, lines_of] : entities) {
    if (n == name) return &lines_of;
  }
  return nullptr;
}

MermaidStructure ParseMermaidStructure(std::string_view source) {
  static const auto state_block = Compile("^state\\s+([A-Za-z_][\\w]*)\\s*\\{$");
  static const auto entity_re = Compile("^(?:class\\s+)?([A-Za-z_][\\w]*)\\s*\\{$");
  static const auto participant_re = Compile("^(?:participant|actor)\\s+([A-Za-z_][\\w]*)");
  static const auto relation_re = Compile(
      "^([A-Za-z_][\\w]*)(?:\\s+\"[^\"]+\")?\\s+([^\\s]+)(?:\\s+\"[^\"]+\")?\\s+([A-Za-z_][\\w]*)"
      "\\s*:\\s*(.*)$");
  static const auto flow_re = Compile(
      "^([A-Za-z_][\\w]*|\\[\\*\\])(?:\\[[^\\]]*\\]|\\{[^}]*\\}|\\([^)]*\\))?\\s+[-.=ox|<>]+"
      "(?:\\|[^|]*\\|)?\\s+([A-Za-z_][\\w]*|\\[\\*\\])");
  static const auto sequence_re =
      Compile("^([A-Za-z_][\\w]*)\\s*[-.]+>>?\\s*([A-Za-z_][\\w]*)\\s*:\\s*(.*)$");
  MermaidStructure out;
  for (std::string_view raw : SplitLines(source)) {
    const std::string_view t = js::JsTrim(raw);
    if (!t.empty()) out.lines.emplace_back(t);
  }
  if (!out.lines.empty()) {
    const std::string& first = out.lines.front();
    size_t end = 0;
    while (end < first.size() && !SpaceAt(first, end)) {
      js::NextCodePoint(first, end);
    }
    out.type = first.substr(0, end);
  }
  uint64_t steps = kLineStepBudget;
  constexpr size_t kNone = static_cast<size_t>(-1);
  size_t current = kNone;  // index into entities
  int64_t depth = 0;
  for (size_t n = 1; n < out.lines.size(); ++n) {
    const std::string& line = out.lines[n];
    if (!Exec(*state_block, line, &steps).empty()) {
      ++depth;
      out.declarations.push_back(line);
      continue;
    }
    if (const auto g = Exec(*entity_re, line, &steps); !g.empty()) {
      // entities[name] = []: a second block of the same name starts it afresh, in its place
      const std::string name = Group(g, 1);
      current = kNone;
      for (size_t e = 0; e < out.entities.size(); ++e) {
        if (out.entities[e].first == name) current = e;
      }
      if (current != kNone) {
        out.entities[current].second.clear();
      } else {
        out.entities.emplace_back(name, std::vector<std::string>());
        current = out.entities.size() - 1;
      }
      ++depth;
      continue;
    }
    if (line == "}") {
      if (depth == 0) out.errors.push_back("Unmatched Mermaid block close");
      current = kNone;
      --depth;
      continue;
    }
    if (current != kNone) {
      out.entities[current].second.push_back(line);
      continue;
    }
    if (const auto g = Exec(*participant_re, line, &steps); !g.empty()) {
      out.participants.push_back(Group(g, 1));
      continue;
    }
    if (const auto g = Exec(*relation_re, line, &steps); !g.empty()) {
      const std::string arrow = Group(g, 2);
      if (arrow.find("--") != std::string::npos || arrow.find("..") != std::string::npos) {
        out.edges.push_back({Group(g, 1), Group(g, 3), Group(g, 4)});
        continue;
      }
    }
    if (const auto g = Exec(*flow_re, line, &steps); !g.empty()) {
      out.edges.push_back({Group(g, 1), Group(g, 2), line});
      continue;
    }
    if (const auto g = Exec(*sequence_re, line, &steps); !g.empty()) {
      out.edges.push_back({Group(g, 1), Group(g, 2), Group(g, 3)});
      continue;
    }
    out.declarations.push_back(line);
  }
  if (depth != 0) out.errors.push_back("Unclosed Mermaid block");
  return out;
}

}  // namespace evalrun::zx
