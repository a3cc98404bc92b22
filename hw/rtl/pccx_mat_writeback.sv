// pccx_mat_writeback: the output path shared by the GEMV and GEMM engines
// (docs/numerics.md section 2.2; routes 0x21 and 0x31).
//
// A two-stage pipeline over the output words. In the cycle the engine
// issues word i it reads the old destination word from L2; in the next cycle
// it converts the word's 8 exact accumulators to BF16 (one rounding), applies
// the column scales (w_scale) and adds the old elements (accm), each a single
// rounding of its exact result, and writes the word with its element mask.
// It also keeps the findemax maximum of every value written since `clear`.
module pccx_mat_writeback
  import pccx_bf16_pkg::*;
#(
  parameter int ACC_WORDS = 512
) (
  input  logic        clk,
  input  logic        rst_n,
  // per instruction, stable while it runs
  input  logic        clear,        // start of an instruction: forget e_max
  input  logic [16:0] dest,
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
  output logic         l2_rd_en,
  output logic [16:0]  l2_rd_addr,
  input  logic [127:0] l2_rd_data,
  output logic         l2_wr_en,
  output logic [16:0]  l2_wr_addr,
  output logic [127:0] l2_wr_data,
  output logic [7:0]   l2_wr_mask,
  // findemax maximum of the values written so far (valid after one write)
  output logic [15:0]  emax
);
  localparam int IW = $clog2(ACC_WORDS);

  logic          wr_valid;
  logic [IW-1:0] wr_idx, wr_col;
  logic [7:0]    wr_mask;

  assign l2_rd_en   = issue;
  assign l2_rd_addr = dest + 17'(issue_idx);
  assign acc_idx    = wr_idx;
  assign scale_idx  = wr_col;

  logic [15:0] result [8];
  logic [15:0] word_max;
  always_comb begin
    word_max = 16'h0000;
    for (int i = 0; i < 8; i++) begin
      result[i] = bf16_from_int(acc_word[i]);
      if (w_scale) result[i] = bf16_mul(result[i], scale_word[16*i +: 16]);
      if (accm)    result[i] = bf16_add(l2_rd_data[16*i +: 16], result[i]);
      l2_wr_data[16*i +: 16] = result[i];
    end
    // The word's maximum over its written lanes (lane 0 is always written).
    word_max = result[0];
    for (int i = 1; i < 8; i++)
      if (wr_mask[i] && emax_key(result[i]) > emax_key(word_max)) word_max = result[i];
  end

  assign l2_wr_en   = wr_valid;
  assign l2_wr_addr = dest + 17'(wr_idx);
  assign l2_wr_mask = wr_mask;

  logic emax_seen;
  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      wr_valid  <= 1'b0;
      wr_idx    <= '0;
      wr_col    <= '0;
      wr_mask   <= '0;
      emax      <= 16'h0000;
      emax_seen <= 1'b0;
    end else begin
      wr_valid <= issue;
      wr_idx   <= issue_idx;
      wr_col   <= issue_col;
      wr_mask  <= issue_mask;
      if (clear) emax_seen <= 1'b0;
      else if (wr_valid) begin
        emax_seen <= 1'b1;
        if (!emax_seen || emax_key(word_max) > emax_key(emax)) emax <= word_max;
      end
    end
  end
endmodule
