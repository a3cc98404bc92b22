// pccx_bf16_pkg: BF16 arithmetic with one rounding of the exact result
// (docs/numerics.md section 1; CONTRACT section 6): round to nearest, ties
// to even, overflow to +-Inf, subnormal operands read as signed zero,
// results below 2^-126 (after rounding) flushed to signed zero, every NaN
// result the canonical 0x7FC0.
//
// A finite non-zero value is (-1)^s * mant * 2^exp with an integer `mant`;
// a normal BF16 has mant = 128 + fraction and exp = biased exponent - 134.
// Every operation forms its exact result in that shape and calls
// `round_pack` once.
package pccx_bf16_pkg;

  localparam logic [15:0] BF16_NAN     = 16'h7FC0;
  localparam logic [14:0] BF16_INF_MAG = 15'h7F80;

  // The helpers take a whole BF16 pattern and look at the fields they need.
  /* verilator lint_off UNUSEDSIGNAL */
  function automatic logic bf16_is_nan(logic [15:0] x);
    return (x[14:7] == 8'hFF) && (x[6:0] != 7'd0);
  endfunction

  function automatic logic bf16_is_inf(logic [15:0] x);
    return (x[14:7] == 8'hFF) && (x[6:0] == 7'd0);
  endfunction

  // Zero or subnormal: both read as the zero of their sign (DAZ).
  function automatic logic bf16_is_zero(logic [15:0] x);
    return x[14:7] == 8'h00;
  endfunction

  // Significand (128..255) of a normal value.
  function automatic logic [7:0] bf16_mant(logic [15:0] x);
    return {1'b1, x[6:0]};
  endfunction

  // Exponent of the significand's unit: biased exponent - 134.
  function automatic int bf16_exp(logic [15:0] x);
    return int'({24'd0, x[14:7]}) - 134;
  endfunction

  /* verilator lint_on UNUSEDSIGNAL */

  // The BF16 nearest to (-1)^neg * mant * 2^exp, mant != 0: round the
  // significand to 8 bits (ties to even, a carry renormalises), then
  // classify the rounded value: >= 2^128 is Inf, < 2^-126 is zero.
  function automatic logic [15:0] round_pack(logic neg, logic [31:0] mant, int exp);
    int msb, shift, e, biased;
    logic [32:0] q;
    logic guard, sticky;
    msb = 0;
    for (int i = 0; i < 32; i++) if (mant[i]) msb = i;
    if (msb <= 7) begin
      q = 33'(mant) << (7 - msb);
      e = exp - (7 - msb);
    end else begin
      shift  = msb - 7;
      q      = 33'(mant) >> shift;
      guard  = mant[shift - 1];
      sticky = (mant & ((32'd1 << (shift - 1)) - 32'd1)) != 32'd0;
      if (guard && (sticky || q[0])) q = q + 33'd1;
      e = exp + shift;
      if (q[8]) begin  // 255 rounded up to 256
        q = q >> 1;
        e = e + 1;
      end
    end
    biased = e + 134;
    if (biased >= 255) return {neg, BF16_INF_MAG};
    if (biased <= 0) return {neg, 15'd0};
    return {neg, biased[7:0], q[6:0]};
  endfunction

  // bf16(x) of an integer accumulator; 0 gives +0.
  function automatic logic [15:0] bf16_from_int(logic signed [31:0] x);
    if (x == 32'sd0) return 16'h0000;
    return round_pack(x[31], x[31] ? 32'(-x) : 32'(x), 0);
  endfunction

  function automatic logic [15:0] bf16_mul(logic [15:0] a, logic [15:0] b);
    logic s;
    s = a[15] ^ b[15];
    if (bf16_is_nan(a) || bf16_is_nan(b)) return BF16_NAN;
    if (bf16_is_inf(a) || bf16_is_inf(b)) begin
      if (bf16_is_zero(a) || bf16_is_zero(b)) return BF16_NAN;  // 0 x Inf
      return {s, BF16_INF_MAG};
    end
    if (bf16_is_zero(a) || bf16_is_zero(b)) return {s, 15'd0};
    return round_pack(s, {16'd0, 16'(bf16_mant(a)) * 16'(bf16_mant(b))}, bf16_exp(a) + bf16_exp(b));
  endfunction

  // Above this exponent difference the smaller operand lies wholly below a
  // quarter unit of the larger one's last place, and a single unit at
  // 2^(e_big - ADD_STICKY_SHIFT) with its sign rounds the same way as the
  // exact sum (the proof is in docs/numerics.md section 1.2, which needs a
  // shift of at least 10).
  localparam int ADD_STICKY_SHIFT = 12;

  function automatic logic [15:0] bf16_add(logic [15:0] a, logic [15:0] b);
    logic [15:0] larger, lesser;
    int d;
    logic [31:0] m;
    if (bf16_is_nan(a) || bf16_is_nan(b)) return BF16_NAN;
    if (bf16_is_inf(a) && bf16_is_inf(b)) return (a[15] != b[15]) ? BF16_NAN : {a[15], BF16_INF_MAG};
    if (bf16_is_inf(a)) return {a[15], BF16_INF_MAG};
    if (bf16_is_inf(b)) return {b[15], BF16_INF_MAG};
    if (bf16_is_zero(a) && bf16_is_zero(b)) return {a[15] && b[15], 15'd0};
    if (bf16_is_zero(a)) return b;
    if (bf16_is_zero(b)) return a;
    if (a[14:0] == b[14:0] && a[15] != b[15]) return 16'h0000;  // exact zero sum
    if (a[14:0] >= b[14:0]) begin
      larger = a;
      lesser = b;
    end else begin
      larger = b;
      lesser = a;
    end
    d = int'({24'd0, larger[14:7]}) - int'({24'd0, lesser[14:7]});
    if (d >= ADD_STICKY_SHIFT) begin
      m = {24'd0, bf16_mant(larger)} << ADD_STICKY_SHIFT;
      m = (larger[15] == lesser[15]) ? m + 32'd1 : m - 32'd1;
      return round_pack(larger[15], m, bf16_exp(larger) - ADD_STICKY_SHIFT);
    end
    m = {24'd0, bf16_mant(larger)} << d;
    m = (larger[15] == lesser[15]) ? m + 32'(bf16_mant(lesser)) : m - 32'(bf16_mant(lesser));
    return round_pack(larger[15], m, bf16_exp(lesser));
  endfunction

  // The findemax order as a signed key: NaN above everything, -0 < +0.
  // Operands are canonical results (never subnormal, NaN is 0x7FC0).
  function automatic logic signed [16:0] emax_key(logic [15:0] x);
    if (bf16_is_nan(x)) return 17'sh0FFFF;
    if (x[15]) return -$signed({2'b00, x[14:0]}) - 17'sd1;
    return $signed({2'b00, x[14:0]});
  endfunction

endpackage
