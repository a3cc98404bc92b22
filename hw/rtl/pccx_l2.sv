// pccx_l2: the L2 scratchpad, L2_WORDS x 128 bits, word-addressed. Each L2
// client (pccx_pkg::L2P_*) has its own read port (registered: data one cycle
// after rd_en) and write port (8-bit BF16-element mask, committed at the
// clock edge). In-flight clients never touch overlapping words (the
// scheduler's conflict rule), so separate ports need no arbitration and
// engine timing stays independent. `mem` is public for the harness backdoor.
module pccx_l2
  import pccx_pkg::*;
#(
  parameter int L2_WORDS = 114688
) (
  input  logic    clk,
  input  l2_req_t req [NUM_L2_PORTS],
  output l2_rsp_t rsp [NUM_L2_PORTS]
);
  localparam int AW = $clog2(L2_WORDS);

  logic [127:0] mem [L2_WORDS] /*verilator public_flat_rw*/;

  function automatic logic [127:0] merge(logic [127:0] old, logic [127:0] data, logic [7:0] mask);
    logic [127:0] r;
    for (int i = 0; i < 8; i++) r[16*i +: 16] = mask[i] ? data[16*i +: 16] : old[16*i +: 16];
    return r;
  endfunction

  // Instruction addresses are 17 bits; a smaller L2 uses only the low AW
  // bits (the engines have range-checked every address against L2_WORDS
  // before any access, so the index always lies below L2_WORDS).
  always_ff @(posedge clk) begin
    for (int p = 0; p < NUM_L2_PORTS; p++) begin
      if (req[p].rd_en) rsp[p].rd_data <= mem[req[p].rd_addr[AW-1:0]];
      if (req[p].wr_en)
        mem[req[p].wr_addr[AW-1:0]] <= merge(mem[req[p].wr_addr[AW-1:0]], req[p].wr_data,
                                             req[p].wr_mask);
    end
  end

  /* verilator lint_off UNUSEDSIGNAL */
  logic unused_high_bits;
  always_comb begin
    unused_high_bits = 1'b0;
    for (int p = 0; p < NUM_L2_PORTS; p++)
      unused_high_bits = unused_high_bits ^ (^req[p].rd_addr) ^ (^req[p].wr_addr);
  end
  /* verilator lint_on UNUSEDSIGNAL */
endmodule
