// zx-bench's instruction_checklist grader (issue 4): not yet written. The factory returns nullptr, so the grader
// is absent from the registry and tasks using it load as skipped.
#include "graders/builtin.h"

namespace evalrun {

std::unique_ptr<Grader> MakeZxInstructionChecklistGrader() { return nullptr; }

}  // namespace evalrun
