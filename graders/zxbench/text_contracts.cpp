// zx-bench's structured text contracts (structuredTextContracts.ts at a5f6a19f), check for check
// and label for label. Values are read with zx-bench's helpers: path() walks plain objects only,
// filled() refuses null, undefined and "", `a ?? b` falls through null and undefined (nullptr
// here is undefined).
#include "graders/zxbench/text_contracts.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <set>

#include "core/js_value.h"
#include "graders/zxbench/format_parsers.h"
#include "graders/zxbench/js_date.h"
#include "graders/zxbench/js_json.h"
#include "graders/zxbench/js_regex.h"
#include "graders/zxbench/text_structure.h"

namespace evalrun::zx {
namespace {

using js::ordered_json;
using J = const ordered_json*;

// ---- zx-bench's value helpers ---------------------------------------------------------------

J Obj(J v) { return v != nullptr && v->is_object() ? v : nullptr; }
J Path(J v, std::string_view route) {
  for (size_t start = 0;;) {
    const size_t dot = route.find('.', start);
    const std::string key(route.substr(start, dot == std::string_view::npos ? dot : dot - start));
    J object = Obj(v);
    if (object == nullptr) return nullptr;
    const auto it = object->find(key);
    v = it == object->end() ? nullptr : &*it;
    if (dot == std::string_view::npos) return v;
    start = dot + 1;
  }
}
bool Filled(J v) {
  return v != nullptr && !v->is_null() && !(v->is_string() && v->get_ref<const std::string&>().empty());
}
size_t KeyCount(J v) { return Obj(v) != nullptr ? v->size() : 0; }
bool Present(J v, std::initializer_list<const char*> keys) {
  return std::all_of(keys.begin(), keys.end(), [&](const char* k) { return Filled(Path(Obj(v), k)); });
}
const ordered_json& Arr(J v) {
  static const ordered_json kEmpty = ordered_json::array();
  return v != nullptr && v->is_array() ? *v : kEmpty;
}
J Coalesce(std::initializer_list<J> values) {  // a ?? b ?? c
  J last = nullptr;
  for (J v : values) {
    last = v;
    if (v != nullptr && !v->is_null()) return v;
  }
  return last;
}
std::string Serialized(J v) { return v == nullptr ? std::string() : js::JsStringify(*v); }
bool IsString(J v, std::string_view s) {
  return v != nullptr && v->is_string() && v->get_ref<const std::string&>() == s;
}
bool IsNumber(J v, double d) { return v != nullptr && js::IsNumber(*v) && js::NumberOf(*v) == d; }
// Object.entries / Object.values in JavaScript's order.
std::vector<std::pair<std::string, J>> Entries(J v) {
  std::vector<std::pair<std::string, J>> out;
  if (v == nullptr) return out;
  for (const auto& [key, value] : js::ObjectEntries(*v)) out.emplace_back(*key, value);
  return out;
}
bool Test(const char* pattern, std::string_view subject, const char* flags = "") {
  return JsRegexTest(pattern, flags, subject).value_or(false);
}
bool Has(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// RegExp.prototype.exec: the match's byte index and its groups, or nullopt (also when matching
// gave up). Patterns here are zx-bench's literals or built from identifiers.
struct ExecMatch {
  size_t index;
  std::vector<std::optional<std::string>> groups;  // [0] is the whole match
};
std::optional<ExecMatch> Exec(const std::string& pattern, std::string_view subject,
                              size_t start = 0) {
  std::string error;
  const auto re = LineRegex::Compile(pattern, &error);
  if (!re) return std::nullopt;
  uint64_t steps = kLineStepBudget;
  std::vector<std::optional<std::string_view>> groups;
  if (re->Exec(subject, &steps, &groups, start) != Regex::Result::kMatch || groups.empty() ||
      !groups[0]) {
    return std::nullopt;
  }
  ExecMatch m{static_cast<size_t>(groups[0]->data() - subject.data()), {}};
  for (const auto& g : groups) {
    m.groups.push_back(g ? std::optional<std::string>(std::string(*g)) : std::nullopt);
  }
  return m;
}
// [...subject.matchAll(/pattern/g)]
std::vector<ExecMatch> ExecAll(const std::string& pattern, std::string_view subject) {
  std::vector<ExecMatch> out;
  for (size_t start = 0; start <= subject.size();) {
    auto m = Exec(pattern, subject, start);
    if (!m) break;
    size_t end = m->index + m->groups[0]->size();
    if (m->groups[0]->empty()) {
      if (end >= subject.size()) {
        out.push_back(std::move(*m));
        break;
      }
      js::NextCodePoint(subject, end);
    }
    out.push_back(std::move(*m));
    start = end;
  }
  return out;
}
// Lines of `text` (split at \n) that start with `prefix`: (text.match(/^prefix/gm) ?? []).length
size_t LinesStartingWith(std::string_view text, std::string_view prefix) {
  size_t n = 0;
  for (size_t start = 0;;) {
    if (text.substr(start, prefix.size()) == prefix) ++n;
    const size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) return n;
    start = nl + 1;
  }
}
size_t CjkCount(std::string_view s) {  // (s.match(/[\u4e00-\u9fff]/g) ?? []).length
  size_t n = 0;
  for (size_t i = 0; i < s.size();) {
    const char32_t cp = js::NextCodePoint(s, i);
    n += cp >= 0x4E00 && cp <= 0x9FFF ? 1 : 0;
  }
  return n;
}

// ---- markup helpers ---------------------------------------------------------------------------

using Node = const MarkupNode*;
std::vector<Node> Children(Node n, const char* name) { return DirectChildren(n, name); }
Node Child(Node n, const char* name) {
  const auto c = Children(n, name);
  return c.empty() ? nullptr : c.front();
}
std::vector<Node> All(Node n, const char* name) { return Descendants(n, name); }
std::string Text(Node n) {  // nodeText(node).trim().replace(/&amp;/g, '&')
  if (n == nullptr) return {};
  const std::string t(js::JsTrim(NodeText(*n)));
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.compare(i, 5, "&amp;") == 0) {
      out += '&';
      i += 4;
    } else {
      out += t[i];
    }
  }
  return out;
}
std::string AttrOr(Node n, const char* key, std::string fallback = "") {
  const std::string* v = n != nullptr ? n->Attr(key) : nullptr;
  return v != nullptr ? *v : fallback;
}
bool AttrFilled(Node n, const char* key) {
  const std::string* v = n != nullptr ? n->Attr(key) : nullptr;
  return v != nullptr && !v->empty();
}
bool AttrIs(Node n, const char* key, std::string_view value) {
  const std::string* v = n != nullptr ? n->Attr(key) : nullptr;
  return v != nullptr && *v == value;
}
std::vector<std::string> ChildNames(Node n) {
  std::vector<std::string> out;
  if (n != nullptr) {
    for (const MarkupNode& c : n->children) out.push_back(c.name);
  }
  return out;
}
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
std::string_view TrimStart(std::string_view s) {
  const std::string_view t = js::JsTrim(s);
  return t.empty() ? t : s.substr(static_cast<size_t>(t.data() - s.data()));
}
// (node.attrs.href ?? node.attrs['xlink:href'] ?? '').replace(/^#/, '')
std::string HrefTarget(Node n) {
  const std::string* href = n->Attr("href");
  if (href == nullptr) href = n->Attr("xlink:href");
  std::string target = href != nullptr ? *href : "";
  if (!target.empty() && target[0] == '#') target.erase(0, 1);
  return target;
}
bool IsRed(const std::string& value) {
  if (Test("^red$", value, "i")) return true;
  if (value.size() != 7 || value[0] != '#' ||
      !std::all_of(value.begin() + 1, value.end(),
                   [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; })) {
    return false;
  }
  const int r = std::stoi(value.substr(1, 2), nullptr, 16);
  const int g = std::stoi(value.substr(3, 2), nullptr, 16);
  const int b = std::stoi(value.substr(5, 2), nullptr, 16);
  return r >= 120 && r > g * 1.4 && r > b * 1.4;
}

class Checks {
 public:
  void Add(std::string label, bool pass) { checks_.push_back({std::move(label), pass}); }
  std::vector<TextCheck> Take() { return std::move(checks_); }

 private:
  std::vector<TextCheck> checks_;
};

// ---- YAML -------------------------------------------------------------------------------------

// source.split(/^---\s*$/m)[0]: the text before the first line that is '---' and white space.
std::string FirstYamlDocumentText(std::string_view source) {
  for (size_t start = 0; start <= source.size();) {
    const size_t nl = source.find('\n', start);
    const std::string_view line =
        source.substr(start, nl == std::string_view::npos ? nl : nl - start);
    if (line.substr(0, 3) == "---" && js::JsTrim(line.substr(3)).empty()) {
      return std::string(source.substr(0, start));
    }
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return std::string(source);
}

void YamlContract(std::string_view id, std::string_view source, Checks& c) {
  const YamlParse parsed = ParseYamlDocuments(source);
  c.Add("YAML parses with valid nesting, anchors, and unique keys", parsed.errors.empty());
  const auto& docs = parsed.documents;
  J root = docs.empty() ? nullptr : &docs[0];
  if (id == "SO-CN-008") {
    c.Add("application name and version are configured",
          Present(Coalesce({Path(root, "app"), Path(root, "application"), root}),
                  {"name", "version"}));
    c.Add("server includes host, port, timeout",
          Present(Path(root, "server"), {"host", "port"}) &&
              Filled(Coalesce({Path(root, "server.timeout"), Path(root, "server.timeout_seconds")})));
    c.Add("database includes connection and pool settings",
          Present(Path(root, "database"), {"type", "host", "port"}) &&
              Filled(Coalesce({Path(root, "database.name"), Path(root, "database.database")})) &&
              Filled(Coalesce({Path(root, "database.pool_size"), Path(root, "database.poolSize"),
                               Path(root, "database.connection_pool_size")})));
    c.Add("logging and cache include their required settings",
          Present(Path(root, "logging"), {"level"}) &&
              Filled(Coalesce({Path(root, "logging.file_path"), Path(root, "logging.file"),
                               Path(root, "logging.path")})) &&
              Filled(Path(root, "logging.rotation")) && Present(Path(root, "cache"), {"type"}) &&
              Filled(Coalesce({Path(root, "cache.ttl"), Path(root, "cache.ttl_seconds")})) &&
              Filled(Coalesce({Path(root, "cache.max_memory"), Path(root, "cache.maxMemory")})));
    c.Add("development and production are separate configurations",
          Obj(Path(root, "environments.development")) != nullptr &&
              Obj(Path(root, "environments.production")) != nullptr);
  } else if (id == "SO-CN-010") {
    c.Add("Deployment API and kind are exact",
          IsString(Path(root, "apiVersion"), "apps/v1") && IsString(Path(root, "kind"), "Deployment"));
    c.Add("metadata contains name, namespace, labels",
          Present(Path(root, "metadata"), {"name", "namespace"}) &&
              KeyCount(Path(root, "metadata.labels")) > 0);
    c.Add("replicas and selector are nested under spec",
          IsNumber(Path(root, "spec.replicas"), 3) &&
              KeyCount(Path(root, "spec.selector.matchLabels")) > 0);
    const ordered_json& containers = Arr(Path(root, "spec.template.spec.containers"));
    c.Add("pod template defines exactly two containers", containers.size() == 2);
    c.Add("main container defines image, ports, resources, env and mounts",
          std::any_of(containers.begin(), containers.end(), [](const ordered_json& k) {
            return Filled(Path(&k, "image")) && !Arr(Path(&k, "ports")).empty() &&
                   Obj(Path(&k, "resources.requests")) != nullptr &&
                   Obj(Path(&k, "resources.limits")) != nullptr && Arr(Path(&k, "env")).size() >= 3 &&
                   !Arr(Path(&k, "volumeMounts")).empty();
          }));
    const ordered_json& volumes = Arr(Path(root, "spec.template.spec.volumes"));
    c.Add("pod has configMap and emptyDir volumes",
          std::any_of(volumes.begin(), volumes.end(),
                      [](const ordered_json& v) { return Obj(Path(&v, "configMap")) != nullptr; }) &&
              std::any_of(volumes.begin(), volumes.end(), [](const ordered_json& v) {
                return Obj(Path(&v, "emptyDir")) != nullptr;
              }));
    c.Add("rolling update strategy is selected",
          IsString(Path(root, "spec.strategy.type"), "RollingUpdate"));
  } else if (id == "SO-CN-012") {
    c.Add("CI stages are in the required order",
          Serialized(Path(root, "stages")) == R"(["lint","test","build","deploy"])");
    c.Add("CI variables contain at least four entries", KeyCount(Path(root, "variables")) >= 4);
    std::vector<std::pair<std::string, J>> jobs;
    for (const auto& [key, value] : Entries(Obj(root))) {
      J stage = Path(Obj(value), "stage");
      if (stage != nullptr && js::Truthy(*stage)) jobs.emplace_back(key, value);
    }
    const auto by_stage = [&](const char* stage) {
      std::vector<std::pair<std::string, J>> out;
      for (const auto& job : jobs) {
        if (IsString(Path(job.second, "stage"), stage)) out.push_back(job);
      }
      return out;
    };
    const auto serialized_jobs = [](const std::vector<std::pair<std::string, J>>& list) {
      ordered_json entries = ordered_json::array();
      for (const auto& [key, value] : list) entries.push_back(ordered_json::array({key, *value}));
      return js::JsStringify(entries);
    };
    c.Add("lint, test, build and deploy jobs are assigned to stages",
          !by_stage("lint").empty() && !by_stage("test").empty() && !by_stage("build").empty() &&
              !by_stage("deploy").empty());
    const auto tests = by_stage("test");
    c.Add("test jobs run unit and integration work in parallel",
          std::any_of(tests.begin(), tests.end(),
                      [](const auto& job) { return Filled(Path(job.second, "parallel")); }) &&
              Test("unit|单元", serialized_jobs(tests), "i") &&
              Test("integration|集成", serialized_jobs(tests), "i"));
    const auto deploys = by_stage("deploy");
    c.Add("production deploy is manual and staging deploy exists",
          std::any_of(deploys.begin(), deploys.end(),
                      [](const auto& job) {
                        return Test("production", Serialized(job.second), "i") &&
                               IsString(Path(job.second, "when"), "manual");
                      }) &&
              std::any_of(deploys.begin(), deploys.end(), [](const auto& job) {
                return Test("staging", Serialized(job.second), "i");
              }));
    const auto any_job = [&](const char* key) {
      return std::any_of(jobs.begin(), jobs.end(),
                         [&](const auto& job) { return Filled(Path(job.second, key)); });
    };
    c.Add("cache, artifacts and branch filtering are configured",
          (Filled(Path(root, "cache")) || any_job("cache")) &&
              (Filled(Path(root, "artifacts")) || any_job("artifacts")) &&
              std::any_of(jobs.begin(), jobs.end(), [](const auto& job) {
                return Filled(Path(job.second, "only")) || Filled(Path(job.second, "except"));
              }));
  } else if (id == "SO-CN-032") {
    c.Add("there are exactly two YAML documents", docs.size() == 2);
    const std::string first = FirstYamlDocumentText(source);
    c.Add("anchor and alias are defined within the first document",
          Test("metadata:\\s*&defaultMeta", first) && Test("\\*defaultMeta", first));
    c.Add("both documents contain Kubernetes core fields",
          docs.size() == 2 && std::all_of(docs.begin(), docs.end(), [](const ordered_json& d) {
            const ordered_json& containers = Arr(Path(&d, "spec.containers"));
            return Present(&d, {"apiVersion", "kind"}) && Present(Path(&d, "metadata"), {"name"}) &&
                   KeyCount(Path(&d, "metadata.labels")) >= 2 &&
                   Filled(Path(&d, "spec.replicas")) && !containers.empty() &&
                   std::all_of(containers.begin(), containers.end(), [](const ordered_json& k) {
                     return Present(&k, {"name", "image"});
                   });
          }));
  } else if (id == "SO-CN-033") {
    J services = Path(root, "services");
    c.Add("web, api and db are distinct services",
          Obj(Path(services, "web")) != nullptr && Obj(Path(services, "api")) != nullptr &&
              Obj(Path(services, "db")) != nullptr);
    const ordered_json& ports = Arr(Path(services, "web.ports"));
    c.Add("web maps port 8080 and depends on api",
          Filled(Path(services, "web.image")) &&
              std::any_of(ports.begin(), ports.end(),
                          [](const ordered_json& p) { return Has(js::JsToString(p), "8080"); }) &&
              Has(Serialized(Path(services, "web.depends_on")), "api"));
    c.Add("api has build, three environment variables, db dependency and healthcheck",
          Filled(Path(services, "api.build")) &&
              (KeyCount(Path(services, "api.environment")) >= 3 ||
               Arr(Path(services, "api.environment")).size() >= 3) &&
              Has(Serialized(Path(services, "api.depends_on")), "db") &&
              Filled(Path(services, "api.healthcheck")));
    J image = Path(services, "db.image");
    c.Add("db uses postgres, mounts volume and declares password",
          Test("postgres", image != nullptr && !image->is_null() ? js::JsToString(*image) : "",
               "i") &&
              !Arr(Path(services, "db.volumes")).empty() &&
              Has(Serialized(Path(services, "db.environment")), "POSTGRES_PASSWORD"));
    const auto all_services = Entries(Obj(services));
    c.Add("top-level networks and volumes are used by services",
          KeyCount(Path(root, "networks")) > 0 && KeyCount(Path(root, "volumes")) > 0 &&
              std::any_of(all_services.begin(), all_services.end(), [](const auto& s) {
                return !Arr(Path(s.second, "networks")).empty();
              }));
    c.Add("restart policy is configured on services",
          std::all_of(all_services.begin(), all_services.end(),
                      [](const auto& s) { return Filled(Path(s.second, "restart")); }));
  }
}

// ---- TOML -------------------------------------------------------------------------------------

void TomlContract(std::string_view id, std::string_view source, Checks& c) {
  const TomlParse parsed = ParseTomlDocument(source);
  c.Add("TOML parses with tables, arrays and unique keys", parsed.errors.empty());
  J root = &parsed.root;
  const auto deps_have_versions = [](J value, size_t count) {
    size_t n = 0;
    for (const auto& [key, dep] : Entries(Obj(value))) {
      (void)key;
      if ((dep->is_string() && !dep->get_ref<const std::string&>().empty()) ||
          Filled(Path(dep, "version"))) {
        ++n;
      }
    }
    return n >= count;
  };
  const auto bins_ok = [&]() {
    const ordered_json& bins = Arr(Path(root, "bin"));
    return bins.size() == 2 && std::all_of(bins.begin(), bins.end(), [](const ordered_json& b) {
             return Present(&b, {"name", "path"});
           });
  };
  const bool comments = Test("^\\s*#", source, "m");
  if (id == "SO-CN-026") {
    c.Add("package metadata is complete",
          Present(Path(root, "package"),
                  {"name", "version", "edition", "authors", "description", "license"}));
    c.Add("dependency tables meet counts and have versions",
          deps_have_versions(Path(root, "dependencies"), 5) &&
              deps_have_versions(Path(root, "dev-dependencies"), 2));
    c.Add("features contain default and two optional entries",
          Filled(Path(root, "features.default")) && KeyCount(Path(root, "features")) >= 3);
    c.Add("two binary targets have names and paths", bins_ok());
    c.Add("release profile and comments are present",
          KeyCount(Path(root, "profile.release")) > 0 && comments);
  } else if (id == "SO-CN-039") {
    c.Add("workspace members and resolver are defined",
          Arr(Path(root, "workspace.members")).size() >= 3 &&
              Filled(Path(root, "workspace.resolver")));
    c.Add("workspace package metadata is complete",
          Present(Path(root, "workspace.package"), {"version", "edition", "license", "authors"}));
    c.Add("four shared dependencies include versions",
          deps_have_versions(Path(root, "workspace.dependencies"), 4));
    c.Add("root package metadata is complete",
          Present(Path(root, "package"), {"name", "version", "edition"}));
    c.Add("two binary targets have names and paths", bins_ok());
    c.Add("features and release profile have required counts",
          Filled(Path(root, "features.default")) && KeyCount(Path(root, "features")) >= 3 &&
              KeyCount(Path(root, "profile.release")) >= 3);
    c.Add("TOML contains comments", comments);
  }
}

// ---- XML and SVG ------------------------------------------------------------------------------

void XmlContract(std::string_view id, std::string_view source, Checks& c) {
  const MarkupParse parsed = ParseMarkup(source, false);
  c.Add("XML/SVG parses with proper nesting, entities and attributes", parsed.errors.empty());
  Node root = parsed.root ? &*parsed.root : nullptr;
  const bool declaration = Test("^<\\?xml\\s+version=", TrimStart(source), "i");
  if (id == "SO-CN-014") {
    c.Add("SOAP 1.2 Envelope namespace is correct",
          root != nullptr && EndsWith(root->name, ":Envelope") &&
              std::any_of(root->attrs.begin(), root->attrs.end(), [](const auto& a) {
                return a.first.rfind("xmlns:", 0) == 0 &&
                       a.second == "http://www.w3.org/2003/05/soap-envelope";
              }));
    Node body = nullptr, operation = nullptr;
    if (root != nullptr) {
      for (const MarkupNode& n : root->children) {
        if (EndsWith(n.name, ":Body")) {
          body = &n;
          break;
        }
      }
    }
    if (body != nullptr) {
      for (const MarkupNode& n : body->children) {
        if (EndsWith(n.name, ":GetWeather")) {
          operation = &n;
          break;
        }
      }
    }
    const auto has_value = [](Node n, std::string_view value) {
      return n != nullptr && std::any_of(n->attrs.begin(), n->attrs.end(),
                                         [&](const auto& a) { return a.second == value; });
    };
    c.Add("weather operation is inside SOAP Body",
          operation != nullptr && (has_value(root, "http://example.com/weather") ||
                                   has_value(operation, "http://example.com/weather")));
    const auto child_with = [&](const char* name_re, const char* value) {
      return std::any_of(operation->children.begin(), operation->children.end(),
                         [&](const MarkupNode& n) {
                           return Test(name_re, n.name, "i") && Text(&n) == value;
                         });
    };
    c.Add("city and date values are nested in operation",
          operation != nullptr && child_with("city", "北京") && child_with("date", "2024-03-20"));
    c.Add("XML declaration is present", declaration);
  } else if (id == "SO-CN-016") {
    Node channel = Child(root, "channel");
    const std::vector<Node> items = Children(channel, "item");
    c.Add("RSS version and channel structure are correct",
          root != nullptr && root->name == "rss" && AttrIs(root, "version", "2.0") &&
              channel != nullptr);
    const auto has_all = [](Node n, std::initializer_list<const char*> names) {
      return std::all_of(names.begin(), names.end(),
                         [&](const char* name) { return Child(n, name) != nullptr; });
    };
    std::string language = Text(Child(channel, "language"));
    for (char& ch : language) ch = ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch + 32) : ch;
    c.Add("channel metadata is complete",
          channel != nullptr &&
              has_all(channel,
                      {"title", "link", "description", "language", "lastBuildDate", "ttl"}) &&
              language == "zh-cn");
    c.Add("at least five complete items exist",
          items.size() >= 5 && std::all_of(items.begin(), items.end(), [&](Node item) {
            return has_all(item, {"title", "link", "description", "pubDate", "author",
                                  "category", "guid"});
          }));
    // !Number.isNaN(Date.parse(pubDate)): V8's reading of dates (graders/zxbench/js_date.h).
    c.Add("item dates, GUID attributes and CDATA HTML are valid",
          items.size() >= 5 && std::all_of(items.begin(), items.end(), [&](Node item) {
            Node description = Child(item, "description");
            return JsDateParse(Text(Child(item, "pubDate"))).has_value() &&
                   AttrIs(Child(item, "guid"), "isPermaLink", "false") &&
                   Test("<!\\[CDATA\\[\\s*<", description ? description->raw_text : "");
          }));
    c.Add("XML declaration is present", declaration);
  } else if (id == "SO-CN-018" || id == "SO-CN-038") {
    c.Add("SVG root has namespace and dimensions",
          root != nullptr && root->name == "svg" &&
              AttrIs(root, "xmlns", "http://www.w3.org/2000/svg") && AttrFilled(root, "viewBox") &&
              AttrFilled(root, "width") && AttrFilled(root, "height"));
    c.Add("SVG contains title and description",
          Child(root, "title") != nullptr && Child(root, "desc") != nullptr);
    if (id == "SO-CN-018") {
      const auto rects = All(root, "rect");
      c.Add("flag has a red rectangular background",
            std::any_of(rects.begin(), rects.end(), [](Node n) { return IsRed(AttrOr(n, "fill")); }));
      Node defs = Child(root, "defs");
      std::vector<Node> reusable = All(defs, "polygon");
      for (Node n : All(defs, "path")) reusable.push_back(n);
      std::set<std::string> reusable_ids;
      for (Node n : reusable) {
        if (AttrFilled(n, "id")) reusable_ids.insert(AttrOr(n, "id"));
      }
      std::vector<Node> shapes = All(root, "polygon");
      for (Node n : All(root, "path")) shapes.push_back(n);
      const char* yellow = "yellow|#(?:ffde00|ffff00|ffd700)";
      size_t stars = 0;
      for (Node n : shapes) {
        if (std::find(reusable.begin(), reusable.end(), n) != reusable.end()) continue;
        std::string parent_fill;
        for (const MarkupNode& parent : root->children) {
          const bool holds = std::any_of(parent.children.begin(), parent.children.end(),
                                         [&](const MarkupNode& k) { return &k == n; });
          if (holds) {
            parent_fill = AttrOr(&parent, "fill");
            break;
          }
        }
        if (Test(yellow, AttrOr(n, "fill"), "i") || Test(yellow, parent_fill, "i") ||
            n->name == "polygon") {
          ++stars;
        }
      }
      size_t reused = 0;
      for (Node n : All(root, "use")) reused += reusable_ids.count(HrefTarget(n));
      c.Add("five stars are drawn with polygon or path", stars + reused >= 5);
    } else {
      Node defs = Child(root, "defs");
      const auto uses = All(root, "use");
      std::set<std::string> ids;
      for (const char* name : {"path", "circle", "g", "symbol", "marker"}) {
        for (Node n : All(defs, name)) {
          if (AttrFilled(n, "id")) ids.insert(AttrOr(n, "id"));
        }
      }
      c.Add("defs contain a referenced reusable element used twice",
            defs != nullptr && uses.size() >= 2 &&
                std::all_of(uses.begin(), uses.end(),
                            [&](Node n) { return ids.count(HrefTarget(n)) > 0; }));
      const auto paths = All(root, "path");
      c.Add("cloud path has a curve and two circles exist",
            std::any_of(paths.begin(), paths.end(),
                        [](Node n) { return Test("[CQSAcqsa]", AttrOr(n, "d")); }) &&
                All(root, "circle").size() >= 2);
      const auto groups = All(root, "g");
      const auto rects = All(root, "rect");
      c.Add("group transform and background rectangle exist",
            std::any_of(groups.begin(), groups.end(),
                        [](Node n) { return AttrFilled(n, "transform"); }) &&
                std::any_of(rects.begin(), rects.end(), [](Node n) { return AttrFilled(n, "fill"); }));
    }
  } else if (id == "SO-CN-035") {
    Node schema = root;
    Node receipt = nullptr;
    for (Node n : All(schema, "xs:element")) {
      if (AttrIs(n, "name", "bookReceipt")) {
        receipt = n;
        break;
      }
    }
    const auto sequences = All(receipt, "xs:sequence");
    Node sequence = sequences.empty() ? nullptr : sequences.front();
    const auto elements = Children(sequence, "xs:element");
    c.Add("XSD namespace and root are correct",
          schema != nullptr && schema->name == "xs:schema" &&
              AttrIs(schema, "xmlns:xs", "http://www.w3.org/2001/XMLSchema"));
    std::vector<std::string> names;
    bool all_named = true;
    for (Node n : elements) {
      const std::string* name = n->Attr("name");
      all_named = all_named && name != nullptr;
      names.push_back(name != nullptr ? *name : "");
    }
    c.Add("bookReceipt has ordered typed children",
          receipt != nullptr && sequence != nullptr && all_named &&
              names == std::vector<std::string>{"bookTitle", "isbn", "quantity", "supplier"} &&
              std::all_of(elements.begin(), elements.end(), [](Node n) {
                return AttrFilled(n, "type") || !All(n, "xs:simpleType").empty();
              }));
    Node quantity = nullptr;
    for (Node n : elements) {
      if (AttrIs(n, "name", "quantity")) {
        quantity = n;
        break;
      }
    }
    const auto attributes = All(receipt, "xs:attribute");
    c.Add("quantity is positiveInteger and receiptNo attribute exists",
          AttrIs(quantity, "type", "xs:positiveInteger") &&
              std::any_of(attributes.begin(), attributes.end(),
                          [](Node n) { return AttrIs(n, "name", "receiptNo"); }));
    c.Add("at least three attributes are defined", attributes.size() >= 3);
  } else if (id == "SO-CN-049") {
    Node quote = root;
    const auto items = Children(Child(quote, "items"), "item");
    c.Add("quote root has the exact child order",
          quote != nullptr && quote->name == "quote" &&
              ChildNames(quote) == std::vector<std::string>{"quoteNo", "buyer", "items", "total"});
    std::string buyer = Text(Child(Child(quote, "buyer"), "name"));
    {  // .replace(/\s*&\s*/, '&'): the first ampersand with the white space around it
      const size_t amp = buyer.find('&');
      if (amp != std::string::npos) {
        size_t left = amp;
        while (left > 0) {  // white space before it, one code point at a time
          size_t start = left - 1;
          while (start > 0 && (static_cast<unsigned char>(buyer[start]) & 0xC0) == 0x80) --start;
          size_t probe = start;
          if (!js::IsJsSpace(js::NextCodePoint(buyer, probe))) break;
          left = start;
        }
        size_t right = amp + 1;
        for (size_t probe = right; right < buyer.size(); right = probe) {
          probe = right;
          if (!js::IsJsSpace(js::NextCodePoint(buyer, probe))) break;
        }
        buyer = buyer.substr(0, left) + "&" + buyer.substr(right);
      }
    }
    c.Add("buyer name contains escaped or CDATA ampersand", buyer == "北京机械&电子有限公司");
    c.Add("twelve items each have ordered fields",
          items.size() == 12 && std::all_of(items.begin(), items.end(), [](Node item) {
            return ChildNames(item) == std::vector<std::string>{"sku", "name", "qty", "unitPrice"};
          }));
    bool total_ok = items.size() == 12;
    double total = 0;
    for (Node item : items) {
      const std::string qty = Text(Child(item, "qty")), price = Text(Child(item, "unitPrice"));
      if (!Test("^\\d+(?:\\.\\d+)?$", qty) || !Test("^\\d+(?:\\.\\d+)?$", price)) {
        total_ok = false;
        break;
      }
      total += std::stod(qty) * std::stod(price);
    }
    const std::string stated = Text(Child(quote, "total"));
    total_ok = total_ok && Test("^\\d+\\.\\d{2}$", stated) &&
               std::fabs(std::stod(stated) - total) < 0.001;
    c.Add("total is a two-decimal sum of item products", total_ok);
    c.Add("required XML declaration is exact",
          Test("^<\\?xml version=\"1\\.0\" encoding=\"UTF-8\"\\?>", TrimStart(source)));
  }
}

// ---- HTML -------------------------------------------------------------------------------------

void HtmlContract(std::string_view id, std::string_view source, Checks& c) {
  const MarkupParse parsed = ParseMarkup(source, true);
  c.Add("HTML has a balanced element tree", parsed.errors.empty());
  Node root = parsed.root ? &*parsed.root : nullptr;
  Node head = Child(root, "head"), body = Child(root, "body");
  const std::string body_text = Text(body);
  c.Add("HTML document contains head and body",
        root != nullptr && root->name == "html" && head != nullptr && body != nullptr);
  const bool doctype = Test("^<!doctype html>", TrimStart(source), "i");
  const bool chinese = Test("[\\u4e00-\\u9fff]", body_text);
  if (id == "SO-CN-019") {
    const auto images = All(body, "img");
    std::vector<Node> styled = {body};
    for (Node n : All(body, "table")) styled.push_back(n);
    for (Node n : All(body, "td")) styled.push_back(n);
    c.Add("email has image with source and inline style",
          std::any_of(images.begin(), images.end(), [](Node n) { return AttrFilled(n, "src"); }) &&
              !All(body, "table").empty() &&
              std::any_of(styled.begin(), styled.end(),
                          [](Node n) { return AttrFilled(n, "style"); }));
    c.Add("order, amount, shipping and support content are inside body",
          Has(body_text, "订单") && Test("金额|合计|总计|小计|实付|支付", body_text) &&
              Test("配送|收货|地址", body_text) && Test("客服|联系|电话|邮箱", body_text));
    c.Add("mobile layout is described", Test("viewport|@media|max-width:\\s*\\d+px", source, "i"));
  } else if (id == "SO-CN-021") {
    bool semantic = true;
    for (const char* name : {"header", "main", "section", "article", "footer"}) {
      semantic = semantic && !All(root, name).empty();
    }
    c.Add("resume uses semantic HTML sections", semantic);
    c.Add("resume covers education, experience, skills and projects",
          Has(body_text, "教育") && Test("工作|经历", body_text) && Has(body_text, "技能") &&
              Has(body_text, "项目"));
    c.Add("resume has two experience entries", All(body, "article").size() >= 2);
    const auto metas = All(head, "meta");
    const auto sections = All(root, "section");
    c.Add("viewport and visible styling are present",
          std::any_of(metas.begin(), metas.end(),
                      [](Node n) { return AttrIs(n, "name", "viewport"); }) &&
              (!All(root, "style").empty() ||
               std::any_of(sections.begin(), sections.end(),
                           [](Node n) { return AttrFilled(n, "style"); })));
    c.Add("HTML5 doctype and Chinese content are present", doctype && chinese);
  } else if (id == "SO-CN-023") {
    const auto divs = All(body, "div");
    const auto class_count = [&](const char* re) {
      return static_cast<size_t>(std::count_if(divs.begin(), divs.end(), [&](Node n) {
        return Test(re, AttrOr(n, "class"), "i");
      }));
    };
    c.Add("dashboard has at least four KPI cards", class_count("kpi|metric|stat.*card") >= 4);
    c.Add("chart has at least twelve bars", class_count("bar|column") >= 12);
    const auto tables = All(body, "table");
    c.Add("orders table has ten data rows",
          std::any_of(tables.begin(), tables.end(), [](Node t) { return All(t, "tr").size() >= 11; }));
    c.Add("CSS uses grid or flex and dark background",
          Test("display\\s*:\\s*(?:grid|flex)", source, "i") &&
              Test("background(?:-color)?\\s*:\\s*(?:#(?:0[0-9a-f]|1[0-9a-f]|2[0-9a-f])[0-9a-f]{4}|"
                   "rgb\\(\\s*(?:[0-3]?\\d)[, ]+|black)",
                   source, "i"));
    c.Add("currency and Chinese labels are present", Test("¥|￥|元", body_text) && chinese);
    c.Add("HTML5 doctype is present", doctype);
  }
}


// ---- Mermaid ----------------------------------------------------------------------------------

void MermaidContract(std::string_view id, std::string_view source, std::string_view version,
                     Checks& c) {
  const MermaidStructure graph = ParseMermaidStructure(source);
  c.Add("Mermaid block structure parses", graph.errors.empty() && !graph.type.empty());
  std::string body;
  for (size_t i = 0; i < graph.lines.size(); ++i) body += (i ? "\n" : "") + graph.lines[i];
  const size_t edges = graph.edges.size();
  const auto connected = [&](const std::string& a, const std::string& b, bool either_way,
                             bool labelled) {
    return std::any_of(graph.edges.begin(), graph.edges.end(), [&](const auto& e) {
      const bool forward = e.from == a && e.to == b;
      const bool backward = either_way && e.from == b && e.to == a;
      return (forward || backward) && (!labelled || !e.label.empty());
    });
  };
  if (id == "SO-CN-020") {
    c.Add("diagram is a flowchart with connected stages", graph.type == "flowchart" && edges >= 9);
    c.Add("stock and payment both branch to success and failure",
          Has(body, "库存") && Has(body, "支付") && Has(body, "锁定库存") && Has(body, "通知用户") &&
              Has(body, "发货") && Has(body, "取消订单") && edges >= 9);
    c.Add("shipping, receipt and completion are connected",
          Has(body, "发货") && Has(body, "签收") && Has(body, "完成") && edges >= 9);
  } else if (id == "SO-CN-022") {
    c.Add("sequence diagram declares six actors",
          graph.type == "sequenceDiagram" && graph.participants.size() >= 6);
    c.Add("authentication messages connect gateway, service, database and Redis",
          edges >= 10 && Has(body, "Redis") && Has(body, "Token") && Has(body, "JWT") &&
              Has(body, "数据库"));
    c.Add("success and failure branches are explicit",
          Test("^alt\\s", body, "m") && Test("^else\\s", body, "m") && Test("^end\\s*$", body, "m"));
  } else if (id == "SO-CN-024") {
    const std::vector<std::pair<std::string, std::vector<std::string>>> fields = {
        {"User", {"id", "username", "email", "role"}},
        {"Course", {"id", "title", "instructor_id", "price", "category"}},
        {"Enrollment", {"id", "user_id", "course_id", "enrolled_at", "progress"}},
        {"Lesson", {"id", "course_id", "title", "duration", "order_num"}},
        {"Payment", {"id", "user_id", "course_id", "amount", "method", "status"}},
        {"Review", {"id", "user_id", "course_id", "rating", "content"}}};
    bool named = graph.type == "erDiagram";
    for (const auto& [name, expected] : fields) named = named && graph.Entity(name) != nullptr;
    c.Add("ER diagram defines all six exact entity names", named);
    const auto entity_lines = [&](const std::string& name) {
      static const std::vector<std::string> kNone;
      const auto* lines = graph.Entity(name);
      return lines != nullptr ? *lines : kNone;
    };
    bool declared = true, typed = true;
    for (const auto& [name, expected] : fields) {
      const auto& lines = entity_lines(name);
      for (const std::string& field : expected) {
        declared = declared && std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
                     return Test(("\\b" + field + "\\b").c_str(), l);
                   });
        typed = typed && std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
                  // line.trim().split(/\s+/)[1] === field
                  std::vector<std::string> words;
                  std::string_view t = js::JsTrim(l);
                  size_t i = 0;
                  while (i <= t.size() && words.size() < 2) {
                    size_t j = i;
                    size_t probe = j;
                    while (j < t.size() && !js::IsJsSpace(js::NextCodePoint(t, probe))) {
                      j = probe;
                    }
                    words.emplace_back(t.substr(i, j - i));
                    if (j >= t.size()) break;
                    i = j;
                    for (probe = i; i < t.size(); i = probe) {
                      probe = i;
                      if (!js::IsJsSpace(js::NextCodePoint(t, probe))) break;
                    }
                  }
                  return words.size() > 1 && words[1] == field;
                });
      }
    }
    c.Add("entity fields are declared in their own blocks", declared);
    if (version == "v2") c.Add("ER attributes declare a type before each required field", typed);
    const std::vector<std::pair<std::string, std::string>> needed = {
        {"User", "Enrollment"}, {"Course", "Enrollment"}, {"User", "Payment"}, {"Course", "Lesson"},
        {"User", "Review"},     {"Course", "Review"},     {"User", "Course"}};
    c.Add("seven required relationships connect their entities",
          std::all_of(needed.begin(), needed.end(),
                      [&](const auto& p) { return connected(p.first, p.second, true, false); }));
  } else if (id == "SO-CN-036") {
    const std::vector<std::pair<std::string, std::vector<std::string>>> fields = {
        {"User", {"id", "username", "email", "publish()"}},
        {"Post", {"id", "title", "content", "createdAt", "addComment()"}},
        {"Comment", {"id", "content", "createdAt"}},
        {"Tag", {"id", "name"}}};
    bool members = graph.type == "classDiagram";
    for (const auto& [name, expected] : fields) {
      const auto* lines = graph.Entity(name);
      for (const std::string& field : expected) {
        members = members && lines != nullptr &&
                  std::any_of(lines->begin(), lines->end(),
                              [&](const std::string& l) { return Has(l, field); });
      }
    }
    c.Add("class diagram defines exact names and members", members);
    c.Add("three domain relationships have labels",
          connected("User", "Post", false, true) && connected("Post", "Comment", false, true) &&
              connected("Post", "Tag", false, true));
    std::set<std::string> arrows;  // body.matchAll(/(?:<-->|-->|<--|\.\.>|\*--|o--)/g)
    for (size_t i = 0; i < body.size();) {
      bool hit = false;
      for (const char* arrow : {"<-->", "-->", "<--", "..>", "*--", "o--"}) {
        if (body.compare(i, std::char_traits<char>::length(arrow), arrow) == 0) {
          arrows.insert(arrow);
          i += std::char_traits<char>::length(arrow);
          hit = true;
          break;
        }
      }
      if (!hit) ++i;
    }
    c.Add("at least two arrow forms are used", arrows.size() >= 2);
  } else if (id == "SO-CN-037") {
    bool states = graph.type == "stateDiagram-v2";
    for (const char* state :
         {"Idle", "Downloading", "Verifying", "Installing", "Rollback", "Success", "Failed"}) {
      states = states && Test(("\\b" + std::string(state) + "\\b").c_str(), body);
    }
    c.Add("state diagram names all required states", states);
    c.Add("initial and terminal transitions exist",
          Test("\\[\\*\\]\\s*-->", body) && Test("-->\\s*\\[\\*\\]", body));
    c.Add("composite state and conditioned transitions exist",
          Test("state\\s+Installing\\s*\\{", body) && edges >= 10 &&
              std::all_of(graph.edges.begin(), graph.edges.end(),
                          [](const auto& e) { return Test("[\\u4e00-\\u9fff]", e.label); }));
    c.Add("verification failure has a recovery path",
          Test("Verifying\\s*-->\\s*(?:Idle|Failed|Rollback)", body));
  }
}

// ---- Markdown ---------------------------------------------------------------------------------

void MarkdownContract(std::string_view id, std::string_view source, Checks& c) {
  const MarkdownBlocks doc = ParseMarkdownBlocks(source);
  c.Add("Markdown fences and block boundaries parse", doc.errors.empty());
  const auto& headings = doc.headings;
  const auto& tables = doc.tables;
  const auto& fences = doc.fences;
  const auto level_count = [&](int level) {
    return static_cast<size_t>(std::count_if(headings.begin(), headings.end(),
                                             [&](const auto& h) { return h.level == level; }));
  };
  const auto fence_with = [&](const char* language) {
    return std::any_of(fences.begin(), fences.end(),
                       [&](const auto& f) { return f.language == language; });
  };
  const auto numbers = [&](size_t limit) {
    std::vector<double> out;
    for (size_t i = 0; i < doc.ordered.size() && i < limit; ++i) out.push_back(doc.ordered[i].number);
    return out;
  };
  if (id == "SO-CN-025") {
    size_t table_at = source.size();  // source.split(/^\|/m)[0]
    for (size_t start = 0;;) {
      if (source.substr(start, 1) == "|") {
        table_at = start;
        break;
      }
      const size_t nl = source.find('\n', start);
      if (nl == std::string_view::npos) break;
      start = nl + 1;
    }
    c.Add("report has title, prose summary and conclusions",
          level_count(1) > 0 && CjkCount(source.substr(0, table_at)) >= 40 && !doc.ordered.empty());
    c.Add("data table has five rows and three columns",
          std::any_of(tables.begin(), tables.end(), [](const auto& t) {
            return t.rows.size() >= 7 && std::all_of(t.rows.begin(), t.rows.end(),
                                                     [](const auto& r) { return r.size() >= 3; });
          }));
    c.Add("SQL example is a fenced query",
          std::any_of(fences.begin(), fences.end(), [](const auto& f) {
            return f.language == "sql" && Test("\\bSELECT\\b", f.body, "i");
          }));
    c.Add("flow description, separators and ordered conclusions exist",
          Has(source, "流程") && doc.separators >= 3 && doc.ordered.size() >= 2);
  } else if (id == "SO-CN-027") {
    const auto heading_like = [&](const char* re) {
      return std::any_of(headings.begin(), headings.end(),
                         [&](const auto& h) { return Test(re, h.text); });
    };
    c.Add("API document has title, contents, auth and version history",
          level_count(1) > 0 && heading_like("目录") && heading_like("认证") && heading_like("版本") &&
              Has(source, "](#"));
    std::vector<const MarkdownBlocks::Heading*> endpoints;
    for (const auto& h : headings) {
      if (h.level == 2 && !Test("目录|认证|版本", h.text)) endpoints.push_back(&h);
    }
    c.Add("at least three endpoint sections exist", endpoints.size() >= 3);
    const std::vector<std::string_view> lines = SplitLines(source);
    bool sections_ok = endpoints.size() >= 3;
    for (size_t k = 0; k < endpoints.size() && k < 3 && sections_ok; ++k) {
      const size_t from = endpoints[k]->line - 1;
      const size_t next = k + 1 < endpoints.size() ? endpoints[k + 1]->line : lines.size() + 1;
      std::string section;
      for (size_t l = from; l + 1 < next && l < lines.size(); ++l) {
        if (l > from) section += '\n';
        section += lines[l];
      }
      sections_ok = Test("`(?:GET|POST|PUT|PATCH|DELETE)\\s+\\/", section) &&
                    LinesStartingWith(section, "|") >= 4 &&
                    LinesStartingWith(section, "```json") >= 2;
    }
    c.Add("each endpoint has method, path, tables and JSON examples", sections_ok);
    size_t json_fences = 0;
    bool parse = true;
    for (const auto& f : fences) {
      if (f.language != "json") continue;
      ++json_fences;
      std::string error;
      parse = parse && ParseJsJsonOrdered(f.body, &error).has_value();
    }
    c.Add("JSON code blocks parse", json_fences >= 6 && parse);
    c.Add("version and error-code tables exist", tables.size() >= 2 && Has(source, "错误码"));
  } else if (id == "SO-CN-041") {
    c.Add("technical document has title and three subsections",
          level_count(1) > 0 && level_count(2) >= 3);
    c.Add("table has four rows and three columns",
          std::any_of(tables.begin(), tables.end(), [](const auto& t) {
            return t.rows.size() >= 4 && std::all_of(t.rows.begin(), t.rows.end(),
                                                     [](const auto& r) { return r.size() >= 3; });
          }));
    c.Add("three code fences use sql, bash and yaml",
          fence_with("sql") && fence_with("bash") && fence_with("yaml"));
    c.Add("ordered list and quotation are present",
          doc.ordered.size() >= 3 && numbers(3) == std::vector<double>{1, 2, 3} &&
              !doc.quotes.empty());
  } else if (id == "SO-CN-045") {
    c.Add("heading counts are exact", level_count(1) == 1 && level_count(2) == 4);
    c.Add("one table has eight rows and four columns",
          tables.size() == 1 && tables[0].rows.size() == 8 &&
              std::all_of(tables[0].rows.begin(), tables[0].rows.end(),
                          [](const auto& r) { return r.size() == 4; }));
    std::vector<std::string> languages;
    for (const auto& f : fences) languages.push_back(f.language);
    std::sort(languages.begin(), languages.end());
    c.Add("exactly three code blocks have the required languages",
          fences.size() == 3 && languages == std::vector<std::string>{"bash", "sql", "yaml"});
    c.Add("one quote and ordered items 1 through 5 exist",
          doc.quotes.size() == 1 && numbers(doc.ordered.size()) == std::vector<double>{1, 2, 3, 4, 5});
  }
}

// ---- SQL --------------------------------------------------------------------------------------

void SqlContract(std::string_view id, std::string_view source, std::string_view version,
                 Checks& c) {
  const SqlTokens parsed = TokenizeSql(source);
  c.Add("SQL tokenization preserves balanced syntax and ignores comments",
        parsed.errors.empty() && !parsed.tokens.empty());
  const auto& tokens = parsed.tokens;
  std::string code;
  for (size_t i = 0; i < tokens.size(); ++i) code += (i ? " " : "") + tokens[i];
  const auto has = [&](std::initializer_list<const char*> sequence) {
    std::string joined;
    for (const char* part : sequence) joined += (joined.empty() ? "" : " ") + std::string(part);
    return Has(code, joined);
  };
  const auto token = [&](const char* t) {
    return std::find(tokens.begin(), tokens.end(), t) != tokens.end();
  };
  if (id == "SO-CN-013") {
    c.Add("query joins orders and users", has({"FROM", "ORDERS"}) && has({"JOIN", "USERS"}));
    c.Add("window ranking partitions by city",
          (has({"ROW_NUMBER", "("}) || has({"RANK", "("}) || has({"DENSE_RANK", "("})) &&
              has({"OVER", "("}) && has({"PARTITION", "BY"}) && Has(code, "CITY"));
    c.Add("ranking is limited to three within March 2024",
          Test("(?:<=|< =) 3", code) && Has(code, "2024-03-01") &&
              (Has(code, "2024-04-01") || Has(code, "2024-03-31")));
    c.Add("result projects city, user, order number and amount with ordering",
          token("CITY") && token("NAME") && token("ORDER_NO") && token("AMOUNT") &&
              has({"ORDER", "BY"}));
    bool one_order_per_user = false;
    for (const ExecMatch& m : ExecAll("PARTITION BY ([\\s\\S]*?)(?: ORDER BY|\\))", code)) {
      one_order_per_user = one_order_per_user ||
                           Test("\\bUSER_ID\\b|\\bU \\. ID\\b|\\bO \\. USER_ID\\b",
                                m.groups.size() > 1 && m.groups[1] ? *m.groups[1] : "");
    }
    one_order_per_user = one_order_per_user ||
                         Test("\\bGROUP BY [\\s\\S]*?\\b(?:USER_ID|U \\. ID)\\b", code) ||
                         Test("\\bDISTINCT ON\\s*\\(", code) || Has(code, "LATERAL");
    if (version == "v2") {
      c.Add("city ranking selects distinct users rather than top orders", one_order_per_user);
    }
  } else if (id == "SO-CN-015") {
    const std::vector<std::pair<std::string, std::vector<std::string>>> columns = {
        {"BOOKS", {"ID", "ISBN", "TITLE", "AUTHOR", "PUBLISHER", "PUBLISH_DATE", "PRICE", "STOCK",
                   "CATEGORY_ID"}},
        {"CATEGORIES", {"ID", "NAME", "PARENT_ID"}},
        {"CUSTOMERS", {"ID", "USERNAME", "EMAIL", "PHONE", "ADDRESS", "CREATED_AT"}},
        {"ORDERS", {"ID", "CUSTOMER_ID", "TOTAL_AMOUNT", "STATUS", "CREATED_AT"}},
        {"ORDER_ITEMS", {"ID", "ORDER_ID", "BOOK_ID", "QUANTITY", "UNIT_PRICE"}}};
    const auto create = [](const std::string& table) {
      return "CREATE TABLE (?:IF NOT EXISTS )?" + table + "\\b";
    };
    c.Add("five required tables are created",
          std::all_of(columns.begin(), columns.end(), [&](const auto& t) {
            return JsRegexTest(create(t.first), "", code).value_or(false);
          }));
    c.Add("required table columns occur in CREATE definitions",
          std::all_of(columns.begin(), columns.end(), [&](const auto& t) {
            const auto match = Exec(create(t.first), code);
            std::string chunk;
            if (match) {
              const size_t end = code.find("CREATE TABLE", match->index + match->groups[0]->size());
              chunk = code.substr(match->index,
                                  end == std::string::npos ? std::string::npos : end - match->index);
            }
            return std::all_of(t.second.begin(), t.second.end(), [&](const std::string& name) {
              return JsRegexTest("\\b" + name + "\\b", "", chunk).value_or(false);
            });
          }));
    c.Add("primary and foreign keys plus indexes are present",
          has({"PRIMARY", "KEY"}) && has({"FOREIGN", "KEY"}) && (token("INDEX") || token("KEY")));
    c.Add("MySQL engine, charset and comments are declared",
          has({"ENGINE", "=", "INNODB"}) && Has(code, "UTF8MB4") && token("COMMENT"));
  } else if (id == "SO-CN-017") {
    c.Add("stored procedure declares input and output parameters",
          has({"CREATE", "PROCEDURE"}) && token("JSON") && token("OUT") && Has(code, "CUSTOMER_ID"));
    c.Add("cursor and exception handler are declared", token("CURSOR") && token("HANDLER"));
    c.Add("transaction can commit or roll back",
          has({"START", "TRANSACTION"}) && token("COMMIT") && token("ROLLBACK"));
    c.Add("procedure writes order and item records and updates stock",
          has({"INSERT", "INTO", "ORDERS"}) && has({"INSERT", "INTO", "ORDER_ITEMS"}) &&
              has({"UPDATE", "PRODUCTS"}) && token("STOCK"));
    c.Add("procedure checks customer and inventory and returns totals",
          token("CUSTOMERS") && token("SELECT") && Test("TOTAL|AMOUNT", code) && parsed.comments > 0);
    if (version == "v2") {
      const size_t cursor_at = code.find(" CURSOR "), handler_at = code.find(" HANDLER ");
      c.Add("MySQL cursor is declared before handlers",
            cursor_at != std::string::npos && handler_at != std::string::npos &&
                cursor_at < handler_at);
      c.Add("procedure avoids unsupported ISOPEN and JSON_PARSE calls",
            !token("ISOPEN") && !token("JSON_PARSE"));
    }
  } else if (id == "SO-CN-034") {
    c.Add("CTE selects low-stock products",
          has({"WITH"}) && has({"FROM", "PRODUCTS"}) &&
              Test("STOCK\\s*<\\s*(?:\\w+\\s*\\.\\s*)?REORDER_LEVEL", code));
    c.Add("lateral warehouse choice is present", has({"LATERAL"}) && Has(code, "WAREHOUSES"));
    c.Add("restock log uses INSERT SELECT and conflict update",
          has({"INSERT", "INTO", "RESTOCK_LOG"}) && has({"SELECT"}) && has({"ON", "CONFLICT"}) &&
              has({"DO", "UPDATE"}));
    c.Add("product stock is updated and results returned",
          has({"UPDATE", "PRODUCTS"}) && has({"SET"}) && token("STOCK") && token("RETURNING"));
    const size_t insert_at = code.find("INSERT INTO RESTOCK_LOG");
    const size_t update_at = code.find("UPDATE PRODUCTS");
    const bool cumulative =
        Test("ADDED_QUANTITY = (?:RESTOCK_LOG \\. ADDED_QUANTITY \\+ EXCLUDED \\. ADDED_QUANTITY|"
             "EXCLUDED \\. ADDED_QUANTITY \\+ RESTOCK_LOG \\. ADDED_QUANTITY)",
             code);
    const std::string stock_update = update_at == std::string::npos ? "" : code.substr(update_at);
    const auto cte = Exec("([A-Z_][A-Z_0-9]*) AS \\( INSERT INTO RESTOCK_LOG", code);
    const std::optional<std::string> log_cte =
        cte && cte->groups.size() > 1 ? cte->groups[1] : std::nullopt;
    std::optional<ExecMatch> log_source;
    if (log_cte) {
      log_source =
          Exec("\\bFROM " + *log_cte + "(?: AS)?(?: ([A-Z_][A-Z_0-9]*))?\\b", stock_update);
    }
    std::optional<std::string> log_alias = log_cte;
    if (log_source && log_source->groups.size() > 1 && log_source->groups[1]) {
      log_alias = log_source->groups[1];
    }
    const auto from = Exec("\\bFROM\\b", stock_update);
    const std::string assignment = from ? stock_update.substr(0, from->index) : stock_update;
    const bool update_from_log =
        log_source && log_alias &&
        JsRegexTest("\\bSET STOCK = [\\s\\S]*?\\+ " + *log_alias + " \\. ADDED_QUANTITY\\b", "",
                    assignment)
            .value_or(false);
    if (version == "v2") {
      c.Add("stock increment does not reuse a cumulative conflict total",
            !(cumulative && insert_at != std::string::npos && update_at != std::string::npos &&
              update_at > insert_at && update_from_log));
    }
  }
}

}  // namespace

std::vector<TextCheck> EvaluateTextContract(std::string_view id, std::string_view format,
                                            std::string_view source, std::string_view version) {
  Checks checks;
  if (format == "yaml") YamlContract(id, source, checks);
  if (format == "toml") TomlContract(id, source, checks);
  if (format == "xml") XmlContract(id, source, checks);
  if (format == "html") HtmlContract(id, source, checks);
  if (format == "mermaid") MermaidContract(id, source, version, checks);
  if (format == "markdown") MarkdownContract(id, source, checks);
  if (format == "sql") SqlContract(id, source, version, checks);
  return checks.Take();
}

}  // namespace evalrun::zx
