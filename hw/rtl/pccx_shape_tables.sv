// pccx_shape_tables: the fmap and weight shape tables, 64 entries of
// (a, b, c) each, zero after reset. One write port (the MEMSET engine); every
// entry is readable at once because the scheduler computes footprints from
// them. The harness reads `fmap` and `weight` directly (they are public) but
// loads them through the backdoor write port: a direct write from C++ would
// not reach the copies Verilator keeps for the readers until the next edge.
module pccx_shape_tables
  import pccx_pkg::*;
(
  input  logic      clk,
  input  logic      rst_n,
  input  logic      wr_en,
  input  entry_id_t wr_entry,
  input  shape_t    wr_value,
  input  logic      bd_wr_en,      // simulation backdoor, used while idle
  input  entry_id_t bd_wr_entry,
  input  shape_t    bd_wr_value,
  output shape_t    fmap_o   [64],
  output shape_t    weight_o [64]
);
  shape_t fmap   [64] /*verilator public_flat_rw*/;
  shape_t weight [64] /*verilator public_flat_rw*/;

  assign fmap_o   = fmap;
  assign weight_o = weight;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      for (int i = 0; i < 64; i++) begin
        fmap[i]   <= '0;
        weight[i] <= '0;
      end
    end else if (bd_wr_en) begin
      if (bd_wr_entry[6]) weight[bd_wr_entry[5:0]] <= bd_wr_value;
      else                fmap[bd_wr_entry[5:0]]   <= bd_wr_value;
    end else if (wr_en) begin
      if (wr_entry[6]) weight[wr_entry[5:0]] <= wr_value;
      else             fmap[wr_entry[5:0]]   <= wr_value;
    end
  end
endmodule
