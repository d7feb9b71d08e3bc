// Tests for the agent loop (runner/agent/agent_loop.h): a scripted model and a tiny tool set for every
// ending, and the real mock server spoken to through SendAgentTurn.
#include "runner/agent/agent_loop.h"

#include <chrono>
#include <thread>
#include <string>
#include <vector>

#include "tests/support/catch.h"

#include "plugins/mock_server.h"
#include "tests/support/fixtures.h"

using namespace evalrun;
using json = nlohmann::json;

namespace {

// bash(command) answers "ran: <command>" ("big" answers 100 bytes, "fail" fails); submit()
// submits. Records every call it is given.
class FakeTools : public AgentTools {
 public:
  json Schemas() const override {
    return json::parse(R"([
      {"type": "function", "function": {"name": "bash", "description": "Run a command.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}},
                       "required": ["command"]}}},
      {"type": "function", "function": {"name": "submit", "description": "Submit.",
        "parameters": {"type": "object", "properties": {}}}}])");
  }
  ToolOutcome Execute(const std::string& name, const json& arguments) override {
    calls.emplace_back(name, arguments);
    ToolOutcome outcome;
    outcome.elapsed_ms = 1.5;
    if (name == "submit") {
      outcome.observation = "submitted";
      outcome.submitted = true;
    } else if (name == "bash") {
      const std::string command = arguments.value("command", "");
      outcome.observation = "ran: " + command;
      if (command == "big") outcome.observation = std::string(50, 'a') + std::string(50, 'z');
      if (command == "binary") outcome.observation = "a\xFF\xC3" "b\xED\xA0\x80";
      if (command == "sleep") std::this_thread::sleep_for(std::chrono::milliseconds(150));
      outcome.ok = command != "fail";
      outcome.record = {{"exit_code", outcome.ok ? 0 : 1}};
    } else {
      outcome.observation = "unknown tool '" + name + "' (tools: bash, submit)";
      outcome.ok = false;
    }
    return outcome;
  }
  std::vector<std::pair<std::string, json>> calls;
};

RequestRecord Reply(std::string content, std::vector<ToolCall> calls = {}, std::string finish = "",
                    int64_t usage_tokens = 10) {
  RequestRecord r;
  r.content = std::move(content);
  r.tool_calls = std::move(calls);
  r.finish_reason = finish.empty() ? (r.tool_calls.empty() ? "stop" : "tool_calls") : finish;
  r.usage_reported = true;
  r.usage.completion_tokens = usage_tokens;
  return r;
}

ToolCall Call(std::string id, std::string name, std::string arguments) {
  return ToolCall{std::move(id), std::move(name), std::move(arguments), 0};
}

RequestRecord Failed(RequestOutcome outcome, std::string message) {
  RequestRecord r;
  r.outcome = outcome;
  r.error_message = std::move(message);
  return r;
}

// Replies in order (the last one again when the script runs out), and keeps what it was sent.
struct ScriptedModel {
  std::vector<RequestRecord> replies;
  std::vector<ChatRequest> seen;
  std::vector<double> remaining;
  AgentModel Model() {
    return [this](const ChatRequest& request, double remaining_s) {
      seen.push_back(request);
      remaining.push_back(remaining_s);
      const size_t i = std::min(seen.size() - 1, replies.size() - 1);
      return replies[i];
    };
  }
};

ChatRequest Base() {
  ChatRequest base;
  base.max_tokens = 500;
  base.messages = json::array({{{"role", "system"}, {"content", "You are an agent."}},
                               {{"role", "user"}, {"content", "Fix the build."}}});
  return base;
}

AgentLoopResult Run(ScriptedModel& model, FakeTools& tools, AgentLoopOptions options = {}) {
  return RunAgentLoop(Base(), tools, model.Model(), options);
}

const std::string kBashSchema =
    R"({"properties":{"command":{"type":"string"}},"required":["command"],"type":"object"})";

}  // namespace

TEST_CASE("agent_loop: a native call, its answer, then submit: completed", "[agent_loop]") {
  ScriptedModel model;
  model.replies = {Reply("Let me look.", {Call("call_a", "bash", R"({"command": "ls"})")}),
                   Reply("", {Call("call_b", "submit", "{}")})};
  FakeTools tools;
  const AgentLoopResult r = Run(model, tools);
  CHECK(r.termination_reason == "completed");
  CHECK(r.steps == 2);
  CHECK(r.tool_calls == 2);
  CHECK(r.format_errors == 0);
  CHECK(r.tool_call_source == "native");
  CHECK(r.completion_tokens == 20);
  CHECK(r.final_message.empty());
  REQUIRE(tools.calls.size() == 2);
  CHECK(tools.calls[0] == std::make_pair(std::string("bash"), json{{"command", "ls"}}));
  CHECK(tools.calls[1] == std::make_pair(std::string("submit"), json::object()));
  REQUIRE(r.requests.size() == 2);
  CHECK(r.requests[0].label == "agent-turn-1");
  CHECK(r.requests[1].label == "agent-turn-2");

  // What the second request carried: the tools, and the conversation in OpenAI's shape.
  REQUIRE(model.seen.size() == 2);
  CHECK(model.seen[1].tools == tools.Schemas());
  CHECK(model.seen[1].max_tokens == 500);
  CHECK(
      model.seen[1].messages ==
      json::array({{{"role", "system"}, {"content", "You are an agent."}},
                   {{"role", "user"}, {"content", "Fix the build."}},
                   {{"role", "assistant"},
                    {"content", "Let me look."},
                    {"tool_calls",
                     {{{"id", "call_a"},
                       {"type", "function"},
                       {"function", {{"name", "bash"}, {"arguments", R"({"command": "ls"})"}}}}}}},
                   {{"role", "tool"}, {"tool_call_id", "call_a"}, {"content", "ran: ls"}}}));
  CHECK(model.remaining[0] <= 1800);
  CHECK(model.remaining[0] > 1700);

  // The transcript.
  const json& t = r.transcript;
  CHECK(t["schema_version"] == 1);
  CHECK(t["termination_reason"] == "completed");
  CHECK(t["tool_call_source"] == "native");
  CHECK(t["tools"] == tools.Schemas());
  CHECK(t["messages"] == Base().messages);
  REQUIRE(t["turns"].size() == 2);
  const json& turn = t["turns"][0];
  CHECK(turn["turn"] == 1);
  CHECK(turn["content"] == "Let me look.");
  CHECK(turn["finish_reason"] == "tool_calls");
  CHECK(turn["source"] == "native");
  CHECK_FALSE(turn.contains("format_error"));
  REQUIRE(turn["calls"].size() == 1);
  CHECK(turn["calls"][0] == json{{"id", "call_a"},
                                 {"name", "bash"},
                                 {"arguments", R"({"command": "ls"})"},
                                 {"format", "native"},
                                 {"ok", true},
                                 {"submitted", false},
                                 {"observation", "ran: ls"},
                                 {"record", {{"exit_code", 0}}},
                                 {"elapsed_ms", 1.5}});
  CHECK(turn["model_ms"].get<double>() >= 0);
  CHECK(turn["tools_ms"].get<double>() >= 0);
  CHECK(t["turns"][1]["calls"][0]["submitted"] == true);
  CHECK(t["wall_ms"].get<double>() >= t["model_ms"].get<double>());
  CHECK(r.wall_ms >= r.model_ms);
  CHECK(r.outside_model_ms() == Approx(r.wall_ms - r.model_ms));
}

TEST_CASE("agent_loop: a reply without a call ends the episode", "[agent_loop]") {
  ScriptedModel model;
  model.replies = {Reply("", {Call("c1", "bash", R"({"command": "ls"})")}),
                   Reply("The answer is 42.")};
  FakeTools tools;
  SECTION("no_action by default") {
    const AgentLoopResult r = Run(model, tools);
    CHECK(r.termination_reason == "no_action");
    CHECK(r.steps == 2);
    CHECK(r.final_message == "The answer is 42.");
  }
  SECTION("completed when a text reply is the final answer (worlds)") {
    AgentLoopOptions options;
    options.text_reply_completes = true;
    const AgentLoopResult r = Run(model, tools, options);
    CHECK(r.termination_reason == "completed");
    CHECK(r.final_message == "The answer is 42.");
    CHECK(r.transcript["turns"][1]["source"] == "");
  }
}

TEST_CASE("agent_loop: malformed arguments are answered with the schema, then protocol_error",
          "[agent_loop]") {
  ScriptedModel model;
  model.replies = {Reply("", {Call("c1", "bash", R"({"command": "make)")})};
  FakeTools tools;
  const AgentLoopResult r = Run(model, tools);
  CHECK(r.termination_reason == "protocol_error");
  CHECK(r.steps == 3);
  CHECK(r.format_errors == 3);
  CHECK(r.tool_calls == 0);
  CHECK(tools.calls.empty());  // never executed
  const std::string reply =
      "error: the arguments of this call to 'bash' are not a JSON object (not valid JSON: parse "
      "error at line 1, column 18: syntax error while parsing value - invalid string: missing "
      "closing quote; last read: '\"make'); call it again with arguments that match its "
      "parameters: " +
      kBashSchema;
  // The reply went back to the model as the call's tool message, the bad arguments as {}.
  REQUIRE(model.seen.size() == 3);
  const json& messages = model.seen[1].messages;
  REQUIRE(messages.size() == 4);
  CHECK(messages[2]["tool_calls"][0]["function"]["arguments"] == "{}");
  CHECK(messages[2]["content"].is_null());
  CHECK(messages[3] == json{{"role", "tool"}, {"tool_call_id", "c1"}, {"content", reply}});
  CHECK(r.transcript["turns"][0]["format_error"] == reply);
  CHECK(r.transcript["turns"][0]["calls"][0]["format_error"] ==
        "not valid JSON: parse error at line 1, column 18: syntax error while parsing value - "
        "invalid string: missing closing quote; last read: '\"make'");
  CHECK(r.transcript["turns"][0]["calls"][0]["ok"] == false);

  SECTION("a number no double holds is not valid JSON, not an abort") {
    model.replies = {Reply("", {Call("c1", "bash", R"({"command": 1e999})")})};
    model.seen.clear();
    AgentLoopOptions options;
    options.limits.max_format_errors = 1;
    const AgentLoopResult big = Run(model, tools, options);
    CHECK(big.termination_reason == "protocol_error");
    CHECK(big.transcript["turns"][0]["calls"][0]["format_error"] ==
          "not valid JSON: number overflow parsing '1e999'");
  }

  SECTION("arguments that are JSON but not an object, with an unknown name") {
    model.replies = {Reply("", {Call("c1", "grep", "[1, 2]")})};
    model.seen.clear();
    AgentLoopOptions options;
    options.limits.max_format_errors = 1;
    const AgentLoopResult one = Run(model, tools, options);
    CHECK(one.termination_reason == "protocol_error");
    CHECK(one.steps == 1);
    CHECK(one.transcript["turns"][0]["format_error"] ==
          "error: the arguments of this call to 'grep' are not a JSON object (a JSON array, not "
          "an object); and there is no tool 'grep' (tools: bash, submit)");
  }
  SECTION("a good turn between malformed ones starts the count again") {
    model.replies = {Reply("", {Call("c1", "bash", "{")}),
                     Reply("", {Call("c1", "bash", "{")}),
                     Reply("", {Call("c2", "bash", R"({"command": "ls"})")}),
                     Reply("", {Call("c3", "bash", "{")}),
                     Reply("", {Call("c3", "bash", "{")}),
                     Reply("", {Call("c4", "submit", "")})};  // empty arguments read as {}
    model.seen.clear();
    const AgentLoopResult again = Run(model, tools);
    CHECK(again.termination_reason == "completed");
    CHECK(again.format_errors == 4);
    CHECK(again.steps == 6);
  }
}

TEST_CASE("agent_loop: unknown tools are failed calls the model sees, not format errors",
          "[agent_loop]") {
  ScriptedModel model;
  model.replies = {Reply("", {Call("c1", "grep", R"({"pattern": "x"})")}), Reply("I give up.")};
  FakeTools tools;
  const AgentLoopResult r = Run(model, tools);
  CHECK(r.termination_reason == "no_action");
  CHECK(r.format_errors == 0);
  CHECK(r.tool_calls == 1);
  REQUIRE(tools.calls.size() == 1);
  CHECK(tools.calls[0].first == "grep");
  CHECK(r.transcript["turns"][0]["calls"][0]["ok"] == false);
  CHECK(model.seen[1].messages.back()["content"] == "unknown tool 'grep' (tools: bash, submit)");
}

TEST_CASE("agent_loop: request failures end the episode", "[agent_loop]") {
  ScriptedModel model;
  FakeTools tools;
  SECTION("model_error") {
    model.replies = {Failed(RequestOutcome::kHttpError, "HTTP 500: boom")};
    const AgentLoopResult r = Run(model, tools);
    CHECK(r.termination_reason == "model_error");
    CHECK(r.steps == 1);
    REQUIRE(r.requests.size() == 1);
    CHECK(r.requests[0].outcome == RequestOutcome::kHttpError);
    CHECK(r.transcript["turns"][0]["error"] == "http_error: HTTP 500: boom");
  }
  SECTION("a request that timed out: timeout") {
    model.replies = {Failed(RequestOutcome::kTotalTimeout, "")};
    CHECK(Run(model, tools).termination_reason == "timeout");
    model.replies = {Failed(RequestOutcome::kIdleTimeout, "")};
    CHECK(Run(model, tools).termination_reason == "timeout");
  }
  SECTION("the wall budget gone before a turn: timeout, and the remaining time is passed on") {
    model.replies = {Reply("", {Call("c1", "bash", R"({"command": "ls"})")})};
    AgentLoopOptions options;
    options.limits.wall_s = 0;
    const AgentLoopResult r = Run(model, tools, options);
    CHECK(r.termination_reason == "timeout");
    CHECK(r.steps == 0);
    CHECK(model.seen.empty());
  }
}

TEST_CASE("agent_loop: step and token budgets", "[agent_loop]") {
  ScriptedModel model;
  FakeTools tools;
  SECTION("turn_limit") {
    model.replies = {Reply("", {Call("c1", "bash", R"({"command": "ls"})")})};
    AgentLoopOptions options;
    options.limits.max_steps = 4;
    const AgentLoopResult r = Run(model, tools, options);
    CHECK(r.termination_reason == "turn_limit");
    CHECK(r.steps == 4);
    CHECK(r.tool_calls == 4);
    CHECK(r.requests.size() == 4);
  }
  SECTION("the token budget: truncated, and each request asks for no more than is left") {
    model.replies = {Reply("", {Call("c1", "bash", R"({"command": "ls"})")}, "", 40)};
    AgentLoopOptions options;
    options.limits.max_total_tokens = 100;
    const AgentLoopResult r = Run(model, tools, options);
    CHECK(r.termination_reason == "truncated");
    CHECK(r.steps == 3);
    CHECK(r.completion_tokens == 120);
    REQUIRE(model.seen.size() == 3);
    CHECK(model.seen[0].max_tokens == 100);  // min(base 500, 100 left)
    CHECK(model.seen[1].max_tokens == 60);
    CHECK(model.seen[2].max_tokens == 20);
  }
  SECTION("a budget spent by a malformed turn ends it before asking for max_tokens 0") {
    model.replies = {Reply("<tool_call>\n<function=bash>\n", {}, "", 100)};
    AgentLoopOptions options;
    options.limits.max_total_tokens = 100;
    const AgentLoopResult r = Run(model, tools, options);
    CHECK(r.termination_reason == "truncated");
    CHECK(r.format_errors == 1);
    REQUIRE(model.seen.size() == 1);
  }
  SECTION("the wall budget also stops the calls of a turn: the rest are not run") {
    model.replies = {Reply("", {Call("c1", "bash", R"({"command": "sleep"})"),
                                Call("c2", "bash", R"({"command": "sleep"})"),
                                Call("c3", "bash", R"({"command": "sleep"})"),
                                Call("c4", "bash", R"({"command": "sleep"})")})};
    AgentLoopOptions options;
    options.limits.wall_s = 0.2;
    const AgentLoopResult r = Run(model, tools, options);
    CHECK(r.termination_reason == "timeout");
    // Started at 0 ms and (unless the machine stalls) 150 ms; at 300 ms the budget is gone.
    CHECK(tools.calls.size() >= 1);
    CHECK(tools.calls.size() <= 2);
    const json& calls = r.transcript["turns"][0]["calls"];
    REQUIRE(calls.size() == 4);
    CHECK(calls[3]["observation"] == "not run: the episode's time is up");
    CHECK(calls[3]["ok"] == false);
  }
  SECTION("arguments go back as written, blank ones as {}") {
    model.replies = {Reply("", {Call("c1", "bash", R"({ "command" :  "ls" })"),
                                Call("c2", "bash", "  ")}),
                     Reply("", {Call("c3", "submit", "")})};
    Run(model, tools);
    REQUIRE(model.seen.size() == 2);
    const json& messages = model.seen[1].messages;
    const json& assistant = messages[messages.size() - 3];  // then two tool messages
    CHECK(assistant["tool_calls"][0]["function"]["arguments"] == R"({ "command" :  "ls" })");
    CHECK(assistant["tool_calls"][1]["function"]["arguments"] == "{}");
  }
  SECTION("without usage, the text events count") {
    RequestRecord reply = Reply("", {Call("c1", "bash", R"({"command": "ls"})")});
    reply.usage_reported = false;
    reply.text_event_ns = {1, 2, 3};
    model.replies = {reply};
    AgentLoopOptions options;
    options.limits.max_steps = 2;
    CHECK(Run(model, tools, options).completion_tokens == 6);
  }
  SECTION("a reply cut by max_tokens with no usable call: truncated") {
    model.replies = {Reply("", {Call("c1", "bash", R"({"comm)")}, "length")};
    CHECK(Run(model, tools).termination_reason == "truncated");
    CHECK(tools.calls.empty());
    model.replies = {Reply("I was saying", {}, "length")};
    CHECK(Run(model, tools).termination_reason == "truncated");
  }
  SECTION("a cut reply whose calls are usable goes on") {
    model.replies = {Reply("", {Call("c1", "bash", R"({"command": "ls"})")}, "length"),
                     Reply("", {Call("c2", "submit", "{}")})};
    CHECK(Run(model, tools).termination_reason == "completed");
  }
}

TEST_CASE("agent_loop: long observations keep their head and tail", "[agent_loop]") {
  CHECK(CutObservation("short", 10) == "short");
  CHECK(CutObservation("0123456789", 10) == "0123456789");
  CHECK(CutObservation("0123456789abcdef", 10) == "01234\n[... 6 bytes left out ...]\nbcdef");
  // UTF-8: "é" is 2 bytes; cuts never split a character.
  const std::string e = "\xC3\xA9";
  CHECK(CutObservation(e + e + e + e + e + e, 5) == e + "\n[... 8 bytes left out ...]\n" + e);
  CHECK(CutObservation("abcd" + e + e + e + "wxyz", 9) == "abcd\n[... 6 bytes left out ...]\nwxyz");

  ScriptedModel model;
  model.replies = {Reply("", {Call("c1", "bash", R"({"command": "big"})")}), Reply("ok")};
  FakeTools tools;
  AgentLoopOptions options;
  options.limits.max_observation_bytes = 20;
  const AgentLoopResult r = Run(model, tools, options);
  const std::string cut = "aaaaaaaaaa\n[... 80 bytes left out ...]\nzzzzzzzzzz";
  CHECK(r.transcript["turns"][0]["calls"][0]["observation"] == cut);
  CHECK(model.seen[1].messages.back()["content"] == cut);

  // Tool output that is not UTF-8 goes back with U+FFFD for each bad byte (a request body must be
  // valid JSON).
  model.replies = {Reply("", {Call("c1", "bash", R"({"command": "binary"})")}), Reply("ok")};
  model.seen.clear();
  const AgentLoopResult binary = Run(model, tools);
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(model.seen[1].messages.back()["content"] == "a" + fffd + fffd + "b" + fffd + fffd + fffd);
  CHECK_NOTHROW(model.seen[1].messages.dump());
  CHECK(binary.termination_reason == "no_action");
}

TEST_CASE("agent_loop: calls written as text are read by the selected format",
          "[agent_loop][text_calls]") {
  const std::string qwen =
      "I will look.\n<tool_call>\n<function=bash>\n<parameter=command>\nls -la\n</parameter>\n"
      "</function>\n</tool_call>";
  const std::string hermes = "<tool_call>\n{\"name\": \"submit\", \"arguments\": {}}\n</tool_call>";
  FakeTools tools;
  ScriptedModel model;
  model.replies = {Reply(qwen), Reply(hermes)};

  SECTION("auto reads both; each turn and the episode record how") {
    const AgentLoopResult r = Run(model, tools);  // kAuto is the default
    CHECK(r.termination_reason == "completed");
    CHECK(r.tool_call_source == "mixed");
    CHECK(r.transcript["turns"][0]["source"] == "qwen_xml");
    CHECK(r.transcript["turns"][1]["source"] == "hermes");
    CHECK(r.transcript["turns"][0]["calls"][0]["id"] == "text_call_0");
    CHECK(r.transcript["turns"][0]["calls"][0]["format"] == "qwen_xml");
    REQUIRE(tools.calls.size() == 2);
    CHECK(tools.calls[0] == std::make_pair(std::string("bash"), json{{"command", "ls -la"}}));
    // The assistant message keeps its markup and has no tool_calls; the results go back as one
    // user message of <tool_response> blocks.
    const json& messages = model.seen[1].messages;
    REQUIRE(messages.size() == 4);
    CHECK(messages[2] == json{{"role", "assistant"}, {"content", qwen}});
    CHECK(messages[3] ==
          json{{"role", "user"}, {"content", "<tool_response>\nran: ls -la\n</tool_response>"}});
  }
  SECTION("qwen_xml alone") {
    AgentLoopOptions options;
    options.text_format = ToolCallFormat::kQwenXml;
    model.replies = {Reply(qwen), Reply("done")};
    const AgentLoopResult r = Run(model, tools, options);
    CHECK(r.termination_reason == "no_action");
    CHECK(r.tool_call_source == "qwen_xml");
  }
  SECTION("hermes alone") {
    AgentLoopOptions options;
    options.text_format = ToolCallFormat::kHermes;
    model.replies = {Reply("Submitting.\n" + hermes)};
    const AgentLoopResult r = Run(model, tools, options);
    CHECK(r.termination_reason == "completed");
    CHECK(r.tool_call_source == "hermes");
  }
  SECTION("native leaves text calls alone") {
    AgentLoopOptions options;
    options.text_format = ToolCallFormat::kNative;
    const AgentLoopResult r = Run(model, tools, options);
    CHECK(r.termination_reason == "no_action");
    CHECK(r.steps == 1);
    CHECK(r.tool_call_source == "");
    CHECK(tools.calls.empty());
  }
  SECTION("native calls win over text in the same reply") {
    model.replies = {Reply(qwen, {Call("n1", "submit", "{}")})};
    const AgentLoopResult r = Run(model, tools);
    CHECK(r.tool_call_source == "native");
    REQUIRE(tools.calls.size() == 1);
    CHECK(tools.calls[0].first == "submit");
  }
  SECTION("markup that is no call: a malformed turn answered with the expected format") {
    AgentLoopOptions options;
    options.text_format = ToolCallFormat::kQwenXml;
    options.limits.max_format_errors = 2;
    model.replies = {
        Reply("<tool_call>\n<function=bash>\n<parameter=command>\nls\n</function>\n"
              "</tool_call>")};
    const AgentLoopResult r = Run(model, tools, options);
    CHECK(r.termination_reason == "protocol_error");
    CHECK(r.format_errors == 2);
    CHECK(r.steps == 2);
    const std::string reply =
        "error: your reply has tool calls that could not be read:\n"
        "tool call at byte 28: <parameter=command> is not closed by </parameter>\n"
        "Write each call as:\n<tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n"
        "</parameter>\n</function>\n</tool_call>";
    CHECK(model.seen[1].messages.back() == json{{"role", "user"}, {"content", reply}});
    CHECK(r.transcript["turns"][0]["format_error"] == reply);
  }
}

// The two shared fixtures through the reader and the loop's extraction: native calls from the
// fragments, the Qwen XML call from the content.
TEST_CASE("agent_loop: the loop's extraction reads both tool-call fixtures",
          "[agent_loop][fixtures]") {
  auto replay = [](const std::string& name) {
    const std::string body = testing::ReadFixture("sse/" + name);
    RequestRecord record;
    ChatStreamReader reader(record);
    const TimePoint t0 = Clock::now();
    reader.OnSent(t0);
    reader.OnResponseStart(200, "text/event-stream");
    for (size_t i = 0; i < body.size(); i += 7) {
      reader.OnBytes(std::string_view(body).substr(i, 7), t0 + std::chrono::microseconds(i));
    }
    TransferResult done;
    done.http_status = 200;
    done.t_end = t0 + std::chrono::seconds(1);
    reader.OnDone(done);
    REQUIRE(record.ok());
    return record;
  };
  const RequestRecord native = replay("constructed-tool-call-fragments.sse");
  for (ToolCallFormat format : {ToolCallFormat::kNative, ToolCallFormat::kAuto}) {
    const TurnCalls calls = ExtractTurnCalls(native, format);
    CHECK(calls.source == "native");
    REQUIRE(calls.calls.size() == 2);
    CHECK(calls.calls[0].id == "call_a");
    CHECK(calls.calls[0].name == "bash");
    CHECK(json::parse(calls.calls[0].arguments) == json{{"command", "ls -la"}});
    CHECK(calls.calls[1].name == "read_file");
    CHECK(json::parse(calls.calls[1].arguments) == json{{"path", "src/main.c"}});
    CHECK(calls.formats == std::vector<std::string>{"native", "native"});
  }
  const RequestRecord qwen = replay("constructed-qwen-xml-tool-call-in-content.sse");
  for (ToolCallFormat format : {ToolCallFormat::kQwenXml, ToolCallFormat::kAuto}) {
    const TurnCalls calls = ExtractTurnCalls(qwen, format);
    CHECK(calls.source == "qwen_xml");
    CHECK(calls.errors.empty());
    REQUIRE(calls.calls.size() == 1);
    CHECK(calls.calls[0].name == "bash");
    CHECK(json::parse(calls.calls[0].arguments) == json{{"command", "ls -la src"}});
  }
  CHECK(ExtractTurnCalls(qwen, ToolCallFormat::kNative).calls.empty());
  CHECK(ExtractTurnCalls(qwen, ToolCallFormat::kNative).source == "");
  CHECK(ExtractTurnCalls(qwen, ToolCallFormat::kHermes).calls.empty());
}

TEST_CASE("agent_loop: a scripted conversation against the mock server, end to end",
          "[agent_loop][mock]") {
  MockConfig config;
  config.ttft_ms = 5;
  config.decode_tps = 2000;
  config.usage = MockUsageStyle::kSeparateChunk;
  config.answers = ParseMockAnswers(R"({"answers": [{"match": "Fix the build", "turns": [
      {"content": "Looking.", "tool_calls": [{"name": "bash", "arguments": {"command": "ls -la"}}]},
      {"tool_calls": [{"name": "bash", "arguments": {"command": "make"}},
                      {"name": "bash", "arguments": {"command": "make test"}}]},
      {"content": "Done.", "tool_calls": [{"name": "submit", "arguments": {}}]}]}]})",
                                    "script.json");
  MockServer server(config);
  server.Start();
  ServerInfo info;
  const std::string url = server.base_url();
  const AgentModel model = [&](const ChatRequest& request, double remaining_s) {
    return SendAgentTurn(url, info, request, 10, std::min(30.0, remaining_s));
  };
  FakeTools tools;
  const AgentLoopResult r = RunAgentLoop(Base(), tools, model);
  server.Stop();

  CHECK(r.termination_reason == "completed");
  CHECK(r.tool_call_source == "native");
  CHECK(r.steps == 3);
  CHECK(server.chat_requests() == 3);
  REQUIRE(tools.calls.size() == 4);
  CHECK(tools.calls[0] == std::make_pair(std::string("bash"), json{{"command", "ls -la"}}));
  CHECK(tools.calls[1] == std::make_pair(std::string("bash"), json{{"command", "make"}}));
  CHECK(tools.calls[2] == std::make_pair(std::string("bash"), json{{"command", "make test"}}));
  CHECK(tools.calls[3] == std::make_pair(std::string("submit"), json::object()));
  CHECK(r.final_message == "Done.");
  REQUIRE(r.requests.size() == 3);
  int64_t tokens = 0;
  for (size_t i = 0; i < r.requests.size(); ++i) {
    const RequestRecord& q = r.requests[i];
    CAPTURE(i);
    CHECK(q.ok());
    CHECK(q.label == "agent-turn-" + std::to_string(i + 1));
    CHECK(q.finish_reason == "tool_calls");
    CHECK(q.usage_reported);
    CHECK(q.usage.prompt_tokens > 0);
    CHECK(q.first_tool_call_ns > 0);
    CHECK(q.end_ns >= q.first_tool_call_ns);
    tokens += q.usage.completion_tokens;
  }
  CHECK(r.requests[1].tool_calls[1].id == "call_1_1");
  // Usage: content plus the arguments text, by the mock tokenizer.
  CHECK(r.requests[0].usage.completion_tokens ==
        MockTokenCount("Looking.") + MockTokenCount(R"({"command":"ls -la"})"));
  CHECK(r.completion_tokens == tokens);
  // Each request resent the conversation so far: system, user, then 2 + 3 messages.
  CHECK(r.requests[2].usage.prompt_tokens > r.requests[1].usage.prompt_tokens);
  CHECK(r.model_ms > 0);
  CHECK(r.wall_ms >= r.model_ms);
}
