// pccx_mem_engine_env: pccx_mem_engine's formal environment (docs/formal.md):
// the trace starts in reset; the scheduler starts the engine only while it
// is idle and with a legal MEMCPY word, and the host answers only requests it was sent, one response
// each, and L2's read data holds between reads (named assumptions: L2 is
// cut to that); the fmap entry, the data read and the host's data and
// readiness are free. Covers of a copy in each direction.
module pccx_mem_engine_env
  import pccx_pkg::*;
#(
  parameter int L2_WORDS = 64
) (
  input logic         clk,
  input logic         rst_n,
  input eng_req_t     req,
  input shape_t       fmap,
  input l2_rsp_t      l2_rsp,
  input logic         acp_req_ready,
  input logic         acp_rsp_valid,
  input logic [127:0] acp_rsp_rdata
);
  eng_rsp_t     rsp;
  l2_req_t      l2_req;
  logic         acp_req_valid, acp_req_write, acp_rsp_ready;
  word_addr_t   acp_req_addr;
  logic [127:0] acp_req_wdata;

  pccx_mem_engine #(.L2_WORDS(L2_WORDS)) dut (.*);

  // The trace starts in reset: rst_n is low in the first cycle.
  logic started = 1'b0;
  always @(posedge clk) started <= 1'b1;
  always @* if (!started) assume (!rst_n);

  // Requests the host has taken and not answered yet.
  logic [18:0] outstanding;
  always @(posedge clk) begin
    if (!rst_n) outstanding <= '0;
    else outstanding <= outstanding + 19'(acp_req_valid && acp_req_ready)
                                    - 19'(acp_rsp_valid && acp_rsp_ready);
  end

  always @(posedge clk) if (rst_n) begin
`ifndef DROP_MemCallerStartIdle_M
    MemCallerStartIdle_M: assume (!req.start || rsp.idle);
`endif
    // The decoder passes only legal MEMCPY words (CONTRACT section 2: both
    // host flags set is illegal, retired by the decoder).
`ifndef DROP_MemCallerLegalWord_M
    MemCallerLegalWord_M: assume (!req.start
        || !(req.word.body.memcpy.from_device && req.word.body.memcpy.to_device));
`endif
    // The L2 cut to what the engine relies on: its read data holds while
    // no read is issued (pccx_l2's registered output).
`ifndef DROP_MemL2ReadHolds_M
    MemL2ReadHolds_M: assume (!$past(rst_n) || $past(l2_req.rd_en) || l2_rsp.rd_data == $past(l2_rsp.rd_data));
`endif
`ifndef DROP_MemHostAnswersRequests_M
    MemHostAnswersRequests_M: assume (!acp_rsp_valid || outstanding != '0);
`endif
    MemH2L_C: cover (dut.state == 4'd1 && l2_req.wr_en);
    MemL2H_C: cover (acp_req_valid && acp_req_write && !acp_req_ready);
    MemRetire_C: cover (rsp.ret_valid && rsp.ret_err == '0 && $past(!rsp.idle, 2));
  end
endmodule
