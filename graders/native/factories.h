#pragma once
// The factories of evalrun's own graders, one file each, named for it; the registry
// (graders/grader.cpp) calls each once.
#include <memory>

#include "graders/framework/grader.h"

namespace evalrun {

std::unique_ptr<Grader> MakeAnswerLineGrader();      // graders/native/answer_line.cpp
std::unique_ptr<Grader> MakeExactGrader();           // graders/native/exact.cpp
std::unique_ptr<Grader> MakeNumericGrader();         // graders/native/numeric.cpp
std::unique_ptr<Grader> MakeRegexGrader();           // graders/native/regex.cpp
std::unique_ptr<Grader> MakeContainsGrader();        // graders/native/contains.cpp ("contains")
std::unique_ptr<Grader> MakeExcludesGrader();        // graders/native/contains.cpp ("excludes")
std::unique_ptr<Grader> MakeJsonFieldsGrader();      // graders/native/json_fields.cpp
std::unique_ptr<Grader> MakeJsonSchemaGrader();      // graders/native/json_schema.cpp
std::unique_ptr<Grader> MakeCodeTestsGrader();       // graders/native/code_tests.cpp
std::unique_ptr<Grader> MakeCommandGrader();         // graders/native/command.cpp
std::unique_ptr<Grader> MakeRepoTestsGrader();               // graders/native/repo_tests.cpp

}  // namespace evalrun
