// pccx_assert_formal: the formal flow's stand-in for hw/rtl/pccx_assert_pkg.sv
// (docs/formal.md), read in its place so that hw/rtl is read unchanged.
//
// The same macro names, each property stated as a Boolean of the present
// cycle and $past of the one before, because Yosys's read_slang takes no
// SVA sequences (`|->`, `|=>`, `##1`): `A |=> B` is
// `!($past(rst_n) && $past(A)) || B`. No DPI call: a failure is the
// solver's counterexample. Checked, as in simulation, at every rising edge
// of clk out of reset.
package pccx_assert_pkg;
endpackage

`ifndef PCCX_ASSERT_PKG_SV
`define PCCX_ASSERT_PKG_SV

`define PCCX_ASSERT(NAME, PROP) \
  always @(posedge clk) if (rst_n) NAME: assert (PROP);

`define PCCX_ASSERT_NOW(NAME, COND) `PCCX_ASSERT(NAME, COND)

`define PCCX_ASSERT_NEVER(NAME, PROP) `PCCX_ASSERT(NAME, !(PROP))

// The cycle before was out of reset and COND held in it.
`define PCCX_AFTER(COND) ($past(rst_n) && $past(COND))

`define PCCX_ASSERT_HANDSHAKE(NAME, VALID, READY, PAYLOAD) \
  `PCCX_ASSERT(NAME, !`PCCX_AFTER((VALID) && !(READY)) || ((VALID) && (PAYLOAD) == $past(PAYLOAD)))

`define PCCX_ASSERT_PULSE(NAME, SIG) `PCCX_ASSERT(NAME, !`PCCX_AFTER(SIG) || !(SIG))

`define PCCX_ASSERT_ONEHOT0(NAME, VEC) `PCCX_ASSERT(NAME, ((VEC) & ((VEC) - 1'b1)) == '0)

`define PCCX_ASSERT_ENGINE \
  `PCCX_ASSERT(EngStartIdle_A, !req.start || rsp.idle) \
  `PCCX_ASSERT(EngBusyAfterStart_A, !`PCCX_AFTER(req.start) || !rsp.idle) \
  `PCCX_ASSERT(EngRetireBusy_A, !rsp.ret_valid || !rsp.idle) \
  `PCCX_ASSERT_PULSE(EngRetirePulse_A, rsp.ret_valid) \
  `PCCX_ASSERT(EngTagOfStart_A, !`PCCX_AFTER(req.start) || (rsp.ret_seq == $past(req.seq) && rsp.ret_slot == $past(req.slot))) \
  `PCCX_ASSERT(EngTagStable_A, !`PCCX_AFTER(!rsp.idle) || (rsp.ret_seq == $past(rsp.ret_seq) && rsp.ret_slot == $past(rsp.ret_slot)))

`define PCCX_ASSERT_L2_PORT \
  `PCCX_ASSERT(L2ReadInRange_A, !l2_req.rd_en || 32'(l2_req.rd_addr) < 32'(L2_WORDS)) \
  `PCCX_ASSERT(L2WriteInRange_A, !l2_req.wr_en || 32'(l2_req.wr_addr) < 32'(L2_WORDS)) \
  `PCCX_ASSERT(L2WriteWhileBusy_A, !l2_req.wr_en || !rsp.idle)

`endif
