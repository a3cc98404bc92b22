// pccx_memset_engine: MEMSET writes one shape-table entry. The write and the
// retire happen in the cycle after the start (docs/timing.md).
// EXTRA_CYCLE = 1 delays them by one cycle: a deliberate timing bug that only
// the timing tests build, to prove the timing check fires.
module pccx_memset_engine
  import pccx_pkg::*;
#(
  parameter bit EXTRA_CYCLE = 1'b0
) (
  input  logic          clk,
  input  logic          rst_n,
  input  eng_req_t      req,
  output eng_rsp_t      rsp,
  output logic          tbl_wr_en,
  output entry_id_t     tbl_wr_entry,
  output shape_t        tbl_wr_value
);
  logic [1:0]  phase; /*verilator coverage_off*/ // cycles left until the retire; 0 = idle
  logic [31:0] ret_seq;
  slot_t       ret_slot; /*verilator coverage_on*/ // no toggle coverage: = rsp.ret_*, counted there (constant or unreachable high bits)
  /* verilator lint_off UNUSEDSIGNAL */  // opcode, dest_cache[1] (checked by the
  instr_t      word;                      // decoder) and reserved bits
  /* verilator lint_on UNUSEDSIGNAL */

  assign rsp.idle      = (phase == 2'd0);
  assign rsp.ret_valid = (phase == 2'd1);
  assign rsp.ret_seq   = ret_seq;
  assign rsp.ret_op    = OP_MEMSET;
  assign rsp.ret_err   = ERR_OK;   // dest_cache was checked by the decoder
  assign rsp.ret_slot  = ret_slot;
  assign tbl_wr_en    = rsp.ret_valid;
  assign tbl_wr_entry = memset_entry(word);
  assign tbl_wr_value = '{a: word.body.memset.a_value, b: word.body.memset.b_value,
                          c: word.body.memset.c_value};

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      phase    <= 2'd0;
      word     <= '0;
      ret_seq  <= '0;
      ret_slot <= '0;
    end else begin
      if (phase != 2'd0) phase <= phase - 2'd1;
      if (req.start) begin
        phase    <= EXTRA_CYCLE ? 2'd2 : 2'd1;
        word     <= req.word;
        ret_seq  <= req.seq;
        ret_slot <= req.slot;
      end
    end
  end
  // ---- assertions (pccx_assert_pkg.sv, docs/assertions.md) ----------------
  `PCCX_ASSERT(MemsetPhaseLegal_A, phase <= 2'd2)
  `PCCX_ASSERT_ENGINE
endmodule
