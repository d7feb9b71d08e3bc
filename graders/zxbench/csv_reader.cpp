// CSV as structuredFormats.py reads it (graders/zxbench/csv_reader.h). Moved from
// structured_contract.cpp.
#include "graders/zxbench/csv_reader.h"

#include <set>
#include <utility>

namespace evalrun::zx {
namespace {

using nlohmann::json;

// The excel dialect's state machine of CPython's Modules/_csv.c, fed line by line as StringIO
// with newline='' splits (after "\n", "\r\n" or a lone "\r"), each line followed by an
// end-of-line mark. Quoted fields keep their line breaks.
class CsvReader {
 public:
  std::optional<std::vector<std::vector<std::string>>> Read(std::string_view text) {
    std::vector<std::vector<std::string>> rows;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t end = pos;
      while (end < text.size() && text[end] != '\n' && text[end] != '\r') ++end;
      if (end < text.size())
        end += (text[end] == '\r' && end + 1 < text.size() && text[end + 1] == '\n') ? 2 : 1;
      for (size_t k = pos; k < end; ++k) {
        if (!Char(text[k])) return std::nullopt;
      }
      EndOfLine();
      if (state_ == kStartRecord) {
        rows.push_back(std::move(fields_));
        fields_.clear();
      }
      pos = end;
    }
    if (!field_.empty() || state_ == kInQuotedField) {
      error_ = "unexpected end of data";
      return std::nullopt;
    }
    return rows;
  }
  const std::string& error() const { return error_; }

 private:
  enum State { kStartRecord, kStartField, kInField, kInQuotedField, kQuoteInQuotedField, kEatCrnl };

  void Save() {
    fields_.push_back(std::move(field_));
    field_.clear();
  }

  bool Char(char c) {
    const bool newline = c == '\n' || c == '\r';
    switch (state_) {
      case kStartRecord:
        if (newline) {
          state_ = kEatCrnl;
          return true;
        }
        state_ = kStartField;
        [[fallthrough]];
      case kStartField:
        if (newline) {
          Save();
          state_ = kEatCrnl;
        } else if (c == '"') {
          state_ = kInQuotedField;
        } else if (c == ',') {
          Save();
        } else {
          field_ += c;
          state_ = kInField;
        }
        return true;
      case kInField:
        if (newline) {
          Save();
          state_ = kEatCrnl;
        } else if (c == ',') {
          Save();
          state_ = kStartField;
        } else {
          field_ += c;
        }
        return true;
      case kInQuotedField:
        if (c == '"') {
          state_ = kQuoteInQuotedField;
        } else {
          field_ += c;
        }
        return true;
      case kQuoteInQuotedField:
        if (c == '"') {
          field_ += '"';
          state_ = kInQuotedField;
        } else if (c == ',') {
          Save();
          state_ = kStartField;
        } else if (newline) {
          Save();
          state_ = kEatCrnl;
        } else {
          error_ = "',' expected after '\"'";
          return false;
        }
        return true;
      case kEatCrnl:
        if (!newline) {
          error_ = "new-line character seen in unquoted field";
          return false;
        }
        return true;
    }
    return true;
  }

  void EndOfLine() {
    switch (state_) {
      case kStartField:
      case kInField:
      case kQuoteInQuotedField:
        Save();
        state_ = kStartRecord;
        break;
      case kEatCrnl:
        state_ = kStartRecord;
        break;
      case kStartRecord:
      case kInQuotedField:
        break;
    }
  }

  State state_ = kStartRecord;
  std::vector<std::string> fields_;
  std::string field_;
  std::string error_;
};

}  // namespace

std::optional<std::vector<std::vector<std::string>>> ReadCsv(std::string_view text,
                                                             std::string* error) {
  CsvReader reader;
  auto rows = reader.Read(text);
  if (!rows && error != nullptr) *error = reader.error();
  return rows;
}

// structuredFormats.py, fmt == 'csv': one object per data row, keyed by a unique header row.
std::optional<json> ParseCsv(std::string_view text, std::string* error) {
  CsvReader reader;
  const auto rows = reader.Read(text);
  if (!rows) {
    *error = "CSV: " + reader.error();
    return std::nullopt;
  }
  const auto& header = rows->empty() ? std::vector<std::string>() : (*rows)[0];
  if (header.empty() ||
      std::set<std::string>(header.begin(), header.end()).size() != header.size()) {
    *error = "Missing or duplicate CSV headers";
    return std::nullopt;
  }
  json value = json::array();
  for (size_t r = 1; r < rows->size(); ++r) {
    if ((*rows)[r].size() != header.size()) {
      *error = "CSV row width differs from header (row " + std::to_string(r + 1) + ")";
      return std::nullopt;
    }
  }
  for (size_t r = 1; r < rows->size(); ++r) {
    json row = json::object();
    for (size_t k = 0; k < header.size(); ++k) row[header[k]] = (*rows)[r][k];
    value.push_back(std::move(row));
  }
  return value;
}

}  // namespace evalrun::zx
