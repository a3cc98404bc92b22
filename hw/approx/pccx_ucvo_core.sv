// pccx_ucvo_core (hw/approx): hw/rtl's uCVO core with an EXP that is
// approximate by design, for the test-only DUT hw/approx/dut.json
// (docs/dut-contract.md, "Numerics profiles"). Everything but `out_y` is
// hw/rtl/pccx_ucvo_core.sv's; keep the two in step (a port added there and
// not here fails this DUT's build).
//
// The approximation: an EXP result (accm included) whose last fraction bit
// is set loses PCCX_APPROX_EXP_ULP units in the last place of magnitude,
// the way a unit that truncates where hw/rtl rounds would. Results of
// every other function, and every special value, are hw/rtl's.
`ifndef PCCX_APPROX_EXP_ULP
`error "PCCX_APPROX_EXP_ULP: the approximation's size, from hw/approx/verilator.f or verilator-bug.f"
`endif

module pccx_ucvo_core
  import pccx_bf16_pkg::*;
  import pccx_cvo_pkg::*;
(
  input  logic        clk,
  input  logic        rst_n,
  // per instruction, stable while it runs
  input  logic        clear,        // start of an instruction: empty the accumulator
  input  logic [2:0]  func,
  input  logic        sub_emax,
  input  logic        recip_scale,
  input  logic        accm,
  input  logic [15:0] e_max,
  input  logic [15:0] scalar,       // SCALE's s
  // one element
  input  logic        in_valid,
  input  logic [2:0]  in_lane,
  input  logic [15:0] in_x,
  input  logic [15:0] in_old,       // the old destination element (accm)
  // its result, one cycle later
  output logic        out_valid,
  output logic [2:0]  out_lane,
  output logic [15:0] out_y,
  // REDUCE_SUM: the exact sum of this core's elements so far
  output acc_t        acc,
  output logic        acc_nan,
  output logic        acc_pinf,
  output logic        acc_ninf
);
  logic is_reduce;

  // y less PCCX_APPROX_EXP_ULP ULP for a normal EXP result with an odd
  // fraction, else y.
  function automatic logic [15:0] approximate(logic [2:0] f, logic [15:0] y);
    if (f == CVO_F_EXP && y[14:7] != 8'h00 && y[14:7] != 8'hFF && y[0]) begin
      return y - 16'(`PCCX_APPROX_EXP_ULP);
    end
    return y;
  endfunction
  assign is_reduce = (func == CVO_F_REDUCE_SUM);

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      out_valid <= 1'b0;
      out_lane  <= '0;
      out_y     <= '0;
      acc       <= '0;
      acc_nan   <= 1'b0;
      acc_pinf  <= 1'b0;
      acc_ninf  <= 1'b0;
    end else begin
      out_valid <= in_valid && !is_reduce;
      if (clear) begin
        acc      <= '0;
        acc_nan  <= 1'b0;
        acc_pinf <= 1'b0;
        acc_ninf <= 1'b0;
      end
      if (in_valid) begin
        logic [15:0] xp, y;
        xp = sub_emax ? cvo_sub(in_x, e_max) : in_x;
        if (is_reduce) begin
          acc <= acc + reduce_term(xp);
          if (bf16_is_nan(xp)) acc_nan <= 1'b1;
          if (bf16_is_inf(xp) && !xp[15]) acc_pinf <= 1'b1;
          if (bf16_is_inf(xp) && xp[15]) acc_ninf <= 1'b1;
        end else begin
          y = cvo_apply(func, recip_scale, xp, scalar);
          if (accm) y = bf16_add(in_old, y);
          out_y    <= approximate(func, y);
          out_lane <= in_lane;
        end
      end
    end
  end
endmodule
