#pragma once
// One monotonic clock for every duration evalrun measures (STYLE.md 10). Wall time is recorded
// separately, only for display.
#include <chrono>
#include <cstdint>
#include <string>

namespace evalrun {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

// Nanoseconds from `from` to `to` (negative when `to` is earlier).
inline int64_t NanosBetween(TimePoint from, TimePoint to) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(to - from).count();
}

inline double NanosToMs(int64_t ns) { return static_cast<double>(ns) / 1e6; }
inline double NanosToSeconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

// The wall clock now, UTC, ISO 8601 to the second ("2026-11-29T23:15:00Z"): for display and
// records only, never for durations.
std::string UtcNowIso();

}  // namespace evalrun
