#pragma once
// String.prototype.normalize('NFKC') as far as zx-bench's graders need it (exact_answer_line's
// answer normalisation, hallucination_resistance's offline answers).
#include <string>
#include <string_view>

namespace evalrun::zx {

// NFKC restricted to the code points of the Basic Multilingual Plane whose NFKC form is plain
// ASCII (full-width ASCII, ideographic and other compatibility spaces, superscript and circled
// digits, ligatures, "…", unit squares such as ㎏), plus ￥ -> ¥, applied code point by code
// point; every other character is left as written (graders/zxbench/nfkc.cpp says more).
std::string NfkcSubset(std::string_view s);

}  // namespace evalrun::zx
