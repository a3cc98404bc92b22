/* pccx_shim.h: the C ABI between the Verilated pccx_top and Rust.
 *
 * One call per simulated clock cycle: `tick` applies the inputs, samples the
 * outputs just before the rising edge (so a valid/ready pair seen here is a
 * handshake at that edge), then applies the edge. Every configuration built
 * by build.rs exports one `pccx_sim_ops` table, reached through
 * `pccx_sim_ops_<config>()`; the Rust side only ever sees this header.
 * Words of 128 bits travel as two uint64_t, low half first.
 *
 * The observation outputs come as a valid mask per group (bit p: port p)
 * and the payload of each valid port; the payload of a port whose bit is 0
 * is stale. Copying only what is valid keeps the shim off the per-cycle
 * profile (docs/build.md, simulation speed).
 */
#ifndef PCCX_SHIM_H
#define PCCX_SHIM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PCCX_NUM_RETIRE 6 /* engines 0..4 (GEMV GEMM MEM MEMSET CVO), 5 decoder */
#define PCCX_NUM_L2W 4    /* observed L2 write ports: 0 MEM, 1 GEMV, 2 GEMM, 3 CVO */
#define PCCX_NUM_STREAMS 2 /* weight streams: 0 matrix (GEMM), 1 vector (GEMV) */
#define PCCX_NUM_ENGINES 5 /* GEMV GEMM MEM MEMSET CVO */
/* weight-stream ports of a DUT: each carries pieces of one stream
 * (harness/rtl/weight_lanes.rs); pccx_top has two, one per stream */
#define PCCX_MAX_WEIGHT_PORTS 8

typedef struct pccx_inputs {
  /* AXI-Lite master side */
  uint8_t awvalid;
  uint16_t awaddr;
  uint8_t wvalid;
  uint64_t wdata; /* the low 32 bits on a 32-bit AXI-Lite */
  uint8_t wstrb;
  uint8_t bready;
  uint8_t arvalid;
  uint16_t araddr;
  uint8_t rready;
  /* ACP host memory */
  uint8_t acp_req_ready;
  uint8_t acp_rsp_valid;
  uint64_t acp_rsp_rdata[2];
  /* host memory as two streams instead (interface.host "streams") */
  uint8_t host_in_valid;
  uint64_t host_in_data[2];
  uint8_t host_out_ready;
  /* weight-stream ports (weight_ports of them; the low weight_bits of each
   * beat) */
  uint8_t ws_valid[PCCX_MAX_WEIGHT_PORTS];
  uint64_t ws_data[PCCX_MAX_WEIGHT_PORTS][2];
  /* backdoor write ports, used while idle */
  uint8_t bd_tbl_we;
  uint8_t bd_tbl_entry;
  uint64_t bd_tbl_value;
  uint8_t bd_emax_we;
  uint16_t bd_emax_value;
  /* the harness's cycle number: an open waveform shows it as time 2*cycle
   * (clock low) and 2*cycle + 1 (clock high) */
  uint64_t cycle;
} pccx_inputs;

typedef struct pccx_outputs {
  uint8_t awready;
  uint8_t wready;
  uint8_t bvalid;
  uint8_t bresp;
  uint8_t arready;
  uint8_t rvalid;
  uint8_t rresp;
  uint64_t rdata;
  uint8_t acp_req_valid;
  uint8_t acp_req_write;
  uint32_t acp_req_addr;
  uint64_t acp_req_wdata[2];
  uint32_t acp_req_seq;
  uint8_t acp_rsp_ready;
  uint8_t host_in_ready;
  uint8_t host_out_valid;
  uint64_t host_out_data[2];
  uint8_t ws_ready[PCCX_MAX_WEIGHT_PORTS];
  uint32_t ws_seq[PCCX_NUM_STREAMS]; /* full level: per stream, two ports */
  uint8_t latch_valid;
  uint32_t latch_seq;
  uint64_t latch_word;
  uint8_t start_valid; /* bit e: engine e starts an instruction */
  uint32_t start_seq[PCCX_NUM_ENGINES];
  uint8_t ret_valid; /* bit p: retire slot p */
  uint32_t ret_seq[PCCX_NUM_RETIRE];
  uint8_t ret_op[PCCX_NUM_RETIRE];
  uint8_t ret_err[PCCX_NUM_RETIRE];
  uint8_t l2w_valid; /* bit p: L2 write port p */
  uint32_t l2w_addr[PCCX_NUM_L2W];
  uint64_t l2w_data[PCCX_NUM_L2W][2];
  uint8_t l2w_mask[PCCX_NUM_L2W];
  uint32_t l2w_seq[PCCX_NUM_L2W];
  uint8_t tbl_valid;
  uint8_t tbl_entry; /* entry_id_t {weight, index}: golden/src/isa/layout.rs entry_id */
  uint64_t tbl_value; /* {a, b, c}, a in bits 47:32 */
  uint32_t tbl_seq;
  uint8_t emax_valid;
  uint16_t emax_value;
  uint32_t emax_seq;
  uint32_t status;
  /* 1 if the AXI-Lite's clock rises at this edge: every edge with one
   * clock, every second with a half-rate AXI clock. A handshake happens
   * only at such an edge, and the master changes its signals only after. */
  uint8_t bus_edge;
  /* assertions of the RTL (hw/rtl/pccx_assert_pkg.sv) failed since the
   * last reset; assert_name and assert_scope name the first */
  uint32_t assert_failures;
} pccx_outputs;

typedef struct pccx_sim_ops {
  const char *config_name;
  uint32_t l2_words;
  uint32_t fifo_depth;
  /* A fresh model, held in reset-released state after `reset`. */
  void *(*create)(void);
  void (*destroy)(void *sim);
  /* Drives rst_n 1 -> 0 -> 1 around a few clock edges. */
  void (*reset)(void *sim);
  void (*tick)(void *sim, const pccx_inputs *in, pccx_outputs *out);
  /* Backdoor L2 access, 2 uint64_t per word. Returns 0, or -1 if out of range. */
  int (*l2_read)(void *sim, uint32_t addr, uint32_t n, uint64_t *out);
  int (*l2_write)(void *sim, uint32_t addr, uint32_t n, const uint64_t *in);
  /* Backdoor reads of state: table 0 fmap / 1 weight, entry as {a, b, c}. */
  uint64_t (*table_read)(void *sim, uint32_t table, uint32_t index);
  uint16_t (*emax_read)(void *sim);
  /* FST waveform: open returns 0, -1 if tracing is not compiled in, -2 if
   * the file cannot be written. Every tick dumps while it is open. */
  int (*trace_open)(void *sim, const char *path);
  void (*trace_close)(void *sim);
  /* Code coverage (a model Verilated with --coverage-line/-toggle, built
   * with PCCX_COVERAGE=1): writes the counters since create to `path` in
   * Verilator's coverage.dat format. Returns 0, -1 if the model has no
   * coverage, -2 if the file cannot be written. */
  int (*coverage_write)(void *sim, const char *path);
  /* The L2 array in place, for reading without a copy: l2_words words of
   * 16 bytes each, least significant byte first on a little-endian host,
   * valid until the model is next ticked, written or destroyed. */
  const uint8_t *(*l2_data)(void *sim);
  /* Gives every variable of the design (registers, FIFOs, buffers, the
   * ports) a value drawn from `seed` by the model's own variable reset,
   * its draws from the shim's generator (pccx_rand_reset.h), except L2,
   * whose words are left as they are: the state before a reset is then
   * what silicon powers up with, not zero. Then, with no clock edge in
   * between, reset is asserted and the sequence of `reset` runs; the
   * design's static and initial code runs again at the first evaluation.
   * Deterministic for a seed, whatever thread calls it; no lock. */
  void (*randomize_state)(void *sim, uint64_t seed);
  /* The first failed assertion since the last reset: its label and its
   * hierarchical scope, NUL-terminated, "" if none failed; valid until the
   * next tick. */
  const char *(*assert_name)(void *sim);
  const char *(*assert_scope)(void *sim);
  /* The other assertions that failed at the same clock edge as the first,
   * comma-separated ("" if none). */
  const char *(*assert_also)(void *sim);
  /* 0: failed assertions are not counted (from the next tick on); 1: they
   * are (the default). */
  void (*assert_enable)(void *sim, int on);
  /* The DUT as its manifest declares it (harness/rtl/dut.rs): its level
   * (0 black box, 1 retire, 2 full), its AXI-Lite width, whether an
   * instruction is pushed and kicked (else two 32-bit writes), whether
   * status comes through a FIFO (else registers), whether it has a back
   * door (else the back-door functions above return -1 or NULL) and two
   * clocks; its weight-stream ports: how many, their width (32, 64 or
   * 128 bits) and which carry the vector stream (bit p: port p carries
   * GEMV's, else GEMM's). */
  uint32_t level;
  uint32_t axil_bits;
  uint32_t push_kick;
  uint32_t status_fifo;
  uint32_t back_door;
  uint32_t two_clocks;
  uint32_t weight_ports;
  uint32_t weight_bits;
  uint32_t weight_gemv_ports;
  /* 1: L2's words are left out of the random power-up state (the manifest
   * names L2's array), so they survive randomize_state; 0: they are drawn
   * with the rest, and L2 must be loaded in full after it. */
  uint32_t l2_kept;
  /* 1: host memory is two streams (host_in_*, host_out_*), not the ACP
   * request port. */
  uint32_t host_streams;
} pccx_sim_ops;

#ifdef __cplusplus
}
#endif

#endif /* PCCX_SHIM_H */
