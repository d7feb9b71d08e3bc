// The host's Debian copies of what a project's tests would download
// (graders/zxbench/offline_packages.h).
#include "graders/zxbench/offline_packages.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "graders/zxbench/common.h"

namespace evalrun::zx {
namespace {

// Where the host's Debian python3 packages live: the host's python3 stands in for the image's.
constexpr const char* kDistPackages = "/usr/lib/python3/dist-packages";

// PEP 503's normal form of a distribution name, with '_' as metadata directories spell it.
std::string NormalName(std::string_view name) {
  std::string out;
  for (const char c : name) {
    const bool sep = c == '-' || c == '_' || c == '.';
    if (sep && !out.empty() && out.back() == '_') continue;
    out += sep ? '_' : AsciiLower(c);
  }
  return out;
}

}  // namespace

std::string DebianPythonPackage(const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string want = NormalName(name);
  for (fs::directory_iterator it(kDistPackages, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    for (std::string_view suffix : {".egg-info", ".dist-info"}) {
      if (file.size() <= suffix.size() ||
          file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) {
        continue;
      }
      const std::string stem = file.substr(0, file.size() - suffix.size());
      const size_t dash = stem.find('-');
      if (dash != std::string::npos && NormalName(stem.substr(0, dash)) == want) {
        return stem.substr(dash + 1);
      }
    }
  }
  return "";
}

std::optional<std::vector<std::string>> PipPackages(const std::string& command) {
  std::vector<std::string> words;
  for (std::string_view w : JsSplit(command, ' ')) {
    if (!w.empty()) words.emplace_back(w);
  }
  size_t i = 0;
  if (i + 1 < words.size() && words[i].rfind("python", 0) == 0 && words[i + 1] == "-m") i += 2;
  if (i + 1 >= words.size() || (words[i] != "pip" && words[i] != "pip3") ||
      words[i + 1] != "install") {
    return std::nullopt;
  }
  static const std::set<std::string> kWithValue = {"--target",
                                                   "-t",
                                                   "--prefix",
                                                   "--root",
                                                   "-i",
                                                   "--index-url",
                                                   "--extra-index-url",
                                                   "--cache-dir",
                                                   "--python-version",
                                                   "--platform",
                                                   "--timeout",
                                                   "--retries"};
  std::vector<std::string> packages;
  for (i += 2; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w == "-r" || w == "--requirement" || w == "-e" || w == "--editable" ||
        w.find_first_of(";&|<>$`'\"()") != std::string::npos) {
      return std::nullopt;
    }
    if (w[0] == '-') {
      if (kWithValue.count(w) != 0) ++i;
      continue;
    }
    // "requests>=2", "requests[socks]": the name before any extra or version.
    const size_t end = w.find_first_of("[<>=!~ ");
    packages.push_back(w.substr(0, end));
  }
  if (packages.empty()) return std::nullopt;
  return packages;
}

std::string DebianPythonPackageName(const std::string& name) {
  std::string debian = "python3-" + name;
  for (char& c : debian) c = c == '_' || c == '.' ? '-' : AsciiLower(c);
  return debian;
}

// --- cargo ------------------------------------------------------------------------------------

const std::string_view kDebianCratesSetup =
    "mkdir -p \"$CARGO_HOME\" && printf '[source.crates-io]\\nreplace-with = "
    "\"debian-packages\"\\n[source.debian-packages]\\ndirectory = \"/usr/share/cargo/registry\"\\n' "
    "> \"$CARGO_HOME/config.toml\"";

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string Unquoted(std::string_view s) {
  s = Trim(s);
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) {
    s = s.substr(1, s.size() - 2);
  }
  return std::string(s);
}

// The line without its comment, and the bracket depth it leaves open ([ and { outside strings).
std::string_view Uncommented(std::string_view line, int& depth) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == '\\' && quote == '"') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      return line.substr(0, i);
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return line;
}

// "dependencies", "dev-dependencies", "target.'cfg(unix)'.build-dependencies",
// "workspace.dependencies": a table of dependencies.
bool DependencyTable(std::string_view header) {
  for (std::string_view kind : {"dependencies", "dev-dependencies", "build-dependencies"}) {
    if (header == kind) return true;
    if (header.size() > kind.size() && header[header.size() - kind.size() - 1] == '.' &&
        header.substr(header.size() - kind.size()) == kind) {
      return true;
    }
  }
  return false;
}

// Whether a dependency's inline table sets `key` (`path = "..."`, `git = "..."`, `package = ...`),
// and its string value then ("" when it is not a string).
std::optional<std::string> InlineKey(std::string_view value, std::string_view key) {
  for (size_t at = value.find(key); at != std::string_view::npos; at = value.find(key, at + 1)) {
    const bool starts = at > 0 && (value[at - 1] == '{' || value[at - 1] == ',' ||
                                   std::isspace(static_cast<unsigned char>(value[at - 1])));
    std::string_view rest = Trim(value.substr(at + key.size()));
    if (!starts || rest.empty() || rest[0] != '=') continue;
    rest = Trim(rest.substr(1));
    if (rest.empty() || (rest[0] != '"' && rest[0] != '\'')) return std::string();
    const size_t end = rest.find(rest[0], 1);
    return end == std::string_view::npos ? std::string() : std::string(rest.substr(1, end - 1));
  }
  return std::nullopt;
}

// Numeric parts of a version ("1.24.2" -> 1, 24, 2), for ordering.
std::vector<long> VersionParts(std::string_view v) {
  std::vector<long> out;
  size_t i = 0;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
    long n = 0;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
      n = std::min(n * 10 + (v[i] - '0'), 1000000000L);
      ++i;
    }
    out.push_back(n);
    if (i < v.size() && v[i] == '.') ++i;
  }
  return out;
}

}  // namespace

std::optional<std::vector<std::string>> CargoDependencies(const std::string& manifest) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  const auto add = [&](std::string name) {
    if (!name.empty() && seen.insert(name).second) out.push_back(std::move(name));
  };
  const auto drop = [&](const std::string& name) {
    out.erase(std::remove(out.begin(), out.end(), name), out.end());
    seen.erase(name);
  };
  bool is_manifest = false;
  bool in_dependencies = false;
  std::string table_dependency;  // the NAME of a [dependencies.NAME] table
  int depth = 0;                 // brackets a value left open on earlier lines
  for (std::string_view line : JsSplit(manifest, '\n')) {
    const int before = depth;
    line = Trim(Uncommented(line, depth));
    if (before > 0 || line.empty()) continue;
    if (line.front() == '[') {
      depth = 0;
      std::string_view header = line;
      while (!header.empty() && header.front() == '[') header.remove_prefix(1);
      while (!header.empty() && header.back() == ']') header.remove_suffix(1);
      header = Trim(header);
      if (header == "package" || header == "workspace") is_manifest = true;
      in_dependencies = DependencyTable(header);
      table_dependency.clear();
      const size_t dot = header.rfind('.');
      if (!in_dependencies && dot != std::string_view::npos &&
          DependencyTable(header.substr(0, dot))) {
        table_dependency = Unquoted(header.substr(dot + 1));
        add(table_dependency);
      }
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string key = Unquoted(line.substr(0, eq));
    const std::string_view value = line.substr(eq + 1);
    if (!table_dependency.empty()) {
      if (key == "git") return std::nullopt;
      if (key == "path" || key == "package") {
        drop(table_dependency);  // the project's own crate, or an alias
        if (key == "package") add(Unquoted(value));
        table_dependency.clear();
      }
      continue;
    }
    if (!in_dependencies) continue;
    if (const size_t dot = key.find('.'); dot != std::string::npos) key.resize(dot);  // tokio.version
    if (InlineKey(value, "git")) return std::nullopt;  // fetched from a repository: no copy here
    if (InlineKey(value, "path")) continue;           // the project's own crate
    const auto renamed = InlineKey(value, "package");
    add(renamed && !renamed->empty() ? *renamed : Unquoted(key));
  }
  if (!is_manifest) return std::nullopt;
  return out;
}

std::string DebianCrate(const std::string& name) {
  namespace fs = std::filesystem;
  std::string underscored = name;
  std::replace(underscored.begin(), underscored.end(), '-', '_');
  std::string dashed = name;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  std::string best;
  std::error_code ec;
  for (fs::directory_iterator it(kDebianCrateRegistry, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string dir = it->path().filename().string();
    for (const std::string& spelling : {name, underscored, dashed}) {
      if (dir.size() > spelling.size() + 1 && dir.compare(0, spelling.size(), spelling) == 0 &&
          dir[spelling.size()] == '-' &&
          std::isdigit(static_cast<unsigned char>(dir[spelling.size() + 1]))) {
        const std::string version = dir.substr(spelling.size() + 1);
        if (best.empty() || VersionParts(version) > VersionParts(best)) best = version;
        break;
      }
    }
  }
  return best;
}

std::string DebianCratePackageName(const std::string& name) {
  std::string debian = "librust-" + name + "-dev";
  for (char& c : debian) c = c == '_' ? '-' : AsciiLower(c);
  return debian;
}

}  // namespace evalrun::zx
