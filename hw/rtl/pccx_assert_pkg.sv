// pccx_assert_pkg: the RTL's assertions, one hook and a few named macros in
// the style of OpenTitan's prim_assert (docs/assertions.md).
//
// Every assertion of hw/rtl is one line at the end of its module, written
// with a macro below; its label is its name, which a failure reports (the
// mismatch kind `assertion`, signature `assertion/ENGINE/NAME`). They are
// compiled in every build (`--assert` in hw/verilator.f), unlike
// prim_assert's under Verilator. A failure calls the DPI import below,
// which the shim (harness/rtl/shim/pccx_assert_log.h) records for the
// harness: the simulation goes on, the harness ends the program there.
//
// This file is first in rtl/manifest.txt: Verilator reads the manifest as
// one compilation unit, so the macros are defined for every later file
// without an `include (an include line would move every line below it,
// and with them the names of the mutants, file:line:column).
//
// The macros take the module's `clk` and `rst_n` (every module that
// asserts has both) and are disabled in reset.
package pccx_assert_pkg;
  import "DPI-C" function void pccx_assert_fail(input string name, input string scope);
endpackage

`ifndef PCCX_ASSERT_PKG_SV
`define PCCX_ASSERT_PKG_SV

// PROP holds at every rising edge of clk out of reset. The reset is a
// synchronous use of the asynchronous rst_n, which -Wall reports
// (SYNCASYNCNET); that is what `disable iff` means, so it is waived here.
`define PCCX_ASSERT(NAME, PROP) \
  /*verilator coverage_off*/ \
  NAME: assert property (@(posedge clk) \
      disable iff (/*verilator lint_off SYNCASYNCNET*/!rst_n/*verilator lint_on SYNCASYNCNET*/) \
      (PROP)) \
    else pccx_assert_pkg::pccx_assert_fail(`"NAME`", $sformatf("%m")); \
  /*verilator coverage_on*/

// COND holds at every rising edge of clk out of reset, as PCCX_ASSERT, for
// a Boolean of the present cycle only: an immediate assertion in a clocked
// block (values before the edge, as a property samples them). For what
// the Verilator of Debian 12 (5.006) cannot take inside a property: a
// select of an unpacked array by a generate index (an internal error,
// V3Unknown "No VarRef or Const under ArraySel").
`define PCCX_ASSERT_NOW(NAME, COND) \
  /*verilator coverage_off*/ \
  always_ff @(posedge clk) \
    if (/*verilator lint_off SYNCASYNCNET*/rst_n/*verilator lint_on SYNCASYNCNET*/) \
      NAME: assert (COND) else pccx_assert_pkg::pccx_assert_fail(`"NAME`", $sformatf("%m")); \
  /*verilator coverage_on*/

// PROP never holds.
`define PCCX_ASSERT_NEVER(NAME, PROP) `PCCX_ASSERT(NAME, !(PROP))

// A VALID raised without READY stays raised, its PAYLOAD unchanged, until
// the cycle READY comes.
`define PCCX_ASSERT_HANDSHAKE(NAME, VALID, READY, PAYLOAD) \
  `PCCX_ASSERT(NAME, (VALID) && !(READY) |=> (VALID) && $stable(PAYLOAD))

// SIG is high for single cycles only.
`define PCCX_ASSERT_PULSE(NAME, SIG) `PCCX_ASSERT(NAME, (SIG) |=> !(SIG))

// At most one bit of VEC is set.
`define PCCX_ASSERT_ONEHOT0(NAME, VEC) `PCCX_ASSERT(NAME, $onehot0(VEC))

// The engine handshake of pccx_pkg, on the engine's side (ports `req`,
// `rsp`): a start comes only while idle; the engine is busy from the next
// cycle; its retire is a one-cycle pulse of a busy engine; the retire's
// tag (seq, slot) is that of the start and holds while busy.
`define PCCX_ASSERT_ENGINE \
  `PCCX_ASSERT(EngStartIdle_A, req.start |-> rsp.idle) \
  `PCCX_ASSERT(EngBusyAfterStart_A, req.start |=> !rsp.idle) \
  `PCCX_ASSERT(EngRetireBusy_A, rsp.ret_valid |-> !rsp.idle) \
  `PCCX_ASSERT_PULSE(EngRetirePulse_A, rsp.ret_valid) \
  `PCCX_ASSERT(EngTagOfStart_A, req.start |=> rsp.ret_seq == $past(req.seq) && rsp.ret_slot == $past(req.slot)) \
  `PCCX_ASSERT(EngTagStable_A, !rsp.idle |=> $stable(rsp.ret_seq) && $stable(rsp.ret_slot))

// An engine's L2 client port (`l2_req`, parameter L2_WORDS): every access
// lies inside L2 (the engine range-checks before it touches L2), and the
// port writes only while its engine is busy (no write after the retire).
`define PCCX_ASSERT_L2_PORT \
  `PCCX_ASSERT(L2ReadInRange_A, l2_req.rd_en |-> 32'(l2_req.rd_addr) < 32'(L2_WORDS)) \
  `PCCX_ASSERT(L2WriteInRange_A, l2_req.wr_en |-> 32'(l2_req.wr_addr) < 32'(L2_WORDS)) \
  `PCCX_ASSERT(L2WriteWhileBusy_A, l2_req.wr_en |-> !rsp.idle)

`endif
