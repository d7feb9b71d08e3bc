// zx-bench's isolatedJavaJson contract (java_contract.h). Each adapter below turns one call's
// JSON arguments into Java statements appending one JSON text to the driver's output, as
// zx-bench's generator does: literals are written from the (already validated) arguments, so
// nothing the model wrote reaches the driver's text, and the expected values never do.
#include "graders/zxbench/java_contract.h"

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

constexpr std::array<std::string_view, 5> kBasic = {
    "int-array-average", "money-equality", "boxed-integer-equality", "decimal-ledger",
    "strict-date"};
constexpr std::array<std::string_view, 5> kAdvanced = {
    "file-first-line", "cache-compute", "singleton-publication", "squares-stress",
    "schema-cache-lifecycle"};
// The adapters whose candidate brings its own top-level classes (no Candidate wrapper).
constexpr std::array<std::string_view, 5> kOwnClasses = {
    "money-equality", "cache-compute", "singleton-publication", "squares-stress",
    "schema-cache-lifecycle"};

template <size_t N>
bool In(const std::array<std::string_view, N>& set, const json& v) {
  return v.is_string() &&
         std::find(set.begin(), set.end(), v.get_ref<const std::string&>()) != set.end();
}

double Num(const json& v) { return v.get<double>(); }

bool Int32(const json& v) {
  return IsIntegral(v) && Num(v) >= -2147483648.0 && Num(v) <= 2147483647.0;
}

bool IntIn(const json& v, double low, double high) {
  return Int32(v) && Num(v) >= low && Num(v) <= high;
}

bool SafeInteger(const json& v) {
  return IsIntegral(v) && std::fabs(Num(v)) <= 9007199254740991.0;
}

bool Str(const json& v, size_t max = 256) {
  return v.is_string() && Utf16Length(v.get_ref<const std::string&>()) <= max;
}

// /^-?[0-9]+(?:\.[0-9]+)?$/ (no m flag: `$` is the very end).
bool DecimalText(const json& v) {
  if (!Str(v, 64)) return false;
  const std::string& s = v.get_ref<const std::string&>();
  size_t i = s.size() > 0 && s[0] == '-' ? 1 : 0;
  const auto digits = [&] {
    const size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > from;
  };
  if (!digits()) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

// validCall: each adapter's argument shape.
bool ValidCall(const std::string& adapter, const json& a) {
  const size_t n = a.size();
  if (adapter == "int-array-average") {
    return n == 1 && a[0].is_array() && !a[0].empty() && a[0].size() <= 1000 &&
           std::all_of(a[0].begin(), a[0].end(), Int32);
  }
  if (adapter == "money-equality") {
    const auto money = [](const json& m) {
      return m.is_array() && m.size() == 2 && SafeInteger(m[0]) && Str(m[1], 32);
    };
    return n == 3 && OneOf(a[2], {"setSize", "hashEqual"}) && money(a[0]) && money(a[1]);
  }
  if (adapter == "boxed-integer-equality") {
    return n == 3 && Int32(a[0]) && Int32(a[1]) && OneOf(a[2], {"auto", "fresh"});
  }
  if (adapter == "decimal-ledger") {
    return n == 2 && a[0].is_array() && a[0].size() <= 100 &&
           std::all_of(a[0].begin(), a[0].end(), DecimalText) && DecimalText(a[1]);
  }
  if (adapter == "strict-date") return n == 1 && Str(a[0], 64);
  if (adapter == "file-first-line") {
    return n == 3 && Str(a[0], 4096) && OneOf(a[1], {"content", "leak"}) && IntIn(a[2], 1, 500);
  }
  if (adapter == "cache-compute") {
    return n == 2 && IntIn(a[0], 1, 64) && OneOf(a[1], {"serial", "calls", "value"});
  }
  if (adapter == "singleton-publication") {
    return n == 2 && IntIn(a[0], 1, 128) && OneOf(a[1], {"get", "identity", "volatile", "reset"});
  }
  if (adapter == "squares-stress") {
    return n == 3 && IntIn(a[0], 0, 2000000) && IntIn(a[1], 1, 20) &&
           OneOf(a[2], {"values", "stable", "unique", "perf"});
  }
  return adapter == "schema-cache-lifecycle" && n == 3 && IntIn(a[0], 1, 32) &&
         IntIn(a[1], 1, 200) &&
         OneOf(a[2], {"hit", "weak", "unload", "concurrent", "threadlocal"});
}

// A Java string literal: JSON.stringify's text with U+2028 and U+2029 escaped.
std::string JavaString(const json& v) {
  std::string quoted;
  js::AppendJsString(quoted, v.get<std::string>());
  std::string out;
  for (size_t i = 0; i < quoted.size(); ++i) {
    if (quoted.compare(i, 3, "\xE2\x80\xA8") == 0 || quoted.compare(i, 3, "\xE2\x80\xA9") == 0) {
      out += quoted[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += quoted[i];
    }
  }
  return out;
}

std::string Number(const json& v) { return js::JsNumberString(v.get<double>()); }

// `"\"" + v + "\""` or "null": a returned string is quoted, not escaped, as in zx-bench.
std::string QuotedOrNull(const std::string& var) {
  return var + " == null ? \"null\" : \"\\\"\" + " + var + " + \"\\\"\"";
}

// The statements for call `i` (callSource).
std::string CallSource(const std::string& adapter, const std::string& e, const json& a,
                       size_t index) {
  const std::string i = std::to_string(index);
  if (adapter == "int-array-average") {
    std::string ints;
    for (const json& x : a[0]) ints += (ints.empty() ? "" : ",") + Number(x);
    return "double v" + i + " = Candidate." + e + "(new int[]{" + ints + "}); add(out, " +
           "Double.isFinite(v" + i + ") ? Double.toString(v" + i + ") : \"NON_FINITE\");";
  }
  if (adapter == "money-equality") {
    const auto money = [&](const json& m) {
      return "new " + e + "(" + Number(m[0]) + "L, " + JavaString(m[1]) + ")";
    };
    if (a[2] == "setSize") {
      return "java.util.Set<" + e + "> s" + i + " = new java.util.HashSet<>(); s" + i +
             ".add(" + money(a[0]) + "); s" + i + ".add(" + money(a[1]) +
             "); add(out, Integer.toString(s" + i + ".size()));";
    }
    return "add(out, Boolean.toString((" + money(a[0]) + ").hashCode() == (" + money(a[1]) +
           ").hashCode()));";
  }
  if (adapter == "boxed-integer-equality") {
    const bool fresh = a[2] == "fresh";
    const auto boxed = [&](const json& x) {
      return (fresh ? "new Integer(" : "Integer.valueOf(") + Number(x) + ")";
    };
    return "add(out, Boolean.toString(Candidate." + e + "(" + boxed(a[0]) + ", " + boxed(a[1]) +
           ")));";
  }
  if (adapter == "decimal-ledger") {
    std::string values;
    for (const json& x : a[0]) {
      values += (values.empty() ? "" : ", ") + std::string("new java.math.BigDecimal(") +
                JavaString(x) + ")";
    }
    return "add(out, Boolean.toString(Candidate." + e + "(java.util.Arrays.asList(" + values +
           "), new java.math.BigDecimal(" + JavaString(a[1]) + "))));";
  }
  if (adapter == "strict-date") {
    return "String v" + i + " = Candidate." + e + "(" + JavaString(a[0]) + "); add(out, " +
           QuotedOrNull("v" + i) + ");";
  }
  if (adapter == "file-first-line") {
    if (a[1] == "content") {
      return "try { java.nio.file.Path p" + i +
             " = java.nio.file.Files.createTempFile(\"zx\", \".txt\"); "
             "java.nio.file.Files.writeString(p" + i + ", " + JavaString(a[0]) + "); String v" +
             i + " = Candidate." + e + "(p" + i + ".toString()); java.nio.file.Files.deleteIfExists(p" +
             i + "); add(out, " + QuotedOrNull("v" + i) +
             "); } catch (Exception e) { add(out, \"\\\"ERROR\\\"\"); }";
    }
    return "int b" + i + " = fds(); for (int j = 0; j < " + Number(a[2]) +
           "; j++) try { Candidate." + e + "(\"/proc/self/mem\"); } catch (Exception ignored) {} "
           "int a" + i + " = fds(); add(out, Boolean.toString(a" + i + " - b" + i + " <= 10));";
  }
  if (adapter == "cache-compute") {
    const std::string head = "Cache c" + i + " = new Cache(); java.util.concurrent.atomic.AtomicInteger n" +
                             i + " = new java.util.concurrent.atomic.AtomicInteger(); ";
    if (a[1] == "serial") {
      return head + "java.util.function.Supplier<Integer> s" + i + " = () -> { n" + i +
             ".incrementAndGet(); return 42; }; int x" + i + " = c" + i +
             ".getOrCompute(\"a\", s" + i + "); int y" + i + " = c" + i +
             ".getOrCompute(\"a\", s" + i + "); add(out, \"[\" + n" + i + ".get() + \",\" + y" +
             i + " + \"]\");";
    }
    const std::string result = a[1] == "calls"
                                   ? "Integer.toString(n" + i + ".get())"
                                   : "Integer.toString(c" + i + ".getOrCompute(\"k\", () -> 99))";
    return head + "java.util.concurrent.CountDownLatch start" + i +
           " = new java.util.concurrent.CountDownLatch(1); Thread[] ts" + i + " = new Thread[" +
           Number(a[0]) + "]; for (int j = 0; j < ts" + i + ".length; j++) ts" + i +
           "[j] = new Thread(() -> { try { start" + i + ".await(); } catch (Exception e) {} c" + i +
           ".getOrCompute(\"k\", () -> { n" + i +
           ".incrementAndGet(); try { Thread.sleep(20); } catch (Exception e) {} return 99; }); "
           "}); for (Thread t : ts" + i + ") t.start(); start" + i + ".countDown(); for (Thread t : ts" +
           i + ") try { t.join(); } catch (Exception e) {} add(out, " + result + ");";
  }
  if (adapter == "singleton-publication") {
    const std::string reset = "java.lang.reflect.Field f" + i +
                              " = ConfigHolder.class.getDeclaredField(\"instance\"); f" + i +
                              ".setAccessible(true); f" + i + ".set(null, null); ";
    const std::string env = "\"\\\"\" + ConfigHolder.getInstance().get(\"env\") + \"\\\"\"";
    if (a[1] == "volatile") {
      return "try { add(out, Boolean.toString(java.lang.reflect.Modifier.isVolatile("
             "ConfigHolder.class.getDeclaredField(\"instance\").getModifiers()))); } "
             "catch (Exception e) { add(out, \"false\"); }";
    }
    if (a[1] == "get") return "add(out, " + env + ");";
    if (a[1] == "reset") {
      return "try { " + reset + "add(out, " + env + "); } catch (Exception e) { add(out, \"null\"); }";
    }
    return "try { " + reset + "java.util.Set<ConfigHolder> s" + i +
           " = java.util.Collections.synchronizedSet(java.util.Collections.newSetFromMap(new "
           "java.util.IdentityHashMap<>())); java.util.concurrent.CountDownLatch l" + i +
           " = new java.util.concurrent.CountDownLatch(1); Thread[] ts" + i + " = new Thread[" +
           Number(a[0]) + "]; for (int j = 0; j < ts" + i + ".length; j++) ts" + i +
           "[j] = new Thread(() -> { try { l" + i + ".await(); } catch (Exception e) {} s" + i +
           ".add(ConfigHolder.getInstance()); }); for (Thread t : ts" + i + ") t.start(); l" + i +
           ".countDown(); for (Thread t : ts" + i + ") t.join(); add(out, Integer.toString(s" + i +
           ".size())); } catch (Exception e) { add(out, \"-1\"); }";
  }
  if (adapter == "squares-stress") {
    const std::string n = Number(a[0]);
    const std::string mode = a[2].get<std::string>();
    if (mode == "values") return "add(out, jsonInts(Squares.squares(" + n + ")));";
    const std::string q = "java.util.List<Integer> q" + i + " = Squares.squares(" + n + "); ";
    if (mode == "stable") {
      return q + "boolean z" + i + " = ascending(q" + i + "); for (int j = 1; j < " +
             Number(a[1]) + "; j++) z" + i + " &= q" + i + ".equals(Squares.squares(" + n +
             ")); add(out, \"[\" + q" + i + ".size() + \",\" + z" + i + " + \"]\");";
    }
    if (mode == "unique") {
      return q + "add(out, \"[\" + q" + i + ".size() + \",\" + (new java.util.HashSet<Integer>(q" +
             i + ").size() == " + n + ") + \"]\");";
    }
    return "long b" + i + " = System.nanoTime(); " + q + "long ms" + i + " = (System.nanoTime() - b" +
           i + ") / 1000000L; add(out, \"[\" + q" + i + ".size() + \",\" + (ms" + i +
           " <= 15000) + \"]\");";
  }
  // schema-cache-lifecycle
  const std::string action = a[2].get<std::string>();
  if (action == "weak") {
    return "try { java.lang.reflect.Field f" + i +
           " = SchemaCache.class.getDeclaredField(\"CACHE\"); f" + i +
           ".setAccessible(true); String g" + i + " = f" + i +
           ".getGenericType().getTypeName(); add(out, Boolean.toString(f" + i +
           ".get(null) instanceof java.util.WeakHashMap && g" + i +
           ".contains(\"ClassLoader\") && g" + i +
           ".contains(\"WeakReference\"))); } catch (Throwable e) { add(out, \"false\"); }";
  }
  if (action == "hit") {
    return "try { Class<?> a" + i + " = SchemaCache.load(\"java.util.ArrayList\"); Class<?> b" + i +
           " = SchemaCache.load(\"java.util.ArrayList\"); add(out, Boolean.toString(a" + i +
           " == b" + i + ")); } catch (Exception e) { add(out, \"false\"); }";
  }
  if (action == "unload") {
    return "try { SchemaCache.load(\"java.lang.String\"); SchemaCache.unload(); "
           "SchemaCache.unload(); SchemaCache.unload(); add(out, Boolean.toString("
           "SchemaCache.load(\"java.lang.String\") == String.class)); } catch (Throwable e) { "
           "add(out, \"false\"); }";
  }
  if (action == "threadlocal") {
    return "try { java.lang.reflect.Field f" + i +
           " = SchemaCache.class.getDeclaredField(\"SCRATCH\"); f" + i +
           ".setAccessible(true); ThreadLocal<?> t" + i + " = (ThreadLocal<?>) f" + i +
           ".get(null); SchemaCache.load(\"java.util.ArrayList\"); Object b" + i + " = t" + i +
           ".get(); SchemaCache.unload(); Object a" + i + " = t" + i +
           ".get(); add(out, Boolean.toString(b" + i + " != null && a" + i +
           " == null)); } catch (Throwable e) { add(out, \"false\"); }";
  }
  return "java.util.concurrent.atomic.AtomicReference<Throwable> er" + i +
         " = new java.util.concurrent.atomic.AtomicReference<>(); Thread[] ts" + i +
         " = new Thread[" + Number(a[0]) + "]; for (int j = 0; j < ts" + i + ".length; j++) ts" + i +
         "[j] = new Thread(() -> { try { for (int k = 0; k < " + Number(a[1]) +
         "; k++) { SchemaCache.load(\"java.util.ArrayList\"); if (k % 20 == 0) "
         "SchemaCache.unload(); } } catch (Throwable t) { er" + i +
         ".compareAndSet(null, t); } }); for (Thread t : ts" + i + ") t.start(); for (Thread t : ts" +
         i + ") try { t.join(); } catch (Exception e) {} add(out, Boolean.toString(er" + i +
         ".get() == null));";
}

}  // namespace

bool ValidJavaJsonContract(const json& c) {
  if (!c.is_object()) return false;
  const json& protocol = Member(c, "protocol");
  const json& adapter = Member(c, "adapter");
  if (!OneOf(protocol, {"isolated-java-json-v1", "isolated-java-json-v2"}) ||
      !(In(kBasic, adapter) || In(kAdvanced, adapter)) ||
      (protocol == "isolated-java-json-v2") != In(kAdvanced, adapter) ||
      !IsIdentifier(Member(c, "entrypoint"), /*dots=*/true)) {
    return false;
  }
  const std::string name = adapter.get<std::string>();
  return ValidAdapterCases(Member(c, "cases"), 100, true,
                           [&](const json& args) { return ValidCall(name, args); });
}

bool JavaContractAdvanced(const json& c) { return Member(c, "protocol") == "isolated-java-json-v2"; }

std::string JavaCandidateSource(const std::string& patch, const json& contract) {
  // code.trim().replace(/\bpublic\s+(class|interface|enum)\b/g, '$1'), on the text as it is
  // (strings and comments included).
  const std::string code(js::JsTrim(patch));
  const auto word = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  std::string clean;
  clean.reserve(code.size());
  for (size_t i = 0; i < code.size();) {
    if (code.compare(i, 6, "public") == 0 && (i == 0 || !word(code[i - 1]))) {
      size_t j = i + 6;
      size_t k = j;
      while (k < code.size()) {
        size_t next = k;
        const char32_t cp = js::NextCodePoint(code, next);
        if (!js::IsJsSpace(cp)) break;
        k = next;
      }
      bool dropped = false;
      if (k > j) {
        for (const std::string_view kw : {"class", "interface", "enum"}) {
          const size_t end = k + kw.size();
          if (code.compare(k, kw.size(), kw) == 0 && (end == code.size() || !word(code[end]))) {
            clean.append(kw);
            i = end;
            dropped = true;
            break;
          }
        }
      }
      if (dropped) continue;
    }
    clean += code[i++];
  }
  const bool own = In(kOwnClasses, contract["adapter"]);
  const std::string body = own ? clean : "class Candidate {\n" + clean + "\n}";
  return "import java.io.*;\nimport java.util.*;\n" + body;
}

std::string JavaDriverSource(const json& contract, const json& calls) {
  const std::string adapter = contract["adapter"].get<std::string>();
  const std::string entry = contract["entrypoint"].get<std::string>();
  std::string body;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (i > 0) body += "\n";
    body += "    " + CallSource(adapter, entry, calls[i], i);
  }
  return "class Driver {\n"
         "  static boolean first = true;\n"
         "  static void add(StringBuilder b, String v) { if (!first) b.append(','); first = false; "
         "b.append(v); }\n"
         "  static int fds() { String[] x = new java.io.File(\"/proc/self/fd\").list(); "
         "return x == null ? -1 : x.length; }\n"
         "  static boolean ascending(java.util.List<Integer> x) { for (int i = 1; i < x.size(); "
         "i++) if (x.get(i) < x.get(i - 1)) return false; return true; }\n"
         "  static String jsonInts(java.util.List<Integer> x) { StringBuilder b = new "
         "StringBuilder(\"[\"); for (int i = 0; i < x.size(); i++) { if (i > 0) b.append(','); "
         "b.append(x.get(i)); } return b.append(']').toString(); }\n"
         "  public static void main(String[] x) {\n"
         "    StringBuilder out = new StringBuilder(\"[\");\n" +
         body +
         "\n    System.out.print(out.append(']'));\n"
         "  }\n"
         "}\n";
}

}  // namespace evalrun::zx
