// zx-bench's structured_contract grader, reproduced (docs/zx-bench.md, "Graders: where evalrun
// knowingly differs"). Reads the whole bank entry as its spec: graderVersion and requirements
// (format, dialect, schema, contentSchema, references, assertions, formatAssertions, family,
// output_policy; generatedSchema, svg and v4's oracle mark the entries evalrun skips).
//
// Sources read: packages/core/src/evaluators/structuredContract.ts (structured_contract_v1),
// structuredContractV2.ts (v2, and v3 which differs only for generatedSchema),
// structuredContractV4.ts and structuredFormats.py of Little-Star888/zx-bench at
// a5f6a19fb2159e703d4ea6659c2ce90280d5e52d, a fork of suncityldp/zx-bench: the store holds these
// files from that fork only. suncityldp's contract registry (packages/core/src/contracts/
// registry.ts) names the same versions and requirement fields. zx-bench validates with
// ajv 8.20.0 and ajv-formats 3.0.1 (strict mode), which this file follows.
//
// Score, 0-100: 100 when every criterion passes, otherwise 0 (zx-bench's `complete`):
//   raw format   the whole response parses as requirements.format, with no extraction or repair:
//                JSON as JSON.parse reads it; CSV as Python's csv.reader(strict=True) reads it,
//                then one object per row keyed by the header; XML as ElementTree reads it, then
//                the <records><record><field>... profile (<field null="true"/> is null). From v2
//                on, a response longer than 131072 UTF-16 code units fails here.
//   schema       the value validates against requirements.schema (the dialect's AJV);
//   content      the value validates against requirements.contentSchema, when present;
//   assertions   one criterion each: the value at the JSON Pointer exists and is deep-strictly
//                equal (Node's util.isDeepStrictEqual) to `expected`.
// YAML and TOML answers are read as zx-bench reads them, by Python (PyYAML under its
// JSON-compatible profile, tomllib) in the sandbox, then take the JSON path.
// Graded as skipped: SVG (rendered in
// Chromium), generatedSchema (the model writes a schema that zx-bench compiles and runs), v4 (a
// private oracle file outside the entry), and $dynamicRef/$dynamicAnchor under v1 (v2 refuses
// $dynamicRef itself).
//
// Known approximations (docs/zx-bench.md lists them): inside an `if` subschema AJV stops at the
// first failing keyword while the validator evaluates all of them (only what counts as "evaluated"
// for unevaluated* can differ); $ref resolves within the document, requirements.references and
// absolute $id values only; XML names use XML 1.0 fifth-edition character classes.
//
// The units it reads with: graders/zxbench/js_json.h (JSON as JSON.parse reads it),
// csv_reader.h and xml_reader.h (structuredFormats.py), and the framework's AJV-compatible
// validator, graders/framework/json_schema_validator.h, under its AjvStrict profile.
//
// Pure and thread-safe; Run never throws. Work is bounded: JSON nesting deeper than 512 levels is
// refused while reading (nothing deeper is built), schema validation stops after 20 million
// steps or 1,000 nested schema applications, regular expressions run under
// graders/framework/regex.h's limits, and CSV and XML are only parsed within v2's 131072-unit
// limit.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/js_value.h"
#include "graders/framework/answer.h"
#include "graders/framework/grader.h"
#include "graders/framework/json_schema_validator.h"
#include "graders/zxbench/common.h"
#include "graders/zxbench/csv_reader.h"
#include "graders/zxbench/factories.h"
#include "graders/zxbench/js_json.h"
#include "graders/zxbench/xml_reader.h"
#include "plugins/sandbox.h"

namespace evalrun {
namespace {

using nlohmann::json;
using js::JsTrim;
using js::ToWellFormedUtf8;
using zx::DeepStrictEqual;
using zx::Member;
using zx::ParseCsv;
using zx::ParseXml;
using zx::Truthy;
using zx::Utf16Length;
using Dialect = JsonSchemaDialect;

constexpr std::string_view kName = "zxbench:structured_contract";
// 2: the shared validator reports additionalProperties: false at the object, as AJV does
// ("must NOT have additional properties ('x')"; version 1 said "/x: the false schema"), and
// refuses an empty enum; evidence of version 1 is not rechecked by verify.
constexpr std::string_view kVersion = "3";

constexpr int kMaxSchemaDepth = 128;          // nesting of a frozen schema
constexpr size_t kMaxResponseUnits = 131072;  // v2+: "published 128 KiB character limit"

constexpr std::string_view kDraft07Uri = "http://json-schema.org/draft-07/schema#";
constexpr std::string_view k2020Uri = "https://json-schema.org/draft/2020-12/schema";

// A contract zx-bench itself cannot compile (it reports the entry as unavailable, never scored).
class ContractError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

std::string Shown(std::string_view text) {
  return EvidenceText(text, 120);
}

// ---- The contract -------------------------------------------------------------------------------

struct Assertion {
  std::string pointer;
  const json* expected = nullptr;
};

// requirements of one entry, checked as zx-bench's prepareStructuredContract and
// prepareExtendedContract check them. Points into the entry, which outlives it.
struct Contract {
  int version = 1;  // structured_contract_vN
  std::string format;
  Dialect dialect = Dialect::kDraft07;
  bool format_assertions = true;
  const json* schema = nullptr;
  const json* content_schema = nullptr;
  const json* references = nullptr;  // object: URI -> schema, or nullptr
  std::vector<Assertion> assertions;
  std::string skip;  // why evalrun cannot grade this entry as zx-bench does; "" when it can

  // The validator's profile (AJV's strict mode, ajv-formats when formatAssertions) and the
  // documents a $ref may reach (requirements.schema's $id values, requirements.references).
  JsonSchemaProfile Profile() const {
    return JsonSchemaProfile::AjvStrict(dialect, format_assertions);
  }
  JsonSchemaDocuments Documents() const { return {schema, references}; }
};

// structuredContractV2.ts prepareExtendedContract: schemas with $dynamicRef, or "if" and "else"
// without "then", are refused (its walk, not AJV's: map values and the listed applicators).
bool V2ProfileRefuses(const json& x, int depth) {
  if (!x.is_object() || depth > kMaxSchemaDepth) return false;
  if (x.contains("$dynamicRef") ||
      (x.contains("if") && x.contains("else") && !x.contains("then"))) {
    return true;
  }
  for (const char* key : {"properties", "patternProperties", "$defs", "definitions",
                          "dependentSchemas", "dependencies"}) {
    const json& map = Member(x, key);
    if (map.is_object()) {
      for (const auto& [name, value] : map.items()) {
        if (!value.is_array() && V2ProfileRefuses(value, depth + 1)) return true;
      }
    }
  }
  for (const char* key :
       {"allOf", "anyOf", "oneOf", "items", "prefixItems", "additionalItems",
        "additionalProperties", "unevaluatedProperties", "unevaluatedItems", "not", "if", "then",
        "else", "contains", "propertyNames", "contentSchema"}) {
    const json& value = Member(x, key);
    if (value.is_array()) {
      for (const auto& item : value) {
        if (V2ProfileRefuses(item, depth + 1)) return true;
      }
    } else if (V2ProfileRefuses(value, depth + 1)) {
      return true;
    }
  }
  return false;
}

bool UsesDynamicRef(const json& x, int depth) {
  if (depth > kMaxSchemaDepth) return false;
  if (x.is_object()) {
    if (x.contains("$dynamicRef") || x.contains("$dynamicAnchor")) return true;
    for (const auto& [key, value] : x.items()) {
      if (key != "enum" && key != "const" && key != "default" && key != "examples" &&
          UsesDynamicRef(value, depth + 1)) {
        return true;
      }
    }
  } else if (x.is_array()) {
    for (const auto& value : x) {
      if (UsesDynamicRef(value, depth + 1)) return true;
    }
  }
  return false;
}

// Reads and checks the contract. Throws ContractError for what zx-bench reports as unavailable.
Contract ReadContract(const json& spec) {
  if (!spec.is_object()) throw ContractError("the spec must be the zx-bench entry (a JSON object)");
  Contract c;
  const json& version = Member(spec, "graderVersion");
  static const std::map<std::string, int, std::less<>> kVersions = {{"structured_contract_v1", 1},
                                                                    {"structured_contract_v2", 2},
                                                                    {"structured_contract_v3", 3},
                                                                    {"structured_contract_v4", 4}};
  if (!version.is_string() || kVersions.count(version.get<std::string>()) == 0) {
    throw ContractError(
        "graderVersion must be one of structured_contract_v1 to _v4, got " +
        (version.is_string() ? "'" + version.get<std::string>() + "'" : JsonTypeName(version)));
  }
  c.version = kVersions.find(version.get<std::string>())->second;
  const json& req = Member(spec, "requirements");
  if (!req.is_object()) throw ContractError("requirements must be an object");

  const json& format = Member(req, "format");
  c.format = format.is_string() ? format.get<std::string>() : std::string();
  static const std::set<std::string, std::less<>> kExtended = {"json", "csv",  "xml",
                                                               "toml", "yaml", "svg"};
  if (c.version == 1 && c.format != "json") {
    throw ContractError(
        "requirements.format: structured_contract_v1 grades only 'json' "
        "(zx-bench: Incomplete structured contract)");
  }
  if (kExtended.count(c.format) == 0) {
    throw ContractError(
        "requirements.format: expected json, csv, xml, toml, yaml or svg "
        "(zx-bench: Unsupported extended format)");
  }
  if (Member(req, "output_policy") != "raw_only") {
    throw ContractError(
        "requirements.output_policy must be 'raw_only' "
        "(zx-bench: Incomplete structured contract)");
  }
  const json& dialect = Member(req, "dialect");
  if (dialect == "draft-07") {
    c.dialect = Dialect::kDraft07;
  } else if (dialect == "2020-12") {
    c.dialect = Dialect::k2020;
  } else {
    throw ContractError(
        "requirements.dialect must be 'draft-07' or '2020-12' "
        "(zx-bench: Incomplete structured contract)");
  }
  const json& format_assertions = Member(req, "formatAssertions");
  if (!format_assertions.is_boolean()) {
    throw ContractError(
        "requirements.formatAssertions must be true or false "
        "(zx-bench: Incomplete structured contract)");
  }
  c.format_assertions = format_assertions.get<bool>();
  if (!Truthy(Member(req, "family"))) {
    throw ContractError(
        "requirements.family is missing "
        "(zx-bench: Incomplete structured contract)");
  }
  if (!req.contains("schema")) {
    throw ContractError(
        "requirements.schema is missing "
        "(zx-bench: Incomplete structured contract)");
  }
  c.schema = &req["schema"];
  if (req.contains("contentSchema")) c.content_schema = &req["contentSchema"];
  const json& references = Member(req, "references");
  if (!references.is_null() && !references.is_object()) {
    throw ContractError("requirements.references must be an object of URI -> schema");
  }
  if (references.is_object()) c.references = &references;

  // Every schema: an object or a boolean, of the declared dialect, compiling under strict AJV.
  const std::string_view dialect_uri = c.dialect == Dialect::kDraft07 ? kDraft07Uri : k2020Uri;
  std::vector<std::pair<std::string, const json*>> schemas = {{"requirements.schema", c.schema}};
  if (c.content_schema != nullptr) {
    schemas.emplace_back("requirements.contentSchema", c.content_schema);
  }
  if (c.references != nullptr) {
    for (const auto& [uri, schema] : c.references->items()) {
      schemas.emplace_back("requirements.references/" + JsonPointerToken(uri), &schema);
    }
  }
  for (const auto& [where, schema] : schemas) {
    if (!schema->is_boolean() && !schema->is_object()) {
      throw ContractError(where + ": Schema must be an object or boolean");
    }
    const json& declared = Member(*schema, "$schema");
    if (Truthy(declared) && declared != dialect_uri) {
      throw ContractError(where + ": Schema dialect disagrees with " + dialect.get<std::string>() +
                          " ($schema must be " + std::string(dialect_uri) + ")");
    }
  }
  try {
    for (auto it = schemas.rbegin(); it != schemas.rend(); ++it) {
      CheckJsonSchema(c.Profile(), c.Documents(), *it->second, it->first);
    }
  } catch (const JsonSchemaError& e) {
    throw ContractError(e.what());
  }

  const json& assertions = Member(req, "assertions");
  if (!assertions.is_null() && !assertions.is_array()) {
    throw ContractError("requirements.assertions must be an array");
  }
  if (assertions.is_array()) {
    for (size_t i = 0; i < assertions.size(); ++i) {
      const json& a = assertions[i];
      const json& pointer = Member(a, "pointer");
      const json& description = Member(a, "description");
      bool ok = a.is_object() && pointer.is_string() && description.is_string() &&
                !description.get_ref<const std::string&>().empty() && a.contains("expected");
      if (ok) {
        const auto& p = pointer.get_ref<const std::string&>();
        ok = p.empty() || p[0] == '/';
        for (size_t k = 0; ok && k < p.size(); ++k) {
          if (p[k] == '~' && (k + 1 == p.size() || (p[k + 1] != '0' && p[k + 1] != '1'))) {
            ok = false;
          }
        }
      }
      if (!ok) {
        throw ContractError("requirements.assertions/" + std::to_string(i) +
                            ": Invalid JSON Pointer assertion (needs a pointer \"\" or \"/...\" "
                            "with ~0/~1 escapes, `expected` and a non-empty description)");
      }
      c.assertions.push_back({pointer.get<std::string>(), &a["expected"]});
    }
  }

  if (c.version >= 2) {
    for (const auto& [where, schema] : schemas) {
      if (V2ProfileRefuses(*schema, 0)) {
        throw ContractError(where +
                            ": AJV profile does not admit dynamicRef or if/else without "
                            "then (zx-bench refuses such contracts from v2 on)");
      }
    }
    const json& generated = Member(req, "generatedSchema");
    if (Truthy(generated)) {
      const json& cases = Member(generated, "cases");
      bool ok = c.format == "json" && cases.is_array() && !cases.empty();
      for (size_t i = 0; ok && i < cases.size(); ++i) ok = Member(cases[i], "valid").is_boolean();
      if (!ok) throw ContractError("requirements.generatedSchema: Invalid generated-schema cases");
      c.skip =
          "the response is a JSON Schema that zx-bench compiles and runs on "
          "requirements.generatedSchema.cases (" +
          std::string(c.version == 3 ? "python-jsonschema 4.26.0" : "AJV 8.20.0") +
          "): evalrun does not run model-written schemas";
    }
    if (c.format == "svg") {
      if (!Truthy(Member(req, "svg"))) {
        throw ContractError("requirements.svg is missing (zx-bench: SVG contract unavailable)");
      }
      c.skip =
          "SVG responses are rasterised in Chromium and probed pixel by pixel; evalrun has "
          "no renderer";
    }
  }
  if (c.version == 4) {
    c.skip =
        "structured_contract_v4 compares with a private oracle file "
        "(data/pilots/structured-contract-*/oracle.private.json) that is not in the entry";
  }
  if (c.skip.empty() && c.version == 1) {
    for (const auto& [where, schema] : schemas) {
      if (UsesDynamicRef(*schema, 0)) {
        c.skip = where +
                 " uses $dynamicRef or $dynamicAnchor, which evalrun's schema validator "
                 "does not implement";
      }
    }
  }
  return c;
}

// ---- Grading -----------------------------------------------------------------------------------

// atPointer: own properties only; on arrays, canonical indices and "length".
std::optional<json> AtPointer(const json& data, const std::string& pointer) {
  if (pointer.empty()) return data;
  const json* value = &data;
  size_t start = 1;
  for (;;) {
    const size_t slash = pointer.find('/', start);
    const std::string encoded =
        pointer.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    std::string key;
    for (size_t i = 0; i < encoded.size(); ++i) {  // ~1 -> "/" first, then ~0 -> "~"
      if (encoded[i] == '~' && i + 1 < encoded.size() && encoded[i + 1] == '1') {
        key += '/';
        ++i;
      } else if (encoded[i] == '~' && i + 1 < encoded.size() && encoded[i + 1] == '0') {
        key += '~';
        ++i;
      } else {
        key += encoded[i];
      }
    }
    if (value->is_object()) {
      const auto it = value->find(key);
      if (it == value->end()) return std::nullopt;
      value = &*it;
    } else if (value->is_array()) {
      if (key == "length") {
        if (slash != std::string::npos) return std::nullopt;  // a number has no properties
        return json(value->size());
      }
      if (key.empty() || key.size() > 10 || !std::all_of(key.begin(), key.end(), IsDigit) ||
          (key.size() > 1 && key[0] == '0')) {
        return std::nullopt;
      }
      const size_t index = std::stoul(key);
      if (index >= value->size()) return std::nullopt;
      value = &(*value)[index];
    } else {
      return std::nullopt;
    }
    if (slash == std::string::npos) return *value;
    start = slash + 1;
  }
}

struct Criterion {
  std::string id;
  bool pass = false;
  std::string evidence;
};

std::string Evaluator(const Contract& c) {
  return "structured_contract_v" + std::to_string(c.version) + "@a5f6a19f";
}

Grade MakeGrade(int zx_score, json evidence, std::string reason, const std::string& evaluator) {
  return zx::ZxGrade(zx_score, std::move(evidence), std::move(reason), evaluator);
}

Grade Skipped(std::string reason, json evidence) {
  Grade grade;
  grade.status = GradeStatus::kSkipped;
  grade.reason = std::move(reason);
  grade.evidence = std::move(evidence);
  return grade;
}

// ---- YAML: PyYAML under zx-bench's JSON-compatible profile, in the sandbox ---------------------

// zx-bench parses YAML answers with Python (structuredFormats.py, PyYAML 6.0.3): SafeLoader with
// the implicit bool/int/float/timestamp resolvers replaced by JSON-like ones (true/false only;
// decimal, 0o and 0x integers; plain decimal floats; dates stay strings), mapping keys unique
// strings, no anchors, aliases or explicit tags, one document. This script, written for evalrun
// from that behaviour, answers {"ok": true, "value": ...} or {"ok": false, "error": ...}.
constexpr const char* kYamlDriver = R"PY(import json, re, sys
import yaml
with open('input.json', encoding='utf-8') as f:
    text = json.load(f)['text']
DROPPED = ('tag:yaml.org,2002:bool', 'tag:yaml.org,2002:int', 'tag:yaml.org,2002:float',
           'tag:yaml.org,2002:timestamp')
class Loader(yaml.SafeLoader):
    pass
Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in DROPPED]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
Loader.add_implicit_resolver('tag:yaml.org,2002:bool',
    re.compile(r'^(?:true|True|TRUE|false|False|FALSE)$'), list('tTfF'))
Loader.add_implicit_resolver('tag:yaml.org,2002:int',
    re.compile(r'^[-+]?(?:[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$'), list('-+0123456789'))
Loader.add_implicit_resolver('tag:yaml.org,2002:float',
    re.compile(r'^[-+]?(?:(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+)$'),
    list('-+0123456789.'))
def integer(loader, node):
    s = loader.construct_scalar(node)
    return int(s, 0) if re.match(r'^[-+]?0[ox]', s) else int(s, 10)
def mapping(loader, node):
    out = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str) or key in out:
            raise ValueError('YAML keys must be unique strings')
        out[key] = loader.construct_object(value_node, deep=True)
    return out
Loader.add_constructor('tag:yaml.org,2002:int', integer)
Loader.add_constructor('tag:yaml.org,2002:map', mapping)
try:
    for event in yaml.parse(text, Loader=Loader):
        if getattr(event, 'anchor', None) or getattr(event, 'tag', None):
            raise ValueError('Anchors and explicit tags are outside the JSON-compatible profile')
    value = yaml.load(text, Loader=Loader)
    answer = {'ok': True, 'value': value}
    sys.stdout.write(json.dumps(answer, ensure_ascii=True, allow_nan=False))
except Exception as e:
    sys.stdout.write(json.dumps({'ok': False, 'error': str(e)[:600]}, ensure_ascii=True))
)PY";

// ---- TOML: tomllib, in the sandbox -------------------------------------------------------------

// structuredFormats.py's TOML branch is tomllib.loads, then json.dumps(allow_nan=False): a date
// or time ("Object of type datetime is not JSON serializable"), nan or inf fail as syntax. This
// script answers as the YAML one does.
constexpr const char* kTomlDriver = R"PY(import json, sys, tomllib
with open('input.json', encoding='utf-8') as f:
    text = json.load(f)['text']
try:
    value = tomllib.loads(text)
    answer = {'ok': True, 'value': value}
    sys.stdout.write(json.dumps(answer, ensure_ascii=True, allow_nan=False))
except Exception as e:
    sys.stdout.write(json.dumps({'ok': False, 'error': str(e)[:600]}, ensure_ascii=True))
)PY";

// Whether the sandbox's python3 imports `module` (asked once per process and module).
bool PythonImports(const char* module) {
  static std::mutex mutex;
  static std::map<std::string, bool> known;
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = known.find(module); it != known.end()) return it->second;
  bool installed = false;
  if (!FindSandboxProgram("python3").empty()) {
    const auto sandbox = MakeUnsafeSandbox();  // only the import runs; no answer is involved
    SandboxRun run;
    run.argv = {"python3", "-c", std::string("import ") + module};
    run.limits.wall_seconds = 10;
    installed = sandbox->Run(run).exit_code == 0;
  }
  known.emplace(module, installed);
  return installed;
}

struct PythonParse {
  std::optional<json> value;
  std::string error;            // why the text is not YAML of the profile, or not TOML
  std::string infrastructure;   // the sandbox or python failed: no verdict
};

// The answer read by structuredFormats.py's branch for `format` ("yaml" or "toml").
PythonParse ParseWithPython(const std::string& format, const std::string& text,
                            const GradeContext& context) {
  PythonParse out;
  const std::string name = format == "toml" ? "TOML" : "YAML";
  const Sandbox* sandbox = context.sandbox;
  std::unique_ptr<Sandbox> unsafe;
  if (sandbox == nullptr && context.unsafe_no_sandbox) {
    unsafe = MakeUnsafeSandbox();
    sandbox = unsafe.get();
  }
  if (sandbox == nullptr) {
    out.infrastructure = "no sandbox to run python3 in (install bubblewrap)";
    return out;
  }
  SandboxRun run;
  run.argv = {"python3", "-B", "parse.py"};
  run.files["parse.py"] = format == "toml" ? kTomlDriver : kYamlDriver;
  run.files["input.json"] = json({{"text", text}}).dump(-1, ' ', false,
                                                       json::error_handler_t::replace);
  run.limits.wall_seconds = 3;  // spawnSync's timeout: 3000 ms
  run.limits.cpu_seconds = 3;
  run.limits.memory_bytes = 512L << 20;
  run.limits.max_processes = 16;
  run.limits.max_output_bytes = 1 << 20;  // maxBuffer: 1 MiB
  const SandboxResult r = sandbox->Run(run);
  if (r.exit_code != 0 || r.timed_out) {
    out.infrastructure = "python3 could not parse the " + name + " (exit " +
                         std::to_string(r.exit_code) +
                         (r.timed_out ? ", timed out" : "") + "): " +
                         OutputTail(r.stderr_text, 300);
    return out;
  }
  std::string json_error;
  const auto answer = zx::ParseJsJson(r.stdout_text, &json_error);  // as JSON.parse reads it
  if (!answer || !answer->is_object() || !(*answer)["ok"].is_boolean()) {
    out.infrastructure = "the " + name + " parser's answer is not JSON: " + json_error;
    return out;
  }
  if ((*answer)["ok"].get<bool>()) {
    out.value = (*answer)["value"];
  } else {
    out.error = "Invalid raw " + name + ": " + (*answer).value("error", std::string());
  }
  return out;
}

Grade GradeContract(const Contract& c, const std::string& output, const GradeContext& context) {
  std::vector<Criterion> criteria;
  std::optional<json> data;
  std::string syntax_error;
  if (c.version >= 2 && Utf16Length(output) > kMaxResponseUnits) {
    syntax_error = "Response exceeds published 128 KiB character limit (" +
                   std::to_string(Utf16Length(output)) + " UTF-16 code units)";
  } else if (c.format == "csv") {
    data = ParseCsv(output, &syntax_error);
  } else if (c.format == "xml") {
    data = ParseXml(output, &syntax_error);
  } else if (c.format == "yaml" || c.format == "toml") {
    PythonParse parsed = ParseWithPython(c.format, output, context);
    if (!parsed.infrastructure.empty()) {
      Grade grade;
      grade.status = GradeStatus::kEnvError;
      grade.reason = parsed.infrastructure;
      grade.evidence = {{"format", c.format}};
      return grade;
    }
    data = std::move(parsed.value);
    syntax_error = std::move(parsed.error);
  } else {
    std::string json_error;
    data = zx::ParseJsJson(output, &json_error);
    if (!data) syntax_error = "Invalid raw JSON: " + json_error;
  }
  criteria.push_back({c.version == 1 ? "raw_json" : "raw_format", data.has_value(),
                      data ? "parsed the whole response as " + c.format : syntax_error});

  bool gave_up = false, ajv_throws = false;
  const auto validate = [&](const json& schema, const char* id) {
    if (!data) {
      criteria.push_back({id, false, "blocked by the invalid response"});
      return;
    }
    JsonSchemaValidator validator(c.Profile(), c.Documents(), schema);
    const bool ok = validator.Validate(*data);
    gave_up = gave_up || validator.gave_up();
    ajv_throws = ajv_throws || validator.ajv_throws();
    criteria.push_back({id, ok,
                        ok                    ? "accepted"
                        : validator.gave_up() ? "validation stopped at evalrun's work limit"
                                              : validator.error()});
  };
  validate(*c.schema, "standard_schema");
  if (c.content_schema != nullptr) validate(*c.content_schema, "content_schema");
  for (size_t i = 0; i < c.assertions.size(); ++i) {
    const Assertion& a = c.assertions[i];
    const std::string where = a.pointer.empty() ? "/" : a.pointer;
    const auto actual = data ? AtPointer(*data, a.pointer) : std::nullopt;
    const bool ok = actual && DeepStrictEqual(*actual, *a.expected);
    criteria.push_back(
        {"content_" + std::to_string(i), ok,
         ok ? "matched " + where : (actual ? "value differs at " : "missing at ") + where});
  }

  if (ajv_throws) {
    return Skipped(
        "zx-bench's AJV throws a TypeError validating this response (an unevaluated-"
        "properties variable left undefined by an untaken branch), so it records no "
        "score",
        {{"format", c.format}, {"zx_evaluator", Evaluator(c)}});
  }
  const bool complete =
      std::all_of(criteria.begin(), criteria.end(), [](const Criterion& k) { return k.pass; });
  json evidence = json::object();
  json listed = json::array();
  size_t passed = 0;
  for (const auto& k : criteria) {
    passed += k.pass;
    listed.push_back({{"id", k.id}, {"pass", k.pass}, {"evidence", Shown(k.evidence)}});
  }
  evidence["format"] = c.format;
  evidence["criteria"] = std::move(listed);
  evidence["criteria_passed"] = passed;
  if (gave_up) evidence["work_limit"] = true;
  std::string reason;
  if (complete) {
    reason = "all " + std::to_string(criteria.size()) + " criteria pass";
  } else {
    const auto first =
        std::find_if(criteria.begin(), criteria.end(), [](const Criterion& k) { return !k.pass; });
    reason = std::to_string(passed) + "/" + std::to_string(criteria.size()) +
             " criteria pass; first failure " + first->id + ": " + Shown(first->evidence);
  }
  return MakeGrade(complete ? 100 : 0, std::move(evidence), std::move(reason), Evaluator(c));
}

class ZxStructuredContractGrader final : public Grader {
 public:
  std::string_view name() const override { return kName; }
  std::string_view version() const override { return kVersion; }
  std::string_view description() const override {
    return "zx-bench structured_contract: the whole response parses as JSON/CSV/XML and meets "
           "the frozen JSON Schema and pointer assertions, scored 100 or 0 as zx-bench scores it";
  }

  void CheckSpec(const json& spec, const SourceLocation& where) const override {
    try {
      ReadContract(spec);
    } catch (const ContractError& e) {
      throw Error(where.ToString() + ": " + std::string(kName) + ": " + e.what());
    }
  }

  // The contract's own skip (a format or schema feature not reproduced) is known from the entry.
  std::string Unrunnable(const json& spec) const override {
    try {
      const Contract contract = ReadContract(spec);
      if (!contract.skip.empty()) return contract.skip;
      if (contract.format == "yaml" && !PythonImports("yaml")) {
        return "YAML responses are parsed with PyYAML, and python3 with yaml is not installed "
               "(install Debian's python3 and python3-yaml)";
      }
      if (contract.format == "toml" && !PythonImports("tomllib")) {
        return "TOML responses are parsed with Python's tomllib, and no python3 of 3.11 or later "
               "is installed (install Debian's python3)";
      }
      return {};
    } catch (const std::exception&) {
      return {};  // CheckSpec refused it already, or Run says why
    }
  }

  Grade Run(const json& spec, const Answer& answer, const GradeContext& context) const override {
    try {
      const std::string output = ToWellFormedUtf8(answer.text);
      if (JsTrim(output).empty()) {
        Grade grade = MakeGrade(0, json::object(), "empty output", "structured_contract");
        grade.status = GradeStatus::kNoAnswer;
        return grade;
      }
      Contract contract;
      try {
        contract = ReadContract(spec);
      } catch (const ContractError& e) {
        return Skipped(std::string("zx-bench cannot compile this contract: ") + e.what(),
                       json::object());
      }
      if (!contract.skip.empty()) {
        return Skipped(contract.skip,
                       {{"format", contract.format}, {"zx_evaluator", Evaluator(contract)}});
      }
      return GradeContract(contract, output, context);
    } catch (const std::exception& e) {  // out of memory and the like: never thrown to the runner
      return Skipped(std::string("internal error while grading: ") + e.what(), json::object());
    }
  }
};

}  // namespace

std::unique_ptr<Grader> MakeZxStructuredContractGrader() {
  return std::make_unique<ZxStructuredContractGrader>();
}

}  // namespace evalrun
