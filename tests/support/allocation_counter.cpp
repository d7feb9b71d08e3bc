#include "tests/support/allocation_counter.h"

#include <atomic>
#include <cstdlib>
#include <new>

// Every non-aligned form is replaced, so that no allocation pairs this free() with a sanitizer's
// allocator. Not inlined: GCC 12 takes an inlined malloc/free pair for a new/free mismatch.
namespace {
std::atomic<long> g_allocations{0};

[[gnu::noinline]] void* CountedAllocate(std::size_t size) noexcept {
  ++g_allocations;
  return std::malloc(size == 0 ? 1 : size);
}
}  // namespace

long evalrun::testing::AllocationCount() { return g_allocations.load(); }

void* operator new(std::size_t size) {
  if (void* p = CountedAllocate(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  return operator new(size);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return CountedAllocate(size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return CountedAllocate(size);
}
[[gnu::noinline]] void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  operator delete(p);
}
void operator delete(void* p, std::size_t) noexcept {
  operator delete(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  operator delete(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  operator delete(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  operator delete(p);
}
