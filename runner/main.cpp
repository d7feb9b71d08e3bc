// The evalrun program: everything lives in the runner library; see runner/cli.cpp.
#include "runner/cli.h"

int main(int argc, char** argv) { return evalrun::RunCli(argc, argv); }
