// graders/zxbench/xml_reader: XML as ElementTree.fromstring (expat) reads it, the five predefined
// entities and character references, CDATA, comments and processing instructions dropped, line
// ends normalised, namespaces resolved, expat's error texts; then structuredFormats.py's
// <records><record><field> profile and its refusals.
#include "tests/support/catch.h"

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "graders/zxbench/xml_reader.h"

namespace evalrun::zx {
namespace {

using nlohmann::json;

json Parsed(const std::string& text) {
  std::string error;
  const auto value = ParseXml(text, &error);
  INFO(text << " -> " << error);
  REQUIRE(value.has_value());
  return *value;
}

std::string ErrorOf(const std::string& text) {
  std::string error;
  const auto value = ParseXml(text, &error);
  INFO(text);
  REQUIRE_FALSE(value.has_value());
  return error;
}

// One record holding `fields`.
std::string Record(const std::string& fields) {
  return "<records><record>" + fields + "</record></records>";
}

TEST_CASE("xml_reader: records become objects of strings, whitespace between elements ignored") {
  const std::string text =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<records>\n"
      "  <record>\n"
      "    <id>1</id>\n"
      "    <name> A  B </name>\n"
      "  </record>\n"
      "  <record><id>2</id><name/></record>\n"
      "</records>\n";
  CHECK(Parsed(text) == json::parse(R"([{"id":"1","name":" A  B "},{"id":"2","name":""}])"));
  CHECK(Parsed("<records/>") == json::array());
  CHECK(Parsed("<records><record/></records>") == json::parse("[{}]"));
  CHECK(Parsed("\xEF\xBB\xBF<records/>") == json::array());  // a BOM is dropped
  // Python's str.strip() counts U+00A0 as space, so it may stand between records.
  CHECK(Parsed("<records>\xC2\xA0<record/></records>") == json::parse("[{}]"));
}

TEST_CASE("xml_reader: entities, character references, CDATA, comments and line ends") {
  CHECK(Parsed(Record("<t>&lt;&gt;&amp;&apos;&quot;&#65;&#x42;&#x20AC;</t>")) ==
        json::parse(R"([{"t":"<>&'\"AB\u20ac"}])"));
  CHECK(Parsed(Record("<t>a<![CDATA[<b>&amp;</b>]]>z</t>")) ==
        json::parse(R"([{"t":"a<b>&amp;</b>z"}])"));
  CHECK(Parsed(Record("<t>a<!-- note -->b<?pi data?>c</t>")) == json::parse(R"([{"t":"abc"}])"));
  CHECK(Parsed(Record("<t>a\r\nb\rc</t>")) == json::parse(R"([{"t":"a\nb\nc"}])"));
  CHECK(Parsed(Record("<t>caf\xC3\xA9</t>")) == json::parse(R"([{"t":"caf\u00e9"}])"));
}

TEST_CASE("xml_reader: an empty field with null=\"true\" is null, other attributes refused") {
  CHECK(Parsed(Record("<v null=\"true\"/><w null='true'></w>")) ==
        json::parse(R"([{"v":null,"w":null}])"));
  const std::string only_null = "Only empty null=\"true\" fields may have attributes";
  CHECK(ErrorOf(Record("<v null=\"true\">x</v>")) == only_null);
  CHECK(ErrorOf(Record("<v null=\"false\"/>")) == only_null);
  CHECK(ErrorOf(Record("<v kind=\"a\">x</v>")) == only_null);
}

TEST_CASE("xml_reader: the records profile's refusals") {
  CHECK(ErrorOf("<rows/>") == "Expected records root");
  CHECK(ErrorOf("<records a=\"1\"/>") == "Expected records root");
  CHECK(ErrorOf("<records>text<record/></records>") == "Expected records root");
  CHECK(ErrorOf("<r:records xmlns:r=\"urn:x\"/>") == "Expected records root");  // {urn:x}records
  CHECK(ErrorOf("<records><item/></records>") == "Expected record elements only");
  CHECK(ErrorOf("<records><record id=\"1\"/></records>") == "Expected record elements only");
  CHECK(ErrorOf("<records><record/>junk</records>") == "Expected record elements only");
  CHECK(ErrorOf("<records><record xmlns=\"urn:y\"/></records>") == "Expected record elements only");
  const std::string field = "Duplicate/nested XML field or extra text";
  CHECK(ErrorOf(Record("<a>1</a><a>2</a>")) == field);
  CHECK(ErrorOf(Record("<a><b/></a>")) == field);
  CHECK(ErrorOf(Record("<a>1</a>extra")) == field);
  const std::string dtd = "DTD and entities are outside the published XML profile";
  CHECK(ErrorOf("<!DOCTYPE records><records/>") == dtd);
  CHECK(ErrorOf("<!doctype records><records/>") == dtd);  // compared upper-cased
  CHECK(ErrorOf("<records><!-- <!entity x --></records>") == dtd);
}

TEST_CASE("xml_reader: expat's refusals with the byte where they happen") {
  CHECK(ErrorOf("") == "XML: no element found (byte 0)");
  CHECK(ErrorOf("  \n") == "XML: no element found (byte 3)");
  CHECK(ErrorOf(Record("<a>&nbsp;</a>")) == "XML: undefined entity (byte 20)");
  CHECK(ErrorOf(Record("<a>&#0;</a>")) == "XML: reference to invalid character number (byte 20)");
  CHECK(ErrorOf(Record("<a>x]]>y</a>")) == "XML: not well-formed (invalid token) (byte 21)");
  CHECK(ErrorOf(Record("<a><![CDATA[x</a>")) == "XML: unclosed CDATA section (byte 20)");
  CHECK(ErrorOf("<records><record></records>") == "XML: mismatched tag (byte 27)");
  CHECK(ErrorOf("<records>\x01</records>") == "XML: not well-formed (invalid token) (byte 9)");
  CHECK(ErrorOf("text<records/>") == "XML: syntax error (byte 0)");
}

}  // namespace
}  // namespace evalrun::zx
