// graders/zxbench/csv_reader: CSV as Python's csv.reader(io.StringIO(text, newline=''),
// strict=True) reads it (quoted fields with line breaks and doubled quotes, every line ending,
// blank lines as empty rows, CPython's error texts), then structuredFormats.py's records.
#include "tests/support/catch.h"

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graders/zxbench/csv_reader.h"

namespace evalrun::zx {
namespace {

using nlohmann::json;
using Rows = std::vector<std::vector<std::string>>;

Rows Read(const std::string& text) {
  std::string error;
  const auto rows = ReadCsv(text, &error);
  INFO(text << " -> " << error);
  REQUIRE(rows.has_value());
  return *rows;
}

std::string ReadError(const std::string& text) {
  std::string error;
  const auto rows = ReadCsv(text, &error);
  INFO(text);
  REQUIRE_FALSE(rows.has_value());
  return error;
}

std::string ParseError(const std::string& text) {
  std::string error;
  const auto value = ParseCsv(text, &error);
  INFO(text);
  REQUIRE_FALSE(value.has_value());
  return error;
}

TEST_CASE("csv_reader: fields and rows, with every line ending") {
  CHECK(Read("a,b\n1,2\n") == Rows{{"a", "b"}, {"1", "2"}});
  CHECK(Read("a,b\r\n1,2\r\n") == Rows{{"a", "b"}, {"1", "2"}});
  CHECK(Read("a,b\r1,2") == Rows{{"a", "b"}, {"1", "2"}});  // a lone CR ends a line too
  CHECK(Read("a,b") == Rows{{"a", "b"}});                   // no final line break
  CHECK(Read("a,,") == Rows{{"a", "", ""}});
  CHECK(Read(",") == Rows{{"", ""}});
  CHECK(Read(" a , b ") == Rows{{" a ", " b "}});  // spaces are kept
  CHECK(Read("").empty());
}

TEST_CASE("csv_reader: a blank line is an empty row, as csv.reader yields []") {
  CHECK(Read("a\n\nb\n") == Rows{{"a"}, {}, {"b"}});
  CHECK(Read("\r\n") == Rows{{}});
}

TEST_CASE("csv_reader: quoted fields keep separators, doubled quotes and line breaks") {
  CHECK(Read("\"x,y\",z\n") == Rows{{"x,y", "z"}});
  CHECK(Read("\"say \"\"hi\"\"\"\n") == Rows{{"say \"hi\""}});
  CHECK(Read("a,b\n\"x\ny\",2\n") == Rows{{"a", "b"}, {"x\ny", "2"}});
  CHECK(Read("\"x\r\ny\"\r\n") == Rows{{"x\r\ny"}});
  CHECK(Read("\"\"") == Rows{{""}});
  CHECK(Read("\"\n\n\"") == Rows{{"\n\n"}});
  // A quote inside an unquoted field is an ordinary character.
  CHECK(Read("a\"b,c\n") == Rows{{"a\"b", "c"}});
}

TEST_CASE("csv_reader: strict mode refusals with CPython's texts") {
  CHECK(ReadError("\"abc") == "unexpected end of data");
  CHECK(ReadError("a,\"b\nc") == "unexpected end of data");
  CHECK(ReadError("\"a\"b,c\n") == "',' expected after '\"'");
  CHECK(ReadError("\"a\" ,c\n") == "',' expected after '\"'");
}

TEST_CASE("csv_reader: ParseCsv gives one object per data row, keyed by the header") {
  std::string error;
  const auto value = ParseCsv("id,name\n1,\"Ann, B.\"\n2,\n", &error);
  REQUIRE(value.has_value());
  CHECK(*value == json::parse(R"([{"id":"1","name":"Ann, B."},{"id":"2","name":""}])"));
  const auto header_only = ParseCsv("a,b\n", &error);
  REQUIRE(header_only.has_value());
  CHECK(*header_only == json::array());
}

TEST_CASE("csv_reader: ParseCsv refusals") {
  CHECK(ParseError("") == "Missing or duplicate CSV headers");
  CHECK(ParseError("\n") == "Missing or duplicate CSV headers");  // the header row is []
  CHECK(ParseError("a,a\n1,2\n") == "Missing or duplicate CSV headers");
  CHECK(ParseError("a,b\n1\n") == "CSV row width differs from header (row 2)");
  CHECK(ParseError("a,b\n1,2\n3,4,5\n") == "CSV row width differs from header (row 3)");
  CHECK(ParseError("a\n1\n\n2\n") == "CSV row width differs from header (row 3)");
  CHECK(ParseError("a,b\n\"1,2\n") == "CSV: unexpected end of data");
}

}  // namespace
}  // namespace evalrun::zx
