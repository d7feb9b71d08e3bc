// The evalrun program: everything lives in the runner library; see runner/commands/cli.cpp. Only this file
// sees the build's commit, so a new commit recompiles one file.
#include "build_commit.h"
#include "runner/commands/cli.h"

int main(int argc, char** argv) { return evalrun::RunCli(argc, argv, EVALRUN_BUILD_COMMIT); }
