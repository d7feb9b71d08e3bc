// Parity of evalrun's zx-bench code_repair grader with zx-bench's own scoring (issue 4), the
// repaired code run in the bubblewrap sandbox, and hostile outputs. Every expected score was
// derived by reading zx-bench's sources, not by running evalrun; the derivation is written next
// to it. Where bubblewrap (or node) cannot run here, the tests that need it assert that the
// grader reports kSkipped with the reason, and stop.
//   C = packages/core/src/evaluators/codeRepair.ts of suncityldp/zx-bench at 1410015b
//       (codeRepairEvaluator 4.14.0, the fixture's graderVersion); line numbers of that file.
//   J = packages/core/src/execution/isolatedJson.ts (the copy in bboysky/ajubyte-model-lab at
//       22bb91d1; zx-bench's own is not in the store); line numbers of that file.
// Key places: C L1301-1302 no usable contract -> pending (unmeasured); C L1303-1306 the patch is
// rankBlocks(extractCodeBlocks(output))[0] ?? heuristicExtractCode(...), none -> total 0;
// C L149 the fence regex /```(?:[\w+-]*)\s*\n([\s\S]*?)```/g (an unclosed fence is no block);
// C L182-205 rankBlocks (+50 names the function, +15 for 3-120 lines, -20 under 3, +10 for the
// last, -40 test-like); C L215-264 heuristicExtractCode (L219 strips "ANSWER:", L234-243 the
// function patterns of L273-276, brace matching L354-375); J L152-182 runIsolatedJsonSuite
// (L157-163 `node --check candidate.mjs` first, L169-171 every case fails without running when
// that fails, L173 a case passes only on success and compareJsonObservation, J L58-68: the
// stdout is a JSON array strictly equal to `expected`); J L140 candidate.mjs is the patch plus
// `export { slugify as zxEntry };`; C L444-507 patch_quality (distinct trimmed lines of the
// patch and sourceCode: changed/unique -> <.3: 90, <.5: 80, <.8: 60, else 40; L480 nothing
// changed -> 0); C L513-567 scope_discipline ((added + removed)/source lines -> <.2: 95,
// <.4: 80, <.7: 60, else 40; L545 nothing changed -> 0); C L1325-1328 axes and
// total = round(.1 patch_extraction + .2 compilation + .4 test_pass + .2 patch_quality +
// .1 scope_discipline), patch_extraction 100 with a fenced block, else 40; test_pass =
// round(100 passed / 3).
// CP-L2-TD-JS-003's sourceCode has 3 distinct non-blank lines: "function slugify(s) {",
// "return s.toLowerCase().replace(/ /g, '-');" and "}". A patch that keeps the first and last
// and rewrites the return line: unique 4, changed 2, 2/4 = .5 -> patch_quality 60; added 1 +
// removed 1 = 2/3 -> scope 60 ("one-line fix" below).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/support/catch.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "graders/builtin.h"
#include "graders/grader.h"
#include "graders/zxbench/go_contract.h"
#include "plugins/sandbox.h"
#include "tests/support/fixtures.h"

namespace evalrun {
namespace {

using nlohmann::json;

json FixtureEntry() {
  const json bank = json::parse(testing::ReadFixture("zx-bench/fixtures.json"));
  for (const auto& entry : bank) {
    if (entry.value("id", "") == "CP-L2-TD-JS-003") return entry;
  }
  throw std::runtime_error("fixture entry CP-L2-TD-JS-003 missing");
}

const Grader& CodeRepair() {
  static const std::unique_ptr<Grader> grader = MakeZxCodeRepairGrader();
  return *grader;
}

const Sandbox& Bubblewrap() {
  static const std::unique_ptr<Sandbox> sandbox = MakeBubblewrapSandbox();
  return *sandbox;
}

Grade RunGrader(const json& entry, const std::string& text, const Sandbox* sandbox,
                bool truncated = false) {
  Answer answer;
  answer.text = text;
  answer.truncated = truncated;
  GradeContext context;
  context.sandbox = sandbox;
  return CodeRepair().Run(entry, answer, context);
}

int ZxScore(const Grade& grade) { return grade.evidence.at("zx_score").get<int>(); }

// Grades `text` (which holds code) in bubblewrap. Where bubblewrap or node cannot run here, checks
// that the grader says exactly that (kSkipped, the reason) and returns nullopt.
std::optional<Grade> GradeInSandbox(const json& entry, const std::string& text,
                                    bool truncated = false) {
  Grade grade = RunGrader(entry, text, &Bubblewrap(), truncated);
  if (auto why = Bubblewrap().Unavailable()) {
    CHECK(grade.status == GradeStatus::kSkipped);
    CHECK(grade.reason == *why);
    WARN("bubblewrap unavailable, code_repair execution not tested: " << *why);
    return std::nullopt;
  }
  if (FindSandboxProgram("node").empty()) {
    CHECK(grade.status == GradeStatus::kSkipped);
    CHECK(grade.reason == "node is not installed (install Debian's nodejs package)");
    WARN("node is not installed, code_repair execution not tested");
    return std::nullopt;
  }
  return grade;
}

std::string Fenced(const std::string& code, const std::string& tag = "javascript") {
  return "```" + tag + "\n" + code + "\n```";
}

const std::string kGoodReturn =
    "  return s.toLowerCase().trim().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');";
const std::string kGoodFix = "function slugify(s) {\n" + kGoodReturn + "\n}";

struct Case {
  const char* name;
  std::string output;
  bool truncated;
  int zx_score;
  int tests_passed;
  bool compiled;
};

TEST_CASE("zx code_repair: CP-L2-TD-JS-003 scores as zx-bench scores it", "[graders][zxbench]") {
  const json entry = FixtureEntry();
  const std::vector<Case> cases = {
      // correct one-line fix: one block, 3/3 cases, compiles; one-line fix -> 60/60:
      // 10 + 20 + 40 + 12 + 6 = 88.
      {"correct fix", "修复如下：\n\n" + Fenced(kGoodFix), false, 88, 3, true},
      // wrong fix: /\s+/ -> '-' only: 'hello-world' passes, '-a-b-' and 'c++-&-go!' fail ->
      // test_pass round(33.3) = 33; one-line fix -> 10 + 20 + 13.2 + 12 + 6 = 61.2 -> 61.
      {"wrong fix",
       Fenced("function slugify(s) {\n  return s.toLowerCase().replace(/\\s+/g, '-');\n}"), false,
       61, 1, true},
      // malformed code: a missing ')' -> node --check fails -> compilation 0 and no case runs
      // (J L169-171); one-line fix -> 10 + 0 + 0 + 12 + 6 = 28.
      {"malformed code",
       Fenced("function slugify(s) {\n  return s.toLowerCase().replace(/ +/g, '-';\n}"), false,
       28, 0, false},
      // truncated mid-function: the fence never closes -> no block (C L149) -> heuristic: the
      // line "function slugify(s) {" matches function\s+slugify\s*\( (C L273) and brace
      // matching runs to the end (C L359-372): 2 lines, no closing brace -> node --check fails.
      // patch_extraction 40; patch lines {function..., return...}: unique 4, changed 3 -> .75 ->
      // 60; added 1 + removed 2 = 3/3 -> 40: 4 + 0 + 0 + 12 + 4 = 20. (The official scorer
      // ignores the truncation flag.)
      {"truncated",
       "Here is the fix:\n\n```javascript\nfunction slugify(s) {\n"
       "  return s.toLowerCase().trim().replace(/[^a-z0-9]+/g, '-')",
       true, 20, 0, false},
      // formatted differently: prose, an untagged fence holding a chained rewrite, then a
      // tagged usage block. rankBlocks: block 0 = 50 (names slugify) + 15 (7 lines) + 0 = 65;
      // block 1 = 50 - 20 (1 line) + 10 (last) = 40 -> block 0. It passes 3/3. Patch lines: 6
      // distinct, 2 shared -> unique 7, changed 5 -> .71 -> 60; added 4 + removed 1 = 5/3 -> 40:
      // 10 + 20 + 40 + 12 + 4 = 86.
      {"different fence and extra prose",
       "修复思路：先转小写，把非字母数字串替换为 '-'，再去掉首尾的 '-'。\n\n```\n"
       "function slugify(s) {\n  return s\n    .toLowerCase()\n    .replace(/[^a-z0-9]+/g, '-')\n"
       "    .replace(/^-+|-+$/g, '');\n}\n```\n\n用法：\n\n```js\n"
       "console.log(slugify('Hello World')); // hello-world\n```\n",
       false, 86, 3, true},
      // a ~~~ fence is no fence to zx-bench: heuristic extraction finds the function (C L273),
      // brace matching stops after "}" (C L371) -> the correct 3 lines; patch_extraction 40:
      // 4 + 20 + 40 + 12 + 6 = 82.
      {"tilde fence", "~~~js\n" + kGoodFix + "\n~~~", false, 82, 3, true},
      // "ANSWER:" and the whole fix on one line: the label is stripped (C L219); the line
      // matches function\s+slugify\s*\( -> patch = that line; 3/3. Patch set {the line}: unique
      // 4, changed 4 -> 40; added 1 + removed 3 = 4/3 -> 40: 4 + 20 + 40 + 8 + 4 = 76.
      {"ANSWER label, one line",
       "ANSWER: function slugify(s) { return s.trim().toLowerCase()"
       ".replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, ''); }",
       false, 76, 3, true},
      // CRLF line ends: the block is everything after the fence line's "\r\n", trimmed; the
      // patch lines end in "\r", which trim() removes -> same sets as the correct fix -> 88.
      {"CRLF", "```javascript\r\nfunction slugify(s) {\r\n" + kGoodReturn + "\r\n}\r\n```\r\n",
       false, 88, 3, true},
      // the original code returned unchanged: 1/3 ('hello-world' only); nothing changed ->
      // patch_quality 0 (C L480) and scope 0 (C L545): 10 + 20 + 13.2 + 0 + 0 = 43.2 -> 43.
      {"unchanged source",
       Fenced("function slugify(s) {\n  return s.toLowerCase().replace(/ /g, '-');\n}"), false,
       43, 1, true},
      // CommonJS export: node --check passes, but candidate.mjs is an ES module, so `module`
      // is undefined when it loads -> every case fails; the extra line: unique 5, changed 3 ->
      // .6 -> 60; added 2 + removed 1 = 3/3 -> 40: 10 + 20 + 0 + 12 + 4 = 46.
      {"CommonJS export", Fenced(kGoodFix + "\nmodule.exports = { slugify };"), false, 46, 0, true},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      const auto grade = GradeInSandbox(entry, c.output, c.truncated);
      if (!grade) return;
      INFO(grade->reason << "\n" << grade->evidence.dump(2));
      REQUIRE(grade->status == GradeStatus::kGraded);
      CHECK(ZxScore(*grade) == c.zx_score);
      CHECK(grade->score == Approx(c.zx_score / 100.0));
      CHECK(grade->passed == (c.zx_score >= 60));
      CHECK(grade->evidence["tests_passed"] == c.tests_passed);
      CHECK(grade->evidence["tests_total"] == 3);
      CHECK(grade->evidence["compiled"] == c.compiled);
      CHECK(grade->evidence["sandbox_runs"] == (c.compiled ? 4 : 1));  // J L169-171
    }
  }
}

TEST_CASE("zx code_repair: an output without code scores 0 without running anything",
          "[graders][zxbench]") {
  const json entry = FixtureEntry();
  // No fence, and heuristicExtractCode finds no function, definition or 3-line indented code
  // (C L215-264) -> "No code found in output", total 0 (C L1305). Nothing runs, so no sandbox
  // is needed.
  for (const char* text : {"I cannot fix this without more context.",
                           "把 replace(/ /g, '-') 改成先 trim 再替换即可。"}) {
    const Grade grade = RunGrader(entry, text, nullptr);
    INFO(text);
    CHECK(grade.status == GradeStatus::kGraded);
    CHECK(ZxScore(grade) == 0);
    CHECK(grade.reason == "no code found in the output");
  }
  const Grade empty = RunGrader(entry, " \n\t", nullptr);
  CHECK(empty.status == GradeStatus::kNoAnswer);
  CHECK(empty.reason == "empty output");
}

TEST_CASE("zx code_repair: an infinite loop is killed at the limit and fails its case",
          "[graders][zxbench][slow]") {
  const json entry = FixtureEntry();
  // Loops forever only on 'C++ & Go!': that case is killed at 8 s (zx-bench's timeoutMs 3000
  // plus the runner's 5000, J L148) and fails; the others pass -> test_pass round(66.7) = 67.
  // Patch: 4 distinct lines, 2 shared -> unique 5, changed 3 -> .6 -> 60; added 2 + removed 1
  // = 3/3 -> 40: 10 + 20 + 26.8 + 12 + 4 = 72.8 -> 73.
  const auto start = std::chrono::steady_clock::now();
  const auto grade = GradeInSandbox(
      entry, Fenced("function slugify(s) {\n  while (s.includes('&')) {}\n" + kGoodReturn + "\n}"));
  if (!grade) return;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(grade->reason << "\n" << grade->evidence.dump(2));
  REQUIRE(grade->status == GradeStatus::kGraded);
  CHECK(ZxScore(*grade) == 73);
  CHECK(grade->evidence["tests_passed"] == 2);
  const json& looping = grade->evidence["cases"][2];
  CHECK(looping["id"] == "CP-L2-TD-JS-003-hidden-3");
  CHECK(looping["timed_out"] == true);
  CHECK(looping["passed"] == false);
  CHECK(looping["wall_seconds"].get<double>() >= 7.9);
  CHECK(grade->reason.find("1 ran out of time") != std::string::npos);
  CHECK(seconds < 30);
}

// A listening socket on the host's loopback, which code in the sandbox must not reach.
class HostListener {
 public:
  HostListener() : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
        listen(fd_, 4) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
      throw std::runtime_error("cannot listen on 127.0.0.1");
    }
    port_ = ntohs(address.sin_port);
  }
  ~HostListener() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

TEST_CASE("zx code_repair: code that tries to escape the sandbox finds nothing",
          "[graders][zxbench]") {
  const json entry = FixtureEntry();
  const HostListener listener;
  std::random_device device;
  const std::filesystem::path marker = std::filesystem::temp_directory_path() /
                                       ("evalrun-escape-" + std::to_string(device()));
  // Tries to write under /usr, list /root and /home, write a file in the host's /tmp and reach
  // a port listening on the host's loopback; slugify answers wrongly if anything worked.
  const std::string code =
      "import fs from 'node:fs';\nimport net from 'node:net';\nconst escaped = [];\n"
      "const attempts = {\n"
      "  'wrote /usr': () => fs.writeFileSync('/usr/evalrun-escape', 'x'),\n"
      "  'listed /root': () => fs.readdirSync('/root'),\n"
      "  'listed /home': () => fs.readdirSync('/home'),\n};\n"
      "for (const [what, attempt] of Object.entries(attempts)) {\n"
      "  try { attempt(); escaped.push(what); } catch {}\n}\n"
      "try { fs.writeFileSync('" + marker.string() + "', 'x'); } catch {}\n"
      "const connected = await new Promise((resolve) => {\n"
      "  const socket = net.connect(" + std::to_string(listener.port()) + ", '127.0.0.1');\n"
      "  const timer = setTimeout(() => { socket.destroy(); resolve(false); }, 1000);\n"
      "  socket.on('connect', () => { clearTimeout(timer); socket.destroy(); resolve(true); });\n"
      "  socket.on('error', () => { clearTimeout(timer); resolve(false); });\n});\n"
      "if (connected) escaped.push('reached the host network');\n"
      "export function slugify(s) {\n"
      "  if (escaped.length > 0) return 'escaped: ' + escaped.join(', ');\n" +
      kGoodReturn + "\n}";
  // 3/3 when every attempt failed. The patch shares only "}" with the source: ratio above .8
  // -> 40, and scope far above .7 -> 40: 10 + 20 + 40 + 8 + 4 = 82.
  const auto grade = GradeInSandbox(entry, Fenced(code));
  if (!grade) return;
  INFO(grade->reason << "\n" << grade->evidence.dump(2));
  REQUIRE(grade->status == GradeStatus::kGraded);
  CHECK(grade->evidence["tests_passed"] == 3);
  CHECK(ZxScore(*grade) == 82);
  CHECK_FALSE(std::filesystem::exists(marker));
  CHECK_FALSE(std::filesystem::exists("/usr/evalrun-escape"));
}

TEST_CASE("zx code_repair: a 10 MB output and invalid UTF-8 are graded, not crashed on",
          "[graders][zxbench]") {
  const json entry = FixtureEntry();
  SECTION("10 MB of near-fences after the fix") {
    // "```js {\n" never opens a block (the whitespace after the tag has no newline before
    // "{", C L149), so the one block is the fix: 88 as "correct fix".
    std::string junk;
    while (junk.size() < (10u << 20)) junk += "```js {\n} ";
    const auto start = std::chrono::steady_clock::now();
    const auto grade = GradeInSandbox(entry, Fenced(kGoodFix) + "\n" + junk);
    if (!grade) return;
    INFO(grade->reason);
    CHECK(ZxScore(*grade) == 88);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
  }
  SECTION("10 MB of prose lines, no code") {
    // No fence; no line matches a function or definition pattern and no line looks like code
    // (C L403-438) -> no code -> 0, found in linear time.
    std::string prose;
    while (prose.size() < (10u << 20)) prose += "the quick brown fox jumps over the lazy dog\n";
    const auto start = std::chrono::steady_clock::now();
    const Grade grade = RunGrader(entry, prose, nullptr);
    CHECK(grade.status == GradeStatus::kGraded);
    CHECK(ZxScore(grade) == 0);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  }
  SECTION("invalid UTF-8 in the prose and in a comment of the code") {
    // zx-bench decodes the reply as UTF-8 with U+FFFD for bad bytes; the comment changes only
    // the return line, which is rewritten anyway: 88 as "correct fix".
    const std::string code = "function slugify(s) {\n" + kGoodReturn + " // \xff\xfe\xc3\n}";
    const auto grade = GradeInSandbox(entry, "修复 \xed\xa0\x80 如下\n" + Fenced(code));
    if (!grade) return;
    INFO(grade->reason);
    CHECK(ZxScore(*grade) == 88);
    CHECK_NOTHROW(grade->evidence.dump());
  }
}

TEST_CASE("zx code_repair: Python candidates run with python3, v1 and v2 (keyword) calls",
          "[graders][zxbench]") {
  // The fixture entry made a Python one: isolated-json-v1 supports python (J L116-120); the
  // candidate is candidate.py, checked with ast.parse (J L160), imported by the driver (J L84-99).
  json entry = FixtureEntry();
  entry["language"] = "python";
  entry["sourceCode"] = "def slugify(s):\n    return s.lower().replace(' ', '-')";
  const std::string fix =
      "import re\n\ndef slugify(s):\n"
      "    return re.sub(r'[^a-z0-9]+', '-', s.lower()).strip('-')";
  // 3/3. Patch lines {import re, def slugify(s):, return re.sub(...)} against the source's 2:
  // 1 shared -> unique 4, changed 3 -> .75 -> 60; added 2 + removed 1 = 3/2 -> 40:
  // 10 + 20 + 40 + 12 + 4 = 86.
  SECTION("isolated-json-v1") {}
  SECTION("isolated-json-v2: the argument passed by keyword") {
    // v2 is Python only and adds one keyword dictionary per call (J L44-47, L95).
    json& contract = entry["requirements"]["isolatedJson"];
    contract["protocol"] = "isolated-json-v2";
    for (auto& c : contract["cases"]) {
      c["keywordArgs"] = json::array({{{"s", c["calls"][0][0]}}});
      c["calls"] = json::array({json::array()});
    }
  }
  Grade grade = RunGrader(entry, Fenced(fix, "python"), &Bubblewrap());
  if (auto why = Bubblewrap().Unavailable()) {
    CHECK(grade.status == GradeStatus::kSkipped);
    CHECK(grade.reason == *why);
    return;
  }
  if (FindSandboxProgram("python3").empty()) {
    CHECK(grade.status == GradeStatus::kSkipped);
    CHECK(grade.reason == "python3 is not installed (install Debian's python3 package)");
    return;
  }
  INFO(grade.reason << "\n" << grade.evidence.dump(2));
  REQUIRE(grade.status == GradeStatus::kGraded);
  CHECK(grade.evidence["tests_passed"] == 3);
  CHECK(ZxScore(grade) == 86);
  // A syntax error stops at ast.parse: compilation 0, nothing else runs. "def slugify(s)"
  // without ':' vs the source: unique 3, changed 2 -> .67 -> 60; added 1 + removed 1 = 2/2 ->
  // 40: 10 + 0 + 0 + 12 + 4 = 26.
  grade = RunGrader(entry, Fenced("def slugify(s)\n    return s.lower().replace(' ', '-')", "py"),
                    &Bubblewrap());
  CHECK(grade.evidence["compiled"] == false);
  CHECK(grade.evidence["sandbox_runs"] == 1);
  CHECK(ZxScore(grade) == 26);
}

// ---- The comparison, with a scripted sandbox --------------------------------------------------

// Answers the syntax check with `check` and every case run with `run` (its stdout, exit code).
class ScriptedSandbox final : public Sandbox {
 public:
  ScriptedSandbox(SandboxResult check, SandboxResult run)
      : check_(std::move(check)), run_(std::move(run)) {}
  std::optional<std::string> Unavailable() const override { return std::nullopt; }
  SandboxResult Run(const SandboxRun& run) const override {
    inputs_.push_back(run.files.count("input.json") ? run.files.at("input.json") : "");
    return run.files.count("input.json") ? run_ : check_;
  }
  std::string Describe() const override { return "scripted"; }
  mutable std::vector<std::string> inputs_;  // what each run received as input.json

 private:
  SandboxResult check_;
  SandboxResult run_;
};

SandboxResult Exited(int code, std::string stdout_text = "") {
  SandboxResult r;
  r.exit_code = code;
  r.stdout_text = std::move(stdout_text);
  r.wall_seconds = 0.05;
  return r;
}

TEST_CASE("zx code_repair: only strictly equal JSON arrays on stdout pass a case",
          "[graders][zxbench]") {
  if (FindSandboxProgram("node").empty()) {
    const ScriptedSandbox sandbox(Exited(0), Exited(0));
    const Grade grade = RunGrader(FixtureEntry(), Fenced(kGoodFix), &sandbox);
    CHECK(grade.status == GradeStatus::kSkipped);
    CHECK(grade.reason == "node is not installed (install Debian's nodejs package)");
    return;
  }
  // Every case run prints `stdout` (exit 0), so all three cases get the same observation; only
  // the first case expects ["hello-world"]. compareJsonObservation (J L58-68): at most 64 KiB,
  // JSON.parse, an array of plain values (no -0, J L30), same length, isDeepStrictEqual.
  // Scores with the one-line fix: 1 pass -> 61 ("wrong fix"), none -> 10 + 20 + 12 + 6 = 48.
  auto [stdout_text, passes] = GENERATE(table<std::string, bool>({
      {"[\"hello-world\"]", true},
      {"  [\"hello-world\"]\n", true},          // the runner trims stdout
      {"[\"hello-world\"]PASS", false},         // no markers, no prose
      {"PASS", false},
      {"\"hello-world\"", false},               // not an array
      {"[\"hello-world\",\"x\"]", false},       // wrong length
      {"{\"0\":\"hello-world\"}", false},
      {"```json\n[\"hello-world\"]\n```", false},
      {"[\"Hello-World\"]", false},
      {"[-0]", false},
      {"[1e400]", false},                       // Infinity is not JSON
      {"[\"hello-world\"" + std::string(70000, ' ') + "]", false},  // over 64 KiB (J L59)
  }));
  const ScriptedSandbox sandbox(Exited(0), Exited(0, stdout_text));
  const Grade grade = RunGrader(FixtureEntry(), Fenced(kGoodFix), &sandbox);
  INFO(stdout_text.substr(0, 40) << " " << grade.reason);
  REQUIRE(grade.status == GradeStatus::kGraded);
  CHECK(grade.evidence["tests_passed"] == (passes ? 1 : 0));
  CHECK(ZxScore(grade) == (passes ? 61 : 48));
  // The sandbox saw the entry point and the arguments, never the expected values or ids.
  REQUIRE(sandbox.inputs_.size() == 4);
  CHECK(sandbox.inputs_[1] == R"({"calls":[["Hello World"]],"entrypoint":"slugify"})");
  for (const auto& input : sandbox.inputs_) CHECK(input.find("hidden") == std::string::npos);
}

TEST_CASE("zx code_repair: a failed exit, a timeout or too much output fails the case",
          "[graders][zxbench]") {
  if (FindSandboxProgram("node").empty()) return;  // covered by the test above
  SandboxResult crashed = Exited(1, "[\"hello-world\"]");
  SandboxResult timed_out = Exited(137, "[\"hello-world\"]");
  timed_out.timed_out = true;
  SandboxResult noisy = Exited(0, "[\"hello-world\"]");
  noisy.stderr_text.assign(64 * 1024, 'x');  // stdout and stderr together over 64 KiB
  for (const auto& run : {crashed, timed_out, noisy}) {
    const ScriptedSandbox sandbox(Exited(0), run);
    const Grade grade = RunGrader(FixtureEntry(), Fenced(kGoodFix), &sandbox);
    CHECK(grade.status == GradeStatus::kGraded);
    CHECK(grade.evidence["tests_passed"] == 0);
    CHECK(ZxScore(grade) == 48);
  }
}

TEST_CASE("zx code_repair: a sandbox that never starts is an environment error",
          "[graders][zxbench]") {
  if (FindSandboxProgram("node").empty()) return;
  // runInContainer's infrastructureError -> pending, not a model score (C L1322). A run that
  // never started looks like plugins/sandbox.cpp's SetupFailure: exit 127, no time, its message.
  SandboxResult never = Exited(127);
  never.wall_seconds = 0;
  never.stderr_text = "evalrun sandbox: cannot create a temporary directory";
  const ScriptedSandbox broken(never, never);
  const Grade grade = RunGrader(FixtureEntry(), Fenced(kGoodFix), &broken);
  CHECK(grade.status == GradeStatus::kEnvError);
  CHECK(grade.reason == "the sandbox failed: evalrun sandbox: cannot create a temporary directory");
  // The same text from a candidate that ran (it took time) is the candidate's failure.
  SandboxResult spoofed = never;
  spoofed.wall_seconds = 0.2;
  const ScriptedSandbox spoofing(Exited(0), spoofed);
  const Grade failed = RunGrader(FixtureEntry(), Fenced(kGoodFix), &spoofing);
  CHECK(failed.status == GradeStatus::kGraded);
  CHECK(ZxScore(failed) == 48);
}

TEST_CASE("zx code_repair: without a sandbox or runtime the grade is skipped with the reason",
          "[graders][zxbench]") {
  const json entry = FixtureEntry();
  const Grade none = RunGrader(entry, Fenced(kGoodFix), nullptr);
  CHECK(none.status == GradeStatus::kSkipped);
  CHECK(none.reason ==
        "no sandbox to run code in (install bubblewrap, or accept the risk with "
        "--unsafe-no-sandbox)");
  class Missing final : public Sandbox {
   public:
    std::optional<std::string> Unavailable() const override {
      return "bubblewrap not installed";
    }
    SandboxResult Run(const SandboxRun&) const override { return {}; }
    std::string Describe() const override { return "missing"; }
  } missing;
  const Grade unavailable = RunGrader(entry, Fenced(kGoodFix), &missing);
  CHECK(unavailable.status == GradeStatus::kSkipped);
  CHECK(unavailable.reason == "bubblewrap not installed");
}

TEST_CASE("zx code_repair: entries zx-bench leaves unmeasured are skipped with its reason",
          "[graders][zxbench]") {
  const json entry = FixtureEntry();
  const ScriptedSandbox sandbox(Exited(0), Exited(0, "[\"hello-world\"]"));
  const auto reason_for = [&](const json& changed, const std::string& output) {
    const Grade grade = RunGrader(changed, output, &sandbox);
    CHECK(grade.status == GradeStatus::kSkipped);
    return grade.reason;
  };
  // isolatedCodeRepairUnavailable (C L1244-1268).
  json no_contract = entry;
  no_contract["requirements"].erase("isolatedJson");
  const std::string not_migrated =
      "zx-bench leaves this entry unmeasured: the entry has no valid isolated execution contract "
      "for its language and function (此题尚未迁移到可信观测判分通道，旧同进程测试仅供诊断)";
  CHECK(reason_for(no_contract, Fenced(kGoodFix)) == not_migrated);
  json renamed = entry;
  renamed["functionName"] = "toSlug";  // entrypoint !== functionName (C L1262)
  CHECK(reason_for(renamed, Fenced(kGoodFix)) == not_migrated);
  json bad_entrypoint = entry;
  bad_entrypoint["requirements"]["isolatedJson"]["entrypoint"] = "slugify();evil";
  bad_entrypoint["functionName"] = "slugify();evil";
  CHECK(reason_for(bad_entrypoint, Fenced(kGoodFix)) == not_migrated);
  json extra_test = entry;
  extra_test["hiddenTests"].push_back({{"id", "CP-L2-TD-JS-003-hidden-4"}});
  CHECK(reason_for(extra_test, Fenced(kGoodFix)) ==
        "zx-bench leaves this entry unmeasured: the contract's cases and hiddenTests disagree "
        "(隔离调用契约与原测试清单不一致)");
  json two = entry;
  two["requirements"]["quickJsObservation"] = json::object();
  CHECK(reason_for(two, Fenced(kGoodFix)) ==
        "zx-bench leaves this entry unmeasured: the entry names more than one execution "
        "contract (不能同时指定多个执行观测协议)");
  json other = no_contract;
  other["requirements"]["isolatedPhpJson"] = json::object();  // a kind evalrun does not run
  CHECK(reason_for(other, "no code here") ==
        "evalrun does not run zx-bench's isolatedPhpJson contracts");
  // Valid for zx-bench, not runnable here: after extraction (no code would still score 0).
  json typescript = entry;
  typescript["language"] = "typescript";
  CHECK(reason_for(typescript, Fenced(kGoodFix, "ts")) ==
        "evalrun does not run isolated-json-v1 contracts for typescript (zx-bench transpiles "
        "with the TypeScript compiler first)");
  CHECK(ZxScore(RunGrader(typescript, "no code here", &sandbox)) == 0);
}

TEST_CASE("zx code_repair: no_bug trap entries are judged from the text", "[graders][zxbench]") {
  json entry = FixtureEntry();
  entry["expectedVerdict"] = "no_bug";
  // The official scorer delegates to the diagnostic evaluator's no_bug branch (C L1276-1279,
  // C L608-666): verdict from NEGATIVE_NO_BUG_RE / POSITIVE_FIX_RE on the lower-cased text
  // (C L136, L140; both or neither -> 50 or the keyword lists), explanation 70 when the reply
  // is over 100 UTF-16 units else 40 (requirements is an object, C L643-650), scope of the
  // last block (C L653; none: all 3 source lines removed -> 3/3 -> 40);
  // total = round(.7 v + .2 e + .1 s) (C L657-661). Nothing runs.
  const auto score = [&](const std::string& text) {
    const Grade grade = RunGrader(entry, text, nullptr);
    INFO(text << " " << grade.reason);
    CHECK(grade.status == GradeStatus::kGraded);
    return ZxScore(grade);
  };
  // "代码 本身 正确" matches the third negative alternative; no fix phrase; 14 UTF-16 units: e = 40;
  // 70 + 8 + 4 = 82.
  CHECK(score("这段代码本身正确，无需改动。") == 82);
  // "NO BUG" lower-cases to "no bug" -> 100; the unchanged source in a block -> scope 0
  // (C L545); the reply is over 100 units -> 70: 70 + 14 + 0 = 84.
  CHECK(score("NO BUG here: the function already does what the prompt asks for.\n" +
              Fenced(entry["sourceCode"].get<std::string>())) == 84);
  // "应该修复" is a positive fix (需要|应该|应当 + 修复) -> 0: 0 + 8 + 4 = 12.
  CHECK(score("应该修复：改成先 trim。") == 12);
  // "不需要修复" is negative, and "需要修复" inside it is preceded by 不 -> no positive: 82.
  CHECK(score("不需要修复。") == 82);
  // Both: "no bug" and "should be fixed" -> 50: 35 + 8 + 4 = 47.
  CHECK(score("no bug, but it should be fixed") == 47);
}

TEST_CASE("zx code_repair: CheckSpec names the entry and the problem", "[graders][zxbench]") {
  const SourceLocation where{"zx-bench/benchmark.json", 12, 3};
  const json entry = FixtureEntry();
  CHECK_NOTHROW(CodeRepair().CheckSpec(entry, where));
  auto [change, message] = GENERATE(table<std::string, std::string>({
      {"spec", "the spec must be the zx-bench entry (a JSON object)"},
      {"requirements",
       "'requirements' must be an object (requirements.isolatedJson holds the execution "
       "contract)"},
      {"language", "'language' must be a string, not a number"},
      {"sourceCode", "'sourceCode' must be a string (the code to repair), not a list"},
      {"hiddenTests",
       "'hiddenTests' must be a list of {id, ...} (one per contract case), not a mapping"},
  }));
  json spec = entry;
  if (change == "spec") spec = json::array();
  if (change == "requirements") spec["requirements"] = "trim";
  if (change == "language") spec["language"] = 7;
  if (change == "sourceCode") spec["sourceCode"] = json::array();
  if (change == "hiddenTests") spec["hiddenTests"] = json::object();
  try {
    CodeRepair().CheckSpec(spec, where);
    FAIL("no error for " << change);
  } catch (const Error& e) {
    CHECK(std::string(e.what()) ==
          "zx-bench/benchmark.json:12:3: zxbench:code_repair: " + message);
  }
}

TEST_CASE("zx code_repair: the registry holds it under its zx-bench name", "[graders][zxbench]") {
  const Grader* grader = GraderRegistry::Builtin().Find("zxbench:code_repair");
  REQUIRE(grader != nullptr);
  CHECK(grader->version() == "1");
}

TEST_CASE("zx code_repair: sandbox start-up per run", "[graders][zxbench]") {
  if (Bubblewrap().Unavailable()) {
    WARN("bubblewrap unavailable: start-up not measured");
    return;
  }
  SandboxRun run;
  run.argv = {"true"};
  double total = 0;
  for (int i = 0; i < 10; ++i) total += Bubblewrap().Run(run).wall_seconds;
  const Grade grade = RunGrader(FixtureEntry(), Fenced(kGoodFix), &Bubblewrap());
  if (grade.status != GradeStatus::kGraded) return;  // node missing: said above
  const double suite = grade.evidence["sandbox_wall_seconds"].get<double>();
  WARN("sandbox start-up: " << total / 10 * 1000 << " ms per run of `true`; one grade: "
                            << grade.evidence["sandbox_runs"] << " runs, " << suite * 1000
                            << " ms");
  CHECK(grade.evidence["sandbox_runs"] == 4);
  CHECK(suite > 0);
}

// ---- requirements.isolatedPythonJson (isolated-python-json-v1), on real entries ---------------

json MoreEntry(const std::string& id) {
  for (const auto& entry : json::parse(testing::ReadFixture("zx-bench/more_entries.json"))) {
    if (entry.value("id", "") == id) return entry;
  }
  throw std::runtime_error("fixture entry " + id + " missing");
}

TEST_CASE("zx code_repair: isolated-python-json-v1 adapters on real entries",
          "[graders][zxbench]") {
  struct Row {
    const char* id;
    const char* name;
    std::string code;
    int passed;  // of the entry's cases
  };
  const std::vector<Row> rows = {
      {"CP-L1-PY-001", "mutable-default fixed",
       "def add_item(item, cart=None):\n    if cart is None:\n        cart = []\n"
       "    cart.append(item)\n    return cart",
       3},
      // The bug itself: the second call sees the first one's item; the explicit cart still works.
      {"CP-L1-PY-001", "mutable-default as given",
       "def add_item(item, cart=[]):\n    cart.append(item)\n    return cart", 2},
      // Prints go to stderr: they cannot spoil the observation.
      {"CP-L1-PY-001", "a fix that prints",
       "def add_item(item, cart=None):\n    print('debug', item)\n    cart = [] if cart is None "
       "else cart\n    cart.append(item)\n    return cart",
       3},
      {"CP-L3-SEC-PY-001", "sql-param with a placeholder",
       "def find_user(conn, name):\n    cur = conn.cursor()\n"
       "    cur.execute(\"SELECT * FROM users WHERE name = ?\", (name,))\n"
       "    return cur.fetchall()",
       2},
      // zx-bench wants this exact text: %s is another driver's placeholder.
      {"CP-L3-SEC-PY-001", "sql-param with %s",
       "def find_user(conn, name):\n    cur = conn.cursor()\n"
       "    cur.execute(\"SELECT * FROM users WHERE name = %s\", (name,))\n"
       "    return cur.fetchall()",
       0},
      {"CP-L3-SEC-PY-002", "path-safe fixed",
       "import os\n\ndef read_upload(base, name):\n    root = os.path.realpath(base)\n"
       "    path = os.path.realpath(os.path.join(base, name))\n"
       "    if os.path.commonpath([root, path]) != root:\n        raise ValueError('outside')\n"
       "    with open(path) as f:\n        return f.read()",
       2},
      {"CP-L3-SEC-PY-002", "path-safe as given",
       "import os\n\ndef read_upload(base, name):\n    path = os.path.join(base, name)\n"
       "    with open(path) as f:\n        return f.read()",
       1},
      {"CP-L3-PERF-PY-001", "pair-sum in linear time",
       "def has_pair_sum(nums, target):\n    seen = set()\n    for x in nums:\n"
       "        if target - x in seen:\n            return True\n        seen.add(x)\n"
       "    return False",
       5},
  };
  for (const Row& row : rows) {
    SECTION(std::string(row.id) + ": " + row.name) {
      const json entry = MoreEntry(row.id);
      CHECK(CodeRepair().Unrunnable(entry).empty());
      const Grade grade = RunGrader(entry, Fenced(row.code, "python"), &Bubblewrap());
      if (auto why = Bubblewrap().Unavailable()) {
        CHECK(grade.status == GradeStatus::kSkipped);
        return;
      }
      INFO(grade.reason << "\n" << grade.evidence.dump(2));
      REQUIRE(grade.status == GradeStatus::kGraded);
      CHECK(grade.evidence["protocol"] == "isolated-python-json-v1");
      CHECK(grade.evidence["compiled"] == true);
      CHECK(grade.evidence["tests_passed"] == row.passed);
      const json& axes = grade.evidence["zx_axes"];
      const int total_cases = grade.evidence["tests_total"].get<int>();
      CHECK(axes["test_pass"] ==
            static_cast<int>(std::floor(100.0 * row.passed / total_cases + 0.5)));
      // zx-bench's total: .1 extraction + .2 compilation + .4 tests + .2 quality + .1 scope.
      const double total = axes["patch_extraction"].get<int>() * .1 +
                           axes["compilation"].get<int>() * .2 + axes["test_pass"].get<int>() * .4 +
                           axes["patch_quality"].get<int>() * .2 +
                           axes["scope_discipline"].get<int>() * .1;
      CHECK(ZxScore(grade) == static_cast<int>(std::floor(total + 0.5)));
    }
  }
}

TEST_CASE("zx code_repair: isolated-python-json-v1 contracts are checked as zx-bench checks them",
          "[graders][zxbench]") {
  json entry = MoreEntry("CP-L1-PY-001");
  const std::string unmeasured =
      "zx-bench leaves this entry unmeasured: the entry has no valid isolated execution contract "
      "for its language and function (此题尚未迁移到可信观测判分通道，旧同进程测试仅供诊断)";
  SECTION("an unknown adapter") {
    entry["requirements"]["isolatedPythonJson"]["adapter"] = "nope";
    CHECK(CodeRepair().Unrunnable(entry) == unmeasured);
  }
  SECTION("a predicate with an extra key") {
    entry["requirements"]["isolatedPythonJson"]["cases"][0]["expected"][0]["type"] = "list";
    CHECK(CodeRepair().Unrunnable(entry) == unmeasured);
  }
  SECTION("another language") {
    entry["language"] = "javascript";
    CHECK(CodeRepair().Unrunnable(entry) == unmeasured);
  }
  SECTION("an approx predicate on a path holds within its tolerance") {
    // CP-L3-PY-011's shape: all [{path [0], approx 15.70795 ± .001}], exclusive.
    auto& c = entry["requirements"]["isolatedPythonJson"]["cases"][0];
    c["expected"][0] = json::parse(
        R"({"all":[{"path":[0],"approx":{"value":1.0004,"absoluteTolerance":0.001,"inclusive":false}}]})");
    CHECK(CodeRepair().Unrunnable(entry).empty());
    const Grade grade = RunGrader(entry, Fenced("def add_item(item, cart=None):\n    return [item]",
                                                "python"),
                                  &Bubblewrap());
    if (Bubblewrap().Unavailable()) return;
    INFO(grade.evidence.dump(2));
    CHECK(grade.evidence["cases"][0]["passed"] == true);  // [1]: |1 - 1.0004| < .001
  }
}

// ---- requirements.isolatedJavascriptJson / isolatedTypescriptJson, on real entries -----------
// Sources (bboysky/ajubyte-model-lab at 22bb91d1, packages/core/src/execution/):
// isolatedJavascriptJson.ts: the contract (13 adapters, 1-20 cases of 1-20 calls, each call's
// JSON under 65,536 bytes, one predicate per call), `node --check candidate.mjs` first (every
// case fails without running when it fails), then per case `node driver.mjs` with the adapter's
// fixed scenario; timeoutMs 8000 (fib 4000). isolatedTypescriptJson.ts: 3 adapters, no syntax
// step: `export` dropped before function/class/type/interface, `export {names};` appended,
// Node 22 strips the types as it loads; compiled stays true unless a case's run fails (a
// non-zero exit, a timeout); its driver leaves console.log on stdout. A case passes when the
// run succeeded and stdout is a JSON array, one value per call, each matching its predicate.
// The scores follow codeRepair.ts's total (.1 extraction + .2 compilation + .4 tests + .2
// quality + .1 scope), checked from the axes below.

// The checks every isolated-contract row makes: compiled and passed as expected, and the score
// zx-bench's codeRepair.ts gives from the axes (.1 extraction + .2 compilation + .4 tests + .2
// quality + .1 scope, test_pass = round(100 passed / cases)). Returns the number of cases.
int CheckIsolatedScore(const Grade& grade, int passed, bool compiled) {
  CHECK(grade.evidence["compiled"] == compiled);
  CHECK(grade.evidence["tests_passed"] == passed);
  const json& axes = grade.evidence["zx_axes"];
  const int total_cases = grade.evidence["tests_total"].get<int>();
  CHECK(axes["compilation"] == (compiled ? 100 : 0));
  CHECK(axes["test_pass"] == static_cast<int>(std::floor(100.0 * passed / total_cases + 0.5)));
  const double total = axes["patch_extraction"].get<int>() * .1 +
                       axes["compilation"].get<int>() * .2 + axes["test_pass"].get<int>() * .4 +
                       axes["patch_quality"].get<int>() * .2 +
                       axes["scope_discipline"].get<int>() * .1;
  CHECK(ZxScore(grade) == static_cast<int>(std::floor(total + 0.5)));
  return total_cases;
}

bool TypescriptInstalled() {
  return std::filesystem::exists("/usr/share/nodejs/typescript/lib/typescript.js");
}

TEST_CASE("zx code_repair: isolated JavaScript and TypeScript adapters on real entries",
          "[graders][zxbench]") {
  struct Row {
    const char* id;
    const char* name;
    std::string code;
    const char* tag;
    int passed;  // of the entry's cases
    bool compiled;
  };
  const std::string fixed_lru =
      "class LRU {\n  constructor(cap) { this.cap = cap; this.map = new Map(); }\n"
      "  get(k) {\n    if (!this.map.has(k)) return -1;\n    const v = this.map.get(k);\n"
      "    this.map.delete(k);\n    this.map.set(k, v);\n    return v;\n  }\n"
      "  put(k, v) {\n    this.map.delete(k);\n    this.map.set(k, v);\n"
      "    if (this.map.size > this.cap) this.map.delete(this.map.keys().next().value);\n  }\n}";
  const std::string lazy_pages =
      "type Page<T> = { items: T[]; cursor: string | null };\n\n"
      "async function* pageItems<T>(\n  fetchPage: (cursor: string | null) => Promise<Page<T>>,\n"
      "): AsyncGenerator<T> {\n  let cursor: string | null = null;\n  do {\n"
      "    const page = await fetchPage(cursor);\n    yield* page.items;\n"
      "    cursor = page.cursor;\n  } while (cursor !== null);\n}";
  const std::vector<Row> rows = {
      {"CP-L2-TD-JS-004", "lru fixed", fixed_lru, "javascript", 3, true},
      // The bug: nothing is evicted or refreshed; only "get" holds ([1]).
      {"CP-L2-TD-JS-004", "lru as given",
       "class LRU {\n  constructor(cap) { this.cap = cap; this.map = new Map(); }\n"
       "  get(k) { return this.map.has(k) ? this.map.get(k) : -1; }\n"
       "  put(k, v) { this.map.set(k, v); }\n}",
       "javascript", 1, true},
      // console.log goes to stderr in the JavaScript driver: the observation is untouched.
      {"CP-L2-TD-JS-004", "lru fixed, with a log line",
       "console.log('loaded');\n" + fixed_lru, "javascript", 3, true},
      // A syntax error: node --check fails, no case runs.
      {"CP-L2-TD-JS-004", "lru that does not parse", "class LRU {\n  get(k) { return -1 \n",
       "javascript", 0, false},
      {"CP-L3-PERF-JS-001", "fib in linear time",
       "function fib(n) {\n  let a = 0, b = 1;\n  for (let i = 0; i < n; i++) [a, b] = [b, a + b];\n"
       "  return a;\n}",
       "javascript", 3, true},
      // fib(1) = 0 here: every value list is wrong.
      {"CP-L3-PERF-JS-001", "fib off by one",
       "function fib(n) {\n  let a = 0, b = 1;\n  for (let i = 1; i < n; i++) [a, b] = [b, a + b];\n"
       "  return a;\n}",
       "javascript", 0, true},
      {"CP-L3-TS-006", "api-result fixed",
       "export type ApiResult<T> =\n  | { ok: true; value: T }\n  | { ok: false; error: string };\n\n"
       "export function unwrap<T>(r: ApiResult<T>): T {\n  if (!r.ok) throw new Error(r.error);\n"
       "  return r.value;\n}\n\nexport function assertNever(x: never): never {\n"
       "  throw new Error(`Unexpected value: ${x}`);\n}\n\ntype Status = 200 | 404 | 500;\n\n"
       "export function handleStatus(s: Status): string {\n  switch (s) {\n"
       "    case 200: return \"ok\";\n    case 404: return \"nf\";\n    case 500: return \"ise\";\n"
       "  }\n  return assertNever(s);\n}",
       "typescript", 1, true},
      // As given: unwrap and assertNever return undefined; the run succeeds, the value is wrong.
      {"CP-L3-TS-006", "api-result as given",
       "export function unwrap(r: { value: unknown }) { return r.value; }\n"
       "export function assertNever(x: never): never {}\n"
       "export function handleStatus(s: 200 | 404 | 500): string {\n"
       "  return s === 200 ? 'ok' : s === 404 ? 'nf' : 'ise';\n}",
       "typescript", 0, true},
      // Node's strip-only mode refuses an enum: the module never loads.
      {"CP-L3-TS-006", "api-result with an enum",
       "enum Code { Ok = 200 }\nexport function unwrap(r: any) { if (!r.ok) throw new Error(r.error); }\n"
       "export function assertNever(x: never): never { throw new Error(`Unexpected value: ${x}`); }\n"
       "export function handleStatus(s: number): string { return s === Code.Ok ? 'ok' : s === 404 ? "
       "'nf' : 'ise'; }",
       "typescript", 0, false},
      // Nor does it take `<T>expr` (Node 22.23: "The angle-bracket syntax for type assertions").
      {"CP-L3-TS-006", "api-result with an angle-bracket assertion",
       "export function unwrap(r: any) { if (!r.ok) throw new Error(<string>r.error); }\n"
       "export function assertNever(x: never): never { throw new Error(`Unexpected value: ${x}`); }\n"
       "export function handleStatus(s: number): string { return s === 200 ? 'ok' : s === 404 ? "
       "'nf' : 'ise'; }",
       "typescript", 0, false},
      // The TypeScript driver leaves console.log alone: the output is spoiled, the run succeeds.
      {"CP-L3-TS-006", "api-result fixed, with a log line",
       "export function unwrap(r: any) { if (!r.ok) throw new Error(r.error); return r.value; }\n"
       "export function assertNever(x: never): never { console.log('never'); "
       "throw new Error(`Unexpected value: ${x}`); }\n"
       "export function handleStatus(s: number): string { return s === 200 ? 'ok' : s === 404 ? "
       "'nf' : 'ise'; }",
       "typescript", 0, true},
      // A module that never finishes loading: killed at 13 s (timeoutMs 8000 + 5000), a timeout
      // is a failed run, so not compiled either.
      {"CP-L3-TS-006", "api-result that spins forever",
       "while (true) {}\nexport function unwrap(r: any) { return r; }\n"
       "export function assertNever(x: never): never { return x; }\n"
       "export function handleStatus(s: number) { return String(s); }",
       "typescript", 0, false},
      {"CP-L3-TS-005", "page-items lazy", lazy_pages, "typescript", 4, true},
      // As given (every page fetched first): "lazy" sees 2 fetches, "collect" and "empty-page"
      // hold, and "error"'s first next() rejects outside the driver's try: that run exits
      // non-zero, so zx-bench counts the suite as not compiled.
      {"CP-L3-TS-005", "page-items buffered (as given)",
       "type Page<T> = { items: T[]; cursor: string | null };\n\n"
       "async function* pageItems<T>(\n  fetchPage: (cursor: string | null) => Promise<Page<T>>,\n"
       "): AsyncGenerator<T> {\n  const all: T[] = [];\n  let cursor: string | null = null;\n  do {\n"
       "    const page = await fetchPage(cursor);\n    all.push(...page.items);\n"
       "    cursor = page.cursor;\n  } while (cursor !== null);\n  yield* all;\n}",
       "typescript", 2, false},
  };
  for (const Row& row : rows) {
    SECTION(std::string(row.id) + ": " + row.name) {
      const json entry = MoreEntry(row.id);
      const bool typescript = std::string(row.tag) == "typescript";
      const Grade grade = RunGrader(entry, Fenced(row.code, row.tag), &Bubblewrap());
      if (auto why = Bubblewrap().Unavailable()) {
        CHECK(grade.status == GradeStatus::kSkipped);
        return;
      }
      if (typescript && !TypescriptInstalled()) {
        const std::string why =
            "the TypeScript compiler is not installed (install Debian's node-typescript package)";
        CHECK(CodeRepair().Unrunnable(entry) == why);
        CHECK(grade.reason == why);
        WARN("node-typescript is not installed, isolatedTypescriptJson not tested");
        return;
      }
      CHECK(CodeRepair().Unrunnable(entry).empty());
      INFO(grade.reason << "\n" << grade.evidence.dump(2));
      REQUIRE(grade.status == GradeStatus::kGraded);
      CHECK(grade.evidence["protocol"] == (typescript ? "isolated-typescript-json-v1"
                                                      : "isolated-javascript-json-v1"));
      CheckIsolatedScore(grade, row.passed, row.compiled);
      if (std::string(row.name) == "api-result that spins forever") {
        CHECK(grade.evidence["cases"][0]["timed_out"] == true);
        CHECK_THAT(grade.reason, Catch::Contains("1 ran out of time"));
      }
    }
  }
}

TEST_CASE("zx code_repair: the Node contracts are checked as zx-bench checks them",
          "[graders][zxbench]") {
  const std::string unmeasured =
      "zx-bench leaves this entry unmeasured: the entry has no valid isolated execution contract "
      "for its language and function (此题尚未迁移到可信观测判分通道，旧同进程测试仅供诊断)";
  json js = MoreEntry("CP-L2-TD-JS-004");
  json ts = MoreEntry("CP-L3-TS-005");
  json& js_contract = js["requirements"]["isolatedJavascriptJson"];
  json& ts_contract = ts["requirements"]["isolatedTypescriptJson"];
  SECTION("the real entries are runnable") {
    CHECK(CodeRepair().Unrunnable(js).empty());
    if (TypescriptInstalled()) CHECK(CodeRepair().Unrunnable(ts).empty());
  }
  SECTION("an adapter of the other contract") {
    js_contract["adapter"] = "page-items";
    ts_contract["adapter"] = "lru";
    CHECK(CodeRepair().Unrunnable(js) == unmeasured);
    CHECK(CodeRepair().Unrunnable(ts) == unmeasured);
  }
  SECTION("another language") {
    js["language"] = "typescript";
    ts["language"] = "javascript";
    CHECK(CodeRepair().Unrunnable(js) == unmeasured);
    CHECK(CodeRepair().Unrunnable(ts) == unmeasured);
  }
  SECTION("a call of 65,536 bytes: the JavaScript contract refuses it, TypeScript's does not") {
    const json big = json::array({"get", std::string(65536 - 10, 'x')});  // ["get","xx…"]
    REQUIRE(big.dump().size() == 65536);
    js_contract["cases"][0]["calls"][0] = big;
    ts_contract["cases"][0]["calls"][0] = big;
    CHECK(CodeRepair().Unrunnable(js) == unmeasured);
    if (TypescriptInstalled()) CHECK(CodeRepair().Unrunnable(ts).empty());
  }
  SECTION("an empty case id is allowed, a repeated one is not") {
    js_contract["cases"][0]["id"] = "";
    js["hiddenTests"][0]["id"] = "";
    CHECK(CodeRepair().Unrunnable(js).empty());
    js_contract["cases"][1]["id"] = "";
    CHECK(CodeRepair().Unrunnable(js) == unmeasured);
  }
  SECTION("a bare expected value is not a predicate") {
    js_contract["cases"][0]["expected"][0] = 1;
    CHECK(CodeRepair().Unrunnable(js) == unmeasured);
  }
  SECTION("a path predicate reads an array's length") {
    // [-1, 3] for "evict": {"all": [{"path": ["length"], "equals": 2}]} holds.
    js_contract["cases"][1]["expected"][0] = json::parse(R"({"all":[{"path":["length"],"equals":2}]})");
    const Grade grade = RunGrader(js, Fenced("class LRU {\n  get() { return 0; }\n  put() {}\n}"),
                                  &Bubblewrap());
    if (Bubblewrap().Unavailable()) return;
    INFO(grade.evidence.dump(2));
    CHECK(grade.evidence["cases"][1]["passed"] == true);  // [0, 0] has length 2
    CHECK(grade.evidence["cases"][0]["passed"] == false);
  }
}

// ---- requirements.isolatedSqlJson (isolated-sql-json-v1), on real entries ----------------------
// Source: isolatedSqlJson.ts at 22bb91d1. Per case a fresh node:sqlite DatabaseSync(':memory:')
// (foreign keys on, double-quoted string literals off), exec(schema + '\n' + seed), then
// prepare(query).all() (the first statement only) and the `detail` of EXPLAIN QUERY PLAN; a
// case passes when the run succeeded, the rows match `expected` and the plan holds no
// forbidPlan text (here: "CORRELATED SCALAR SUBQUERY") and every requirePlan text; compiled
// stays true unless a run fails (an SQL error, a timeout: timeoutMs 3000 + 5000). No step
// before the cases. The plans quoted are SQLite's (3.40 here; unchanged since 3.36).
TEST_CASE("zx code_repair: isolated-sql-json-v1 on real entries", "[graders][zxbench]") {
  struct Row {
    const char* id;
    const char* name;
    std::string query;  // "" : the entry's own sourceCode
    int passed;
    bool compiled;
  };
  const std::vector<Row> rows = {
      // The join fans out: customer 1's 100 counts twice (250, not 150); case 2 loses customer 2.
      {"CP-L2-SQL-001", "as given", "", 0, true},
      {"CP-L2-SQL-001", "summed on orders alone",
       "SELECT customer_id, SUM(amount) AS total FROM orders GROUP BY customer_id;", 2, true},
      {"CP-L2-SQL-001", "a syntax error", "SELEC customer_id FROM orders;", 0, false},
      // A comment alone prepares no statement: node:sqlite throws.
      {"CP-L2-SQL-001", "only a comment", "-- nothing here", 0, false},
      // Right rows, but the plan says CORRELATED SCALAR SUBQUERY 1.
      {"CP-L3-PERF-SQL-001", "a correlated subquery (as given)", "", 0, true},
      {"CP-L3-PERF-SQL-001", "a LEFT JOIN",
       "SELECT u.id AS user_id, MAX(o.created_at) AS last_order FROM users u LEFT JOIN orders o "
       "ON o.user_id = u.id GROUP BY u.id;",
       2, true},
      // Double-quoted strings are identifiers under node:sqlite: "no such column: 2000".
      {"CP-L3-PERF-SQL-001", "a double-quoted string",
       "SELECT u.id AS user_id, MAX(o.created_at) AS last_order FROM users u LEFT JOIN orders o "
       "ON o.user_id = u.id AND o.created_at > \"2000\" GROUP BY u.id;",
       0, false},
      // prepare() keeps the first statement: the DROP never runs.
      {"CP-L3-PERF-SQL-001", "a second statement is ignored",
       "SELECT u.id AS user_id, MAX(o.created_at) AS last_order FROM users u LEFT JOIN orders o "
       "ON o.user_id = u.id GROUP BY u.id; DROP TABLE orders;",
       2, true},
      // Three correlated subqueries in the plan; the rows themselves are right.
      {"CP-L3-SQL-003", "as given", "", 0, true},
      {"CP-L3-SQL-003", "FILTER aggregates over a join",
       "SELECT u.id, u.name,\n"
       "  COUNT(o.id) FILTER (WHERE o.created_at >= '2024-01-01') AS order_count_2024,\n"
       "  SUM(o.amount) FILTER (WHERE o.status = 'completed') AS total_completed\n"
       "FROM users u JOIN orders o ON o.user_id = u.id\nGROUP BY u.id, u.name\n"
       "ORDER BY total_completed DESC NULLS LAST\nLIMIT 100;",
       4, true},
      {"CP-L2-SQL-001", "a query that never ends",
       "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) AS n "
       "FROM r;",
       0, false},
  };
  for (const Row& row : rows) {
    SECTION(std::string(row.id) + ": " + row.name) {
      const json entry = MoreEntry(row.id);
      const std::string query =
          row.query.empty() ? entry["sourceCode"].get<std::string>() : row.query;
      const Grade grade = RunGrader(entry, Fenced(query, "sql"), &Bubblewrap());
      if (auto why = Bubblewrap().Unavailable()) {
        CHECK(grade.status == GradeStatus::kSkipped);
        return;
      }
      if (FindSandboxProgram("python3").empty()) {
        CHECK(grade.reason == "python3 is not installed (install Debian's python3 package)");
        return;
      }
      CHECK(CodeRepair().Unrunnable(entry).empty());
      INFO(grade.reason << "\n" << grade.evidence.dump(2));
      REQUIRE(grade.status == GradeStatus::kGraded);
      CHECK(grade.evidence["protocol"] == "isolated-sql-json-v1");
      const int total_cases = CheckIsolatedScore(grade, row.passed, row.compiled);
      CHECK(grade.evidence["sandbox_runs"] == total_cases);  // no step before the cases
      if (std::string(row.name) == "a query that never ends") {
        CHECK(grade.evidence["cases"][0]["timed_out"] == true);
      }
    }
  }
}

TEST_CASE("zx code_repair: isolated-sql-json-v1 contracts are checked as zx-bench checks them",
          "[graders][zxbench]") {
  const std::string unmeasured =
      "zx-bench leaves this entry unmeasured: the entry has no valid isolated execution contract "
      "for its language and function (此题尚未迁移到可信观测判分通道，旧同进程测试仅供诊断)";
  json entry = MoreEntry("CP-L3-PERF-SQL-001");
  json& contract = entry["requirements"]["isolatedSqlJson"];
  SECTION("the real entry is runnable") { CHECK(CodeRepair().Unrunnable(entry).empty()); }
  SECTION("an entry point other than query") {
    contract["entrypoint"] = "run";
    entry["functionName"] = "run";
    CHECK(CodeRepair().Unrunnable(entry) == unmeasured);
  }
  SECTION("schema and seed of 131,072 bytes") {
    auto& c = contract["cases"][0];
    c["seed"] = std::string(131072 - c["schema"].get<std::string>().size(), ' ');
    CHECK(CodeRepair().Unrunnable(entry) == unmeasured);
    c["seed"] = std::string(131071 - c["schema"].get<std::string>().size(), ' ');
    CHECK(CodeRepair().Unrunnable(entry).empty());
  }
  SECTION("forbidPlan: falsy is absent, a text of 200 UTF-16 units is too long") {
    auto& c = contract["cases"][0];
    c["forbidPlan"] = false;
    CHECK(CodeRepair().Unrunnable(entry).empty());
    c["forbidPlan"] = json::array({std::string(199, 'x')});
    CHECK(CodeRepair().Unrunnable(entry).empty());
    c["forbidPlan"] = json::array({std::string(200, 'x')});
    CHECK(CodeRepair().Unrunnable(entry) == unmeasured);
    c["forbidPlan"] = "CORRELATED";
    CHECK(CodeRepair().Unrunnable(entry) == unmeasured);
  }
  SECTION("requirePlan must appear in the plan, in any case") {
    for (auto& c : contract["cases"]) c["requirePlan"] = json::array({"left-join"});
    const Grade grade = RunGrader(
        entry,
        Fenced("SELECT u.id AS user_id, MAX(o.created_at) AS last_order FROM users u LEFT JOIN "
               "orders o ON o.user_id = u.id GROUP BY u.id;",
               "sql"),
        &Bubblewrap());
    if (Bubblewrap().Unavailable()) return;
    INFO(grade.evidence.dump(2));
    CHECK(grade.evidence["tests_passed"] == 2);  // "... (user_id=?) LEFT-JOIN"
    for (auto& c : contract["cases"]) c["requirePlan"] = json::array({"USING COVERING INDEX"});
    CHECK(RunGrader(entry,
                    Fenced("SELECT u.id AS user_id, MAX(o.created_at) AS last_order FROM users u "
                           "LEFT JOIN orders o ON o.user_id = u.id GROUP BY u.id;",
                           "sql"),
                    &Bubblewrap())
              .evidence["tests_passed"] == 0);
  }
}

// ---- requirements.isolatedJavaJson (isolated-java-json-v1/v2), on real entries -----------------
// Source: isolatedJavaJson.ts at 22bb91d1. Candidate.java is the trimmed patch with `public`
// dropped before class/interface/enum, wrapped in `class Candidate { }` for these adapters;
// Driver.java is generated per case, one statement group per call (int-array-average:
// `double v = Candidate.average(new int[]{..})`, printed with Double.toString; boxed-integer:
// `Integer.valueOf(x)` or `new Integer(x)`; decimal-ledger: `Arrays.asList(new BigDecimal(..))`);
// `javac` of both files first (with the first case's driver), then per case javac + java. A case
// passes when its run succeeds and stdout is a JSON array, one value per call, matching its
// predicates; compiled is the first step's success. The expected counts follow Java's rules:
// `==` on Integer holds only inside the -128..127 cache, BigDecimal.equals compares the scale.
bool JavaInstalled() { return !FindSandboxProgram("javac").empty() && !FindSandboxProgram("java").empty(); }

// A repair of a real entry (its own sourceCode when `code` is "") and what zx-bench gives it.
struct ContractRow {
  const char* id;
  const char* name;
  std::string code;
  int passed;
  bool compiled;
};

// Grades each row fenced as `tag`, one section a row. Without bubblewrap, or without the
// runtime (`installed` false), the grade must be a skip naming what to install; otherwise the
// scores as CheckIsolatedScore works them out, and `more` checks what is particular to the kind.
void CheckContractRows(const std::vector<ContractRow>& rows, const std::string& tag,
                       bool installed,
                       const std::function<void(const ContractRow&, const Grade&)>& more) {
  for (const ContractRow& row : rows) {
    SECTION(std::string(row.id) + ": " + row.name) {
      const json entry = MoreEntry(row.id);
      const std::string code = row.code.empty() ? entry["sourceCode"].get<std::string>() : row.code;
      const Grade grade = RunGrader(entry, Fenced(code, tag), &Bubblewrap());
      if (auto why = Bubblewrap().Unavailable()) {
        CHECK(grade.status == GradeStatus::kSkipped);
      } else if (!installed) {
        CHECK(grade.status == GradeStatus::kSkipped);
        CHECK(CodeRepair().Unrunnable(entry) == grade.reason);
        CHECK_THAT(grade.reason, Catch::Contains("install Debian's"));
        WARN(tag << " is not installed here, not tested: " << grade.reason);
      } else {
        CHECK(CodeRepair().Unrunnable(entry).empty());
        INFO(grade.reason << "\n" << grade.evidence.dump(2));
        REQUIRE(grade.status == GradeStatus::kGraded);
        CheckIsolatedScore(grade, row.passed, row.compiled);
        more(row, grade);
      }
    }
  }
}

TEST_CASE("zx code_repair: isolated-java-json adapters on real entries", "[graders][zxbench]") {
  const std::vector<ContractRow> rows = {
      {"CP-L1-JV-001", "average in floating point",
       "public static double average(int[] nums) {\n    int sum = 0;\n    for (int n : nums) sum += n;\n"
       "    return (double) sum / nums.length;\n}",
       2, true},
      // Integer division: [2,3] gives 2.0 (not 2.5 ± 1e-9), [1,2,3] gives 2.0.
      {"CP-L1-JV-001", "as given", "", 1, true},
      // A whole class: Candidate.average does not exist once it is wrapped.
      {"CP-L1-JV-001", "a class of its own",
       "public class Solution {\n  public static double average(int[] nums) { return 0; }\n}", 0,
       false},
      {"CP-L1-JV-001", "a package line", "package fix;\nstatic double average(int[] n) { return 2.5; }",
       0, false},
      {"CP-L3-SEM-JV-001", "Objects.equals",
       "static boolean sameCredit(Integer a, Integer b) { return java.util.Objects.equals(a, b); }", 7,
       true},
      // a == b: 100 and 127 (cached), and 100 vs 200 (false, as expected) hold; 128, 1000, -129
      // and two fresh 42s are different objects.
      {"CP-L3-SEM-JV-001", "as given", "", 3, true},
      {"CP-L3-SEM-JV-002", "compareTo",
       "static boolean hasSettled(java.util.List<java.math.BigDecimal> ledger, java.math.BigDecimal "
       "amount) { return ledger.stream().anyMatch(x -> x.compareTo(amount) == 0); }",
       4, true},
      // contains() uses equals(): 1.00 != 1.0 and 5.0/5.00 != 5.000; 19.99 and "2.00 vs 2.01 is
      // false" hold.
      {"CP-L3-SEM-JV-002", "as given", "", 2, true},
  };
  CheckContractRows(rows, "java", JavaInstalled(), [](const ContractRow& row, const Grade& grade) {
    CHECK(grade.evidence["protocol"] == "isolated-java-json-v1");
    // One compile step, then a run per case (none when the first step fails).
    CHECK(grade.evidence["sandbox_runs"] ==
          (row.compiled ? grade.evidence["tests_total"].get<int>() + 1 : 1));
  });
}

TEST_CASE("zx code_repair: isolated-java-json contracts are checked as zx-bench checks them",
          "[graders][zxbench]") {
  const std::string unmeasured =
      "zx-bench leaves this entry unmeasured: the entry has no valid isolated execution contract "
      "for its language and function (此题尚未迁移到可信观测判分通道，旧同进程测试仅供诊断)";
  json entry = MoreEntry("CP-L3-SEM-JV-002");
  json& contract = entry["requirements"]["isolatedJavaJson"];
  const auto unrunnable = [&] { return CodeRepair().Unrunnable(entry); };
  SECTION("the real entry is runnable where a JDK is") {
    if (JavaInstalled()) CHECK(unrunnable().empty());
  }
  SECTION("v2 belongs to the advanced adapters only") {
    contract["protocol"] = "isolated-java-json-v2";
    CHECK(unrunnable() == unmeasured);
  }
  SECTION("decimal texts: /^-?[0-9]+(?:\\.[0-9]+)?$/") {
    contract["cases"][0]["calls"][0][1] = "1e3";
    CHECK(unrunnable() == unmeasured);
    contract["cases"][0]["calls"][0][1] = "19.";
    CHECK(unrunnable() == unmeasured);
    contract["cases"][0]["calls"][0][1] = "19.99\n";
    CHECK(unrunnable() == unmeasured);
  }
  SECTION("an empty case id") {
    contract["cases"][0]["id"] = "";
    entry["hiddenTests"][0]["id"] = "";
    CHECK(unrunnable() == unmeasured);
  }
  SECTION("an entry point with a dot is allowed, one with a dash is not") {
    contract["entrypoint"] = "Ledger.hasSettled";
    entry["functionName"] = "Ledger.hasSettled";
    if (JavaInstalled()) CHECK(unrunnable().empty());
    contract["entrypoint"] = "has-settled";
    entry["functionName"] = "has-settled";
    CHECK(unrunnable() == unmeasured);
  }
  SECTION("boxed integers stay in int range") {
    json boxed = MoreEntry("CP-L3-SEM-JV-001");
    boxed["requirements"]["isolatedJavaJson"]["cases"][0]["calls"][0][0] = 2147483648.0;
    CHECK(CodeRepair().Unrunnable(boxed) == unmeasured);
    boxed["requirements"]["isolatedJavaJson"]["cases"][0]["calls"][0][0] = 2147483647;
    if (JavaInstalled()) CHECK(CodeRepair().Unrunnable(boxed).empty());
  }
}

// ---- requirements.isolatedCsharpJson (isolated-csharp-json-v1), on real entries --------------
// Source: isolatedCsharpJson.ts at 22bb91d1 (zx-bench builds with the .NET 8 SDK; evalrun with
// Mono's mcs). Candidate.cs is zx-bench's five using lines and the trimmed patch, wrapped in
// `public static class Candidate` for decimal-sum, counter-delegates and decimal-round; the
// driver per case: decimal-sum adds double.Parse of each price `repeat` times and prints
// ((decimal)Sum(prices)).ToString("G29"); counter-delegates calls each delegate; decimal-round
// prints RoundMoney(decimal.Parse(x)).ToString("G29"); metrics-record calls Record() n times and
// prints Total.Value. Compiled is the first step's success. The counts follow C#'s rules:
// (decimal)double keeps 15 significant digits (0.1 summed 1000 times is 99.9999999999986), a
// lambda captures the loop variable itself, Math.Round(x, 2) rounds half to even, and a struct
// returned by a property getter is a copy.
bool MonoInstalled() {
  return !FindSandboxProgram("mcs").empty() && !FindSandboxProgram("mono").empty() &&
         std::filesystem::exists("/usr/lib/mono/4.5/System.Net.Http.dll");
}

TEST_CASE("zx code_repair: isolated-csharp-json adapters on real entries", "[graders][zxbench]") {
  const std::vector<ContractRow> rows = {
      {"CP-L2-CS-001", "summed in decimal",
       "public static decimal Sum(double[] prices) {\n    decimal t = 0m;\n"
       "    foreach (var p in prices) t += (decimal)p;\n    return Math.Round(t, 2);\n}",
       4, true},
      // "50" and "0" hold; 0.1 × 1000 in double is 99.9999999999986 (and its negative).
      {"CP-L2-CS-001", "as given", "", 2, true},
      // Wrapped in Candidate, a using line lands inside a class: a compile error.
      {"CP-L2-CS-001", "a using line inside the class",
       "using System.Linq;\npublic static decimal Sum(double[] prices) { return 0m; }", 0, false},
      {"CP-L3-SEM-CS-001", "a copy per iteration",
       "public static List<Func<int>> MakeCounters(int n)\n{\n    var fs = new List<Func<int>>();\n"
       "    for (int i = 1; i <= n; i++) { int c = i; fs.Add(() => c); }\n    return fs;\n}",
       3, true},
      // The count holds; every delegate sees i after the loop (4, 4, 4 and 2).
      {"CP-L3-SEM-CS-001", "as given", "", 1, true},
      {"CP-L3-SEM-CS-002", "away from zero",
       "public static decimal RoundMoney(decimal amount)\n{\n"
       "    return Math.Round(amount, 2, MidpointRounding.AwayFromZero);\n}",
       4, true},
      // Banker's rounding: 3.14 holds; 0.125 -> 0.12, 2.665 -> 2.66, -0.125 -> -0.12.
      {"CP-L3-SEM-CS-002", "as given", "", 1, true},
      {"CP-L3-SEM-CS-003", "a field, not a property",
       "struct Counter\n{\n    public int Value;\n    public void Increment() { Value++; }\n}\n\n"
       "class Metrics\n{\n    public Counter Total;\n\n    public void Record() { Total.Increment(); }\n}",
       3, true},
      // Total.Increment() changes a copy: Value stays 0 (the 0-call case holds).
      {"CP-L3-SEM-CS-003", "as given", "", 1, true},
  };
  CheckContractRows(rows, "csharp", MonoInstalled(), [](const ContractRow&, const Grade& grade) {
    CHECK(grade.evidence["protocol"] == "isolated-csharp-json-v1");
  });
}

TEST_CASE("zx code_repair: isolated-csharp-json contracts are checked as zx-bench checks them",
          "[graders][zxbench]") {
  const std::string unmeasured =
      "zx-bench leaves this entry unmeasured: the entry has no valid isolated execution contract "
      "for its language and function (此题尚未迁移到可信观测判分通道，旧同进程测试仅供诊断)";
  json entry = MoreEntry("CP-L3-SEM-CS-002");
  json& contract = entry["requirements"]["isolatedCsharpJson"];
  SECTION("c# is csharp") {
    entry["language"] = "c#";
    if (MonoInstalled()) CHECK(CodeRepair().Unrunnable(entry).empty());
    entry["language"] = "cs";
    CHECK(CodeRepair().Unrunnable(entry) == unmeasured);
  }
  SECTION("decimals without leading zeros") {
    contract["cases"][0]["calls"][0][0] = "03.14";
    CHECK(CodeRepair().Unrunnable(entry) == unmeasured);
    contract["cases"][0]["calls"][0][0] = "0.5";
    if (MonoInstalled()) CHECK(CodeRepair().Unrunnable(entry).empty());
  }
  SECTION("the two adapters Mono cannot run are skipped, naming why") {
    contract["protocol"] = "isolated-csharp-json-v2";
    contract["adapter"] = "header-span";
    for (auto& c : contract["cases"]) c["calls"] = json::parse(R"([["Host: x", "pair", 1]])");
    CHECK(CodeRepair().Unrunnable(entry) ==
          "evalrun runs C# with Mono, which cannot stand in for .NET 8 here: the header-span "
          "adapter needs Span<T>");
    contract["protocol"] = "isolated-csharp-json-v1";
    CHECK(CodeRepair().Unrunnable(entry) == unmeasured);  // v2 only
  }
}

// ---- requirements.isolatedGoJson (isolated-go-json-v1, v2 with -race), on real entries --------
// Source: isolatedGoJson.ts at 22bb91d1 (zx-bench builds with Go 1.21 in a fresh container;
// evalrun with the host's go, its build cache warmed, the model's code compiled as Go 1.21).
// main.go is the harness's imports, the patch verbatim, the adapter's helper and a main that
// prints one JSON array. The counts follow Go's rules: s[:n] shares the array, '-' - '0' is -3,
// strconv is not among the harness's imports, wg.Wait before anyone reads an unbuffered channel
// deadlocks, ranging over a nil channel blocks for ever, and a goroutine that captures the loop
// variable sees one variable for the whole loop (a race under -race) in Go 1.21.
bool GoInstalled() { return !FindSandboxProgram("go").empty() && !FindSandboxProgram("gcc").empty(); }

constexpr const char* kFanInFix = R"(func FanIn(chans []<-chan int) <-chan int {
	out := make(chan int)
	var wg sync.WaitGroup
	for _, ch := range chans {
		if ch == nil {
			continue
		}
		wg.Add(1)
		go func(c <-chan int) {
			defer wg.Done()
			for v := range c {
				out <- v
			}
		}(ch)
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	return out
})";

TEST_CASE("zx code_repair: isolated-go-json adapters on real entries", "[graders][zxbench]") {
  std::string no_nil_skip = kFanInFix;
  no_nil_skip.erase(no_nil_skip.find("\t\tif ch == nil"), std::strlen("\t\tif ch == nil {\n\t\t\tcontinue\n\t\t}\n"));
  std::string captured = kFanInFix;
  captured.replace(captured.find("go func(c <-chan int)"), std::strlen("go func(c <-chan int)"),
                   "go func()");
  captured.replace(captured.find("range c {"), std::strlen("range c {"), "range ch {");
  captured.replace(captured.find("}(ch)"), std::strlen("}(ch)"), "}()");
  const std::vector<ContractRow> rows = {
      {"CP-L2-GO-001", "a copy", "func CopyPrefix(s []int, n int) []int {\n\tout := make([]int, n)\n"
       "\tcopy(out, s[:n])\n\treturn out\n}", 2, true},
      // s[:n] shares the array: c[0] = 99 changes orig[0]. len of the n = 0 prefix is 0.
      {"CP-L2-GO-001", "as given", "", 1, true},
      {"CP-L2-GO-001", "a package clause", "package main\nfunc CopyPrefix(s []int, n int) []int "
       "{ return append([]int(nil), s[:n]...) }", 0, false},
      {"CP-L2-TD-GO-001", "sign and errors", "func Atoi(s string) (int, error) {\n"
       "\tneg := len(s) > 0 && s[0] == '-'\n\tif neg {\n\t\ts = s[1:]\n\t}\n"
       "\tif s == \"\" {\n\t\treturn 0, errors.New(\"empty\")\n\t}\n\tn := 0\n"
       "\tfor _, c := range s {\n\t\tif c < '0' || c > '9' {\n"
       "\t\t\treturn 0, fmt.Errorf(\"bad digit %q\", c)\n\t\t}\n\t\tn = n*10 + int(c-'0')\n\t}\n"
       "\tif neg {\n\t\tn = -n\n\t}\n\treturn n, nil\n}", 3, true},
      // "-45" gives -255 ('-' - '0' is -3) and "1a2" no error: only "123" holds.
      {"CP-L2-TD-GO-001", "as given", "", 1, true},
      // strconv is not imported by the harness: undefined.
      {"CP-L2-TD-GO-001", "strconv", "func Atoi(s string) (int, error) { return strconv.Atoi(s) }",
       0, false},
      {"CP-L3-GO-003", "skip nil, close after Wait", kFanInFix, 4, true},
      // wg.Wait before anyone reads: stuck as soon as a channel has a value (until the 12 s
      // limit: under -race Go does not report the deadlock); no channels: [].
      {"CP-L3-GO-003", "as given", "", 1, true},
      // The nil channel's goroutine blocks for ever: that case runs into the limit.
      {"CP-L3-GO-003", "nil channels kept", no_nil_skip, 3, true},
      // One ch for the whole loop in Go 1.21: with 64 channels the goroutines race on it.
      {"CP-L3-GO-003", "the loop variable captured", captured, 3, true},
  };
  CheckContractRows(rows, "go", GoInstalled(), [](const ContractRow& row, const Grade& grade) {
    const bool race = std::string(row.id) == "CP-L3-GO-003";
    CHECK(grade.evidence["protocol"] == (race ? "isolated-go-json-v2" : "isolated-go-json-v1"));
    CHECK(grade.evidence["image"] == "zxbench/go:1.21-gcc");
    const std::string host_runtime = grade.evidence["host_runtime"].get<std::string>();
    CHECK_THAT(host_runtime, Catch::StartsWith("go1."));
    CHECK((host_runtime.find(" -race") != std::string::npos) == race);
    // One build step, then a build and a run per case (none when the first step fails).
    CHECK(grade.evidence["sandbox_runs"] ==
          (row.compiled ? grade.evidence["tests_total"].get<int>() + 1 : 1));
  });
}

// zx-bench's own controls for its Go harness (isolatedGoJsonGold.ts, tests/fixtures/zx-bench/
// go_pilots.json): one pilot per adapter, each with a correct solution that must pass every
// hidden and development case and a mutant that must fail one. The mutants are the bugs the
// adapters exist to catch: a send after wg.Wait, a goroutine left blocked, an unguarded
// counter under -race, a loop variable captured (Go 1.21's one variable per loop), an aliased
// slice, %v for %w, a missing sign.
TEST_CASE("zx code_repair: zx-bench's Go pilots: correct solutions pass, mutants fail",
          "[graders][zxbench]") {
  if (Bubblewrap().Unavailable() || !GoInstalled()) return;
  const json pilots = json::parse(testing::ReadFixture("zx-bench/go_pilots.json"));
  REQUIRE(pilots.size() == 7);
  for (const json& pilot : pilots) {
    SECTION(pilot["id"].get<std::string>()) {
      json entry = MoreEntry("CP-L2-GO-001");
      json contract = pilot["contract"];
      for (const json& c : pilot["developmentCases"]) contract["cases"].push_back(c);
      entry["id"] = pilot["id"];
      entry["functionName"] = contract["entrypoint"];
      entry["sourceCode"] = pilot["mutant"];
      entry["hiddenTests"] = json::array();
      for (const json& c : contract["cases"]) entry["hiddenTests"].push_back({{"id", c["id"]}});
      entry["requirements"] = {{"isolatedGoJson", contract}};
      REQUIRE(CodeRepair().Unrunnable(entry).empty());
      const Grade correct =
          RunGrader(entry, Fenced(pilot["correct"].get<std::string>(), "go"), &Bubblewrap());
      INFO(correct.reason << "\n" << correct.evidence.dump(2));
      REQUIRE(correct.status == GradeStatus::kGraded);
      CHECK(correct.evidence["tests_passed"] == contract["cases"].size());
      // The fan-in mutant is the real entry's own code, graded above: its three cases run into
      // the 12 s limit (-race keeps Go from seeing the deadlock), so it is not run twice.
      if (pilot["id"] != "CP-L3-GO-003") {  // (no return: Catch must still see the next pilots)
        const Grade mutant =
            RunGrader(entry, Fenced(pilot["mutant"].get<std::string>(), "go"), &Bubblewrap());
        INFO(mutant.reason << "\n" << mutant.evidence.dump(2));
        REQUIRE(mutant.status == GradeStatus::kGraded);
        CHECK(mutant.evidence["compiled"] == true);
        CHECK(mutant.evidence["tests_passed"].get<size_t>() < contract["cases"].size());
      }
    }
  }
}

TEST_CASE("zx code_repair: the Go program is zx-bench's harness around the patch",
          "[graders][zxbench]") {
  const json entry = MoreEntry("CP-L2-GO-001");
  const json& contract = entry["requirements"]["isolatedGoJson"];
  const std::string one = zx::GoProgramSource("func CopyPrefix(s []int, n int) []int { return s }",
                                              contract, contract["cases"][0]["calls"]);
  CHECK(one ==
        "package main\nimport(\"encoding/json\";\"os\";\"sort\";\"sync\";\"errors\";\"fmt\")\n"
        "var _=sync.NewCond\nvar _=fmt.Errorf\nvar _=errors.New\nvar _=sort.Ints\n"
        "func CopyPrefix(s []int, n int) []int { return s }\n\n"
        "func main(){out:=[]any{};add:=func(v any){out=append(out,v)};"
        "o0:=[]int{1,2,3,4};c0:=CopyPrefix(o0,2);c0[0]=99;add(o0[0]==1);"
        "json.NewEncoder(os.Stdout).Encode(out)}\n");
  const std::string two = zx::GoProgramSource("", contract, contract["cases"][1]["calls"]);
  CHECK_THAT(two, Catch::Contains("o0:=[]int{1,2,3};c0:=CopyPrefix(o0,0);add(len(c0))"));
  // Neither ids nor expected values reach the program.
  for (const std::string& text : {one, two}) {
    CHECK_THAT(text, !Catch::Contains("hidden") &&
                         !Catch::Contains("equals"));
  }
  // String arguments are written as JSON.stringify writes them.
  const json atoi = MoreEntry("CP-L2-TD-GO-001")["requirements"]["isolatedGoJson"];
  CHECK_THAT(zx::GoProgramSource("", atoi, json::parse(R"([["a\"b\\c\n\u0001", "hasError"]])")),
             Catch::Contains(R"(_,er0:=Atoi("a\"b\\c\n\u0001");add(er0!=nil))"));
  const json fan = MoreEntry("CP-L3-GO-003")["requirements"]["isolatedGoJson"];
  CHECK_THAT(zx::GoProgramSource("", fan, json::parse(R"([[1, 2, true, "values"]])")),
             Catch::Contains("func runFanIn(n, per int, withNil bool, mode string) any {") &&
                 Catch::Contains("add(runFanIn(1,2,true,\"values\"))"));
}

TEST_CASE("zx code_repair: a Go program never sees the build cache, and hostile ones get a grade",
          "[graders][zxbench]") {
  if (Bubblewrap().Unavailable() || !GoInstalled()) return;
  const json entry = MoreEntry("CP-L2-GO-001");
  // The program looks for the cache and the host's files; finding any fails the case.
  const std::string snoop = R"(func CopyPrefix(s []int, n int) []int {
	for _, p := range []string{"/cache", "/root", "/home", os.Getenv("GOCACHE")} {
		if _, err := os.Stat(p); p != "" && err == nil {
			return s[:n]
		}
	}
	out := make([]int, n)
	copy(out, s[:n])
	return out
})";
  const Grade clean = RunGrader(entry, Fenced(snoop, "go"), &Bubblewrap());
  INFO(clean.evidence.dump(2));
  CHECK(clean.evidence["tests_passed"] == 2);
  // A goroutine flood and an endless loop: killed at zx-bench's 10 s (plus 5 s), graded.
  const std::string spin = "func CopyPrefix(s []int, n int) []int {\n"
                           "\tfor i := 0; i < 100000; i++ {\n\t\tgo func() { for {} }()\n\t}\n"
                           "\tfor {\n\t}\n}";
  const Grade spun = RunGrader(entry, Fenced(spin, "go"), &Bubblewrap());
  INFO(spun.evidence.dump(2));
  REQUIRE(spun.status == GradeStatus::kGraded);
  CHECK(spun.evidence["compiled"] == true);
  CHECK(spun.evidence["tests_passed"] == 0);
  CHECK(spun.evidence["cases"][0]["timed_out"] == true);
  CHECK(spun.reason.find("2 ran out of time") != std::string::npos);
}

TEST_CASE("zx code_repair: isolated-go-json contracts are checked as zx-bench checks them",
          "[graders][zxbench]") {
  const std::string unmeasured =
      "zx-bench leaves this entry unmeasured: the entry has no valid isolated execution contract "
      "for its language and function (此题尚未迁移到可信观测判分通道，旧同进程测试仅供诊断)";
  json entry = MoreEntry("CP-L2-TD-GO-001");
  json& contract = entry["requirements"]["isolatedGoJson"];
  const auto unrunnable = [&] { return CodeRepair().Unrunnable(entry); };
  const std::string runnable = GoInstalled() ? "" : unrunnable();
  SECTION("golang is go") {
    entry["language"] = "golang";
    CHECK(unrunnable() == runnable);
    entry["language"] = "java";
    CHECK(unrunnable() == unmeasured);
  }
  SECTION("v2 belongs to the advanced adapters only") {
    contract["protocol"] = "isolated-go-json-v2";
    CHECK(unrunnable() == unmeasured);
  }
  SECTION("an empty case id is allowed") {
    contract["cases"][0]["id"] = "";
    entry["hiddenTests"][0]["id"] = "";
    CHECK(unrunnable() == runnable);
  }
  SECTION("strings hold at most 128 UTF-16 units, and the mode is one of two") {
    contract["cases"][0]["calls"][0][0] = std::string(129, '1');
    CHECK(unrunnable() == unmeasured);
    contract["cases"][0]["calls"][0][0] = std::string(128, '1');
    CHECK(unrunnable() == runnable);
    std::string astral;
    for (int i = 0; i < 64; ++i) astral += "\xF0\x9F\x98\x80";  // 64 emoji: 128 units
    contract["cases"][0]["calls"][0][0] = astral;
    CHECK(unrunnable() == runnable);
    contract["cases"][0]["calls"][0][0] = astral + "x";
    CHECK(unrunnable() == unmeasured);
    contract["cases"][0]["calls"][0] = json::parse(R"J(["1", "code()"])J");
    CHECK(unrunnable() == unmeasured);
  }
  SECTION("fan-in's counts and flag") {
    json fan = MoreEntry("CP-L3-GO-003");
    fan["requirements"]["isolatedGoJson"]["cases"][3]["calls"][0][0] = 65;
    CHECK(CodeRepair().Unrunnable(fan) == unmeasured);
    fan["requirements"]["isolatedGoJson"]["cases"][3]["calls"][0][0] = 64;
    fan["requirements"]["isolatedGoJson"]["cases"][3]["calls"][0][2] = 1;
    CHECK(CodeRepair().Unrunnable(fan) == unmeasured);
  }
}

}  // namespace
}  // namespace evalrun
