// pccx_assert_log.h: the record of the RTL's failed assertions, which the
// DPI hook of hw/rtl/pccx_assert_pkg.sv fills and the shim hands on.
//
// A failed assertion calls pccx_assert_fail(name, scope) from inside the
// model's eval. Which model that is, the hook learns from `current`, the
// log of the model the calling thread is ticking (set by the shim around
// the evals of `tick` only: a failure during the harness's reset sequence,
// from the drawn initial state, is not the design's). Every configuration
// compiled into one binary includes this header, so the hook is defined
// weak, once per link; all copies are this one.
#ifndef PCCX_ASSERT_LOG_H
#define PCCX_ASSERT_LOG_H

#include <cstdint>
#include <cstring>

namespace pccx_assert {

struct Log {
  uint32_t failures = 0;  // since the last clear
  bool enabled = true;    // off: failures are not counted (mutate's rerun)
  char name[64] = {0};    // the first failure's assertion label
  char scope[256] = {0};  // and its hierarchical scope (%m)
  char also[256] = {0};   // the others failing in the same tick, comma-separated
  uint64_t ticks = 0;     // ticks so far (the shim counts them)
  uint64_t first_tick = 0;

  void clear() {
    failures = 0;
    name[0] = scope[0] = also[0] = '\0';
  }
};

// The log of the model the calling thread is ticking, if any.
inline thread_local Log *current = nullptr;

inline void copy_text(char *dst, size_t size, const char *src) {
  std::strncpy(dst, src ? src : "", size - 1);
  dst[size - 1] = '\0';
}

}  // namespace pccx_assert

// The DPI import of pccx_assert_pkg (an `input string` arrives as const char *).
extern "C" __attribute__((weak)) void pccx_assert_fail(const char *name, const char *scope) {
  pccx_assert::Log *log = pccx_assert::current;
  if (!log || !log->enabled) return;
  if (log->failures++ == 0) {
    pccx_assert::copy_text(log->name, sizeof(log->name), name);
    pccx_assert::copy_text(log->scope, sizeof(log->scope), scope);
    log->first_tick = log->ticks;
  } else if (log->first_tick == log->ticks && name && std::strstr(log->also, name) == nullptr &&
             std::strcmp(log->name, name) != 0) {
    // Another assertion failing at the same edge (one name once).
    const size_t used = std::strlen(log->also);
    const size_t need = std::strlen(name) + (used ? 1 : 0);
    if (used + need < sizeof(log->also)) {
      if (used) log->also[used] = ',';
      std::strcpy(log->also + used + (used ? 1 : 0), name);
    }
  }
}

#endif  // PCCX_ASSERT_LOG_H
