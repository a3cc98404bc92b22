// pccx_wrap_stream_top: hw/wrap's pccx_wrap_top with its host-memory request
// port turned into two AXI-Stream ports that carry no addresses (the public
// pccx project's shape: feature maps in, results out, through a DMA the
// host programs), for the harness's host-streams adapter
// (docs/dut-contract.md, "Host memory by streams"). A read request of the
// NPU takes the next word of the stream in; a write request sends its data
// on the stream out; each gets its response, in order, as the request port
// promises (pccx_top's MEM engine copies words in address order, so the
// stream's order is the copy's).
module pccx_wrap_stream_top
  import pccx_pkg::*;
#(
  // pccx_wrap_top's parameters, passed through unchanged.
  parameter int L2_WORDS = 114688,
  parameter int FIFO_DEPTH = 8,
  parameter int TIMING_SKEW = 0,
  parameter int ARRAY_ROWS = 32,
  parameter int ARRAY_COLS = 32,
  parameter int VEC_LANES = 4,
  parameter int CVO_CORES = 2,
  // A planted bug, for the test that the adapter's checks fire
  // (hw/wrap/verilator-streams-dup.f): N > 0 answers every Nth read with
  // the word the stream offers without taking it, so that word is read
  // twice and the copies end with a word of the host's left over.
  parameter int DUP_EVERY = 0
) (
  input  logic         core_clk,
  input  logic         axi_clk,
  input  logic         rst_n,   // asynchronous; synchronized per domain inside
  // 64-bit AXI-Lite control slave (axi_clk), as pccx_wrap_top's
  input  logic         s_axil_awvalid,
  output logic         s_axil_awready,
  input  logic [11:0]  s_axil_awaddr,
  input  logic         s_axil_wvalid,
  output logic         s_axil_wready,
  input  logic [63:0]  s_axil_wdata,
  input  logic [7:0]   s_axil_wstrb,
  output logic         s_axil_bvalid,
  input  logic         s_axil_bready,
  output logic [1:0]   s_axil_bresp,
  input  logic         s_axil_arvalid,
  output logic         s_axil_arready,
  input  logic [11:0]  s_axil_araddr,
  output logic         s_axil_rvalid,
  input  logic         s_axil_rready,
  output logic [63:0]  s_axil_rdata,
  output logic [1:0]   s_axil_rresp,
  // host words into the NPU (core_clk): the words its copies from the host read
  input  logic         s_axis_h_tvalid,
  output logic         s_axis_h_tready,
  input  logic [127:0] s_axis_h_tdata,
  // host words out of the NPU (core_clk): the words its copies to the host write
  output logic         m_axis_h_tvalid,
  input  logic         m_axis_h_tready,
  output logic [127:0] m_axis_h_tdata,
  // weight streams (core_clk), as pccx_wrap_top's (one 128-bit port each)
  input  logic [1:0]   s_axis_w_tvalid,
  output logic [1:0]   s_axis_w_tready,
  input  logic [255:0] s_axis_w_tdata
);
  logic         req_valid, req_ready, req_write;
  word_addr_t   req_addr;
  logic [127:0] req_wdata;
  logic         rsp_valid, rsp_ready;
  logic [127:0] rsp_rdata;

  pccx_wrap_top #(
    .L2_WORDS (L2_WORDS), .FIFO_DEPTH (FIFO_DEPTH), .TIMING_SKEW (TIMING_SKEW),
    .ARRAY_ROWS (ARRAY_ROWS), .ARRAY_COLS (ARRAY_COLS), .VEC_LANES (VEC_LANES),
    .CVO_CORES (CVO_CORES)
  ) u_wrap (
    .core_clk, .axi_clk, .rst_n,
    .s_axil_awvalid, .s_axil_awready, .s_axil_awaddr,
    .s_axil_wvalid, .s_axil_wready, .s_axil_wdata, .s_axil_wstrb,
    .s_axil_bvalid, .s_axil_bready, .s_axil_bresp,
    .s_axil_arvalid, .s_axil_arready, .s_axil_araddr,
    .s_axil_rvalid, .s_axil_rready, .s_axil_rdata, .s_axil_rresp,
    .m_acp_req_valid (req_valid), .m_acp_req_ready (req_ready),
    .m_acp_req_write (req_write), .m_acp_req_addr (req_addr),
    .m_acp_req_wdata (req_wdata),
    .m_acp_rsp_valid (rsp_valid), .m_acp_rsp_ready (rsp_ready),
    .m_acp_rsp_rdata (rsp_rdata),
    .s_axis_w_tvalid, .s_axis_w_tready, .s_axis_w_tdata
  );

  // The bridge's reset, released two core_clk flops after rst_n rises (as
  // pccx_wrap_top's own core domain).
  // Waived as in pccx_wrap_top: a reset synchroniser (SYNCASYNCNET under
  // 5.048).
  /* verilator lint_off SYNCASYNCNET */
  logic [1:0] rst_q;
  /* verilator lint_on SYNCASYNCNET */
  always_ff @(posedge core_clk or negedge rst_n) begin
    if (!rst_n) rst_q <= 2'b00;
    else        rst_q <= {rst_q[0], 1'b1};
  end
  logic bridge_rst_n;
  assign bridge_rst_n = rst_q[1];

  // A request is taken when its response has room and its stream moves.
  // Valid out never waits on ready out (AXI-Stream), and stays up until
  // taken: the request holds, and the response FIFO only empties meanwhile.
  logic rsp_full, rsp_empty, take, dup_now;
  assign s_axis_h_tready = req_valid && !req_write && !rsp_full && !dup_now;
  assign m_axis_h_tvalid = req_valid && req_write && !rsp_full;
  assign m_axis_h_tdata  = req_wdata;
  assign req_ready = !rsp_full && (req_write ? m_axis_h_tready : s_axis_h_tvalid);
  assign take      = req_valid && req_ready;

  // One response per request, in order: a read's word, or zero for a write.
  pccx_fifo #(.WIDTH(128), .DEPTH(2)) u_rsp (
    .clk       (core_clk),
    .rst_n     (bridge_rst_n),
    .push      (take),
    .push_data (req_write ? 128'd0 : s_axis_h_tdata),
    .pop       (rsp_valid && rsp_ready),
    .head      (rsp_rdata),
    .empty     (rsp_empty),
    .full      (rsp_full)
  );
  assign rsp_valid = !rsp_empty;

  // The planted bug's count of reads taken (0 when DUP_EVERY is 0).
  logic [7:0] reads;
  always_ff @(posedge core_clk or negedge bridge_rst_n) begin
    if (!bridge_rst_n)            reads <= 8'd0;
    else if (take && !req_write)  reads <= (32'(reads) + 1 == DUP_EVERY) ? 8'd0 : reads + 8'd1;
  end
  assign dup_now = DUP_EVERY > 0 && 32'(reads) + 1 == DUP_EVERY;

  // The address is the DMA's business (the host programs it from the
  // copies it sends): the streams carry words in the copy's order only.
  logic unused_addr;
  assign unused_addr = ^req_addr;
endmodule
