#pragma once
// XML as zx-bench's structuredFormats.py reads it: ElementTree.fromstring (expat, namespaces
// resolved), then the <records><record><field>... profile.
//
// The reader is non-validating XML 1.0 with the checks expat makes: well-formedness, the five
// predefined entities and character references only, namespace prefixes bound, XML 1.0
// fifth-edition name characters. Text follows ElementTree's text/tail split (comments and
// processing instructions dropped, their neighbouring text joined; CDATA is text).
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace evalrun::zx {

// structuredFormats.py, fmt == 'xml': an array with one object per <record>, each <field> its
// text (a string) or null for an empty <field null="true"/>; or nullopt with *error: the
// reader's "XML: <expat's message> (byte N)" ("not well-formed (invalid token)", "mismatched
// tag", "undefined entity", "unbound prefix", ...; N counts bytes after line ends are
// normalised), or the profile's ("Expected records root", "Expected record elements only",
// "Duplicate/nested XML field or extra text", "Only empty null=\"true\" fields may have
// attributes", "DTD and entities are outside the published XML profile").
std::optional<nlohmann::json> ParseXml(std::string_view text, std::string* error);

}  // namespace evalrun::zx
