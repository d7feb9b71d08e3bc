#pragma once
// Counts heap allocations in a test program, so that "no allocation per event" is tested, not
// promised. Linking tests/support/allocation_counter.cpp replaces the global operator new and
// delete of that program.

namespace evalrun::testing {

// Allocations made by this process so far.
long AllocationCount();

}  // namespace evalrun::testing
