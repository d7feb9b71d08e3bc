// zx-bench's cli_command reading of a reply (graders/zxbench/cli_text.h). Each JavaScript regular
// expression of cliCommand.ts is walked by hand in the regex's own order (named at each function);
// positions are byte offsets, which order matches as JavaScript's UTF-16 indices do.
#include "graders/zxbench/cli_text.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "core/js_value.h"
#include "graders/framework/answer.h"
#include "graders/zxbench/common.h"

namespace evalrun::zx {
namespace {

using js::IsJsSpace;
using js::JsRound;
using js::JsTrim;
using nlohmann::json;

std::string Lower(std::string_view s) {  // String.prototype.toLowerCase, ASCII letters
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

bool WordEnds(std::string_view s, size_t i) {
  return i >= s.size() || !IsWordChar(s[i]);
}

// \s+ at `i`: advances past JavaScript white space; false when there is none.
bool Spaces1(std::string_view s, size_t& i) {
  const size_t start = i;
  i = SkipJsSpaces(s, i);
  return i > start;
}

struct Fence {
  size_t start = 0, end = 0;
  std::string_view body;
};

// Every match of /```(?:TAGS)?\s*\n([\s\S]*?)```/gi: at each position the tags in order, then
// none; white space holding a line feed (\s* backtracks to its last \n); the shortest body up to
// the next ```.
std::vector<Fence> Fences(std::string_view out, std::initializer_list<std::string_view> tags) {
  std::vector<Fence> found;
  size_t i = 0;
  while (i + 3 <= out.size()) {
    if (out.compare(i, 3, "```") != 0) {
      ++i;
      continue;
    }
    std::optional<Fence> match;
    std::vector<std::string_view> order(tags);
    order.emplace_back();
    for (std::string_view tag : order) {
      size_t p = i + 3;
      if (!StartsWithNoCase(out, p, tag)) continue;
      p += tag.size();
      size_t newline = std::string_view::npos;
      while (p < out.size()) {
        size_t next = p;
        const char32_t c = js::NextCodePoint(out, next);
        if (!IsJsSpace(c)) break;
        if (c == '\n') newline = next;
        p = next;
      }
      if (newline == std::string_view::npos) continue;
      const size_t close = out.find("```", newline);
      if (close == std::string_view::npos) continue;
      match = Fence{i, close + 3, out.substr(newline, close - newline)};
      break;
    }
    if (!match) {
      ++i;
      continue;
    }
    i = match->end;
    found.push_back(*match);
  }
  return found;
}

// SHELL_COMMAND: /^(?:command\s+|env\s+)?(?:awk|sed|...|ps)\b/i.
bool ShellCommand(std::string_view line) {
  static constexpr std::string_view kWords[] = {
      "awk",     "sed",    "grep", "sort",   "uniq",  "cat", "head",     "tail",     "wc",
      "find",    "ls",     "echo", "printf", "cut",   "tr",  "jq",       "curl",     "wget",
      "python3", "python", "node", "bash",   "sh",    "tee", "xargs",    "diff",     "comm",
      "mkdir",   "cp",     "mv",   "rm",     "touch", "git", "npm",      "pnpm",     "tar",
      "date",    "stat",   "du",   "dd",     "od",    "xxd", "realpath", "readlink", "chmod",
      "chown",   "test",   "cd",   "perl",   "ps"};
  const auto word_at = [&](size_t p) {
    for (std::string_view w : kWords) {
      if (StartsWithNoCase(line, p, w) && WordEnds(line, p + w.size())) return true;
    }
    if (StartsWithNoCase(line, p, "sha")) {  // sha\d*sum
      size_t q = p + 3;
      while (q < line.size() && line[q] >= '0' && line[q] <= '9') ++q;
      if (StartsWithNoCase(line, q, "sum") && WordEnds(line, q + 3)) return true;
    }
    return false;
  };
  for (std::string_view prefix : {"command", "env"}) {
    if (!StartsWithNoCase(line, 0, prefix)) continue;
    size_t p = prefix.size();
    if (Spaces1(line, p) && word_at(p)) return true;
  }
  return word_at(0);
}

bool IdentifierAt(std::string_view s, size_t& i) {  // [A-Za-z_][A-Za-z0-9_]*
  if (i >= s.size() || !(IsWordChar(s[i]) && !(s[i] >= '0' && s[i] <= '9'))) return false;
  while (i < s.size() && IsWordChar(s[i])) ++i;
  return true;
}

bool LooksExecutableLine(std::string_view line) {
  if (ShellCommand(line)) return true;
  if (!line.empty() && line[0] == '(') {  // /^\(\s*(?:cd|find|tar|sort)\b/i
    const size_t p = SkipJsSpaces(line, 1);
    for (std::string_view w : {"cd", "find", "tar", "sort"}) {
      if (StartsWithNoCase(line, p, w) && WordEnds(line, p + w.size())) return true;
    }
  }
  size_t p = 0;
  if (IdentifierAt(line, p) && p < line.size() && line[p] == '=') {
    // /^[A-Za-z_][A-Za-z0-9_]*=\$\(/ and /^[A-Za-z_][A-Za-z0-9_]*=[^\s;]+(?:\s|;|$)/
    size_t next = p + 1;
    if (next < line.size() && line[next] != ';' && !IsJsSpace(js::NextCodePoint(line, next))) {
      return true;
    }
  }
  if (line.substr(0, 3) == "for") {  // /^for\s+[A-Za-z_][A-Za-z0-9_]*\s+in\b/
    size_t q = 3;
    if (Spaces1(line, q) && IdentifierAt(line, q) && Spaces1(line, q) &&
        line.substr(q, 2) == "in" && WordEnds(line, q + 2)) {
      return true;
    }
  }
  if (line.substr(0, 5) == "while") {  // /^while\s+(?:IFS=|read\b|\[|test\b)/
    size_t q = 5;
    if (Spaces1(line, q) &&
        (line.substr(q, 4) == "IFS=" || (line.substr(q, 4) == "read" && WordEnds(line, q + 4)) ||
         line.substr(q, 1) == "[" || (line.substr(q, 4) == "test" && WordEnds(line, q + 4)))) {
      return true;
    }
  }
  if (!line.empty() && line[0] == '{') {  // /^\{\s*(?:echo|printf|awk|grep|sort|cat|find|sed|jq)\b/
    const size_t q = SkipJsSpaces(line, 1);
    for (std::string_view w :
         {"echo", "printf", "awk", "grep", "sort", "cat", "find", "sed", "jq"}) {
      if (line.substr(q, w.size()) == w && WordEnds(line, q + w.size())) return true;
    }
  }
  return false;
}

bool CommandLine(std::string_view line) {
  return !line.empty() && line[0] != '#' && LooksExecutableLine(line);
}

std::string SelectCommandBlock(std::string_view text) {
  const std::string normalized(JsTrim(NormalizeNewlines(text)));
  if (normalized.empty()) return "";
  for (std::string_view line : JsSplit(normalized, '\n')) {
    if (CommandLine(JsTrim(line))) return normalized;
  }
  return "";
}

// The label answer-first runs ask for: /^(?:ANSWER|答案|最终答案)\s*[:：]\s*/i.
std::string_view StripAnswerLabel(std::string_view line) {
  for (std::string_view label : {"answer", "答案", "最终答案"}) {
    if (!StartsWithNoCase(line, 0, label)) continue;
    size_t p = SkipJsSpaces(line, label.size());
    if (line.substr(p, 1) == ":") {
      p += 1;
    } else if (line.substr(p, 3) == "：") {
      p += 3;
    } else {
      continue;
    }
    return line.substr(SkipJsSpaces(line, p));
  }
  return line;
}

std::string SelectCommandLine(std::string_view text) {
  const std::string normalized = NormalizeNewlines(text);
  std::string_view last;
  for (std::string_view line : JsSplit(normalized, '\n')) {
    const std::string_view candidate = JsTrim(StripAnswerLabel(JsTrim(line)));
    if (CommandLine(candidate)) last = candidate;
  }
  return std::string(last);
}

// canonicalizeCliFlags: /-([a-zA-Z]{2,})/g -> "-a -b ...".
std::string CanonicalFlags(std::string_view text) {
  std::string out;
  size_t i = 0;
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  while (i < text.size()) {
    size_t j = i + 1;
    while (text[i] == '-' && j < text.size() && letter(text[j])) ++j;
    if (text[i] == '-' && j - i - 1 >= 2) {
      for (size_t k = i + 1; k < j; ++k) {
        if (k > i + 1) out += ' ';
        out += '-';
        out += text[k];
      }
      i = j;
    } else {
      out += text[i++];
    }
  }
  return out;
}

// [\s|;&]: a JavaScript space (of any width in UTF-8) or one of | ; &.
bool SeparatorAt(std::string_view s, size_t i) {
  if (s[i] == '|' || s[i] == ';' || s[i] == '&') return true;
  size_t next = i;
  return IsJsSpace(js::NextCodePoint(s, next));
}

bool SeparatorBefore(std::string_view s, size_t at) {
  for (size_t width = 1; width <= 3 && width <= at; ++width) {
    const size_t start = at - width;
    const auto lead = static_cast<unsigned char>(s[start]);
    if ((lead & 0xC0) == 0x80) continue;  // a continuation byte: its lead is further back
    size_t next = start;
    const char32_t c = js::NextCodePoint(s, next);
    return next == at && (IsJsSpace(c) || c == '|' || c == ';' || c == '&');
  }
  return false;
}

// commandContainsToken: (^|[\s|;&])FIRST(?=$|[\s|;&]), case-insensitive.
bool ContainsToken(std::string_view command, std::string_view token) {
  const std::string_view trimmed = JsTrim(token);
  size_t end = 0;
  while (end < trimmed.size()) {
    size_t next = end;
    if (IsJsSpace(js::NextCodePoint(trimmed, next))) break;
    end = next;
  }
  const std::string first = Lower(trimmed.substr(0, end));
  if (first.empty()) return false;
  const std::string lower = Lower(command);
  for (size_t at = lower.find(first); at != std::string::npos; at = lower.find(first, at + 1)) {
    const size_t after = at + first.size();
    if ((at == 0 || SeparatorBefore(lower, at)) &&
        (after == lower.size() || SeparatorAt(lower, after))) {
      return true;
    }
  }
  return false;
}

bool IsExecutableRequirement(std::string_view token) {
  return ShellCommand(JsTrim(token));
}

std::vector<std::string> Strings(const json& list) {
  std::vector<std::string> out;
  if (!list.is_array()) return out;
  for (const json& v : list) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace

std::string ExtractSubmittedScript(std::string_view reply) {
  const std::vector<Fence> fences = Fences(reply, {"bash", "sh", "shell"});
  return std::string(JsTrim(fences.empty() ? reply : fences.back().body));
}

std::string ExtractPrimaryCommand(std::string_view reply, bool prefer_first) {
  std::vector<std::pair<size_t, std::string>> fenced, inline_candidates;
  const std::vector<Fence> fences = Fences(reply, {"bash", "sh", "shell", "zsh", "fish"});
  const auto inside = [&](size_t index) {
    return std::any_of(fences.begin(), fences.end(),
                       [&](const Fence& f) { return index >= f.start && index < f.end; });
  };
  for (const Fence& f : fences) {
    if (std::string command = SelectCommandBlock(f.body); !command.empty()) {
      fenced.emplace_back(f.start, std::move(command));
    }
  }
  // /`([^`\r\n]+)`/g
  for (size_t i = 0; i < reply.size();) {
    if (reply[i] != '`') {
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < reply.size() && reply[j] != '`' && reply[j] != '\r' && reply[j] != '\n') ++j;
    if (j == i + 1 || j >= reply.size() || reply[j] != '`') {
      ++i;
      continue;
    }
    if (!inside(i)) {
      if (std::string command = SelectCommandLine(reply.substr(i + 1, j - i - 1));
          !command.empty()) {
        inline_candidates.emplace_back(i, std::move(command));
      }
    }
    i = j + 1;
  }
  if (std::string plain = SelectCommandLine(reply); !plain.empty()) {
    const size_t index = reply.rfind(plain);
    if (index == std::string_view::npos || !inside(index)) {
      inline_candidates.emplace_back(index == std::string_view::npos ? reply.size() : index,
                                     std::move(plain));
    }
  }
  auto& candidates = fenced.empty() ? inline_candidates : fenced;
  if (candidates.empty()) return "";
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return prefer_first ? candidates.front().second : candidates.back().second;
}

CliKeywordScore ScoreCliKeywords(const json& requirements, std::string_view reply,
                                 bool prefer_first, bool truncated) {
  CliKeywordScore out;
  const std::string command = ExtractPrimaryCommand(reply, prefer_first);
  const std::string output = Lower(command);
  const std::string prose = Lower(reply);
  const std::vector<std::string> commands = Strings(Member(requirements, "requiredCommands"));
  const bool executable_required =
      std::any_of(commands.begin(), commands.end(),
                  [](const std::string& c) { return IsExecutableRequirement(c); });
  out.evidence.push_back(command.empty() && executable_required
                             ? std::string("No executable shell command found in model output")
                             : "Command candidate: " + EvidenceText(command, 240));
  std::vector<std::pair<int, double>> axes;
  const int format_valid = truncated ? 60 : 100;
  out.axes["format_valid"] = format_valid;
  axes.emplace_back(format_valid, .10);
  const auto axis = [&](const char* name, const std::vector<std::string>& items, double weight,
                        auto hit) {
    if (items.empty()) return;
    const auto hits = std::count_if(items.begin(), items.end(), hit);
    const int score =
        JsRound(100.0 * static_cast<double>(hits) / static_cast<double>(items.size()));
    out.axes[name] = score;
    axes.emplace_back(score, weight);
    out.evidence.push_back(std::string(name) + ": " + std::to_string(hits) + "/" +
                           std::to_string(items.size()));
  };
  axis("command_usage", commands, .35, [&](const std::string& c) {
    return IsExecutableRequirement(c) ? ContainsToken(output, c)
                                      : prose.find(Lower(c)) != std::string::npos;
  });
  const std::string canon = CanonicalFlags(output);
  axis("flag_accuracy", Strings(Member(requirements, "requiredFlags")), .20,
       [&](const std::string& f) {
         const std::string lower = Lower(f);
         return canon.find(std::string(JsTrim(CanonicalFlags(lower)))) != std::string::npos ||
                output.find(lower) != std::string::npos;
       });
  axis("pipeline_usage", Strings(Member(requirements, "pipelineTokens")), .15,
       [&](const std::string& p) { return output.find(Lower(p)) != std::string::npos; });
  axis("target_accuracy", Strings(Member(requirements, "targetKeywords")), .10,
       [&](const std::string& k) { return output.find(Lower(k)) != std::string::npos; });
  axis("safety_compliance", Strings(Member(requirements, "safetyTokens")), .10,
       [&](const std::string& s) { return prose.find(Lower(s)) != std::string::npos; });
  out.configured = axes.size() > 1;
  double sum = 0, weight = 0;
  for (const auto& [score, w] : axes) {
    sum += score * w;
    weight += w;
  }
  out.score = out.configured ? JsRound(sum / weight) : 0;
  return out;
}

}  // namespace evalrun::zx
