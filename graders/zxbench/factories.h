#pragma once
// The factories of the zx-bench graders (zxbench:*) and of the native `world` grader, which
// scores evalrun's world tasks with zx-bench's world scoring; the registry (graders/grader.cpp)
// calls each once.
#include <memory>

#include "graders/framework/grader.h"

namespace evalrun {

std::unique_ptr<Grader> MakeZxExactAnswerLineGrader();   // graders/zxbench/exact_answer_line.cpp
std::unique_ptr<Grader> MakeZxJsonAtomicFieldsGrader();  // graders/zxbench/json_atomic_fields.cpp
std::unique_ptr<Grader> MakeZxInstructionChecklistGrader();  // graders/zxbench/instruction_checklist.cpp
std::unique_ptr<Grader> MakeZxStructuredContractGrader();    // graders/zxbench/structured_contract.cpp
std::unique_ptr<Grader> MakeZxCodeRepairGrader();            // graders/zxbench/code_repair.cpp
std::unique_ptr<Grader> MakeZxCliCommandGrader();            // graders/zxbench/cli_command.cpp
std::unique_ptr<Grader> MakeZxCliShellGrader();              // graders/zxbench/cli_shell.cpp
std::unique_ptr<Grader> MakeZxProjectRepairGrader();         // graders/zxbench/project_repair.cpp
std::unique_ptr<Grader> MakeZxToolCallTraceGrader();     // graders/zxbench/world_graders.cpp
std::unique_ptr<Grader> MakeZxAgentTraceGrader();        // graders/zxbench/world_graders.cpp
std::unique_ptr<Grader> MakeZxCanaryAuthorityGrader();   // graders/zxbench/world_graders.cpp
// graders/zxbench/canary_authority_text.cpp
std::unique_ptr<Grader> MakeZxCanaryAuthorityTextGrader();
std::unique_ptr<Grader> MakeZxAgentLoopTraceGrader();   // graders/zxbench/agent_loop_trace.cpp
std::unique_ptr<Grader> MakeZxSchemaComplianceGrader();  // graders/zxbench/schema_compliance.cpp
// graders/zxbench/hallucination_resistance.cpp
std::unique_ptr<Grader> MakeZxHallucinationResistanceGrader();
std::unique_ptr<Grader> MakeWorldGrader();               // graders/zxbench/world_graders.cpp ("world")

}  // namespace evalrun
