#include "plugins/server_probe.h"

#include "tests/support/catch.h"

#include "tests/support/fixtures.h"
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace evalrun {
namespace {

using json = nlohmann::json;

const std::string kFixtures = EVALRUN_TEST_FIXTURES;
const std::string kBase = "http://127.0.0.1:8080";

std::string ReadFixture(const std::string& relative) { return testing::ReadFixture(relative); }

// A `curl -i` capture: status line, headers, blank line, body.
HttpResponse Capture(const std::string& relative) {
  const testing::HttpCapture http = testing::ReadHttpCapture(relative);
  HttpResponse response;
  response.status = http.status;
  response.body = http.body;
  response.content_type = "application/json";
  return response;
}

HttpResponse Body(const std::string& relative) {
  HttpResponse response;
  response.status = 200;
  response.body = ReadFixture(relative);
  response.content_type = "application/json";
  return response;
}

HttpResponse Status(int status, std::string body = "") {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

// Answers "METHOD /path" from a table, 404 for anything else, and keeps every request it saw.
struct FakeServer {
  std::map<std::string, HttpResponse> routes;
  std::vector<HttpRequest> seen;
  HttpResponse fallback = Status(404, R"({"error":{"code":404,"message":"File Not Found"}})");

  Fetcher AsFetcher() {
    return [this](const HttpRequest& request) {
      seen.push_back(request);
      REQUIRE(request.url.rfind(kBase, 0) == 0);
      auto it = routes.find(request.method + " " + request.url.substr(kBase.size()));
      return it == routes.end() ? fallback : it->second;
    };
  }
  std::vector<std::string> Paths() const {
    std::vector<std::string> out;
    for (const auto& request : seen)
      out.push_back(request.method + " " + request.url.substr(kBase.size()));
    return out;
  }
};

FakeServer LlamaCpp() {
  FakeServer server;
  server.routes["GET /v1/models"] = Capture("sse/llamacpp-b4748-models.http");
  server.routes["GET /props"] = Capture("sse/llamacpp-b4748-props.http");
  return server;
}

FakeServer Vllm() {
  FakeServer server;
  server.routes["GET /v1/models"] = Body("servers/constructed-vllm-models.json");
  server.routes["GET /version"] = Body("servers/constructed-vllm-version.json");
  return server;
}

FakeServer Sglang() {
  FakeServer server;
  server.routes["GET /v1/models"] = Body("servers/constructed-sglang-models.json");
  server.routes["GET /get_server_info"] = Body("servers/constructed-sglang-get_server_info.json");
  return server;
}

void CheckCapabilities(const ServerInfo& info, bool tokenize, bool ignore_eos, bool cache_prompt) {
  CHECK(info.has_tokenize == tokenize);
  CHECK(info.understands_ignore_eos == ignore_eos);
  CHECK(info.understands_cache_prompt == cache_prompt);
}

TEST_CASE("server_probe: llama.cpp from its real /v1/models and /props", "[server]") {
  FakeServer server = LlamaCpp();
  const ServerInfo info = DetectServer(kBase + "/", server.AsFetcher());
  INFO(info.report.dump(2));
  CHECK(info.kind == ServerKind::kLlamaCpp);
  CHECK(info.base_url == kBase);
  CHECK(info.model == "/models/stories260K.gguf");
  CHECK(info.context == 1024);
  CHECK(info.slots == 4);
  CHECK(info.build == "b0-unknown");
  CHECK_FALSE(info.speculative);  // speculative.n_max is a default, not a draft model
  CheckCapabilities(info, true, true, true);
  CHECK(server.Paths() == std::vector<std::string>{"GET /v1/models", "GET /props"});

  CHECK(info.report.at("detected_by") == "/v1/models owned_by");
  CHECK(info.report.at("/props").at("total_slots") == 4);
  CHECK(info.report.at("/v1/models").at("data")[0].at("owned_by") == "llamacpp");
  const json& summary = info.report.at("llama.cpp");
  CHECK(summary.at("chat_template").at("first_line") == "{%- for message in messages -%}");
  CHECK(summary.at("chat_template").at("length") == 208);
  CHECK(summary.at("chat_template").at("fnv1a64").get<std::string>().size() == 16);
  CHECK(summary.at("speculative.n_max") == 16);
}

// llama-server 0.7 (build b11669, -c 512, 4 slots with a unified KV cache): n_ctx is still in
// default_generation_settings (per slot: the whole -c with kv_unified), there is no
// "speculative" flag any more (params."speculative.types": "none").
TEST_CASE("server_probe: llama.cpp 0.7 from its real /v1/models and /props", "[server]") {
  FakeServer server;
  server.routes["GET /v1/models"] = Capture("llama-0.7/v1-models-c512.http");
  server.routes["GET /props"] = Capture("llama-0.7/props-c512.http");
  const ServerInfo info = DetectServer(kBase, server.AsFetcher());
  INFO(info.report.dump(2));
  CHECK(info.kind == ServerKind::kLlamaCpp);
  CHECK(info.model == "/models/tiny.gguf");
  CHECK(info.context == 512);
  CHECK(info.slots == 4);
  CHECK(info.build == "b11669-Debian");
  CHECK_FALSE(info.speculative);
  CheckCapabilities(info, true, true, true);
  CHECK(info.report.at("detected_by") == "/v1/models owned_by");
  CHECK(info.report.at("llama.cpp").at("chat_template").at("first_line") == "{%- if tools %}");
}

// While it loads its model, llama-server 0.7 answers 503 on every route; detection must not
// take that for a generic server's 404s (evalrun waits for /health first, docs/serving.md).
TEST_CASE("server_probe: llama.cpp 0.7 loading answers 503 with its body", "[server]") {
  const HttpResponse loading = Capture("llama-0.7/health-503-loading.http");
  CHECK(loading.status == 503);
  CHECK(json::parse(loading.body).at("error").at("message") == "Loading model");
}

TEST_CASE("server_probe: llama.cpp without owned_by is found by /props", "[server]") {
  FakeServer server = LlamaCpp();
  server.routes.erase("GET /v1/models");
  const ServerInfo info = DetectServer(kBase, server.AsFetcher());
  CHECK(info.kind == ServerKind::kLlamaCpp);
  CHECK(info.model == "/models/stories260K.gguf");  // from model_path
  CHECK(info.context == 1024);
  CHECK(info.report.at("detected_by") == "/props");
  CHECK(info.report.at("/v1/models") == json{{"status", 404}});
}

TEST_CASE("server_probe: vLLM from /v1/models and /version", "[server]") {
  FakeServer server = Vllm();
  const ServerInfo info = DetectServer(kBase, server.AsFetcher());
  INFO(info.report.dump(2));
  CHECK(info.kind == ServerKind::kVllm);
  CHECK(info.model == "Qwen/Qwen2.5-7B-Instruct-AWQ");
  CHECK(info.build == "0.8.5");
  CHECK(info.context == 32768);
  CHECK(info.slots == -1);
  CHECK_FALSE(info.speculative);
  CheckCapabilities(info, true, true, false);
  CHECK(server.Paths() == std::vector<std::string>{"GET /v1/models", "GET /version"});
  CHECK(info.report.at("/version") == json{{"version", "0.8.5"}});
}

TEST_CASE("server_probe: SGLang with speculative decoding from /get_server_info", "[server]") {
  FakeServer server = Sglang();
  const ServerInfo info = DetectServer(kBase, server.AsFetcher());
  INFO(info.report.dump(2));
  CHECK(info.kind == ServerKind::kSglang);
  CHECK(info.model == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK(info.build == "0.4.6.post1");
  CHECK(info.context == 8192);
  CHECK(info.slots == 48);
  CHECK(info.speculative);
  CheckCapabilities(info, false, true, false);
  CHECK(info.report.at("/get_server_info").at("speculative_num_draft_tokens") == 4);

  SECTION("found by /get_server_info when owned_by says nothing") {
    FakeServer anonymous = Sglang();
    anonymous.routes.erase("GET /v1/models");
    const ServerInfo found = DetectServer(kBase, anonymous.AsFetcher());
    CHECK(found.kind == ServerKind::kSglang);
    CHECK(found.report.at("detected_by") == "/get_server_info");
    CHECK(anonymous.Paths() ==
          std::vector<std::string>{"GET /v1/models", "GET /props", "GET /get_server_info"});
  }
  SECTION("no speculative_algorithm means no speculative decoding") {
    json body = json::parse(server.routes["GET /get_server_info"].body);
    body["speculative_algorithm"] = nullptr;
    server.routes["GET /get_server_info"].body = body.dump();
    CHECK_FALSE(DetectServer(kBase, server.AsFetcher()).speculative);
  }
}

TEST_CASE("server_probe: the evalrun mock by its owned_by", "[server]") {
  FakeServer server;
  server.routes["GET /v1/models"] = Body("servers/constructed-mock-models.json");
  const ServerInfo info = DetectServer(kBase, server.AsFetcher());
  CHECK(info.kind == ServerKind::kMock);
  CHECK(info.model == "evalrun-mock");
  CheckCapabilities(info, true, true, true);
  // /props too: the mock answers it when it imitates a llama.cpp server's slots (--slots).
  CHECK(server.Paths() == std::vector<std::string>{"GET /v1/models", "GET /props"});
  CHECK(info.slots == -1);
}

TEST_CASE("server_probe: a server that answers 404 everywhere is generic", "[server]") {
  FakeServer server;
  const ServerInfo info = DetectServer(kBase, server.AsFetcher());
  CHECK(info.kind == ServerKind::kGeneric);
  CHECK(info.model.empty());
  CHECK(info.build.empty());
  CHECK(info.context == -1);
  CHECK(info.slots == -1);
  CheckCapabilities(info, false, false, false);
  CHECK(info.report.at("detected_by") == "nothing matched");
  CHECK(info.report.at("/props") == json{{"status", 404}});
  CHECK(server.Paths() == std::vector<std::string>{"GET /v1/models", "GET /props",
                                                   "GET /get_server_info", "GET /version"});
}

TEST_CASE("server_probe: an unreachable server is generic, and nothing throws", "[server]") {
  FakeServer server;
  HttpResponse refused;
  refused.error = "Couldn't connect to server";
  server.fallback = refused;
  ServerInfo info;
  REQUIRE_NOTHROW(info = DetectServer(kBase, server.AsFetcher()));
  CHECK(info.kind == ServerKind::kGeneric);
  CheckCapabilities(info, false, false, false);
  CHECK(info.report.at("detected_by") == "unreachable");
  CHECK(info.report.at("/v1/models") ==
        json{{"status", 0}, {"error", "Couldn't connect to server"}});
  CHECK(server.Paths() == std::vector<std::string>{"GET /v1/models"});  // no more timeouts
}

TEST_CASE("server_probe: odd answers are recorded, never thrown", "[server]") {
  FakeServer server;
  SECTION("bodies that are not JSON, or JSON of the wrong shape") {
    server.routes["GET /v1/models"] = Status(200, "<html>hello</html>");
    server.routes["GET /props"] = Status(200, "[]");
    server.routes["GET /get_server_info"] = Status(200, R"({"version": 7})");
    server.routes["GET /version"] = Status(200, R"("0.8.5")");
  }
  SECTION("wrong types inside the right shape") {
    server.routes["GET /v1/models"] =
        Status(200, R"({"data": [{"id": 5, "owned_by": ["llamacpp"], "max_model_len": "x"}]})");
    server.routes["GET /props"] = Status(
        200, R"({"default_generation_settings": 1, "total_slots": "4", "build_info": null})");
  }
  SECTION("invalid UTF-8 in a body") {
    server.routes["GET /v1/models"] = Status(200, "\xff\xfe not json");
  }
  SECTION("a Fetcher that throws") {
    server.routes.clear();
    Fetcher throwing = [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("boom"); };
    ServerInfo info;
    REQUIRE_NOTHROW(info = DetectServer(kBase, throwing));
    CHECK(info.kind == ServerKind::kGeneric);
    CHECK(info.report.at("/v1/models").at("error") == "boom");
    return;
  }
  ServerInfo info;
  REQUIRE_NOTHROW(info = DetectServer(kBase, server.AsFetcher()));
  CHECK(info.model.empty());
  CHECK(info.context == -1);
  CHECK_NOTHROW(info.report.dump());
}

TEST_CASE("server_probe: a forced kind is taken, and its endpoints still read", "[server]") {
  SECTION("vLLM forced onto a llama.cpp server") {
    FakeServer server = LlamaCpp();
    const ServerInfo info = DetectServer(kBase, server.AsFetcher(), ServerKind::kVllm);
    CHECK(info.kind == ServerKind::kVllm);
    CHECK(info.model == "/models/stories260K.gguf");
    CheckCapabilities(info, true, true, false);
    CHECK(info.report.at("detected_by") == "forced");
    CHECK(info.report.at("/version") == json{{"status", 404}});
    CHECK(server.Paths() == std::vector<std::string>{"GET /v1/models", "GET /version"});
  }
  SECTION("llama.cpp forced onto its own server reads /props") {
    FakeServer server = LlamaCpp();
    const ServerInfo info = DetectServer(kBase, server.AsFetcher(), ServerKind::kLlamaCpp);
    CHECK(info.kind == ServerKind::kLlamaCpp);
    CHECK(info.context == 1024);
    CHECK(info.slots == 4);
  }
  SECTION("generic forced onto SGLang asks nothing more") {
    FakeServer server = Sglang();
    const ServerInfo info = DetectServer(kBase, server.AsFetcher(), ServerKind::kGeneric);
    CHECK(info.kind == ServerKind::kGeneric);
    CHECK(info.model == "meta-llama/Llama-3.1-8B-Instruct");
    CheckCapabilities(info, false, false, false);
    CHECK(server.Paths() == std::vector<std::string>{"GET /v1/models"});
  }
  SECTION("a forced kind survives an unreachable server") {
    FakeServer server;
    server.fallback = Status(0);
    const ServerInfo info = DetectServer(kBase, server.AsFetcher(), ServerKind::kLlamaCpp);
    CHECK(info.kind == ServerKind::kLlamaCpp);
    CheckCapabilities(info, true, true, true);
    CHECK(server.Paths() == std::vector<std::string>{"GET /v1/models"});
  }
}

TEST_CASE("server_probe: ParseServerKind truth table", "[server]") {
  using Row = std::tuple<std::string, std::optional<ServerKind>>;
  const auto [name, expected] = GENERATE(table<std::string, std::optional<ServerKind>>({
      Row{"generic", ServerKind::kGeneric},
      Row{"llama.cpp", ServerKind::kLlamaCpp},
      Row{"llamacpp", ServerKind::kLlamaCpp},
      Row{"llama-server", ServerKind::kLlamaCpp},
      Row{"vllm", ServerKind::kVllm},
      Row{"sglang", ServerKind::kSglang},
      Row{"evalrun-mock", ServerKind::kMock},
      Row{"", std::nullopt},
      Row{"mock", std::nullopt},
      Row{"vLLM", std::nullopt},
      Row{"llama", std::nullopt},
      Row{"llama.cpp ", std::nullopt},
  }));
  INFO("name: '" << name << "'");
  CHECK(ParseServerKind(name) == expected);
}

TEST_CASE("server_probe: every kind's name parses back to it", "[server]") {
  for (ServerKind kind : {ServerKind::kGeneric, ServerKind::kLlamaCpp, ServerKind::kVllm,
                          ServerKind::kSglang, ServerKind::kMock}) {
    CHECK(ParseServerKind(ServerKindName(kind)) == kind);
  }
}

TEST_CASE("server_probe: CountTokens asks each server in its own words", "[server]") {
  const std::string text = "Hello, world!";
  SECTION("llama.cpp: content and add_special, answered with a token list") {
    FakeServer server = LlamaCpp();
    const ServerInfo info = DetectServer(kBase, server.AsFetcher());
    server.seen.clear();
    server.routes["POST /tokenize"] = Status(200, R"({"tokens":[15043,29892,3186,29991]})");
    CHECK(CountTokens(info, text, server.AsFetcher()) == 4);
    REQUIRE(server.seen.size() == 1);
    const HttpRequest& request = server.seen[0];
    CHECK(request.method == "POST");
    CHECK(request.url == kBase + "/tokenize");
    CHECK(json::parse(request.body) == json{{"content", text}, {"add_special", false}});
    CHECK(request.headers == std::vector<std::string>{"Content-Type: application/json"});
  }
  SECTION("llama.cpp: tokens with pieces still count") {
    FakeServer server = LlamaCpp();
    const ServerInfo info = DetectServer(kBase, server.AsFetcher());
    server.routes["POST /tokenize"] =
        Status(200, R"({"tokens":[{"id":15043,"piece":"Hello"},{"id":29892,"piece":","}]})");
    CHECK(CountTokens(info, text, server.AsFetcher()) == 2);
  }
  SECTION("vLLM: model and prompt, answered with a count") {
    FakeServer server = Vllm();
    const ServerInfo info = DetectServer(kBase, server.AsFetcher());
    server.seen.clear();
    server.routes["POST /tokenize"] = Body("servers/constructed-vllm-tokenize.json");
    CHECK(CountTokens(info, text, server.AsFetcher()) == 4);
    REQUIRE(server.seen.size() == 1);
    CHECK(json::parse(server.seen[0].body) == json{{"model", "Qwen/Qwen2.5-7B-Instruct-AWQ"},
                                                   {"prompt", text},
                                                   {"add_special_tokens", false}});
  }
  SECTION("the mock speaks llama.cpp's shape") {
    FakeServer server;
    server.routes["GET /v1/models"] = Body("servers/constructed-mock-models.json");
    const ServerInfo info = DetectServer(kBase, server.AsFetcher());
    server.routes["POST /tokenize"] = Status(200, R"({"tokens":[1,2,3]})");
    CHECK(CountTokens(info, text, server.AsFetcher()) == 3);
    CHECK(json::parse(server.seen.back().body).contains("content"));
  }
  SECTION("SGLang and generic servers have no tokenizer endpoint: nothing is asked") {
    FakeServer server = Sglang();
    const ServerInfo info = DetectServer(kBase, server.AsFetcher());
    server.seen.clear();
    CHECK_FALSE(CountTokens(info, text, server.AsFetcher()).has_value());
    ServerInfo generic;
    generic.base_url = kBase;
    CHECK_FALSE(CountTokens(generic, text, server.AsFetcher()).has_value());
    CHECK(server.seen.empty());
  }
  SECTION("a failed or odd answer is nullopt") {
    FakeServer server = LlamaCpp();
    const ServerInfo info = DetectServer(kBase, server.AsFetcher());
    server.routes["POST /tokenize"] = Status(500, R"({"error":{"message":"boom"}})");
    CHECK_FALSE(CountTokens(info, text, server.AsFetcher()).has_value());
    server.routes["POST /tokenize"] = Status(200, "not json");
    CHECK_FALSE(CountTokens(info, text, server.AsFetcher()).has_value());
    server.routes["POST /tokenize"] = Status(200, R"({"tokens": 3})");
    CHECK_FALSE(CountTokens(info, text, server.AsFetcher()).has_value());
  }
}

}  // namespace
}  // namespace evalrun
