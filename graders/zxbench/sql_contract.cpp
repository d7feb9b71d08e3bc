// zx-bench's isolatedSqlJson contract (sql_contract.h).
//
// zx-bench's driver, in node:22-alpine: `new DatabaseSync(':memory:')` (Node's defaults: foreign
// keys on, double-quoted string literals off, no extensions), `exec(schema + '\n' + seed)`, then
// `prepare(query).all()` (sqlite3_prepare_v2: the first statement only, the rest ignored; an
// integer beyond 2^53 - 1 throws) and `prepare('EXPLAIN QUERY PLAN ' + query).all()`'s `detail`
// column joined with '\n', written as JSON.stringify({rows, plan}). evalrun's driver makes those
// calls on the host's libsqlite3 through python3's ctypes (Python's own sqlite3 module cannot
// turn double-quoted strings off before 3.12 and refuses a second statement instead of ignoring
// it), and writes numbers as JSON.stringify would (-0 as 0, infinities as null). Any SQLite
// error ends the run with exit 1, as the uncaught exception ends zx-bench's. The host's SQLite
// (3.40 on Debian 12) is older than Node 22's (3.47 or later): a function added since (unhex,
// concat, string_agg ...) is an error here.
#include "graders/zxbench/sql_contract.h"

#include <algorithm>
#include <set>

#include "core/canonical_json.h"
#include "core/js_value.h"
#include "graders/zxbench/common.h"
#include "graders/zxbench/js_json.h"
#include "graders/zxbench/node_contracts.h"

namespace evalrun::zx {

using nlohmann::json;

namespace {

constexpr size_t kMaxSchemaBytes = 131072;
constexpr size_t kMaxPlanText = 200;  // UTF-16 units

// !x || (Array.isArray(x) && x.every(s => typeof s === 'string' && s.length < 200)).
bool ValidPlanTexts(const json& x) {
  const bool falsy = x.is_null() || x == false ||
                     (x.is_string() && x.get_ref<const std::string&>().empty()) ||
                     (x.is_number() && x.get<double>() == 0);
  if (falsy) return true;
  if (!x.is_array()) return false;
  return std::all_of(x.begin(), x.end(), [](const json& s) {
    return s.is_string() && Utf16Length(s.get_ref<const std::string&>()) < kMaxPlanText;
  });
}

std::string AsciiLower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

}  // namespace

bool ValidSqlJsonContract(const json& c) {
  if (!c.is_object() || Member(c, "protocol") != "isolated-sql-json-v1" ||
      Member(c, "entrypoint") != "query") {
    return false;
  }
  const json& cases = Member(c, "cases");
  if (!cases.is_array() || cases.empty() || cases.size() > 20) return false;
  std::set<std::string> ids;
  for (const json& t : cases) {
    if (!t.is_object()) return false;
    const json& id = Member(t, "id");
    if (!id.is_string() || !ids.insert(id.get<std::string>()).second) return false;
    const json& schema = Member(t, "schema");
    const json& seed = Member(t, "seed");
    if (!schema.is_string() || !seed.is_string() ||
        schema.get_ref<const std::string&>().size() + seed.get_ref<const std::string&>().size() >=
            kMaxSchemaBytes) {
      return false;
    }
    const json& expected = Member(t, "expected");
    if (!IsObservationJson(expected) || !ValidPredicate(expected)) return false;
    if (!ValidPlanTexts(Member(t, "forbidPlan")) || !ValidPlanTexts(Member(t, "requirePlan"))) {
      return false;
    }
  }
  return true;
}

std::string SqlCaseInput(const json& c) {
  return CanonicalJson({{"schema", c["schema"]}, {"seed", c["seed"]}}, KeyOrder::kJavaScript);
}

bool SqlCasePassed(const std::string& stdout_text, const json& c) {
  const std::string decoded = js::ToWellFormedUtf8(stdout_text);
  const std::string_view text = js::JsTrim(decoded);
  const json v = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (v.is_discarded() || !v.is_object()) return false;
  const json& rows = Member(v, "rows");
  if (!v.contains("rows") || !IsObservationJson(rows) || !PredicateHolds(c["expected"], rows)) {
    return false;
  }
  const json& plan_value = Member(v, "plan");
  const std::string plan = AsciiLower(plan_value.is_string() ? plan_value.get<std::string>() : "");
  const auto texts = [&](const char* key) {
    const json& x = Member(c, key);
    return x.is_array() ? x : json::array();
  };
  for (const json& forbidden : texts("forbidPlan")) {
    if (plan.find(AsciiLower(forbidden.get<std::string>())) != std::string::npos) return false;
  }
  for (const json& required : texts("requirePlan")) {
    if (plan.find(AsciiLower(required.get<std::string>())) == std::string::npos) return false;
  }
  return true;
}

// Written for evalrun from node:sqlite's behaviour (see the top of this file).
const std::string_view kSqlDriver = R"PY(import ctypes, json, math, sys
lib = ctypes.CDLL('libsqlite3.so.0')
vp, cp, ci = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
lib.sqlite3_open_v2.argtypes = [cp, ctypes.POINTER(vp), ci, cp]
lib.sqlite3_errmsg.argtypes = [vp]
lib.sqlite3_errmsg.restype = cp
lib.sqlite3_exec.argtypes = [vp, cp, vp, vp, ctypes.POINTER(cp)]
lib.sqlite3_prepare_v2.argtypes = [vp, cp, ci, ctypes.POINTER(vp), ctypes.POINTER(cp)]
lib.sqlite3_step.argtypes = [vp]
lib.sqlite3_finalize.argtypes = [vp]
lib.sqlite3_column_count.argtypes = [vp]
lib.sqlite3_column_name.argtypes = [vp, ci]
lib.sqlite3_column_name.restype = cp
lib.sqlite3_column_type.argtypes = [vp, ci]
lib.sqlite3_column_int64.argtypes = [vp, ci]
lib.sqlite3_column_int64.restype = ctypes.c_int64
lib.sqlite3_column_double.argtypes = [vp, ci]
lib.sqlite3_column_double.restype = ctypes.c_double
lib.sqlite3_column_blob.argtypes = [vp, ci]
lib.sqlite3_column_blob.restype = vp
lib.sqlite3_column_bytes.argtypes = [vp, ci]

def fail(message):
    sys.stderr.write('Error: ' + message + '\n')
    sys.exit(1)

db = vp()
if lib.sqlite3_open_v2(b':memory:', ctypes.byref(db), 0x2 | 0x4, None) != 0:
    fail('cannot open an in-memory database')
# DatabaseSync's defaults: double-quoted string literals off (DQS_DML 1013, DQS_DDL 1014),
# foreign keys on (ENABLE_FKEY 1002).
for op, value in ((1013, 0), (1014, 0), (1002, 1)):
    lib.sqlite3_db_config(db, ci(op), ci(value), vp())

def error():
    return lib.sqlite3_errmsg(db).decode('utf-8', 'replace')

with open('input.json', encoding='utf-8') as f:
    case = json.load(f)
with open('query.sql', encoding='utf-8', errors='replace') as f:
    query = f.read()
if lib.sqlite3_exec(db, (case['schema'] + '\n' + case['seed']).encode(), None, None, None) != 0:
    fail(error())

SAFE = 2 ** 53 - 1

def value(stmt, i):
    kind = lib.sqlite3_column_type(stmt, i)
    if kind == 1:
        v = lib.sqlite3_column_int64(stmt, i)
        if v > SAFE or v < -SAFE:
            fail('Value is too large to be represented as a JavaScript number: ' + str(v))
        return v
    if kind == 2:
        v = lib.sqlite3_column_double(stmt, i)
        if math.isnan(v) or math.isinf(v):
            return None
        return 0 if v == 0 else v
    if kind == 5:
        return None
    p = lib.sqlite3_column_blob(stmt, i)
    n = lib.sqlite3_column_bytes(stmt, i)
    data = ctypes.string_at(p, n) if n > 0 else b''
    if kind == 3:
        return data.decode('utf-8', 'replace')
    return {str(k): b for k, b in enumerate(data)}  # a Uint8Array as JSON.stringify writes it

def all_rows(sql):
    stmt = vp()
    if lib.sqlite3_prepare_v2(db, sql.encode(), -1, ctypes.byref(stmt), None) != 0:
        fail(error())
    if not stmt.value:
        fail('the query is empty')
    rows = []
    while True:
        rc = lib.sqlite3_step(stmt)
        if rc == 101:
            break
        if rc != 100:
            message = error()
            lib.sqlite3_finalize(stmt)
            fail(message)
        row = {}
        for i in range(lib.sqlite3_column_count(stmt)):
            row[lib.sqlite3_column_name(stmt, i).decode('utf-8', 'replace')] = value(stmt, i)
        rows.append(row)
    lib.sqlite3_finalize(stmt)
    return rows

rows = all_rows(query)
details = [r.get('detail') for r in all_rows('EXPLAIN QUERY PLAN ' + query)]
plan = '\n'.join('' if d is None else str(d) for d in details)
sys.stdout.write(json.dumps({'rows': rows, 'plan': plan}, ensure_ascii=False, allow_nan=False,
                            separators=(',', ':')))
)PY";

}  // namespace evalrun::zx
