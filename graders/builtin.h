#pragma once
// Every built-in grader's factory, for the registry (graders/grader.cpp) and tests that build a
// grader directly: evalrun's own (graders/native/) and the zx-bench ports (graders/zxbench/).
#include "graders/native/factories.h"
#include "graders/zxbench/factories.h"
