#pragma once
// Plain HTTP request/response data, free of curl, so that code which only needs to describe or
// fake an HTTP exchange (server detection, tests) does not include the transport.
#include <functional>
#include <string>
#include <vector>

namespace evalrun {

struct HttpRequest {
  std::string method = "POST";
  std::string url;
  std::string body;
  std::vector<std::string> headers;  // "Name: value"
  double connect_timeout_s = 10;     // TCP connect
  double idle_timeout_s = 60;        // longest gap between two received byte runs
  double total_timeout_s = 600;      // the whole exchange
};

struct HttpResponse {
  int status = 0;         // 0 when no HTTP response arrived
  std::string body;
  std::string content_type;
  std::string error;      // transport failure in words ("" when a response arrived)
};

// A blocking GET/POST, as a seam: production code passes plugins/http_client's Fetch, tests pass
// a function that answers from fixtures.
using Fetcher = std::function<HttpResponse(const HttpRequest&)>;

}  // namespace evalrun
