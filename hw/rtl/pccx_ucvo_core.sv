// pccx_ucvo_core: one uCVO core of the CVO engine (docs/cvo.md section 4).
//
// One element per cycle through a single registered stage: in the cycle
// `in_valid` is set, the core forms x' (x - e_max with sub_emax) and then
// either
//   - an elementwise function: y = f(x') (pccx_cvo_pkg::cvo_apply: the
//     CORDIC unit for SIN/COS, the SFU for the rest), with accm
//     y = old + y, registered with its lane (element index in the word); or
//   - REDUCE_SUM: adds x''s exact term to the core's accumulator (a signed
//     280-bit integer in units of 2^-133 and three flags, section 3.8),
//     cleared by `clear` at the start of every instruction.
// Cores never look at each other, so the engine can have any number; the
// engine combines their accumulators.
//
// The arithmetic sits in the clocked block under `if (in_valid)`, not in
// combinational logic: Verilator evaluates combinational logic after every
// clock edge, and an idle core must cost a simulated cycle nothing.
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
          out_y    <= y;
          out_lane <= in_lane;
        end
      end
    end
  end
endmodule
