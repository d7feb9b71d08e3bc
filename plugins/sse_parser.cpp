#include "plugins/sse_parser.h"

#include <cstring>

// The line and field rules are those of the WHATWG HTML standard, 9.2.6 "Interpreting an event
// stream":
// https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
// An empty line dispatches the event, and only when at least one `data:` line was seen; the
// event type resets after every event, the last event id does not; `id` values holding NUL are
// ignored; unknown fields (`retry:` included — we never reconnect) are ignored; a leading UTF-8
// byte order mark is dropped. Where this parser departs from the standard it says so: Finish()
// delivers a final event that lacked its blank line (a browser would drop it), and a body that
// starts with `{` or `[` is JSON, not an event stream.
//
// State between feeds is one incomplete line (line_), the event being built (data_, type_, id_)
// and whether the previous line ended in CR. A line wholly inside one slice is parsed in place,
// without a copy; only data is copied, so a stream allocates nothing once data_ has grown.

namespace evalrun {
namespace {

constexpr char kBom[] = "\xEF\xBB\xBF";

bool IsJsonWhitespace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// The first CR or LF in `bytes` at or after `from`, or npos.
size_t FindLineEnd(std::string_view bytes, size_t from) {
  const char* begin = bytes.data() + from;
  const size_t n = bytes.size() - from;
  const auto* lf = static_cast<const char*>(std::memchr(begin, '\n', n));
  const size_t limit = lf ? static_cast<size_t>(lf - begin) : n;
  // CR is rare (some proxies, old servers): searching only up to the LF keeps this cheap.
  const auto* cr = static_cast<const char*>(std::memchr(begin, '\r', limit));
  if (cr) return from + static_cast<size_t>(cr - begin);
  if (lf) return from + limit;
  return std::string_view::npos;
}

}  // namespace

bool SseParser::Overflowed(Overflow what) {
  overflow_ = what;
  line_.clear();
  data_.clear();
  data_in_view_ = false;
  json_.clear();
  return true;
}

void SseParser::Feed(std::string_view bytes, SseHandler& handler) {
  if (finished_) StartStream();
  if (overflow_ != Overflow::kNone) return;
  switch (mode_) {
    case Mode::kUndecided:
      FeedUndecided(bytes, handler);
      break;
    case Mode::kEvents:
      FeedEvents(bytes, handler);
      break;
    case Mode::kJson:
      if (json_.size() + bytes.size() > max_body_) {
        Overflowed(Overflow::kBody);
        break;
      }
      json_.append(bytes);
      break;
  }
}

void SseParser::Finish(SseHandler& handler) {
  if (finished_) return;  // a second Finish() has nothing left to deliver
  finished_ = true;
  if (overflow_ != Overflow::kNone) return;
  if (mode_ == Mode::kJson) {
    ++events_emitted_;
    handler.OnEvent(SseEvent{"json", json_, ""});
    return;
  }
  if (mode_ != Mode::kEvents) return;  // an empty or whitespace-only body holds no event
  if (!line_.empty()) {
    // The last line had no line end. ProcessLine must not see line_ change under it, and
    // nothing it calls touches line_, so the view stays valid.
    ProcessLine(line_, handler);
    line_.clear();
  }
  DispatchEvent(handler);
}

void SseParser::Reset() {
  StartStream();
}

// Forgets the stream, keeping buffer capacity. json_mode() and events_emitted() describe the
// stream being fed or just finished: they keep their values after Finish() until the next Feed()
// calls this.
void SseParser::StartStream() {
  mode_ = Mode::kUndecided;
  finished_ = false;
  bom_matched_ = 0;
  line_.clear();
  data_.clear();
  data_in_view_ = false;
  type_.clear();
  id_.clear();
  json_.clear();
  has_data_ = false;
  last_was_cr_ = false;
  events_emitted_ = 0;
  overflow_ = Overflow::kNone;
}

// Until the first byte that is neither whitespace nor part of a leading byte order mark, the
// kind of body is unknown; those bytes wait in json_ and are replayed as event-stream lines
// (blank lines, which dispatch nothing) if the body turns out to be an event stream.
void SseParser::FeedUndecided(std::string_view bytes, SseHandler& handler) {
  for (size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (bom_matched_ < 3 && json_.size() == static_cast<size_t>(bom_matched_) &&
        c == kBom[bom_matched_]) {
      ++bom_matched_;
      json_ += c;
      continue;
    }
    if (IsJsonWhitespace(c)) {
      if (json_.size() >= max_line_) {  // a body of nothing but whitespace
        Overflowed(Overflow::kLine);
        return;
      }
      json_ += c;
      continue;
    }
    const size_t bom = bom_matched_ == 3 ? 3 : 0;
    if (c == '{' || c == '[') {
      mode_ = Mode::kJson;
      json_.erase(0, bom);
      if (json_.size() + bytes.size() - i > max_body_) {
        Overflowed(Overflow::kBody);
        return;
      }
      json_.append(bytes.substr(i));
      return;
    }

    mode_ = Mode::kEvents;
    FeedEvents(std::string_view(json_).substr(bom), handler);
    json_.clear();
    if (overflow_ == Overflow::kNone) FeedEvents(bytes.substr(i), handler);
    return;
  }
}

void SseParser::KeepData() {
  if (!data_in_view_) return;
  data_.assign(data_view_);
  data_in_view_ = false;
}

void SseParser::FeedEvents(std::string_view bytes, SseHandler& handler) {
  struct KeepOnReturn {  // a data line held as a view must outlive these bytes
    SseParser& parser;
    ~KeepOnReturn() { parser.KeepData(); }
  } keep{*this};
  size_t i = 0;
  while (i < bytes.size()) {
    if (last_was_cr_) {
      last_was_cr_ = false;
      if (bytes[i] == '\n') {  // the LF of a CRLF, possibly in a later feed than its CR
        ++i;
        continue;
      }
    }
    const size_t end = FindLineEnd(bytes, i);
    const size_t length = (end == std::string_view::npos ? bytes.size() : end) - i;
    if (line_.size() + length > max_line_) {
      Overflowed(Overflow::kLine);
      return;
    }
    if (end == std::string_view::npos) {
      line_.append(bytes.substr(i));
      return;
    }
    if (line_.empty()) {
      ProcessLine(bytes.substr(i, end - i), handler, /*in_feed=*/true);
    } else {
      line_.append(bytes.substr(i, end - i));
      ProcessLine(line_, handler);
      line_.clear();
    }
    if (overflow_ != Overflow::kNone) return;
    last_was_cr_ = bytes[end] == '\r';
    i = end + 1;
  }
}

void SseParser::ProcessLine(std::string_view line, SseHandler& handler, bool in_feed) {
  if (line.empty()) {
    DispatchEvent(handler);
    return;
  }
  if (line.front() == ':') return;  // a comment, such as a keep-alive
  std::string_view field = line;
  std::string_view value;
  if (const size_t colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);  // one space only
  }
  if (field == "data") {
    if (!has_data_ && in_feed) {  // the usual event, one data line: delivered without a copy
      data_view_ = value;
      data_in_view_ = true;
      has_data_ = true;
      return;
    }
    KeepData();
    if (data_.size() + value.size() + 1 > max_line_) {  // many short data lines in one event
      Overflowed(Overflow::kLine);
      return;
    }
    if (has_data_) data_ += '\n';
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    type_.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) id_.assign(value);
  }
}

void SseParser::DispatchEvent(SseHandler& handler) {
  if (!has_data_) {  // a blank line after only comments, `event:` or `id:`: nothing to deliver
    type_.clear();
    return;
  }
  ++events_emitted_;
  handler.OnEvent(SseEvent{type_.empty() ? std::string_view("message") : std::string_view(type_),
                           data_in_view_ ? data_view_ : std::string_view(data_), id_});
  data_in_view_ = false;
  data_.clear();
  type_.clear();
  has_data_ = false;
}

}  // namespace evalrun
