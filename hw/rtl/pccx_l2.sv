// pccx_l2: the L2 scratchpad, L2_WORDS x 128 bits, word-addressed. Each L2
// client has its own read port (registered: data one cycle after rd_en) and
// write port (8-bit BF16-element mask, committed at the clock edge). In-flight
// clients never touch overlapping words (the scheduler's conflict rule), so
// separate ports need no arbitration and engine timing stays independent.
// `mem` is public for the harness backdoor.
module pccx_l2 #(
  parameter int L2_WORDS = 114688
) (
  input  logic         clk,
  // MEM dispatcher port
  input  logic         mem_rd_en,
  input  logic [16:0]  mem_rd_addr,
  output logic [127:0] mem_rd_data,
  input  logic         mem_wr_en,
  input  logic [16:0]  mem_wr_addr,
  input  logic [127:0] mem_wr_data,
  input  logic [7:0]   mem_wr_mask
);
  localparam int AW = $clog2(L2_WORDS);

  logic [127:0] mem [L2_WORDS] /*verilator public_flat_rw*/;

  // Instruction addresses are 17 bits; a smaller L2 uses only the low AW
  // bits (the engines have already checked the address against L2_WORDS).
  /* verilator lint_off UNUSED */
  logic [16:0] unused_high_bits;
  assign unused_high_bits = mem_rd_addr & mem_wr_addr;
  /* verilator lint_on UNUSED */

  function automatic logic [127:0] merge(logic [127:0] old, logic [127:0] data, logic [7:0] mask);
    logic [127:0] r;
    for (int i = 0; i < 8; i++) r[16*i +: 16] = mask[i] ? data[16*i +: 16] : old[16*i +: 16];
    return r;
  endfunction

  // Addresses are range-checked by the engines before any access, so the
  // index always lies below L2_WORDS.
  always_ff @(posedge clk) begin
    if (mem_rd_en) mem_rd_data <= mem[mem_rd_addr[AW-1:0]];
    if (mem_wr_en) mem[mem_wr_addr[AW-1:0]] <= merge(mem[mem_wr_addr[AW-1:0]], mem_wr_data, mem_wr_mask);
  end
endmodule
