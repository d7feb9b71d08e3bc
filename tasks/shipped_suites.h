#pragma once
// The suites shipped with evalrun (tasks/smoke, tasks/agent, ...), found by name with no source
// tree around: `evalrun suite smoke`. An installed evalrun (cmake --install, the .deb) reads them
// from <prefix>/share/evalrun/suites, found relative to the executable so a relocated prefix
// works; a build-tree evalrun, which has no such folder beside it, reads the source tree's tasks/.
#include <string>
#include <vector>

namespace evalrun {

// The folder holding the shipped suites, one subfolder with a suite.yaml each: the installed
// folder when the running executable has one beside it, else the source tree's tasks/ folder it
// was built from, else "" (neither exists). Reads /proc/self/exe; never throws.
std::string ShippedSuitesDir();

// The names of the shipped suites (subfolders of ShippedSuitesDir() holding a suite.yaml),
// sorted; empty when there is no such folder.
std::vector<std::string> ShippedSuiteNames();

// The folder of the shipped suite `name`, or "" when there is none by that name.
std::string ShippedSuitePath(const std::string& name);

}  // namespace evalrun
