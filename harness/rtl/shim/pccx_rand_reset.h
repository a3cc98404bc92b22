// pccx_rand_reset.h: the shim's keyed draws behind the model's random
// resets, forced into every compile of a model (`-include`).
//
// The build rewrites every random reset Verilator generates
// (VL_RAND_RESET_* on 5.006-5.038, VL_SCOPED_RAND_RESET_* on 5.048) into
// the PCCX_RAND_* calls below, which name the variable and its element
// (`adapt_generated` in harness/rtl/verilator.rs), and stops if one is left.
// Why not Verilator's own draw: on 5.006 (randReset(2) + randSeed) its
// generator is per thread but reseeds whenever *any* context's seed changes
// (one global epoch), so two workers drawing at once disturb each other;
// on 5.048 (the scoped reset) every element of an array gets the same
// value; on both the values differ between versions, and every word of L2
// (1.8 MB on kv260) is drawn only for the harness to put them back. Here
// each draw reads a generator owned by the call (`pccx_draw::current`, set
// by the shim's randomize_state around the model's own variable reset): no
// lock, no shared state, the same value for the same seed, variable and
// element on every Verilator; and L2's words are not drawn at all (the
// loop over them compiles to nothing). Outside a draw (`current` null)
// every variable resets to zero, as Verilator's default randReset(0) does
// at construction.
#ifndef PCCX_RAND_RESET_H
#define PCCX_RAND_RESET_H

#include "verilated.h"

// L2's array in the Verilated root, by the name Verilator gives it: the
// DUT manifest's `l2_array` (hw/dut.json), passed by the build as
// -DPCCX_L2_MEM; the shim reads and writes it under this name, so a wrong
// name fails to compile. A manifest without one (a RAM Verilator cannot
// name) defines none: L2's words are then drawn like any other state, and
// the harness loads L2 in full after a random power-up.

#define PCCX_RR_STR2(a) #a
#define PCCX_RR_STR(a) PCCX_RR_STR2(a)

namespace pccx_draw {

// One draw: SplitMix64 from a seed.
struct Draw {
  uint64_t state;
  uint64_t seed;  // the keyed draws' (never advanced)
};

// The draw the calling thread is making, if any.
inline thread_local Draw *current = nullptr;

inline uint64_t next(Draw *d) {
  uint64_t z = (d->state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Whether the text of a VL_RAND_RESET_W target names an element of L2
// (`vlSelf->pccx_top__DOT__u_l2__DOT__mem[__Vi0]`), at compile time.
constexpr bool names_l2(const char *target) {
#ifndef PCCX_L2_MEM
  (void)target;
  return false;
#else
  const char *l2 = "->" PCCX_RR_STR(PCCX_L2_MEM) "[";
  for (const char *t = target; *t; ++t) {
    const char *a = t;
    const char *b = l2;
    while (*b && *a == *b) ++a, ++b;
    if (!*b) return true;
  }
  return false;
#endif
}

template <bool Skip>
struct Target {
  static constexpr bool skip = Skip;
};

}  // namespace pccx_draw

// Keyed draws: the calls of the variable reset after the build steps'
// rewrite (`key_random_resets` in harness/rtl/verilator.rs) name the variable
// and its element, and the value depends on those and the seed alone, not
// on how many draws came before; a mutant alone and the same mutant in a
// mutant schema then start alike. Outside a draw, zero.
namespace pccx_draw {

constexpr uint64_t name_key(const char *name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (; *name; ++name) h = (h ^ static_cast<unsigned char>(*name)) * 0x100000001b3ULL;
  return h;
}

inline uint64_t keyed(uint64_t name, unsigned long long element, int word) {
  Draw d{current->seed ^ name ^ (element * 0xD1B54A32D192ED03ULL) ^
         (static_cast<uint64_t>(word) * 0x8CB92BA72F3D8DD7ULL)};
  return next(&d);
}

}  // namespace pccx_draw

#define PCCX_RAND_I(obits, name, element)                                                      \
  (pccx_draw::current ? static_cast<IData>(pccx_draw::keyed(pccx_draw::name_key(name), element, 0)) & \
                            VL_MASK_I(obits)                                                   \
                      : IData{0})
#define PCCX_RAND_Q(obits, name, element)                                                      \
  (pccx_draw::current ? static_cast<QData>(pccx_draw::keyed(pccx_draw::name_key(name), element, 0)) & \
                            VL_MASK_Q(obits)                                                   \
                      : QData{0})
#define PCCX_RAND_W(obits, target, name, element)                                            \
  do {                                                                                       \
    if (pccx_draw::Target<pccx_draw::names_l2(PCCX_RR_STR(target))>::skip) break;            \
    const int pccx_words = VL_WORDS_I(obits);                                                \
    for (int pccx_w = 0; pccx_w < pccx_words; ++pccx_w)                                      \
      (target)[pccx_w] =                                                                     \
          pccx_draw::current                                                                 \
              ? static_cast<EData>(pccx_draw::keyed(pccx_draw::name_key(name), element, pccx_w)) \
              : EData{0};                                                                    \
    (target)[pccx_words - 1] &= VL_MASK_E(obits);                                            \
  } while (0)

// L2's words, when named, are never touched here, not even at
// construction: the shim's create zeroes them, and from then on the
// harness owns them.

#endif  // PCCX_RAND_RESET_H
