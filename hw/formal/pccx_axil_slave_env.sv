// pccx_axil_slave_env: pccx_axil_slave's formal environment (docs/formal.md):
// the trace starts in reset; the master and the scheduler are free (the
// slave's assertions need no assumption on them); a cover of each wait
// state its handshake assertions are about.
module pccx_axil_slave_env (
  input logic        clk,
  input logic        rst_n,
  input logic        s_awvalid,
  input logic [11:0] s_awaddr,
  input logic        s_wvalid,
  input logic [31:0] s_wdata,
  input logic [3:0]  s_wstrb,
  input logic        s_bready,
  input logic        s_arvalid,
  input logic [11:0] s_araddr,
  input logic        s_rready,
  input logic        lat_ready,
  input logic [31:0] status,
  input logic [31:0] retired_count
);
  logic        s_awready, s_wready, s_bvalid, s_arready, s_rvalid, lat_valid, clear_err;
  logic [1:0]  s_bresp, s_rresp;
  logic [31:0] s_rdata;
  logic [63:0] lat_word;

  pccx_axil_slave dut (.*);

  // The trace starts in reset: rst_n is low in the first cycle.
  logic started = 1'b0;
  always @(posedge clk) started <= 1'b1;
  always @* if (!started) assume (!rst_n);

  always @(posedge clk) if (rst_n) begin
    // A response held while the master is not ready (AxilBHeld_A,
    // AxilRHeld_A) and a latch held while the scheduler is not
    // (AxilLatchHeld_A), each for a cycle and more.
    AxilBWait_C: cover ($past(s_bvalid && !s_bready) && s_bvalid);
    AxilRWait_C: cover ($past(s_rvalid && !s_rready) && s_rvalid);
    AxilLatchWait_C: cover ($past(lat_valid && !lat_ready) && lat_valid);
  end
endmodule
