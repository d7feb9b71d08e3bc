// zx-bench's isolatedJavascriptJson and isolatedTypescriptJson contracts (node_contracts.h).
// The drivers below were written for evalrun from what zx-bench's own drivers do for each
// adapter (isolatedJavascriptJson.ts and isolatedTypescriptJson.ts at 22bb91d1); they keep its
// observable behaviour: which functions are called with what, what is awaited and what is not,
// and that results go through a plain JSON.stringify (undefined and NaN become null or vanish,
// a Promise becomes {}, a BigInt ends the run).
#include "graders/zxbench/node_contracts.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>

#include "core/canonical_json.h"
#include "graders/zxbench/common.h"

namespace evalrun::zx {

using nlohmann::json;

namespace {

constexpr size_t kMaxObservationNodes = 10000;
constexpr size_t kMaxObservationBytes = 262144;
constexpr size_t kMaxCallBytes = 65536;  // the JavaScript contract's bound on one call's JSON

constexpr std::string_view kJavascriptAdapters[] = {
    "counters", "retry", "bus",  "debounce",     "lru",         "promise-limit", "fib",
    "agent-run", "call-budget", "set-deep", "bank", "query-string", "fetch-retry"};
constexpr std::string_view kTypescriptAdapters[] = {"area", "page-items", "api-result"};

size_t CountValues(const json& v) {
  size_t n = 1;
  if (v.is_array() || v.is_object()) {
    for (const auto& item : v) n += CountValues(item);
  }
  return n;
}

bool IsSafeIndex(const json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0) ||
         (v.is_number_float() && v.get<double>() >= 0 && v.get<double>() <= 9007199254740991.0 &&
          std::floor(v.get<double>()) == v.get<double>());
}

// Both contracts share one shape; they differ in protocol, adapters and the JavaScript one's
// bound on each call's JSON.
template <size_t N>
bool ValidNodeContract(const json& c, std::string_view protocol,
                       const std::string_view (&adapters)[N], bool bound_calls) {
  if (!c.is_object() || Member(c, "protocol") != protocol) return false;
  const json& adapter = Member(c, "adapter");
  if (!adapter.is_string() ||
      std::find(std::begin(adapters), std::end(adapters), adapter.get<std::string>()) ==
          std::end(adapters)) {
    return false;
  }
  if (!IsIdentifier(Member(c, "entrypoint"))) return false;
  return ValidAdapterCases(Member(c, "cases"), 20, false, [&](const json& args) {
    return !bound_calls || CanonicalJson(args, KeyOrder::kJavaScript).size() < kMaxCallBytes;
  });
}

// Object.hasOwn navigation: an object by key (a number is its decimal key), an array by index (a
// string that is a canonical index counts) or "length". Copies the value reached into `out`.
bool Navigate(const json& value, const json& path, json& out) {
  const json* at = &value;
  for (size_t k = 0; k < path.size(); ++k) {
    const json& key = path[k];
    if (at->is_object()) {
      const std::string name =
          key.is_string() ? key.get<std::string>() : std::to_string(key.get<uint64_t>());
      const auto it = at->find(name);
      if (it == at->end()) return false;
      at = &*it;
    } else if (at->is_array()) {
      uint64_t index = 0;
      if (key.is_string()) {
        const std::string& s = key.get_ref<const std::string&>();
        if (s == "length") {
          if (k + 1 != path.size()) return false;  // a number has no own properties
          out = at->size();
          return true;
        }
        if (s.empty() || s.size() > 15 || (s.size() > 1 && s[0] == '0') ||
            !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
          return false;
        }
        index = std::stoull(s);
      } else {
        index = static_cast<uint64_t>(key.get<double>());
      }
      if (index >= at->size()) return false;
      at = &(*at)[index];
    } else {
      return false;
    }
  }
  out = *at;
  return true;
}

}  // namespace

bool IsIdentifier(const json& v, bool dots) {
  if (!v.is_string()) return false;
  const auto& s = v.get_ref<const std::string&>();
  const auto ok = [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || (dots && c == '.');
  };
  return !s.empty() && !(s[0] >= '0' && s[0] <= '9') && s[0] != '.' &&
         std::all_of(s.begin(), s.end(), ok);
}

bool ValidAdapterCases(const json& cases, size_t max, bool ids_required,
                       const std::function<bool(const json&)>& valid_call) {
  if (!cases.is_array() || cases.empty() || cases.size() > max) return false;
  std::set<std::string> ids;
  for (const json& t : cases) {
    if (!t.is_object()) return false;
    const json& id = Member(t, "id");
    if (!id.is_string() || (ids_required && id.get_ref<const std::string&>().empty()) ||
        !ids.insert(id.get<std::string>()).second) {
      return false;
    }
    const json& calls = Member(t, "calls");
    if (!calls.is_array() || calls.empty() || calls.size() > max) return false;
    for (const json& args : calls) {
      if (!args.is_array() || !IsObservationJson(args) || !valid_call(args)) return false;
    }
    const json& expected = Member(t, "expected");
    if (!expected.is_array() || expected.size() != calls.size() || !IsObservationJson(expected) ||
        !std::all_of(expected.begin(), expected.end(), ValidPredicate)) {
      return false;
    }
  }
  return true;
}

bool IsJsonValue(const json& v, int depth) {
  if (depth > 32) return false;
  switch (v.type()) {
    case json::value_t::null:
    case json::value_t::string:
    case json::value_t::boolean:
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return true;
    case json::value_t::number_float: {
      const double d = v.get<double>();
      return std::isfinite(d) && !(d == 0 && std::signbit(d));
    }
    case json::value_t::array:
    case json::value_t::object:
      for (const auto& item : v) {
        if (!IsJsonValue(item, depth + 1)) return false;
      }
      return true;
    default:
      return false;
  }
}

bool IsObservationJson(const json& v) {
  return IsJsonValue(v) && CountValues(v) <= kMaxObservationNodes &&
         CanonicalJson(v, KeyOrder::kJavaScript).size() <= kMaxObservationBytes;
}

bool ValidPredicate(const json& p) {
  if (!p.is_object() || p.size() != 1) return false;
  if (p.contains("equals")) return IsJsonValue(p["equals"]);
  const json& all = Member(p, "all");
  if (!all.is_array() || all.empty() || all.size() > 100) return false;
  for (const json& check : all) {
    if (!check.is_object() || check.size() != 2) return false;
    const json& path = Member(check, "path");
    if (!path.is_array() || path.size() > 32) return false;
    for (const json& key : path) {
      if (!key.is_string() && !IsSafeIndex(key)) return false;
    }
    if (check.contains("equals")) {
      if (!IsJsonValue(check["equals"])) return false;
    } else {
      const json& approx = Member(check, "approx");
      if (!approx.is_object() || approx.size() != 3) return false;
      const json& value = Member(approx, "value");
      const json& tolerance = Member(approx, "absoluteTolerance");
      if (!value.is_number() || !std::isfinite(value.get<double>()) || !tolerance.is_number() ||
          !std::isfinite(tolerance.get<double>()) || !(tolerance.get<double>() > 0) ||
          !Member(approx, "inclusive").is_boolean()) {
        return false;
      }
    }
  }
  return true;
}

bool JsonDeepEqual(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!JsonDeepEqual(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (const auto& [key, value] : a.items()) {
      const auto it = b.find(key);
      if (it == b.end() || !JsonDeepEqual(value, *it)) return false;
    }
    return true;
  }
  return a == b;
}

bool PredicateHolds(const json& predicate, const json& value) {
  if (predicate.contains("equals")) return JsonDeepEqual(value, predicate["equals"]);
  for (const json& check : predicate["all"]) {
    json at;
    if (!Navigate(value, check["path"], at)) return false;
    if (check.contains("equals")) {
      if (!JsonDeepEqual(at, check["equals"])) return false;
      continue;
    }
    const json& approx = check["approx"];
    if (!at.is_number() || !std::isfinite(at.get<double>())) return false;
    const double gap = std::fabs(at.get<double>() - approx["value"].get<double>());
    const double tolerance = approx["absoluteTolerance"].get<double>();
    if (approx["inclusive"].get<bool>() ? !(gap <= tolerance) : !(gap < tolerance)) return false;
  }
  return true;
}

bool ValidJavascriptJsonContract(const json& c) {
  return ValidNodeContract(c, "isolated-javascript-json-v1", kJavascriptAdapters, true);
}

bool ValidTypescriptJsonContract(const json& c) {
  return ValidNodeContract(c, "isolated-typescript-json-v1", kTypescriptAdapters, false);
}

std::string JavascriptJsonCandidate(const std::string& patch, const json& contract) {
  if (contract["adapter"] == "query-string") {
    return patch + "\nexport { parseQueryString as zxEntry, buildQueryString as zxSecondary };\n";
  }
  return patch + "\nexport { " + contract["entrypoint"].get<std::string>() + " as zxEntry };\n";
}

std::string TypescriptJsonExports(const json& contract) {
  if (contract["adapter"] == "api-result") return "unwrap,assertNever,handleStatus";
  return contract["entrypoint"].get<std::string>();
}

// Each adapter receives one call `c` and pushes exactly what zx-bench's pushes: a value an
// adapter does not await (retry's, agent-run's) is stringified as it is, Promise and all.
const std::string_view kJavascriptJsonDriver = R"JS(import { readFileSync } from 'node:fs';
const write = process.stdout.write.bind(process.stdout);
const request = JSON.parse(readFileSync('input.json', 'utf8'));
console.log = console.info = console.warn = (...parts) => console.error(...parts);
const candidate = await import('./candidate.mjs');
const E = candidate.zxEntry;
const S = candidate.zxSecondary;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const out = [];
const threw = (run) => { try { run(); return false; } catch { return true; } };
const rejected = async (run) => { try { await run(); return false; } catch { return true; } };

const adapters = {
  counters(c) {
    const fns = E(c[0]);
    out.push(c[1] === 'all' ? fns.map((f) => f()) : c[2].map((i) => fns[i]()));
  },
  retry(c) {
    let n = 0;
    const fn = () => { n++; if (n < c[0]) throw Error('e' + n); return c[2]; };
    try {
      const value = E(fn, c[1]);
      out.push({ kind: 'return', value, calls: n });
    } catch (e) {
      out.push({ kind: 'throw', message: e?.message, calls: n });
    }
  },
  bus(c) {
    const bus = new E();
    if (c[0] === 'off') {
      let n = 0;
      const f = () => n++;
      bus.on('e', f); bus.emit('e'); bus.off('e', f); bus.emit('e');
      out.push(n);
    } else if (c[0] === 'selective') {
      let x = 0, y = 0;
      const f = () => x++, g = () => y++;
      bus.on('e', f); bus.on('e', g); bus.off('e', f); bus.emit('e');
      out.push([x, y]);
    } else {
      let x = 0, y = 0;
      const g = () => y++, f = () => { x++; bus.off('e', g); };
      bus.on('e', f); bus.on('e', g); bus.emit('e'); bus.emit('none');
      out.push([x, y]);
    }
  },
  async debounce(c) {
    if (c[0] === 'burst') {
      const calls = [];
      const d = E((x) => calls.push(x), 20);
      d(1); d(2); d(3);
      await sleep(45);
      out.push(calls);
    } else if (c[0] === 'early') {
      const calls = [];
      const d = E((x) => calls.push(x), 30);
      d('a');
      await sleep(10);
      const early = calls.length;
      await sleep(40);
      out.push([early, calls]);
    } else {
      const o = { sum: 0 };
      const d = E(function (x, y) { this.sum += x + y; }, 20);
      d.call(o, 1, 2); d.call(o, 3, 4);
      await sleep(45);
      out.push(o.sum);
    }
  },
  lru(c) {
    const cache = new E(2);
    if (c[0] === 'get') {
      cache.put(1, 1); cache.put(2, 2);
      out.push(cache.get(1));
    } else if (c[0] === 'evict') {
      cache.put(1, 1); cache.put(2, 2); cache.put(3, 3);
      out.push([cache.get(1), cache.get(3)]);
    } else {
      cache.put(1, 1); cache.put(2, 2); cache.get(1); cache.put(3, 3);
      out.push([cache.get(2), cache.get(1)]);
    }
  },
  async 'promise-limit'(c) {
    if (c[0] === 'values') {
      const tasks = c[1].map((v) => () => new Promise((r) => setTimeout(() => r(v * v), 5)));
      out.push(await E(tasks, c[2]));
    } else if (c[0] === 'concurrency') {
      let active = 0, max = 0, calls = 0;
      const tasks = Array.from({ length: c[1] }, (_, i) => () => new Promise((r) => {
        calls++; active++; max = Math.max(max, active);
        setTimeout(() => { active--; r(i); }, 10);
      }));
      out.push([await E(tasks, c[2]), calls, max]);
    } else {
      out.push([await E([], 2), await E([() => Promise.resolve('a'), () => Promise.resolve('b')], 1)]);
    }
  },
  'agent-run'(c) {
    const steps = [{ tool: 'a', args: 1 }, { tool: 'b', args: 2 }];
    if (c[0] === 'happy') out.push(E(steps, { a: (x) => x + 1, b: (x) => x * 2 }));
    else if (c[0] === 'error') out.push(E(steps, { a: (x) => x, b: () => { throw Error('boom'); } }));
    else out.push(E([], {}));
  },
  'call-budget'(c) {
    let n = 0;
    const fn = () => { n++; if (n < c[0]) throw Error(c[3]); return c[4]; };
    try {
      const value = E(fn, { maxRetries: c[1], maxCalls: c[2] });
      out.push({ kind: 'return', value, calls: n });
    } catch (e) {
      out.push({ kind: 'throw', message: e?.message, calls: n });
    }
  },
  'set-deep'(c) {
    if (c[0] === 'normal') {
      const o = { a: { keep: 1 } };
      E(o, 'a.b.c', 42);
      out.push(o);
    } else {
      const key = c[1];
      try { E({}, c[2], c[3]); } catch {}
      const clean = ({})[key] === undefined;
      delete Object.prototype[key];
      out.push(clean);
    }
  },
  bank(c) {
    const bank = new E();
    if (c[0] === 'missing') {
      bank.createAccount('a', 100);
      const failed = threw(() => bank.transfer('a', 'ghost', 30));
      out.push([failed, bank.getBalance('a')]);
    } else {
      bank.createAccount('a', 50); bank.createAccount('b', 0);
      const failed = threw(() => bank.transfer('a', 'b', 1000));
      bank.transfer('a', 'b', 20);
      out.push([failed, bank.getBalance('a'), bank.getBalance('b')]);
    }
  },
  'query-string'(c) {
    if (c[0] === 'parse') {
      const p1 = E('q=hello+world'), p2 = E('a=1&a=2'), p3 = E('flag'), p4 = E('k='), p5 = E('u=a=b');
      out.push([p1.q, p2.a, p3.flag, Object.prototype.hasOwnProperty.call(p4, 'k'), p4.k, p5.u]);
    } else {
      const p = E('n=%E5%BC%A0%E4%B8%89&x=%20');
      out.push([p.n, p.x, S({ q: 'a b&c', u: null, v: undefined })]);
    }
  },
  async 'fetch-retry'(c) {
    let n = 0;
    if (c[0] === 'client') {
      globalThis.fetch = async () => { n++; return { ok: false, status: 404 }; };
      const failed = await rejected(() => E('/x', { maxRetries: 3, baseDelay: 0 }));
      out.push([failed, n]);
    } else {
      globalThis.fetch = async () => {
        n++;
        return n < 3 ? { ok: false, status: 500 } : { ok: true, json: async () => ({ success: true }) };
      };
      const r = await E('/x', { maxRetries: 3, baseDelay: 0 });
      const successCalls = n;
      n = 0;
      globalThis.fetch = async () => { n++; return { ok: false, status: 503 }; };
      const failed = await rejected(() => E('/x', { maxRetries: 2, baseDelay: 0 }));
      out.push([r.success, successCalls, failed, n]);
    }
  },
  fib(c) {
    const start = performance.now();
    const values = c[0].map((n) => E(n));
    out.push([values, performance.now() - start < c[1]]);
  },
};

for (const c of request.calls) await adapters[request.adapter](c);
write(JSON.stringify(out));
)JS";

// zx-bench's TypeScript driver leaves the console alone: a candidate's console.log lands on
// stdout and spoils the observation there too.
const std::string_view kTypescriptJsonDriver = R"JS(import { readFileSync } from 'node:fs';
const request = JSON.parse(readFileSync('input.json', 'utf8'));
const m = await import('./candidate.mjs');
const out = [];
const collect = async (pages) => { const values = []; for await (const x of pages) values.push(x); return values; };

const pageItems = {
  async lazy() {
    let calls = 0;
    const pages = [{ items: [1, 2], cursor: 'c1' }, { items: [3], cursor: null }];
    const g = m.pageItems(async (x) => (calls++, x === null ? pages[0] : pages[1]));
    const first = await g.next();
    out.push([first.done, first.value, calls]);
  },
  async collect() {
    let calls = 0;
    const pages = [{ items: ['a', 'b'], cursor: 'c1' }, { items: ['c'], cursor: 'c2' },
                   { items: ['d', 'e'], cursor: null }];
    const values = await collect(m.pageItems(async (x) =>
      (calls++, x === null ? pages[0] : x === 'c1' ? pages[1] : pages[2])));
    out.push([values, calls]);
  },
  async 'empty-page'() {
    const pages = [{ items: [1], cursor: 'c1' }, { items: [], cursor: 'c2' }, { items: [2], cursor: null }];
    out.push(await collect(m.pageItems(async (x) =>
      x === null ? pages[0] : x === 'c1' ? pages[1] : pages[2])));
  },
  async error() {
    let calls = 0, kind = 'return', message = '';
    const g = m.pageItems(async (x) => {
      calls++;
      if (x === null) return { items: [1], cursor: 'c1' };
      throw Error('boom');
    });
    const first = await g.next();
    try { await g.next(); } catch (e) { kind = 'throw'; message = e?.message; }
    out.push([first.value, kind, message, calls]);
  },
};

for (const c of request.calls) {
  if (request.adapter === 'area') {
    out.push(m.area(c[0]));
  } else if (request.adapter === 'page-items') {
    await (Object.hasOwn(pageItems, c[0]) ? pageItems[c[0]] : pageItems.error)();
  } else {
    let failure = 'return';
    try { m.unwrap({ ok: false, error: 'boom' }); } catch (e) { failure = e?.message; }
    let never = 'return';
    try { m.assertNever('x'); } catch (e) { never = e?.message; }
    out.push([failure, [200, 404, 500].map(m.handleStatus), never]);
  }
}
process.stdout.write(JSON.stringify(out));
)JS";

const std::string_view kTypescriptModule = "/usr/share/nodejs/typescript";

const std::string_view kTypescriptTranspiler = R"JS('use strict';
const fs = require('node:fs');
const ts = require(process.argv[2]);
const names = fs.readFileSync('exports.txt', 'utf8');
const source = fs.readFileSync('candidate.ts', 'utf8')
  .replace(/\bexport\s+(?=(?:async\s+)?function|class|type|interface)/g, '') +
  '\nexport {' + names + '};\n';
const file = ts.createSourceFile('candidate.ts', source, ts.ScriptTarget.ESNext, true,
                                 ts.ScriptKind.TS);
const fail = (message, node) => {
  const at = file.getLineAndCharacterOfPosition(node ? node.getStart(file) : 0);
  process.stderr.write(`candidate.ts:${at.line + 1}:${at.character + 1}: ${message}\n`);
  process.exit(1);
};
const modifiers = (node) => (ts.canHaveModifiers && !ts.canHaveModifiers(node) ? [] :
                             (ts.getModifiers ? ts.getModifiers(node) : node.modifiers) || []);
const has = (node, kinds) => modifiers(node).some((m) => kinds.includes(m.kind));
const K = ts.SyntaxKind;
const erasable = (statement) =>
  ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement) ||
  has(statement, [K.DeclareKeyword]) ||
  (ts.isModuleDeclaration(statement) && !instantiated(statement));
const instantiated = (ns) => {
  const body = ns.body;
  if (!body) return false;
  if (ts.isModuleDeclaration(body)) return instantiated(body);
  return body.statements.some((s) => !erasable(s));
};
// What Node 22's strip-only mode refuses to load (ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX and
// ERR_INVALID_TYPESCRIPT_SYNTAX), with its messages; a decorator is a syntax error to V8.
const visit = (node) => {
  if (ts.isEnumDeclaration(node) && !has(node, [K.DeclareKeyword])) {
    fail('TypeScript enum is not supported in strip-only mode', node);
  }
  if (ts.isModuleDeclaration(node) && !has(node, [K.DeclareKeyword]) &&
      ts.isIdentifier(node.name) && !(node.flags & ts.NodeFlags.Namespace) &&
      !(node.flags & ts.NodeFlags.GlobalAugmentation)) {
    fail('`module` keyword is not supported. Use `namespace` instead.', node);
  }
  if (ts.isModuleDeclaration(node) && !has(node, [K.DeclareKeyword]) && instantiated(node)) {
    fail('TypeScript namespace declaration is not supported in strip-only mode', node);
  }
  if (ts.isTypeAssertionExpression && ts.isTypeAssertionExpression(node)) {
    fail('The angle-bracket syntax for type assertions, `<T>expr`, is not supported in type ' +
         "strip mode. Instead, use the 'as' syntax: `expr as T`.", node);
  }
  if (ts.isDecorator(node)) fail('SyntaxError: Invalid or unexpected token (a decorator)', node);
  if (ts.isClassElement(node) && has(node, [K.OverrideKeyword]) && ts.isClassLike(node.parent) &&
      !(node.parent.heritageClauses || []).some((h) => h.token === K.ExtendsKeyword)) {
    fail("This member cannot have an 'override' modifier because its containing class does " +
         'not extend another class.', node);
  }
  if (ts.isParameter(node) && ts.isConstructorDeclaration(node.parent) &&
      has(node, [K.PublicKeyword, K.PrivateKeyword, K.ProtectedKeyword, K.ReadonlyKeyword,
                 K.OverrideKeyword])) {
    fail('TypeScript parameter property is not supported in strip-only mode', node);
  }
  if (ts.isImportEqualsDeclaration(node) && !node.isTypeOnly) {
    fail('TypeScript import equals declaration is not supported in strip-only mode', node);
  }
  if (ts.isExportAssignment(node) && node.isExportEquals) {
    fail('TypeScript export assignment is not supported in strip-only mode', node);
  }
  ts.forEachChild(node, visit);
};
const options = { target: ts.ScriptTarget.ESNext, module: ts.ModuleKind.ESNext,
                  isolatedModules: true, useDefineForClassFields: true };
if (Number(ts.versionMajorMinor.split('.')[0]) >= 5) options.verbatimModuleSyntax = true;
else options.preserveValueImports = true;
const result = ts.transpileModule(source, { fileName: 'candidate.ts', reportDiagnostics: true,
                                            compilerOptions: options });
const syntax = (result.diagnostics || []).find((d) => d.category === ts.DiagnosticCategory.Error);
if (syntax) {
  const at = syntax.file && syntax.start !== undefined ? syntax.start : 0;
  const { line, character } = file.getLineAndCharacterOfPosition(at);
  process.stderr.write(`candidate.ts:${line + 1}:${character + 1}: SyntaxError: ` +
                       ts.flattenDiagnosticMessageText(syntax.messageText, '\n') + '\n');
  process.exit(1);
}
visit(file);
process.stdout.write(result.outputText);
)JS";

}  // namespace evalrun::zx
