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
  // The GEMM systolic array (rows along K, columns along N) and the GEMV
  // vector core's uV lanes. Timing only: results never depend on them.
  parameter int ARRAY_ROWS = 32,
  parameter int ARRAY_COLS = 32,
  parameter int VEC_LANES = 4,
  // The CVO engine's uCVO cores (docs/cvo.md section 4). Timing only.
  parameter int CVO_CORES = 2
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
  output word_addr_t   acp_req_addr,
  output logic [127:0] acp_req_wdata, /*verilator coverage_off*/
  output logic [31:0]  acp_req_seq, /*verilator coverage_on*/ // simulation sideband: the requesting instruction; no toggle coverage: a sequence number, top bits unreachable in a bounded case (counted in req.seq)
  input  logic         acp_rsp_valid,
  output logic         acp_rsp_ready,
  input  logic [127:0] acp_rsp_rdata,
  // weight streams (stream s = pccx_pkg::WS_*: 0 matrix for GEMM, 1 vector
  // for GEMV), 128-bit beats, a beat moves when valid and ready
  input  logic [NUM_STREAMS-1:0]     ws_valid,
  output logic [NUM_STREAMS-1:0]     ws_ready,
  input  logic [128*NUM_STREAMS-1:0] ws_data, /*verilator coverage_off*/
  output logic [32*NUM_STREAMS-1:0]  ws_seq, /*verilator coverage_on*/ // simulation sideband: the consuming instruction; no toggle coverage: sequence numbers, top bits unreachable in a bounded case (counted in req.seq)
  // observation (simulation only)
  output logic         tr_latch_valid, /*verilator coverage_off*/
  output logic [31:0]  tr_latch_seq, /*verilator coverage_on*/ // no toggle coverage: a sequence number, top bits unreachable in a bounded case (counted in req.seq)
  output logic [63:0]  tr_latch_word,
  output logic [NUM_RETIRE-1:0]    tr_ret_valid, /*verilator coverage_off*/ // slot p: engine p, slot 5: decoder
  output logic [32*NUM_RETIRE-1:0] tr_ret_seq,
  output logic [4*NUM_RETIRE-1:0]  tr_ret_op, /*verilator coverage_on*/ // no toggle coverage on both: sequence numbers (see ws_seq) and opcodes, constant but u_sched.dec_ret_op
  output logic [4*NUM_RETIRE-1:0]  tr_ret_err,
  output logic [NUM_L2_PORTS-1:0]     tr_l2w_valid,  // port p = pccx_pkg::L2P_*
  output logic [17*NUM_L2_PORTS-1:0]  tr_l2w_addr,
  output logic [128*NUM_L2_PORTS-1:0] tr_l2w_data,
  output logic [8*NUM_L2_PORTS-1:0]   tr_l2w_mask, /*verilator coverage_off*/
  output logic [32*NUM_L2_PORTS-1:0]  tr_l2w_seq, /*verilator coverage_on*/ // no toggle coverage: sequence numbers, top bits unreachable in a bounded case (counted in req.seq)
  output logic         tr_tbl_valid,
  output entry_id_t    tr_tbl_entry,
  output logic [47:0]  tr_tbl_value, /*verilator coverage_off*/
  output logic [31:0]  tr_tbl_seq, /*verilator coverage_on*/ // no toggle coverage: a sequence number, top bits unreachable in a bounded case (counted in req.seq)
  output logic         tr_emax_valid,
  output logic [15:0]  tr_emax_value, /*verilator coverage_off*/
  output logic [31:0]  tr_emax_seq, /*verilator coverage_on*/ // no toggle coverage: a sequence number, top bits unreachable in a bounded case (counted in req.seq)
  output logic [NUM_ENGINES-1:0]    tr_start_valid, /*verilator coverage_off*/ // engine e starts an instruction
  output logic [32*NUM_ENGINES-1:0] tr_start_seq,
  output logic [31:0]  status_o, /*verilator coverage_on*/ // no toggle coverage on both: sequence numbers (see ws_seq) and a copy of u_status.status
  // backdoor write ports (simulation only; the harness uses them while idle)
  input  logic         bd_tbl_we,
  input  entry_id_t    bd_tbl_entry,
  input  logic [47:0]  bd_tbl_value,
  input  logic         bd_emax_we,
  input  logic [15:0]  bd_emax_value
);
  // ---- front end --------------------------------------------------------------
  logic        lat_valid, lat_ready, lat_fire, clear_err;
  logic [63:0] lat_word; /*verilator coverage_off*/
  logic [31:0] lat_seq, retired_count; /*verilator coverage_on*/ // no toggle coverage: a sequence number (see ws_seq) and a copy of u_status.retired_count

  pccx_axil_slave u_axil (
    .clk, .rst_n,
    .s_awvalid, .s_awready, .s_awaddr, .s_wvalid, .s_wready, .s_wdata, .s_wstrb,
    .s_bvalid, .s_bready, .s_bresp, .s_arvalid, .s_arready, .s_araddr,
    .s_rvalid, .s_rready, .s_rdata, .s_rresp,
    .lat_valid, .lat_word, .lat_ready, .clear_err,
    .status (status_o), .retired_count
  ); /*verilator coverage_off*/

  shape_t eng_fmap [NUM_ENGINES], eng_weight [NUM_ENGINES]; /*verilator coverage_on*/ // no toggle coverage: tied to zero or an engine's fmap/weight port, counted there
  logic      tbl_wr_en;
  entry_id_t tbl_wr_entry;
  shape_t    tbl_wr_value;
  eng_req_t      eng_req [NUM_ENGINES]; /*verilator coverage_off*/ // the engine handshake (pccx_pkg)
  eng_rsp_t      eng_rsp [NUM_ENGINES];
  logic [31:0]   ret_seq [NUM_RETIRE];
  logic [3:0]    ret_op  [NUM_RETIRE]; /*verilator coverage_on*/ // no toggle coverage on these three: copies of the engines' rsp ports and u_sched.dec_ret_*
  logic [3:0]    ret_err [NUM_RETIRE];
  logic [NUM_RETIRE-1:0] ret_valid;

  pccx_scheduler #(.FIFO_DEPTH(FIFO_DEPTH), .DECODER_EXTRA_CYCLE(TIMING_SKEW[RET_DECODER])) u_sched (
    .clk, .rst_n,
    .lat_valid, .lat_word, .lat_ready, .lat_fire, .lat_seq,
    .tbl_wr_en, .tbl_wr_entry, .tbl_wr_value,
    .bd_wr_en (bd_tbl_we), .bd_wr_entry (bd_tbl_entry), .bd_wr_value (bd_tbl_value),
    .eng_fmap, .eng_weight,
    .eng_req, .eng_rsp,
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

  // The retire ports: the five engines', then the decoder's (above).
  for (genvar e = 0; e < NUM_ENGINES; e++) begin : g_retire
    assign ret_valid[e] = eng_rsp[e].ret_valid;
    assign ret_seq[e]   = eng_rsp[e].ret_seq;
    assign ret_op[e]    = eng_rsp[e].ret_op;
    assign ret_err[e]   = eng_rsp[e].ret_err;
  end

  // ---- state --------------------------------------------------------------------
  // e_max: written by GEMV/GEMM findemax in their retire cycle (the conflict
  // rule orders any two writers and a CVO with sub_emax after them), read by
  // the CVO engine at its start (sub_emax). Public for backdoor reads.
  logic [15:0] e_max /*verilator public_flat_rd*/;
  logic        gemv_emax_we, gemm_emax_we;
  logic [15:0] gemv_emax, gemm_emax;
  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n)            e_max <= 16'h0000;
    else if (bd_emax_we)   e_max <= bd_emax_value;
    else if (gemv_emax_we) e_max <= gemv_emax;
    else if (gemm_emax_we) e_max <= gemm_emax;
  end
  assign tr_emax_valid = gemv_emax_we || gemm_emax_we;
  assign tr_emax_value = gemv_emax_we ? gemv_emax : gemm_emax;
  assign tr_emax_seq   = gemv_emax_we ? ret_seq[ENG_GEMV] : ret_seq[ENG_GEMM];

  l2_req_t      l2_req    [NUM_L2_PORTS];  // the L2 client ports (pccx_pkg)
  l2_rsp_t      l2_rsp    [NUM_L2_PORTS]; /*verilator coverage_off*/
  logic [31:0]  l2_wr_seq [NUM_L2_PORTS]; /*verilator coverage_on*/ // no toggle coverage: sequence numbers, top bits unreachable in a bounded case (counted in req.seq)

  pccx_l2 #(.L2_WORDS(L2_WORDS)) u_l2 (.clk, .req (l2_req), .rsp (l2_rsp));

  // ---- engines ------------------------------------------------------------------
  pccx_mem_engine #(.L2_WORDS(L2_WORDS), .EXTRA_CYCLE(TIMING_SKEW[ENG_MEM])) u_mem (
    .clk, .rst_n,
    .req (eng_req[ENG_MEM]), .rsp (eng_rsp[ENG_MEM]),
    .fmap (eng_fmap[ENG_MEM]),
    .l2_req (l2_req[L2P_MEM]), .l2_rsp (l2_rsp[L2P_MEM]),
    .acp_req_valid, .acp_req_ready, .acp_req_write, .acp_req_addr, .acp_req_wdata,
    .acp_rsp_valid, .acp_rsp_ready, .acp_rsp_rdata
  );
  assign acp_req_seq = ret_seq[ENG_MEM];

  pccx_memset_engine #(.EXTRA_CYCLE(TIMING_SKEW[ENG_MEMSET])) u_memset (
    .clk, .rst_n,
    .req (eng_req[ENG_MEMSET]), .rsp (eng_rsp[ENG_MEMSET]),
    .tbl_wr_en, .tbl_wr_entry, .tbl_wr_value
  );

  assign l2_wr_seq[L2P_MEM] = ret_seq[ENG_MEM];

  pccx_gemv_engine #(
    .L2_WORDS(L2_WORDS), .LANES(VEC_LANES), .EXTRA_CYCLE(TIMING_SKEW[ENG_GEMV])
  ) u_gemv (
    .clk, .rst_n,
    .req (eng_req[ENG_GEMV]), .rsp (eng_rsp[ENG_GEMV]),
    .fmap (eng_fmap[ENG_GEMV]), .weight (eng_weight[ENG_GEMV]),
    .l2_req (l2_req[L2P_GEMV]), .l2_rsp (l2_rsp[L2P_GEMV]),
    .ws_valid (ws_valid[WS_VECTOR]), .ws_ready (ws_ready[WS_VECTOR]),
    .ws_data (ws_data[128*WS_VECTOR +: 128]),
    .emax_we (gemv_emax_we), .emax_value (gemv_emax)
  );
  assign l2_wr_seq[L2P_GEMV] = ret_seq[ENG_GEMV];

  pccx_gemm_engine #(
    .L2_WORDS(L2_WORDS), .ROWS(ARRAY_ROWS), .COLS(ARRAY_COLS),
    .EXTRA_CYCLE(TIMING_SKEW[ENG_GEMM])
  ) u_gemm (
    .clk, .rst_n,
    .req (eng_req[ENG_GEMM]), .rsp (eng_rsp[ENG_GEMM]),
    .fmap (eng_fmap[ENG_GEMM]), .weight (eng_weight[ENG_GEMM]),
    .l2_req (l2_req[L2P_GEMM]), .l2_rsp (l2_rsp[L2P_GEMM]),
    .ws_valid (ws_valid[WS_MATRIX]), .ws_ready (ws_ready[WS_MATRIX]),
    .ws_data (ws_data[128*WS_MATRIX +: 128]),
    .emax_we (gemm_emax_we), .emax_value (gemm_emax)
  );
  assign l2_wr_seq[L2P_GEMM] = ret_seq[ENG_GEMM];

  assign ws_seq[32*WS_MATRIX +: 32] = ret_seq[ENG_GEMM];
  assign ws_seq[32*WS_VECTOR +: 32] = ret_seq[ENG_GEMV];

  // CVO: CVO_CORES uCVO cores; sub_emax reads e_max (docs/cvo.md).
  pccx_cvo_engine #(
    .L2_WORDS(L2_WORDS), .CORES(CVO_CORES), .EXTRA_CYCLE(TIMING_SKEW[ENG_CVO])
  ) u_cvo (
    .clk, .rst_n,
    .req (eng_req[ENG_CVO]), .rsp (eng_rsp[ENG_CVO]),
    .e_max,
    .l2_req (l2_req[L2P_CVO]), .l2_rsp (l2_rsp[L2P_CVO])
  );
  assign l2_wr_seq[L2P_CVO] = ret_seq[ENG_CVO];

  // ---- observation ports ----------------------------------------------------------
  assign tr_latch_valid = lat_fire;
  assign tr_latch_seq   = lat_seq;
  assign tr_latch_word  = lat_word;
  for (genvar e = 0; e < NUM_ENGINES; e++) begin : g_start_trace
    assign tr_start_valid[e]        = eng_req[e].start;
    assign tr_start_seq[32*e +: 32] = eng_req[e].seq;
  end
  for (genvar p = 0; p < NUM_RETIRE; p++) begin : g_trace
    assign tr_ret_valid[p]        = ret_valid[p];
    assign tr_ret_seq[32*p +: 32] = ret_seq[p];
    assign tr_ret_op[4*p +: 4]    = ret_op[p];
    assign tr_ret_err[4*p +: 4]   = ret_err[p];
  end
  for (genvar p = 0; p < NUM_L2_PORTS; p++) begin : g_l2w_trace
    assign tr_l2w_valid[p]           = l2_req[p].wr_en;
    assign tr_l2w_addr[17*p +: 17]   = l2_req[p].wr_addr;
    assign tr_l2w_data[128*p +: 128] = l2_req[p].wr_data;
    assign tr_l2w_mask[8*p +: 8]     = l2_req[p].wr_mask;
    assign tr_l2w_seq[32*p +: 32]    = l2_wr_seq[p];
  end
  assign tr_tbl_valid     = tbl_wr_en;
  assign tr_tbl_entry     = tbl_wr_entry;
  assign tr_tbl_value     = tbl_wr_value;
  assign tr_tbl_seq       = ret_seq[ENG_MEMSET];
endmodule
