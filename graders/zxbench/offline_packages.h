#pragma once
// The host's Debian copies of what a zx-bench project's tests would download
// (docs/zx-bench.md, "project_repair"). zx-bench opens the network for its project containers,
// and the tests install packages there; evalrun's sandbox stays offline unless the user opens it
// (--sandbox-network), and instead serves what Debian already has:
//   pip: the host's python3 packages (a `<Name>-<version>.egg-info` or `.dist-info` in
//     /usr/lib/python3/dist-packages), which the tests import as they would the download;
//   cargo: Debian's crate sources (/usr/share/cargo/registry, the librust-*-dev packages),
//     set up as cargo's offline source in place of crates.io, as Debian builds its own Rust.
// Reads the host's file system; thread-safe.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace evalrun::zx {

// --- pip --------------------------------------------------------------------------------------

// The distributions a dependency preflight installs when it is one `pip install` of named
// packages (`pip install ...` or `python -m pip install ...`, options and their values skipped);
// nullopt for anything else (npm, cargo, dotnet, a requirements file, more than one command).
std::optional<std::vector<std::string>> PipPackages(const std::string& command);

// The version of distribution `name` that a Debian python3 package installed for the host, or ""
// when none did.
std::string DebianPythonPackage(const std::string& name);

// The Debian package that would install distribution `name` ("python3-requests").
std::string DebianPythonPackageName(const std::string& name);

// --- cargo ------------------------------------------------------------------------------------

// Where Debian's librust-*-dev packages put their crate sources, each as `<name>-<version>/`
// with a .cargo-checksum.json: a cargo directory source.
inline constexpr const char* kDebianCrateRegistry = "/usr/share/cargo/registry";

// Shell commands that make Debian's crate sources cargo's source in place of crates.io, for
// every cargo the script starts: a config.toml in $CARGO_HOME (the stand-in's /tmp/.cargo, fresh
// per test). A workspace's own .cargo/config.toml still takes precedence, as it would in the
// image.
extern const std::string_view kDebianCratesSetup;

// The crates a Cargo.toml depends on ([dependencies], [dev-dependencies], [build-dependencies],
// their target-specific forms and `[dependencies.NAME]` tables; the `package = "..."` of a
// renamed one; not the project's own `path` crates), in order, without repeats; nullopt when the
// text has no [package] or [workspace] table (not a manifest) or a dependency comes from `git`.
std::optional<std::vector<std::string>> CargoDependencies(const std::string& manifest);

// The newest version of crate `name` in Debian's crate registry, or "" when it has none.
std::string DebianCrate(const std::string& name);

// The Debian package that would put crate `name` there ("librust-tokio-dev").
std::string DebianCratePackageName(const std::string& name);

}  // namespace evalrun::zx
