#pragma once
// zx-bench's SQL contract for code_repair, requirements.isolatedSqlJson (isolated-sql-json-v1):
// the model's query runs, per case, on a fresh in-memory SQLite database built from the case's
// schema and seed; the host checks the rows against the case's predicate and the query plan
// against its forbidPlan/requirePlan texts. zx-bench runs it with Node 22's node:sqlite
// (isolatedSqlJson.ts at 22bb91d1); evalrun's driver makes the same SQLite C API calls with the
// same settings from python3's ctypes, in the sandbox (sql_contract.cpp says how).
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace evalrun::zx {

// validIsolatedSqlJsonContract: entrypoint "query", 1-20 cases, each {id (unique, may be
// empty), schema, seed (together under 131,072 UTF-8 bytes), expected (one predicate on the
// rows), forbidPlan/requirePlan (absent or falsy, or lists of strings under 200 UTF-16 units)}.
bool ValidSqlJsonContract(const nlohmann::json& c);

// input.json of one case: {"schema", "seed"} (the expected rows never enter the sandbox).
std::string SqlCaseInput(const nlohmann::json& c);

// Whether a successful run's stdout ({"rows": [...], "plan": "..."}) passes case `c`: the rows
// are observation JSON and match c.expected; no forbidPlan text is in the plan and every
// requirePlan text is (case-insensitively).
bool SqlCasePassed(const std::string& stdout_text, const nlohmann::json& c);

// driver.py: reads query.sql and input.json, prints {"rows", "plan"} as JSON.stringify would.
extern const std::string_view kSqlDriver;

// zx-bench's output bound for SQL runs (stdout and stderr together).
constexpr size_t kSqlOutputBytes = 131072;

}  // namespace evalrun::zx
