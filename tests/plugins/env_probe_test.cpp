#include "plugins/env_probe.h"

#include <signal.h>
#include <stdlib.h>

#include "tests/support/catch.h"
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace evalrun {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

const std::string kFixtures = EVALRUN_TEST_FIXTURES;

// Points PATH somewhere for one scope, then puts it back: the fake tools are found the way the
// real ones would be, through the real RunCommand.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& path) {
    if (const char* old = getenv("PATH")) {
      had_ = true;
      old_ = old;
    }
    setenv("PATH", path.c_str(), 1);
  }
  ~ScopedPath() {
    if (had_) {
      setenv("PATH", old_.c_str(), 1);
    } else {
      unsetenv("PATH");
    }
  }
  ScopedPath(const ScopedPath&) = delete;
  ScopedPath& operator=(const ScopedPath&) = delete;

 private:
  bool had_ = false;
  std::string old_;
};

// An empty folder for the test's lifetime.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "evalrun-env-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& Path() const { return path_; }

 private:
  std::string path_;
};

std::optional<CommandResult> Run(const std::vector<std::string>& argv) {
  return RunCommand(argv);
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// True once `pid` is gone or a zombie (killed, waiting for its new parent to reap it).
bool ProcessEnded(long pid) {
  for (int i = 0; i < 200; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    if (!stat || !std::getline(stat, text)) return true;
    const size_t paren = text.rfind(')');
    if (paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z')
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

constexpr const char* kNvidiaQuery =
    "--query-gpu=index,name,uuid,driver_version,memory.total,memory.used,power.limit,clocks.sm,"
    "clocks.max.sm,clocks.mem,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,"
    "pcie.link.width.max";

TEST_CASE("env_probe: nvidia-smi query, banner and topology parse into exact values", "[env]") {
  ScopedPath path(kFixtures + "/fake-bin");
  const json nvidia = ProbeNvidia(Run);
  INFO(nvidia.dump(2));
  REQUIRE(nvidia.at("present") == true);
  REQUIRE_FALSE(nvidia.contains("error"));
  CHECK(nvidia.at("count") == 2);
  CHECK(nvidia.at("cuda_version") == "12.4");
  const json& gpus = nvidia.at("gpus");
  REQUIRE(gpus.size() == 2);

  const json expected0 = {{"index", 0},
                          {"name", "NVIDIA GeForce RTX 3090"},
                          {"uuid", "GPU-6f1d7a3c-2b9e-4c41-8d0a-5e3b7c9f1a20"},
                          {"driver_version", "550.120"},
                          {"cuda_version", "12.4"},
                          {"memory_total_mib", 24576},
                          {"memory_used_mib", 1},
                          {"power_limit_w", 350.0},
                          {"clocks_sm_mhz", 210},
                          {"clocks_max_sm_mhz", 2100},
                          {"clocks_mem_mhz", 405},
                          {"pcie_gen_current", 1},
                          {"pcie_gen_max", 4},
                          {"pcie_width_current", 16},
                          {"pcie_width_max", 16}};
  CHECK(gpus[0] == expected0);
  CHECK(gpus[0].at("memory_total_mib").is_number_integer());
  CHECK(gpus[0].at("power_limit_w").is_number_float());

  CHECK(gpus[1].at("index") == 1);
  CHECK(gpus[1].at("uuid") == "GPU-a0c4e2f8-91b3-4d57-b6e2-0f8d3c1b7e64");
  CHECK(gpus[1].at("memory_used_mib") == 259);
  CHECK(gpus[1].at("power_limit_w") == 280.0);
  CHECK(gpus[1].at("clocks_max_sm_mhz").is_null());  // "[N/A]"
  CHECK(gpus[1].at("pcie_width_current") == 8);

  const std::string topology = nvidia.at("topology");
  CHECK(topology.find("NV4") != std::string::npos);
  CHECK(topology.find("Legend:") != std::string::npos);
  const json links = {{"GPU0", {{"GPU1", "NV4"}, {"NIC0", "PHB"}}},
                      {"GPU1", {{"GPU0", "NV4"}, {"NIC0", "SYS"}}},
                      {"NIC0", {{"GPU0", "PHB"}, {"GPU1", "SYS"}}}};
  CHECK(nvidia.at("topology_links") == links);
}

TEST_CASE("env_probe: the exact nvidia-smi command lines, and what each failure leaves", "[env]") {
  std::vector<std::vector<std::string>> asked;
  std::string query_out =
      "0, NVIDIA H100 80GB HBM3, GPU-1, 535.104.05, 81559, 0, 700.00, "
      "[Not Supported], N/A, 2619, 5, 5, 16, 16\n"
      "1, Odd GPU, GPU-2\n";
  bool banner_ok = true;
  const CommandRunner runner =
      [&](const std::vector<std::string>& argv) -> std::optional<CommandResult> {
    asked.push_back(argv);
    if (argv.size() == 3 && argv[1].rfind("--query-gpu=", 0) == 0)
      return CommandResult{0, query_out};
    if (argv.size() == 1 && banner_ok) {
      return CommandResult{
          0, "| NVIDIA-SMI 610.57.04   KMD Version: 610.57.04   CUDA UMD Version: 13.3 |\n"};
    }
    return CommandResult{1, "", false};
  };
  const json nvidia = ProbeNvidia(runner);
  INFO(nvidia.dump(2));

  const std::vector<std::vector<std::string>> expected = {
      {"nvidia-smi", kNvidiaQuery, "--format=csv,noheader,nounits"},
      {"nvidia-smi"},
      {"nvidia-smi", "topo", "-m"}};
  CHECK(asked == expected);

  SECTION("[Not Supported], bare N/A and a short row are null, never an error") {
    REQUIRE(nvidia.at("gpus").size() == 2);
    CHECK(nvidia["gpus"][0]["clocks_sm_mhz"].is_null());
    CHECK(nvidia["gpus"][0]["clocks_max_sm_mhz"].is_null());
    CHECK(nvidia["gpus"][0]["clocks_mem_mhz"] == 2619);
    CHECK(nvidia["gpus"][1]["name"] == "Odd GPU");
    CHECK(nvidia["gpus"][1]["driver_version"].is_null());
    CHECK(nvidia["gpus"][1]["pcie_width_max"].is_null());
  }
  SECTION("the newer banner's CUDA UMD Version is read") {
    CHECK(nvidia.at("cuda_version") == "13.3");
  }
  SECTION("a failing topo leaves topology null") {
    CHECK(nvidia.at("topology").is_null());
    CHECK_FALSE(nvidia.contains("topology_links"));
  }
}

TEST_CASE("env_probe: rocm-smi JSON parses into exact values", "[env]") {
  ScopedPath path(kFixtures + "/fake-bin");
  const json rocm = ProbeRocm(Run);
  INFO(rocm.dump(2));
  REQUIRE(rocm.at("present") == true);
  REQUIRE_FALSE(rocm.contains("error"));
  CHECK(rocm.at("count") == 1);
  CHECK(rocm.at("driver_version") == "6.7.0");
  const json expected = {{"index", 0},
                         {"name", "Navi 31 [Radeon RX 7900 XT/7900 XTX/7900M]"},
                         {"model", "0x744c"},
                         {"vendor", "Advanced Micro Devices, Inc. [AMD/ATI]"},
                         {"sku", "EXT94393"},
                         {"gfx_version", "gfx1100"},
                         {"memory_total_bytes", 25753026560},
                         {"memory_used_bytes", 1326264320},
                         {"memory_total_mib", 24560},
                         {"memory_used_mib", 1264}};
  CHECK(rocm.at("gpus") == json::array({expected}));
  CHECK(rocm.at("raw").at("card0").at("Device Rev") == "0xc8");
}

TEST_CASE("env_probe: the fake tools refuse command lines they do not know", "[env]") {
  // So a change to the command lines env_probe runs fails the tests above instead of passing
  // against a fake that answers anything.
  ScopedPath path(kFixtures + "/fake-bin");
  for (const char* tool : {"nvidia-smi", "rocm-smi"}) {
    const auto result = RunCommand({tool, "--bogus"});
    REQUIRE(result.has_value());
    CHECK(result->exit_code == 2);
    CHECK(result->out == std::string("fake ") + tool + ": unexpected command line: --bogus\n");
  }
}

TEST_CASE("env_probe: absent tools are present false", "[env]") {
  TempDir empty;
  ScopedPath path(empty.Path());
  CHECK_FALSE(RunCommand({"nvidia-smi"}).has_value());
  CHECK(ProbeNvidia(Run) == json{{"present", false}});
  CHECK(ProbeRocm(Run) == json{{"present", false}});
}

TEST_CASE("env_probe: a failing nvidia-smi is recorded with its first line", "[env]") {
  ScopedPath path(kFixtures + "/fake-bin-failing");
  const json expected = {{"present", true},
                         {"exit_code", 9},
                         {"error",
                          "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
                          "driver. Make sure that the latest NVIDIA driver is installed and "
                          "running."}};
  CHECK(ProbeNvidia(Run) == expected);
  CHECK(ProbeRocm(Run) == json{{"present", false}});
}

TEST_CASE("env_probe: odd rocm-smi output is an error record, not an exception", "[env]") {
  const auto answer = [](const std::string& out) {
    return [out](const std::vector<std::string>&) -> std::optional<CommandResult> {
      return CommandResult{0, out};
    };
  };
  SECTION("warnings before the JSON are skipped") {
    const json rocm =
        ProbeRocm(answer("WARNING: AMD GPU device(s) is/are in a low-power state.\n"
                         "{\"card1\": {\"Card series\": \"Radeon RX 6800\"}}\n"));
    CHECK(rocm.at("gpus")[0].at("index") == 1);
    CHECK(rocm.at("gpus")[0].at("name") == "Radeon RX 6800");  // the older key spelling
    CHECK(rocm.at("gpus")[0].at("memory_total_mib").is_null());
  }
  SECTION("no JSON at all") {
    const json rocm = ProbeRocm(answer("ERROR: No AMD GPUs specified\n"));
    CHECK(rocm.at("present") == true);
    CHECK(rocm.at("error") == "rocm-smi printed no JSON: ERROR: No AMD GPUs specified");
  }
}

TEST_CASE("env_probe: RunCommand captures stdout and the exit code, not stderr", "[env]") {
  const auto result = RunCommand({"sh", "-c", "echo out; echo err >&2; exit 3"});
  REQUIRE(result.has_value());
  CHECK(result->out == "out\n");
  CHECK(result->exit_code == 3);
  CHECK_FALSE(result->timed_out);
}

TEST_CASE("env_probe: RunCommand kills a program that outlives its timeout", "[env][slow]") {
  const auto start = Clock::now();
  const auto result = RunCommand({"sleep", "30"}, 0.3);
  const double elapsed = SecondsSince(start);
  REQUIRE(result.has_value());
  CHECK(result->timed_out);
  CHECK(result->exit_code == 128 + SIGKILL);
  CHECK(elapsed >= 0.25);
  CHECK(elapsed < 5);
}

TEST_CASE("env_probe: a timeout kills the whole process group", "[env][slow]") {
  const auto result = RunCommand({"sh", "-c", "sleep 30 & echo $!; wait"}, 0.5);
  REQUIRE(result.has_value());
  REQUIRE(result->timed_out);
  const long grandchild = std::stol(result->out);
  CHECK(ProcessEnded(grandchild));
}

TEST_CASE("env_probe: RunCommand returns when the program exits, not when its pipe closes",
          "[env][slow]") {
  // The background sleep keeps the pipe open after sh exits.
  const auto start = Clock::now();
  const auto result = RunCommand({"sh", "-c", "sleep 20 & echo $!"}, 10);
  const double elapsed = SecondsSince(start);
  REQUIRE(result.has_value());
  CHECK_FALSE(result->timed_out);
  CHECK(result->exit_code == 0);
  CHECK(elapsed < 3);
  const long grandchild = std::stol(result->out);
  kill(static_cast<pid_t>(grandchild), SIGKILL);
}

TEST_CASE("env_probe: ProbeHost reads this host", "[env]") {
  const json host = ProbeHost();
  INFO(host.dump(2));
  for (const char* key : {"cpu_model", "cpu_cores", "cpu_physical_cores", "ram_bytes", "os",
                          "kernel", "arch", "hostname"}) {
    CHECK(host.contains(key));
  }
  REQUIRE(host.at("kernel").is_string());
  CHECK_FALSE(host.at("kernel").get<std::string>().empty());
  CHECK(host.at("arch").is_string());
  CHECK(host.at("cpu_cores").get<int>() > 0);
  CHECK(host.at("ram_bytes").get<int64_t>() > 0);
}

TEST_CASE("env_probe: CaptureEnvironment says it saw the client host", "[env]") {
  ScopedPath path(kFixtures + "/fake-bin");
  const json env = CaptureEnvironment();
  CHECK(env.at("scope") == "client host");
  CHECK(env.at("host").at("kernel").is_string());
  CHECK(env.at("nvidia").at("count") == 2);
  CHECK(env.at("rocm").at("count") == 1);
}

}  // namespace
}  // namespace evalrun
