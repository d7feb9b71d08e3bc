// zx-bench's code_repair grader (dimension "program"), reproduced (docs/zx-bench.md, "Graders:
// where evalrun knowingly differs"). Reads the whole bank entry as its spec: language,
// functionName, sourceCode, expectedVerdict, hiddenTests, and its execution contract
// (requirements.isolatedJson, isolatedPythonJson, isolatedJavascriptJson, isolatedTypescriptJson,
// isolatedSqlJson, isolatedJavaJson, isolatedCsharpJson).
//
// Why one file (1.9k lines): the port of one upstream evaluator (codeRepair.ts) with its
// isolatedJson and isolatedPythonJson harnesses, kept in upstream's order for parity review. The
// Node contracts (isolatedJavascriptJson, isolatedTypescriptJson) are node_contracts.cpp, SQL's
// sql_contract.cpp, Java's java_contract.cpp, C#'s csharp_contract.cpp; each further kind goes
// to a file of its own.
//
// Sources read (suncityldp/zx-bench): packages/core/src/evaluators/codeRepair.ts at 1410015b, the
// official scorer `codeRepairEvaluator` 4.14.0, which the bank at 8e0adf68 names (graderVersion
// 4.14.0; 4.15.0 came with the 2026-10-07 submission-parsing review, after that bank). Its
// execution layer, packages/core/src/execution/isolatedJson.ts and containerRunner.ts, is not in
// the store at that commit; the copies read are those of bboysky/ajubyte-model-lab at 22bb91d1,
// which carries the same packages/core tree.
//
// Fix entries (everything but expectedVerdict "no_bug"):
//   1. The entry must carry exactly one execution contract, requirements.isolatedJson, valid,
//      for the entry's language, with entrypoint == functionName and one case per hidden test;
//      otherwise zx-bench reports it unmeasured (an environment error), here kSkipped.
//   2. The patch: the best-ranked ``` block, else code found by heuristics (no code: score 0).
//   3. The candidate runs in a fresh sandbox per step, as zx-bench runs a fresh container: a
//      syntax check that does not run it (node --check / ast.parse), then one run per case that
//      calls the entry point with the case's arguments and prints the results as JSON. The
//      expected values never enter the sandbox; the host compares them (strict JSON equality).
//   4. Score, 0-100: round(.1 patch_extraction + .2 compilation + .4 test_pass +
//      .2 patch_quality + .1 scope_discipline), with patch_extraction 100 for a fenced block and
//      40 for a heuristic one, compilation 100/0, test_pass round(100 passed / cases), and the two
//      diff axes from line sets of the patch and sourceCode. The weights are zx-bench's own
//      constants, not scoring.weights (which holds the same numbers in the bank).
// "no_bug" trap entries are judged from the text alone (verdict, explanation, scope) as zx-bench
// judges them; nothing runs.
//
// Thread-safe; Run never throws. Text work is linear in the output size.
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/js_value.h"
#include "core/canonical_json.h"
#include "core/error.h"
#include "graders/framework/answer.h"
#include "graders/zxbench/factories.h"
#include "graders/framework/grader.h"
#include "plugins/sandbox.h"
#include "graders/zxbench/common.h"
#include "graders/zxbench/csharp_contract.h"
#include "graders/zxbench/go_contract.h"
#include "graders/zxbench/java_contract.h"
#include "graders/zxbench/node_contracts.h"
#include "graders/zxbench/sql_contract.h"

namespace evalrun {
namespace {

using nlohmann::json;
using js::IsJsSpace;
using js::JsRound;
using js::JsTrim;
using zx::IsIdentifier;
using zx::IsJsonValue;
using zx::JsonDeepEqual;
using zx::AsciiLower;
using zx::IsWordChar;
using zx::Member;
using zx::SkipJsSpaces;
using zx::JsSplit;
using zx::StartsWithNoCase;
using zx::PredicateHolds;
using zx::ValidPredicate;
using js::NextCodePoint;
using js::ToWellFormedUtf8;

constexpr std::string_view kName = "zxbench:code_repair";
constexpr std::string_view kVersion = "1";
constexpr std::string_view kZxEvaluator = "code_repair 4.14.0";

constexpr size_t kEvidenceBytes = 600;   // patch and stderr excerpts kept in the evidence
constexpr size_t kObservationBytes = 64 * 1024;  // zx-bench's maxOutputBytes per case

// ---- Text as zx-bench's JavaScript sees it (valid UTF-8 in, see zx::ToWellFormedUtf8) ---------

// \s+ at `i`: advances past at least one whitespace character, or fails.
bool Spaces1(std::string_view s, size_t& i) {
  const size_t j = SkipJsSpaces(s, i);
  if (j == i) return false;
  i = j;
  return true;
}

bool Literal(std::string_view s, size_t& i, std::string_view literal) {
  if (s.substr(i, literal.size()) != literal) return false;
  i += literal.size();
  return true;
}

// \w+ at `i`: advances past at least one word character, or fails.
bool Word1(std::string_view s, size_t& i) {
  size_t j = i;
  while (j < s.size() && IsWordChar(s[j])) ++j;
  if (j == i) return false;
  i = j;
  return true;
}

bool Char(std::string_view s, size_t& i, char c) {
  if (i >= s.size() || s[i] != c) return false;
  ++i;
  return true;
}

// \s*c and \s*literal at `i`.
bool CharAfterSpaces(std::string_view s, size_t& i, char c) {
  i = SkipJsSpaces(s, i);
  return Char(s, i, c);
}

bool LiteralAfterSpaces(std::string_view s, size_t& i, std::string_view literal) {
  i = SkipJsSpaces(s, i);
  return Literal(s, i, literal);
}

// String.prototype.length: UTF-16 code units.
size_t Utf16Length(std::string_view s) {
  size_t units = 0;
  for (const char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if ((b & 0xC0) != 0x80) units += b >= 0xF0 ? 2 : 1;
  }
  return units;
}

bool IsBlank(std::string_view line) { return JsTrim(line).empty(); }

std::string JoinLines(const std::vector<std::string_view>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += '\n';
    out.append(lines[i]);
  }
  return out;
}

// ---- Finding the patch ------------------------------------------------------------------------

// extractCodeBlocks: every match of /```(?:[\w+-]*)\s*\n([\s\S]*?)```/g, trimmed, empty ones
// dropped. After the tag the whitespace must hold a newline; the body starts after the last
// newline of that whitespace (where \s* gives back to let \n match) and ends at the next ```.
// A fence left open is no block.
std::vector<std::string_view> ExtractCodeBlocks(std::string_view text) {
  std::vector<std::string_view> blocks;
  size_t pos = 0;
  for (;;) {
    const size_t open = text.find("```", pos);
    if (open == std::string_view::npos) break;
    size_t i = open + 3;
    while (i < text.size() && (IsWordChar(text[i]) || text[i] == '+' || text[i] == '-')) ++i;
    size_t last_newline = std::string_view::npos;
    while (i < text.size()) {
      size_t next = i;
      const char32_t c = NextCodePoint(text, next);
      if (!IsJsSpace(c)) break;
      if (c == '\n') last_newline = i;
      i = next;
    }
    if (last_newline == std::string_view::npos) {
      pos = open + 1;  // the regex tries the next position
      continue;
    }
    const size_t start = last_newline + 1;
    const size_t close = text.find("```", start);
    if (close == std::string_view::npos) break;  // no later fence can close either
    const std::string_view body = JsTrim(text.substr(start, close - start));
    if (!body.empty()) blocks.push_back(body);
    pos = close + 3;
  }
  return blocks;
}

// /\b(assert|expect|describe|it\(|test\(|pytest|unittest|TestCase|@Test|Assert\.)/i
bool HasTestMarker(std::string_view b) {
  static constexpr std::array<std::string_view, 10> kMarkers = {
      "assert", "expect", "describe", "it(", "test(", "pytest", "unittest", "testcase", "@test",
      "assert."};
  for (size_t i = 0; i < b.size(); ++i) {
    const bool before = i > 0 && IsWordChar(b[i - 1]);
    if (before == IsWordChar(b[i])) continue;  // no \b here
    for (const auto marker : kMarkers) {
      if (StartsWithNoCase(b, i, marker)) return true;
    }
  }
  return false;
}

bool IsLineTerminator(char32_t c) { return c == '\n' || c == '\r' || c == 0x2028 || c == 0x2029; }

// /^\s*(import|require|package|using|#include|from\s+\S+\s+import)/im. \s* may cross lines, so a
// match starts at the first non-space character after some line start: test each line's.
bool HasImportMarker(std::string_view b) {
  static constexpr std::array<std::string_view, 5> kWords = {"import", "require", "package",
                                                             "using", "#include"};
  bool line_start = true;
  for (size_t i = 0; i < b.size();) {
    size_t next = i;
    const char32_t c = NextCodePoint(b, next);
    if (IsLineTerminator(c)) {
      line_start = true;
      i = next;
      continue;
    }
    if (line_start && IsJsSpace(c)) {
      i = next;
      continue;
    }
    if (line_start) {
      line_start = false;
      for (const auto word : kWords) {
        if (StartsWithNoCase(b, i, word)) return true;
      }
      if (StartsWithNoCase(b, i, "from")) {
        size_t j = i + 4;
        if (Spaces1(b, j)) {
          const size_t run = j;
          while (j < b.size()) {
            size_t k = j;
            if (IsJsSpace(NextCodePoint(b, k))) break;
            j = k;
          }
          if (j > run && Spaces1(b, j) && StartsWithNoCase(b, j, "import")) return true;
        }
      }
    }
    i = next;
  }
  return false;
}

// rankBlocks(...)[0]: the block scored highest (+50 names the function, +25 import-like line,
// +15 for 3-120 lines, -20 under 3 lines, up to +10 for lateness, -40 test-like); ties go to
// the later block.
std::string_view BestBlock(const std::vector<std::string_view>& blocks,
                           std::string_view function_name) {
  if (blocks.size() == 1) return blocks[0];
  long best_score = 0;
  size_t best = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const std::string_view b = blocks[i];
    long s = 0;
    if (!function_name.empty() && b.find(function_name) != std::string_view::npos) s += 50;
    if (HasImportMarker(b)) s += 25;
    const size_t lines = static_cast<size_t>(std::count(b.begin(), b.end(), '\n')) + 1;
    if (lines >= 3 && lines <= 120) s += 15;
    if (lines < 3) s -= 20;
    s += JsRound(static_cast<double>(i) / static_cast<double>(blocks.size() - 1) * 10);
    if (HasTestMarker(b)) s -= 40;
    if (i == 0 || s >= best_score) {
      best_score = s;
      best = i;
    }
  }
  return blocks[best];
}

bool IsBraceLanguage(std::string_view l) {
  for (const char* name : {"javascript", "typescript", "js", "ts", "go", "golang", "java", "csharp",
                           "c#", "c", "cpp", "c++", "rust", "rs", "swift", "kotlin", "dart",
                           "scala"}) {
    if (l == name) return true;
  }
  return false;
}

bool IsIndentLanguage(std::string_view l) {
  for (const char* name : {"python", "py", "ruby", "rb", "yaml", "yml", "coffeescript"}) {
    if (l == name) return true;
  }
  return false;
}

// Every `open`...`close` span removed, scanning left to right (/open[\s\S]*?close/g).
std::string RemoveSpans(std::string_view s, std::string_view open, std::string_view close) {
  std::string out;
  size_t pos = 0;
  for (;;) {
    const size_t a = s.find(open, pos);
    if (a == std::string_view::npos) break;
    const size_t b = s.find(close, a + open.size());
    if (b == std::string_view::npos) break;
    out.append(s.substr(pos, a - pos));
    pos = b + close.size();
  }
  out.append(s.substr(pos));
  return out;
}

// The line with comments and quoted strings removed before braces are counted:
// .replace(/\/\/.*$/, '') (once; '.' stops at \r, U+2028, U+2029 and $ is the end of the line,
// so only a "//" after the last of those counts), then block comments, '...', "...", `...`.
std::string StripForBraces(std::string_view line) {
  size_t from = 0;
  for (size_t i = 0; i < line.size();) {
    const char32_t c = NextCodePoint(line, i);
    if (IsLineTerminator(c)) from = i;
  }
  const size_t comment = line.find("//", from);
  std::string s(line.substr(0, comment));
  s = RemoveSpans(s, "/*", "*/");
  s = RemoveSpans(s, "'", "'");
  s = RemoveSpans(s, "\"", "\"");
  return RemoveSpans(s, "`", "`");
}

size_t LeadingSpaceUnits(std::string_view line) {  // line.match(/^(\s*)/)[1].length
  size_t units = 0;
  for (size_t i = 0; i < line.size();) {
    size_t next = i;
    if (!IsJsSpace(NextCodePoint(line, next))) break;
    ++units;  // every JavaScript space is one UTF-16 unit
    i = next;
  }
  return units;
}

// extractBlockFromLine.
std::string ExtractBlockFromLine(const std::vector<std::string_view>& lines, size_t start,
                                 std::string_view language) {
  std::vector<std::string_view> result;
  if (IsBraceLanguage(language)) {
    long depth = 0;
    bool started = false;
    for (size_t i = start; i < lines.size(); ++i) {
      result.push_back(lines[i]);
      for (const char c : StripForBraces(lines[i])) {
        if (c == '{') {
          ++depth;
          started = true;
        }
        if (c == '}') --depth;
      }
      if (started && depth <= 0 && i > start) break;
    }
    return JoinLines(result);
  }
  if (IsIndentLanguage(language)) {
    const size_t indent = LeadingSpaceUnits(lines[start]);
    result.push_back(lines[start]);
    for (size_t i = start + 1; i < lines.size(); ++i) {
      if (IsBlank(lines[i])) {
        result.push_back(lines[i]);
        continue;
      }
      if (LeadingSpaceUnits(lines[i]) <= indent) break;
      result.push_back(lines[i]);
    }
    return JoinLines(result);
  }
  for (size_t i = start; i < std::min(lines.size(), start + 30); ++i) {
    if (IsBlank(lines[i]) && result.size() > 3) break;
    result.push_back(lines[i]);
  }
  return JoinLines(result);
}

// Every place `word` occurs in `line` (the patterns are not anchored and have no \b).
template <typename Test>
bool AnyOccurrence(std::string_view line, std::string_view word, Test test) {
  for (size_t p = line.find(word); p != std::string_view::npos; p = line.find(word, p + 1)) {
    if (test(p + word.size())) return true;
  }
  return false;
}

// getLanguageFuncPatterns(language, name), tested on one line.
std::vector<bool (*)(std::string_view, std::string_view)> FuncPatterns(std::string_view language) {
  using Pattern = bool (*)(std::string_view, std::string_view);
  std::vector<Pattern> patterns = {
      // function\s+NAME\s*\(
      [](std::string_view l, std::string_view name) {
        return AnyOccurrence(l, "function", [&](size_t i) {
          return Spaces1(l, i) && Literal(l, i, name) && CharAfterSpaces(l, i, '(');
        });
      },
      // (const|let|var)\s+NAME\s*=
      [](std::string_view l, std::string_view name) {
        for (const std::string_view kw : {"const", "let", "var"}) {
          if (AnyOccurrence(l, kw, [&](size_t i) {
                return Spaces1(l, i) && Literal(l, i, name) && CharAfterSpaces(l, i, '=');
              })) {
            return true;
          }
        }
        return false;
      },
      // NAME\s*=\s*function
      [](std::string_view l, std::string_view name) {
        return AnyOccurrence(l, name, [&](size_t i) {
          return CharAfterSpaces(l, i, '=') && LiteralAfterSpaces(l, i, "function");
        });
      },
      // NAME\s*=\s*\(
      [](std::string_view l, std::string_view name) {
        return AnyOccurrence(l, name, [&](size_t i) {
          return CharAfterSpaces(l, i, '=') && CharAfterSpaces(l, i, '(');
        });
      },
  };
  if (language == "python" || language == "py") {
    // def\s+NAME\s*\(
    patterns.push_back([](std::string_view l, std::string_view name) {
      return AnyOccurrence(l, "def", [&](size_t i) {
        return Spaces1(l, i) && Literal(l, i, name) && CharAfterSpaces(l, i, '(');
      });
    });
    // class\s+NAME
    patterns.push_back([](std::string_view l, std::string_view name) {
      return AnyOccurrence(l, "class",
                           [&](size_t i) { return Spaces1(l, i) && Literal(l, i, name); });
    });
  }
  return patterns;
}

// getLanguageDefPatterns(language), anchored at the start of one line.
std::vector<bool (*)(std::string_view)> DefPatterns(std::string_view language) {
  using Pattern = bool (*)(std::string_view);
  // /^class\s+\w+/
  const Pattern class_decl = [](std::string_view l) {
    size_t i = 0;
    return Literal(l, i, "class") && Spaces1(l, i) && i < l.size() && IsWordChar(l[i]);
  };
  std::vector<Pattern> patterns = {
      // /^function\s+\w+\s*\(/
      [](std::string_view l) {
        size_t i = 0;
        return Literal(l, i, "function") && Spaces1(l, i) && Word1(l, i) &&
               CharAfterSpaces(l, i, '(');
      },
      // /^(const|let|var)\s+\w+\s*=\s*(function|async\s+function|\(|class)/
      [](std::string_view l) {
        size_t i = 0;
        if (!(Literal(l, i, "const") || Literal(l, i, "let") || Literal(l, i, "var"))) return false;
        if (!(Spaces1(l, i) && Word1(l, i) && CharAfterSpaces(l, i, '='))) return false;
        const std::string_view rest = l.substr(SkipJsSpaces(l, i));
        size_t j = 0;
        const bool async_function =
            Literal(rest, j, "async") && Spaces1(rest, j) && Literal(rest, j, "function");
        return async_function || rest.rfind("function", 0) == 0 || rest.rfind('(', 0) == 0 ||
               rest.rfind("class", 0) == 0;
      },
      // /^(export\s+)?(default\s+)?function\s+\w/
      [](std::string_view l) {
        for (const bool exported : {true, false}) {
          for (const bool by_default : {true, false}) {
            size_t i = 0;
            if (exported && !(Literal(l, i, "export") && Spaces1(l, i))) continue;
            if (by_default && !(Literal(l, i, "default") && Spaces1(l, i))) continue;
            if (Literal(l, i, "function") && Spaces1(l, i) && i < l.size() && IsWordChar(l[i])) {
              return true;
            }
          }
        }
        return false;
      },
      class_decl,
      // /^(public|private|protected)\s+(static\s+)?\w+\s+\w+\s*\(/
      [](std::string_view l) {
        size_t start = 0;
        if (!((Literal(l, start, "public") || Literal(l, start, "private") ||
               Literal(l, start, "protected")) &&
              Spaces1(l, start))) {
          return false;
        }
        for (const bool is_static : {true, false}) {
          size_t i = start;
          if (is_static && !(Literal(l, i, "static") && Spaces1(l, i))) continue;
          if (Word1(l, i) && Spaces1(l, i) && Word1(l, i) && CharAfterSpaces(l, i, '(')) {
            return true;
          }
        }
        return false;
      },
      // /^(\w+)\s*:?\s*=\s*function/
      [](std::string_view l) {
        size_t i = 0;
        if (!Word1(l, i)) return false;
        i = SkipJsSpaces(l, i);
        Char(l, i, ':');
        return CharAfterSpaces(l, i, '=') && LiteralAfterSpaces(l, i, "function");
      },
  };
  if (language == "python" || language == "py") {
    // unshift()ed in this order: from, import, class, def come first
    const std::vector<Pattern> python = {
        // /^from\s+\w+\s+import/
        [](std::string_view l) {
          size_t i = 0;
          return Literal(l, i, "from") && Spaces1(l, i) && Word1(l, i) && Spaces1(l, i) &&
                 Literal(l, i, "import");
        },
        // /^import\s+/
        [](std::string_view l) {
          size_t i = 0;
          return Literal(l, i, "import") && Spaces1(l, i);
        },
        class_decl,
        // /^def\s+\w+\s*\(/
        [](std::string_view l) {
          size_t i = 0;
          return Literal(l, i, "def") && Spaces1(l, i) && Word1(l, i) &&
                 CharAfterSpaces(l, i, '(');
        },
    };
    patterns.insert(patterns.begin(), python.begin(), python.end());
  }
  return patterns;
}

// extractIndentedCodeBlocks.
std::vector<std::string> ExtractIndentedBlocks(const std::vector<std::string_view>& lines) {
  static constexpr std::string_view kKeywords[] = {
      "if",     "for",     "while",  "switch",   "case",   "return", "break",     "continue",
      "try",    "catch",   "throw",  "new",      "delete", "typeof", "import",    "export",
      "require", "const",  "let",    "var",      "function", "class", "async",    "await",
      "yield",  "def",     "elif",   "else",     "elif",   "except", "finally",   "raise",
      "pass",   "with",    "from",   "fn",       "pub",    "impl",   "use",       "mod",
      "struct", "enum",    "trait",  "match",    "loop",   "where",  "type",      "interface",
      "package"};
  std::vector<std::string> blocks;
  std::vector<std::string_view> current;
  bool in_block = false;
  for (const std::string_view line : lines) {
    const size_t indent = LeadingSpaceUnits(line);
    const bool starts_with_indent = indent >= 2 && SkipJsSpaces(line, 0) < line.size();
    const std::string_view trimmed = JsTrim(line);
    const bool empty = trimmed.empty();
    bool likely_code = line.find_first_of("{}();=<>+-*/[]&|!?:") != std::string_view::npos;
    for (const std::string_view keyword : kKeywords) {
      if (likely_code) break;
      likely_code = trimmed.substr(0, keyword.size()) == keyword;
    }
    if (starts_with_indent || (empty && in_block)) {
      if (!in_block) {
        current.clear();
        in_block = true;
      }
      current.push_back(line);
    } else if (likely_code && !in_block) {
      current = {line};
      in_block = true;
    } else {
      if (in_block && current.size() >= 3) blocks.push_back(JoinLines(current));
      current.clear();
      in_block = false;
    }
  }
  if (in_block && current.size() >= 3) blocks.push_back(JoinLines(current));
  return blocks;
}

// heuristicExtractCode (4.14.0: only a leading "ANSWER:" label is removed). Only the languages an
// isolatedJson contract allows reach it (javascript, typescript, python, php), so its sql and
// bash branches and its Go, Java, C#, Rust and C patterns are left out.
std::optional<std::string> HeuristicExtractCode(std::string_view output, std::string_view language,
                                                std::string_view function_name) {
  std::string_view normalized = JsTrim(output);
  if (StartsWithNoCase(normalized, 0, "answer")) {  // .replace(/^ANSWER\s*:\s*/i, '')
    size_t i = SkipJsSpaces(normalized, 6);
    if (Char(normalized, i, ':')) normalized = normalized.substr(SkipJsSpaces(normalized, i));
  }
  normalized = JsTrim(normalized);
  const std::vector<std::string_view> lines = JsSplit(normalized, '\n');
  if (!function_name.empty()) {
    for (const auto pattern : FuncPatterns(language)) {
      for (size_t i = 0; i < lines.size(); ++i) {
        if (!pattern(lines[i], function_name)) continue;
        std::string extracted = ExtractBlockFromLine(lines, i, language);
        if (Utf16Length(extracted) > 0) return extracted;
        break;
      }
    }
  }
  for (const auto pattern : DefPatterns(language)) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (!pattern(lines[i])) continue;
      std::string extracted = ExtractBlockFromLine(lines, i, language);
      if (Utf16Length(extracted) > 2) return extracted;
      break;
    }
  }
  const std::vector<std::string> indented = ExtractIndentedBlocks(lines);
  if (!indented.empty()) {
    size_t best = 0;
    for (size_t i = 1; i < indented.size(); ++i) {
      if (Utf16Length(indented[i]) > Utf16Length(indented[best])) best = i;
    }
    if (Utf16Length(indented[best]) >= 3) return indented[best];
  }
  return std::nullopt;
}

// ---- The two diff axes --------------------------------------------------------------------------

// new Set(lines.map(l => l.trim()).filter(l => l))
std::unordered_set<std::string_view> TrimmedLineSet(const std::vector<std::string_view>& lines) {
  std::unordered_set<std::string_view> set;
  for (const auto line : lines) {
    const std::string_view t = JsTrim(line);
    if (!t.empty()) set.insert(t);
  }
  return set;
}

// calculateDiffQuality: 0 when nothing changed; 90/80/60/40 below 30/50/80 % / above of the
// distinct trimmed lines changed; 70 without sourceCode.
int PatchQuality(std::string_view source, std::string_view patch) {
  if (source.empty()) return 70;
  const auto source_set = TrimmedLineSet(JsSplit(source, '\n'));
  const auto patch_set = TrimmedLineSet(JsSplit(patch, '\n'));
  size_t common = 0;
  for (const auto line : source_set) common += patch_set.count(line);
  const size_t unique = source_set.size() + patch_set.size() - common;
  const size_t changed = unique - common;
  if (changed == 0) return 0;
  const double ratio = unique > 0 ? static_cast<double>(changed) / static_cast<double>(unique) : 0;
  return ratio < 0.3 ? 90 : ratio < 0.5 ? 80 : ratio < 0.8 ? 60 : 40;
}

// calculateScopeDiscipline: added plus removed non-blank lines against the source's non-blank
// lines: 0 when nothing changed; 95/80/60/40 below 20/40/70 % / above; 70 without sourceCode.
int ScopeDiscipline(std::string_view source, std::string_view patch) {
  if (source.empty()) return 70;
  const auto source_lines = JsSplit(source, '\n');
  const auto patch_lines = JsSplit(patch, '\n');
  const auto source_set = TrimmedLineSet(source_lines);
  const auto patch_set = TrimmedLineSet(patch_lines);
  size_t changes = 0, source_len = 0;
  for (const auto line : patch_lines) {
    const std::string_view t = JsTrim(line);
    if (!t.empty() && source_set.count(t) == 0) ++changes;
  }
  for (const auto line : source_lines) {
    const std::string_view t = JsTrim(line);
    if (t.empty()) continue;
    ++source_len;
    if (patch_set.count(t) == 0) ++changes;
  }
  const double ratio =
      source_len > 0 ? static_cast<double>(changes) / static_cast<double>(source_len) : 0;
  if (changes == 0) return 0;
  return ratio < 0.2 ? 95 : ratio < 0.4 ? 80 : ratio < 0.7 ? 60 : 40;
}

// ---- The isolated JSON contract -----------------------------------------------------------------

constexpr std::array<std::string_view, 4> kProtocols = {"isolated-json-v1", "isolated-json-v2",
                                                        "isolated-json-v3", "isolated-php-json-v1"};

// validIsolatedJsonContract (v3's predicate shapes are not checked: evalrun does not run v3).
bool ValidContract(const json& c) {
  if (!c.is_object()) return false;
  const json& protocol = Member(c, "protocol");
  if (!protocol.is_string() ||
      std::find(kProtocols.begin(), kProtocols.end(), protocol.get<std::string>()) ==
          kProtocols.end()) {
    return false;
  }
  const std::string p = protocol.get<std::string>();
  const json& cases = Member(c, "cases");
  if (!IsIdentifier(Member(c, "entrypoint")) || !cases.is_array() || cases.empty() ||
      cases.size() > 100) {
    return false;
  }
  std::set<std::string> ids;
  for (const auto& t : cases) {
    const json& id = Member(t, "id");
    if (!t.is_object() || !id.is_string() || id.get_ref<const std::string&>().empty()) return false;
    if (!ids.insert(id.get<std::string>()).second) return false;
    const json& calls = Member(t, "calls");
    if (!calls.is_array() || calls.empty() || calls.size() > 100) return false;
    for (const auto& args : calls) {
      if (!args.is_array() || !IsJsonValue(args)) return false;
    }
    if (p != "isolated-json-v2") {
      if (t.contains("keywordArgs")) return false;
    } else {
      const json& kwargs = t["keywordArgs"];
      if (!kwargs.is_array() || kwargs.size() != calls.size()) return false;
      for (const auto& kw : kwargs) {
        if (!kw.is_object() || !IsJsonValue(kw)) return false;
        for (const auto& [key, value] : kw.items()) {
          if (!IsIdentifier(json(key))) return false;
        }
      }
    }
    if (p == "isolated-php-json-v1") {
      const json& transforms = Member(t, "resultTransforms");
      if (!transforms.is_array() || transforms.size() != calls.size()) return false;
      for (const auto& x : transforms) {
        if (x != "identity" && x != "arrayValues") return false;
      }
    } else if (t.contains("resultTransforms")) {
      return false;
    }
    const json& expected = Member(t, "expected");
    if (!expected.is_array() || expected.size() != calls.size() || !IsJsonValue(expected)) {
      return false;
    }
  }
  return true;
}

bool ProtocolSupportsLanguage(std::string_view protocol, std::string_view language) {
  if (protocol == "isolated-json-v2") return language == "python";
  if (protocol == "isolated-php-json-v1") return language == "php";
  return language == "javascript" || language == "typescript" || language == "python";
}

// ---- requirements.isolatedPythonJson (isolated-python-json-v1) ----------------------------------

// The adapters the harness knows (isolatedPythonJson.ts): each names the functions it calls.
constexpr std::array<std::string_view, 13> kPythonAdapters = {
    "mutable-default", "group-by",  "paginate",  "accumulator", "apply-once",
    "topo-order",      "pair-sum",  "fetch-all", "histogram",   "sql-param",
    "path-safe",       "lazy-property", "shape-sequence"};

// validIsolatedPythonJsonContract.
bool ValidPythonContract(const json& c) {
  if (!c.is_object() || Member(c, "protocol") != "isolated-python-json-v1") return false;
  const json& adapter = Member(c, "adapter");
  if (!adapter.is_string() ||
      std::find(kPythonAdapters.begin(), kPythonAdapters.end(), adapter.get<std::string>()) ==
          kPythonAdapters.end()) {
    return false;
  }
  const json& cases = Member(c, "cases");
  if (!IsIdentifier(Member(c, "entrypoint")) || !cases.is_array() || cases.empty() ||
      cases.size() > 20) {
    return false;
  }
  std::set<std::string> ids;
  for (const auto& t : cases) {
    const json& id = Member(t, "id");
    if (!t.is_object() || !id.is_string() || !ids.insert(id.get<std::string>()).second) {
      return false;
    }
    const json& calls = Member(t, "calls");
    if (!calls.is_array() || calls.empty() || calls.size() > 20) return false;
    for (const auto& args : calls) {
      if (!args.is_array() || !IsJsonValue(args) ||
          CanonicalJson(args, KeyOrder::kJavaScript).size() >= 65536) {
        return false;
      }
    }
    const json& expected = Member(t, "expected");
    if (!expected.is_array() || expected.size() != calls.size() || !IsJsonValue(expected)) {
      return false;
    }
    for (const auto& predicate : expected) {
      if (!ValidPredicate(predicate)) return false;
    }
  }
  return true;
}

// Every execution contract key isolatedCodeRepairUnavailable knows.
constexpr std::array<const char*, 12> kContractKeys = {
    "isolatedJson",          "quickJsObservation",     "isolatedJavaJson",
    "isolatedCsharpJson",    "isolatedGoJson",         "isolatedPhpJson",
    "isolatedPythonJson",    "isolatedJavascriptJson", "isolatedSqlJson",
    "isolatedTypescriptJson", "isolatedTypescriptType", "isolatedFixtureExit"};

// The entry's language as the official scorer maps it (case-sensitive, as there).
std::string ScorerLanguage(const json& spec) {
  const json& language = Member(spec, "language");
  const std::string l = language.is_string() ? language.get<std::string>() : "";
  if (l == "js") return "javascript";
  if (l == "ts") return "typescript";
  if (l == "py") return "python";
  return l;
}

enum class ContractKind {
  kIsolatedJson,
  kPythonJson,
  kJavascriptJson,
  kTypescriptJson,
  kSqlJson,
  kJavaJson,
  kCsharpJson,
  kGoJson
};

// The adapter-driven contract kinds evalrun runs, each for one language.
struct AdapterKind {
  const char* key;
  ContractKind kind;
  bool (*valid)(const json&);
  std::string_view language;
  std::string_view language_alias = {};  // zx-bench takes "c#" for "csharp"
};
const AdapterKind kAdapterKinds[] = {
    {"isolatedPythonJson", ContractKind::kPythonJson, ValidPythonContract, "python"},
    {"isolatedJavascriptJson", ContractKind::kJavascriptJson, zx::ValidJavascriptJsonContract,
     "javascript"},
    {"isolatedTypescriptJson", ContractKind::kTypescriptJson, zx::ValidTypescriptJsonContract,
     "typescript"},
    {"isolatedSqlJson", ContractKind::kSqlJson, zx::ValidSqlJsonContract, "sql"},
    {"isolatedJavaJson", ContractKind::kJavaJson, zx::ValidJavaJsonContract, "java"},
    {"isolatedCsharpJson", ContractKind::kCsharpJson, zx::ValidCsharpJsonContract, "csharp", "c#"},
    {"isolatedGoJson", ContractKind::kGoJson, zx::ValidGoJsonContract, "go", "golang"},
};

struct Availability {
  const json* contract = nullptr;  // the usable contract (isolatedJson or an adapter kind)
  ContractKind kind = ContractKind::kIsolatedJson;
  std::string other_key;           // another contract kind zx-bench would run; evalrun cannot
  std::string unmeasured;          // zx-bench's reason for leaving the entry unmeasured
};

// isolatedCodeRepairUnavailable. zx-bench's reasons are kept with an English gloss.
Availability CheckAvailability(const json& spec, std::string_view language) {
  Availability a;
  const json& requirements = Member(spec, "requirements");
  int defined = 0;
  for (const char* key : kContractKeys) {
    if (requirements.is_object() && requirements.contains(key)) {
      ++defined;
      if (std::string_view(key) != "isolatedJson") a.other_key = key;
    }
  }
  if (defined > 1) {
    a.unmeasured = "the entry names more than one execution contract (不能同时指定多个执行观测协议)";
    return a;
  }
  const AdapterKind* adapter_kind = nullptr;
  for (const AdapterKind& k : kAdapterKinds) {
    if (a.other_key == k.key) adapter_kind = &k;
  }
  // Other kinds' validity rules are not reproduced: evalrun skips them.
  if (!a.other_key.empty() && adapter_kind == nullptr) return a;
  const json& contract =
      Member(requirements, adapter_kind != nullptr ? adapter_kind->key : "isolatedJson");
  const bool usable =
      adapter_kind != nullptr
          ? adapter_kind->valid(contract) &&
                (language == adapter_kind->language ||
                 (!adapter_kind->language_alias.empty() && language == adapter_kind->language_alias))
          : ValidContract(contract) &&
                ProtocolSupportsLanguage(contract["protocol"].get<std::string>(), language);
  if (adapter_kind != nullptr) {
    a.other_key.clear();
    a.kind = adapter_kind->kind;
  }
  if (!usable || Member(spec, "functionName") != contract["entrypoint"]) {
    a.unmeasured =
        "the entry has no valid isolated execution contract for its language and function "
        "(此题尚未迁移到可信观测判分通道，旧同进程测试仅供诊断)";
    return a;
  }
  const json& tests = Member(spec, "hiddenTests");
  const json& cases = contract["cases"];
  std::set<std::string> case_ids;
  for (const auto& c : cases) case_ids.insert(c["id"].get<std::string>());
  std::set<json> test_ids;
  bool listed = true;
  for (const auto& t : tests.is_array() ? tests : json::array()) {
    const json& id = Member(t, "id");
    test_ids.insert(id);
    if (!id.is_string() || case_ids.count(id.get<std::string>()) == 0) listed = false;
  }
  const size_t test_count = tests.is_array() ? tests.size() : 0;
  if (test_count != cases.size() || test_ids.size() != test_count || !listed) {
    a.unmeasured =
        "the contract's cases and hiddenTests disagree (隔离调用契约与原测试清单不一致)";
    return a;
  }
  a.contract = &contract;
  return a;
}

// Why a usable isolatedJson contract does not run here ("" when it does).
std::string UnrunnableContract(const json& contract, const std::string& language) {
  const std::string protocol = contract["protocol"].get<std::string>();
  if (protocol == "isolated-csharp-json-v1" || protocol == "isolated-csharp-json-v2") {
    return zx::CsharpAdapterUnsupported(contract);
  }
  const bool runnable = (protocol == "isolated-json-v1" &&
                         (language == "javascript" || language == "python")) ||
                        (protocol == "isolated-json-v2" && language == "python") ||
                        (protocol == "isolated-python-json-v1" && language == "python") ||
                        (protocol == "isolated-javascript-json-v1" && language == "javascript") ||
                        (protocol == "isolated-typescript-json-v1" && language == "typescript") ||
                        (protocol == "isolated-sql-json-v1" && language == "sql") ||
                        ((protocol == "isolated-java-json-v1" || protocol == "isolated-java-json-v2") &&
                         language == "java") ||
                        ((protocol == "isolated-go-json-v1" || protocol == "isolated-go-json-v2") &&
                         (language == "go" || language == "golang"));
  // (C#'s protocols returned above.)
  if (runnable) return {};
  return "evalrun does not run " + protocol + " contracts for " + language +
         (language == "typescript" ? " (zx-bench transpiles with the TypeScript compiler first)"
                                   : "");
}

// ---- Running the contract in the sandbox --------------------------------------------------------

// The driver: stdout carries only the results; everything the candidate prints goes to stderr;
// JSON.stringify and the writer are taken before the candidate loads; a result JSON cannot
// represent stops it. The candidate is an ES module (candidate.mjs) that ends with
// `export { <entrypoint> as zxEntry };`.
constexpr const char* kJavascriptDriver = R"JS(import { readFileSync } from 'node:fs';
const emit = process.stdout.write.bind(process.stdout);
const stringify = JSON.stringify;
const request = JSON.parse(readFileSync('input.json', 'utf8'));
console.log = console.info = console.warn = console.error.bind(console);
const { zxEntry } = await import('./candidate.mjs');
const results = [];
for (const args of request.calls) results.push(await zxEntry(...args));
emit(stringify(results, (_key, value) => {
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol' ||
      (typeof value === 'number' && !Number.isFinite(value))) {
    throw new Error('NON_JSON_RESULT');
  }
  return value;
}));
)JS";

constexpr const char* kPythonDriver = R"PY(import contextlib, importlib.util, json, sys
emit = sys.stdout.write
dumps = json.dumps
with open('input.json', encoding='utf-8') as f:
    request = json.load(f)
spec = importlib.util.spec_from_file_location('candidate', 'candidate.py')
module = importlib.util.module_from_spec(spec)
with contextlib.redirect_stdout(sys.stderr):
    spec.loader.exec_module(module)
    entry = getattr(module, request['entrypoint'])
    if request.get('protocol') == 'isolated-json-v2':
        results = [entry(*args, **kwargs)
                   for args, kwargs in zip(request['calls'], request['keywordArgs'], strict=True)]
    else:
        results = [entry(*args) for args in request['calls']]
emit(dumps(results, ensure_ascii=False, allow_nan=False))
)PY";

// isolated-python-json-v1's harness, written for evalrun from the behaviour isolatedPythonJson.ts
// gives each adapter: the candidate module is imported with its prints sent to stderr, each
// call of the case becomes one value, and the values are written as one JSON array. An
// exception an adapter does not catch ends the run (exit 1): the case fails.
constexpr const char* kPythonJsonDriver = R"PY(import asyncio, collections.abc, contextlib, importlib.util, json, os, sys, tempfile, threading, time, typing
emit = sys.stdout.write
with open('input.json', encoding='utf-8') as f:
    request = json.load(f)
adapter = request['adapter']

def thrown(e, message=False):
    out = {'kind': 'throw', 'type': type(e).__name__}
    if message:
        out['message'] = str(e)
    return out

def call(m, c):
    if adapter == 'mutable-default':
        if c[0] == 'one':
            return m.add_item(c[1])
        if c[0] == 'pollution':
            m.add_item(c[1])
            return m.add_item(c[2])
        cart = []
        return m.add_item(c[1], cart) is cart
    if adapter == 'group-by':
        fn = (lambda x: x % 2) if c[0] == 'mod2' else len if c[0] == 'len' else (lambda x: x)
        return m.group_by(c[1], fn)
    if adapter == 'paginate':
        try:
            return {'kind': 'return', 'value': m.paginate(c[0], c[1], c[2])}
        except Exception as e:
            return thrown(e)
    if adapter == 'accumulator':
        if c[0] == 'independent':
            x = m.Accumulator(); x.add(c[1])
            y = m.Accumulator(); y.add(c[2])
            return [x.total(), y.total()]
        a = m.Accumulator()
        for v in c[1]:
            a.add(v)
        return a.total()
    if adapter == 'apply-once':
        store, hits = {}, []
        if c[0] == 'repeat':
            def fn():
                hits.append(1)
                return c[2]
            return [m.apply_once(c[1], store, fn), m.apply_once(c[1], store, fn), len(hits)]
        return [m.apply_once('a', store, lambda: c[1]), m.apply_once('b', store, lambda: c[2]), store]
    if adapter == 'topo-order':
        tasks = c[0]
        try:
            order = m.topo_order(tasks)
            ok = (isinstance(order, list) and len(order) == len(tasks) and len(set(order)) == len(tasks)
                  and set(order) == set(tasks)
                  and all(order.index(d) < order.index(n) for n, ds in tasks.items() for d in ds))
            return {'kind': 'return', 'valid': ok}
        except Exception as e:
            return thrown(e, True)
    if adapter == 'pair-sum':
        if c[0] == 'perf':
            t = time.perf_counter()
            v = m.has_pair_sum(list(range(c[1])), c[2])
            return [v, (time.perf_counter() - t) * 1000 < c[3]]
        return m.has_pair_sum(c[0], c[1])
    if adapter == 'fetch-all':
        if c[0] == 'values':
            state = {'active': 0, 'peak': 0}
            async def fetch(u):
                state['active'] += 1
                state['peak'] = max(state['peak'], state['active'])
                await asyncio.sleep(.02)
                state['active'] -= 1
                return 'data:' + u
            m.fetch = fetch
            return [asyncio.run(m.fetch_all(c[1])), state['peak']]
        if c[0] == 'empty':
            return asyncio.run(m.fetch_all([]))
        async def bad(u):
            if u == 'b':
                raise ValueError('boom')
            await asyncio.sleep(0)
            return 'data:' + u
        m.fetch = bad
        try:
            asyncio.run(m.fetch_all(['a', 'b', 'c']))
            return {'kind': 'return'}
        except Exception as e:
            return thrown(e)
    if adapter == 'histogram':
        items = list(c[0])
        before = list(items)
        return [m.histogram(items), items == before]
    if adapter == 'sql-param':
        executed = []
        class Cursor:
            def execute(self, sql, params=None):
                executed.append([sql, params])
            def fetchall(self):
                return [('alice',)] if c[0] == 'alice' else []
        cursor = Cursor()
        class Conn:
            def cursor(self):
                return cursor
        value = m.find_user(Conn(), c[0])
        sql, params = executed[0]
        return [value, sql, params]
    if adapter == 'path-safe':
        base = tempfile.mkdtemp()
        with open(os.path.join(base, 'ok.txt'), 'w') as f:
            f.write('hello')
        if c[0] == 'ok':
            return m.read_upload(base, 'ok.txt')
        kinds = []
        for name in ['../secret', '../../etc/passwd', '/etc/passwd']:
            try:
                m.read_upload(base, name)
                kinds.append('return')
            except Exception as e:
                kinds.append(type(e).__name__)
        return kinds
    if adapter == 'lazy-property':
        if c[0] == 'threads':
            calls, lock = [0], threading.Lock()
            class Counter:
                @m.LazyProperty
                def value(self):
                    with lock:
                        calls[0] += 1
                    time.sleep(.02)
                    return {'data': [1, 2, 3]}
            obj, barrier, values = Counter(), threading.Barrier(20), []
            def worker():
                barrier.wait()
                values.append(obj.value)
            threads = [threading.Thread(target=worker) for _ in range(20)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            return [calls[0], len(values), all(v is values[0] for v in values)]
        if c[0] == 'instances':
            a1, a2 = m.DataSource(), m.DataSource()
            return [a1.expensive_data is a1.expensive_data, a2.expensive_data is a2.expensive_data,
                    a1.expensive_data == a2.expensive_data]
        x = m.DataSource()
        v = x.expensive_data
        del x.expensive_data
        return v == x.expensive_data
    if adapter == 'shape-sequence':
        if c[0] == 'runtime':
            return [m.total_area([m.Circle(1.0), m.Circle(2.0)]), m.total_area([])]
        try:
            ann = typing.get_type_hints(m.total_area).get('shapes')
        except Exception:
            ann = getattr(m.total_area, '__annotations__', {}).get('shapes')
        origin = typing.get_origin(ann)
        return (ann is not None and origin not in (list, set, dict, bytearray, frozenset)
                and (origin in (collections.abc.Sequence, collections.abc.Iterable, collections.abc.Collection)
                     or any(w in str(ann) for w in ('Sequence', 'Iterable', 'Collection'))))
    raise ValueError('unknown adapter ' + adapter)

spec = importlib.util.spec_from_file_location('candidate', 'candidate.py')
module = importlib.util.module_from_spec(spec)
with contextlib.redirect_stdout(sys.stderr):
    spec.loader.exec_module(module)
    out = [call(module, c) for c in request['calls']]
emit(json.dumps(out, ensure_ascii=False, allow_nan=False, separators=(',', ':')))
)PY";

struct Runtime {
  ContractKind kind;
  const char* program;  // looked up on the sandbox's PATH
  const char* package;  // Debian's package that installs it
  const char* candidate_file;
  // A run before the cases: the syntax check, or (TypeScript) the transpilation whose stdout is
  // the module the cases import.
  std::vector<std::string> check_argv;
  std::vector<std::string> run_argv;
  const char* driver_file;
  std::string_view driver;
  long memory_bytes;  // address space
  size_t output_bytes = kObservationBytes;  // zx-bench's maxOutputBytes (stdout and stderr)
};

// zx-bench's Java container command, with the JVM held to what its container gives it: the
// heap a quarter of the container's memory (96 MB of 384, 128 of 512), one processor.
std::string JavaCommand(bool run, bool advanced) {
  const std::string heap = advanced ? "128m" : "96m";
  const std::string jvm = "-Xmx" + heap + " -XX:+UseSerialGC -XX:ActiveProcessorCount=1";
  std::string javac_flags;
  for (const char* flag : {"-Xmx", "-XX:+UseSerialGC", "-XX:ActiveProcessorCount=1"}) {
    javac_flags += std::string(" -J") + flag + (std::string(flag) == "-Xmx" ? heap : "");
  }
  std::string command = "mkdir -p classes && javac" + javac_flags +
                        " -d classes Candidate.java Driver.java";
  if (run) command += " && java " + jvm + " -Dfile.encoding=UTF-8 -cp classes Driver";
  return command;
}

Runtime RuntimeFor(std::string_view language, ContractKind kind = ContractKind::kIsolatedJson,
                   const json* contract = nullptr) {
  const auto python = [&](std::string_view driver, const char* check) {
    return Runtime{kind,        "python3", "python3", "candidate.py",
                   {"python3", "-c", check},      {"python3", "-B", "driver.py"},
                   "driver.py", driver,    256L << 20};
  };
  // V8 reserves address space up front: the heap is capped by its own flag, near the
  // container's memory (128 MB; 160 MB for zx-bench's TypeScript container).
  const auto node = [&](std::vector<std::string> check, const char* heap, std::string_view driver) {
    return Runtime{kind,         "node", "nodejs", "candidate.mjs", std::move(check),
                   {"node", heap, "driver.mjs"},  "driver.mjs",    driver,
                   4L << 30};
  };
  switch (kind) {
    case ContractKind::kPythonJson:
      return python(kPythonJsonDriver, "import ast;ast.parse(open('candidate.py').read())");
    case ContractKind::kJavascriptJson:
      return node({"node", "--check", "candidate.mjs"}, "--max-old-space-size=128",
                  zx::kJavascriptJsonDriver);
    case ContractKind::kTypescriptJson: {
      Runtime r = node({"node", "transpile.cjs", std::string(zx::kTypescriptModule)},
                       "--max-old-space-size=160", zx::kTypescriptJsonDriver);
      r.candidate_file = "candidate.ts";
      return r;
    }
    case ContractKind::kSqlJson: {
      // No step before the cases: zx-bench has none (a query that fails fails its runs).
      Runtime r = python(zx::kSqlDriver, "");
      r.candidate_file = "query.sql";
      r.check_argv.clear();
      r.output_bytes = zx::kSqlOutputBytes;
      return r;
    }
    case ContractKind::kJavaJson: {
      const bool advanced = contract != nullptr && zx::JavaContractAdvanced(*contract);
      // The JVM reserves address space far beyond its heap: the heap flag holds it.
      return Runtime{kind,
                     "javac",
                     "default-jdk-headless",
                     "Candidate.java",
                     {"sh", "-c", JavaCommand(false, advanced)},
                     {"sh", "-c", JavaCommand(true, advanced)},
                     "Driver.java",
                     "",
                     8L << 30};
    }
    case ContractKind::kCsharpJson: {
      // zx-bench's build step: the log goes to stderr only when the build fails.
      const std::string build =
          "mcs -nologo -out:app.exe -r:System.Net.Http.dll Candidate.cs Driver.cs > build.log "
          "2>&1 || { cat build.log >&2; exit 1; }";
      return Runtime{kind,         "mcs",         "mono-mcs",
                     "Candidate.cs", {"sh", "-c", build}, {"sh", "-c", build + "; mono app.exe"},
                     "Driver.cs",  "",            4L << 30};
    }
    case ContractKind::kGoJson:
      // Built and run by zx::RunGoProgram: main.go is the whole program, the patch inside it;
      // check_argv only says there is a build step before the cases (RunSuite).
      return Runtime{kind, "go", "golang-go", "main.go", {"go"}, {}, "main.go", "", 8L << 30};
    case ContractKind::kIsolatedJson:
      break;
  }
  if (language == "python") {
    return python(kPythonDriver, "import ast; ast.parse(open('candidate.py').read())");
  }
  return node({"node", "--check", "candidate.mjs"}, "--max-old-space-size=128", kJavascriptDriver);
}

// Why `runtime` cannot run on this host, naming the package to install ("" when it can).
std::string MissingRuntime(const Runtime& runtime, const json* contract) {
  if (FindSandboxProgram(runtime.program).empty()) {
    return std::string(runtime.program) + " is not installed (install Debian's " +
           runtime.package + " package)";
  }
  if (runtime.kind == ContractKind::kGoJson) return zx::GoUnavailable(*contract);
  if (runtime.kind == ContractKind::kJavaJson && FindSandboxProgram("java").empty()) {
    return "java is not installed (install Debian's default-jdk-headless package)";
  }
  if (runtime.kind == ContractKind::kCsharpJson) {
    if (FindSandboxProgram("mono").empty()) {
      return "mono is not installed (install Debian's mono-runtime package)";
    }
    std::error_code ec;
    if (!std::filesystem::exists("/usr/lib/mono/4.5/System.Net.Http.dll", ec)) {
      return "Mono's System.Net.Http is not installed (install Debian's "
             "libmono-system-net-http4.0-cil package)";
    }
  }
  std::error_code ec;
  if (runtime.kind == ContractKind::kTypescriptJson &&
      !std::filesystem::exists(std::string(zx::kTypescriptModule) + "/lib/typescript.js", ec)) {
    return "the TypeScript compiler is not installed (install Debian's node-typescript package)";
  }
  return {};
}

// zx-bench's per-case container: its timeoutMs plus the 5000 ms its runner allows the docker
// CLI, 32 pids, 64 KiB of output (stdout and stderr together). timeoutMs: isolatedJson 3000,
// isolated-python-json-v1 5000, the JavaScript and TypeScript contracts 8000 (4000 for the
// JavaScript fib adapter), SQL 3000 (and 128 KiB of output).
SandboxLimits CaseLimits(const Runtime& runtime, const json& contract) {
  SandboxLimits limits;
  double timeout_seconds = 3;
  switch (runtime.kind) {
    case ContractKind::kIsolatedJson: break;
    case ContractKind::kPythonJson: timeout_seconds = 5; break;
    case ContractKind::kJavascriptJson:
      timeout_seconds = contract["adapter"] == "fib" ? 4 : 8;
      break;
    case ContractKind::kTypescriptJson: timeout_seconds = 8; break;
    case ContractKind::kSqlJson: timeout_seconds = 3; break;
    case ContractKind::kJavaJson:
      timeout_seconds = zx::JavaContractAdvanced(contract) ? 25 : 8;
      break;
    case ContractKind::kCsharpJson:
      timeout_seconds = zx::CsharpContractAdvanced(contract) ? 30 : 15;
      break;
    case ContractKind::kGoJson:  // zx::RunGoProgram sets its own
      break;
  }
  limits.wall_seconds = timeout_seconds + 5;
  limits.cpu_seconds = timeout_seconds + 5;
  limits.memory_bytes = runtime.memory_bytes;
  limits.max_processes = 32;
  if (runtime.kind == ContractKind::kJavaJson) {  // zx-bench's pidsLimit for Java and C#
    limits.max_processes = zx::JavaContractAdvanced(contract) ? 192 : 64;
  } else if (runtime.kind == ContractKind::kCsharpJson) {
    limits.max_processes = zx::CsharpContractAdvanced(contract) ? 160 : 96;
  }
  limits.max_output_bytes = runtime.output_bytes + 1;
  return limits;
}

// The TypeScript transpilation (evalrun's step; zx-bench's Node strips types as it loads): its
// stdout is the module, as large as the patch allows.
SandboxLimits TranspileLimits(const Runtime& runtime) {
  SandboxLimits limits;
  limits.wall_seconds = 30;
  limits.cpu_seconds = 30;
  limits.memory_bytes = runtime.memory_bytes;
  limits.max_processes = 32;
  limits.max_output_bytes = 16L << 20;
  return limits;
}

// A run that never started (plugins/sandbox.cpp SetupFailure): what the candidate cannot fake,
// since anything it prints comes from a process that ran for some time.
bool NeverStarted(const SandboxResult& r) {
  return r.exit_code == 127 && r.wall_seconds == 0 && r.stdout_text.empty() &&
         r.stderr_text.rfind("evalrun sandbox: ", 0) == 0;
}

bool OutputLimitExceeded(const SandboxResult& r, size_t limit = kObservationBytes) {
  return r.stdout_text.size() + r.stderr_text.size() > limit;
}

// The runner's `success`: exit code 0, not killed for time or output.
bool Succeeded(const SandboxResult& r, size_t limit = kObservationBytes) {
  return r.exit_code == 0 && !r.timed_out && !OutputLimitExceeded(r, limit);
}

// Nesting of the JSON text (outside strings), to refuse deep values before parsing them.
int NestingDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// A "-0" number token outside strings (JSON.parse gives -0, which isJson refuses; nlohmann reads
// the integer as 0).
bool HasIntegerMinusZero(std::string_view text) {
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '-' && i + 1 < text.size() && text[i + 1] == '0') {
      const char after = i + 2 < text.size() ? text[i + 2] : ' ';
      if (!(after >= '0' && after <= '9') && after != '.' && after != 'e' && after != 'E') {
        return true;
      }
    }
  }
  return false;
}

// compareJsonObservation(stdout, expected) on the runner's trimmed stdout: at most 64 KiB, a JSON
// array of plain values as long as `expected`, strictly equal to it. No PASS markers, no JSON
// fished out of prose, no coercion.
bool ObservationMatches(const std::string& raw_stdout, const json& expected) {
  const std::string decoded = ToWellFormedUtf8(raw_stdout);  // Buffer#toString('utf8')
  const std::string_view text = JsTrim(decoded);
  if (text.size() > kObservationBytes) return false;
  if (NestingDepth(text) > 33 || HasIntegerMinusZero(text)) return false;
  json value = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || !value.is_array() || !IsJsonValue(value)) return false;
  return value.size() == expected.size() && JsonDeepEqual(value, expected);
}

// The per-case rule of the kinds with host predicates: the trimmed stdout is a JSON array of
// plain values, one per call, and each expected[i] predicate holds for value[i]. The Node
// contracts also hold the array to validObservationJson's size bounds.
bool PredicatesHold(const std::string& raw_stdout, const json& expected, bool bounded) {
  const std::string decoded = ToWellFormedUtf8(raw_stdout);
  const std::string_view text = JsTrim(decoded);
  if (text.size() > kObservationBytes) return false;
  if (NestingDepth(text) > 33 || HasIntegerMinusZero(text)) return false;
  json value = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || !value.is_array() || !IsJsonValue(value)) return false;
  if (value.size() != expected.size() || (bounded && !zx::IsObservationJson(value))) return false;
  for (size_t i = 0; i < value.size(); ++i) {
    if (!PredicateHolds(expected[i], value[i])) return false;
  }
  return true;
}

struct CaseOutcome {
  std::string id;
  bool passed = false;
  SandboxResult result;
};

struct Suite {
  bool compiled = false;
  bool ran = false;  // the cases ran (the first step succeeded)
  SandboxResult syntax;
  std::vector<CaseOutcome> cases;
  std::optional<std::string> infrastructure_error;
  int passed = 0;
  int runs = 0;
  double wall_seconds = 0;  // all runs, sandbox start-up included
};

// The input a case run sees: the entry point and the arguments, never ids or expected values.
std::string CaseInput(const json& contract, const json& c) {
  if (contract.contains("adapter")) {  // the adapter kinds: JSON.stringify({adapter, calls})
    return CanonicalJson({{"adapter", contract["adapter"]}, {"calls", c["calls"]}},
                         KeyOrder::kJavaScript);
  }
  json request = {{"entrypoint", contract["entrypoint"]}, {"calls", c["calls"]}};
  if (contract["protocol"] == "isolated-json-v2") {
    request["protocol"] = contract["protocol"];
    request["keywordArgs"] = c["keywordArgs"];
  }
  return CanonicalJson(request, KeyOrder::kJavaScript);  // what JSON.stringify writes
}

// Java's and C#'s drivers are generated per case from its calls.
bool GeneratedDriver(const Runtime& runtime) {
  return runtime.kind == ContractKind::kJavaJson || runtime.kind == ContractKind::kCsharpJson;
}

std::string DriverSource(const Runtime& runtime, const json& contract, const json& calls) {
  return runtime.kind == ContractKind::kJavaJson ? zx::JavaDriverSource(contract, calls)
                                                 : zx::CsharpDriverSource(contract, calls);
}

// One case in its own sandbox: the candidate module, the driver and the case's input.
SandboxResult RunCase(const Sandbox& sandbox, const Runtime& runtime, const std::string& module,
                      const json& contract, const json& c) {
  if (runtime.kind == ContractKind::kGoJson) {
    return zx::RunGoProgram(sandbox, zx::GoProgramSource(module, contract, c["calls"]), contract,
                            /*build_only=*/false);
  }
  SandboxRun run;
  run.argv = runtime.run_argv;
  // The TypeScript cases import the transpiled module.
  run.files[runtime.kind == ContractKind::kTypescriptJson ? "candidate.mjs"
                                                         : runtime.candidate_file] = module;
  if (GeneratedDriver(runtime)) {  // the driver is the case: no input file
    run.files[runtime.driver_file] = DriverSource(runtime, contract, c["calls"]);
  } else {
    run.files[runtime.driver_file] = std::string(runtime.driver);
    run.files["input.json"] =
        runtime.kind == ContractKind::kSqlJson ? zx::SqlCaseInput(c) : CaseInput(contract, c);
  }
  run.limits = CaseLimits(runtime, contract);
  return sandbox.Run(run);
}

bool CasePassed(const Runtime& runtime, const SandboxResult& result, const json& c) {
  if (!Succeeded(result, runtime.output_bytes)) return false;
  if (runtime.kind == ContractKind::kSqlJson) return zx::SqlCasePassed(result.stdout_text, c);
  if (runtime.kind == ContractKind::kIsolatedJson) {
    return ObservationMatches(result.stdout_text, c["expected"]);
  }
  return PredicatesHold(result.stdout_text, c["expected"],
                        runtime.kind != ContractKind::kPythonJson);
}

// runIsolatedJsonSuite and its kin: the syntax check (or the TypeScript transpilation), then
// every case in its own run, all failing without running when that first step fails. The
// TypeScript and SQL suites (runIsolatedTypescriptJsonSuite, runIsolatedSqlJsonSuite) count as
// compiled only when every case's run succeeds: zx-bench's Node strips the types as it loads
// the module, and SQL has no step before the cases.
Suite RunSuite(const Sandbox& sandbox, const Runtime& runtime, const std::string& candidate,
               const json& contract) {
  const bool typescript = runtime.kind == ContractKind::kTypescriptJson;
  const bool compiled_by_runs = typescript || runtime.kind == ContractKind::kSqlJson;
  Suite suite;
  suite.compiled = true;
  if (!runtime.check_argv.empty()) {
    SandboxRun check;
    check.argv = runtime.check_argv;
    check.files[runtime.candidate_file] = candidate;
    if (typescript) {
      check.files["transpile.cjs"] = std::string(zx::kTypescriptTranspiler);
      check.files["exports.txt"] = zx::TypescriptJsonExports(contract);
    } else if (GeneratedDriver(runtime)) {  // compiled with the first case's driver
      check.files[runtime.driver_file] =
          DriverSource(runtime, contract, contract["cases"][0]["calls"]);
    }
    check.limits = typescript ? TranspileLimits(runtime) : CaseLimits(runtime, contract);
    suite.syntax = runtime.kind == ContractKind::kGoJson  // built with the first case's calls
                       ? zx::RunGoProgram(sandbox,
                                          zx::GoProgramSource(candidate, contract,
                                                              contract["cases"][0]["calls"]),
                                          contract, /*build_only=*/true)
                       : sandbox.Run(check);
    ++suite.runs;
    suite.wall_seconds += suite.syntax.wall_seconds;
    if (NeverStarted(suite.syntax)) {
      suite.infrastructure_error = suite.syntax.stderr_text;
      return suite;
    }
    suite.compiled = typescript ? suite.syntax.exit_code == 0 && !suite.syntax.timed_out
                                : Succeeded(suite.syntax);
  }
  const std::string& module = typescript ? suite.syntax.stdout_text : candidate;
  const bool ran = suite.compiled;
  suite.ran = ran;
  bool first_failure = true;
  for (const auto& c : contract["cases"]) {
    CaseOutcome outcome;
    outcome.id = c["id"].get<std::string>();
    if (!ran) {
      outcome.result = suite.syntax;
    } else {
      outcome.result = RunCase(sandbox, runtime, module, contract, c);
      ++suite.runs;
      suite.wall_seconds += outcome.result.wall_seconds;
      if (NeverStarted(outcome.result)) {
        suite.infrastructure_error = outcome.result.stderr_text;
        return suite;
      }
      if (compiled_by_runs && !Succeeded(outcome.result, runtime.output_bytes)) {
        suite.compiled = false;
        if (first_failure) suite.syntax = outcome.result;  // zx-bench's compileError
        first_failure = false;
      }
    }
    outcome.passed = CasePassed(runtime, outcome.result, c);
    suite.passed += outcome.passed ? 1 : 0;
    suite.cases.push_back(std::move(outcome));
  }
  return suite;
}

// ---- "no_bug" trap entries ----------------------------------------------------------------------

// One alternative of NEGATIVE_NO_BUG_RE / POSITIVE_FIX_RE: a sequence of slots, each a set of
// literals (optional or not) or \s*, optionally behind (?<![不没无未非别]).
struct Slot {
  std::vector<std::string_view> options;  // empty: \s*
  bool optional = false;
};
struct Alternative {
  bool not_after_negation = false;
  std::vector<Slot> slots;
};

Slot Any(std::vector<std::string_view> options, bool optional = false) {
  return {std::move(options), optional};
}
const Slot kSpaces{};

// "no[_ ]?bug" style alternatives: words joined by a space or underscore (optional for `?`).
Alternative Words(std::vector<std::string_view> words, bool joiner_optional = false) {
  Alternative a;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) a.slots.push_back(Any({" ", "_"}, joiner_optional));
    a.slots.push_back(Any({words[i]}));
  }
  return a;
}

bool MatchSlots(std::string_view s, size_t i, const std::vector<Slot>& slots, size_t k) {
  if (k == slots.size()) return true;
  const Slot& slot = slots[k];
  // \s* takes every space: no literal that can follow it begins with one.
  if (slot.options.empty()) return MatchSlots(s, SkipJsSpaces(s, i), slots, k + 1);
  for (const auto option : slot.options) {
    if (s.substr(i, option.size()) == option && MatchSlots(s, i + option.size(), slots, k + 1)) {
      return true;
    }
  }
  return slot.optional && MatchSlots(s, i, slots, k + 1);
}

bool PrecededByNegation(std::string_view s, size_t i) {
  for (const std::string_view negation : {"不", "没", "无", "未", "非", "别"}) {
    if (i >= negation.size() && s.substr(i - negation.size(), negation.size()) == negation) {
      return true;
    }
  }
  return false;
}

// RegExp#test for an alternation of `alternatives` (on text already lowercased, where the i flag
// changes nothing). Linear in the text: every alternative begins with a literal.
bool TestAlternatives(std::string_view s, const std::vector<Alternative>& alternatives) {
  std::array<bool, 256> first{};
  for (const auto& a : alternatives) {
    for (const auto option : a.slots[0].options) {
      first[static_cast<unsigned char>(option[0])] = true;
    }
  }
  for (size_t i = 0; i < s.size(); ++i) {
    if (!first[static_cast<unsigned char>(s[i])]) continue;
    for (const auto& a : alternatives) {
      if (a.not_after_negation && PrecededByNegation(s, i)) continue;
      if (MatchSlots(s, i, a.slots, 0)) return true;
    }
  }
  return false;
}

const std::vector<Alternative>& NegativeNoBug() {  // NEGATIVE_NO_BUG_RE
  static const std::vector<Alternative> alternatives = [] {
    const Slot qualifier = Any({"任何", "功能", "功能性", "逻辑", "明显", "实质"}, true);
    std::vector<Alternative> a = {
        {false,
         {Any({"没有", "无", "不存在", "不是", "并非", "不算"}), qualifier, kSpaces,
          Any({"bug", "错误", "问题", "毛病", "缺陷"})}},
        {false,
         {Any({"无需", "不需要", "不用", "不必要", "不必"}), kSpaces,
          Any({"修复", "修改", "改动", "更正"})}},
        {false,
         {Any({"代码", "逻辑", "实现", "写法", "功能", "结果", "这段代码"}),
          Any({"本身", "完全", "基本"}, true), kSpaces, Any({"是"}, true), kSpaces,
          Any({"正确", "没错", "无错", "没问题", "没有问题", "没有错误", "是对的"})}},
        Words({"no", "bug"}, true),
        Words({"no", "bugs"}, true),
    };
    for (auto words : std::vector<std::vector<std::string_view>>{
             {"not", "a", "bug"}, {"is", "correct"}, {"looks", "correct"},
             {"nothing", "to", "fix"}, {"no", "fix", "needed"}, {"correct", "as", "is"},
             {"already", "correct"}, {"no", "issue"}, {"no", "problem"}, {"no", "error"},
             {"nothing", "wrong"}, {"works", "correctly"}, {"functions", "correctly"}}) {
      a.push_back(Words(std::move(words)));
    }
    return a;
  }();
  return alternatives;
}

const std::vector<Alternative>& PositiveFix() {  // POSITIVE_FIX_RE
  static const std::vector<Alternative> alternatives = [] {
    std::vector<Alternative> a = {
        {true,
         {Any({"存在", "出现", "有个", "这里有", "代码有"}),
          Any({"任何", "功能", "功能性", "逻辑", "明显", "实质"}, true), kSpaces,
          Any({"bug", "错误", "问题"})}},
        {true, {Any({"bug", "错误", "问题"}), kSpaces, Any({"在于", "是", "出在"})}},
        {true,
         {Any({"需要", "应该", "应当"}), kSpaces, Any({"修复", "修改", "改成", "改为", "更正"})}},
        {true, {Any({"修复"}), kSpaces, Any({"成"})}},
        {true, {Any({"改成"})}},
        {true, {Any({"改为"})}},
    };
    for (auto words : std::vector<std::vector<std::string_view>>{
             {"the", "bug", "is"}, {"there", "is", "a", "bug"}, {"has", "a", "bug"},
             {"needs", "fixing"}, {"needs", "to", "be", "fixed"}, {"should", "be", "fixed"},
             {"should", "fix"}, {"should", "be", "changed"}, {"change", "to"},
             {"must", "change"}}) {
      a.push_back(Words(std::move(words)));
    }
    return a;
  }();
  return alternatives;
}

constexpr std::string_view kNoBugSignals[] = {
    "没有 bug", "没有bug", "无 bug", "无bug", "不存在 bug", "代码正确", "代码是正确的",
    "无需修复", "不需要修复", "不用修复", "没有错误", "没有问题", "正确的代码",
    "no bug", "no bugs", "is correct", "looks correct", "nothing to fix", "no fix needed",
    "代码本身正确", "这段代码正确", "是正确的", "代码没问题", "代码没有问题", "代码没毛病",
    "逻辑正确", "实现正确", "写法正确", "功能正确", "结果正确", "没错", "无错", "无问题",
    "无需修改", "不需要修改", "不用改", "无需改动", "无需更正", "不是 bug", "并非 bug",
    "不算 bug", "correct as is", "already correct", "is already correct", "nothing wrong",
    "no issue", "no problem", "no error", "works correctly", "functions correctly"};

constexpr std::string_view kFixSignals[] = {
    "修复", "修改为", "改为", "应该改成", "存在 bug", "有 bug", "bug 在于", "问题是",
    "fix", "fixed", "the bug is", "change to", "should be",
    "需要修复", "应该修复", "要修复", "需要修改", "应该修改", "需要改成", "需要改为", "修复成",
    "存在一个 bug", "有个 bug", "出现 bug", "代码有 bug", "这里有 bug", "错误在于", "问题在于",
    "问题出在", "there is a bug", "has a bug", "needs fixing", "needs to be fixed",
    "should be fixed", "should fix", "should be changed", "must change"};

// String.prototype.toLowerCase as far as the patterns above can tell: ASCII letters, and the two
// non-ASCII characters whose lowercase contains ASCII (U+212A KELVIN SIGN, U+0130 İ).
std::string LowerForPatterns(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.substr(i, 3) == "\xE2\x84\xAA") {
      out += 'k';
      i += 2;
    } else if (s.substr(i, 2) == "\xC4\xB0") {
      out += "i\xCC\x87";
      ++i;
    } else {
      out += AsciiLower(s[i]);
    }
  }
  return out;
}

// The diagnostic evaluator's no_bug branch, which the official scorer delegates to:
// round(.7 verdict + .2 explanation + .1 scope).
Grade NoBugGrade(const json& spec, const std::string& output) {
  const std::string lower = LowerForPatterns(output);
  const bool says_no_bug = TestAlternatives(lower, NegativeNoBug());
  const bool says_fix = TestAlternatives(lower, PositiveFix());
  int verdict = 0;
  std::string how;
  if (says_no_bug != says_fix) {
    verdict = says_no_bug ? 100 : 0;
    how = says_no_bug ? "says the code is correct" : "proposes a fix for correct code";
  } else if (says_no_bug) {
    verdict = 50;
    how = "mixed signals (no bug and a fix)";
  } else {
    const auto has = [&](std::string_view signal) {
      return lower.find(signal) != std::string::npos;
    };
    const bool no_bug = std::any_of(std::begin(kNoBugSignals), std::end(kNoBugSignals), has);
    const bool fix = std::any_of(std::begin(kFixSignals), std::end(kFixSignals), has);
    verdict = no_bug && !fix ? 100 : no_bug && fix ? 50 : 0;
    how = verdict == 100 ? "says the code is correct (weak signal)"
          : verdict == 50 ? "mixed signals (weak)"
                          : "no verdict that the code is correct";
  }
  // (scenario.requirements || []) as string[]: an object has no length, so only a legacy
  // keyword list counts hits; otherwise 70 for a reply over 100 UTF-16 units, else 40.
  int explanation = 0;
  const json& requirements = Member(spec, "requirements");
  if (requirements.is_array() && !requirements.empty()) {
    size_t hit = 0;
    for (const auto& keyword : requirements) {
      if (keyword.is_string() && output.find(keyword.get<std::string>()) != std::string::npos) {
        ++hit;
      }
    }
    explanation =
        JsRound(static_cast<double>(hit) / static_cast<double>(requirements.size()) * 100);
  } else {
    explanation = Utf16Length(output) > 100 ? 70 : 40;
  }
  const json& source = Member(spec, "sourceCode");
  const std::vector<std::string_view> blocks = ExtractCodeBlocks(output);
  const int scope = ScopeDiscipline(source.is_string() ? source.get<std::string>() : "",
                                    blocks.empty() ? std::string_view() : blocks.back());
  const int total = JsRound(verdict * 0.7 + explanation * 0.2 + scope * 0.1);
  json evidence = {{"zx_axes",
                    {{"verdict_correct", verdict},
                     {"explanation", explanation},
                     {"scope_discipline", scope}}},
                   {"expected_verdict", "no_bug"}};
  return zx::ZxGrade(total, std::move(evidence), "no-bug trap: " + how, kZxEvaluator);
}

// ---- The grader ---------------------------------------------------------------------------------

json RunEvidence(const SandboxResult& r, size_t output_limit = kObservationBytes) {
  return {{"exit_code", r.exit_code},
          {"timed_out", r.timed_out},
          {"out_of_memory", r.out_of_memory},
          {"output_limit_exceeded", OutputLimitExceeded(r, output_limit)},
          {"wall_seconds", r.wall_seconds},
          {"stdout_head", EvidenceText(r.stdout_text, 200)},
          {"stderr_tail", OutputTail(r.stderr_text, kEvidenceBytes)}};
}

const Sandbox* UnsafeFallback() {  // --unsafe-no-sandbox with no sandbox given
  static const std::unique_ptr<Sandbox> unsafe = MakeUnsafeSandbox();
  return unsafe.get();
}

class ZxCodeRepairGrader final : public Grader {
 public:
  std::string_view name() const override { return kName; }
  std::string_view version() const override { return kVersion; }
  std::string_view description() const override {
    return "zx-bench code_repair: runs the repaired function against the entry's isolated JSON "
           "cases in the sandbox, scored as zx-bench scores it";
  }

  void CheckSpec(const json& spec, const SourceLocation& where) const override {
    const std::string prefix = where.ToString() + ": " + std::string(kName) + ": ";
    if (!spec.is_object()) {
      throw Error(prefix + "the spec must be the zx-bench entry (a JSON object)");
    }
    const auto& requirements = Member(spec, "requirements");
    if (!requirements.is_null() && !requirements.is_object() && !requirements.is_array()) {
      throw Error(prefix + "'requirements' must be an object (requirements.isolatedJson holds "
                           "the execution contract)");
    }
    for (const char* key : {"language", "functionName", "expectedVerdict"}) {
      const auto& value = Member(spec, key);
      if (!value.is_null() && !value.is_string()) {
        throw Error(prefix + "'" + key + "' must be a string, not " + JsonTypeName(value));
      }
    }
    const auto& source = Member(spec, "sourceCode");
    if (!source.is_null() && !source.is_string()) {
      throw Error(prefix + "'sourceCode' must be a string (the code to repair), not " +
                  JsonTypeName(source));
    }
    const auto& tests = Member(spec, "hiddenTests");
    if (!tests.is_null() && !tests.is_array()) {
      throw Error(prefix + "'hiddenTests' must be a list of {id, ...} (one per contract case), "
                           "not " + JsonTypeName(tests));
    }
  }

  // What Evaluate would skip before reading the answer: an entry zx-bench leaves unmeasured, a
  // contract kind or protocol evalrun does not run, a runtime this host lacks. A `no_bug` trap
  // is scored from the text alone and always runs.
  std::string Unrunnable(const json& spec) const override {
    if (!spec.is_object() || Member(spec, "expectedVerdict") == "no_bug") return {};
    const std::string language = ScorerLanguage(spec);
    const Availability availability = CheckAvailability(spec, language);
    if (!availability.unmeasured.empty()) {
      return "zx-bench leaves this entry unmeasured: " + availability.unmeasured;
    }
    if (availability.contract == nullptr) {
      return "evalrun does not run zx-bench's " + availability.other_key + " contracts";
    }
    if (std::string why = UnrunnableContract(*availability.contract, language); !why.empty()) {
      return why;
    }
    return MissingRuntime(RuntimeFor(language, availability.kind, availability.contract),
                          availability.contract);
  }

  Grade Run(const json& spec, const Answer& answer, const GradeContext& context) const override {
    try {
      return Evaluate(spec, answer, context);
    } catch (const std::exception& e) {  // not reachable by any output; kept so Run never throws
      return zx::StatusGrade(GradeStatus::kEnvError, std::string("code_repair grader failed: ") + e.what());
    }
  }

 private:
  static Grade Evaluate(const json& spec, const Answer& answer, const GradeContext& context) {
    const std::string output = ToWellFormedUtf8(answer.text);
    if (JsTrim(output).empty()) return zx::StatusGrade(GradeStatus::kNoAnswer, "empty output");
    if (Member(spec, "expectedVerdict") == "no_bug") return NoBugGrade(spec, output);

    const std::string language = ScorerLanguage(spec);
    const Availability availability = CheckAvailability(spec, language);
    if (!availability.unmeasured.empty()) {
      return zx::StatusGrade(GradeStatus::kSkipped, "zx-bench leaves this entry unmeasured: " +
                                               availability.unmeasured);
    }

    if (availability.contract == nullptr) {
      return zx::StatusGrade(GradeStatus::kSkipped, "evalrun does not run zx-bench's " +
                                               availability.other_key + " contracts");
    }
    const json& function = Member(spec, "functionName");
    const std::string function_name = function.is_string() ? function.get<std::string>() : "";
    const std::vector<std::string_view> blocks = ExtractCodeBlocks(output);
    std::string patch;
    if (!blocks.empty()) {
      patch = std::string(BestBlock(blocks, function_name));
    } else if (auto found = HeuristicExtractCode(output, AsciiLowerString(language),
                                                 function_name)) {
      patch = std::move(*found);
    } else {
      return zx::ZxGrade(0, {{"code_blocks", 0}}, "no code found in the output", kZxEvaluator);
    }

    const json& contract = *availability.contract;
    if (std::string why = UnrunnableContract(contract, language); !why.empty()) {
      return zx::StatusGrade(GradeStatus::kSkipped, why);
    }
    const std::string protocol = contract["protocol"].get<std::string>();

    const Sandbox* sandbox = context.sandbox;
    if (sandbox == nullptr && context.unsafe_no_sandbox) sandbox = UnsafeFallback();
    if (sandbox == nullptr) {
      return zx::StatusGrade(GradeStatus::kSkipped,
                    "no sandbox to run code in (install bubblewrap, or accept the risk with "
                    "--unsafe-no-sandbox)");
    }
    if (auto why = sandbox->Unavailable()) return zx::StatusGrade(GradeStatus::kSkipped, *why);
    const Runtime runtime = RuntimeFor(language, availability.kind, &contract);
    if (std::string why = MissingRuntime(runtime, &contract); !why.empty()) {
      return zx::StatusGrade(GradeStatus::kSkipped, why);
    }

    std::string candidate = patch;
    if (runtime.kind == ContractKind::kJavascriptJson) {
      candidate = zx::JavascriptJsonCandidate(patch, contract);
    } else if (runtime.kind == ContractKind::kJavaJson) {
      candidate = zx::JavaCandidateSource(patch, contract);
    } else if (runtime.kind == ContractKind::kCsharpJson) {
      candidate = zx::CsharpCandidateSource(patch, contract);
    } else if (language == "javascript") {
      candidate += "\nexport { " + contract["entrypoint"].get<std::string>() + " as zxEntry };\n";
    }
    const Suite suite = RunSuite(*sandbox, runtime, candidate, contract);

    json evidence = {{"language", language},
                     {"protocol", protocol},
                     {"sandbox", sandbox->Describe()},
                     {"sandbox_runs", suite.runs},
                     {"sandbox_wall_seconds", suite.wall_seconds},
                     {"code_blocks", blocks.size()},
                     {"extraction", blocks.empty() ? "heuristic" : "markdown"},
                     {"patch", EvidenceText(patch, kEvidenceBytes)},
                     {"truncated", answer.truncated}};
    if (suite.infrastructure_error) {
      return zx::StatusGrade(GradeStatus::kEnvError,
                    "the sandbox failed: " + OutputTail(*suite.infrastructure_error, 300),
                    std::move(evidence));
    }
    const int total_cases = static_cast<int>(contract["cases"].size());
    const int patch_extraction = blocks.empty() ? 40 : 100;
    const int compilation = suite.compiled ? 100 : 0;
    const int test_pass = JsRound(100.0 * suite.passed / total_cases);
    const json& source_value = Member(spec, "sourceCode");
    const std::string source = source_value.is_string() ? source_value.get<std::string>() : "";
    const int patch_quality = PatchQuality(source, patch);
    const int scope = ScopeDiscipline(source, patch);
    const int total = JsRound(patch_extraction * .1 + compilation * .2 + test_pass * .4 +
                              patch_quality * .2 + scope * .1);

    evidence["zx_axes"] = {{"patch_extraction", patch_extraction},
                           {"compilation", compilation},
                           {"test_pass", test_pass},
                           {"patch_quality", patch_quality},
                           {"scope_discipline", scope}};
    evidence["compiled"] = suite.compiled;
    if (runtime.kind == ContractKind::kGoJson) {  // zx-bench's image, and what stood in for it
      evidence["image"] = "zxbench/go:1.21-gcc";
      evidence["host_runtime"] = zx::GoVersion() + (zx::GoContractAdvanced(contract) ? " -race" : "");
    }
    if (!suite.compiled) {
      evidence["syntax_check"] = RunEvidence(suite.syntax, runtime.output_bytes);
    }
    evidence["tests_passed"] = suite.passed;
    evidence["tests_total"] = total_cases;
    json cases = json::array();
    int timed_out = 0;
    for (const auto& c : suite.cases) {
      json item = {{"id", c.id}, {"passed", c.passed}};
      if (suite.ran) item.update(RunEvidence(c.result, runtime.output_bytes));
      timed_out += suite.ran && c.result.timed_out ? 1 : 0;
      cases.push_back(std::move(item));
    }
    evidence["cases"] = std::move(cases);

    std::string reason = std::to_string(suite.passed) + "/" + std::to_string(total_cases) +
                         " hidden cases pass";
    if (!suite.compiled) {
      reason += runtime.kind == ContractKind::kTypescriptJson ? ", the module does not load"
                : runtime.kind == ContractKind::kSqlJson      ? ", a run of the query failed"
                                                              : ", the patch does not parse";
    }
    if (timed_out > 0) reason += ", " + std::to_string(timed_out) + " ran out of time";
    if (blocks.empty()) reason += ", code found without a fence";
    reason += ", patch quality " + std::to_string(patch_quality) + ", scope " +
              std::to_string(scope);
    return zx::ZxGrade(total, std::move(evidence), std::move(reason), kZxEvaluator);
  }

  static std::string AsciiLowerString(std::string s) {
    for (char& c : s) c = AsciiLower(c);
    return s;
  }
};

}  // namespace

std::unique_ptr<Grader> MakeZxCodeRepairGrader() { return std::make_unique<ZxCodeRepairGrader>(); }

}  // namespace evalrun
