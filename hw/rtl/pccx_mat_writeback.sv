// pccx_mat_writeback: the output path shared by the GEMV and GEMM engines
// (docs/numerics.md section 2.2; routes 0x21 and 0x31).
//
// A three-stage pipeline over the output words. In the cycle the engine
// issues word i it reads the old destination word from L2; in the next cycle
// it converts the word's 8 exact accumulators to BF16 (one rounding), applies
// the column scales (w_scale) and adds the old elements (accm), each a single
// rounding of its exact result, into the output register; in the cycle after
// that the word is written with its element mask. It also keeps the findemax
// maximum of every value computed since `clear`.
//
// The arithmetic sits in a clocked block under `if (cvt_valid)`, not in
// combinational logic: Verilator evaluates combinational logic after every
// clock edge, and eight BF16 pipelines for each of two engines would then
// cost every simulated cycle, busy or not.
module pccx_mat_writeback
  import pccx_pkg::*;
  import pccx_bf16_pkg::*;
#(
  parameter int ACC_WORDS = 512
) (
  input  logic        clk,
  input  logic        rst_n,
  // per instruction, stable while it runs
  input  logic        clear,        // start of an instruction: forget e_max
  input  word_addr_t  dest,
  input  logic        accm,
  input  logic        w_scale,
  // issue stage: word `issue_idx` of the output, column word `issue_col`
  input  logic        issue,
  input  logic [$clog2(ACC_WORDS)-1:0] issue_idx,
  input  logic [$clog2(ACC_WORDS)-1:0] issue_col,
  input  logic [7:0]  issue_mask,
  // the engine's accumulator word and scale word for the write stage
  output logic [$clog2(ACC_WORDS)-1:0] acc_idx,
  input  logic signed [31:0] acc_word [8],
  output logic [$clog2(ACC_WORDS)-1:0] scale_idx,
  input  logic [127:0] scale_word,
  // L2 port (read data one cycle after rd_en)
  output l2_req_t      l2_req,
  input  l2_rsp_t      l2_rsp,
  // findemax maximum of the values written so far (valid after one write)
  output logic [15:0]  emax
);
  localparam int IW = $clog2(ACC_WORDS);

  // stage 2: convert; stage 3: write
  logic          cvt_valid;
  logic [IW-1:0] cvt_idx, cvt_col;
  logic [7:0]    cvt_mask;
  logic          out_valid;
  logic [IW-1:0] out_idx;
  logic [127:0]  out_data;
  logic [7:0]    out_mask;
  logic          emax_seen;

  assign l2_req.rd_en   = issue;
  assign l2_req.rd_addr = dest + 17'(issue_idx);
  assign acc_idx        = cvt_idx;
  assign scale_idx      = cvt_col;
  assign l2_req.wr_en   = out_valid;
  assign l2_req.wr_addr = dest + 17'(out_idx);
  assign l2_req.wr_data = out_data;
  assign l2_req.wr_mask = out_mask;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      cvt_valid <= 1'b0;
      cvt_idx   <= '0;
      cvt_col   <= '0;
      cvt_mask  <= '0;
      out_valid <= 1'b0;
      out_idx   <= '0;
      out_data  <= '0;
      out_mask  <= '0;
      emax      <= 16'h0000;
      emax_seen <= 1'b0;
    end else begin
      cvt_valid <= issue;
      cvt_idx   <= issue_idx;
      cvt_col   <= issue_col;
      cvt_mask  <= issue_mask;
      out_valid <= cvt_valid;
      if (clear) emax_seen <= 1'b0;
      if (cvt_valid) begin
        logic [15:0] r, word_max;
        logic [127:0] data;
        word_max = 16'h0000;
        for (int i = 0; i < 8; i++) begin
          r = bf16_from_int(acc_word[i]);
          if (w_scale) r = bf16_mul(r, scale_word[16*i +: 16]);
          if (accm)    r = bf16_add(l2_rsp.rd_data[16*i +: 16], r);
          data[16*i +: 16] = r;
          // Lane 0 is always written; the others only when the mask says so.
          if (i == 0 || (cvt_mask[i] && emax_key(r) > emax_key(word_max))) word_max = r;
        end
        out_idx  <= cvt_idx;
        out_data <= data;
        out_mask <= cvt_mask;
        emax_seen <= 1'b1;
        if (!emax_seen || emax_key(word_max) > emax_key(emax)) emax <= word_max;
      end
    end
  end
endmodule
