// pccx_shim.cpp: wraps one Verilated configuration of a DUT behind the C
// ABI of pccx_shim.h. build.rs compiles this file once per configuration
// with PCCX_PREFIX (the Verilator --prefix), PCCX_CONFIG (its name) and
// what the DUT manifest declares (harness/rtl/dut.rs, shim_defines):
// PCCX_PORT_<role> for every port it uses, its level, its L2 array, its
// back door and the shape of its interface.
#include "pccx_shim.h"
#include "pccx_assert_log.h"
// (pccx_rand_reset.h comes first, forced into every compile of a model.)

#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "verilated.h"
#if VM_TRACE_FST
#include "verilated_fst_c.h"
#endif
#if VM_COVERAGE
#include <cstdio>
#include <vector>

#include "verilated_cov.h"
#endif

#define PCCX_CAT2(a, b) a##b
#define PCCX_CAT(a, b) PCCX_CAT2(a, b)
#define PCCX_STR2(a) #a
#define PCCX_STR(a) PCCX_STR2(a)

#define PCCX_TOP PCCX_PREFIX

// A port of the top by its role: the shim keeps no port names of its own.
// The DUT manifest (hw/dut.json) names the port behind each role, the
// builder checks it against the Verilated top (direction and width,
// harness/rtl/dut.rs) and passes it as PCCX_PORT_<role>.
#define PCCX_PORT(role) PCCX_PORT_##role
#define PCCX_ROOT PCCX_CAT(PCCX_PREFIX, ___024root)

#if !defined(PCCX_LEVEL) || !defined(PCCX_AXIL_BITS) || !defined(PCCX_TWO_CLOCKS) || \
    !defined(PCCX_WS_PORTS) || !defined(PCCX_WS_BITS) || !defined(PCCX_WS_GEMV_PORTS) ||   \
    !defined(PCCX_KEEP_L2) || !defined(PCCX_HOST_STREAMS)
#error "the DUT manifest's defines (harness/rtl/dut.rs, shim_defines) are missing"
#endif
// The levels (0 black box, 1 retire, 2 full): a role of a higher level than
// the DUT's is no port of it, and its outputs read as zero.
#define PCCX_RETIRE_TAP (PCCX_LEVEL >= 1)
#define PCCX_FULL_TAPS (PCCX_LEVEL >= 2)
#ifdef PCCX_BD_FMAP
#define PCCX_HAS_BACK_DOOR 1
#else
#define PCCX_HAS_BACK_DOOR 0
#endif
// Whether L2's words survive randomize_state (the manifest names L2's array).
#ifdef PCCX_L2_MEM
#define PCCX_L2_NAMED 1
#else
#define PCCX_L2_NAMED 0
#endif

#include PCCX_STR(PCCX_PREFIX.h)
#include PCCX_STR(PCCX_CAT(PCCX_PREFIX, ___024root.h))
#include PCCX_STR(PCCX_CAT(PCCX_PREFIX, __Syms.h))

// Verilator's own reset of every variable, which the constructor calls
// (5.006: a function of the root class's files, not declared in a header).
void PCCX_CAT(PCCX_ROOT, ___ctor_var_reset)(PCCX_ROOT *vlSelf);

#ifdef PCCX_MUTANT_SCHEMA
// A mutant schema (harness/tools/mutate/schema.rs): every mutation site
// guarded by pccx_mutant_pkg::active, which the design never writes. The
// harness picks the mutant before it creates the model; it stays the
// model's for its life.
namespace {
uint16_t mutant_selected = 0;
}
extern "C" void pccx_mutant_select(uint32_t selector) {
  mutant_selected = static_cast<uint16_t>(selector);
}
#endif

namespace {

struct Sim {
  std::unique_ptr<VerilatedContext> context;
  std::unique_ptr<PCCX_TOP> top;
#if VM_TRACE_FST
  std::unique_ptr<VerilatedFstC> wave;  // open only inside a waveform window
#endif
  pccx_assert::Log asserts;  // failed assertions since the last reset
#if VM_COVERAGE
  std::vector<uint32_t> coverage_kept;  // the counters while randomize_state runs
#endif
  std::vector<uint8_t> l2_kept;  // L2's words while randomize_state runs
};

inline PCCX_TOP *top_of(void *sim) { return static_cast<Sim *>(sim)->top.get(); }

void *create() {
  Sim *sim = new Sim;
  sim->context.reset(new VerilatedContext);
#if VM_TRACE_FST
  sim->context->traceEverOn(true);
#endif
  sim->top.reset(new PCCX_TOP(sim->context.get(), "pccx"));
#ifdef PCCX_MUTANT_SCHEMA
  // A package's variables are not the root's: the root's variable reset
  // (randomize_state) leaves the selector as set here.
  sim->top->rootp->vlSymsp->TOP__pccx_mutant_pkg.active = mutant_selected;
#endif
#ifdef PCCX_L2_MEM
  // The variable reset skips L2 (pccx_rand_reset.h): zero it here, once.
  auto &l2 = sim->top->rootp->PCCX_L2_MEM;
  std::memset(l2[0].data(), 0, size_t{PCCX_L2_WORDS} * sizeof(l2[0]));
#endif
  return sim;
}

void destroy(void *sim) {
  Sim *s = static_cast<Sim *>(sim);
  // Verilator (5.006) erases a model's scopes from the *thread's* current
  // context, which is the most recently created one. Make it this model's,
  // or destroying a model after another one was made and destroyed in the
  // same thread touches the freed context (a hang on its mutex).
  Verilated::threadContextp(s->context.get());
#if VM_TRACE_FST
  if (s->wave) s->wave->close();
#endif
  s->top->final();
  delete s;
}

// The edge the AXI-Lite clock makes with a core rising edge: with two
// clocks it toggles there, so it rises with every second core edge.
inline void axi_clock_edge(PCCX_TOP *top) {
#if PCCX_TWO_CLOCKS
  top->PCCX_PORT(axi_clk) = !top->PCCX_PORT(axi_clk);
#else
  (void)top;
#endif
}

// Whether the AXI-Lite clock rises at the coming core edge.
inline bool axi_rises(PCCX_TOP *top) {
#if PCCX_TWO_CLOCKS
  return !top->PCCX_PORT(axi_clk);
#else
  (void)top;
  return true;
#endif
}

void clock_edge(PCCX_TOP *top) {
  top->PCCX_PORT(clk) = 0;
  top->eval();
  top->PCCX_PORT(clk) = 1;
  axi_clock_edge(top);
  top->eval();
}

// The inputs a reset starts from: no request on any port, no back-door write.
void idle_inputs(PCCX_TOP *top) {
  top->PCCX_PORT(awvalid) = top->PCCX_PORT(wvalid) = top->PCCX_PORT(arvalid) = 0;
  top->PCCX_PORT(bready) = top->PCCX_PORT(rready) = 0;
#if PCCX_HOST_STREAMS
  top->PCCX_PORT(host_in_valid) = top->PCCX_PORT(host_out_ready) = 0;
#else
  top->PCCX_PORT(acp_req_ready) = top->PCCX_PORT(acp_rsp_valid) = 0;
#endif
#if PCCX_FULL_TAPS
  top->PCCX_PORT(bd_tbl_we) = top->PCCX_PORT(bd_emax_we) = 0;
#endif
}

void reset(void *sim) {
  PCCX_TOP *top = top_of(sim);
  // With two-state simulation a reset held low from time 0 produces no
  // negedge: drive it 1 -> 0 -> 1 so the async-reset blocks run.
  idle_inputs(top);
  top->PCCX_PORT(rst_n) = 1;
  clock_edge(top);
  top->PCCX_PORT(rst_n) = 0;
  clock_edge(top);
  clock_edge(top);
#if PCCX_TWO_CLOCKS
  // Two rising edges of the half-rate clock inside the reset too.
  clock_edge(top);
  clock_edge(top);
#endif
  top->PCCX_PORT(rst_n) = 1;
  clock_edge(top);
  static_cast<Sim *>(sim)->asserts.clear();
}

// A Verilator wide signal of 128 bits is four 32-bit words, least
// significant first: on a little-endian host its bytes are those of two
// uint64_t, low half first, so the copies are plain memcpy.
static_assert(sizeof(VlWide<4>) == 2 * sizeof(uint64_t), "VlWide<4> is 128 bits");

void set_wide128(VlWide<4> &dst, const uint64_t src[2]) { std::memcpy(dst.data(), src, 16); }

void get_wide128(const VlWide<4> &src, uint64_t dst[2]) { std::memcpy(dst, src.data(), 16); }

// The weight ports' data, port p's low PCCX_WS_BITS bits at p *
// PCCX_WS_BITS: pccx_top's two 128-bit streams are one copy; any other
// shape is put together 32-bit word by word (the widths, 32, 64 or 128,
// are whole words), into a wide signal or a plain integer.
static_assert(PCCX_WS_PORTS >= 1 && PCCX_WS_PORTS <= PCCX_MAX_WEIGHT_PORTS, "weight ports");
static_assert(PCCX_WS_BITS == 32 || PCCX_WS_BITS == 64 || PCCX_WS_BITS == 128, "weight port width");
template <std::size_t N>
void set_weight_data(VlWide<N> &dst, const uint64_t (*src)[2]) {
  static_assert(N * 32 == PCCX_WS_PORTS * PCCX_WS_BITS, "ws_data is weight_ports x weight_bits");
  if (PCCX_WS_BITS == 128) {
    std::memcpy(dst.data(), src, N * 4);
    return;
  }
  constexpr int words = PCCX_WS_BITS / 32;
  for (int p = 0; p < PCCX_WS_PORTS; p++) {
    for (int w = 0; w < words; w++) {
      dst[p * words + w] = static_cast<uint32_t>(src[p][w / 2] >> (32 * (w % 2)));
    }
  }
}
template <typename T>
void set_weight_data(T &dst, const uint64_t (*src)[2]) {
  static_assert(sizeof(T) * 8 >= PCCX_WS_PORTS * PCCX_WS_BITS, "ws_data is weight_ports x weight_bits");
  uint64_t v = 0;
  for (int p = 0; p < PCCX_WS_PORTS; p++) {
    const uint64_t piece = PCCX_WS_BITS == 64 ? src[p][0] : (src[p][0] & 0xFFFFFFFFu);
    v |= piece << ((p * PCCX_WS_BITS) % 64);
  }
  dst = static_cast<T>(v);
}

// Bits [lsb, lsb + width) of a Verilator wide signal of n_words words,
// width <= 32.
uint32_t wide_field(const uint32_t *words, int n_words, int lsb, int width) {
  const int i = lsb / 32;
  const uint64_t lo = words[i];
  const uint64_t hi = (i + 1 < n_words) ? words[i + 1] : 0;
  return static_cast<uint32_t>(((lo | (hi << 32)) >> (lsb % 32)) & ((uint64_t{1} << width) - 1));
}

void tick(void *sim, const pccx_inputs *in, pccx_outputs *out) {
  PCCX_TOP *top = top_of(sim);
  pccx_assert::Log *asserts = &static_cast<Sim *>(sim)->asserts;
  pccx_assert::current = asserts;
  asserts->ticks++;
  top->PCCX_PORT(clk) = 0;
  top->PCCX_PORT(awvalid) = in->awvalid;
  top->PCCX_PORT(awaddr) = in->awaddr;
  top->PCCX_PORT(wvalid) = in->wvalid;
  top->PCCX_PORT(wdata) = in->wdata;
  top->PCCX_PORT(wstrb) = in->wstrb;
  top->PCCX_PORT(bready) = in->bready;
  top->PCCX_PORT(arvalid) = in->arvalid;
  top->PCCX_PORT(araddr) = in->araddr;
  top->PCCX_PORT(rready) = in->rready;
#if PCCX_HOST_STREAMS
  top->PCCX_PORT(host_in_valid) = in->host_in_valid;
  set_wide128(top->PCCX_PORT(host_in_data), in->host_in_data);
  top->PCCX_PORT(host_out_ready) = in->host_out_ready;
#else
  top->PCCX_PORT(acp_req_ready) = in->acp_req_ready;
  top->PCCX_PORT(acp_rsp_valid) = in->acp_rsp_valid;
  set_wide128(top->PCCX_PORT(acp_rsp_rdata), in->acp_rsp_rdata);
#endif
  uint32_t ws_valid = 0;
  for (int p = 0; p < PCCX_WS_PORTS; p++) ws_valid |= uint32_t(in->ws_valid[p]) << p;
  top->PCCX_PORT(ws_valid) = ws_valid;
  set_weight_data(top->PCCX_PORT(ws_data), in->ws_data);
#if PCCX_FULL_TAPS
  top->PCCX_PORT(bd_tbl_we) = in->bd_tbl_we;
  top->PCCX_PORT(bd_tbl_entry) = in->bd_tbl_entry;
  top->PCCX_PORT(bd_tbl_value) = in->bd_tbl_value;
  top->PCCX_PORT(bd_emax_we) = in->bd_emax_we;
  top->PCCX_PORT(bd_emax_value) = in->bd_emax_value;
#endif
  top->eval();
#if VM_TRACE_FST
  VerilatedFstC *wave = static_cast<Sim *>(sim)->wave.get();
  if (wave) wave->dump(2 * in->cycle);
#endif

  // Sample just before the edge.
  out->awready = top->PCCX_PORT(awready);
  out->wready = top->PCCX_PORT(wready);
  out->bvalid = top->PCCX_PORT(bvalid);
  out->bresp = top->PCCX_PORT(bresp);
  out->arready = top->PCCX_PORT(arready);
  out->rvalid = top->PCCX_PORT(rvalid);
  out->rresp = top->PCCX_PORT(rresp);
  out->rdata = top->PCCX_PORT(rdata);
#if PCCX_HOST_STREAMS
  out->host_in_ready = top->PCCX_PORT(host_in_ready);
  out->host_out_valid = top->PCCX_PORT(host_out_valid);
  get_wide128(top->PCCX_PORT(host_out_data), out->host_out_data);
#else
  out->acp_req_valid = top->PCCX_PORT(acp_req_valid);
  out->acp_req_write = top->PCCX_PORT(acp_req_write);
  out->acp_req_addr = top->PCCX_PORT(acp_req_addr);
  get_wide128(top->PCCX_PORT(acp_req_wdata), out->acp_req_wdata);
  out->acp_rsp_ready = top->PCCX_PORT(acp_rsp_ready);
#endif
  for (int p = 0; p < PCCX_WS_PORTS; p++) {
    out->ws_ready[p] = (top->PCCX_PORT(ws_ready) >> p) & 1;
  }
  out->bus_edge = axi_rises(top);
#if PCCX_RETIRE_TAP
  out->ret_valid = top->PCCX_PORT(ret_valid);
  for (uint32_t m = out->ret_valid; m != 0; m &= m - 1) {
    const int p = __builtin_ctz(m);
    out->ret_seq[p] = top->PCCX_PORT(ret_seq)[p];
    out->ret_op[p] = (top->PCCX_PORT(ret_op) >> (4 * p)) & 0xF;
    out->ret_err[p] = (top->PCCX_PORT(ret_err) >> (4 * p)) & 0xF;
  }
#endif
#if PCCX_FULL_TAPS
  out->acp_req_seq = top->PCCX_PORT(acp_req_seq);
  for (int s = 0; s < PCCX_NUM_STREAMS; s++) {
    out->ws_seq[s] = static_cast<uint32_t>(top->PCCX_PORT(ws_seq) >> (32 * s));
  }
  out->latch_valid = top->PCCX_PORT(latch_valid);
  out->latch_seq = top->PCCX_PORT(latch_seq);
  out->latch_word = top->PCCX_PORT(latch_word);
  out->start_valid = top->PCCX_PORT(start_valid);
  for (uint32_t m = out->start_valid; m != 0; m &= m - 1) {
    const int e = __builtin_ctz(m);
    out->start_seq[e] = top->PCCX_PORT(start_seq)[e];
  }
  out->l2w_valid = top->PCCX_PORT(l2w_valid);
  for (uint32_t m = out->l2w_valid; m != 0; m &= m - 1) {
    const int p = __builtin_ctz(m);
    out->l2w_addr[p] = wide_field(top->PCCX_PORT(l2w_addr).data(), static_cast<int>(sizeof(top->PCCX_PORT(l2w_addr)) / 4), 17 * p, 17);
    std::memcpy(out->l2w_data[p], top->PCCX_PORT(l2w_data).data() + 4 * p, 16);
    out->l2w_mask[p] = (top->PCCX_PORT(l2w_mask) >> (8 * p)) & 0xFF;
    out->l2w_seq[p] = top->PCCX_PORT(l2w_seq)[p];
  }
  out->tbl_valid = top->PCCX_PORT(tbl_valid);
  out->tbl_entry = top->PCCX_PORT(tbl_entry);
  out->tbl_value = top->PCCX_PORT(tbl_value);
  out->tbl_seq = top->PCCX_PORT(tbl_seq);
  out->emax_valid = top->PCCX_PORT(emax_valid);
  out->emax_value = top->PCCX_PORT(emax_value);
  out->emax_seq = top->PCCX_PORT(emax_seq);
  out->status = top->PCCX_PORT(status);
#endif

  top->PCCX_PORT(clk) = 1;
  axi_clock_edge(top);
  top->eval();
#if VM_TRACE_FST
  if (wave) wave->dump(2 * in->cycle + 1);
#endif
  pccx_assert::current = nullptr;
  out->assert_failures = asserts->failures;
}

const char *assert_name(void *sim) { return static_cast<Sim *>(sim)->asserts.name; }

const char *assert_scope(void *sim) { return static_cast<Sim *>(sim)->asserts.scope; }

const char *assert_also(void *sim) { return static_cast<Sim *>(sim)->asserts.also; }

void assert_enable(void *sim, int on) { static_cast<Sim *>(sim)->asserts.enabled = on != 0; }

int trace_open(void *sim, const char *path) {
#if VM_TRACE_FST
  Sim *s = static_cast<Sim *>(sim);
  if (s->wave) s->wave->close();
  s->wave.reset(new VerilatedFstC);
  s->top->trace(s->wave.get(), 99);
  s->wave->open(path);
  if (!s->wave->isOpen()) {
    s->wave.reset();
    return -2;
  }
  return 0;
#else
  (void)sim;
  (void)path;
  return -1;
#endif
}

void trace_close(void *sim) {
#if VM_TRACE_FST
  Sim *s = static_cast<Sim *>(sim);
  if (s->wave) {
    s->wave->close();
    s->wave.reset();
  }
#else
  (void)sim;
#endif
}

int coverage_write(void *sim, const char *path) {
#if VM_COVERAGE
  // Verilator aborts the process on a file it cannot open: try it first.
  std::FILE *probe = std::fopen(path, "w");
  if (!probe) return -2;
  std::fclose(probe);
  static_cast<Sim *>(sim)->context->coveragep()->write(path);
  return 0;
#else
  (void)sim;
  (void)path;
  return -1;
#endif
}

#if PCCX_HAS_BACK_DOOR
int l2_read(void *sim, uint32_t addr, uint32_t n, uint64_t *out) {
  PCCX_ROOT *root = top_of(sim)->rootp;
  if (static_cast<uint64_t>(addr) + n > PCCX_L2_WORDS) return -1;
  for (uint32_t i = 0; i < n; i++) get_wide128(root->PCCX_L2_MEM[addr + i], out + 2 * i);
  return 0;
}

int l2_write(void *sim, uint32_t addr, uint32_t n, const uint64_t *in) {
  // Safe as a direct write: only the L2 module reads `mem`, in clocked logic.
  PCCX_ROOT *root = top_of(sim)->rootp;
  if (static_cast<uint64_t>(addr) + n > PCCX_L2_WORDS) return -1;
  for (uint32_t i = 0; i < n; i++) set_wide128(root->PCCX_L2_MEM[addr + i], in + 2 * i);
  return 0;
}

uint64_t table_read(void *sim, uint32_t table, uint32_t index) {
  PCCX_ROOT *root = top_of(sim)->rootp;
  index &= 63;
  return table ? root->PCCX_BD_WEIGHT[index] : root->PCCX_BD_FMAP[index];
}

uint16_t emax_read(void *sim) { return top_of(sim)->rootp->PCCX_BD_EMAX; }

// The words of an unpacked array of VlWide<4> lie one after another, 16
// bytes each (VlUnpacked holds a plain C array of them).
static_assert(sizeof(VlWide<4>) == 16, "a 128-bit L2 word is 16 bytes");
const uint8_t *l2_data(void *sim) {
  PCCX_ROOT *root = top_of(sim)->rootp;
  return reinterpret_cast<const uint8_t *>(root->PCCX_L2_MEM[0].data());
}
#else
// No back door: the harness loads L2 through the DUT's own MEMCPY and
// reads it back the same way (docs/dut-contract.md).
int l2_read(void *, uint32_t, uint32_t, uint64_t *) { return -1; }
int l2_write(void *, uint32_t, uint32_t, const uint64_t *) { return -1; }
uint64_t table_read(void *, uint32_t, uint32_t) { return 0; }
uint16_t emax_read(void *) { return 0; }
const uint8_t *l2_data(void *) { return nullptr; }
#endif

#if VM_COVERAGE
// A coverage counter of __Vcoverage: a std::atomic<uint32_t> in 5.006,
// a plain uint32_t in 5.048; the more specialised overload takes the atomic.
template <typename T> uint32_t counter_value(const std::atomic<T> &c) {
  return c.load(std::memory_order_relaxed);
}
template <typename T> uint32_t counter_value(const T &c) { return c; }
template <typename T> void set_counter(std::atomic<T> &c, uint32_t v) {
  c.store(v, std::memory_order_relaxed);
}
template <typename T> void set_counter(T &c, uint32_t v) { c = v; }
#endif

void randomize_state(void *sim, uint64_t seed) {
  Sim *s = static_cast<Sim *>(sim);
  PCCX_TOP *top = s->top.get();
  PCCX_ROOT *root = top->rootp;
#if VM_COVERAGE
  // The draw and the reset from it are no stimulus: a coverage build counts
  // neither (every bit would toggle from its random value), only a plain
  // reset after them, from the state the reset left (so the reset's own
  // lines and branches still count, and no toggle does).
  auto &counters = root->vlSymsp->__Vcoverage;
  std::vector<uint32_t> &kept = s->coverage_kept;
  kept.resize(sizeof(counters) / sizeof(counters[0]));
  for (size_t i = 0; i < kept.size(); ++i) kept[i] = counter_value(counters[i]);
#endif
  // The model's own variable reset, its VL_RAND_RESET_* drawing from this
  // call's generator (pccx_rand_reset.h), which leaves L2's words alone
  // when the manifest names them.
#if PCCX_KEEP_L2
  // A reset through a synchroniser (the manifest's `"reset":
  // "synchronised"`, hw/wrap): a synchronised reset drawn low sees no
  // falling edge, its flops keep their drawn values until the first clock
  // edge, and an L2 write port among them writes a drawn word at that
  // edge. Silicon holds such flops by the level of the reset, so a RAM
  // keeps its words through a reset: L2's words are put back after the
  // reset below (docs/dut-contract.md, "Reset"). A direct reset (pccx_top)
  // needs no copy (1.8 MB each way on kv260, a tenth of a short program's
  // time): its falling edge resets every flop before any clock edge.
#ifndef PCCX_L2_MEM
#error "PCCX_KEEP_L2 keeps L2 by its name: the manifest's l2_array"
#endif
  auto &l2 = root->PCCX_L2_MEM;
  const size_t l2_bytes = size_t{PCCX_L2_WORDS} * sizeof(l2[0]);
  s->l2_kept.resize(l2_bytes);
  std::memcpy(s->l2_kept.data(), l2[0].data(), l2_bytes);
#endif
  pccx_draw::Draw draw{seed, seed};
  pccx_draw::current = &draw;
  PCCX_CAT(PCCX_ROOT, ___ctor_var_reset)(root);
  pccx_draw::current = nullptr;
  // The next eval runs the design's static and initial code again (its
  // constant assignments) and takes the inputs as they are for the edge
  // detectors' previous values, which are random now too.
  root->vlSymsp->__Vm_didInit = false;
  // Reset asserted before any clock edge: a rising edge with the drawn
  // state and no reset would let that state act, e.g. write L2 through a
  // random write enable. With clk low, the first eval settles, the second
  // sees rst_n fall (the asynchronous resets), then `reset`'s sequence
  // runs from there (its first edge, with rst_n high again, comes after
  // every register with a reset has been reset).
  idle_inputs(top);
  top->PCCX_PORT(clk) = 0;
  top->PCCX_PORT(rst_n) = 1;
  top->eval();
  top->PCCX_PORT(rst_n) = 0;
  top->eval();
  reset(sim);
#if VM_COVERAGE
  for (size_t i = 0; i < kept.size(); ++i) set_counter(counters[i], kept[i]);
  reset(sim);
#endif
#if PCCX_KEEP_L2
  std::memcpy(l2[0].data(), s->l2_kept.data(), l2_bytes);
#endif
}

const pccx_sim_ops ops = {
    PCCX_STR(PCCX_CONFIG), PCCX_L2_WORDS, PCCX_FIFO_DEPTH, create, destroy, reset, tick,
    l2_read,               l2_write,      table_read,      emax_read, trace_open, trace_close,
    coverage_write,        l2_data,       randomize_state, assert_name, assert_scope, assert_also, assert_enable,
    PCCX_LEVEL,            PCCX_AXIL_BITS, PCCX_PUSH_KICK, PCCX_STATUS_FIFO, PCCX_HAS_BACK_DOOR, PCCX_TWO_CLOCKS,
    PCCX_WS_PORTS,         PCCX_WS_BITS,  PCCX_WS_GEMV_PORTS, PCCX_L2_NAMED, PCCX_HOST_STREAMS,
};

}  // namespace

extern "C" const pccx_sim_ops *PCCX_CAT(pccx_sim_ops_, PCCX_CONFIG)(void) { return &ops; }
