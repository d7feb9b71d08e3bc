#pragma once
// The factories of the built-in graders, called once by GraderRegistry's constructor
// (graders/grader.cpp). One grader per file, named for it.
#include <memory>

#include "graders/grader.h"

namespace evalrun {

std::unique_ptr<Grader> MakeAnswerLineGrader();      // graders/answer_line.cpp
std::unique_ptr<Grader> MakeExactGrader();           // graders/exact.cpp
std::unique_ptr<Grader> MakeNumericGrader();         // graders/numeric.cpp
std::unique_ptr<Grader> MakeRegexGrader();           // graders/regex.cpp
std::unique_ptr<Grader> MakeContainsGrader();        // graders/contains.cpp ("contains")
std::unique_ptr<Grader> MakeExcludesGrader();        // graders/contains.cpp ("excludes")
std::unique_ptr<Grader> MakeJsonFieldsGrader();      // graders/json_fields.cpp
std::unique_ptr<Grader> MakeJsonSchemaGrader();      // graders/json_schema.cpp
std::unique_ptr<Grader> MakeCodeTestsGrader();       // graders/code_tests.cpp
std::unique_ptr<Grader> MakeCommandGrader();         // graders/command.cpp
std::unique_ptr<Grader> MakeZxExactAnswerLineGrader();   // graders/zx_exact_answer_line.cpp
std::unique_ptr<Grader> MakeZxJsonAtomicFieldsGrader();  // graders/zx_json_atomic_fields.cpp
std::unique_ptr<Grader> MakeZxInstructionChecklistGrader();  // graders/zx_instruction_checklist.cpp
std::unique_ptr<Grader> MakeZxStructuredContractGrader();    // graders/zx_structured_contract.cpp
std::unique_ptr<Grader> MakeZxCodeRepairGrader();            // graders/zx_code_repair.cpp
std::unique_ptr<Grader> MakeRepoTestsGrader();               // graders/repo_tests.cpp
std::unique_ptr<Grader> MakeZxToolCallTraceGrader();     // graders/world_graders.cpp
std::unique_ptr<Grader> MakeZxAgentTraceGrader();        // graders/world_graders.cpp
std::unique_ptr<Grader> MakeZxCanaryAuthorityGrader();   // graders/world_graders.cpp
std::unique_ptr<Grader> MakeWorldGrader();               // graders/world_graders.cpp ("world")

}  // namespace evalrun
