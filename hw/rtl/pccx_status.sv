// pccx_status: BUSY, DONE, ERR, err_code and the retired count
// (docs/semantics.md section 7).
//
// ERR/err_code keep the error of the lowest sequence number among the
// instructions latched since the last clear. A clear remembers the next
// sequence number; errors of instructions latched before it are ignored
// even when they retire later, which makes the register independent of how
// fast the engines are.
module pccx_status
  import pccx_pkg::*;
(
  input  logic        clk,
  input  logic        rst_n,
  input  logic        lat_fire, /*verilator coverage_off*/
  input  logic [31:0] lat_seq, /*verilator coverage_on*/ // no toggle coverage: a sequence number, top bits unreachable in a bounded case (counted in req.seq)
  input  logic        clear_err,
  input  logic [NUM_RETIRE-1:0] ret_valid, /*verilator coverage_off*/
  input  logic [31:0] ret_seq [NUM_RETIRE], /*verilator coverage_on*/ // no toggle coverage: a sequence number, top bits unreachable in a bounded case (counted in req.seq)
  input  logic [3:0]  ret_err [NUM_RETIRE], /*verilator coverage_off*/
  output logic [31:0] status, /*verilator coverage_on*/ // no toggle coverage: busy, done, err_flag, err_code, counted there (bits 31:8, 3 constant)
  output logic [31:0] retired_count
);
  logic [31:0] in_flight;      // latched and not yet retired
  logic        any_latched; /*verilator coverage_off*/
  logic [31:0] youngest_seq; /*verilator coverage_on*/ // no toggle coverage: a sequence number, top bits unreachable in a bounded case (counted in req.seq)
  logic        youngest_ok;    // youngest latched instruction retired with ERR_OK
  logic        err_flag;
  logic [3:0]  err_code; /*verilator coverage_off*/
  logic [31:0] err_seq;
  logic [31:0] clear_seq; /*verilator coverage_on*/ // errors of older instructions no longer count; no toggle coverage on both: sequence numbers, top bits unreachable in a bounded case (counted in req.seq)

  logic        busy, done;
  assign busy   = (in_flight != 32'd0);
  assign done   = !busy && any_latched && youngest_ok;
  assign status = {24'd0, err_code, 1'b0, err_flag, done, busy};

  // The erroring retire with the lowest sequence number this cycle.
  logic        new_err;
  logic [3:0]  new_code; /*verilator coverage_off*/
  logic [31:0] new_seq; /*verilator coverage_on*/ // no toggle coverage: a sequence number, top bits unreachable in a bounded case (counted in req.seq)
  logic [2:0]  n_retired;
  always_comb begin
    new_err   = 1'b0;
    new_code  = '0;
    new_seq   = '0;
    n_retired = '0;
    // Most cycles retire nothing: skip the scan (simulation speed).
    if (ret_valid != '0) for (int p = 0; p < NUM_RETIRE; p++) begin
      if (ret_valid[p]) begin
        n_retired = n_retired + 3'd1;
        if (ret_err[p] != ERR_OK && !seq_older(ret_seq[p], clear_seq)
            && (!new_err || seq_older(ret_seq[p], new_seq))) begin
          new_err  = 1'b1;
          new_code = ret_err[p];
          new_seq  = ret_seq[p];
        end
      end
    end
  end

  logic youngest_retires, youngest_retire_ok;
  always_comb begin
    youngest_retires   = 1'b0;
    youngest_retire_ok = 1'b0;
    if (ret_valid != '0) for (int p = 0; p < NUM_RETIRE; p++) begin
      if (ret_valid[p] && ret_seq[p] == youngest_seq) begin
        youngest_retires   = 1'b1;
        youngest_retire_ok = (ret_err[p] == ERR_OK);
      end
    end
  end

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      in_flight     <= '0;
      any_latched   <= 1'b0;
      youngest_seq  <= '0;
      youngest_ok   <= 1'b0;
      err_flag      <= 1'b0;
      err_code      <= '0;
      err_seq       <= '0;
      clear_seq     <= '0;
      retired_count <= '0;
    end else begin
      in_flight     <= in_flight + 32'(lat_fire) - 32'(n_retired);
      retired_count <= retired_count + 32'(n_retired);
      if (lat_fire) begin
        any_latched  <= 1'b1;
        youngest_seq <= lat_seq;
        youngest_ok  <= 1'b0;
      end else if (youngest_retires) begin
        youngest_ok <= youngest_retire_ok;
      end
      if (clear_err) begin
        // Everything in flight was latched before this write.
        err_flag  <= 1'b0;
        err_code  <= '0;
        clear_seq <= lat_seq;
      end else if (new_err && (!err_flag || seq_older(new_seq, err_seq))) begin
        err_flag <= 1'b1;
        err_code <= new_code;
        err_seq  <= new_seq;
      end
    end
  end
endmodule
