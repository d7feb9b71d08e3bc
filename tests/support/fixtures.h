#pragma once
// Reading the test fixtures under tests/fixtures/ (never outside the project: it stands alone).
#include <string>
#include <vector>

namespace evalrun::testing {

// The bytes of tests/fixtures/<relative>; throws std::runtime_error naming the path if absent.
std::string ReadFixture(const std::string& relative);

// The file names in tests/fixtures/<dir>, sorted.
std::vector<std::string> FixtureNames(const std::string& dir);

// A `curl -i` capture: status line, headers, a blank line (CRLF or LF), the body.
struct HttpCapture {
  int status = 0;
  std::string head;          // status line and headers
  std::string content_type;  // from the Content-Type header, "" when absent
  std::string body;
};
HttpCapture SplitHttpCapture(const std::string& text);
HttpCapture ReadHttpCapture(const std::string& relative);

}  // namespace evalrun::testing
