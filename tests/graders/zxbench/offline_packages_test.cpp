#include "graders/zxbench/offline_packages.h"

#include <filesystem>

#include "tests/support/catch.h"

using evalrun::zx::CargoDependencies;
using evalrun::zx::DebianCrate;
using evalrun::zx::DebianCratePackageName;
using evalrun::zx::DebianPythonPackageName;
using evalrun::zx::PipPackages;
using Names = std::vector<std::string>;

TEST_CASE("offline packages: the crates a Cargo.toml depends on", "[graders][zxbench]") {
  // CP-L4-RS-001's own manifest.
  CHECK(CargoDependencies("[package]\nname = \"kv-server\"\nversion = \"0.1.0\"\nedition = "
                          "\"2021\"\n[dependencies]\ntokio = { version = \"1\", features = "
                          "[\"full\"] }\n") == Names{"tokio"});
  // Every table kind, a renamed crate, a dotted key, a table per crate, comments, a value over
  // several lines, and the project's own path crate left out.
  const std::string manifest = R"([package]
name = "x" # [dependencies] in a comment is not a table
[dependencies]
serde = "1"
"anyhow" = "1.0"
rt = { package = "tokio", version = "1" }
bytes.version = "1"
local = { path = "../local" }
futures = { version = "0.3", features = [
  "std",
  "async-await",
] }
[dev-dependencies.tempfile]
version = "3"
[target.'cfg(unix)'.dependencies]
libc = "0.2"
[build-dependencies]
cc = "1"
[dependencies.alias]
package = "regex"
version = "1"
[profile.release]
lto = true
)";
  CHECK(CargoDependencies(manifest) == Names{"serde", "anyhow", "tokio", "bytes", "futures",
                                             "tempfile", "libc", "cc", "regex"});
  CHECK(CargoDependencies("[workspace]\nmembers = [\"a\"]\n") == Names{});
  // Not a manifest; a crate from git has no copy here.
  CHECK_FALSE(CargoDependencies("tokio = \"1\"\n"));
  CHECK_FALSE(CargoDependencies("[package]\n[dependencies]\nx = { git = \"https://e/x\" }\n"));
}

TEST_CASE("offline packages: Debian's crate sources and package names", "[graders][zxbench]") {
  CHECK(DebianCratePackageName("tokio_util") == "librust-tokio-util-dev");
  CHECK(DebianCratePackageName("Inflector") == "librust-inflector-dev");
  CHECK(DebianPythonPackageName("Flask_Login") == "python3-flask-login");
  CHECK(DebianCrate("zxbench-no-such-crate").empty());
  // tokio-macros-1.7.0 is not a version of tokio.
  const std::string tokio = DebianCrate("tokio");
  if (std::filesystem::exists(std::string(evalrun::zx::kDebianCrateRegistry) + "/tokio-" + tokio)) {
    CHECK_THAT(tokio, Catch::Matches("1\\.[0-9]+\\.[0-9]+"));
    CHECK(DebianCrate("tokio_util") == DebianCrate("tokio-util"));
  } else {
    CHECK(tokio.empty());  // scripts/install-deps.sh installs librust-tokio-dev
  }
}

TEST_CASE("offline packages: a pip preflight's packages", "[graders][zxbench]") {
  CHECK(PipPackages("pip install -q requests>=2 'x'") == std::nullopt);
  CHECK(PipPackages("python3 -m pip install --timeout 5 requests[socks] urllib3") ==
        Names{"requests", "urllib3"});
  CHECK(PipPackages("npm install") == std::nullopt);
  CHECK(PipPackages("pip install -r requirements.txt") == std::nullopt);
}
