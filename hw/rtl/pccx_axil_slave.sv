// pccx_axil_slave: the S_AXIL_CTRL register file (docs/semantics.md
// section 7). A write to 0x04 becomes a latch request towards the
// scheduler; its write response waits until the scheduler takes the
// instruction (a full engine FIFO back-pressures the host here).
//
// Write channel: AW and W are taken together (ready is raised only when both
// are valid), one write outstanding at a time. Read channel: one read
// outstanding at a time. Both respond one cycle after acceptance at the
// earliest.
module pccx_axil_slave (
  input  logic        clk,
  input  logic        rst_n,
  // AXI-Lite slave
  input  logic        s_awvalid,
  output logic        s_awready,
  input  logic [11:0] s_awaddr,
  input  logic        s_wvalid,
  output logic        s_wready,
  input  logic [31:0] s_wdata,
  input  logic [3:0]  s_wstrb,
  output logic        s_bvalid,
  input  logic        s_bready,
  output logic [1:0]  s_bresp,
  input  logic        s_arvalid,
  output logic        s_arready,
  input  logic [11:0] s_araddr,
  output logic        s_rvalid,
  input  logic        s_rready,
  output logic [31:0] s_rdata,
  output logic [1:0]  s_rresp,
  // towards the scheduler
  output logic        lat_valid,
  output logic [63:0] lat_word,
  input  logic        lat_ready,
  output logic        clear_err, /*verilator coverage_off*/
  // register sources
  input  logic [31:0] status,
  input  logic [31:0] retired_count /*verilator coverage_on*/ // no toggle coverage on both: u_status.retired_count, and u_status.status made of busy, done, err_flag, err_code, counted there
);
  localparam logic [1:0] RESP_OKAY   = 2'b00;
  localparam logic [1:0] RESP_SLVERR = 2'b10;

  typedef enum logic [1:0] {W_IDLE, W_LATCH, W_RESP} wstate_e;
  wstate_e     wstate;
  logic [31:0] instr_lo, instr_hi;
  logic        aw_take;

  assign aw_take   = (wstate == W_IDLE) && s_awvalid && s_wvalid;
  assign s_awready = aw_take;
  assign s_wready  = aw_take;
  assign s_bvalid  = (wstate == W_RESP);
  assign lat_valid = (wstate == W_LATCH);
  assign lat_word  = {instr_hi, instr_lo};

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      wstate    <= W_IDLE;
      instr_lo  <= '0;
      instr_hi  <= '0;
      s_bresp   <= RESP_OKAY;
      clear_err <= 1'b0;
    end else begin
      clear_err <= 1'b0;
      case (wstate)
        W_IDLE: if (aw_take) begin
          wstate  <= W_RESP;
          s_bresp <= RESP_OKAY;
          if (s_wstrb != 4'hF) begin
            s_bresp <= RESP_SLVERR;  // partial words are rejected whole
          end else begin
            case (s_awaddr)
              12'h000: instr_lo <= s_wdata;
              12'h004: begin
                instr_hi <= s_wdata;
                wstate   <= W_LATCH;
              end
              12'h008: clear_err <= 1'b1;
              default: s_bresp <= RESP_SLVERR;
            endcase
          end
        end
        W_LATCH: if (lat_ready) wstate <= W_RESP;
        W_RESP:  if (s_bready) wstate <= W_IDLE; /*verilator coverage_off*/
        default: wstate <= W_IDLE; /*verilator coverage_on*/ // no coverage: unreachable, wstate is only ever reset or assigned a named state
      endcase
    end
  end

  // Read channel.
  assign s_arready = !s_rvalid;
  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      s_rvalid <= 1'b0;
      s_rdata  <= '0;
      s_rresp  <= RESP_OKAY;
    end else if (s_rvalid) begin
      if (s_rready) s_rvalid <= 1'b0;
    end else if (s_arvalid) begin
      s_rvalid <= 1'b1;
      s_rresp  <= RESP_OKAY;
      case (s_araddr)
        12'h000: s_rdata <= instr_lo;
        12'h004: s_rdata <= instr_hi;
        12'h008: s_rdata <= status;
        12'h00C: s_rdata <= retired_count;
        default: begin
          s_rdata <= '0;
          s_rresp <= RESP_SLVERR;
        end
      endcase
    end
  end
  // ---- assertions (pccx_assert_pkg.sv, docs/assertions.md) ----------------
  `PCCX_ASSERT_HANDSHAKE(AxilBHeld_A, s_bvalid, s_bready, s_bresp)
  `PCCX_ASSERT_HANDSHAKE(AxilRHeld_A, s_rvalid, s_rready, {s_rdata, s_rresp})
  `PCCX_ASSERT_HANDSHAKE(AxilLatchHeld_A, lat_valid, lat_ready, lat_word)
  `PCCX_ASSERT(AxilWStateLegal_A, wstate == W_IDLE || wstate == W_LATCH || wstate == W_RESP)
endmodule
