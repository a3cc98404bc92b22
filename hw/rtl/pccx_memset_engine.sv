// pccx_memset_engine: MEMSET writes one shape-table entry. The write and the
// retire happen in the cycle after the start (docs/timing.md).
// EXTRA_CYCLE = 1 delays them by one cycle: a deliberate timing bug that only
// the timing tests build, to prove the timing check fires.
module pccx_memset_engine
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
  output logic [SW-1:0] ret_slot,
  output logic          tbl_wr_en,
  output entry_id_t     tbl_wr_entry,
  output shape_t        tbl_wr_value
);
  logic [1:0]  phase;  // cycles left until the retire; 0 = idle
  /* verilator lint_off UNUSEDSIGNAL */  // opcode, dest_cache[1] (checked by the
  logic [63:0] word;                      // decoder) and reserved bits
  /* verilator lint_on UNUSEDSIGNAL */

  assign idle         = (phase == 2'd0);
  assign ret_valid    = (phase == 2'd1);
  assign ret_op       = OP_MEMSET;
  assign ret_err      = ERR_OK;   // dest_cache was checked by the decoder
  assign tbl_wr_en    = ret_valid;
  assign tbl_wr_entry = {word[58], word[57:52]};
  assign tbl_wr_value = '{a: word[51:36], b: word[35:20], c: word[19:4]};

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      phase    <= 2'd0;
      word     <= '0;
      ret_seq  <= '0;
      ret_slot <= '0;
    end else begin
      if (phase != 2'd0) phase <= phase - 2'd1;
      if (start) begin
        phase    <= EXTRA_CYCLE ? 2'd2 : 2'd1;
        word     <= start_word;
        ret_seq  <= start_seq;
        ret_slot <= start_slot;
      end
    end
  end
endmodule
