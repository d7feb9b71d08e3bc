// zx-bench's isolatedCsharpJson contract (csharp_contract.h). The statements each adapter
// generates follow zx-bench's generator; only the C# dialect differs where mcs needs it (no
// `object?`, no target-typed `new()`), and System.Text.Json's Serialize is a small writer.
#include "graders/zxbench/csharp_contract.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "core/js_value.h"
#include "graders/zxbench/common.h"
#include "graders/zxbench/js_json.h"
#include "graders/zxbench/node_contracts.h"

namespace evalrun::zx {

using nlohmann::json;

namespace {

constexpr std::array<std::string_view, 5> kBasic = {"counter-delegates", "decimal-round",
                                                    "metrics-record", "money-equality",
                                                    "decimal-sum"};
constexpr std::array<std::string_view, 2> kAdvanced = {"report-sync-context", "header-span"};

template <size_t N>
bool In(const std::array<std::string_view, N>& set, const json& v) {
  return v.is_string() &&
         std::find(set.begin(), set.end(), v.get_ref<const std::string&>()) != set.end();
}

bool Int(const json& v, double low = 0, double high = 1000) {
  return IsIntegral(v) && v.get<double>() >= low && v.get<double>() <= high;
}

bool Str(const json& v, size_t max = 64) {
  return v.is_string() && Utf16Length(v.get_ref<const std::string&>()) <= max;
}

// /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/ on a string of at most 64 UTF-16 units.
bool Decimal(const json& v) {
  if (!Str(v)) return false;
  const std::string& s = v.get_ref<const std::string&>();
  size_t i = !s.empty() && s[0] == '-' ? 1 : 0;
  if (i >= s.size()) return false;
  if (s[i] == '0') {
    ++i;
  } else if (s[i] >= '1' && s[i] <= '9') {
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  } else {
    return false;
  }
  if (i < s.size() && s[i] == '.') {
    const size_t from = ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == from) return false;
  }
  return i == s.size();
}

bool ValidCall(const std::string& adapter, const json& a) {
  const size_t n = a.size();
  if (adapter == "counter-delegates") {
    return n == 2 && Int(a[0], 1, 1000) && OneOf(a[1], {"count", "values"});
  }
  if (adapter == "decimal-round") return n == 1 && Decimal(a[0]);
  if (adapter == "metrics-record") return n == 1 && Int(a[0], 0, 1000);
  if (adapter == "money-equality") {
    const auto money = [](const json& m) {
      return m.is_array() && m.size() == 2 && Decimal(m[0]) && Str(m[1], 32);
    };
    return n == 3 && OneOf(a[2], {"singleSize", "setSize", "contains"}) && money(a[0]) &&
           money(a[1]);
  }
  if (adapter == "decimal-sum") {
    return n == 2 && a[0].is_array() && a[0].size() <= 100 &&
           std::all_of(a[0].begin(), a[0].end(), Decimal) && Int(a[1], 1, 1000);
  }
  if (adapter == "report-sync-context") {
    return n == 5 && (a[0] == 200 || a[0] == 404) && Str(a[1], 64) && Int(a[2], 0, 500) &&
           OneOf(a[3], {"report", "plain", "http-error", "repeat"}) && Int(a[4], 1, 3);
  }
  return adapter == "header-span" && n == 3 && Str(a[0], 1024) &&
         OneOf(a[1], {"pair", "valid", "key", "alloc"}) && Int(a[2], 1, 100000);
}

std::string CsString(const json& v) {  // JSON.stringify's text, a C# string literal
  std::string out;
  js::AppendJsString(out, v.get<std::string>());
  return out;
}

std::string Number(const json& v) { return js::JsNumberString(v.get<double>()); }

std::string ParseDecimal(const json& v) {
  return "decimal.Parse(" + CsString(v) + ", CultureInfo.InvariantCulture)";
}

std::string CallSource(const std::string& adapter, const std::string& e, const json& a,
                       size_t index) {
  const std::string i = std::to_string(index);
  if (adapter == "counter-delegates") {
    if (a[1] == "count") return "Add(Candidate." + e + "(" + Number(a[0]) + ").Count);";
    return "var c" + i + " = Candidate." + e + "(" + Number(a[0]) + "); var a" + i +
           " = new int[c" + i + ".Count]; for (int j = 0; j < c" + i + ".Count; j++) a" + i +
           "[j] = c" + i + "[j](); Add(a" + i + ");";
  }
  if (adapter == "decimal-round") {
    return "Add(Candidate." + e + "(" + ParseDecimal(a[0]) +
           ").ToString(\"G29\", CultureInfo.InvariantCulture));";
  }
  if (adapter == "metrics-record") {
    return "var m" + i + " = new Metrics(); for (int j = 0; j < " + Number(a[0]) + "; j++) m" + i +
           ".Record(); Add(m" + i + ".Total.Value);";
  }
  if (adapter == "money-equality") {
    const auto money = [&](const json& m) {
      return "new " + e + " { Amount = " + ParseDecimal(m[0]) + ", Currency = " + CsString(m[1]) +
             " }";
    };
    const std::string set = "var s" + i + " = new HashSet<" + e + ">(); s" + i + ".Add(" +
                            money(a[0]) + "); ";
    if (a[2] == "singleSize") return set + "Add(s" + i + ".Count);";
    if (a[2] == "setSize") return set + "s" + i + ".Add(" + money(a[1]) + "); Add(s" + i + ".Count);";
    return set + "Add(s" + i + ".Contains(" + money(a[1]) + "));";
  }
  // decimal-sum (report-sync-context and header-span never get here: see
  // CsharpAdapterUnsupported)
  std::string adds;
  for (const json& v : a[0]) {
    adds += "p" + i + ".Add(double.Parse(" + CsString(v) + ", CultureInfo.InvariantCulture)); ";
  }
  return "var p" + i + " = new List<double>(); for (int j = 0; j < " + Number(a[1]) + "; j++) { " +
         adds + "} var v" + i + " = Candidate." + e + "(p" + i + ".ToArray()); Add(((decimal)v" + i +
         ").ToString(\"G29\", CultureInfo.InvariantCulture));";
}

// System.Text.Json's Serialize for the values the adapters produce, in C# 6.
constexpr std::string_view kJsonWriter = R"CS(
  static string Json(object v) {
    if (v == null) return "null";
    if (v is bool) return (bool)v ? "true" : "false";
    if (v is string || v is char) return Quote(v.ToString());
    if (v is int || v is long || v is short || v is byte || v is sbyte || v is uint || v is ulong ||
        v is ushort) {
      return Convert.ToString(v, CultureInfo.InvariantCulture);
    }
    if (v is decimal) return ((decimal)v).ToString(CultureInfo.InvariantCulture);
    if (v is double || v is float) {
      double d = Convert.ToDouble(v, CultureInfo.InvariantCulture);
      if (double.IsNaN(d) || double.IsInfinity(d)) throw new ArgumentException("not a JSON number");
      return d.ToString("R", CultureInfo.InvariantCulture);
    }
    var map = v as System.Collections.IDictionary;
    if (map != null) {
      var parts = new List<string>();
      foreach (System.Collections.DictionaryEntry entry in map) {
        parts.Add(Quote(Convert.ToString(entry.Key, CultureInfo.InvariantCulture)) + ":" + Json(entry.Value));
      }
      return "{" + string.Join(",", parts) + "}";
    }
    var items = v as System.Collections.IEnumerable;
    if (items != null) {
      var parts = new List<string>();
      foreach (object item in items) parts.Add(Json(item));
      return "[" + string.Join(",", parts) + "]";
    }
    return "{}";
  }
  static string Quote(string s) {
    var b = new System.Text.StringBuilder("\"");
    foreach (char c in s) {
      if (c == '"') b.Append("\\\"");
      else if (c == '\\') b.Append("\\\\");
      else if (c < ' ') b.Append("\\u").Append(((int)c).ToString("x4"));
      else b.Append(c);
    }
    return b.Append('"').ToString();
  }
)CS";

}  // namespace

bool ValidCsharpJsonContract(const json& c) {
  if (!c.is_object()) return false;
  const json& protocol = Member(c, "protocol");
  const json& adapter = Member(c, "adapter");
  if (!OneOf(protocol, {"isolated-csharp-json-v1", "isolated-csharp-json-v2"}) ||
      !(In(kBasic, adapter) || In(kAdvanced, adapter)) ||
      (protocol == "isolated-csharp-json-v2") != In(kAdvanced, adapter) ||
      !IsIdentifier(Member(c, "entrypoint"), /*dots=*/true)) {
    return false;
  }
  const std::string name = adapter.get<std::string>();
  return ValidAdapterCases(Member(c, "cases"), 100, true,
                           [&](const json& args) { return ValidCall(name, args); });
}

bool CsharpContractAdvanced(const json& c) {
  return Member(c, "protocol") == "isolated-csharp-json-v2";
}

std::string CsharpAdapterUnsupported(const json& c) {
  const json& adapter = Member(c, "adapter");
  if (adapter == "report-sync-context") {
    return "evalrun runs C# with Mono, which cannot stand in for .NET 8 here: the "
           "report-sync-context adapter observes .NET's HttpClient under a synchronization "
           "context";
  }
  if (adapter == "header-span") {
    return "evalrun runs C# with Mono, which cannot stand in for .NET 8 here: the header-span "
           "adapter needs Span<T>";
  }
  return {};
}

std::string CsharpCandidateSource(const std::string& patch, const json& contract) {
  const std::string clean(js::JsTrim(patch));
  const bool wrapped = OneOf(contract["adapter"], {"counter-delegates", "decimal-round",
                                                   "decimal-sum"});
  const std::string body = wrapped ? "public static class Candidate {\n" + clean + "\n}" : clean;
  return "using System;\nusing System.Collections.Generic;\nusing System.Net.Http;\n"
         "using System.Threading;\nusing System.Threading.Tasks;\n" +
         body;
}

std::string CsharpDriverSource(const json& contract, const json& calls) {
  const std::string adapter = contract["adapter"].get<std::string>();
  const std::string entry = contract["entrypoint"].get<std::string>();
  std::string body;
  for (size_t i = 0; i < calls.size(); ++i) {
    body += "    " + CallSource(adapter, entry, calls[i], i) + "\n";
  }
  return "using System;\nusing System.Collections.Generic;\nusing System.Globalization;\n"
         "using System.Threading;\nusing System.Net.Http;\n"
         "public static class Driver {\n"
         "  static readonly List<object> Out = new List<object>();\n"
         "  static void Add(object v) { Out.Add(v); }\n" +
         std::string(kJsonWriter) +
         "  public static void Main() {\n" + body +
         "    Console.Write(Json(Out));\n"
         "  }\n"
         "}\n";
}

}  // namespace evalrun::zx
