// pccx_wrap_cdc_fifo: an asynchronous FIFO, the only path by which
// pccx_wrap_top moves data between its two clock domains.
module pccx_wrap_cdc_fifo #(
  parameter int WIDTH = 8,
  parameter int DEPTH = 4   // a power of two >= 2 (the Gray wrap needs it)
) (
  input  logic             wr_clk,
  input  logic             wr_rst_n,
  input  logic             wr_en,     // ignored while full
  input  logic [WIDTH-1:0] wr_data,
  output logic             full,
  input  logic             rd_clk,
  input  logic             rd_rst_n,
  input  logic             rd_en,     // ignored while empty
  output logic [WIDTH-1:0] rd_data,
  output logic             empty
);
  localparam int AW = $clog2(DEPTH);

  // A Gray pointer one full lap ahead of another differs from it in its two
  // top bits only.
  localparam logic [AW:0] FULL_XOR = (AW + 1)'(3) << (AW - 1);

  if (DEPTH < 2 || (DEPTH & (DEPTH - 1)) != 0) begin : g_bad_depth
    $error("pccx_wrap_cdc_fifo: DEPTH must be a power of two >= 2");
  end

  function automatic logic [AW:0] to_gray(logic [AW:0] b);
    return b ^ (b >> 1);
  endfunction

  // Each side addresses with its own binary pointer and shows the other side
  // a Gray copy (one extra wrap bit) that is sampled through two flops: a Gray
  // pointer changes one bit per step, so a sample taken mid-change is the old
  // or the new value, never a third one. The sampled pointers lag, which makes
  // `full` and `empty` pessimistic, never wrong.
  logic [WIDTH-1:0] mem [DEPTH];

  // ---- write side (wr_clk) ----------------------------------------------------
  logic [AW:0] wr_bin, wr_bin_next, wr_gray;
  logic [AW:0] rd_gray_meta, rd_gray_w;   // rd_gray, synchronized to wr_clk
  logic        wr_fire;

  assign full        = (wr_gray ^ rd_gray_w) == FULL_XOR;
  assign wr_fire     = wr_en && !full;
  assign wr_bin_next = wr_bin + (AW + 1)'(1);

  always_ff @(posedge wr_clk or negedge wr_rst_n) begin
    if (!wr_rst_n) begin
      wr_bin       <= '0;
      wr_gray      <= '0;
      rd_gray_meta <= '0;
      rd_gray_w    <= '0;
    end else begin
      rd_gray_meta <= rd_gray;
      rd_gray_w    <= rd_gray_meta;
      if (wr_fire) begin
        wr_bin  <= wr_bin_next;
        wr_gray <= to_gray(wr_bin_next);
      end
    end
  end

  // No reset: an entry is only read after its write pointer has crossed.
  always_ff @(posedge wr_clk) begin
    if (wr_fire) mem[wr_bin[AW-1:0]] <= wr_data;
  end

  // ---- read side (rd_clk) -----------------------------------------------------
  logic [AW:0] rd_bin, rd_bin_next, rd_gray;
  logic [AW:0] wr_gray_meta, wr_gray_r;   // wr_gray, synchronized to rd_clk
  logic        rd_fire;

  assign empty       = (rd_gray == wr_gray_r);
  assign rd_fire     = rd_en && !empty;
  assign rd_bin_next = rd_bin + (AW + 1)'(1);
  assign rd_data     = mem[rd_bin[AW-1:0]];  // first-word fall-through

  always_ff @(posedge rd_clk or negedge rd_rst_n) begin
    if (!rd_rst_n) begin
      rd_bin       <= '0;
      rd_gray      <= '0;
      wr_gray_meta <= '0;
      wr_gray_r    <= '0;
    end else begin
      wr_gray_meta <= wr_gray;
      wr_gray_r    <= wr_gray_meta;
      if (rd_fire) begin
        rd_bin  <= rd_bin_next;
        rd_gray <= to_gray(rd_bin_next);
      end
    end
  end
endmodule
