// Specification of ParseToolCallsFromText (plugins/tool_call_text.h): tool calls a model wrote
// as text, in Qwen XML or Hermes form, read into the same ToolCall records the server's native
// `tool_calls` give.
#include "plugins/tool_call_text.h"

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/catch.h"
#include <nlohmann/json.hpp>

using namespace evalrun;
using nlohmann::json;

namespace {

struct Expected {
  std::string name;
  json arguments;  // compared as parsed JSON; the text is also checked to be compact
};

struct Case {
  std::string name;
  ToolCallFormat format;
  std::string text;
  std::vector<Expected> calls;
  std::string remaining;
  std::vector<std::string> errors;
};

std::string Repeat(std::string_view piece, size_t times) {
  std::string out;
  out.reserve(piece.size() * times);
  for (size_t i = 0; i < times; ++i) out += piece;
  return out;
}

void CheckResult(const TextToolCalls& got, const std::vector<Expected>& calls,
                 const std::string& remaining, const std::vector<std::string>& errors) {
  CHECK(got.errors == errors);
  CHECK(got.remaining_text == remaining);
  REQUIRE(got.calls.size() == calls.size());
  REQUIRE(got.formats.size() == calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    INFO("call " << i);
    CHECK(got.calls[i].name == calls[i].name);
    const json arguments = json::parse(got.calls[i].arguments);
    CHECK(arguments == calls[i].arguments);
    CHECK(got.calls[i].arguments == arguments.dump());  // compact, keys sorted
    CHECK(got.calls[i].index == static_cast<int64_t>(i));
    CHECK(got.calls[i].id == "text_call_" + std::to_string(i));
  }
}

const ToolCallFormat kQwen = ToolCallFormat::kQwenXml;
const ToolCallFormat kHermes = ToolCallFormat::kHermes;
const ToolCallFormat kAuto = ToolCallFormat::kAuto;

}  // namespace

TEST_CASE("tool_call_text: format names round-trip and unknown names are refused", "[tool_calls]") {
  for (ToolCallFormat f : {ToolCallFormat::kNative, kQwen, kHermes, kAuto}) {
    CHECK(ParseToolCallFormat(ToolCallFormatName(f)) == f);
  }
  CHECK(std::string(ToolCallFormatName(kQwen)) == "qwen_xml");
  CHECK(std::string(ToolCallFormatName(kHermes)) == "hermes");
  CHECK_FALSE(ParseToolCallFormat("qwen").has_value());
  CHECK_FALSE(ParseToolCallFormat("").has_value());
}

TEST_CASE("tool_call_text: calls, remaining text and errors, case by case", "[tool_calls]") {
  // clang-format off
  const std::vector<Case> cases = {
    {"qwen xml: one call, the text before it remains", kQwen,
     "I will list the files.\n<tool_call>\n<function=bash>\n<parameter=command>\nls -la src\n"
     "</parameter>\n</function>\n</tool_call>",
     {{"bash", {{"command", "ls -la src"}}}}, "I will list the files.\n", {}},

    {"qwen xml: values keep their JSON type, other values are strings with their newlines", kQwen,
     "<tool_call>\n<function=edit>\n"
     "<parameter=count>\n3\n</parameter>\n"
     "<parameter=force>\ntrue\n</parameter>\n"
     "<parameter=options>\n{\"a\": [1, 2], \"b\": null}\n</parameter>\n"
     "<parameter=text>\nline one\n\n  line three\n</parameter>\n"
     "<parameter=quoted>\n\"x\"\n</parameter>\n"
     "<parameter=almost>\n{\"a\": 1\n</parameter>\n"
     "<parameter=inline>same line</parameter>\n"
     "</function>\n</tool_call>",
     {{"edit", {{"count", 3}, {"force", true}, {"options", {{"a", {1, 2}}, {"b", nullptr}}},
                {"text", "line one\n\n  line three"}, {"quoted", "x"}, {"almost", "{\"a\": 1"},
                {"inline", "same line"}}}},
     "", {}},

    {"qwen xml: two calls with text around them", kQwen,
     "First.\n<tool_call>\n<function=a>\n</function>\n</tool_call>\nThen.\n"
     "<tool_call>\n<function=b>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>\nEnd.",
     {{"a", json::object()}, {"b", {{"x", 1}}}}, "First.\n\nThen.\n\nEnd.", {}},

    {"qwen xml: two functions in one block", kQwen,
     "<tool_call>\n<function=a>\n</function>\n<function=b>\n</function>\n</tool_call>",
     {{"a", json::object()}, {"b", json::object()}}, "", {}},

    {"qwen xml: a function without the tool_call wrapper", kQwen,
     "ok <function=read_file>\n<parameter=path>\nsrc/main.c\n</parameter>\n</function> done",
     {{"read_file", {{"path", "src/main.c"}}}}, "ok  done", {}},

    {"qwen xml: nested-looking text inside a value stays text", kQwen,
     "<tool_call>\n<function=write_file>\n<parameter=content>\n"
     "say <tool_call> and <function=fake> and <parameter=p>\n"
     "</parameter>\n</function>\n</tool_call>",
     {{"write_file", {{"content", "say <tool_call> and <function=fake> and <parameter=p>"}}}},
     "", {}},

    {"qwen xml: a tool_call left open after a complete call is read (the server ate the tag)",
     kQwen,
     "Listing.\n<tool_call>\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n",
     {{"bash", {{"command", "ls"}}}}, "Listing.\n", {}},

    {"unclosed: a tool_call open to the end with no complete call is an error", kAuto,
     "Text <tool_call>\n<function=bash>\n<parameter=command>\nls",
     {}, "Text <tool_call>\n<function=bash>\n<parameter=command>\nls",
     {"tool call at byte 5: <tool_call> is not closed and the call after it is incomplete: "
      "<parameter=command> is not closed by </parameter>"}},

    {"unclosed: an open tool_call followed by prose", kAuto,
     "a <tool_call> b", {}, "a <tool_call> b",
     {"tool call at byte 2: <tool_call> is not closed"}},

    {"unclosed: a parameter inside a closed block", kQwen,
     "<tool_call>\n<function=bash>\n<parameter=command>\nls\n</function>\n</tool_call>after",
     {}, "<tool_call>\n<function=bash>\n<parameter=command>\nls\n</function>\n</tool_call>after",
     {"tool call at byte 28: <parameter=command> is not closed by </parameter>"}},

    {"unclosed: a function inside a closed block", kQwen,
     "<tool_call>\n<function=bash>\n<parameter=c>\n1\n</parameter>\n</tool_call>",
     {}, "<tool_call>\n<function=bash>\n<parameter=c>\n1\n</parameter>\n</tool_call>",
     {"tool call at byte 12: <function=bash> is not closed by </function>"}},

    {"unclosed: a bare function without </function>", kQwen,
     "<function=bash>\n<parameter=c>\n1\n</parameter>\n", {},
     "<function=bash>\n<parameter=c>\n1\n</parameter>\n",
     {"tool call at byte 0: <function=...> is not closed by </function>"}},

    {"malformed: a block nested in a block; the good call after it is still read", kAuto,
     "<tool_call><tool_call>{\"name\": \"a\"}</tool_call></tool_call>"
     "<tool_call>{\"name\": \"b\"}</tool_call>",
     {{"b", json::object()}},
     "<tool_call><tool_call>{\"name\": \"a\"}</tool_call></tool_call>",
     {"tool call at byte 0: <tool_call> holds neither JSON nor <function=...>: "
      "'<tool_call>{\"name\": \"a\"}'"}},

    {"malformed: an empty name, a duplicate parameter, stray text, an empty block", kQwen,
     "<tool_call><function=></function></tool_call>"
     "<tool_call><function=f><parameter=x>1</parameter><parameter=x>2</parameter></function>"
     "</tool_call>"
     "<tool_call><function=f>\nhello\n</function></tool_call>"
     "<tool_call> \n </tool_call>",
     {},
     "<tool_call><function=></function></tool_call>"
     "<tool_call><function=f><parameter=x>1</parameter><parameter=x>2</parameter></function>"
     "</tool_call>"
     "<tool_call><function=f>\nhello\n</function></tool_call>"
     "<tool_call> \n </tool_call>",
     {"tool call at byte 11: <function=> has an empty name",
      "tool call at byte 94: parameter 'x' is given twice",
      "tool call at byte 167: expected <parameter=...> or </function> in <function=f>, got "
      "'hello\\n</function>'",
      "tool call at byte 196: empty <tool_call> block"}},

    {"hermes: one call, arguments compact with sorted keys", kHermes,
     "Reading.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.c\", "
     "\"lines\": [1, 20]}}\n</tool_call>",
     {{"read_file", {{"path", "a.c"}, {"lines", {1, 20}}}}}, "Reading.\n", {}},

    {"hermes: arguments as a JSON string, parameters for arguments, no arguments", kHermes,
     "<tool_call>{\"name\": \"a\", \"arguments\": \"{\\\"x\\\": 1}\"}</tool_call>"
     "<tool_call>{\"name\": \"b\", \"parameters\": {\"y\": \"z\"}}</tool_call>"
     "<tool_call>{\"name\": \"c\"}</tool_call>",
     {{"a", {{"x", 1}}}, {"b", {{"y", "z"}}}, {"c", json::object()}}, "", {}},

    {"hermes: JSON with a brace in a string and a closing tag in the prose after", kHermes,
     "<tool_call>{\"name\": \"echo\", \"arguments\": {\"s\": \"}{ <function=x>\"}}</tool_call>"
     " see </tool_call>",
     {{"echo", {{"s", "}{ <function=x>"}}}}, " see </tool_call>", {}},

    {"hermes: no name, arguments not an object, arguments a string without an object", kHermes,
     "<tool_call>{\"arguments\": {}}</tool_call>"
     "<tool_call>{\"name\": \"a\", \"arguments\": [1]}</tool_call>"
     "<tool_call>{\"name\": \"b\", \"arguments\": \"ls\"}</tool_call>",
     {},
     "<tool_call>{\"arguments\": {}}</tool_call>"
     "<tool_call>{\"name\": \"a\", \"arguments\": [1]}</tool_call>"
     "<tool_call>{\"name\": \"b\", \"arguments\": \"ls\"}</tool_call>",
     {"tool call at byte 0: <tool_call> JSON has no \"name\" string",
      "tool call at byte 40: \"arguments\" of a is not an object",
      "tool call at byte 94: \"arguments\" of b is a string that does not hold a JSON object"}},

    {"hermes: JSON nested too deep is refused", kHermes,
     "<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": " + Repeat("[", 70) + Repeat("]", 70) +
     "}}</tool_call>",
     {}, "<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": " + Repeat("[", 70) +
     Repeat("]", 70) + "}}</tool_call>",
     {"tool call at byte 0: JSON nested deeper than 64 levels"}},

    {"qwen xml: a parameter nested too deep stays a string", kQwen,
     "<function=a><parameter=x>" + Repeat("[", 70) + Repeat("]", 70) + "</parameter></function>",
     {{"a", {{"x", Repeat("[", 70) + Repeat("]", 70)}}}}, "", {}},

    {"format: JSON in qwen_xml mode is reported with the fix", kQwen,
     "<tool_call>{\"name\": \"a\"}</tool_call>", {}, "<tool_call>{\"name\": \"a\"}</tool_call>",
     {"tool call at byte 0: <tool_call> holds JSON (Hermes format), not <function=...>; use the "
      "hermes or auto format"}},

    {"format: XML in hermes mode is reported, and bare functions are not read", kHermes,
     "<tool_call><function=a></function></tool_call><function=b></function>", {},
     "<tool_call><function=a></function></tool_call><function=b></function>",
     {"tool call at byte 0: <tool_call> holds <function=...> (Qwen XML format), not JSON; use "
      "the qwen_xml or auto format"}},

    {"format: auto reads both, each block by what it holds", kAuto,
     "<tool_call>\n<function=a>\n<parameter=n>\n1\n</parameter>\n</function>\n</tool_call>\n"
     "<tool_call>\n{\"name\": \"b\", \"arguments\": {\"n\": 2}}\n</tool_call>",
     {{"a", {{"n", 1}}}, {"b", {{"n", 2}}}}, "\n", {}},

    {"format: native leaves the text alone", ToolCallFormat::kNative,
     "<tool_call>{\"name\": \"a\"}</tool_call>", {}, "<tool_call>{\"name\": \"a\"}</tool_call>",
     {}},

    {"no calls: plain text, empty text, a lone closing tag", kAuto,
     "just </tool_call> text </function>", {}, "just </tool_call> text </function>", {}},
  };
  // clang-format on
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      const TextToolCalls got = ParseToolCallsFromText(c.text, c.format);
      CheckResult(got, c.calls, c.remaining, c.errors);
    }
  }
}

TEST_CASE("tool_call_text: which format each call was written in is recorded", "[tool_calls]") {
  const TextToolCalls got = ParseToolCallsFromText(
      "<tool_call>{\"name\": \"h\"}</tool_call><function=q></function>"
      "<tool_call><function=r></function></tool_call>",
      kAuto);
  REQUIRE(got.calls.size() == 3);
  CHECK(got.formats == std::vector<ToolCallFormat>{kHermes, kQwen, kQwen});
  CHECK(got.calls[0].name == "h");
  CHECK(got.calls[1].name == "q");
  CHECK(got.calls[2].name == "r");
}

TEST_CASE("tool_call_text: invalid JSON in a Hermes block names the parse error", "[tool_calls]") {
  const std::string text = "x<tool_call>{\"name\": \"a\", \"arguments\": {\"p\": }}</tool_call>";
  const TextToolCalls got = ParseToolCallsFromText(text, kHermes);
  CHECK(got.calls.empty());
  CHECK(got.remaining_text == text);
  REQUIRE(got.errors.size() == 1);
  // The tail is nlohmann's own wording.
  const std::string prefix = "tool call at byte 1: invalid JSON in <tool_call>: parse error at ";
  CHECK(got.errors[0].substr(0, prefix.size()) == prefix);
  CHECK(got.errors[0].find('\n') == std::string::npos);
}

TEST_CASE("tool_call_text: errors are capped, then counted", "[tool_calls]") {
  const std::string text = Repeat("<tool_call>{\"name\": 1}</tool_call>", 20);
  const TextToolCalls got = ParseToolCallsFromText(text, kAuto);
  CHECK(got.calls.empty());
  REQUIRE(got.errors.size() == kMaxToolCallTextErrors + 1);
  CHECK(got.errors[0] == "tool call at byte 0: <tool_call> JSON has no \"name\" string");
  CHECK(got.errors[1] == "tool call at byte 34: <tool_call> JSON has no \"name\" string");
  CHECK(got.errors.back() == "... and 4 more malformed tool calls not listed");
}

TEST_CASE("tool_call_text: invalid UTF-8 in a value does not throw", "[tool_calls]") {
  const std::string text = "<function=a><parameter=x>\xff\xfe</parameter></function>";
  const TextToolCalls got = ParseToolCallsFromText(text, kQwen);
  REQUIRE(got.calls.size() == 1);
  CHECK(got.calls[0].arguments == "{\"x\":\"\xEF\xBF\xBD\xEF\xBF\xBD\"}");  // U+FFFD twice
}

// Work must stay linear on any 10 MB reply. A scanner that searched to the end of the text for
// every block (each `</parameter>` search failing) would take hours on these; the bound below is
// hundreds of times what a linear scan needs, so only a quadratic one can miss it.
TEST_CASE("tool_call_text: 10 MB of hostile text is read in bounded time", "[tool_calls][slow]") {
  constexpr size_t kSize = 10 * 1000 * 1000;
  struct Input {
    std::string name;
    std::function<std::string()> make;  // built only in its own section
    size_t calls;
    size_t errors;
  };
  const std::string block = "<tool_call><function=a><parameter=b>x</tool_call>";
  const std::string good =
      "<tool_call><function=a><parameter=b>1</parameter></function></tool_call>";
  const std::vector<Input> inputs = {
      {"plain text", [] { return Repeat("All work and no play. ", kSize / 22); }, 0, 0},
      {"blocks whose parameter never closes", [&] { return Repeat(block, kSize / block.size()); },
       0, kMaxToolCallTextErrors + 1},
      {"opening tags only", [] { return Repeat("<tool_call>", kSize / 11); }, 0, 1},
      {"bare function openings only", [] { return Repeat("<function=a>", kSize / 12); }, 0, 1},
      {"parameter openings in one function",
       [] { return "<function=a>" + Repeat("<parameter=p>", kSize / 13); }, 0, 1},
      {"closing tags only",
       [] { return Repeat("</tool_call></function></parameter>", kSize / 35); }, 0, 0},
      {"many good calls", [&] { return Repeat(good, kSize / good.size()); }, kSize / good.size(),
       0},
      {"one call with a 10 MB value",
       [] {
         return "<function=w><parameter=v>\n" + Repeat("x\n", kSize / 2) +
                "</parameter></function>";
       },
       1, 0},
      {"a Hermes block of 10 MB of brackets",
       [] {
         return "<tool_call>{\"name\": \"a\", \"arguments\": " + Repeat("[", kSize) +
                "</tool_call>";
       },
       0, 1},
  };
  for (const Input& input : inputs) {
    DYNAMIC_SECTION(input.name) {
      const std::string text = input.make();
      const auto start = std::chrono::steady_clock::now();
      const TextToolCalls got = ParseToolCallsFromText(text, kAuto);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      CHECK(seconds < 10.0);
      CHECK(got.calls.size() == input.calls);
      CHECK(got.errors.size() == input.errors);
      size_t kept = got.remaining_text.size();
      for (const ToolCall& call : got.calls) kept += call.name.size();
      CHECK(kept <= text.size());
    }
  }
}
