// zx-bench's exact_answer_line grader, reproduced (docs/zx-bench.md, "Graders: where evalrun
// knowingly differs"). Reads the whole bank entry as its spec: requirements.answer (number or
// string), requirements.acceptedVariants, requirements.solutionVerifier, scoring.comparisonMode,
// scoring.answerUnit, answerFirst.
//
// Source read: packages/core/src/evaluators/exactAnswerLine.ts of suncityldp/zx-bench, evaluator
// version exact_answer_v6 at commit 098246a990ac7cf5b9f5f7f7c336f4f180b9fa28 (it declares itself
// compatible with the bank's exact_answer_v4); formatValidScore from responseState.ts. The score is
// zx-bench's 0-100 total: round(0.1 * format + 0.9 * accuracy), format 100, or 60 when the output
// was cut by max_tokens, or 0 in strict mode when the last non-empty line is not an answer line.
//
// Pure and thread-safe; Run never throws and does linear work in the output size.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/js_value.h"
#include "core/error.h"
#include "graders/zxbench/factories.h"
#include "graders/framework/grader.h"
#include "graders/zxbench/common.h"
#include "graders/zxbench/format_parsers.h"

namespace evalrun {
namespace {

using js::IsJsSpace;
using js::JsRound;
using js::JsTrim;
using zx::Member;
using zx::SplitLines;
using js::NextCodePoint;
using js::ToWellFormedUtf8;

constexpr std::string_view kName = "zxbench:exact_answer_line";
constexpr std::string_view kVersion = "1";
// What evalrun's version reproduces, recorded in every grade's evidence.
constexpr std::string_view kZxEvaluator = "exact_answer_v6@098246a9";

void ReplaceAll(std::string& s, std::string_view from, std::string_view to) {
  std::string out;
  size_t pos = 0;
  for (size_t hit; (hit = s.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(s, pos, hit - pos);
    out.append(to);
  }
  out.append(s, pos, std::string::npos);
  s = std::move(out);
}

// ---- NFKC (the subset that matters) -------------------------------------------------------------

// String.prototype.normalize('NFKC'), restricted to the code points of the Basic Multilingual
// Plane whose NFKC form is plain ASCII (generated from Unicode 14 with Python's unicodedata:
// full-width ASCII, ideographic and other compatibility spaces, superscript and circled digits,
// ligatures, "…", unit squares such as ㎏), plus ￥ -> ¥. Applied code point by code point, so a
// compatibility character followed by a combining mark is not composed; other compatibility
// characters are left as written. A row {first, last, to}: `to` for a single code point, or the
// first of consecutive ASCII characters for a range.
struct NfkcRow {
  char32_t first;
  char32_t last;
  const char* to;
};
constexpr NfkcRow kNfkcToAscii[] = {
    {0x00A0, 0x00A0, " "}, {0x00AA, 0x00AA, "a"}, {0x00B2, 0x00B3, "2"}, {0x00B9, 0x00B9, "1"},
    {0x00BA, 0x00BA, "o"}, {0x0132, 0x0132, "IJ"}, {0x0133, 0x0133, "ij"}, {0x017F, 0x017F, "s"},
    {0x01C7, 0x01C7, "LJ"}, {0x01C8, 0x01C8, "Lj"}, {0x01C9, 0x01C9, "lj"},
    {0x01CA, 0x01CA, "NJ"}, {0x01CB, 0x01CB, "Nj"}, {0x01CC, 0x01CC, "nj"},
    {0x01F1, 0x01F1, "DZ"}, {0x01F2, 0x01F2, "Dz"}, {0x01F3, 0x01F3, "dz"}, {0x02B0, 0x02B0, "h"},
    {0x02B2, 0x02B2, "j"}, {0x02B3, 0x02B3, "r"}, {0x02B7, 0x02B7, "w"}, {0x02B8, 0x02B8, "y"},
    {0x02E1, 0x02E1, "l"}, {0x02E2, 0x02E2, "s"}, {0x02E3, 0x02E3, "x"}, {0x037E, 0x037E, ";"},
    {0x1D2C, 0x1D2C, "A"}, {0x1D2E, 0x1D2E, "B"}, {0x1D30, 0x1D31, "D"}, {0x1D33, 0x1D3A, "G"},
    {0x1D3C, 0x1D3C, "O"}, {0x1D3E, 0x1D3E, "P"}, {0x1D3F, 0x1D3F, "R"}, {0x1D40, 0x1D41, "T"},
    {0x1D42, 0x1D42, "W"}, {0x1D43, 0x1D43, "a"}, {0x1D47, 0x1D47, "b"}, {0x1D48, 0x1D49, "d"},
    {0x1D4D, 0x1D4D, "g"}, {0x1D4F, 0x1D4F, "k"}, {0x1D50, 0x1D50, "m"}, {0x1D52, 0x1D52, "o"},
    {0x1D56, 0x1D56, "p"}, {0x1D57, 0x1D58, "t"}, {0x1D5B, 0x1D5B, "v"}, {0x1D62, 0x1D62, "i"},
    {0x1D63, 0x1D63, "r"}, {0x1D64, 0x1D65, "u"}, {0x1D9C, 0x1D9C, "c"}, {0x1DA0, 0x1DA0, "f"},
    {0x1DBB, 0x1DBB, "z"}, {0x1FEF, 0x1FEF, "`"}, {0x2000, 0x2000, " "}, {0x2001, 0x2001, " "},
    {0x2002, 0x2002, " "}, {0x2003, 0x2003, " "}, {0x2004, 0x2004, " "}, {0x2005, 0x2005, " "},
    {0x2006, 0x2006, " "}, {0x2007, 0x2007, " "}, {0x2008, 0x2008, " "}, {0x2009, 0x2009, " "},
    {0x200A, 0x200A, " "}, {0x2024, 0x2024, "."}, {0x2025, 0x2025, ".."}, {0x2026, 0x2026, "..."},
    {0x202F, 0x202F, " "}, {0x203C, 0x203C, "!!"}, {0x2047, 0x2047, "??"}, {0x2048, 0x2048, "?!"},
    {0x2049, 0x2049, "!?"}, {0x205F, 0x205F, " "}, {0x2070, 0x2070, "0"}, {0x2071, 0x2071, "i"},
    {0x2074, 0x2079, "4"}, {0x207A, 0x207A, "+"}, {0x207C, 0x207C, "="}, {0x207D, 0x207E, "("},
    {0x207F, 0x207F, "n"}, {0x2080, 0x2089, "0"}, {0x208A, 0x208A, "+"}, {0x208C, 0x208C, "="},
    {0x208D, 0x208E, "("}, {0x2090, 0x2090, "a"}, {0x2091, 0x2091, "e"}, {0x2092, 0x2092, "o"},
    {0x2093, 0x2093, "x"}, {0x2095, 0x2095, "h"}, {0x2096, 0x2099, "k"}, {0x209A, 0x209A, "p"},
    {0x209B, 0x209C, "s"}, {0x20A8, 0x20A8, "Rs"}, {0x2100, 0x2100, "a/c"},
    {0x2101, 0x2101, "a/s"}, {0x2102, 0x2102, "C"}, {0x2105, 0x2105, "c/o"},
    {0x2106, 0x2106, "c/u"}, {0x210A, 0x210A, "g"}, {0x210B, 0x210B, "H"}, {0x210C, 0x210C, "H"},
    {0x210D, 0x210D, "H"}, {0x210E, 0x210E, "h"}, {0x2110, 0x2110, "I"}, {0x2111, 0x2111, "I"},
    {0x2112, 0x2112, "L"}, {0x2113, 0x2113, "l"}, {0x2115, 0x2115, "N"}, {0x2116, 0x2116, "No"},
    {0x2119, 0x211B, "P"}, {0x211C, 0x211C, "R"}, {0x211D, 0x211D, "R"}, {0x2120, 0x2120, "SM"},
    {0x2121, 0x2121, "TEL"}, {0x2122, 0x2122, "TM"}, {0x2124, 0x2124, "Z"}, {0x2128, 0x2128, "Z"},
    {0x212A, 0x212A, "K"}, {0x212C, 0x212D, "B"}, {0x212F, 0x212F, "e"}, {0x2130, 0x2131, "E"},
    {0x2133, 0x2133, "M"}, {0x2134, 0x2134, "o"}, {0x2139, 0x2139, "i"}, {0x213B, 0x213B, "FAX"},
    {0x2145, 0x2145, "D"}, {0x2146, 0x2147, "d"}, {0x2148, 0x2149, "i"}, {0x2160, 0x2160, "I"},
    {0x2161, 0x2161, "II"}, {0x2162, 0x2162, "III"}, {0x2163, 0x2163, "IV"},
    {0x2164, 0x2164, "V"}, {0x2165, 0x2165, "VI"}, {0x2166, 0x2166, "VII"},
    {0x2167, 0x2167, "VIII"}, {0x2168, 0x2168, "IX"}, {0x2169, 0x2169, "X"},
    {0x216A, 0x216A, "XI"}, {0x216B, 0x216B, "XII"}, {0x216C, 0x216C, "L"}, {0x216D, 0x216E, "C"},
    {0x216F, 0x216F, "M"}, {0x2170, 0x2170, "i"}, {0x2171, 0x2171, "ii"}, {0x2172, 0x2172, "iii"},
    {0x2173, 0x2173, "iv"}, {0x2174, 0x2174, "v"}, {0x2175, 0x2175, "vi"},
    {0x2176, 0x2176, "vii"}, {0x2177, 0x2177, "viii"}, {0x2178, 0x2178, "ix"},
    {0x2179, 0x2179, "x"}, {0x217A, 0x217A, "xi"}, {0x217B, 0x217B, "xii"}, {0x217C, 0x217C, "l"},
    {0x217D, 0x217E, "c"}, {0x217F, 0x217F, "m"}, {0x2460, 0x2468, "1"}, {0x2469, 0x2469, "10"},
    {0x246A, 0x246A, "11"}, {0x246B, 0x246B, "12"}, {0x246C, 0x246C, "13"},
    {0x246D, 0x246D, "14"}, {0x246E, 0x246E, "15"}, {0x246F, 0x246F, "16"},
    {0x2470, 0x2470, "17"}, {0x2471, 0x2471, "18"}, {0x2472, 0x2472, "19"},
    {0x2473, 0x2473, "20"}, {0x2474, 0x2474, "(1)"}, {0x2475, 0x2475, "(2)"},
    {0x2476, 0x2476, "(3)"}, {0x2477, 0x2477, "(4)"}, {0x2478, 0x2478, "(5)"},
    {0x2479, 0x2479, "(6)"}, {0x247A, 0x247A, "(7)"}, {0x247B, 0x247B, "(8)"},
    {0x247C, 0x247C, "(9)"}, {0x247D, 0x247D, "(10)"}, {0x247E, 0x247E, "(11)"},
    {0x247F, 0x247F, "(12)"}, {0x2480, 0x2480, "(13)"}, {0x2481, 0x2481, "(14)"},
    {0x2482, 0x2482, "(15)"}, {0x2483, 0x2483, "(16)"}, {0x2484, 0x2484, "(17)"},
    {0x2485, 0x2485, "(18)"}, {0x2486, 0x2486, "(19)"}, {0x2487, 0x2487, "(20)"},
    {0x2488, 0x2488, "1."}, {0x2489, 0x2489, "2."}, {0x248A, 0x248A, "3."},
    {0x248B, 0x248B, "4."}, {0x248C, 0x248C, "5."}, {0x248D, 0x248D, "6."},
    {0x248E, 0x248E, "7."}, {0x248F, 0x248F, "8."}, {0x2490, 0x2490, "9."},
    {0x2491, 0x2491, "10."}, {0x2492, 0x2492, "11."}, {0x2493, 0x2493, "12."},
    {0x2494, 0x2494, "13."}, {0x2495, 0x2495, "14."}, {0x2496, 0x2496, "15."},
    {0x2497, 0x2497, "16."}, {0x2498, 0x2498, "17."}, {0x2499, 0x2499, "18."},
    {0x249A, 0x249A, "19."}, {0x249B, 0x249B, "20."}, {0x249C, 0x249C, "(a)"},
    {0x249D, 0x249D, "(b)"}, {0x249E, 0x249E, "(c)"}, {0x249F, 0x249F, "(d)"},
    {0x24A0, 0x24A0, "(e)"}, {0x24A1, 0x24A1, "(f)"}, {0x24A2, 0x24A2, "(g)"},
    {0x24A3, 0x24A3, "(h)"}, {0x24A4, 0x24A4, "(i)"}, {0x24A5, 0x24A5, "(j)"},
    {0x24A6, 0x24A6, "(k)"}, {0x24A7, 0x24A7, "(l)"}, {0x24A8, 0x24A8, "(m)"},
    {0x24A9, 0x24A9, "(n)"}, {0x24AA, 0x24AA, "(o)"}, {0x24AB, 0x24AB, "(p)"},
    {0x24AC, 0x24AC, "(q)"}, {0x24AD, 0x24AD, "(r)"}, {0x24AE, 0x24AE, "(s)"},
    {0x24AF, 0x24AF, "(t)"}, {0x24B0, 0x24B0, "(u)"}, {0x24B1, 0x24B1, "(v)"},
    {0x24B2, 0x24B2, "(w)"}, {0x24B3, 0x24B3, "(x)"}, {0x24B4, 0x24B4, "(y)"},
    {0x24B5, 0x24B5, "(z)"}, {0x24B6, 0x24CF, "A"}, {0x24D0, 0x24E9, "a"}, {0x24EA, 0x24EA, "0"},
    {0x2A74, 0x2A74, "::="}, {0x2A75, 0x2A75, "=="}, {0x2A76, 0x2A76, "==="},
    {0x2C7C, 0x2C7C, "j"}, {0x2C7D, 0x2C7D, "V"}, {0x3000, 0x3000, " "}, {0x3250, 0x3250, "PTE"},
    {0x3251, 0x3251, "21"}, {0x3252, 0x3252, "22"}, {0x3253, 0x3253, "23"},
    {0x3254, 0x3254, "24"}, {0x3255, 0x3255, "25"}, {0x3256, 0x3256, "26"},
    {0x3257, 0x3257, "27"}, {0x3258, 0x3258, "28"}, {0x3259, 0x3259, "29"},
    {0x325A, 0x325A, "30"}, {0x325B, 0x325B, "31"}, {0x325C, 0x325C, "32"},
    {0x325D, 0x325D, "33"}, {0x325E, 0x325E, "34"}, {0x325F, 0x325F, "35"},
    {0x32B1, 0x32B1, "36"}, {0x32B2, 0x32B2, "37"}, {0x32B3, 0x32B3, "38"},
    {0x32B4, 0x32B4, "39"}, {0x32B5, 0x32B5, "40"}, {0x32B6, 0x32B6, "41"},
    {0x32B7, 0x32B7, "42"}, {0x32B8, 0x32B8, "43"}, {0x32B9, 0x32B9, "44"},
    {0x32BA, 0x32BA, "45"}, {0x32BB, 0x32BB, "46"}, {0x32BC, 0x32BC, "47"},
    {0x32BD, 0x32BD, "48"}, {0x32BE, 0x32BE, "49"}, {0x32BF, 0x32BF, "50"},
    {0x32CC, 0x32CC, "Hg"}, {0x32CD, 0x32CD, "erg"}, {0x32CE, 0x32CE, "eV"},
    {0x32CF, 0x32CF, "LTD"}, {0x3371, 0x3371, "hPa"}, {0x3372, 0x3372, "da"},
    {0x3373, 0x3373, "AU"}, {0x3374, 0x3374, "bar"}, {0x3375, 0x3375, "oV"},
    {0x3376, 0x3376, "pc"}, {0x3377, 0x3377, "dm"}, {0x3378, 0x3378, "dm2"},
    {0x3379, 0x3379, "dm3"}, {0x337A, 0x337A, "IU"}, {0x3380, 0x3380, "pA"},
    {0x3381, 0x3381, "nA"}, {0x3383, 0x3383, "mA"}, {0x3384, 0x3384, "kA"},
    {0x3385, 0x3385, "KB"}, {0x3386, 0x3386, "MB"}, {0x3387, 0x3387, "GB"},
    {0x3388, 0x3388, "cal"}, {0x3389, 0x3389, "kcal"}, {0x338A, 0x338A, "pF"},
    {0x338B, 0x338B, "nF"}, {0x338E, 0x338E, "mg"}, {0x338F, 0x338F, "kg"},
    {0x3390, 0x3390, "Hz"}, {0x3391, 0x3391, "kHz"}, {0x3392, 0x3392, "MHz"},
    {0x3393, 0x3393, "GHz"}, {0x3394, 0x3394, "THz"}, {0x3396, 0x3396, "ml"},
    {0x3397, 0x3397, "dl"}, {0x3398, 0x3398, "kl"}, {0x3399, 0x3399, "fm"},
    {0x339A, 0x339A, "nm"}, {0x339C, 0x339C, "mm"}, {0x339D, 0x339D, "cm"},
    {0x339E, 0x339E, "km"}, {0x339F, 0x339F, "mm2"}, {0x33A0, 0x33A0, "cm2"},
    {0x33A1, 0x33A1, "m2"}, {0x33A2, 0x33A2, "km2"}, {0x33A3, 0x33A3, "mm3"},
    {0x33A4, 0x33A4, "cm3"}, {0x33A5, 0x33A5, "m3"}, {0x33A6, 0x33A6, "km3"},
    {0x33A9, 0x33A9, "Pa"}, {0x33AA, 0x33AA, "kPa"}, {0x33AB, 0x33AB, "MPa"},
    {0x33AC, 0x33AC, "GPa"}, {0x33AD, 0x33AD, "rad"}, {0x33B0, 0x33B0, "ps"},
    {0x33B1, 0x33B1, "ns"}, {0x33B3, 0x33B3, "ms"}, {0x33B4, 0x33B4, "pV"},
    {0x33B5, 0x33B5, "nV"}, {0x33B7, 0x33B7, "mV"}, {0x33B8, 0x33B8, "kV"},
    {0x33B9, 0x33B9, "MV"}, {0x33BA, 0x33BA, "pW"}, {0x33BB, 0x33BB, "nW"},
    {0x33BD, 0x33BD, "mW"}, {0x33BE, 0x33BE, "kW"}, {0x33BF, 0x33BF, "MW"},
    {0x33C2, 0x33C2, "a.m."}, {0x33C3, 0x33C3, "Bq"}, {0x33C4, 0x33C4, "cc"},
    {0x33C5, 0x33C5, "cd"}, {0x33C7, 0x33C7, "Co."}, {0x33C8, 0x33C8, "dB"},
    {0x33C9, 0x33C9, "Gy"}, {0x33CA, 0x33CA, "ha"}, {0x33CB, 0x33CB, "HP"},
    {0x33CC, 0x33CC, "in"}, {0x33CD, 0x33CD, "KK"}, {0x33CE, 0x33CE, "KM"},
    {0x33CF, 0x33CF, "kt"}, {0x33D0, 0x33D0, "lm"}, {0x33D1, 0x33D1, "ln"},
    {0x33D2, 0x33D2, "log"}, {0x33D3, 0x33D3, "lx"}, {0x33D4, 0x33D4, "mb"},
    {0x33D5, 0x33D5, "mil"}, {0x33D6, 0x33D6, "mol"}, {0x33D7, 0x33D7, "PH"},
    {0x33D8, 0x33D8, "p.m."}, {0x33D9, 0x33D9, "PPM"}, {0x33DA, 0x33DA, "PR"},
    {0x33DB, 0x33DB, "sr"}, {0x33DC, 0x33DC, "Sv"}, {0x33DD, 0x33DD, "Wb"},
    {0x33FF, 0x33FF, "gal"}, {0xA7F2, 0xA7F2, "C"}, {0xA7F3, 0xA7F3, "F"}, {0xA7F4, 0xA7F4, "Q"},
    {0xFB00, 0xFB00, "ff"}, {0xFB01, 0xFB01, "fi"}, {0xFB02, 0xFB02, "fl"},
    {0xFB03, 0xFB03, "ffi"}, {0xFB04, 0xFB04, "ffl"}, {0xFB05, 0xFB05, "st"},
    {0xFB06, 0xFB06, "st"}, {0xFB29, 0xFB29, "+"}, {0xFE10, 0xFE10, ","}, {0xFE13, 0xFE14, ":"},
    {0xFE15, 0xFE15, "!"}, {0xFE16, 0xFE16, "?"}, {0xFE19, 0xFE19, "..."}, {0xFE30, 0xFE30, ".."},
    {0xFE33, 0xFE33, "_"}, {0xFE34, 0xFE34, "_"}, {0xFE35, 0xFE36, "("}, {0xFE37, 0xFE37, "{"},
    {0xFE38, 0xFE38, "}"}, {0xFE47, 0xFE47, "["}, {0xFE48, 0xFE48, "]"}, {0xFE4D, 0xFE4D, "_"},
    {0xFE4E, 0xFE4E, "_"}, {0xFE4F, 0xFE4F, "_"}, {0xFE50, 0xFE50, ","}, {0xFE52, 0xFE52, "."},
    {0xFE54, 0xFE54, ";"}, {0xFE55, 0xFE55, ":"}, {0xFE56, 0xFE56, "?"}, {0xFE57, 0xFE57, "!"},
    {0xFE59, 0xFE5A, "("}, {0xFE5B, 0xFE5B, "{"}, {0xFE5C, 0xFE5C, "}"}, {0xFE5F, 0xFE5F, "#"},
    {0xFE60, 0xFE60, "&"}, {0xFE61, 0xFE62, "*"}, {0xFE63, 0xFE63, "-"}, {0xFE64, 0xFE64, "<"},
    {0xFE65, 0xFE65, ">"}, {0xFE66, 0xFE66, "="}, {0xFE68, 0xFE68, "\\"}, {0xFE69, 0xFE6A, "$"},
    {0xFE6B, 0xFE6B, "@"}, {0xFF01, 0xFF5E, "!"},
};

std::string NfkcSubset(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t start = i;
    const char32_t c = NextCodePoint(s, i);
    if (c < 0x80) {
      out += static_cast<char>(c);
      continue;
    }
    if (c == 0xFFE5) {  // FULLWIDTH YEN SIGN -> YEN SIGN
      out += "\xC2\xA5";
      continue;
    }
    const auto* row = std::upper_bound(
        std::begin(kNfkcToAscii), std::end(kNfkcToAscii), c,
        [](char32_t v, const NfkcRow& r) { return v < r.first; });
    if (row != std::begin(kNfkcToAscii) && c <= (row - 1)->last) {
      --row;
      if (row->first == row->last) {
        out += row->to;
      } else {
        out += static_cast<char>(row->to[0] + static_cast<char>(c - row->first));
      }
      continue;
    }
    out.append(s.substr(start, i - start));
  }
  return out;
}

// ---- Answer normalisation (normalizeAnswer) ------------------------------------------------------

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// `.replace(/(?<![\d.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d.,])/g, m => m.replace(/,/g, ''))`: only
// syntactically valid thousands separators are dropped. The pattern never needs backtracking to
// succeed (a shorter alternative always leaves a digit, '.' or ',' that the lookahead rejects), so
// greedy matching at each allowed start is the regex's result.
std::string DropThousandsSeparators(const std::string& s) {
  auto in_set = [](char c) { return IsDigit(c) || c == '.' || c == ','; };
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    if (IsDigit(s[i]) && (i == 0 || !in_set(s[i - 1]))) {
      size_t j = i;
      while (j < s.size() && IsDigit(s[j])) ++j;
      bool matched = false;
      size_t end = j;
      if (j - i <= 3) {
        size_t k = j;
        int groups = 0;
        while (k + 3 < s.size() && s[k] == ',' && IsDigit(s[k + 1]) && IsDigit(s[k + 2]) &&
               IsDigit(s[k + 3])) {
          k += 4;
          ++groups;
        }
        if (groups > 0) {
          if (k + 1 < s.size() && s[k] == '.' && IsDigit(s[k + 1])) {
            ++k;
            while (k < s.size() && IsDigit(s[k])) ++k;
          }
          if (k >= s.size() || !in_set(s[k])) {
            matched = true;
            end = k;
          }
        }
      }
      if (matched) {
        for (size_t p = i; p < end; ++p) {
          if (s[p] != ',') out += s[p];
        }
        i = end;
        continue;
      }
    }
    out += s[i];
    ++i;
  }
  return out;
}

std::string NormalizeAnswer(std::string_view text) {
  std::string s = NfkcSubset(text);
  ReplaceAll(s, "**", "");
  {  // .replace(/\s+/g, '') and .replace(/[\[\]]/g, '')
    std::string t;
    t.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
      const size_t start = i;
      const char32_t c = NextCodePoint(s, i);
      if (IsJsSpace(c) || c == '[' || c == ']') continue;
      t.append(s, start, i - start);
    }
    s = std::move(t);
  }
  ReplaceAll(s, "\xEF\xBC\x8C", ",");  // ，
  ReplaceAll(s, ";", ",");
  ReplaceAll(s, "\xEF\xBC\x9B", ",");  // ；
  // .replace(/[。.,]+$/, '')
  for (;;) {
    if (!s.empty() && (s.back() == '.' || s.back() == ',')) {
      s.pop_back();
    } else if (s.size() >= 3 && s.compare(s.size() - 3, 3, "\xE3\x80\x82") == 0) {  // 。
      s.resize(s.size() - 3);
    } else {
      break;
    }
  }
  s = DropThousandsSeparators(s);
  ReplaceAll(s, "->", "-");
  ReplaceAll(s, "\xE2\x86\x92", "-");  // →
  ReplaceAll(s, "\xE2\x87\x92", "-");  // ⇒
  ReplaceAll(s, "\xE2\x80\x94", "-");  // —
  return s;
}

// ---- Exact decimals (canonicalDecimal) -----------------------------------------------------------

// Signed significant digits and a base-10 exponent, "-125e-2"; nullopt when `text` is not a plain
// decimal, is longer than 4096 characters or has an exponent of more than six digits. Never goes
// through floating point.
std::optional<std::string> CanonicalDecimal(std::string_view text, long shift = 0) {
  if (text.size() > 4096) return std::nullopt;
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  const size_t whole_begin = i;
  while (i < text.size() && IsDigit(text[i])) ++i;
  std::string_view whole = text.substr(whole_begin, i - whole_begin);
  std::string_view fraction;
  if (i < text.size() && text[i] == '.') {
    const size_t f = ++i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    fraction = text.substr(f, i - f);
    if (whole.empty() && fraction.empty()) return std::nullopt;
  } else if (whole.empty()) {
    return std::nullopt;
  }
  long exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exp_negative = text[i++] == '-';
    const size_t e = i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    if (i == e || i - e > 6) return std::nullopt;
    for (size_t k = e; k < i; ++k) exponent = exponent * 10 + (text[k] - '0');
    if (exp_negative) exponent = -exponent;
  }
  if (i != text.size()) return std::nullopt;
  std::string digits = std::string(whole) + std::string(fraction);
  digits.erase(0, digits.find_first_not_of('0') == std::string::npos
                      ? digits.size()
                      : digits.find_first_not_of('0'));
  if (digits.empty()) return "0";
  const size_t last = digits.find_last_not_of('0');
  const long trailing = static_cast<long>(digits.size() - last - 1);
  digits.resize(last + 1);
  exponent += -static_cast<long>(fraction.size()) + trailing + shift;
  return (negative ? "-" : "") + digits + "e" + std::to_string(exponent);
}

// canonicalDecimal(String(n)) for a JavaScript number: String(n) prints the shortest digits that
// round-trip, as std::to_chars does, so the canonical form is built from those digits directly.
std::optional<std::string> CanonicalNumber(double value) {
  if (!std::isfinite(value)) return std::nullopt;  // String(NaN) is not a decimal
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value,
                                 std::chars_format::scientific);
  if (ec != std::errc()) return std::nullopt;
  std::string_view sci(buffer, static_cast<size_t>(end - buffer));  // "-1.2345e+02"
  return CanonicalDecimal(sci);
}

// ---- Answer comparison (compareStrictAnswer) ----------------------------------------------------

// `^[¥￥]?(NUMBER)(万|亿)?(元|种|次|个|件|%)?$` on the normalised answer.
struct NumericAnswer {
  std::string number;
  std::string multiplier;  // "", "万", "亿"
  std::string unit;        // "", "元", "种", "次", "个", "件", "%"
};

bool ConsumePrefix(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

std::optional<NumericAnswer> ParseNumericAnswer(std::string_view s) {
  if (!ConsumePrefix(s, "\xC2\xA5")) ConsumePrefix(s, "\xEF\xBF\xA5");  // ¥ or ￥
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  const size_t int_begin = i;
  while (i < s.size() && IsDigit(s[i])) ++i;
  if (i > int_begin) {
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && IsDigit(s[i])) ++i;
    }
  } else {
    if (i + 1 < s.size() && s[i] == '.' && IsDigit(s[i + 1])) {
      ++i;
      while (i < s.size() && IsDigit(s[i])) ++i;
    } else {
      return std::nullopt;
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {  // taken only when complete
    size_t k = i + 1;
    if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
    const size_t e = k;
    while (k < s.size() && IsDigit(s[k])) ++k;
    if (k > e) i = k;
  }
  NumericAnswer answer;
  answer.number = std::string(s.substr(0, i));
  std::string_view rest = s.substr(i);
  for (std::string_view m : {"\xE4\xB8\x87", "\xE4\xBA\xBF"}) {  // 万 亿
    if (ConsumePrefix(rest, m)) {
      answer.multiplier = std::string(m);
      break;
    }
  }
  for (std::string_view u : {"\xE5\x85\x83", "\xE7\xA7\x8D", "\xE6\xAC\xA1", "\xE4\xB8\xAA",
                             "\xE4\xBB\xB6", "%"}) {  // 元 种 次 个 件 %
    if (ConsumePrefix(rest, u)) {
      answer.unit = std::string(u);
      break;
    }
  }
  if (!rest.empty()) return std::nullopt;
  return answer;
}

// The numbers of `(?<![A-Za-z\d.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?` (global) and the
// text with each replaced by '#'.
struct NumbersAndSkeleton {
  std::vector<std::optional<std::string>> values;  // canonicalDecimal of each match
  std::string skeleton;
};

NumbersAndSkeleton SplitNumbers(const std::string& s) {
  auto blocks = [](char c) {
    return IsDigit(c) || c == '.' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
  };
  NumbersAndSkeleton result;
  size_t i = 0;
  while (i < s.size()) {
    if (i == 0 || !blocks(s[i - 1])) {
      size_t k = i;
      if (s[k] == '+' || s[k] == '-') ++k;
      size_t end = 0;  // 0: no match here
      if (k < s.size() && IsDigit(s[k])) {
        while (k < s.size() && IsDigit(s[k])) ++k;
        if (k < s.size() && s[k] == '.') {
          ++k;
          while (k < s.size() && IsDigit(s[k])) ++k;
        }
        end = k;
      } else if (k + 1 < s.size() && s[k] == '.' && IsDigit(s[k + 1])) {
        k += 1;
        while (k < s.size() && IsDigit(s[k])) ++k;
        end = k;
      }
      if (end != 0) {
        if (end < s.size() && (s[end] == 'e' || s[end] == 'E')) {
          size_t e = end + 1;
          if (e < s.size() && (s[e] == '+' || s[e] == '-')) ++e;
          const size_t digits = e;
          while (e < s.size() && IsDigit(s[e])) ++e;
          if (e > digits) end = e;
        }
        result.values.push_back(CanonicalDecimal(std::string_view(s).substr(i, end - i)));
        result.skeleton += '#';
        i = end;
        continue;
      }
    }
    result.skeleton += s[i];
    ++i;
  }
  return result;
}

// normalizeSkeletonSeparators: runs of field/list separators become one ',', then runs of '-'.
std::string NormalizeSkeletonSeparators(const std::string& s) {
  auto is_separator = [](char32_t c) {
    switch (c) {
      case 0xFF0C: case ',': case 0x3001: case ';': case 0xFF1B: case '|': case '/': case '\\':
      case '~': case 0xFF5E: case 0x2014: case 0x2013:
        return true;
      default:
        return false;
    }
  };
  std::string first;
  bool in_run = false;
  for (size_t i = 0; i < s.size();) {
    const size_t start = i;
    const char32_t c = NextCodePoint(s, i);
    if (is_separator(c)) {
      if (!in_run) first += ',';
      in_run = true;
      continue;
    }
    in_run = false;
    first.append(s, start, i - start);
  }
  std::string out;
  for (size_t i = 0; i < first.size(); ++i) {
    if (first[i] == '-') {
      out += ',';
      while (i + 1 < first.size() && first[i + 1] == '-') ++i;
    } else {
      out += first[i];
    }
  }
  return out;
}

// 100 or 0 (compareStrictAnswer).
int CompareStrictAnswer(std::string_view extracted, const nlohmann::json& expected,
                        const nlohmann::json& unit) {
  const std::string actual = NormalizeAnswer(extracted);
  if (expected.is_number()) {
    const auto m = ParseNumericAnswer(actual);
    if (!m) return 0;
    if (unit.is_string()) {
      const std::string u = unit.get<std::string>();
      if (!m->unit.empty() && m->unit != u) return 0;
      if (!m->multiplier.empty() && u != "\xE5\x85\x83") return 0;  // 万/亿 only with 元
    }
    const long shift = m->multiplier.empty() ? 0 : m->multiplier == "\xE4\xB8\x87" ? 4 : 8;
    const auto value = CanonicalDecimal(m->number, shift);
    const auto gold = CanonicalNumber(expected.get<double>());
    return value && gold && *value == *gold ? 100 : 0;
  }
  if (!expected.is_string()) return 0;
  const std::string target =
      NormalizeAnswer(ToWellFormedUtf8(expected.get_ref<const std::string&>()));
  const auto a = SplitNumbers(actual);
  const auto t = SplitNumbers(target);
  if (NormalizeSkeletonSeparators(a.skeleton) != NormalizeSkeletonSeparators(t.skeleton) ||
      a.values.size() != t.values.size()) {
    return 0;
  }
  for (size_t i = 0; i < a.values.size(); ++i) {
    if (!a.values[i] || a.values[i] != t.values[i]) return 0;
  }
  return 100;
}

// ---- Extraction ----------------------------------------------------------------------------------

bool ConsumeAsciiNoCase(std::string_view& s, std::string_view word) {
  if (s.size() < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    char c = s[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c != word[i]) return false;
  }
  s.remove_prefix(word.size());
  return true;
}

bool ConsumeLabel(std::string_view& s, bool with_result_labels) {
  if (ConsumeAsciiNoCase(s, "ANSWER")) return true;
  if (ConsumePrefix(s, "\xE6\x9C\x80\xE7\xBB\x88\xE7\xAD\x94\xE6\xA1\x88")) return true;  // 最终答案
  if (ConsumePrefix(s, "\xE7\xAD\x94\xE6\xA1\x88")) return true;                          // 答案
  if (!with_result_labels) return false;
  if (ConsumePrefix(s, "\xE6\x9C\x80\xE7\xBB\x88\xE7\xBB\x93\xE6\x9E\x9C")) return true;  // 最终结果
  return ConsumePrefix(s, "\xE7\xBB\x93\xE6\x9E\x9C");                                   // 结果
}

bool HasLineTerminator(std::string_view s) {  // what JavaScript's '.' refuses to match
  return s.find('\n') != std::string_view::npos || s.find('\r') != std::string_view::npos ||
         s.find("\xE2\x80\xA8") != std::string_view::npos ||
         s.find("\xE2\x80\xA9") != std::string_view::npos;
}

std::string StripBold(std::string_view s) {
  std::string out(s);
  ReplaceAll(out, "**", "");
  return out;
}

// extractAnswerLine: the last non-empty line must match
// /^[ \t]*(?:\*\*)?(?:ANSWER|最终答案|答案)(?:\*\*)?[ \t]*[:：][ \t]*(.*)$/i.
std::optional<std::string> ExtractAnswerLine(std::string_view text) {
  std::string_view last;
  bool found = false;
  for (std::string_view line : SplitLines(text)) {
    if (!JsTrim(line).empty()) {
      last = line;
      found = true;
    }
  }
  if (!found) return std::nullopt;
  std::string_view s = last;
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  ConsumePrefix(s, "**");  // dropping an optional "**" never helps a label match
  if (!ConsumeLabel(s, false)) return std::nullopt;
  ConsumePrefix(s, "**");
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  if (!ConsumePrefix(s, ":") && !ConsumePrefix(s, "\xEF\xBC\x9A")) return std::nullopt;  // ：
  if (HasLineTerminator(s)) return std::nullopt;
  return StripBold(JsTrim(s));
}

void SkipJsSpace(std::string_view& s) {
  while (!s.empty()) {
    size_t i = 0;
    if (!IsJsSpace(NextCodePoint(s, i))) break;
    s.remove_prefix(i);
  }
}

// extractFirstAnswer (answerFirst entries): the first non-empty line, trimmed, must match
// /^(?:\*\*)?(?:ANSWER|最终答案|答案|最终结果|结果)(?:\*\*)?\s*(?:是|为|[:：])\s*(.+)$/i.
std::optional<std::string> ExtractFirstAnswer(std::string_view text) {
  for (std::string_view line : SplitLines(text)) {
    std::string_view s = JsTrim(line);
    if (s.empty()) continue;
    ConsumePrefix(s, "**");
    if (!ConsumeLabel(s, true)) return std::nullopt;
    ConsumePrefix(s, "**");
    SkipJsSpace(s);
    if (!ConsumePrefix(s, "\xE6\x98\xAF") && !ConsumePrefix(s, "\xE4\xB8\xBA") &&  // 是 为
        !ConsumePrefix(s, ":") && !ConsumePrefix(s, "\xEF\xBC\x9A")) {
      return std::nullopt;
    }
    SkipJsSpace(s);  // the line is trimmed, so (.+) still has a character after this
    if (s.empty() || HasLineTerminator(s)) return std::nullopt;
    return StripBold(JsTrim(s));
  }
  return std::nullopt;
}

// validRiverCrossing, for requirements.solutionVerifier == "river_crossing": exactly one
// "STEPS:" line of seven legal crossings (空 狼 羊 白菜/菜) that ends with everything across.
bool ValidRiverCrossing(std::string_view output) {
  std::string_view steps_line;
  int count = 0;
  for (std::string_view line : SplitLines(output)) {
    std::string_view s = JsTrim(line);
    if (!ConsumeAsciiNoCase(s, "STEPS")) continue;
    SkipJsSpace(s);
    if (!ConsumePrefix(s, ":")) continue;
    SkipJsSpace(s);
    steps_line = s;  // .replace(/^\s*STEPS\s*:\s*/i, '') on the untrimmed line gives the same
    ++count;
  }
  if (count != 1) return false;
  // .split(/\s*[,，、]\s*/)
  std::vector<std::string> steps(1);
  for (size_t i = 0; i < steps_line.size();) {
    const size_t start = i;
    const char32_t c = NextCodePoint(steps_line, i);
    if (c == ',' || c == 0xFF0C || c == 0x3001) {
      steps.emplace_back();
    } else {
      steps.back().append(steps_line.substr(start, i - start));
    }
  }
  if (steps.size() != 7) return false;
  int state = 0;
  for (const std::string& raw : steps) {
    const std::string_view step = JsTrim(raw);
    int bit = -1;
    if (step == "\xE7\xA9\xBA") bit = 0;                                   // 空
    else if (step == "\xE7\x8B\xBC") bit = 2;                              // 狼
    else if (step == "\xE7\xBE\x8A") bit = 4;                              // 羊
    else if (step == "\xE7\x99\xBD\xE8\x8F\x9C" || step == "\xE8\x8F\x9C") bit = 8;  // 白菜 菜
    if (bit < 0) return false;  // (inherited Object.prototype names are not modelled)
    if (bit != 0 && ((state & bit) != 0) != ((state & 1) != 0)) return false;
    state ^= 1 | bit;
    const bool farmer = state & 1, wolf = state & 2, goat = state & 4, cabbage = state & 8;
    if ((wolf == goat && farmer != goat) || (goat == cabbage && farmer != goat)) return false;
  }
  return state == 15;
}

// This grader's zx-bench score as a Grade (graders/zxbench/common.h).
Grade MakeGrade(int zx_score, nlohmann::json evidence, std::string reason) {
  return zx::ZxGrade(zx_score, std::move(evidence), std::move(reason), kZxEvaluator);
}

class ZxExactAnswerLineGrader final : public Grader {
 public:
  std::string_view name() const override { return kName; }
  std::string_view version() const override { return kVersion; }
  std::string_view description() const override {
    return "zx-bench exact_answer_line: the last line's ANSWER, exact decimals and units, "
           "scored as zx-bench scores it";
  }

  void CheckSpec(const nlohmann::json& spec, const SourceLocation& where) const override {
    const std::string prefix = where.ToString() + ": " + std::string(kName) + ": ";
    if (!spec.is_object()) {
      throw Error(prefix + "the spec must be the zx-bench entry (a JSON object)");
    }
    const auto& scoring = Member(spec, "scoring");
    if (!scoring.is_object()) {
      throw Error(prefix + "the entry has no 'scoring' object (zx-bench reads "
                           "scoring.comparisonMode and scoring.answerUnit from it)");
    }
    const auto& requirements = Member(spec, "requirements");
    if (!requirements.is_null() && !requirements.is_object()) {
      throw Error(prefix + "'requirements' must be an object holding the gold 'answer'");
    }
  }

  Grade Run(const nlohmann::json& spec, const Answer& answer,
            const GradeContext& /*context*/) const override {
    const std::string output = ToWellFormedUtf8(answer.text);
    nlohmann::json evidence = nlohmann::json::object();
    if (JsTrim(output).empty()) {
      Grade grade = MakeGrade(0, std::move(evidence), "empty output");
      grade.status = GradeStatus::kNoAnswer;
      return grade;
    }
    const auto& requirements = Member(spec, "requirements");
    const auto& scoring = Member(spec, "scoring");
    const auto& expected = Member(requirements, "answer");
    int format = answer.truncated ? 60 : 100;  // formatValidScore: cut by max_tokens -> 60
    if (expected.is_null()) {
      // zx-bench: environmentError, "GRADING_UNAVAILABLE: missing reference answer".
      Grade grade = MakeGrade(0, std::move(evidence), "the entry has no requirements.answer");
      grade.status = GradeStatus::kEnvError;
      return grade;
    }
    if (Member(scoring, "comparisonMode") != "strict") {
      Grade grade;
      grade.status = GradeStatus::kSkipped;
      grade.reason = "scoring.comparisonMode is not 'strict': zx-bench's tolerant extraction "
                     "is not reproduced by evalrun";
      return grade;
    }
    if (Member(scoring, "mathReviewPolicy").is_string() &&
        Member(requirements, "answerFields").is_array()) {
      Grade grade;
      grade.status = GradeStatus::kSkipped;
      grade.reason = "scoring.mathReviewPolicy (field-level math review) is not reproduced by "
                     "evalrun";
      return grade;
    }

    std::vector<std::string> candidates;
    const auto default_answer = ExtractAnswerLine(output);
    if (Member(spec, "answerFirst") == true) {
      if (auto first = ExtractFirstAnswer(output)) candidates.push_back(*first);
    }
    if (default_answer &&
        std::find(candidates.begin(), candidates.end(), *default_answer) == candidates.end()) {
      candidates.push_back(*default_answer);
    }
    evidence["expected"] = expected;
    if (candidates.empty()) {
      format = 0;  // strict: no answer line on the last non-empty line is a format failure
      evidence["format_valid"] = format;
      evidence["answer_accuracy"] = 0;
      const int total = JsRound(format * 0.1 + 0 * 0.9);
      return MakeGrade(total, std::move(evidence),
                       "the last non-empty line is not an 'ANSWER:' line");
    }

    std::vector<const nlohmann::json*> golds = {&expected};
    const auto& variants = Member(requirements, "acceptedVariants");
    if (variants.is_array()) {
      for (const auto& v : variants) {
        if (v.is_string()) golds.push_back(&v);
      }
    }
    const auto& unit = Member(scoring, "answerUnit");
    auto score_answer = [&](const std::string& candidate) {
      int best = 0;
      for (const auto* gold : golds) best = std::max(best, CompareStrictAnswer(candidate, *gold, unit));
      return best;
    };
    size_t chosen = 0;
    int accuracy = score_answer(candidates[0]);
    for (size_t i = 1; i < candidates.size(); ++i) {
      const int a = score_answer(candidates[i]);
      if (a > accuracy) {
        chosen = i;
        accuracy = a;
      }
    }
    evidence["extracted"] = candidates[chosen];
    if (Member(requirements, "solutionVerifier") == "river_crossing" &&
        !ValidRiverCrossing(output)) {
      accuracy = 0;
      evidence["veto"] = "required river crossing sequence is missing or illegal";
    }
    evidence["format_valid"] = format;
    evidence["answer_accuracy"] = accuracy;
    const int total = JsRound(format * 0.10 + accuracy * 0.90);
    std::string reason = accuracy == 100 ? "answer '" + candidates[chosen] + "' is correct"
                                         : "answer '" + candidates[chosen] + "' does not match " +
                                               expected.dump();
    if (answer.truncated) reason += " (output truncated: format 60)";
    return MakeGrade(total, std::move(evidence), std::move(reason));
  }
};

}  // namespace

std::unique_ptr<Grader> MakeZxExactAnswerLineGrader() {
  return std::make_unique<ZxExactAnswerLineGrader>();
}

}  // namespace evalrun
