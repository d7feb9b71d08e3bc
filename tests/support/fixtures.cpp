#include "tests/support/fixtures.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace evalrun::testing {

std::string ReadFixture(const std::string& relative) {
  const std::string path = std::string(EVALRUN_TEST_FIXTURES) + "/" + relative;
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("missing fixture " + path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::vector<std::string> FixtureNames(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(EVALRUN_TEST_FIXTURES) + "/" + dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

HttpCapture SplitHttpCapture(const std::string& text) {
  const size_t crlf = text.find("\r\n\r\n");
  const size_t lf = text.find("\n\n");
  if (crlf == std::string::npos && lf == std::string::npos) {
    throw std::runtime_error("not a curl -i capture: no blank line after the headers");
  }
  HttpCapture capture;
  if (crlf != std::string::npos && (lf == std::string::npos || crlf < lf)) {
    capture.head = text.substr(0, crlf);
    capture.body = text.substr(crlf + 4);
  } else {
    capture.head = text.substr(0, lf);
    capture.body = text.substr(lf + 2);
  }
  capture.status = std::stoi(capture.head.substr(capture.head.find(' ') + 1, 3));
  std::string lower = capture.head;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const size_t at = lower.find("\ncontent-type:");
  if (at != std::string::npos) {
    const size_t start = capture.head.find_first_not_of(' ', at + 14);
    const size_t end = capture.head.find_first_of("\r\n", start);
    capture.content_type = capture.head.substr(start, end - start);
  }
  return capture;
}

HttpCapture ReadHttpCapture(const std::string& relative) {
  return SplitHttpCapture(ReadFixture(relative));
}

}  // namespace evalrun::testing
