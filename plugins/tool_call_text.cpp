#include "plugins/tool_call_text.h"

#include <nlohmann/json.hpp>

#include "core/json_depth.h"

namespace evalrun {

const char* ToolCallFormatName(ToolCallFormat format) {
  switch (format) {
    case ToolCallFormat::kNative:
      return "native";
    case ToolCallFormat::kQwenXml:
      return "qwen_xml";
    case ToolCallFormat::kHermes:
      return "hermes";
    case ToolCallFormat::kAuto:
      return "auto";
  }
  return "native";
}

std::optional<ToolCallFormat> ParseToolCallFormat(std::string_view name) {
  for (ToolCallFormat format : {ToolCallFormat::kNative, ToolCallFormat::kQwenXml,
                                ToolCallFormat::kHermes, ToolCallFormat::kAuto}) {
    if (name == ToolCallFormatName(format)) return format;
  }
  return std::nullopt;
}

namespace {

using nlohmann::json;

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";
constexpr std::string_view kFunction = "<function=";
constexpr std::string_view kFunctionEnd = "</function>";
constexpr std::string_view kParameter = "<parameter=";
constexpr std::string_view kParameterEnd = "</parameter>";
constexpr std::string_view kNotClosed = "<tool_call> is not closed";

bool IsSpace(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

size_t SkipSpace(std::string_view text, size_t pos) {
  while (pos < text.size() && IsSpace(text[pos])) ++pos;
  return pos;
}

std::string_view Trim(std::string_view text) {
  const size_t begin = SkipSpace(text, 0);
  size_t end = text.size();
  while (end > begin && IsSpace(text[end - 1])) --end;
  return text.substr(begin, end - begin);
}

bool StartsWith(std::string_view text, size_t pos, std::string_view prefix) {
  return text.substr(pos, prefix.size()) == prefix;
}

// At most 40 bytes of `text` for an error line: newlines shown as \n, not cut inside a UTF-8
// character.
std::string Snippet(std::string_view text) {
  size_t n = text.size();
  bool cut = false;
  if (n > 40) {
    n = 40;
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
    cut = true;
  }
  std::string out;
  for (char c : text.substr(0, n)) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += c;
    }
  }
  if (cut) out += "...";
  return out;
}

// True when no bracket in the JSON-looking `text` nests deeper than `limit` (strings skipped).
bool DepthWithin(std::string_view text, int limit) { return !JsonDepthExceeded(text, limit); }

// Compact JSON text; invalid UTF-8 from the model is replaced rather than thrown on.
std::string Compact(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The next occurrence of a fixed needle at or after a position that only moves forward: each
// search starts past the previous hit, so all searches together read the text once.
class ForwardFinder {
 public:
  ForwardFinder(std::string_view text, std::string_view needle) : text_(text), needle_(needle) {}
  size_t From(size_t pos) {
    if (hit_ == std::string_view::npos && searched_ && pos >= from_) return hit_;
    if (searched_ && hit_ != std::string_view::npos && pos >= from_ && pos <= hit_) return hit_;
    searched_ = true;
    from_ = pos;
    hit_ = text_.find(needle_, pos);
    return hit_;
  }

 private:
  std::string_view text_, needle_;
  bool searched_ = false;
  size_t from_ = 0;
  size_t hit_ = std::string_view::npos;
};

// One malformed block: where it starts (byte offset in the whole content) and what is wrong.
struct Problem {
  size_t at = 0;
  std::string what;
};

class Scanner {
 public:
  Scanner(std::string_view text, ToolCallFormat format) : text_(text), format_(format) {}

  TextToolCalls Run() {
    const bool tags = format_ != ToolCallFormat::kNative;
    const bool bare_functions =
        format_ == ToolCallFormat::kQwenXml || format_ == ToolCallFormat::kAuto;
    ForwardFinder opens(text_, kOpen), closes(text_, kClose);
    ForwardFinder functions(text_, kFunction), function_ends(text_, kFunctionEnd);
    size_t pos = 0;
    while (tags && pos < text_.size()) {
      const size_t open = opens.From(pos);
      const size_t function = bare_functions ? functions.From(pos) : std::string_view::npos;
      if (open == std::string_view::npos && function == std::string_view::npos) break;
      if (open < function) {
        const size_t body = open + kOpen.size();
        const size_t close = closes.From(body);
        if (close == std::string_view::npos) {
          // Open to the end: a call only if all that follows is one (vLLM reads it so too).
          Block(open, body, text_.size(), text_.size(), /*closed=*/false);
          break;
        }
        Block(open, body, close, close + kClose.size(), /*closed=*/true);
        pos = close + kClose.size();
      } else {
        const size_t end = function_ends.From(function + kFunction.size());
        if (end == std::string_view::npos) {
          Report({function, "<function=...> is not closed by </function>"});
          break;
        }
        Block(function, function, end + kFunctionEnd.size(), end + kFunctionEnd.size(), true);
        pos = end + kFunctionEnd.size();
      }
    }
    out_.remaining_text.append(text_.substr(copied_));
    if (dropped_errors_ > 0) {
      out_.errors.push_back("... and " + std::to_string(dropped_errors_) +
                            " more malformed tool calls not listed");
    }
    return std::move(out_);
  }

 private:
  // Reads the block [start, end) whose calls are written in [body, body_end). On success the
  // block leaves remaining_text; on failure it stays there and the problem is reported.
  void Block(size_t start, size_t body, size_t body_end, size_t end, bool closed) {
    std::vector<ToolCall> calls;
    ToolCallFormat written = ToolCallFormat::kQwenXml;
    std::optional<Problem> problem = ReadBody(start, body, body_end, closed, calls, written);
    if (problem) {
      if (!closed && problem->what != kNotClosed) {
        problem->what =
            std::string(kNotClosed) + " and the call after it is incomplete: " + problem->what;
        problem->at = start;
      }
      Report(std::move(*problem));
      return;
    }
    out_.remaining_text.append(text_.substr(copied_, start - copied_));
    copied_ = end;
    for (ToolCall& call : calls) {
      call.index = static_cast<int64_t>(out_.calls.size());
      call.id = "text_call_" + std::to_string(call.index);
      out_.calls.push_back(std::move(call));
      out_.formats.push_back(written);
    }
  }

  std::optional<Problem> ReadBody(size_t start, size_t body, size_t body_end, bool closed,
                                  std::vector<ToolCall>& calls, ToolCallFormat& written) {
    const std::string_view inside = text_.substr(body, body_end - body);
    const size_t first = SkipSpace(inside, 0);
    const bool is_json = first < inside.size() && inside[first] == '{';
    const bool is_xml = StartsWith(inside, first, kFunction);
    const bool want_json = format_ == ToolCallFormat::kHermes || format_ == ToolCallFormat::kAuto;
    const bool want_xml = format_ == ToolCallFormat::kQwenXml || format_ == ToolCallFormat::kAuto;
    if (!closed && !is_json && !is_xml) return Problem{start, std::string(kNotClosed)};
    if (first == inside.size()) return Problem{start, "empty <tool_call> block"};
    if (is_json && !want_json) {
      return Problem{start,
                     "<tool_call> holds JSON (Hermes format), not <function=...>; use "
                     "the hermes or auto format"};
    }
    if (is_xml && !want_xml) {
      return Problem{start,
                     "<tool_call> holds <function=...> (Qwen XML format), not JSON; use "
                     "the qwen_xml or auto format"};
    }
    if (is_json) {
      written = ToolCallFormat::kHermes;
      ToolCall call;
      if (auto problem = ReadHermes(start, inside, call)) return problem;
      calls.push_back(std::move(call));
      return std::nullopt;
    }
    if (!is_xml) {
      return Problem{start, "<tool_call> holds neither JSON nor <function=...>: '" +
                                Snippet(inside.substr(first)) + "'"};
    }
    written = ToolCallFormat::kQwenXml;
    // One or more <function=...>...</function>, then only white space.
    size_t pos = first;
    while (pos < inside.size()) {
      if (!StartsWith(inside, pos, kFunction)) {
        return Problem{body + pos, "expected <function=...> or the end of the block, got '" +
                                       Snippet(inside.substr(pos)) + "'"};
      }
      ToolCall call;
      if (auto problem = ReadFunction(body, inside, pos, call)) return problem;
      calls.push_back(std::move(call));
      pos = SkipSpace(inside, pos);
    }
    return std::nullopt;
  }

  // Reads `<function=NAME>` ... `</function>` starting at inside[pos] (offsets in errors are
  // absolute: `base` is where `inside` starts); leaves pos after it.
  std::optional<Problem> ReadFunction(size_t base, std::string_view inside, size_t& pos,
                                      ToolCall& call) {
    const size_t at = base + pos;
    const size_t name_begin = pos + kFunction.size();
    const size_t name_end = inside.find_first_of(">\n", name_begin);
    if (name_end == std::string_view::npos || inside[name_end] != '>') {
      return Problem{at, "<function= has no closing '>' on its line"};
    }
    call.name = std::string(Trim(inside.substr(name_begin, name_end - name_begin)));
    if (call.name.empty()) return Problem{at, "<function=> has an empty name"};
    json arguments = json::object();
    pos = name_end + 1;
    while (true) {
      pos = SkipSpace(inside, pos);
      if (StartsWith(inside, pos, kFunctionEnd)) {
        pos += kFunctionEnd.size();
        break;
      }
      if (pos >= inside.size()) {
        return Problem{at, "<function=" + call.name + "> is not closed by </function>"};
      }
      if (!StartsWith(inside, pos, kParameter)) {
        return Problem{base + pos, "expected <parameter=...> or </function> in <function=" +
                                       call.name + ">, got '" + Snippet(inside.substr(pos)) + "'"};
      }
      const size_t key_begin = pos + kParameter.size();
      const size_t key_end = inside.find_first_of(">\n", key_begin);
      if (key_end == std::string_view::npos || inside[key_end] != '>') {
        return Problem{base + pos, "<parameter= has no closing '>' on its line"};
      }
      const std::string key(Trim(inside.substr(key_begin, key_end - key_begin)));
      if (key.empty()) return Problem{base + pos, "<parameter=> has an empty name"};
      const size_t value_end = inside.find(kParameterEnd, key_end + 1);
      if (value_end == std::string_view::npos) {
        return Problem{base + pos, "<parameter=" + key + "> is not closed by </parameter>"};
      }
      if (arguments.contains(key)) {
        return Problem{base + pos, "parameter '" + key + "' is given twice"};
      }
      arguments[key] = ParameterValue(inside.substr(key_end + 1, value_end - key_end - 1));
      pos = value_end + kParameterEnd.size();
    }
    call.arguments = Compact(arguments);
    return std::nullopt;
  }

  // The markup's own newlines are dropped; JSON keeps its type, anything else is a string.
  static json ParameterValue(std::string_view value) {
    if (StartsWith(value, 0, "\r\n")) {
      value.remove_prefix(2);
    } else if (StartsWith(value, 0, "\n")) {
      value.remove_prefix(1);
    }
    if (value.size() >= 2 && value.substr(value.size() - 2) == "\r\n") {
      value.remove_suffix(2);
    } else if (!value.empty() && value.back() == '\n') {
      value.remove_suffix(1);
    }
    if (DepthWithin(value, kMaxToolCallJsonDepth)) {
      json parsed = json::parse(value.begin(), value.end(), nullptr, /*allow_exceptions=*/false);
      if (!parsed.is_discarded()) return parsed;
    }
    return json(std::string(value));
  }

  std::optional<Problem> ReadHermes(size_t at, std::string_view inside, ToolCall& call) {
    const std::string_view text = Trim(inside);
    if (!DepthWithin(text, kMaxToolCallJsonDepth)) {
      return Problem{
          at, "JSON nested deeper than " + std::to_string(kMaxToolCallJsonDepth) + " levels"};
    }
    json value;
    try {
      value = json::parse(text.begin(), text.end());
    } catch (const json::exception& e) {
      std::string message = e.what();
      // "[json.exception.parse_error.101] parse error at line 1, ..." -> "parse error at ..."
      if (const size_t bracket = message.find("] "); bracket != std::string::npos) {
        message.erase(0, bracket + 2);
      }
      return Problem{at, "invalid JSON in <tool_call>: " + message};
    }
    auto name = value.find("name");
    if (name == value.end() || !name->is_string() || name->get_ref<const std::string&>().empty()) {
      return Problem{at, "<tool_call> JSON has no \"name\" string"};
    }
    call.name = name->get<std::string>();
    auto arguments = value.find("arguments");
    if (arguments == value.end()) arguments = value.find("parameters");
    if (arguments == value.end() || arguments->is_null()) {
      call.arguments = "{}";
    } else if (arguments->is_object()) {
      call.arguments = Compact(*arguments);
    } else if (arguments->is_string()) {
      const auto& s = arguments->get_ref<const std::string&>();
      json inner = DepthWithin(s, kMaxToolCallJsonDepth)
                       ? json::parse(s.begin(), s.end(), nullptr, false)
                       : json(json::value_t::discarded);
      if (!inner.is_object()) {
        return Problem{
            at, "\"arguments\" of " + call.name + " is a string that does not hold a JSON object"};
      }
      call.arguments = Compact(inner);
    } else {
      return Problem{at, "\"arguments\" of " + call.name + " is not an object"};
    }
    return std::nullopt;
  }

  void Report(Problem problem) {
    if (out_.errors.size() >= kMaxToolCallTextErrors) {
      ++dropped_errors_;
      return;
    }
    std::string line = "tool call at byte " + std::to_string(problem.at) + ": " + problem.what;
    for (char& c : line) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    out_.errors.push_back(std::move(line));
  }

  std::string_view text_;
  ToolCallFormat format_;
  TextToolCalls out_;
  size_t copied_ = 0;  // text_[0, copied_) is accounted for in remaining_text
  size_t dropped_errors_ = 0;
};

}  // namespace

TextToolCalls ParseToolCallsFromText(std::string_view content, ToolCallFormat format) {
  if (format == ToolCallFormat::kNative) {
    TextToolCalls out;
    out.remaining_text = std::string(content);
    return out;
  }
  return Scanner(content, format).Run();
}

}  // namespace evalrun
