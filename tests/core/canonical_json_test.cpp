#include "core/canonical_json.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/support/catch.h"

#include "core/error.h"
#include "core/sha256.h"

using evalrun::CanonicalJson;
using evalrun::CanonicalObjectInOrder;
using evalrun::EcmaNumber;
using evalrun::Sha256Hex;
using nlohmann::json;

// Expected strings in this file were printed by node v20's JSON.stringify (the reference the
// hashes must match), never computed by the code under test.

namespace {

std::string Utf8(char32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return out;
}

// ---- A second, independent implementation used as the reference by the property tests. ----

// UTF-16 order without converting: UTF-8 byte order is code point order, which equals UTF-16
// order except that U+E000..U+FFFF (lead bytes EE, EF) sort after surrogate pairs (F0..F4).
// The first differing byte of two valid UTF-8 strings is always at the same position within
// aligned characters, so remapping those two lead bytes is enough.
bool RefUtf16Less(const std::string& a, const std::string& b) {
  const auto rank = [](unsigned char c) -> int { return c == 0xEE || c == 0xEF ? c + 0x10 : c; };
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [&](char x, char y) {
    return rank(static_cast<unsigned char>(x)) < rank(static_cast<unsigned char>(y));
  });
}

// Shortest round-trip digits by trying every precision with printf. printf's correctly rounded
// decimal is the closest at its precision, so it wins when it reads back; when it does not, a
// neighbour in the last digit still may (6.2434971006319845e144 is ...98446: ...984 misses,
// ...985 reads back), and then only one of the two can, since the decimals that read back
// form an interval around the value.
std::string RefNumber(double v) {
  if (v == 0) return "0";
  std::string sign = v < 0 ? "-" : "";
  v = std::fabs(v);
  std::string digits;
  int n = 0;  // v = 0.digits x 10^n
  for (int p = 1; p <= 17 && digits.empty(); ++p) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*e", p - 1, v);
    std::string mantissa;
    for (const char* c = buf; *c != 'e'; ++c) {
      if (*c != '.') mantissa.push_back(*c);
    }
    const long long center = std::stoll(mantissa);
    const int scale = std::atoi(std::strchr(buf, 'e') + 1) - (p - 1);  // v ~ center x 10^scale
    for (long long m : {center, center - 1, center + 1}) {
      const std::string candidate = std::to_string(m) + "e" + std::to_string(scale);
      if (m > 0 && std::strtod(candidate.c_str(), nullptr) == v) {
        digits = std::to_string(m);
        n = scale + static_cast<int>(digits.size());
        break;
      }
    }
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int k = static_cast<int>(digits.size());
  if (k <= n && n <= 21) return sign + digits + std::string(n - k, '0');
  if (0 < n && n <= 21) return sign + digits.substr(0, n) + "." + digits.substr(n);
  if (-6 < n && n <= 0) return sign + "0." + std::string(-n, '0') + digits;
  const std::string rest = k > 1 ? "." + digits.substr(1) : "";
  return sign + digits.substr(0, 1) + rest + "e" + (n - 1 < 0 ? "-" : "+") +
         std::to_string(std::abs(n - 1));
}

// nlohmann's own dump() escapes strings exactly like JSON.stringify for valid UTF-8 (controls
// as lowercase \u00xx, \b \f \n \r \t, everything else raw), so it serves for strings and for
// integers within 2^53.
std::string RefCanonical(const json& v) {
  switch (v.type()) {
    case json::value_t::number_float:
      return RefNumber(v.get<double>());
    case json::value_t::array: {
      std::string out = "[";
      for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + RefCanonical(v[i]);
      return out + "]";
    }
    case json::value_t::object: {
      std::vector<std::string> keys;
      for (const auto& item : v.items()) keys.push_back(item.key());
      std::sort(keys.begin(), keys.end(), RefUtf16Less);
      std::string out = "{";
      for (std::size_t i = 0; i < keys.size(); ++i) {
        out += (i ? "," : "") + json(keys[i]).dump() + ":" + RefCanonical(v.at(keys[i]));
      }
      return out + "}";
    }
    default:
      return v.dump();
  }
}

class RandomJson {
 public:
  explicit RandomJson(std::uint32_t seed) : rng_(seed) {}

  std::string String() {
    // Every class JSON.stringify treats differently, plus the code points that break byte order.
    static const std::vector<char32_t> kSpecial = {
        0x00,   0x01,   0x08,   0x09,   0x0A,    0x0B,    0x0C,    0x0D,   0x1F,
        '"',    '\\',   '/',    0x7F,   0xE9,    0x7FF,   0x800,   0x2028, 0x2029,
        0x4E2D, 0xE000, 0xFF01, 0xFFFF, 0x10000, 0x1F600, 0x10FFFF};
    std::string out;
    const int length = Int(0, 6);
    for (int i = 0; i < length; ++i) {
      out += Int(0, 2) == 0 ? Utf8(kSpecial[Int(0, static_cast<int>(kSpecial.size()) - 1)])
                            : std::string(1, static_cast<char>(Int('a', 'e')));
    }
    return out;
  }

  double Double() {
    switch (Int(0, 3)) {
      case 0: {  // any finite bit pattern
        for (;;) {
          const std::uint64_t bits = rng_();
          double d;
          std::memcpy(&d, &bits, sizeof d);
          if (std::isfinite(d)) return d;
        }
      }
      case 1:  // short decimals around every formatting boundary
        return Int(-999, 999) * std::pow(10.0, Int(-28, 28));
      case 2:
        return std::ldexp(1.0, Int(-1074, 1023)) * (Int(0, 1) ? -1 : 1);
      default:
        return std::uniform_real_distribution<double>(-1e6, 1e6)(rng_);
    }
  }

  json Value(int depth) {
    const int kind = Int(0, depth > 3 ? 5 : 7);
    switch (kind) {
      case 0:
        return nullptr;
      case 1:
        return Int(0, 1) == 1;
      case 2:
        return String();
      case 3:
        return static_cast<std::int64_t>(Int(-1000000, 1000000));
      case 4:
        return static_cast<std::uint64_t>(rng_() % ((std::uint64_t{1} << 53) + 1));
      case 5:
        return Double();
      case 6: {
        json array = json::array();
        for (int i = Int(0, 4); i > 0; --i) array.push_back(Value(depth + 1));
        return array;
      }
      default: {
        json object = json::object();
        for (int i = Int(0, 5); i > 0; --i) object[String()] = Value(depth + 1);
        return object;
      }
    }
  }

 private:
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  std::mt19937_64 rng_;
};

}  // namespace

TEST_CASE("sha256: known vectors", "[sha256]") {
  CHECK(Sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  SECTION("embedded NUL bytes are hashed, not treated as the end") {
    CHECK(Sha256Hex(std::string_view("a\0b", 3)) ==
          "59b271ae1bbcb1d31d41929817f4b16fb439eb4f31520b5ad1d5ce98920a7138");
  }
  SECTION("a million 'a'") {
    CHECK(Sha256Hex(std::string(1000000, 'a')) ==
          "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  }
}

TEST_CASE("EcmaNumber: ECMAScript Number::toString", "[canonical_json]") {
  const auto [value, expected] = GENERATE(table<double, std::string>({
      {1.0, "1"},
      {0.1, "0.1"},
      {0.5, "0.5"},
      {100, "100"},
      {-1.5, "-1.5"},
      {4.35, "4.35"},
      {1.0 / 3, "0.3333333333333333"},
      {0.1 + 0.2, "0.30000000000000004"},
      {1.0000000000000002, "1.0000000000000002"},
      {123456.789, "123456.789"},
      {1e16, "10000000000000000"},
      {1e20, "100000000000000000000"},
      {123456789012345680000.0, "123456789012345680000"},
      {999999999999999900000.0, "999999999999999900000"},
      {1e21, "1e+21"},
      {1.2e21, "1.2e+21"},
      {1e22, "1e+22"},
      {1e100, "1e+100"},
      {1.5e300, "1.5e+300"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {1e-6, "0.000001"},
      {0.00001, "0.00001"},
      {0.000001234, "0.000001234"},
      {2.5e-6, "0.0000025"},
      {123e-7, "0.0000123"},
      {1e-7, "1e-7"},
      {-1e-7, "-1e-7"},
      {1.5e-7, "1.5e-7"},
      {-123.456e-10, "-1.23456e-8"},
      {123e-20, "1.23e-18"},
      {2.2250738585072014e-308, "2.2250738585072014e-308"},
      {5e-324, "5e-324"},
      {1.5e-323, "1.5e-323"},
      {9007199254740992.0, "9007199254740992"},
      {18446744073709551615.0, "18446744073709552000"},
      {0.0, "0"},
      {-0.0, "0"},
  }));
  CAPTURE(expected);
  CHECK(EcmaNumber(value) == expected);
}

TEST_CASE("EcmaNumber: NaN and infinities have no JSON form", "[canonical_json]") {
  CHECK_THROWS_AS(EcmaNumber(std::numeric_limits<double>::quiet_NaN()), evalrun::Error);
  CHECK_THROWS_AS(EcmaNumber(std::numeric_limits<double>::infinity()), evalrun::Error);
  CHECK_THROWS_AS(EcmaNumber(-std::numeric_limits<double>::infinity()), evalrun::Error);
  CHECK_THROWS_AS(CanonicalJson(json(std::nan(""))), evalrun::Error);
}

TEST_CASE("canonical JSON: integers are written as the JavaScript Number they become",
          "[canonical_json]") {
  constexpr std::int64_t kTwo53 = std::int64_t{1} << 53;
  CHECK(CanonicalJson(json(0)) == "0");
  CHECK(CanonicalJson(json(-42)) == "-42");
  CHECK(CanonicalJson(json(kTwo53)) == "9007199254740992");
  CHECK(CanonicalJson(json(-kTwo53)) == "-9007199254740992");
  CHECK(CanonicalJson(json(kTwo53 + 1)) == "9007199254740992");
  CHECK(CanonicalJson(json(-kTwo53 - 1)) == "-9007199254740992");
  CHECK(CanonicalJson(json(kTwo53 + 2)) == "9007199254740994");
  CHECK(CanonicalJson(json(std::uint64_t{1} << 53)) == "9007199254740992");
  CHECK(CanonicalJson(json((std::uint64_t{1} << 53) + 1)) == "9007199254740992");
  CHECK(CanonicalJson(json(std::numeric_limits<std::uint64_t>::max())) == "18446744073709552000");
  CHECK(CanonicalJson(json(std::numeric_limits<std::int64_t>::min())) == "-9223372036854776000");
  SECTION("as parsed from text") {
    CHECK(CanonicalJson(json::parse("9007199254740993")) == "9007199254740992");
    CHECK(CanonicalJson(json::parse("12345678901234567890")) == "12345678901234567000");
    CHECK(CanonicalJson(json::parse("1.0")) == "1");
    CHECK(CanonicalJson(json::parse("-0.0")) == "0");
    CHECK(CanonicalJson(json::parse("1E21")) == "1e+21");
  }
}

TEST_CASE("canonical JSON: literals", "[canonical_json]") {
  CHECK(CanonicalJson(json(nullptr)) == "null");
  CHECK(CanonicalJson(json(true)) == "true");
  CHECK(CanonicalJson(json(false)) == "false");
  CHECK(CanonicalJson(json::object()) == "{}");
  CHECK(CanonicalJson(json::array()) == "[]");
  CHECK(CanonicalJson(json::parse(R"([{},[],[[]],{"a":{}}])")) == R"([{},[],[[]],{"a":{}}])");
}

TEST_CASE("canonical JSON: string escapes match JSON.stringify", "[canonical_json]") {
  SECTION("every control character, quote, backslash") {
    std::string all;
    for (int c = 0; c < 0x20; ++c) all.push_back(static_cast<char>(c));
    all += "\"\\";
    CHECK(CanonicalJson(json(all)) ==
          R"("\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f)"
          R"(\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c)"
          R"(\u001d\u001e\u001f\"\\")");
  }
  SECTION("slash, DEL, U+2028/2029, non-ASCII and emoji are raw") {
    const std::string raw = "/\x7f\u2028\u2029\u00e9\u4e2d\U0001F600\uFFFF";
    CHECK(CanonicalJson(json(raw)) == "\"" + raw + "\"");
  }
  SECTION("keys are escaped the same way") {
    CHECK(CanonicalJson(json{{"a\nb\"", 1}}) == R"({"a\nb\"":1})");
  }
}

TEST_CASE("canonical JSON: keys sort by UTF-16 code units, not bytes", "[canonical_json]") {
  // node: Object.keys(o).sort() on these keys.
  json o = json::object();
  const std::vector<std::string> keys = {
      "\uFF01", "\U0001F600",          "a",      "\uE000", "\u00e9", "Z", "",
      "ab",     std::string("a\0", 2), "\u00ff", "\u0800"};
  for (std::size_t i = 0; i < keys.size(); ++i) o[keys[i]] = i;
  CHECK(CanonicalJson(o) ==
        "{\"\":6,\"Z\":5,\"a\":2,\"a\\u0000\":8,\"ab\":7,\"\u00e9\":4,\"\u00ff\":9,\"\u0800\":10,"
        "\"\U0001F600\":1,\"\uE000\":3,\"\uFF01\":0}");
  SECTION("nested") {
    const json nested = {{"\U0001F600", 1}, {"\uFF01", {{"\U00010000", 1}, {"\uFFFF", 2}}}};
    CHECK(CanonicalJson(nested) == "{\"\U0001F600\":1,\"\uFF01\":{\"\U00010000\":1,\"\uFFFF\":2}}");
  }
}

TEST_CASE("canonical JSON: nested objects sort at every level, arrays keep order",
          "[canonical_json]") {
  const json v = json::parse(R"({"b":{"d":[3,{"z":1,"y":null}],"c":"x"},"a":[]})");
  CHECK(CanonicalJson(v) == R"({"a":[],"b":{"c":"x","d":[3,{"y":null,"z":1}]}})");
  CHECK(CanonicalJson(json::parse("[3,1,2,\"b\",\"a\"]")) == R"([3,1,2,"b","a"])");
}

TEST_CASE("canonical JSON: an absent key is not written, a null one is", "[canonical_json]") {
  CHECK(CanonicalJson(json{{"a", 1}}) == R"({"a":1})");
  CHECK(CanonicalJson(json{{"a", 1}, {"b", nullptr}}) == R"({"a":1,"b":null})");
}

TEST_CASE("canonical JSON: values without a JSON text are run-fatal", "[canonical_json]") {
  CHECK_THROWS_AS(CanonicalJson(json::binary({1, 2, 3})), evalrun::Error);
  CHECK_THROWS_AS(CanonicalJson(json{{"a", json::binary({1})}}), evalrun::Error);
  CHECK_THROWS_AS(CanonicalJson(json::parse("{", nullptr, false)), evalrun::Error);
  SECTION("invalid UTF-8, in values and in keys") {
    CHECK_THROWS_AS(CanonicalJson(json(std::string("\xff"))), evalrun::Error);
    CHECK_THROWS_AS(CanonicalJson(json(std::string("\xc3"))), evalrun::Error);
    CHECK_THROWS_AS(CanonicalJson(json(std::string("\xc0\xaf"))), evalrun::Error);      // overlong
    CHECK_THROWS_AS(CanonicalJson(json(std::string("\xed\xa0\x80"))), evalrun::Error);  // D800
    CHECK_THROWS_AS(CanonicalJson(json{{std::string("k\xfe"), 1}}), evalrun::Error);
    CHECK_THROWS_WITH(CanonicalJson(json(std::string("ab\xff"))),
                      "canonical JSON: invalid UTF-8 at byte 2 of a string; only valid UTF-8 "
                      "can be hashed");
  }
}

TEST_CASE("canonical object in order: top level keeps the given order", "[canonical_json]") {
  const json b = {{"z", 1}, {"a", 2.5}};
  const json a = "x";
  CHECK(CanonicalObjectInOrder({{"z", &a}, {"b", &b}, {"missing", nullptr}, {"a", &a}}) ==
        R"({"z":"x","b":{"a":2.5,"z":1},"missing":null,"a":"x"})");
  CHECK(CanonicalObjectInOrder({}) == "{}");
}

TEST_CASE("canonical object in order: reproduces zx-bench scenarioHash", "[canonical_json]") {
  // Two real entries from shared/zx-bench/fixtures.json with their stored hashes (FORMAT.md,
  // section "scenarioHash").
  const char* const kFields[] = {"id",
                                 "dimension",
                                 "category",
                                 "difficulty",
                                 "language",
                                 "locale",
                                 "status",
                                 "tier",
                                 "promptTemplate",
                                 "sourceCode",
                                 "functionName",
                                 "expectedVerdict",
                                 "grader",
                                 "graderVersion",
                                 "scoring",
                                 "hiddenTests",
                                 "publicTests",
                                 "requirements",
                                 "schema",
                                 "constraints",
                                 "bugInvariants",
                                 "acceptablePatches",
                                 "unacceptablePatches",
                                 "outOfScope",
                                 "judgeHint",
                                 "responseMode",
                                 "outputPolicy",
                                 "answerFirst",
                                 "maxAnswerTokens",
                                 "maxReasoningTokens",
                                 "environmentImage",
                                 "seed",
                                 "goldSource",
                                 "goldVerifiedAt",
                                 "reviewStatus"};
  const auto entry = json::parse(GENERATE(
      as<std::string>{},
      // RM-CN-023
      R"json({"id":"RM-CN-023","dimension":"reasoning_math","category":"logical_reasoning","d)json"
      R"json(ifficulty":"adversarial","language":"general","locale":"zh-CN","status":"valid",)json"
      R"json("tier":"public_dev","promptTemplate":"某公司年会需要安排节目：\n- 共有6个节目：2)json"
      R"json(个不同的歌唱节目、2个不同的舞蹈节目、1个小品、1个魔术（六个节目均可区分）\n- 要)json"
      R"json(求：\n  1. 第一个节目必须是歌唱\n  2. 最后一个节目必须是魔术\n  3. 两个舞蹈不能)json"
      R"json(相邻\n  4. 小品不能在第2个或第3个位置\n\n请问有多少种不同的排列方案？\n\n答案格)json"
      R"json(式要求：推导可写在前文；最后一个非空行只输出下方模板规定的 ANSWER: 答案行，不附)json"
      R"json(加解释、计算过程或多个候选答案，不使用代码块包裹。多字段题须保持模板的字段名称和)json"
      R"json(字段顺序。数值等价的表示方式（如小数末尾零、合法千分位）均可接受，写出的单位必须)json"
      R"json(正确；需要舍入时严格按本题规定的精度计算，不允许数值偏差。\n\n最后一行输出格式：)json"
      R"json(ANSWER: [X]种","grader":"exact_answer_line","graderVersion":"exact_answer_v4","s)json"
      R"json(coring":{"type":"exact_answer_line","tolerance":0,"toleranceMode":"absolute","co)json"
      R"json(mparisonMode":"strict","answerUnit":"种"},"requirements":{"answer":12},"tags":[")json"
      R"json(chinese","combinatorics","permutation","constraints"],"scenarioVersion":"3.2.0",)json"
      R"json("scenarioHash":"6daf2a85974d06a5","goldSource":"docs/reviewed-question-bank-v5.m)json"
      R"json(d","reviewStatus":"verified"})json",
      // DE-CN-005
      R"json({"id":"DE-CN-005","dimension":"data_extraction","category":"ecommerce_reviews",")json"
      R"json(difficulty":"medium","language":"general","locale":"zh-CN","status":"valid","tie)json"
      R"json(r":"public_dev","promptTemplate":"请从以下评论中抽取价格和促销信息，输出 JSON：\)json"
      R"json(n\n\"用户周八在双十一购买了耐克Air Max 270，原价899元，使用了满500减100的优惠券)json"
      R"json(，又叠加了88VIP的95折，最终实付683.05元。尺码42，颜色黑白。评价：'鞋子很舒适，就)json"
      R"json(是码数偏小半码。' 订单号：TB202311110233\"\n\n输出契约（唯一有效要求）：仅输出一)json"
      R"json(个JSON 对象，不得使用 Markdown 代码块或附加解释。结构必须与契约完全一致，不得遗)json"
      R"json(漏或增加字段；字段路径及 JSON 类型为：original_price:number, coupon_amount:numbe)json"
      R"json(r, final_price:number, size:string。数字、布尔值和 null 不得写成字符串。","grade)json"
      R"json(r":"json_atomic_fields","graderVersion":"json_atomic_v3","scoring":{"type":"json)json"
      R"json(_atomic_fields","partialCredit":true},"requirements":{"expected":{"original_pric)json"
      R"json(e":899,"coupon_amount":100,"final_price":683.05,"size":"42"},"requiredFields":[")json"
      R"json(original_price","coupon_amount","final_price","size"],"fieldTypes":{"$":"object")json"
      R"json(,"original_price":"number","coupon_amount":"number","final_price":"number","size)json"
      R"json(":"string"},"outputPolicy":"json_only","allowAdditionalFields":false},"tags":["c)json"
      R"json(hinese","ecommerce","pricing","promotion"],"scenarioVersion":"3.0.0","scenarioHa)json"
      R"json(sh":"216289c12309da8c","outputPolicy":"raw_only","goldSource":"zxbench:data-extr)json"
      R"json(action-manual-review-2026-09-12","goldVerifiedAt":"2026-09-11T16:00:00.000Z","re)json"
      R"json(viewStatus":"verified"})json"));
  std::vector<std::pair<std::string, const json*>> fields;
  for (const char* name : kFields) {
    fields.emplace_back(name, entry.contains(name) ? &entry.at(name) : nullptr);
  }
  CAPTURE(entry.at("id"));
  CHECK(Sha256Hex(CanonicalObjectInOrder(fields)).substr(0, 16) ==
        entry.at("scenarioHash").get<std::string>());
}

TEST_CASE("canonical JSON: random values match the reference and re-parse unchanged",
          "[canonical_json][property]") {
  RandomJson random(20240611);
  for (int i = 0; i < 2000; ++i) {
    const json value = random.Value(0);
    const std::string text = CanonicalJson(value);
    CAPTURE(value.dump(), text);
    REQUIRE(text == RefCanonical(value));
    const json reparsed = json::parse(text);
    REQUIRE(reparsed == value);
    REQUIRE(CanonicalJson(reparsed) == text);
  }
}

TEST_CASE("EcmaNumber: random doubles round-trip with the fewest digits",
          "[canonical_json][property]") {
  RandomJson random(7);
  for (int i = 0; i < 20000; ++i) {
    const double d = random.Double();
    const std::string text = EcmaNumber(d);
    CAPTURE(d, text);
    REQUIRE(text == RefNumber(d));
    REQUIRE(std::strtod(text.c_str(), nullptr) == (d == 0 ? 0.0 : d));
  }
}

TEST_CASE("canonical JSON: JavaScript key order puts array indices first, numerically",
          "[canonical]") {
  const auto value = nlohmann::json::parse(R"({"b":3,"10":1,"9":2,"01":4,"4294967295":5,"a":{"2":0,"1":0}})");
  // node: JSON.stringify of objects built by inserting the keys in UTF-16 order.
  CHECK(evalrun::CanonicalJson(value, evalrun::KeyOrder::kJavaScript) ==
        R"({"9":2,"10":1,"01":4,"4294967295":5,"a":{"1":0,"2":0},"b":3})");
  CHECK(evalrun::CanonicalJson(value) ==
        R"({"01":4,"10":1,"4294967295":5,"9":2,"a":{"1":0,"2":0},"b":3})");
}
