#pragma once
// A pure, incremental parser for Server-Sent Events (the WHATWG "event stream" format) as
// OpenAI-compatible servers send them. Fed arbitrary byte slices (one byte at a time is fine),
// it emits each complete event exactly once. No I/O, no clock, no allocation per event once its
// buffers have grown to the largest event seen.
//
// Handles: LF, CRLF and CR line ends (a CRLF split across two feeds included); `:` comment lines;
// multi-line `data:` (joined with "\n"); `event:` and `id:` fields; an optional single space
// after the colon; events split anywhere, including inside a UTF-8 character; several events in
// one slice; a final event without the closing blank line (flushed by Finish()).
//
// A body that is not an event stream but plain JSON (an HTTP error answered as
// `{"error":{...}}`, or a non-streamed completion) is detected from its first non-whitespace byte
// being `{` or `[`: the whole body is then delivered as one event of type "json" by Finish().
#include <cstdint>
#include <string>
#include <string_view>

#include "core/limits.h"

namespace evalrun {

struct SseEvent {
  std::string_view type;  // the `event:` field, "message" when absent, "json" for a JSON body
  std::string_view data;  // data lines joined with "\n"; "[DONE]" is passed through as is
  std::string_view id;    // the `id:` field, "" when absent
  // The views are valid only during the OnEvent call.
};

class SseHandler {
 public:
  virtual ~SseHandler() = default;
  virtual void OnEvent(const SseEvent& event) = 0;
};

// Caps (docs/limits.md): a line or an event's data longer than `max_line_bytes`, or a JSON body
// longer than `max_body_bytes`, stops the parser: overflow() says what, nothing more is delivered
// (Finish() included) and later bytes are ignored, so a server that never sends a newline costs
// at most the cap. The check is a size comparison: no allocation per event.
class SseParser {
 public:
  enum class Overflow { kNone, kLine, kBody };
  explicit SseParser(size_t max_line_bytes = limits::kSseLineBytes,
                     size_t max_body_bytes = limits::kResponseBodyBytes)
      : max_line_(max_line_bytes), max_body_(max_body_bytes) {}

  // Parses `bytes`, calling handler.OnEvent for every event completed by them.
  void Feed(std::string_view bytes, SseHandler& handler);
  // End of stream: delivers a pending event that lacked its closing blank line, or the whole
  // body in JSON mode. Feeding after Finish() starts a new stream.
  void Finish(SseHandler& handler);
  // Forget everything (keeps buffer capacity for reuse).
  void Reset();

  bool json_mode() const { return mode_ == Mode::kJson; }
  Overflow overflow() const { return overflow_; }
  size_t max_line_bytes() const { return max_line_; }
  size_t max_body_bytes() const { return max_body_; }
  int64_t events_emitted() const { return events_emitted_; }

 private:
  enum class Mode { kUndecided, kEvents, kJson };

  void StartStream();
  void FeedUndecided(std::string_view bytes, SseHandler& handler);
  void FeedEvents(std::string_view bytes, SseHandler& handler);
  // `in_feed`: the line is a view into the bytes being fed (valid until FeedEvents returns),
  // so an event's first data line can be delivered from there without a copy.
  void ProcessLine(std::string_view line, SseHandler& handler, bool in_feed = false);
  void KeepData();  // copies a data line still held as a view into data_
  void DispatchEvent(SseHandler& handler);

  bool Overflowed(Overflow what);

  size_t max_line_;
  size_t max_body_;
  Overflow overflow_ = Overflow::kNone;
  Mode mode_ = Mode::kUndecided;
  bool finished_ = false;     // Finish() ran: the next Feed() starts a new stream
  int bom_matched_ = 0;       // bytes of a leading UTF-8 byte order mark seen so far (0..3)
  std::string line_;          // the current line while it spans feeds
  std::string data_;          // data lines of the current event, joined with "\n"
  std::string_view data_view_;  // or its one data line, still in the bytes being fed
  bool data_in_view_ = false;
  std::string type_;          // `event:` of the current event
  std::string id_;            // last event id (persists across events, as WHATWG says)
  std::string json_;          // undecided: leading whitespace; JSON mode: the whole body
  bool has_data_ = false;     // a `data:` line was seen for the current event
  bool last_was_cr_ = false;  // the last line ended in CR: a following LF belongs to it
  int64_t events_emitted_ = 0;
};

}  // namespace evalrun
