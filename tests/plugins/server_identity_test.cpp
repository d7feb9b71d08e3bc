#include "plugins/server_identity.h"

#include "tests/support/catch.h"

#include "tests/support/fixtures.h"

namespace evalrun {
namespace {

using json = nlohmann::json;

const std::string kA = "http://10.0.0.1:8080";

// llama-server 0.7 as it reported itself (tests/fixtures/llama-0.7): -c 512, tiny.gguf.
ServerInfo Llama07() {
  const std::string base = "http://127.0.0.1:8080";
  const Fetcher fetch = [&base](const HttpRequest& request) {
    HttpResponse response;
    std::string fixture;
    if (request.url == base + "/v1/models") fixture = "llama-0.7/v1-models-c512.http";
    if (request.url == base + "/props") fixture = "llama-0.7/props-c512.http";
    if (fixture.empty()) {
      response.status = 404;
      return response;
    }
    const testing::HttpCapture http = testing::ReadHttpCapture(fixture);
    response.status = http.status;
    response.body = http.body;
    return response;
  };
  return DetectServer(base, fetch);
}

TEST_CASE("server_identity: llama.cpp's facts come from /v1/models meta and /props",
          "[server]") {
  const std::vector<IdentityFact> facts = ServerIdentity(Llama07());
  CHECK(facts == std::vector<IdentityFact>{{"model", "tiny.gguf"},
                                           {"server", "llama.cpp"},
                                           {"build", "b11669-Debian"},
                                           {"context", "512"},
                                           {"weights file", "tiny.gguf"},
                                           {"weights size", "464640"},
                                           {"parameters", "116160"},
                                           {"chat template", facts[7].second}});
  CHECK(facts[7].second.size() == 16);
}

TEST_CASE("server_identity: the same model in another folder is the same, each other fact is "
          "named with both values",
          "[server]") {
  const ServerInfo a = Llama07();
  ServerInfo b = a;
  b.model = "/srv/llm/tiny.gguf";
  b.report["/props"]["model_path"] = "/srv/llm/tiny.gguf";
  CHECK(IdentityDifference(a, b, kA).empty());

  SECTION("context and build") {
    b.context = 8192;
    b.build = "b12000";
    CHECK(IdentityDifference(a, b, kA) ==
          "build 'b12000' (http://10.0.0.1:8080: 'b11669-Debian'), context 8,192 "
          "(http://10.0.0.1:8080: 512)");
  }
  SECTION("other weights under the same file name") {
    b.report["/v1/models"]["data"][0]["meta"]["size"] = 1234567;
    CHECK(IdentityDifference(a, b, kA) ==
          "weights size 1,234,567 (http://10.0.0.1:8080: 464,640)");
  }
  SECTION("another model and another server") {
    ServerInfo v;
    v.kind = ServerKind::kVllm;
    v.model = "Qwen/Qwen2.5-7B-Instruct-AWQ";
    v.context = 512;
    v.build = "0.8.5";
    CHECK(IdentityDifference(a, v, kA) ==
          "model 'Qwen/Qwen2.5-7B-Instruct-AWQ' (http://10.0.0.1:8080: 'tiny.gguf'), server "
          "'vllm' (http://10.0.0.1:8080: 'llama.cpp'), build '0.8.5' (http://10.0.0.1:8080: "
          "'b11669-Debian')");
  }
}

TEST_CASE("server_identity: facts one server does not report are not compared", "[server]") {
  ServerInfo a;
  a.kind = ServerKind::kMock;
  a.model = "evalrun-mock";
  ServerInfo b = a;
  b.context = 4096;
  b.build = "mock";
  CHECK(IdentityDifference(a, b, kA).empty());
  b.model = "other";
  CHECK(IdentityDifference(a, b, kA) == "model 'other' (http://10.0.0.1:8080: 'evalrun-mock')");
}

}  // namespace
}  // namespace evalrun
