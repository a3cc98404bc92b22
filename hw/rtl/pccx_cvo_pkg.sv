// pccx_cvo_pkg: the CVO datapath of docs/cvo.md section 3 as pure functions,
// shared by every uCVO core (pccx_ucvo_core) and the engine's REDUCE_SUM
// combine (pccx_cvo_engine).
//
// Every function takes whole BF16 patterns, decides the special operands
// first (the IEEE limits of docs/cvo.md's tables), then runs the fixed-point
// algorithm of its section exactly as written there: the same widths, shifts,
// iteration counts and tables (pccx_cvo_rom_pkg, generated), and ends with
// one rounding of an exact value (docs/numerics.md section 1.1). Nothing here
// is an approximation of the doc; where the doc's integers get wide, the
// variables here are wider still (each one says how wide its value gets), so
// no intermediate is ever truncated.
//
// In the doc, `>>` is a floor shift: `>>>` on the signed variables here, `>>`
// where the value is non-negative.
package pccx_cvo_pkg;
  import pccx_bf16_pkg::*;
  import pccx_cvo_rom_pkg::*;

  // cvo_func [58:56] (docs/semantics.md section 2; 8-F never reach the engine).
  localparam logic [2:0] CVO_F_EXP        = 3'd0;
  localparam logic [2:0] CVO_F_SQRT       = 3'd1;
  localparam logic [2:0] CVO_F_GELU       = 3'd2;
  localparam logic [2:0] CVO_F_SIN        = 3'd3;
  localparam logic [2:0] CVO_F_COS        = 3'd4;
  localparam logic [2:0] CVO_F_REDUCE_SUM = 3'd5;
  localparam logic [2:0] CVO_F_SCALE      = 3'd6;
  localparam logic [2:0] CVO_F_RECIP      = 3'd7;

  localparam logic [15:0] BF16_ONE = 16'h3F80;

  // The REDUCE_SUM accumulator: units of 2^-133, |A| < 65535 * 2^261 < 2^277
  // (docs/cvo.md section 3.8), so 280 signed bits never overflow.
  localparam int ACC_W = 280;
  typedef logic signed [ACC_W-1:0] acc_t;

  // exp2q's result: 2^(t / 2^32) ~= p * 2^(n - 32), p in [2^32, 2^33).
  typedef struct packed {
    logic signed [31:0] n;
    logic [33:0]        p;
  } exp2q_t;

  // ---- one rounding of a wide value ----------------------------------------------
  // round_pack rounds a 32-bit significand. A wider value with its leading
  // one at bit m > 31 keeps its top 31 bits (m down to m - 30) and ORs every
  // bit below them into bit 0: round_pack then sees the same 8 kept bits, the
  // same guard bit (bit 22) and a sticky bit that is non-zero exactly when
  // the value has a one anywhere below the guard, so the result is the one
  // rounding of the whole value (docs/numerics.md section 1.1) at any width.

  // Values of the elementwise functions: below 2^72 (GELU's M * PHI).
  function automatic logic [15:0] round_u128(logic neg, logic [127:0] v, int exp);
    int msb, sh;
    logic sticky;
    if (v == 128'd0) return {neg, 15'd0};
    msb = 0;
    for (int i = 0; i < 128; i++) if (v[i]) msb = i;
    if (msb <= 31) return round_pack(neg, v[31:0], exp);
    sh     = msb - 30;
    sticky = (v & ((128'd1 << sh) - 128'd1)) != 128'd0;
    return round_pack(neg, 32'(v >> sh) | {31'd0, sticky}, exp + sh);
  endfunction

  // The REDUCE_SUM magnitude, below 2^277.
  function automatic logic [15:0] round_u280(logic neg, logic [ACC_W-1:0] v, int exp);
    int msb, sh;
    logic sticky;
    if (v == '0) return {neg, 15'd0};
    msb = 0;
    for (int i = 0; i < ACC_W; i++) if (v[i]) msb = i;
    if (msb <= 31) return round_pack(neg, v[31:0], exp);
    sh     = msb - 30;
    sticky = (v & ((ACC_W'(1) << sh) - ACC_W'(1))) != '0;
    return round_pack(neg, 32'(v >> sh) | {31'd0, sticky}, exp + sh);
  endfunction

  // round_s(v, s, E) of docs/cvo.md section 2: the value (2v + s) * 2^(E-1),
  // v followed by a sticky bit. v < 2^31 (SQRT's S has 13 bits, the
  // quotient 17).
  function automatic logic [15:0] round_s(logic neg, logic [30:0] v, logic s, int exp);
    return round_pack(neg, {v, s}, exp - 1);
  endfunction

  // ---- operand fields (finite non-zero x: (-1)^x[15] * M * 2^e) ------------------
  // fix24(u): the magnitude in Q24, truncated. Used only with e < 0, where
  // it is below 2^31 (docs/cvo.md section 2).
  function automatic logic [31:0] fix24(logic [15:0] x);
    int sh;
    sh = bf16_exp(x) + 24;
    if (sh >= 0) return 32'(bf16_mant(x)) << sh;
    if (sh <= -32) return 32'd0;  // every bit shifted out
    return 32'(bf16_mant(x)) >> (-sh);
  endfunction

  // ---- 3.1 exp2q ---------------------------------------------------------------------
  // t is signed Q32 with |t| < 2^42 (EXP: |X * log2 e| < 2^31 * 1.45;
  // GELU: Q + D < 2^41).
  function automatic exp2q_t exp2q(logic signed [63:0] t);
    exp2q_t      r;
    logic [31:0] f;
    logic [5:0]  a;
    logic [25:0] b;
    logic [63:0] z, z2, z3, poly;  // z < 2^26, z2 < 2^20, z3 < 2^12, poly < 2^33
    logic [127:0] prod;            // EXP2_FRAC[a] * poly < 2^66
    r.n  = 32'(t >>> 32);          // floor(t / 2^32)
    f    = t[31:0];                // t - n * 2^32, in [0, 2^32)
    a    = f[31:26];
    b    = f[25:0];
    z    = (64'(b) * LN2_Q32) >> 32;                  // product < 2^58
    z2   = (z * z) >> 32;                             // z * z < 2^52
    z3   = (((z2 * z) >> 32) * INV6_Q32) >> 32;       // < 2^46, then < 2^44
    poly = 64'h1_0000_0000 + z + (z2 >> 1) + z3;
    prod = 128'($unsigned(EXP2_FRAC[a])) * 128'(poly);
    r.p  = 34'(prod >> 32);
    return r;
  endfunction

  // ---- 3.2 EXP -----------------------------------------------------------------------
  function automatic logic [15:0] cvo_exp(logic [15:0] x);
    logic signed [32:0]  xq;    // X = +-fix24(u), |X| < 2^31
    logic signed [127:0] prod;  // X * LOG2E_Q40: |.| < 2^72
    logic signed [63:0]  t;
    exp2q_t e2;
    if (bf16_is_nan(x)) return BF16_NAN;
    if (bf16_is_inf(x)) return x[15] ? 16'h0000 : {1'b0, BF16_INF_MAG};
    if (bf16_is_zero(x)) return BF16_ONE;
    if (bf16_exp(x) >= 0) return x[15] ? 16'h0000 : {1'b0, BF16_INF_MAG};
    xq = $signed({1'b0, fix24(x)});
    if (x[15]) xq = -xq;
    prod = 128'(xq) * $signed({64'd0, LOG2E_Q40});
    t    = 64'(prod >>> 32);
    e2   = exp2q(t);
    return round_u128(1'b0, 128'(e2.p), int'(e2.n) - 32);
  endfunction

  // ---- 3.3 GELU ----------------------------------------------------------------------
  function automatic logic [15:0] cvo_gelu(logic [15:0] x);
    logic [31:0]  u;          // U = fix24(u) < 2^28
    logic [127:0] uuh;        // U * U * HALF_LOG2E_Q40 < 2^96
    logic signed [63:0] q;    // Q < 2^40
    logic [12:0]  k;          // U >> 16 < 4096; k + 1 <= 4096, the table's last entry
    logic [15:0]  r;
    logic signed [63:0] d0, dd, d;
    logic signed [95:0] dprod;  // (GELU_D[k+1] - GELU_D[k]) * r
    exp2q_t e2;
    int ex, nsh;
    logic [127:0] tq, phi;    // T = (P << 32) >> -n < 2^64, PHI = 2^64 - T <= 2^64
    if (bf16_is_nan(x)) return BF16_NAN;
    if (bf16_is_inf(x)) return x[15] ? 16'h8000 : {1'b0, BF16_INF_MAG};
    if (bf16_is_zero(x)) return {x[15], 15'd0};
    ex = bf16_exp(x);
    if (ex >= -3) return x[15] ? 16'h8000 : x;
    u     = fix24(x);
    uuh   = 128'(u) * 128'(u) * 128'(HALF_LOG2E_Q40);
    q     = $signed(64'(uuh >> 56));
    k     = 13'(u >> 16);
    r     = u[15:0];
    d0    = GELU_D[k];
    dd    = GELU_D[k + 13'd1] - d0;
    dprod = 96'(dd) * $signed({80'd0, r});
    d     = d0 + 64'(dprod >>> 16);
    e2    = exp2q(-(q + d));
    // -u * Phi(-u): a product, accurate down to the underflow.
    if (x[15]) return round_u128(1'b1, 128'(bf16_mant(x)) * 128'(e2.p), ex + int'(e2.n) - 32);
    // u * Phi(u) = u * (1 - Phi(-u)) in Q64; n <= -1, so T < 2^64.
    nsh = -int'(e2.n);
    if (nsh >= 65) tq = 128'd0;  // (P << 32) < 2^65: every bit shifted out
    else tq = (128'(e2.p) << 32) >> nsh;
    phi = (128'd1 << 64) - tq;
    return round_u128(1'b0, 128'(bf16_mant(x)) * phi, ex - 64);
  endfunction

  // ---- 3.4 SIN and COS ----------------------------------------------------------------
  function automatic logic [15:0] cvo_sincos(logic [15:0] x, logic is_cos);
    logic [199:0] mt;           // M * TWO_OVER_PI < 2^200
    logic [49:0]  zq;           // u * 2/pi mod 4, Q48
    logic signed [63:0] xc, yc, zc, nx, ny, v;
    logic [63:0] mag;
    logic [1:0] quad;
    int ex;
    if (bf16_is_nan(x) || bf16_is_inf(x)) return BF16_NAN;
    if (bf16_is_zero(x)) return is_cos ? BF16_ONE : {x[15], 15'd0};
    ex = bf16_exp(x);
    if (ex < -19) return is_cos ? BF16_ONE : x;
    // Payne-Hanek reduction: the shift 144 - e is 24..163.
    mt   = 200'(bf16_mant(x)) * 200'(TWO_OVER_PI);
    zq   = 50'(mt >> (144 - ex));
    // CORDIC, rotation mode, 48 iterations on signed 64-bit values.
    xc = $signed(CORDIC_K);
    yc = 64'sd0;
    zc = $signed({16'd0, zq[47:0]});
    for (int i = 0; i < 48; i++) begin
      if (zc >= 64'sd0) begin
        nx = xc - (yc >>> i);
        ny = yc + (xc >>> i);
        zc = zc - CORDIC_ATAN[i];
      end else begin
        nx = xc + (yc >>> i);
        ny = yc - (xc >>> i);
        zc = zc + CORDIC_ATAN[i];
      end
      xc = nx;
      yc = ny;
    end
    // sin(u) is yc, xc, -yc, -xc for q = 0..3; cos(u) = sin(u + pi/2) is
    // the same sequence one quadrant on (xc, -yc, -xc, yc).
    quad = zq[49:48] + {1'b0, is_cos};
    case (quad)
      2'd0:    v = yc;
      2'd1:    v = xc;
      2'd2:    v = -yc;
      default: v = -xc;
    endcase
    if (!is_cos && x[15]) v = -v;  // SIN is odd, COS even
    if (v == 64'sd0) return 16'h0000;
    mag = (v < 64'sd0) ? -v : v;
    return round_u128(v < 64'sd0, 128'(mag), -48);
  endfunction

  // ---- 3.5 SQRT -----------------------------------------------------------------------
  // floor(sqrt(r)) for r < 2^25, one result bit per step from the top.
  function automatic logic [31:0] isqrt25(logic [31:0] r);
    logic [31:0] s, c;
    s = 32'd0;
    for (int b = 12; b >= 0; b--) begin
      c = s | (32'd1 << b);
      if (c * c <= r) s = c;
    end
    return s;
  endfunction

  function automatic logic [15:0] cvo_sqrt(logic [15:0] x);
    int ex;
    logic [31:0] mq, rq, sq;
    if (bf16_is_nan(x)) return BF16_NAN;
    if (bf16_is_zero(x)) return {x[15], 15'd0};
    if (x[15]) return BF16_NAN;  // negative non-zero, -Inf included
    if (bf16_is_inf(x)) return {1'b0, BF16_INF_MAG};
    ex = bf16_exp(x);
    mq = 32'(bf16_mant(x));
    if (ex[0]) begin  // odd e (two's complement: also for negative e)
      mq = mq << 1;
      ex = ex - 1;
    end
    rq = mq << 16;       // < 2^25
    sq = isqrt25(rq);    // 12 or 13 bits
    return round_s(1'b0, sq[30:0], rq != sq * sq, (ex - 16) >>> 1);  // e' - 16 is even
  endfunction

  // ---- 3.6 division ---------------------------------------------------------------------
  // div(a, b) of finite non-zero operands: N = Ma << 16, Qt = N / Mb (16 or
  // 17 bits), rounded with the remainder as the sticky bit.
  function automatic logic [15:0] div_finite(logic neg, logic [7:0] ma, int ea, logic [7:0] mb, int eb);
    logic [23:0] nq, qt, rem;
    nq  = {ma, 16'd0};
    qt  = nq / 24'(mb);
    rem = nq % 24'(mb);
    return round_s(neg, 31'(qt), rem != 24'd0, ea - eb - 16);
  endfunction

  function automatic logic [15:0] cvo_recip(logic [15:0] x);
    if (bf16_is_nan(x)) return BF16_NAN;
    if (bf16_is_inf(x)) return {x[15], 15'd0};
    if (bf16_is_zero(x)) return {x[15], BF16_INF_MAG};
    return div_finite(x[15], 8'd128, -7, bf16_mant(x), bf16_exp(x));  // 1.0 / x
  endfunction

  // SCALE with recip_scale: x / s, the IEEE cases first.
  function automatic logic [15:0] cvo_div(logic [15:0] x, logic [15:0] s);
    logic sg;
    sg = x[15] ^ s[15];
    if (bf16_is_nan(x) || bf16_is_nan(s)) return BF16_NAN;
    if ((bf16_is_zero(x) && bf16_is_zero(s)) || (bf16_is_inf(x) && bf16_is_inf(s))) return BF16_NAN;
    if (bf16_is_inf(x) || bf16_is_zero(s)) return {sg, BF16_INF_MAG};
    if (bf16_is_zero(x) || bf16_is_inf(s)) return {sg, 15'd0};
    return div_finite(sg, bf16_mant(x), bf16_exp(x), bf16_mant(s), bf16_exp(s));
  endfunction

  // ---- 3.7 sub_emax ---------------------------------------------------------------------
  // x - e_max: the BF16 add with e_max's sign flipped (exact, one rounding).
  function automatic logic [15:0] cvo_sub(logic [15:0] x, logic [15:0] e_max);
    return bf16_add(x, {~e_max[15], e_max[14:0]});
  endfunction

  // ---- 3.8 REDUCE_SUM ----------------------------------------------------------------------
  // The exact term of one element: (-1)^neg * (M << (e + 133)), a shift of
  // 0..253; zeros, NaN and Inf add nothing here (NaN and Inf go to the flags).
  function automatic acc_t reduce_term(logic [15:0] x);
    acc_t t;
    if (bf16_is_zero(x) || x[14:7] == 8'hFF) return '0;
    t = '0;
    t[7:0] = bf16_mant(x);
    t = t << (bf16_exp(x) + 133);
    return x[15] ? -t : t;
  endfunction

  // The one rounding of an exact accumulator (the cores' sum): NaN, or both
  // infinities, is NaN; one infinity is itself; an exact 0 is +0.
  function automatic logic [15:0] reduce_round(acc_t a, logic nan, logic pinf, logic ninf);
    if (nan || (pinf && ninf)) return BF16_NAN;
    if (pinf) return {1'b0, BF16_INF_MAG};
    if (ninf) return {1'b1, BF16_INF_MAG};
    if (a == '0) return 16'h0000;
    return round_u280(a < 0, (a < 0) ? -a : a, -133);
  endfunction

  // ---- one element --------------------------------------------------------------------------
  // f(x') of every elementwise function (section 1); `s` is SCALE's scalar.
  // REDUCE_SUM has no elementwise result (the accumulator takes its terms).
  function automatic logic [15:0] cvo_apply(logic [2:0] func, logic recip_scale,
                                            logic [15:0] x, logic [15:0] s);
    case (func)
      CVO_F_EXP:   return cvo_exp(x);
      CVO_F_SQRT:  return cvo_sqrt(x);
      CVO_F_GELU:  return cvo_gelu(x);
      CVO_F_SIN:   return cvo_sincos(x, 1'b0);
      CVO_F_COS:   return cvo_sincos(x, 1'b1);
      CVO_F_SCALE: return recip_scale ? cvo_div(x, s) : bf16_mul(x, s);
      CVO_F_RECIP: return cvo_recip(x);
      default:     return 16'h0000;
    endcase
  endfunction

endpackage
