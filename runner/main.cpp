// The evalrun program: everything lives in the runner library; see runner/cli.cpp. Only this file
// sees the build's commit, so a new commit recompiles one file.
#include "build_commit.h"
#include "runner/cli.h"

int main(int argc, char** argv) { return evalrun::RunCli(argc, argv, EVALRUN_BUILD_COMMIT); }
