// XML as structuredFormats.py reads it (graders/zxbench/xml_reader.h). Moved from
// structured_contract.cpp.
#include "graders/zxbench/xml_reader.h"

#include <map>
#include <utility>
#include <vector>

#include "core/js_value.h"
#include "graders/zxbench/common.h"

namespace evalrun::zx {
namespace {

using js::AppendUtf8;
using js::NextCodePoint;

using nlohmann::json;

// Python's str.isspace(), for the code points that can occur in XML text.
bool IsPySpace(char32_t c) {
  switch (c) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return (c >= 0x1C && c <= 0x1F) || (c >= 0x2000 && c <= 0x200A);
  }
}

// `not s.strip()` in Python.
bool PyBlank(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (!IsPySpace(NextCodePoint(s, i))) return false;
  }
  return true;
}

bool IsXmlSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool IsXmlChar(char32_t c) {
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
         (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

bool IsNameStart(char32_t c) {
  return c == ':' || c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= 0xC0 && c <= 0xD6) || (c >= 0xD8 && c <= 0xF6) || (c >= 0xF8 && c <= 0x2FF) ||
         (c >= 0x370 && c <= 0x37D) || (c >= 0x37F && c <= 0x1FFF) || c == 0x200C || c == 0x200D ||
         (c >= 0x2070 && c <= 0x218F) || (c >= 0x2C00 && c <= 0x2FEF) ||
         (c >= 0x3001 && c <= 0xD7FF) || (c >= 0xF900 && c <= 0xFDCF) ||
         (c >= 0xFDF0 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0xEFFFF);
}

bool IsNameChar(char32_t c) {
  return IsNameStart(c) || c == '-' || c == '.' || (c >= '0' && c <= '9') || c == 0xB7 ||
         (c >= 0x300 && c <= 0x36F) || c == 0x203F || c == 0x2040;
}

struct XmlElement {
  std::string tag;  // "{namespace}local" or "local", as ElementTree names it
  std::map<std::string, std::string> attrib;
  std::string text;
  std::string tail;
  size_t children = 0;  // element children (cells only)
};

struct XmlRecord {
  XmlElement element;
  std::vector<XmlElement> cells;
};

struct XmlDocument {
  XmlElement root;
  std::vector<XmlRecord> records;
};

// A non-validating XML 1.0 reader with the checks expat makes: well-formedness, the five
// predefined entities and character references only, namespace prefixes bound. It keeps the
// three levels the profile reads, with ElementTree's text/tail split (comments and processing
// instructions dropped, their neighbouring text joined).
class XmlReader {
 public:
  explicit XmlReader(std::string text) : s_(std::move(text)) {}

  std::optional<XmlDocument> Read() {
    if (!Prepare() || !Prolog()) return std::nullopt;
    while (i_ < s_.size()) {
      if (!Step()) return std::nullopt;
    }
    if (!root_closed_) return Fail("no element found");
    return std::move(doc_);
  }
  const std::string& error() const { return error_; }

 private:
  struct Open {
    std::string raw_name;
    std::vector<std::pair<std::string, std::optional<std::string>>>
        saved;  // ns bindings to restore
  };

  std::nullopt_t Fail(const std::string& message) {
    if (error_.empty()) error_ = "XML: " + message + " (byte " + std::to_string(i_) + ")";
    return std::nullopt;
  }
  bool Bad(const std::string& message) {
    Fail(message);
    return false;
  }
  bool StartsWith(std::string_view prefix) const {
    return std::string_view(s_).substr(i_, prefix.size()) == prefix;
  }
  bool SkipSpace() {
    const size_t start = i_;
    while (i_ < s_.size() && IsXmlSpace(s_[i_])) ++i_;
    return i_ > start;
  }

  // Line ends normalised to "\n" (as expat does before anything else), a BOM dropped, every
  // character an XML Char.
  bool Prepare() {
    if (s_.compare(0, 3, "\xEF\xBB\xBF") == 0) s_.erase(0, 3);
    s_ = NormalizeNewlines(s_);
    for (size_t k = 0; k < s_.size();) {
      const size_t at = k;
      if (!IsXmlChar(NextCodePoint(s_, k))) {
        i_ = at;
        return Bad("not well-formed (invalid token)");
      }
    }
    return true;
  }

  bool Name(std::string& out) {
    const size_t start = i_;
    size_t k = i_;
    if (k >= s_.size() || !IsNameStart(NextCodePoint(s_, k)))
      return Bad("not well-formed (invalid token)");
    i_ = k;
    while (i_ < s_.size()) {
      size_t next = i_;
      if (!IsNameChar(NextCodePoint(s_, next))) break;
      i_ = next;
    }
    out = s_.substr(start, i_ - start);
    return true;
  }

  bool Quoted(std::string& out) {
    if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\''))
      return Bad("not well-formed (invalid token)");
    const char quote = s_[i_++];
    const size_t end = s_.find(quote, i_);
    if (end == std::string::npos) return Bad("unclosed token");
    out = s_.substr(i_, end - i_);
    i_ = end + 1;
    return true;
  }

  // <?xml version="..." encoding="..." standalone="..."?> at the very start.
  bool Prolog() {
    if (!(StartsWith("<?xml") && s_.size() > 5 && IsXmlSpace(s_[5]))) return true;
    i_ = 5;
    const auto pseudo = [&](const char* name, bool required, const auto& valid) {
      const size_t save = i_;
      const bool space = SkipSpace();
      if (!space || !StartsWith(name)) {
        i_ = save;
        return !required || Bad("XML declaration not well-formed");
      }
      i_ += std::string_view(name).size();
      SkipSpace();
      if (i_ >= s_.size() || s_[i_] != '=') return Bad("XML declaration not well-formed");
      ++i_;
      SkipSpace();
      std::string value;
      if (!Quoted(value)) return false;
      return valid(value) || Bad("XML declaration not well-formed");
    };
    const auto version = [](const std::string& v) {
      return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':' ||
               c == '-';
      });
    };
    const auto encoding = [](const std::string& v) {
      return !v.empty() && std::isalpha(static_cast<unsigned char>(v[0])) &&
             std::all_of(v.begin(), v.end(), [](char c) {
               return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
                      c == '-';
             });
    };
    const auto standalone = [](const std::string& v) { return v == "yes" || v == "no"; };
    if (!pseudo("version", true, version) || !pseudo("encoding", false, encoding) ||
        !pseudo("standalone", false, standalone)) {
      return false;
    }
    SkipSpace();
    if (!StartsWith("?>")) return Bad("XML declaration not well-formed");
    i_ += 2;
    return true;
  }

  std::string* Target() { return text_target_; }

  void AppendText(std::string_view text) {
    if (std::string* target = Target()) target->append(text);
  }

  bool Reference(std::string& out) {
    const size_t semi = s_.find(';', i_);
    if (semi == std::string::npos) return Bad("not well-formed (invalid token)");
    const std::string body = s_.substr(i_ + 1, semi - i_ - 1);
    if (!body.empty() && body[0] == '#') {
      const bool hex = body.size() > 1 && body[1] == 'x';
      const std::string digits = body.substr(hex ? 2 : 1);
      if (digits.empty() || digits.size() > 8) return Bad("reference to invalid character number");
      char32_t cp = 0;
      for (char d : digits) {
        int v = -1;
        if (d >= '0' && d <= '9') v = d - '0';
        if (hex && d >= 'a' && d <= 'f') v = d - 'a' + 10;
        if (hex && d >= 'A' && d <= 'F') v = d - 'A' + 10;
        if (v < 0) return Bad("not well-formed (invalid token)");
        cp = cp * (hex ? 16 : 10) + static_cast<char32_t>(v);
      }
      if (!IsXmlChar(cp)) return Bad("reference to invalid character number");
      AppendUtf8(out, cp);
    } else {
      static const std::map<std::string, std::string, std::less<>> kEntities = {
          {"lt", "<"}, {"gt", ">"}, {"amp", "&"}, {"apos", "'"}, {"quot", "\""}};
      const auto it = kEntities.find(body);
      if (it == kEntities.end()) {
        return Bad(body.empty() || !IsNameStart(static_cast<unsigned char>(body[0]))
                       ? "not well-formed (invalid token)"
                       : "undefined entity");
      }
      out += it->second;
    }
    i_ = semi + 1;
    return true;
  }

  bool Step() {
    if (s_[i_] == '<') {
      if (StartsWith("<!--")) return Comment();
      if (StartsWith("<![CDATA[")) {
        if (stack_.empty()) return Bad("not well-formed (invalid token)");
        const size_t end = s_.find("]]>", i_ + 9);
        if (end == std::string::npos) return Bad("unclosed CDATA section");
        AppendText(std::string_view(s_).substr(i_ + 9, end - i_ - 9));
        i_ = end + 3;
        return true;
      }
      if (StartsWith("<?")) return ProcessingInstruction();
      if (StartsWith("<!")) return Bad("syntax error");
      if (StartsWith("</")) return EndTag();
      return StartTag();
    }
    if (s_[i_] == '&') {
      if (stack_.empty()) return Bad(root_closed_ ? "junk after document element" : "syntax error");
      std::string text;
      if (!Reference(text)) return false;
      AppendText(text);
      return true;
    }
    size_t end = i_;
    while (end < s_.size() && s_[end] != '<' && s_[end] != '&') ++end;
    const std::string_view text = std::string_view(s_).substr(i_, end - i_);
    if (stack_.empty()) {
      if (!std::all_of(text.begin(), text.end(), IsXmlSpace)) {
        return Bad(root_closed_ ? "junk after document element" : "syntax error");
      }
    } else {
      const size_t bad = text.find("]]>");
      if (bad != std::string_view::npos) {
        i_ += bad;
        return Bad("not well-formed (invalid token)");
      }
      AppendText(text);
    }
    i_ = end;
    return true;
  }

  bool Comment() {
    const size_t dashes = s_.find("--", i_ + 4);
    if (dashes == std::string::npos) return Bad("unclosed token");
    if (dashes + 2 >= s_.size() || s_[dashes + 2] != '>') {
      i_ = dashes;
      return Bad("not well-formed (invalid token)");
    }
    i_ = dashes + 3;
    return true;
  }

  bool ProcessingInstruction() {
    i_ += 2;
    std::string target;
    if (!Name(target)) return false;
    std::string lower = target;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "xml") return Bad("XML or text declaration not at start of entity");
    if (StartsWith("?>")) {
      i_ += 2;
      return true;
    }
    if (!SkipSpace()) return Bad("not well-formed (invalid token)");
    const size_t end = s_.find("?>", i_);
    if (end == std::string::npos) return Bad("unclosed token");
    i_ = end + 2;
    return true;
  }

  // Binds or rebinds a prefix ("" is the default namespace); remembers what to restore.
  bool Bind(const std::string& prefix, const std::string& uri, Open& open) {
    static const std::string kXmlUri = "http://www.w3.org/XML/1998/namespace";
    if (prefix == "xmlns") return Bad("reserved prefix (xmlns) must not be declared or undeclared");
    if (prefix == "xml" && uri != kXmlUri)
      return Bad("reserved prefix (xml) must not be undeclared or bound to another namespace name");
    if (prefix != "xml" && uri == kXmlUri)
      return Bad("prefix must not be bound to one of the reserved namespace names");
    if (!prefix.empty() && uri.empty()) return Bad("must not undeclare prefix");
    const auto it = namespaces_.find(prefix);
    open.saved.emplace_back(
        prefix, it == namespaces_.end() ? std::nullopt : std::optional<std::string>(it->second));
    namespaces_[prefix] = uri;
    return true;
  }

  // ElementTree's name for a qualified name: "{uri}local", or "local" without a namespace.
  bool Expand(const std::string& qname, bool attribute, std::string& out) {
    const size_t colon = qname.find(':');
    if (colon == std::string::npos) {
      const auto it = namespaces_.find("");
      out = (!attribute && it != namespaces_.end() && !it->second.empty())
                ? "{" + it->second + "}" + qname
                : qname;
      return true;
    }
    const std::string prefix = qname.substr(0, colon);
    const std::string local = qname.substr(colon + 1);
    if (prefix == "xml") {
      out = "{http://www.w3.org/XML/1998/namespace}" + local;
      return true;
    }
    const auto it = namespaces_.find(prefix);
    if (prefix.empty() || local.empty() || it == namespaces_.end()) return Bad("unbound prefix");
    out = "{" + it->second + "}" + local;
    return true;
  }

  bool StartTag() {
    if (root_closed_) return Bad("junk after document element");
    ++i_;
    Open open;
    if (!Name(open.raw_name)) return false;
    std::vector<std::pair<std::string, std::string>> raw;
    bool empty = false;
    for (;;) {
      const bool space = SkipSpace();
      if (i_ >= s_.size()) return Bad("unclosed token");
      if (s_[i_] == '>') {
        ++i_;
        break;
      }
      if (StartsWith("/>")) {
        i_ += 2;
        empty = true;
        break;
      }
      if (!space) return Bad("not well-formed (invalid token)");
      std::string name;
      if (!Name(name)) return false;
      SkipSpace();
      if (i_ >= s_.size() || s_[i_] != '=') return Bad("not well-formed (invalid token)");
      ++i_;
      SkipSpace();
      if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\''))
        return Bad("not well-formed (invalid token)");
      const char quote = s_[i_++];
      std::string value;
      for (;;) {
        if (i_ >= s_.size()) return Bad("unclosed token");
        const char c = s_[i_];
        if (c == quote) {
          ++i_;
          break;
        }
        if (c == '<') return Bad("not well-formed (invalid token)");
        if (c == '&') {
          if (!Reference(value)) return false;
          continue;
        }
        value += (c == '\t' || c == '\n') ? ' ' : c;  // attribute-value normalisation
        ++i_;
      }
      for (const auto& [other, ignored] : raw) {
        if (other == name) return Bad("duplicate attribute");
      }
      raw.emplace_back(std::move(name), std::move(value));
    }
    for (const auto& [name, value] : raw) {
      if (name == "xmlns") {
        if (!Bind("", value, open)) return false;
      } else if (name.compare(0, 6, "xmlns:") == 0) {
        if (!Bind(name.substr(6), value, open)) return false;
      }
    }
    XmlElement element;
    if (!Expand(open.raw_name, false, element.tag)) return false;
    for (const auto& [name, value] : raw) {
      if (name == "xmlns" || name.compare(0, 6, "xmlns:") == 0) continue;
      std::string expanded;
      if (!Expand(name, true, expanded)) return false;
      if (!element.attrib.emplace(expanded, value).second) return Bad("duplicate attribute");
    }
    Start(std::move(element));
    stack_.push_back(std::move(open));
    if (empty) return End();
    return true;
  }

  bool EndTag() {
    i_ += 2;
    std::string name;
    if (!Name(name)) return false;
    SkipSpace();
    if (i_ >= s_.size() || s_[i_] != '>') return Bad("not well-formed (invalid token)");
    ++i_;
    if (stack_.empty() || stack_.back().raw_name != name) return Bad("mismatched tag");
    return End();
  }

  // Tree building for the three levels the profile reads; text goes to the innermost kept
  // element's text before its first child, to the last closed child's tail after it.
  void Start(XmlElement element) {
    const size_t depth = stack_.size();
    if (depth == 0) {
      doc_.root = std::move(element);
      text_target_ = &doc_.root.text;
    } else if (depth == 1) {
      doc_.records.push_back({std::move(element), {}});
      text_target_ = &doc_.records.back().element.text;
    } else if (depth == 2) {
      doc_.records.back().cells.push_back(std::move(element));
      text_target_ = &doc_.records.back().cells.back().text;
    } else {
      if (depth == 3) ++doc_.records.back().cells.back().children;
      text_target_ = nullptr;
    }
  }

  bool End() {
    Open open = std::move(stack_.back());
    stack_.pop_back();
    for (auto it = open.saved.rbegin(); it != open.saved.rend(); ++it) {
      if (it->second) {
        namespaces_[it->first] = *it->second;
      } else {
        namespaces_.erase(it->first);
      }
    }
    const size_t depth = stack_.size();
    if (depth == 0) {
      root_closed_ = true;
      text_target_ = nullptr;
    } else if (depth == 1) {
      text_target_ = &doc_.records.back().element.tail;
    } else if (depth == 2) {
      text_target_ = &doc_.records.back().cells.back().tail;
    } else {
      text_target_ = nullptr;
    }
    return true;
  }

  std::string s_;
  size_t i_ = 0;
  std::vector<Open> stack_;
  std::map<std::string, std::string> namespaces_;
  bool root_closed_ = false;
  XmlDocument doc_;
  std::string* text_target_ = nullptr;
  std::string error_;
};

// Whether `text`, upper-cased as Python's str.upper() would, contains `word` (ASCII upper case).
bool ContainsUpper(std::string_view text, std::string_view word) {
  std::string upper;
  upper.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t at = i;
    const char32_t c = NextCodePoint(text, i);
    if (c >= 'a' && c <= 'z') {
      upper += static_cast<char>(c - 'a' + 'A');
    } else if (c == 0x131) {  // dotless i
      upper += 'I';
    } else if (c == 0x17F) {  // long s
      upper += 'S';
    } else {
      upper.append(text.substr(at, i - at));
    }
  }
  return upper.find(word) != std::string::npos;
}

}  // namespace

// structuredFormats.py, fmt == 'xml'.
std::optional<json> ParseXml(std::string_view text, std::string* error) {
  if (ContainsUpper(text, "<!DOCTYPE") || ContainsUpper(text, "<!ENTITY")) {
    *error = "DTD and entities are outside the published XML profile";
    return std::nullopt;
  }
  XmlReader reader{std::string(text)};
  auto doc = reader.Read();
  if (!doc) {
    *error = reader.error();
    return std::nullopt;
  }
  const XmlElement& root = doc->root;
  if (root.tag != "records" || !root.attrib.empty() || !PyBlank(root.text)) {
    *error = "Expected records root";
    return std::nullopt;
  }
  json rows = json::array();
  for (const auto& record : doc->records) {
    const XmlElement& r = record.element;
    if (r.tag != "record" || !r.attrib.empty() || !PyBlank(r.text) || !PyBlank(r.tail)) {
      *error = "Expected record elements only";
      return std::nullopt;
    }
    json row = json::object();
    for (const auto& cell : record.cells) {
      if (row.contains(cell.tag) || cell.children > 0 || !PyBlank(cell.tail)) {
        *error = "Duplicate/nested XML field or extra text";
        return std::nullopt;
      }
      if (cell.attrib.size() == 1 && cell.attrib.begin()->first == "null" &&
          cell.attrib.begin()->second == "true" && cell.text.empty()) {
        row[cell.tag] = nullptr;
      } else if (cell.attrib.empty()) {
        row[cell.tag] = cell.text;
      } else {
        *error = "Only empty null=\"true\" fields may have attributes";
        return std::nullopt;
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace evalrun::zx
