// pccx_top: the pccx NPU as the harness sees it (docs/architecture.md).
//
// Architectural ports: AXI-Lite control slave, the ACP host-memory port.
// Simulation-only observation ports (tr_*): the latch and retire trace and
// the L2 and shape-table write ports, each tagged with the sequence number of
// the instruction responsible, plus the status register every cycle. L2, the
// shape tables and e_max are public for backdoor access.
module pccx_top
  import pccx_pkg::*;
#(
  parameter int L2_WORDS = 114688,
  parameter int FIFO_DEPTH = 8,
  // Test-only: bit e adds one cycle to engine e's latency, bit 5 to the
  // decoder's retire of illegal words. Deliberate timing bugs, built only by
  // the timing tests (hw/configs/skew_*.cfg) to prove the timing check fires.
  parameter int TIMING_SKEW = 0,
  localparam int NSLOT = NUM_ENGINES * FIFO_DEPTH + NUM_ENGINES,
  localparam int SW = $clog2(NSLOT)
) (
  input  logic         clk,
  input  logic         rst_n,
  // AXI-Lite control slave (S_AXIL_CTRL)
  input  logic         s_awvalid,
  output logic         s_awready,
  input  logic [11:0]  s_awaddr,
  input  logic         s_wvalid,
  output logic         s_wready,
  input  logic [31:0]  s_wdata,
  input  logic [3:0]   s_wstrb,
  output logic         s_bvalid,
  input  logic         s_bready,
  output logic [1:0]   s_bresp,
  input  logic         s_arvalid,
  output logic         s_arready,
  input  logic [11:0]  s_araddr,
  output logic         s_rvalid,
  input  logic         s_rready,
  output logic [31:0]  s_rdata,
  output logic [1:0]   s_rresp,
  // ACP host-memory port
  output logic         acp_req_valid,
  input  logic         acp_req_ready,
  output logic         acp_req_write,
  output logic [16:0]  acp_req_addr,
  output logic [127:0] acp_req_wdata,
  output logic [31:0]  acp_req_seq,     // simulation sideband: the requesting instruction
  input  logic         acp_rsp_valid,
  output logic         acp_rsp_ready,
  input  logic [127:0] acp_rsp_rdata,
  // observation (simulation only)
  output logic         tr_latch_valid,
  output logic [31:0]  tr_latch_seq,
  output logic [63:0]  tr_latch_word,
  output logic [NUM_RETIRE-1:0]    tr_ret_valid,  // slot p: engine p, slot 5: decoder
  output logic [32*NUM_RETIRE-1:0] tr_ret_seq,
  output logic [4*NUM_RETIRE-1:0]  tr_ret_op,
  output logic [4*NUM_RETIRE-1:0]  tr_ret_err,
  output logic         tr_l2w_mem_valid,
  output logic [16:0]  tr_l2w_mem_addr,
  output logic [127:0] tr_l2w_mem_data,
  output logic [7:0]   tr_l2w_mem_mask,
  output logic [31:0]  tr_l2w_mem_seq,
  output logic         tr_tbl_valid,
  output logic [6:0]   tr_tbl_entry,
  output logic [47:0]  tr_tbl_value,
  output logic [31:0]  tr_tbl_seq,
  output logic         tr_emax_valid,
  output logic [15:0]  tr_emax_value,
  output logic [31:0]  tr_emax_seq,
  output logic [NUM_ENGINES-1:0]    tr_start_valid,  // engine e starts an instruction
  output logic [32*NUM_ENGINES-1:0] tr_start_seq,
  output logic [31:0]  status_o,
  // backdoor write ports (simulation only; the harness uses them while idle)
  input  logic         bd_tbl_we,
  input  logic [6:0]   bd_tbl_entry,
  input  logic [47:0]  bd_tbl_value,
  input  logic         bd_emax_we,
  input  logic [15:0]  bd_emax_value
);
  // ---- front end --------------------------------------------------------------
  logic        lat_valid, lat_ready, lat_fire, clear_err;
  logic [63:0] lat_word;
  logic [31:0] lat_seq, retired_count;

  pccx_axil_slave u_axil (
    .clk, .rst_n,
    .s_awvalid, .s_awready, .s_awaddr, .s_wvalid, .s_wready, .s_wdata, .s_wstrb,
    .s_bvalid, .s_bready, .s_bresp, .s_arvalid, .s_arready, .s_araddr,
    .s_rvalid, .s_rready, .s_rdata, .s_rresp,
    .lat_valid, .lat_word, .lat_ready, .clear_err,
    .status (status_o), .retired_count
  );

  shape_t fmap [64], weight [64];
  logic [NUM_ENGINES-1:0] eng_idle, eng_start, eng_ret_valid;
  logic [63:0]   eng_word [NUM_ENGINES];
  logic [31:0]   eng_seq  [NUM_ENGINES];
  logic [SW-1:0] eng_slot [NUM_ENGINES];
  logic [SW-1:0] eng_ret_slot [NUM_ENGINES];
  logic [31:0]   ret_seq [NUM_RETIRE];
  logic [3:0]    ret_op  [NUM_RETIRE];
  logic [3:0]    ret_err [NUM_RETIRE];
  logic [NUM_RETIRE-1:0] ret_valid;

  pccx_scheduler #(.FIFO_DEPTH(FIFO_DEPTH), .DECODER_EXTRA_CYCLE(TIMING_SKEW[RET_DECODER])) u_sched (
    .clk, .rst_n,
    .lat_valid, .lat_word, .lat_ready, .lat_fire, .lat_seq,
    .fmap, .weight,
    .eng_idle, .eng_start, .eng_word, .eng_seq, .eng_slot,
    .eng_ret_valid, .eng_ret_slot,
    .dec_ret_valid (ret_valid[RET_DECODER]),
    .dec_ret_seq   (ret_seq[RET_DECODER]),
    .dec_ret_op    (ret_op[RET_DECODER]),
    .dec_ret_err   (ret_err[RET_DECODER])
  );

  pccx_status u_status (
    .clk, .rst_n, .lat_fire, .lat_seq, .clear_err,
    .ret_valid, .ret_seq, .ret_err,
    .status (status_o), .retired_count
  );

  assign eng_ret_valid = ret_valid[NUM_ENGINES-1:0];

  // ---- state --------------------------------------------------------------------
  logic      tbl_wr_en;
  entry_id_t tbl_wr_entry;
  shape_t    tbl_wr_value;

  pccx_shape_tables u_tables (
    .clk, .rst_n,
    .wr_en (tbl_wr_en), .wr_entry (tbl_wr_entry), .wr_value (tbl_wr_value),
    .bd_wr_en (bd_tbl_we), .bd_wr_entry (bd_tbl_entry), .bd_wr_value (bd_tbl_value),
    .fmap_o (fmap), .weight_o (weight)
  );

  // e_max: written by GEMV/GEMM findemax and read by CVO sub_emax once those
  // engines land; until then only the backdoor touches it. Public for reads.
  logic [15:0] e_max /*verilator public_flat_rd*/;
  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n)          e_max <= 16'h0000;
    else if (bd_emax_we) e_max <= bd_emax_value;
  end
  assign tr_emax_valid = 1'b0;
  assign tr_emax_value = e_max;
  assign tr_emax_seq   = '0;

  logic         mem_rd_en, mem_wr_en;
  logic [16:0]  mem_rd_addr, mem_wr_addr;
  logic [127:0] mem_rd_data, mem_wr_data;
  logic [7:0]   mem_wr_mask;

  pccx_l2 #(.L2_WORDS(L2_WORDS)) u_l2 (
    .clk,
    .mem_rd_en, .mem_rd_addr, .mem_rd_data,
    .mem_wr_en, .mem_wr_addr, .mem_wr_data, .mem_wr_mask
  );

  // ---- engines ------------------------------------------------------------------
  pccx_mem_engine #(.L2_WORDS(L2_WORDS), .SW(SW), .EXTRA_CYCLE(TIMING_SKEW[ENG_MEM])) u_mem (
    .clk, .rst_n,
    .start (eng_start[ENG_MEM]), .start_word (eng_word[ENG_MEM]),
    .start_seq (eng_seq[ENG_MEM]), .start_slot (eng_slot[ENG_MEM]),
    .fmap,
    .idle (eng_idle[ENG_MEM]), .ret_valid (ret_valid[ENG_MEM]),
    .ret_seq (ret_seq[ENG_MEM]), .ret_op (ret_op[ENG_MEM]), .ret_err (ret_err[ENG_MEM]),
    .ret_slot (eng_ret_slot[ENG_MEM]),
    .l2_rd_en (mem_rd_en), .l2_rd_addr (mem_rd_addr), .l2_rd_data (mem_rd_data),
    .l2_wr_en (mem_wr_en), .l2_wr_addr (mem_wr_addr), .l2_wr_data (mem_wr_data),
    .l2_wr_mask (mem_wr_mask),
    .acp_req_valid, .acp_req_ready, .acp_req_write, .acp_req_addr, .acp_req_wdata,
    .acp_rsp_valid, .acp_rsp_ready, .acp_rsp_rdata
  );
  assign acp_req_seq = ret_seq[ENG_MEM];

  pccx_memset_engine #(.SW(SW), .EXTRA_CYCLE(TIMING_SKEW[ENG_MEMSET])) u_memset (
    .clk, .rst_n,
    .start (eng_start[ENG_MEMSET]), .start_word (eng_word[ENG_MEMSET]),
    .start_seq (eng_seq[ENG_MEMSET]), .start_slot (eng_slot[ENG_MEMSET]),
    .idle (eng_idle[ENG_MEMSET]), .ret_valid (ret_valid[ENG_MEMSET]),
    .ret_seq (ret_seq[ENG_MEMSET]), .ret_op (ret_op[ENG_MEMSET]), .ret_err (ret_err[ENG_MEMSET]),
    .ret_slot (eng_ret_slot[ENG_MEMSET]),
    .tbl_wr_en, .tbl_wr_entry, .tbl_wr_value
  );

  // GEMV, GEMM and CVO: placeholders until their engines land.
  for (genvar e = 0; e < NUM_ENGINES; e++) begin : g_placeholder
    if (e == ENG_GEMV || e == ENG_GEMM || e == ENG_CVO) begin : g_engine
      pccx_placeholder_engine #(.SW(SW), .EXTRA_CYCLE(TIMING_SKEW[e])) u_engine (
        .clk, .rst_n,
        .start (eng_start[e]), .start_word (eng_word[e]),
        .start_seq (eng_seq[e]), .start_slot (eng_slot[e]),
        .idle (eng_idle[e]), .ret_valid (ret_valid[e]),
        .ret_seq (ret_seq[e]), .ret_op (ret_op[e]), .ret_err (ret_err[e]),
        .ret_slot (eng_ret_slot[e])
      );
    end
  end

  // ---- observation ports ----------------------------------------------------------
  assign tr_latch_valid = lat_fire;
  assign tr_latch_seq   = lat_seq;
  assign tr_latch_word  = lat_word;
  for (genvar e = 0; e < NUM_ENGINES; e++) begin : g_start_trace
    assign tr_start_valid[e]        = eng_start[e];
    assign tr_start_seq[32*e +: 32] = eng_seq[e];
  end
  for (genvar p = 0; p < NUM_RETIRE; p++) begin : g_trace
    assign tr_ret_valid[p]        = ret_valid[p];
    assign tr_ret_seq[32*p +: 32] = ret_seq[p];
    assign tr_ret_op[4*p +: 4]    = ret_op[p];
    assign tr_ret_err[4*p +: 4]   = ret_err[p];
  end
  assign tr_l2w_mem_valid = mem_wr_en;
  assign tr_l2w_mem_addr  = mem_wr_addr;
  assign tr_l2w_mem_data  = mem_wr_data;
  assign tr_l2w_mem_mask  = mem_wr_mask;
  assign tr_l2w_mem_seq   = ret_seq[ENG_MEM];
  assign tr_tbl_valid     = tbl_wr_en;
  assign tr_tbl_entry     = tbl_wr_entry;
  assign tr_tbl_value     = tbl_wr_value;
  assign tr_tbl_seq       = ret_seq[ENG_MEMSET];
endmodule
