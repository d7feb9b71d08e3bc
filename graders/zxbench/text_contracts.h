#pragma once
// zx-bench's structured text contracts (packages/core/src/evaluators/structuredTextContracts.ts
// at a5f6a19f): for an entry with requirements.text_contract, the checks its answer's structure
// must pass, read through graders/zxbench/text_structure.h. Each format adds its parse check;
// some entries (by id) add their own checks. Pure and thread-safe.
#include <string>
#include <string_view>
#include <vector>

namespace evalrun::zx {

struct TextCheck {
  std::string label;
  bool pass;
};

// evaluateStructuredTextContract(id, format, source, version), version "v1" or "v2".
std::vector<TextCheck> EvaluateTextContract(std::string_view id, std::string_view format,
                                            std::string_view source, std::string_view version);

}  // namespace evalrun::zx
