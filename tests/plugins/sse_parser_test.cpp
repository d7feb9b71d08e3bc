// Specification of SseParser (plugins/sse_parser.h). Every case is fed whole, one byte at a time
// and in random slices, because libcurl hands over bytes in pieces of any size (STYLE.md 9).
#include "plugins/sse_parser.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/catch.h"

#include "tests/support/allocation_counter.h"
#include "tests/support/fixtures.h"

namespace evalrun {
namespace {

struct Event {
  std::string type;
  std::string data;
  std::string id;
  bool operator==(const Event&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Event& e) {
  return os << "{type: \"" << e.type << "\", data: \"" << e.data << "\", id: \"" << e.id << "\"}";
}

Event Message(std::string data, std::string id = "") {
  return Event{"message", std::move(data), std::move(id)};
}

class Recorder : public SseHandler {
 public:
  void OnEvent(const SseEvent& event) override {
    events.push_back(
        Event{std::string(event.type), std::string(event.data), std::string(event.id)});
  }
  std::vector<Event> events;
};

std::vector<Event> ParseWhole(std::string_view body) {
  SseParser parser;
  Recorder recorder;
  parser.Feed(body, recorder);
  parser.Finish(recorder);
  return recorder.events;
}

std::vector<Event> ParseBytewise(std::string_view body) {
  SseParser parser;
  Recorder recorder;
  for (size_t i = 0; i < body.size(); ++i) parser.Feed(body.substr(i, 1), recorder);
  parser.Finish(recorder);
  return recorder.events;
}

// Slices of random length, empty ones included; the seed picks the typical slice size too.
std::vector<Event> ParseRandomSlices(std::string_view body, uint32_t seed) {
  std::mt19937 rng(seed);
  constexpr size_t kMaxSlice[] = {1, 2, 3, 5, 8, 16, 64, 512};
  std::uniform_int_distribution<size_t> length(0, kMaxSlice[seed % std::size(kMaxSlice)]);
  SseParser parser;
  Recorder recorder;
  for (size_t i = 0; i < body.size();) {
    const size_t n = std::min(length(rng), body.size() - i);
    parser.Feed(body.substr(i, n), recorder);
    i += n;
  }
  parser.Finish(recorder);
  return recorder.events;
}

// Checks that `body` gives `expected` however it is sliced.
void CheckAllSlicings(std::string_view body, const std::vector<Event>& expected, int seeds = 50) {
  CHECK(ParseWhole(body) == expected);
  CHECK(ParseBytewise(body) == expected);
  for (int seed = 0; seed < seeds; ++seed) {
    INFO("seed " << seed);
    REQUIRE(ParseRandomSlices(body, static_cast<uint32_t>(seed)) == expected);
  }
}

std::string ReadFixture(const std::string& name) { return testing::ReadFixture("sse/" + name); }

std::vector<std::string> FixtureNames() { return testing::FixtureNames("sse"); }

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// A `curl -i` capture is status line, headers, a blank line (CRLF or LF) and the body.
struct Capture {
  std::string head;
  std::string body;
};

Capture SplitCapture(const std::string& text) {
  const testing::HttpCapture c = testing::SplitHttpCapture(text);
  return {c.head, c.body};
}

// What the fixture's body is, from its Content-Type (constructed .sse files are event streams).
enum class BodyKind { kEventStream, kJson, kPrometheus };

BodyKind KindOf(const std::string& name, const std::string& head) {
  if (EndsWith(name, ".sse")) return BodyKind::kEventStream;
  if (head.find("Content-Type: text/event-stream") != std::string::npos) {
    return BodyKind::kEventStream;
  }
  if (head.find("Content-Type: application/json") != std::string::npos) return BodyKind::kJson;
  REQUIRE(head.find("Content-Type: text/plain") != std::string::npos);
  return BodyKind::kPrometheus;
}

// An oracle independent of the parser for the fixtures, each of whose events is one
// `data: ` line: those lines, in order.
std::vector<Event> DataLines(const std::string& body) {
  std::vector<Event> events;
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("data: ", 0) == 0) events.push_back(Message(line.substr(6)));
  }
  return events;
}

TEST_CASE("sse: every fixture gives the same events whole, byte by byte and in random slices",
          "[sse]") {
  const std::vector<std::string> names = FixtureNames();
  REQUIRE(names.size() == 17);
  for (const std::string& name : names) {
    INFO(name);
    const std::string text = ReadFixture(name);
    const Capture capture = EndsWith(name, ".http") ? SplitCapture(text) : Capture{"", text};
    std::vector<Event> expected;
    switch (KindOf(name, capture.head)) {
      case BodyKind::kEventStream:
        expected = DataLines(capture.body);
        REQUIRE(!expected.empty());
        break;
      case BodyKind::kJson:
        expected = {Event{"json", capture.body, ""}};
        break;
      case BodyKind::kPrometheus:
        // /metrics is Prometheus text; a client never hands it to the SSE parser. If one did,
        // nothing comes out: its lines (`# HELP ...`, `llamacpp:requests_processing 0`) read as
        // unknown fields, and without a `data` field there is no event.
        expected = {};
        break;
    }
    CheckAllSlicings(capture.body, expected, 200);
  }
}

TEST_CASE("sse: a JSON body is detected and delivered whole by Finish()", "[sse]") {
  const std::string body = SplitCapture(ReadFixture("llamacpp-b4748-bad-json.http")).body;
  SseParser parser;
  Recorder recorder;
  parser.Feed(body.substr(0, 10), recorder);
  CHECK(parser.json_mode());
  parser.Feed(body.substr(10), recorder);
  CHECK(recorder.events.empty());
  parser.Finish(recorder);
  CHECK(recorder.events == std::vector<Event>{{"json", body, ""}});
  CHECK(parser.json_mode());  // still describes the finished stream
  CHECK(parser.events_emitted() == 1);

  SECTION("an array body too, after leading whitespace, which stays part of the body") {
    CheckAllSlicings(" \r\n\t[1, 2]\n", {{"json", " \r\n\t[1, 2]\n", ""}});
  }
  SECTION("an empty or whitespace-only body gives nothing") {
    CheckAllSlicings("", {});
    CheckAllSlicings(" \r\n\n", {});
  }
}

TEST_CASE("sse: LF, CRLF and lone CR all end lines", "[sse]") {
  const std::string eol = GENERATE(as<std::string>{}, "\n", "\r\n", "\r");
  const std::string body = "data: a" + eol + "data: b" + eol + eol + "data: c" + eol + eol;
  CheckAllSlicings(body, {Message("a\nb"), Message("c")});
}

TEST_CASE("sse: a CRLF split across two feeds is one line end", "[sse]") {
  SseParser parser;
  Recorder recorder;
  parser.Feed("data: a\r", recorder);
  // Were this LF a line end of its own, the blank line would end the event after "a".
  parser.Feed("\ndata: b\r", recorder);
  parser.Feed("\n\r", recorder);
  CHECK(recorder.events == std::vector<Event>{Message("a\nb")});
  parser.Feed("\n", recorder);  // the LF of the blank line's CRLF: no second event
  parser.Finish(recorder);
  CHECK(recorder.events == std::vector<Event>{Message("a\nb")});
}

TEST_CASE("sse: the event is delivered as soon as its blank line arrives", "[sse]") {
  SseParser parser;
  Recorder recorder;
  parser.Feed("data: x\n", recorder);
  CHECK(recorder.events.empty());
  parser.Feed("\n", recorder);
  CHECK(recorder.events == std::vector<Event>{Message("x")});
  CHECK(parser.events_emitted() == 1);
}

TEST_CASE("sse: comment lines are ignored", "[sse]") {
  CheckAllSlicings(": keep-alive\ndata: x\n:\n: mid-event\ndata: y\n\n: only a comment\n\n",
                   {Message("x\ny")});
}

TEST_CASE("sse: data lines are joined with \\n, empty ones included", "[sse]") {
  CheckAllSlicings("data: a\ndata:\ndata\ndata: d\n\n", {Message("a\n\n\nd")});
  SECTION("a lone `data` line is an event with empty data") {
    CheckAllSlicings("data\n\n", {Message("")});
  }
}

TEST_CASE("sse: only one space after the colon is removed", "[sse]") {
  const auto [line, data] = GENERATE(table<std::string, std::string>({
      {"data:x", "x"},
      {"data: x", "x"},
      {"data:  x", " x"},
      {"data:\tx", "\tx"},
      {"data: x ", "x "},
      {"data: a: b", "a: b"},
      {"data:", ""},
      {"data: ", ""},
  }));
  INFO(line);
  CheckAllSlicings(line + "\n\n", {Message(data)});
}

TEST_CASE("sse: event and id fields", "[sse]") {
  SECTION("the type applies to one event, the id persists until changed") {
    CheckAllSlicings("event: usage\nid: 7\ndata: x\n\ndata: y\n\nid: 8\ndata: z\n\n",
                     {{"usage", "x", "7"}, {"message", "y", "7"}, {"message", "z", "8"}});
  }
  SECTION("an empty `id` clears it; an empty `event` means message") {
    CheckAllSlicings("id: 1\ndata: x\n\nid\nevent:\ndata: y\n\n",
                     {{"message", "x", "1"}, {"message", "y", ""}});
  }
  SECTION("an id holding NUL is ignored, as WHATWG says") {
    using namespace std::string_literals;
    CheckAllSlicings("id: 1\ndata: x\n\nid: a\0b\ndata: y\n\n"s,
                     {{"message", "x", "1"}, {"message", "y", "1"}});
  }
  SECTION("fields are case-sensitive; unknown fields and retry are ignored") {
    CheckAllSlicings("Data: no\nretry: 100\nfoo: bar\nevent: e\ndata: x\n\n", {{"e", "x", ""}});
  }
  SECTION("a block without data delivers nothing and its type does not leak") {
    CheckAllSlicings("event: ping\n\ndata: x\n\n", {Message("x")});
  }
}

TEST_CASE("sse: several events in one slice", "[sse]") {
  SseParser parser;
  Recorder recorder;
  parser.Feed("data: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4", recorder);
  CHECK(recorder.events == std::vector<Event>{Message("1"), Message("2"), Message("3")});
  parser.Finish(recorder);
  CHECK(recorder.events.back() == Message("4"));
  CHECK(parser.events_emitted() == 4);
}

TEST_CASE("sse: a UTF-8 character split between feeds arrives intact", "[sse]") {
  const std::string text = "你好, 🙂 wörld";  // 3-, 4- and 2-byte characters
  const std::string body = "data: " + text + "\n\n";
  for (size_t cut = 0; cut <= body.size(); ++cut) {
    for (size_t cut2 = cut; cut2 <= body.size(); ++cut2) {
      SseParser parser;
      Recorder recorder;
      parser.Feed(std::string_view(body).substr(0, cut), recorder);
      parser.Feed(std::string_view(body).substr(cut, cut2 - cut), recorder);
      parser.Feed(std::string_view(body).substr(cut2), recorder);
      parser.Finish(recorder);
      INFO("cuts at " << cut << " and " << cut2);
      REQUIRE(recorder.events == std::vector<Event>{Message(text)});
    }
  }
}

TEST_CASE("sse: [DONE] is passed through as data", "[sse]") {
  CheckAllSlicings("data: {\"a\":1}\n\ndata: [DONE]\n\n",
                   {Message("{\"a\":1}"), Message("[DONE]")});
}

TEST_CASE("sse: an error object after normal chunks arrives as an event", "[sse]") {
  const std::vector<Event> events = ParseWhole(ReadFixture("constructed-midstream-error.sse"));
  REQUIRE(events.size() == 2);
  CHECK(events[1] == Message(R"({"error":{"message":"CUDA error: out of memory",)"
                             R"("type":"server_error","code":500}})"));
}

TEST_CASE("sse: Finish() delivers a final event that lacked its blank line", "[sse]") {
  SECTION("the last line has no line end") {
    SseParser parser;
    Recorder recorder;
    parser.Feed("data: a\n\ndata: b", recorder);
    CHECK(recorder.events == std::vector<Event>{Message("a")});
    parser.Finish(recorder);
    CHECK(recorder.events == std::vector<Event>{Message("a"), Message("b")});
    parser.Finish(recorder);  // a second Finish() delivers nothing more
    CHECK(recorder.events.size() == 2);
  }
  SECTION("the last line ended but no blank line followed") {
    CheckAllSlicings("data: a\n\nevent: e\ndata: b\r\n", {Message("a"), {"e", "b", ""}});
  }
  SECTION("a trailing comment or field without data gives nothing") {
    CheckAllSlicings("data: a\n\n: bye", {Message("a")});
    CheckAllSlicings("data: a\n\nevent: e", {Message("a")});
  }
}

TEST_CASE("sse: feeding after Finish() starts a new stream", "[sse]") {
  SseParser parser;
  Recorder recorder;
  parser.Feed("{\"error\":1}", recorder);
  parser.Finish(recorder);
  CHECK(parser.json_mode());
  parser.Feed("id: 5\ndata: x\n\n", recorder);
  CHECK_FALSE(parser.json_mode());
  CHECK(parser.events_emitted() == 1);
  parser.Finish(recorder);
  parser.Feed("data: y\n\n", recorder);  // the id of the earlier stream is forgotten
  CHECK(recorder.events ==
        std::vector<Event>{{"json", "{\"error\":1}", ""}, Message("x", "5"), Message("y")});
}

TEST_CASE("sse: Reset() forgets a half-read event", "[sse]") {
  SseParser parser;
  Recorder recorder;
  parser.Feed("data: a\n\nevent: e\nid: 3\ndata: partial\r", recorder);
  CHECK(parser.events_emitted() == 1);
  parser.Reset();
  CHECK(parser.events_emitted() == 0);
  parser.Feed("\ndata: new\n\n", recorder);  // the LF no longer pairs with the forgotten CR
  parser.Finish(recorder);
  CHECK(recorder.events == std::vector<Event>{Message("a"), Message("new")});

  SECTION("Reset() in JSON mode") {
    parser.Feed("{\"a\":", recorder);
    CHECK(parser.json_mode());
    parser.Reset();
    CHECK_FALSE(parser.json_mode());
    parser.Feed("data: b\n\n", recorder);
    CHECK(recorder.events.back() == Message("b"));
  }
}

TEST_CASE("sse: a leading byte order mark is ignored", "[sse]") {
  const std::string bom = "\xEF\xBB\xBF";
  CheckAllSlicings(bom + "data: x\n\n", {Message("x")});
  CheckAllSlicings(bom + "{\"a\":1}", {{"json", "{\"a\":1}", ""}});
  SECTION("only at the very start") {
    CheckAllSlicings("\n" + bom + "data: x\n\n", {});
  }
}

TEST_CASE("sse: leading blank lines before an event stream", "[sse]") {
  CheckAllSlicings("\r\n\n \ndata: x\n\n", {Message("x")});
  SECTION("a line of spaces is a field named by them, not a blank line") {
    CheckAllSlicings("data: x\n \ndata: y\n\n", {Message("x\ny")});
  }
}

// Random streams built from the rules of the WHATWG standard, with the events those rules give,
// fed in random slices: every line end, comments, event/id/retry/unknown fields, data lines with
// and without the space, multi-byte characters, blocks without data, no final blank line.
TEST_CASE("sse: random streams give the events the standard says", "[sse]") {
  const char* kPayloads[] = {
      "x",      " leading space", "a: b", "{\"c\":\"你好\"}", "🙂", "[DONE]", "",
      "trail ", "data: nested",   ":"};
  const char* kEndings[] = {"\n", "\r\n", "\r"};
  for (uint32_t seed = 0; seed < 300; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&rng](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
    std::string stream;
    std::vector<Event> expected;
    std::string id;
    bool previous_was_cr = false;
    auto emit_line = [&](const std::string& text) {
      std::string eol = kEndings[pick(3)];
      // An empty line ended by LF right after a CR would make one CRLF with it.
      if (previous_was_cr && text.empty() && eol == "\n") eol = "\r\n";
      stream += text + eol;
      previous_was_cr = eol == "\r";
    };
    const size_t blocks = pick(8);
    for (size_t b = 0; b < blocks; ++b) {
      std::string type;
      std::string data;
      bool has_data = false;
      const size_t lines = 1 + pick(5);
      for (size_t l = 0; l < lines; ++l) {
        switch (pick(7)) {
          case 0:
            emit_line(": comment " + std::to_string(l));
            break;
          case 1:
            type = pick(2) ? "usage" : "";
            emit_line("event: " + type);
            break;
          case 2:
            id = std::to_string(pick(100));
            emit_line("id:" + id);
            break;
          case 3:
            emit_line(pick(2) ? "retry: 3000" : "unknown: field");
            break;
          default: {
            const std::string payload = kPayloads[pick(std::size(kPayloads))];
            const bool spaced = payload.empty() || payload[0] == ' ' || pick(2);
            emit_line((spaced ? "data: " : "data:") + payload);
            data += (has_data ? "\n" : "") + payload;
            has_data = true;
          }
        }
      }
      const bool last = b + 1 == blocks;
      if (!(last && pick(3) == 0)) emit_line("");  // the final blank line may be missing
      if (has_data) expected.push_back(Event{type.empty() ? "message" : type, data, id});
    }
    INFO("seed " << seed << ", stream: " << stream);
    CheckAllSlicings(stream, expected, 5);
  }
}

// Records nothing, so that only the parser's allocations are counted.
class Counter : public SseHandler {
 public:
  void OnEvent(const SseEvent& event) override {
    ++events;
    bytes += event.data.size();
  }
  int64_t events = 0;
  size_t bytes = 0;
};

TEST_CASE("sse: no allocation per event once buffers have grown", "[sse]") {
  const std::string body = SplitCapture(ReadFixture("llamacpp-b4748-chat-stream.http")).body;
  std::vector<std::string_view> slices;  // built before counting: the vector allocates
  std::mt19937 rng(1);
  std::uniform_int_distribution<size_t> length(1, 100);
  for (size_t i = 0; i < body.size();) {
    const size_t n = std::min(length(rng), body.size() - i);
    slices.push_back(std::string_view(body).substr(i, n));
    i += n;
  }
  SseParser parser;
  Counter counter;
  const long start = evalrun::testing::AllocationCount();
  for (std::string_view slice : slices) parser.Feed(slice, counter);  // buffers grow here
  parser.Finish(counter);
  const long before = evalrun::testing::AllocationCount();
  CHECK(before > start);  // the counter counts
  for (int pass = 0; pass < 10; ++pass) {
    for (std::string_view slice : slices) parser.Feed(slice, counter);
    parser.Finish(counter);
  }
  const long allocations = evalrun::testing::AllocationCount() - before;
  CHECK(allocations == 0);
  CHECK(counter.events == int64_t{11} * 26);  // 26 events a pass, [DONE] included
}

}  // namespace
}  // namespace evalrun
