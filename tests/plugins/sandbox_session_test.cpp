// Sandbox sessions (plugins/sandbox.h SandboxSession): one long-lived sandboxed process spoken to
// a line at a time, under both the bubblewrap and the unsafe sandbox. Each hostile program is
// bounded by a wall limit of a few seconds; where bubblewrap cannot run here its half says so and
// is left out.
#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/catch.h"

#include "plugins/sandbox.h"

namespace evalrun {
namespace {

const Sandbox& Bubblewrap() {
  static const std::unique_ptr<Sandbox> sandbox = MakeBubblewrapSandbox();
  return *sandbox;
}

const Sandbox& Unsafe() {
  static const std::unique_ptr<Sandbox> sandbox = MakeUnsafeSandbox();
  return *sandbox;
}

// The sandboxes that can run here (bubblewrap only when it works).
std::vector<const Sandbox*> Sandboxes() {
  std::vector<const Sandbox*> out;
  if (auto why = Bubblewrap().Unavailable()) {
    WARN("bubblewrap unavailable, its sessions not tested: " << *why);
  } else {
    out.push_back(&Bubblewrap());
  }
  out.push_back(&Unsafe());
  return out;
}

std::string Token() {
  std::random_device device;
  return "evalrun-test-" + std::to_string(device()) + std::to_string(device());
}

// Processes whose command line mentions `token`: what a session left behind.
int Survivors(const std::string& token) {
  int count = 0;
  DIR* proc = opendir("/proc");
  while (dirent* entry = readdir(proc)) {
    const std::string pid = entry->d_name;
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in("/proc/" + pid + "/cmdline", std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find(token) != std::string::npos) ++count;
  }
  closedir(proc);
  return count;
}

// A Python server: for each stdin line, runs `body` with `line` set (stripped) and prints what
// it returns as the reply.
std::unique_ptr<SandboxSession> Server(const Sandbox& sandbox, const std::string& body,
                                       double wall = 5, const std::string& token = "x") {
  SandboxRun run;
  run.argv = {"python3", "-c",
              "import os, sys, time\n"
              "def answer(line):\n" +
                  body +
                  "\n"
                  "for raw in sys.stdin:\n"
                  "    print(answer(raw.strip()), flush=True)\n",
              token};
  run.limits.wall_seconds = wall;
  run.limits.cpu_seconds = 20;
  return sandbox.Start(run);
}

TEST_CASE("sandbox session: one process answers every exchange, then closes", "[sandbox]") {
  for (const Sandbox* sandbox : Sandboxes()) {
    INFO(sandbox->Describe());
    auto session = Server(*sandbox, "    return str(os.getpid()) + ' ' + line");
    REQUIRE(session);
    CHECK(session->alive());
    const SandboxExchange a = session->Exchange("first");
    REQUIRE(a.ok);
    const std::string pid = a.reply.substr(0, a.reply.find(' '));
    CHECK(a.reply == pid + " first");
    CHECK_FALSE(a.timed_out);
    CHECK(a.exit_code == -1);
    const SandboxExchange b = session->Exchange("second");
    CHECK(b.ok);
    CHECK(b.reply == pid + " second");  // the same process
    const SandboxResult closed = session->Close();
    CHECK(closed.exit_code == 0);
    CHECK_FALSE(closed.timed_out);
    CHECK_FALSE(session->alive());
    const SandboxExchange after = session->Exchange("third");
    CHECK_FALSE(after.ok);
    CHECK(after.stderr_text == "evalrun sandbox: the session has ended");
    CHECK(session->Close().exit_code == 0);  // the same answer again
  }
}

TEST_CASE("sandbox session: the wall clock is per exchange", "[sandbox]") {
  for (const Sandbox* sandbox : Sandboxes()) {
    INFO(sandbox->Describe());
    auto session = Server(*sandbox, "    time.sleep(0.5)\n    return 'slept'", 1.5);
    for (int i = 0; i < 4; ++i) {  // 2 s in all, past one exchange's 1.5 s
      const SandboxExchange x = session->Exchange("go");
      CHECK(x.ok);
      CHECK(x.reply == "slept");
    }
    CHECK(session->alive());
  }
}

TEST_CASE("sandbox session: an exchange past its limit kills everything, no survivors",
          "[sandbox]") {
  for (const Sandbox* sandbox : Sandboxes()) {
    INFO(sandbox->Describe());
    const std::string token = Token();
    // A child in the background too: it must die with the session.
    auto session = Server(*sandbox,
                          "    if line == 'hang':\n"
                          "        if os.fork() == 0:\n"
                          "            while True: pass\n"
                          "        while True: pass\n"
                          "    return 'ok'",
                          1.5, token);
    REQUIRE(session->Exchange("warm up").reply == "ok");
    const SandboxExchange x = session->Exchange("hang");
    CHECK_FALSE(x.ok);
    CHECK(x.timed_out);
    CHECK_FALSE(x.session_expired);
    CHECK(x.exit_code == 128 + 9);
    CHECK(x.wall_seconds >= 1.4);
    CHECK(x.wall_seconds < 4);
    CHECK_FALSE(session->alive());
    usleep(100 * 1000);
    CHECK(Survivors(token) == 0);
  }
}

TEST_CASE("sandbox session: the destructor kills what the session started", "[sandbox]") {
  for (const Sandbox* sandbox : Sandboxes()) {
    INFO(sandbox->Describe());
    const std::string token = Token();
    auto session = Server(*sandbox,
                          "    if os.fork() == 0:\n"
                          "        time.sleep(60)\n"
                          "        os._exit(0)\n"
                          "    return 'forked'",
                          5, token);
    REQUIRE(session->Exchange("go").reply == "forked");
    CHECK(Survivors(token) >= 2);
    session.reset();
    usleep(100 * 1000);
    CHECK(Survivors(token) == 0);
  }
}

TEST_CASE("sandbox session: a process that exits mid-exchange reports its code and stderr",
          "[sandbox]") {
  for (const Sandbox* sandbox : Sandboxes()) {
    INFO(sandbox->Describe());
    auto session = Server(*sandbox,
                          "    sys.stderr.write('going away\\n'); sys.stderr.flush()\n"
                          "    sys.exit(3)");
    const SandboxExchange x = session->Exchange("bye");
    CHECK_FALSE(x.ok);
    CHECK_FALSE(x.timed_out);
    CHECK(x.exit_code == 3);
    CHECK(x.stderr_text.find("going away") != std::string::npos);
    CHECK_FALSE(session->alive());
  }
}

TEST_CASE("sandbox session: a process that ends between exchanges is seen as ended",
          "[sandbox]") {
  for (const Sandbox* sandbox : Sandboxes()) {
    INFO(sandbox->Describe());
    auto session = Server(*sandbox,
                          "    import threading\n"
                          "    threading.Timer(0.1, lambda: os._exit(5)).start()\n"
                          "    return 'soon'");
    REQUIRE(session->Exchange("go").reply == "soon");
    usleep(600 * 1000);
    CHECK_FALSE(session->alive());
    const SandboxExchange x = session->Exchange("still there?");
    CHECK_FALSE(x.ok);
    CHECK(x.exit_code == 5);
    CHECK(x.stderr_text == "evalrun sandbox: the session has ended");
  }
}

TEST_CASE("sandbox session: stderr is drained and kept per exchange, big requests pass",
          "[sandbox]") {
  for (const Sandbox* sandbox : Sandboxes()) {
    INFO(sandbox->Describe());
    // 200 KiB of stderr per exchange: more than a pipe holds, so it must be read meanwhile.
    auto session = Server(*sandbox,
                          "    sys.stderr.write('e' * 200000); sys.stderr.flush()\n"
                          "    return len(line)");
    const std::string big(1 << 20, 'r');  // 1 MiB request: written while the server reads
    const SandboxExchange x = session->Exchange(big);
    REQUIRE(x.ok);
    CHECK(x.reply == std::to_string(big.size()));
    CHECK(x.stderr_text.size() == 200000);
    const SandboxExchange y = session->Exchange("small");
    CHECK(y.reply == "5");
    CHECK(y.stderr_text.size() == 200000);
  }
}

TEST_CASE("sandbox session: a reply past the output cap kills the session", "[sandbox]") {
  for (const Sandbox* sandbox : Sandboxes()) {
    INFO(sandbox->Describe());
    SandboxRun run;
    run.argv = {"python3", "-c",
                "import sys\nsys.stdin.readline()\nsys.stdout.write('x' * 500000)\n"
                "sys.stdout.flush()\nimport time\ntime.sleep(30)\n"};
    run.limits.max_output_bytes = 64 << 10;
    auto session = sandbox->Start(run);
    const SandboxExchange x = session->Exchange("go");
    CHECK_FALSE(x.ok);
    CHECK(x.reply_too_long);
    CHECK(x.reply.empty());
    CHECK(x.wall_seconds < 5);
    CHECK_FALSE(session->alive());
  }
}

TEST_CASE("sandbox session: its whole life is capped too", "[sandbox]") {
  for (const Sandbox* sandbox : Sandboxes()) {
    INFO(sandbox->Describe());
    SandboxRun run;
    run.argv = {"python3", "-c", "import sys, time\nfor l in sys.stdin:\n    time.sleep(5)\n"};
    run.limits.wall_seconds = 10;
    run.limits.session_seconds = 1;
    auto session = sandbox->Start(run);
    const SandboxExchange x = session->Exchange("go");
    CHECK(x.timed_out);
    CHECK(x.session_expired);
    CHECK(x.wall_seconds < 3);
    CHECK_FALSE(session->alive());
  }
}

TEST_CASE("sandbox session: the sandbox's isolation holds", "[sandbox]") {
  if (Bubblewrap().Unavailable()) return;
  auto session = Server(Bubblewrap(),
                        "    import socket\n"
                        "    try:\n"
                        "        open('/usr/evalrun-session-probe', 'w')\n"
                        "        wrote = 'wrote'\n"
                        "    except OSError:\n"
                        "        wrote = 'refused'\n"
                        "    return '%d %s %s %s' % (os.getuid(), socket.gethostname(), wrote,\n"
                        "                            os.getcwd())");
  const SandboxExchange x = session->Exchange("who");
  REQUIRE(x.ok);
  const std::string uid = geteuid() == 0 ? "65534" : std::to_string(getuid());
  CHECK(x.reply == uid + " sandbox refused /work");
}

TEST_CASE("sandbox session: setup failures are a dead session that says why", "[sandbox]") {
  SandboxRun empty;
  auto none = Unsafe().Start(empty);
  REQUIRE(none);
  CHECK_FALSE(none->alive());
  SandboxExchange x = none->Exchange("hello");
  CHECK_FALSE(x.ok);
  CHECK(x.exit_code == 127);
  CHECK(x.stderr_text == "evalrun sandbox: nothing to run");
  CHECK(none->Close().exit_code == 127);

  SandboxRun missing;
  missing.argv = {"evalrun-no-such-program"};
  x = Unsafe().Start(missing)->Exchange("hello");
  CHECK(x.stderr_text == "evalrun sandbox: evalrun-no-such-program: not found");

  SandboxRun outside;
  outside.argv = {"true"};
  outside.files["../escape"] = "x";
  x = Unsafe().Start(outside)->Exchange("hello");
  CHECK(x.stderr_text == "evalrun sandbox: file name outside the working copy: '../escape'");
}

TEST_CASE("sandbox session: a sandbox without sessions returns none", "[sandbox]") {
  class RunOnly final : public Sandbox {
   public:
    std::optional<std::string> Unavailable() const override { return std::nullopt; }
    SandboxResult Run(const SandboxRun&) const override { return {}; }
    std::string Describe() const override { return "run only"; }
  } run_only;
  SandboxRun run;
  run.argv = {"true"};
  CHECK(run_only.Start(run) == nullptr);
}

}  // namespace
}  // namespace evalrun
