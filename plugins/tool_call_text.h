#pragma once
// Tool calls written as text in a reply's content, for servers that run a model without a tool
// parser (llama.cpp without --jinja or a matching template, vLLM without --tool-call-parser):
//
//   Qwen XML (Qwen3-Coder's chat template; vLLM's `qwen3_coder` parser reads the same):
//     <tool_call>
//     <function=bash>
//     <parameter=command>
//     ls -la src
//     </parameter>
//     </function>
//     </tool_call>
//   A parameter value that parses as JSON keeps its JSON type (`42`, `true`, `{"a": 1}`);
//   anything else is a string. One newline after `<parameter=KEY>` and one before
//   `</parameter>` belong to the markup and are dropped. `<function=...>` without the
//   `<tool_call>` wrapper is read too, as vLLM's parser does.
//
//   Hermes (NousResearch Hermes, Qwen2.5 templates; vLLM's `hermes` parser):
//     <tool_call>
//     {"name": "bash", "arguments": {"command": "ls -la src"}}
//     </tool_call>
//   `parameters` is accepted for `arguments`, and so is a string holding a JSON object.
//
// A `<tool_call>` left open at the end of the text (the model stopped, or the server ate the
// closing tag as a stop string) is read when what follows it is a complete call, as vLLM does.
// Pure functions; they never throw on any input, and their work is linear in its length.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/request_record.h"

namespace evalrun {

// Where an agent turn's tool calls are read from. kNative: the server's `tool_calls` only (text
// is left alone); kQwenXml, kHermes: that text format; kAuto: both text formats, each block read
// by what it holds.
enum class ToolCallFormat { kNative, kQwenXml, kHermes, kAuto };

const char* ToolCallFormatName(ToolCallFormat format);  // "native", "qwen_xml", "hermes", "auto"
std::optional<ToolCallFormat> ParseToolCallFormat(std::string_view name);  // inverse

struct TextToolCalls {
  // Calls in the order they were written. id is "text_call_<n>", index is n (0-based);
  // arguments is compact JSON text of an object (keys sorted).
  std::vector<ToolCall> calls;
  std::vector<ToolCallFormat> formats;  // formats[i]: how calls[i] was written
  // The content without the blocks that became calls, byte for byte otherwise. Malformed blocks
  // stay in it: nothing the model wrote is lost.
  std::string remaining_text;
  // One line per malformed block, naming the problem and where it starts:
  // "tool call at byte 24: <parameter=command> is not closed by </parameter>". At most
  // kMaxToolCallTextErrors lines, then one that counts the rest.
  std::vector<std::string> errors;
};

inline constexpr size_t kMaxToolCallTextErrors = 16;
// JSON in a call nested deeper than this is refused (Hermes) or kept as a string (a parameter):
// deep nesting is no real argument, and printing it back would recurse that deep.
inline constexpr int kMaxToolCallJsonDepth = 64;

// Reads the tool calls written in `content`. kNative returns no calls and the content as is.
TextToolCalls ParseToolCallsFromText(std::string_view content, ToolCallFormat format);

}  // namespace evalrun
