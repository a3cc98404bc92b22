// pccx_memset_engine_env: pccx_memset_engine's formal environment
// (docs/formal.md): the trace starts in reset; the scheduler starts the
// engine only while it is idle (a named assumption: EngStartIdle_A states
// it for the simulation); a cover of each state its assertions are about.
module pccx_memset_engine_env
  import pccx_pkg::*;
(
  input logic     clk,
  input logic     rst_n,
  input eng_req_t req
);
  eng_rsp_t  rsp;
  logic      tbl_wr_en;
  entry_id_t tbl_wr_entry;
  shape_t    tbl_wr_value;

  pccx_memset_engine dut (.*);

  // The trace starts in reset: rst_n is low in the first cycle.
  logic started = 1'b0;
  always @(posedge clk) started <= 1'b1;
  always @* if (!started) assume (!rst_n);

  always @(posedge clk) if (rst_n) begin
`ifndef DROP_MemsetCallerStartIdle_M
    MemsetCallerStartIdle_M: assume (!req.start || rsp.idle);
`endif
    // A start, a busy engine holding its tag, a retire, and a start in
    // the cycle after a retire.
    MemsetBusy_C: cover (!rsp.idle);
    MemsetRetire_C: cover (rsp.ret_valid);
    MemsetBackToBack_C: cover ($past(rsp.ret_valid) && req.start);
  end
endmodule
