#pragma once
// zx-bench's bounded structural parsers for text answers (packages/core/src/parsers/
// textStructure.ts at a5f6a19f), which schema_compliance's text contracts read: markup (XML, SVG,
// HTML) as an element tree, YAML documents and TOML as JavaScript values, Markdown blocks, SQL
// tokens and Mermaid's structure. Each reproduces zx-bench's own rules, quirks included (a
// YAML subset, not YAML), and returns every problem it met. Pure and thread-safe.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/js_value.h"

namespace evalrun::zx {

struct MarkupNode {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attrs;  // insertion order
  std::vector<MarkupNode> children;
  std::string text;      // the node's own text and CDATA contents, concatenated
  std::string raw_text;  // the same, CDATA sections as written
  // attrs[key], or nullptr
  const std::string* Attr(std::string_view key) const;
};

struct MarkupParse {
  std::optional<MarkupNode> root;  // the document's first element
  std::vector<std::string> errors;
};
// parseMarkup: `html` lowercases names and knows void elements; XML also checks entities and
// attribute syntax.
MarkupParse ParseMarkup(std::string_view source, bool html);

// descendants (pre-order) and directChildren, names compared case-insensitively; nodeText.
std::vector<const MarkupNode*> Descendants(const MarkupNode* node, std::string_view name);
std::vector<const MarkupNode*> DirectChildren(const MarkupNode* node, std::string_view name);
std::string NodeText(const MarkupNode& node);

struct YamlParse {
  std::vector<js::ordered_json> documents;
  std::vector<std::string> errors;
};
YamlParse ParseYamlDocuments(std::string_view source);  // parseYamlDocuments

struct TomlParse {
  js::ordered_json root = js::ordered_json::object();
  std::vector<std::string> errors;
};
TomlParse ParseTomlDocument(std::string_view source);  // parseTomlDocument

struct MarkdownBlocks {
  struct Heading {
    int level;
    std::string text;
    size_t line;
  };
  struct Fence {
    std::string language, body;
    size_t line;
  };
  struct Table {
    std::vector<std::vector<std::string>> rows;
    size_t line;
  };
  struct Ordered {
    double number;
    std::string text;
  };
  std::vector<Heading> headings;
  std::vector<Fence> fences;
  std::vector<Table> tables;
  std::vector<Ordered> ordered;
  std::vector<std::string> quotes;
  size_t separators = 0;
  std::vector<std::string> errors;
};
MarkdownBlocks ParseMarkdownBlocks(std::string_view source);  // parseMarkdownBlocks

struct SqlTokens {
  std::vector<std::string> tokens;  // words upper-cased, strings as written
  size_t comments = 0;
  std::vector<std::string> errors;
};
SqlTokens TokenizeSql(std::string_view source);  // tokenizeSql

struct MermaidStructure {
  struct Edge {
    std::string from, to, label;
  };
  std::string type;  // the first word
  std::vector<std::string> lines;  // trimmed, blank lines dropped
  std::vector<Edge> edges;
  std::vector<std::pair<std::string, std::vector<std::string>>> entities;  // name -> its lines
  std::vector<std::string> participants, declarations;
  std::vector<std::string> errors;
  const std::vector<std::string>* Entity(std::string_view name) const;
};
MermaidStructure ParseMermaidStructure(std::string_view source);  // parseMermaidStructure

}  // namespace evalrun::zx
