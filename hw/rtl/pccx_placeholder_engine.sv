// pccx_placeholder_engine: stands in for GEMV, GEMM and CVO until their
// engines land (docs/semantics.md section 11). It takes its instruction
// through the same FIFO and scheduler as the real engine will, and retires
// it in the next cycle with ERR_UNIMPLEMENTED and no effect. EXTRA_CYCLE = 1
// retires one cycle later (a deliberate timing bug for the timing tests).
module pccx_placeholder_engine
  import pccx_pkg::*;
#(
  parameter int SW = 6,
  parameter bit EXTRA_CYCLE = 1'b0
) (
  input  logic          clk,
  input  logic          rst_n,
  input  logic          start,
  input  logic [63:0]   start_word,
  input  logic [31:0]   start_seq,
  input  logic [SW-1:0] start_slot,
  output logic          idle,
  output logic          ret_valid,
  output logic [31:0]   ret_seq,
  output logic [3:0]    ret_op,
  output logic [3:0]    ret_err,
  output logic [SW-1:0] ret_slot
);
  logic [1:0] phase;  // cycles left until the retire; 0 = idle

  assign idle      = (phase == 2'd0);
  assign ret_valid = (phase == 2'd1);
  assign ret_err   = ERR_UNIMPLEMENTED;

  /* verilator lint_off UNUSED */
  logic [59:0] unused_body;  // the body is ignored until the engine exists
  assign unused_body = start_word[59:0];
  /* verilator lint_on UNUSED */

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      phase    <= 2'd0;
      ret_seq  <= '0;
      ret_op   <= '0;
      ret_slot <= '0;
    end else begin
      if (phase != 2'd0) phase <= phase - 2'd1;
      if (start) begin
        phase    <= EXTRA_CYCLE ? 2'd2 : 2'd1;
        ret_seq  <= start_seq;
        ret_op   <= start_word[63:60];
        ret_slot <= start_slot;
      end
    end
  end
endmodule
