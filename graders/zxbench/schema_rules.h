#pragma once
// zx-bench's rule language for structured-output answers (structuredOutput.ts v6, a5f6a19f):
// getPath's paths (a||b alternatives, ** at any depth, [n] indices), the constraints
// ("matches:data.user.id:^...$", "csvAllCell:2:...": about sixty rules, each recognised by
// zx-bench's own pattern, in its order; one that no rule recognises fails, as there) and the
// cross-field rules (equal, different, nonempty, equals-sum). Values are JavaScript's
// (core/js_value.h); nullptr is undefined. Pure and thread-safe; bounded.
#include <string>
#include <string_view>
#include <vector>

#include "core/js_value.h"

namespace evalrun::zx {

// getPath(value, path): the value, or nullptr (undefined).
const js::ordered_json* SchemaPath(const js::ordered_json* value, std::string_view path);
// field.split('||'), trimmed, without empty alternatives.
std::vector<std::string> PathAlternatives(std::string_view field);
// evaluateConstraint: `data` is the parsed answer, `corpus` its payload text.
bool EvaluateConstraint(const std::string& constraint, const js::ordered_json* data,
                        std::string_view corpus);
// evaluateCrossFieldRule.
bool EvaluateCrossFieldRule(const std::string& rule, const js::ordered_json* data);

}  // namespace evalrun::zx
