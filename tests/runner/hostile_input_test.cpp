// Untrusted input (issue 14): a suite folder someone shared, a server's bytes, a bundle posted by
// a stranger, a command line with typos. One test per case of the issue's table and per minor
// item, each asserting the clear error or the correct result; none may end in a signal. The
// limits themselves are in docs/limits.md (core/limits.h).
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <thread>

#include "tests/support/catch.h"
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/json_depth.h"
#include "core/limits.h"
#include "core/metrics.h"
#include "core/terminal_text.h"
#include "plugins/http_client.h"
#include "plugins/mock_server.h"
#include "plugins/openai_backend.h"
#include "plugins/sse_parser.h"
#include "results/bundle.h"
#include "results/run_report.h"
#include "results/store.h"
#include "tasks/suite_files.h"
#include "tasks/task_yaml.h"

namespace {

namespace fs = std::filesystem;
using evalrun::RequestOutcome;
using evalrun::RequestRecord;

struct TempDir {
  fs::path path;
  TempDir() {
    char pattern[] = "/tmp/evalrun-hostile-XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string File(const std::string& name) const { return (path / name).string(); }
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void Spit(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

struct Run {
  int code = -1;  // exit status, or 128 + signal
  std::string out;
  std::string err;
};

// The evalrun binary with `args` (a shell word list), `env` prepended ("A=b ").
Run Evalrun(const std::string& args, const std::string& env = "") {
  static int counter = 0;
  const std::string err_path =
      "/tmp/evalrun-hostile-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + ".err";
  const std::string command = env + "exec " + std::string(EVALRUN_BINARY) + " " + args + " 2>" +
                              err_path + " </dev/null";
  Run run;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe);
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) run.out.append(buffer, n);
  const int status = pclose(pipe);
  run.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.err = Slurp(err_path);
  std::remove(err_path.c_str());
  return run;
}

// A loopback HTTP server whose every answer is written by the test: `respond` gets the request
// head and the connected socket, writes what it likes and returns; the connection is closed.
// Serves one connection at a time until stopped; every loop is bounded by Stop().
class RawServer {
 public:
  using Respond = std::function<void(const std::string& head, int fd, const std::atomic<bool>& stop)>;
  explicit RawServer(Respond respond) : respond_(std::move(respond)) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(listen_fd_ >= 0);
    const int one = 1;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(listen(listen_fd_, 16) == 0);
    socklen_t length = sizeof address;
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~RawServer() { Stop(); }
  void Stop() {
    if (stop_.exchange(true)) return;
    shutdown(listen_fd_, SHUT_RDWR);
    close(listen_fd_);
    if (thread_.joinable()) thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Writes all of `bytes`; false when the peer went away.
  static bool Send(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

 private:
  void Serve() {
    while (!stop_.load()) {
      const int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      timeval timeout{5, 0};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
      std::string head;
      char buffer[4096];
      while (head.find("\r\n\r\n") == std::string::npos && head.size() < 1 << 20) {
        const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        head.append(buffer, static_cast<size_t>(n));
      }
      // The body of a POST (Content-Length), read so that closing does not reset the connection.
      const size_t cl = head.find("Content-Length: ");
      const size_t end = head.find("\r\n\r\n");
      if (cl != std::string::npos && end != std::string::npos) {
        const size_t want = std::stoul(head.substr(cl + 16));
        while (head.size() - end - 4 < want) {
          const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
          if (n <= 0) break;
          head.append(buffer, static_cast<size_t>(n));
        }
      }
      respond_(head, fd, stop_);
      close(fd);
    }
  }

  Respond respond_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Drives a ChatStreamReader with a whole response given as bytes, as the transport would.
RequestRecord ReadResponse(int status, const std::string& content_type, const std::string& body,
                           int64_t max_tokens = 64) {
  RequestRecord record;
  record.max_tokens = max_tokens;
  evalrun::ChatStreamReader reader(record);
  const evalrun::TimePoint t0 = evalrun::Clock::now();
  reader.OnSent(t0);
  reader.OnResponseStart(status, content_type);
  // In slices, with time passing, so that decode speed has a duration.
  for (size_t i = 0; i < body.size(); i += 97) {
    reader.OnBytes(std::string_view(body).substr(i, 97), t0 + std::chrono::milliseconds(1 + i / 97));
  }
  evalrun::TransferResult done;
  done.status = evalrun::TransferStatus::kCompleted;
  done.http_status = status;
  done.content_type = content_type;
  done.t_end = t0 + std::chrono::milliseconds(1 + body.size() / 97 + 1);
  reader.OnDone(done);
  return record;
}

std::string StreamWithUsage(const std::string& usage) {
  std::string body;
  for (const char* word : {"Hello", " there", " friend"}) {
    body += "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + std::string(word) +
            "\"},\"finish_reason\":null}]}\n\n";
  }
  body += "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n";
  body += "data: {\"choices\":[],\"usage\":" + usage + "}\n\ndata: [DONE]\n\n";
  return body;
}

const evalrun::GraderVersions kGraders = {
    {"answer_line", "1"}, {"exact", "1"},      {"numeric", "1"},     {"regex", "2"},
    {"contains", "1"},    {"excludes", "1"},   {"json_fields", "1"}, {"json_schema", "3"},
    {"code_tests", "1"},  {"command", "1"}};

std::string LoadError(const fs::path& root, const std::string& dir = "s") {
  try {
    const evalrun::DiskFiles files(root.string());
    evalrun::LoadEvalrunSuite(files, dir, kGraders);
  } catch (const evalrun::Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string LoadTextError(const std::string& suite_yaml) {
  TempDir dir;
  Spit(dir.path / "s" / "suite.yaml", suite_yaml);
  return LoadError(dir.path);
}

// A "billion laughs" in a task's grader mapping: 9 levels of 9 aliases each, 9^9 nodes.
std::string AliasBomb() {
  std::string text = "suite: bomb\ntasks:\n  - id: t\n    dimension: d\n    prompt: hi\n    grader:\n      type: exact\n"
                     "      answer: x\n      a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int level = 1; level <= 9; ++level) {
    const std::string prev = "*a" + std::to_string(level - 1);
    text += "      a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 9; ++i) text += (i ? ", " : "") + prev;
    text += "]\n";
  }
  return text;
}

}  // namespace

// ---- the table -------------------------------------------------------------------------------

TEST_CASE("hostile: a YAML alias bomb in a grader mapping is refused at its file:line:col, "
          "validate and hash exit 2",
          "[hostile]") {
  CHECK(LoadTextError(AliasBomb()) ==
        "s/suite.yaml:9:56: this value expands (aliases included) to more than 1000000 nodes or "
        "64 MiB of text; write it out or split it (docs/limits.md)");
  TempDir dir;
  Spit(dir.path / "bomb" / "suite.yaml", AliasBomb());
  const Run validate = Evalrun("validate " + (dir.path / "bomb").string());
  CHECK(validate.code == 2);
  CHECK_THAT(validate.err, Catch::Contains("suite.yaml:9:56: this value expands (aliases included)"));
  const Run hash = Evalrun("hash " + (dir.path / "bomb" / "suite.yaml").string());
  CHECK(hash.code == 2);
  CHECK_THAT(hash.err, Catch::Contains("suite.yaml:9:56: this value expands (aliases included)"));
}

TEST_CASE("hostile: files/, include and repo.path symlinked out of an unpinned suite are "
          "refused, naming the link",
          "[hostile]") {
  TempDir dir;
  const fs::path suite = dir.path / "s";
  fs::create_directories(suite);
  fs::create_directory_symlink("/etc", suite / "files");
  Spit(suite / "suite.yaml",
       "suite: leak\ntasks:\n  - id: t\n    dimension: d\n    prompt: hi\n    files: [files/shadow]\n"
       "    grader: {type: exact, answer: x}\n");
  CHECK(LoadError(suite, "") ==
        (suite / "files").string() +
            ": symbolic link to /etc, outside the suite folder; a suite may only use files inside "
            "its folder (refused: files/shadow)");

  // include through a folder symlinked outside (a folder beside the suite's, not inside it)
  TempDir elsewhere;
  const fs::path outside = elsewhere.path / "outside";
  Spit(outside / "more.yaml", "tasks:\n  - {id: u, dimension: d, prompt: hi, grader: {type: exact, answer: x}}\n");
  fs::remove(suite / "files");
  fs::create_directory_symlink(outside, suite / "inc");
  Spit(suite / "suite.yaml", "suite: leak\ninclude: [inc/*.yaml]\n");
  CHECK(LoadError(suite, "") ==
        (suite / "inc").string() + ": symbolic link to " + outside.string() +
            ", outside the suite folder; a suite may only use files inside its folder (refused: "
            "inc)");

  // a single file symlinked outside (a hidden test, a gold patch: the same Read)
  fs::remove(suite / "inc");
  Spit(outside / "secret.txt", "secret\n");
  fs::create_directories(suite / "data");
  fs::create_symlink(outside / "secret.txt", suite / "data" / "t.txt");
  Spit(suite / "suite.yaml",
       "suite: leak\ntasks:\n  - id: t\n    dimension: d\n    prompt: hi\n    files: [data/t.txt]\n"
       "    grader: {type: exact, answer: x}\n");
  CHECK(LoadError(suite, "") ==
        (suite / "data/t.txt").string() + ": symbolic link to " + (outside / "secret.txt").string() +
            ", outside the suite folder; a suite may only use files inside its folder (refused: "
            "data/t.txt)");

  // repo.path: the folder listing refuses the same way
  const evalrun::DiskFiles files(dir.path.string());
  fs::create_directory_symlink(outside, suite / "repo");
  try {
    files.ListTree("s/repo");
    FAIL("no error");
  } catch (const evalrun::Error& e) {
    CHECK(std::string(e.what()) ==
          (suite / "repo").string() + ": symbolic link to " + outside.string() +
              ", outside the suite folder; a suite may only use files inside its folder (refused: "
              "s/repo)");
  }

  // A link that stays inside the folder is fine.
  fs::remove(suite / "data" / "t.txt");
  Spit(suite / "real" / "t.txt", "inside\n");
  fs::create_symlink(suite / "real" / "t.txt", suite / "data" / "t.txt");
  CHECK(LoadError(suite, "") == "(no error)");
}

TEST_CASE("hostile: absurd max_tokens is a YAML error, and a huge max_tokens on a request "
          "reserves bounded memory",
          "[hostile]") {
  for (const char* value : {"9223372036854775807", "4294967296"}) {
    INFO(value);
    CHECK(LoadTextError(std::string("suite: s\ntasks:\n  - id: t\n    dimension: d\n    prompt: hi\n    max_tokens: ") +
                        value + "\n    grader: {type: exact, answer: x}\n") ==
          std::string("s/suite.yaml:6:17: max_tokens ") + value +
              " is out of range (1..10000000)");
  }
  // What reaches the stream reader from elsewhere (a bundle's spot check) does not abort.
  const RequestRecord record =
      ReadResponse(200, "text/event-stream", StreamWithUsage(R"({"prompt_tokens":5,"completion_tokens":3})"),
                   INT64_MAX);
  CHECK(record.ok());
  CHECK(record.content == "Hello there friend");
  CHECK(record.text_event_ns.capacity() < (size_t{1} << 20));
}

TEST_CASE("hostile: a 1 GB SSE line without a newline ends the request at the 8 MiB cap",
          "[hostile]") {
  std::atomic<int64_t> sent{0};
  RawServer server([&](const std::string&, int fd, const std::atomic<bool>& stop) {
    RawServer::Send(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                        "Connection: close\r\n\r\ndata: ");
    const std::string block(64 * 1024, 'a');
    while (!stop.load() && sent.load() < (int64_t{1} << 30)) {
      if (!RawServer::Send(fd, block)) return;  // the client hung up: the cap worked
      sent += static_cast<int64_t>(block.size());
    }
  });
  RequestRecord record;
  evalrun::ChatStreamReader reader(record);
  evalrun::StreamingClient client;
  evalrun::ChatRequest chat;
  chat.messages = nlohmann::json::array({{{"role", "user"}, {"content", "hi"}}});
  client.Add(evalrun::MakeChatHttpRequest(server.url(), evalrun::BuildChatBody(chat, {}), 30, 60),
             &reader);
  client.Run();
  server.Stop();
  CHECK(record.outcome == RequestOutcome::kMalformed);
  CHECK(record.error_message == "an SSE line longer than 8 MiB after 0 events (docs/limits.md)");
  CHECK(sent.load() < (int64_t{256} << 20));  // socket buffers, not the gigabyte
}

TEST_CASE("hostile: an SSE parser past its caps delivers nothing more, without allocating per "
          "event",
          "[hostile]") {
  struct Count : evalrun::SseHandler {
    int events = 0;
    void OnEvent(const evalrun::SseEvent&) override { ++events; }
  } count;
  evalrun::SseParser parser(16, 64);
  parser.Feed("data: ok\n\ndata: 0123456789abcdef", count);
  CHECK(parser.overflow() == evalrun::SseParser::Overflow::kLine);
  parser.Feed("\n\ndata: more\n\n", count);
  parser.Finish(count);
  CHECK(count.events == 1);
  // Many short data lines in one event hit the same cap.
  evalrun::SseParser lines(16, 64);
  lines.Feed("data: abcd\ndata: abcd\ndata: abcd\ndata: abcd\n\n", count);
  CHECK(lines.overflow() == evalrun::SseParser::Overflow::kLine);
  evalrun::SseParser body(16, 64);
  body.Feed("{\"a\": \"" + std::string(100, 'x') + "\"}", count);
  CHECK(body.overflow() == evalrun::SseParser::Overflow::kBody);
}

TEST_CASE("hostile: usage completion_tokens 9223372036854775807 is flagged, never a figure",
          "[hostile]") {
  const RequestRecord record = ReadResponse(
      200, "text/event-stream",
      StreamWithUsage(R"({"prompt_tokens":5,"completion_tokens":9223372036854775807})"));
  CHECK(record.ok());
  CHECK(record.error_message ==
        "server reported an impossible value: usage.completion_tokens = 9223372036854775807");
  CHECK_FALSE(record.usage_reported);
  CHECK(record.usage.completion_tokens == -1);
  CHECK(record.usage.prompt_tokens == -1);
  CHECK(record.usage.raw["completion_tokens"] == nlohmann::json(9223372036854775807LL));
  const evalrun::RequestMetrics m = evalrun::ComputeMetrics(record);
  CHECK(m.tokens_estimated);
  CHECK(m.completion_tokens == 3);  // the text events
  REQUIRE(m.decode_tps);
  CHECK(*m.decode_tps < 1e5);
  // Even larger, fractional or negative.
  for (const char* usage : {R"({"completion_tokens":18446744073709551615})",
                            R"({"completion_tokens":1e300})", R"({"completion_tokens":2.5})",
                            R"({"completion_tokens":-7})"}) {
    INFO(usage);
    const RequestRecord r = ReadResponse(200, "text/event-stream", StreamWithUsage(usage));
    CHECK_THAT(r.error_message, Catch::StartsWith("server reported an impossible value: "
                                                  "usage.completion_tokens = "));
    CHECK(r.usage.completion_tokens == -1);
  }
}

TEST_CASE("hostile: usage prompt_tokens -100 and cached_tokens 999999 are flagged", "[hostile]") {
  const RequestRecord negative = ReadResponse(
      200, "text/event-stream",
      StreamWithUsage(R"({"prompt_tokens":-100,"completion_tokens":3,)"
                      R"("prompt_tokens_details":{"cached_tokens":999999}})"));
  CHECK(negative.error_message == "server reported an impossible value: usage.prompt_tokens = -100");
  CHECK(negative.usage.prompt_tokens == -1);
  CHECK(negative.usage.cached_tokens == -1);
  const evalrun::RequestMetrics m = evalrun::ComputeMetrics(negative);
  CHECK_FALSE(m.prefill_tps.has_value());  // no prompt token count: no prefill figure

  const RequestRecord cached = ReadResponse(
      200, "text/event-stream",
      StreamWithUsage(R"({"prompt_tokens":100,"completion_tokens":3,)"
                      R"("prompt_tokens_details":{"cached_tokens":999999}})"));
  CHECK(cached.error_message ==
        "server reported an impossible value: cached_tokens 999999 > prompt_tokens 100");
  CHECK(cached.usage.cached_tokens == -1);

  const RequestRecord too_many = ReadResponse(
      200, "text/event-stream", StreamWithUsage(R"({"prompt_tokens":10,"completion_tokens":5000})"), 64);
  CHECK(too_many.error_message ==
        "server reported an impossible value: completion_tokens 5000 for max_tokens 64");

  // Honest counts are kept as they are.
  const RequestRecord honest = ReadResponse(
      200, "text/event-stream",
      StreamWithUsage(R"({"prompt_tokens":100,"completion_tokens":3,)"
                      R"("prompt_tokens_details":{"cached_tokens":64}})"));
  CHECK(honest.error_message.empty());
  CHECK(honest.usage_reported);
  CHECK(honest.usage.prompt_tokens == 100);
  CHECK(honest.usage.cached_tokens == 64);
}

TEST_CASE("hostile: token totals saturate instead of wrapping", "[hostile]") {
  CHECK(evalrun::limits::SaturatingAdd(INT64_MAX - 1, 5) == INT64_MAX);
  CHECK(evalrun::limits::SaturatingAdd(INT64_MIN + 1, -5) == INT64_MIN);
  CHECK(evalrun::limits::SaturatingAdd(40, 2) == 42);
}

TEST_CASE("hostile: a bundle with 20,000-deep nesting is refused before parsing", "[hostile]") {
  const std::string deep = "{\"format\":\"evalrun.bundle\",\"evidence\":" + std::string(20000, '[') +
                           std::string(20000, ']') + "}";
  try {
    evalrun::ParseBundle(deep, "deep.evalrun.json");
    FAIL("no error");
  } catch (const evalrun::Error& e) {
    CHECK(std::string(e.what()) ==
          "deep.evalrun.json: at byte 293: JSON nested more than 256 levels deep "
          "(docs/limits.md); not a bundle evalrun wrote");
  }
  TempDir dir;
  Spit(dir.File("deep.evalrun.json"), deep);
  for (const char* command : {"verify", "report"}) {
    INFO(command);
    const Run run = Evalrun(std::string(command) + " " + dir.File("deep.evalrun.json"));
    CHECK(run.code == 2);
    CHECK_THAT(run.err, Catch::Contains("JSON nested more than 256 levels deep"));
  }
  // Brackets inside strings do not count.
  CHECK_FALSE(evalrun::JsonDepthExceeded("[\"" + std::string(1000, '[') + "\"]", 4).has_value());
  CHECK(evalrun::JsonDepthExceeded("[[[[[", 4) == size_t{4});
}

namespace {

std::string WriteSuite(const fs::path& dir, int n) {
  fs::create_directories(dir);
  std::ofstream suite(dir / "suite.yaml");
  suite << "suite: small\ndefaults: {max_tokens: 64, temperature: 0}\ntasks:\n";
  for (int i = 0; i < n; ++i) {
    suite << "  - {id: t" << i << ", dimension: d, prompt: \"[t" << i
          << "] say hi\", grader: {type: contains, values: [a]}}\n";
  }
  return dir.string();
}

std::string SuiteArgs(const std::string& suite, const std::string& url, const std::string& db) {
  return "suite " + suite + " --endpoint " + url + " --db " + db +
         " --no-speed --no-env --quiet --out " + db + ".report";
}

}  // namespace

TEST_CASE("hostile: a database that fills up mid-run ends with a clear message and exit 1, "
          "--resume after freeing space finishes",
          "[hostile][suite]") {
  TempDir dir;
  const std::string suite = WriteSuite(dir.path / "s", 40);
  evalrun::MockConfig config;
  config.ttft_ms = 1;
  config.decode_tps = 0;
  evalrun::MockServer mock(config);
  mock.Start();
  const std::string db = dir.File("full.db");
  const Run full = Evalrun(SuiteArgs(suite, mock.base_url(), db), "EVALRUN_TEST_DB_MAX_PAGES=20 ");
  CHECK(full.code == 1);
  CHECK_THAT(full.err, Catch::Contains(": cannot write the results database: database or disk is "
                                       "full (free space, then --resume: every finished task is "
                                       "saved)"));
  CHECK_THAT(full.err, Catch::Contains("tasks are saved; resume with:"));
  evalrun::ResultStore store(db);
  const auto runs = store.ListRuns();
  REQUIRE(runs.size() == 1);
  const int64_t saved = store.FinishedCount(runs.front().id);
  CHECK(saved > 0);
  CHECK(saved < 40);
  CHECK_THAT(full.err, Catch::Contains(std::to_string(saved) + " of 40 tasks are saved"));
  CHECK(store.IntegrityCheck() == "ok");

  const Run resumed = Evalrun(SuiteArgs(suite, mock.base_url(), db) + " --resume");
  CHECK(resumed.code == 0);
  INFO(resumed.err);
  CHECK(evalrun::ResultStore(db).FinishedCount(runs.front().id) == 40);
}

TEST_CASE("hostile: --resume of a run another process is running is refused with a clear "
          "message",
          "[hostile][suite]") {
  TempDir dir;
  const std::string suite = WriteSuite(dir.path / "s", 6);
  evalrun::MockConfig config;
  config.ttft_ms = 1;
  config.decode_tps = 20;  // ~3 s per task
  evalrun::MockServer mock(config);
  mock.Start();
  const std::string db = dir.File("live.db");
  const pid_t first = fork();
  REQUIRE(first >= 0);
  if (first == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDERR_FILENO);
    dup2(null, STDOUT_FILENO);
    const std::string args = SuiteArgs(suite, mock.base_url(), db);
    execl("/bin/sh", "sh", "-c", (std::string("exec ") + EVALRUN_BINARY + " " + args).c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string run_id;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (run_id.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    try {
      evalrun::ResultStore store(db);
      const auto runs = store.ListRuns();
      if (!runs.empty()) run_id = runs.front().id;
    } catch (const evalrun::Error&) {
    }
  }
  REQUIRE(!run_id.empty());
  const Run second = Evalrun(SuiteArgs(suite, mock.base_url(), db) + " --resume " + run_id);
  kill(first, SIGKILL);
  int status = 0;
  waitpid(first, &status, 0);
  CHECK(second.code == 2);
  CHECK_THAT(second.err,
             Catch::Contains("live.db: run " + run_id +
                             " is being run by another evalrun process right now; wait for it to "
                             "finish or stop it (Ctrl-C), then --resume " + run_id));
  // The lock died with its process (SIGKILL): the run is resumable at once.
  evalrun::ResultStore store(db);
  CHECK_NOTHROW(store.LockRun(run_id));
}

TEST_CASE("hostile: a file written atomically survives SIGKILL mid-write whole", "[hostile]") {
  TempDir dir;
  const std::string path = dir.File("existing.json");
  Spit(path, "{\"old\": true}\n");
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const std::string big(std::size_t{128} << 20, 'x');
    evalrun::WriteFileAtomically(path, big);
    _exit(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  const std::string after = Slurp(path);
  CHECK((after == "{\"old\": true}\n" || after.size() == (std::size_t{128} << 20)));
  // and a plain write replaces it, keeping nothing stray on success
  CHECK_FALSE(evalrun::WriteFileAtomically(path, "new\n").has_value());
  CHECK(Slurp(path) == "new\n");
  CHECK(evalrun::WriteFileAtomically(dir.File("no/such/folder/x"), "x") ==
        std::optional<std::string>("No such file or directory"));
}

TEST_CASE("hostile: numeric options out of range are usage errors naming the flag and range",
          "[hostile][cli]") {
  const std::string speed = "speed --endpoint http://127.0.0.1:9 --no-env ";
  const std::string suite = "suite /nonexistent --endpoint http://127.0.0.1:9 ";
  const std::map<std::string, std::string> cases = {
      {suite + "--idle-timeout 0",
       "evalrun: error: --idle-timeout 0: out of range (expected seconds greater than 0, at most "
       "604800)\n"},
      {speed + "--idle-timeout nan",
       "evalrun: error: --idle-timeout nan: out of range (expected seconds greater than 0, at most "
       "604800)\n"},
      {speed + "--idle-timeout inf",
       "evalrun: error: --idle-timeout inf: out of range (expected seconds greater than 0, at most "
       "604800)\n"},
      {speed + "-n -5", "evalrun: error: -n -5: out of range (expected 2..10000000)\n"},
      {speed + "-r -1", "evalrun: error: -r -1: out of range (expected 1..100000)\n"},
      {suite + "--quick -3", "evalrun: error: --quick -3: out of range (expected 1..1000000)\n"},
      {suite + "--limit -1", "evalrun: error: --limit -1: out of range (expected 1..1099511627776)\n"},
      {suite + "--max-tokens -100",
       "evalrun: error: --max-tokens -100: out of range (expected 1..10000000)\n"},
      {suite + "--concurrency 0", "evalrun: error: --concurrency 0: out of range (expected 1..4096)\n"},
      {suite + "--wait-endpoint nan",
       "evalrun: error: --wait-endpoint 'nan': expected minutes (30, 0.5) or a time with a unit "
       "(90s, 45m, 2h)\n"},
      {suite + "--wait-endpoint 11000",
       "evalrun: error: --wait-endpoint '11000': out of range (expected at most 7 days: 10080, "
       "168h)\n"},
      {suite + "--label quant=a --label quant=b",
       "evalrun: error: --label 'quant=b': key 'quant' is already given (quant=a); give each key "
       "once\n"},
  };
  for (const auto& [args, expected] : cases) {
    INFO(args);
    const Run run = Evalrun(args);
    CHECK(run.code == 2);
    CHECK(run.err == expected);
  }
}

// ---- minor items -----------------------------------------------------------------------------

TEST_CASE("hostile: 10k-deep YAML, invalid UTF-8, a NUL byte and weight 1e308 name "
          "file:line:col",
          "[hostile]") {
  std::string deep = "suite: s\ntasks:\n  - id: t\n    dimension: d\n    prompt: hi\n    grader: {type: exact, answer: x, "
                     "extra: ";
  deep += std::string(10000, '[') + std::string(10000, ']') + "}\n";
  CHECK_THAT(LoadTextError(deep),
             Catch::Matches("s/suite\\.yaml:6:[0-9]+: nested too deeply \\(yaml-cpp stops at [0-9]+ "
                            "levels; evalrun reads at most 64, docs/limits\\.md\\)"));
  std::string moderate = "suite: s\ntasks:\n  - id: t\n    dimension: d\n    prompt: hi\n    grader: {type: exact, "
                         "answer: x, extra: ";
  moderate += std::string(100, '[') + std::string(100, ']') + "}\n";
  CHECK(LoadTextError(moderate) ==
        "s/suite.yaml:6:109: nested more than 64 levels deep (docs/limits.md)");
  CHECK(LoadTextError("suite: s\ntasks:\n  - id: t\n    dimension: d\n    prompt: \"caf\xC3 x\"\n") ==
        "s/suite.yaml:5:17: invalid UTF-8 (save the file as UTF-8)");
  const char nul[] = "suite: s\ntasks:\n  - id: t\n    dimension: d\n    prompt: \"a\0b\"\n";
  CHECK(LoadTextError(std::string(nul, sizeof nul - 1)) ==
        "s/suite.yaml:5:15: NUL byte in the file (a YAML file is text)");
  CHECK(LoadTextError("suite: s\ntasks:\n  - id: t\n    dimension: d\n    prompt: hi\n    weight: 1e308\n"
                      "    grader: {type: exact, answer: x}\n") ==
        "s/suite.yaml:6:13: weight 1e308 is out of range (greater than 0, at most 1e6)");
}

TEST_CASE("hostile: an HTML body and a 301 are named by status and content type", "[hostile]") {
  const RequestRecord html =
      ReadResponse(200, "text/html; charset=utf-8", "<html><body>Welcome to nginx!</body></html>\n");
  CHECK(html.outcome == RequestOutcome::kMalformed);
  CHECK(html.error_message ==
        "HTTP 200 answered with Content-Type text/html; charset=utf-8, not an event stream or JSON "
        "(is --endpoint an OpenAI-compatible server?)");
  const RequestRecord moved = ReadResponse(301, "text/html", "<html>Moved</html>\n");
  CHECK(moved.outcome == RequestOutcome::kHttpError);
  CHECK(moved.error_message ==
        "HTTP 301 redirect: evalrun does not follow redirects (give --endpoint the server's own "
        "address)");
}

TEST_CASE("hostile: a blocking call to a silent server waits the idle timeout, not 300 s",
          "[hostile]") {
  RawServer server([](const std::string&, int, const std::atomic<bool>& stop) {
    for (int i = 0; i < 200 && !stop.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // says nothing, up to 10 s
    }
  });
  evalrun::HttpRequest request;
  request.method = "POST";
  request.url = server.url() + "/v1/chat/completions";
  request.body = "{}";
  request.idle_timeout_s = 2;
  request.total_timeout_s = 300;
  const auto t0 = std::chrono::steady_clock::now();
  const evalrun::HttpResponse response = evalrun::Fetch(request);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  server.Stop();
  CHECK(response.status == 0);
  CHECK(waited < 6);
}

TEST_CASE("hostile: a 2 MB timings object is capped before it is stored", "[hostile]") {
  std::string big = "{\"prompt_n\":5,\"predicted_per_second\":42.5,\"junk\":\"" +
                    std::string(2 << 20, 'j') + "\"}";
  std::string body = StreamWithUsage(R"({"prompt_tokens":5,"completion_tokens":3})");
  body.insert(body.find("data: [DONE]"),
              "data: {\"choices\":[],\"timings\":" + big + "}\n\n");
  const RequestRecord record = ReadResponse(200, "text/event-stream", body);
  CHECK(record.ok());
  REQUIRE(record.timings.predicted_per_second);
  CHECK(*record.timings.predicted_per_second == 42.5);
  CHECK(record.timings.raw_timings ==
        nlohmann::json{{"evalrun_dropped", "object of 2097204 bytes, above the 16 KiB kept "
                                           "(docs/limits.md)"}});
}

TEST_CASE("hostile: server strings are escaped before they reach the terminal", "[hostile]") {
  const char hostile[] = "model\0x\n\xE2\x80\xAEtxt.exe\x1b[2J\xff";
  CHECK(evalrun::TerminalText(std::string(hostile, sizeof hostile - 1)) ==
        "model\\x00x\\n\\u202etxt.exe\\x1b[2J\\xff");
  CHECK(evalrun::TerminalText("Qwen3-30B «ok» 日本") == "Qwen3-30B «ok» 日本");
  // An error body with a terminal escape, as stored and printed.
  const RequestRecord record =
      ReadResponse(500, "application/json", "{\"error\":{\"message\":\"boom\\u001b[31m\\u202e\"}}");
  CHECK(record.error_message == "HTTP 500: boom\\x1b[31m\\u202e");
}

TEST_CASE("hostile: report and compare warn when a bundle's hash does not verify",
          "[hostile][cli]") {
  TempDir dir;
  const std::string suite = WriteSuite(dir.path / "s", 2);
  evalrun::MockConfig config;
  config.ttft_ms = 1;
  config.decode_tps = 0;
  evalrun::MockServer mock(config);
  mock.Start();
  const std::string db = dir.File("r.db");
  REQUIRE(Evalrun(SuiteArgs(suite, mock.base_url(), db)).code == 0);
  const std::string run_id = evalrun::ResultStore(db).ListRuns().front().id;
  const std::string bundle = dir.File("b.evalrun.json");
  REQUIRE(Evalrun("export " + run_id + " --db " + db + " --out " + bundle).code == 0);
  nlohmann::json doc = nlohmann::json::parse(Slurp(bundle));
  doc["run"]["labels"]["quant"] = "edited";
  Spit(bundle, doc.dump());
  const Run report = Evalrun("report " + bundle);
  CHECK(report.code == 0);
  CHECK_THAT(report.err, Catch::Contains("evalrun: warning: " + bundle + ": the recorded result hash " +
                                         doc["result_hash"].get<std::string>().substr(0, 16) +
                                         " does not match the bundle's content (edited after "
                                         "export?); evalrun verify names what changed"));
  CHECK_THAT(report.out, Catch::Contains("(does not verify)"));
  const Run compare = Evalrun("compare " + bundle + " " + bundle);
  CHECK_THAT(compare.err, Catch::Contains("does not match the bundle's content"));
}

TEST_CASE("hostile: two first runs on one fresh database both create-or-see the schema",
          "[hostile]") {
  for (int round = 0; round < 5; ++round) {
    TempDir dir;
    const std::string db = dir.File("race.db");
    std::vector<pid_t> children;
    for (int i = 0; i < 6; ++i) {
      const pid_t child = fork();
      REQUIRE(child >= 0);
      if (child == 0) {
        try {
          evalrun::ResultStore store(db);
          _exit(store.ListRuns().empty() ? 0 : 3);
        } catch (const evalrun::Error& e) {
          std::fprintf(stderr, "%s\n", e.what());
          _exit(1);
        }
      }
      children.push_back(child);
    }
    for (const pid_t child : children) {
      int status = 0;
      waitpid(child, &status, 0);
      CHECK(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 0);
    }
  }
}

namespace {

// Opens `db` as evalrun would and returns the error text ("" when it opened). As root, file
// permissions do not stop writes, so the store is opened in a child that has given up root
// (uid/gid 65534, "nobody"): the read-only file is then read-only to it, as to any user.
std::string OpenStoreError(const std::string& db, bool drop_root) {
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(pipe_fds[0]);
    std::string out;
    if (drop_root && (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) {
      out = "could not drop root";
    } else {
      try {
        evalrun::ResultStore store(db);
      } catch (const evalrun::Error& e) {
        out = std::string(e.what()) + "\n" + std::to_string(static_cast<int>(e.code()));
      }
    }
    if (write(pipe_fds[1], out.data(), out.size()) < 0) _exit(2);
    _exit(0);
  }
  close(pipe_fds[1]);
  std::string text;
  char buffer[512];
  ssize_t n;
  while ((n = read(pipe_fds[0], buffer, sizeof buffer)) > 0) text.append(buffer, n);
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  CHECK(WIFEXITED(status));
  return text;
}

}  // namespace

TEST_CASE("hostile: a read-only database says so", "[hostile]") {
  TempDir dir;
  const std::string db = dir.File("ro.db");
  { evalrun::ResultStore create(db); }
  fs::permissions(db, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::permissions(dir.path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
  const std::string error = OpenStoreError(db, geteuid() == 0);
  CHECK(error == db + ": the results database is read-only (check the permissions of the file "
                      "and its folder, or pass another --db)\n" +
                     std::to_string(static_cast<int>(evalrun::ExitCode::kSomeFailed)));
}

TEST_CASE("hostile: a stranger's bundle with absurd figures renders as md, html and card",
          "[hostile]") {
  evalrun::RunData run;
  run.info.id = "r1";
  run.info.kind = "suite";
  run.info.status = "finished";
  run.info.model = std::string("evil\n\xE2\x80\xAEmodel", 13);
  for (int i = 0; i < 3; ++i) {
    evalrun::TaskResult task;
    task.task_id = "t" + std::to_string(i);
    task.dimension = "d";
    task.difficulty = "easy";
    task.weight = 1;
    task.grade.status = evalrun::GradeStatus::kGraded;
    task.grade.score = 1;
    task.grade.passed = true;
    RequestRecord r;
    r.first_ns = 1000;
    r.last_ns = 2000 + i;
    r.end_ns = 3000;
    r.text_event_ns = {1000, 2000};
    r.usage_reported = true;
    r.usage.completion_tokens = INT64_MAX - i;
    r.usage.prompt_tokens = INT64_MAX;
    r.usage.cached_tokens = -100;
    task.requests.push_back(r);
    run.tasks.push_back(task);
  }
  std::string md, html, card;
  CHECK_NOTHROW(md = evalrun::RenderRunMarkdown(run, "abc"));
  CHECK_NOTHROW(html = evalrun::RenderRunHtml(run, "abc"));
  CHECK_NOTHROW(card = evalrun::RenderCardSvg(run, "abc"));
  // Escaped (then markdown doubles the backslash): no raw newline or bidi override.
  CHECK_THAT(md, Catch::Contains("evil\\\\n\\\\u202emodel"));
  CHECK(md.find("evil\n") == std::string::npos);
  CHECK(md.find("\xE2\x80\xAE") == std::string::npos);
  CHECK(html.find("\xE2\x80\xAE") == std::string::npos);
}
