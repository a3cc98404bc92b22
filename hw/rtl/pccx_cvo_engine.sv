// pccx_cvo_engine: the CVO engine (docs/cvo.md; CONTRACT section 7) on
// CORES independent uCVO cores (pccx_ucvo_core).
//
// One instruction, after its start-cycle range checks (source first, then
// destination; none when length = 0), walks the vector word by word:
//   elementwise and SCALE:
//     [SCALAR]  SCALE only, once: read word src_addr (its element 0 is s).
//     per word: [RDDST] (accm) read the old destination word,
//               RDSRC   read the vector word,
//               COMP    P = ceil(8 / CORES) cycles; in cycle c, core k takes
//                       element c * CORES + k (elements past length: none),
//               DRAIN   the cores' last results land in the output word,
//               WRITE   the word, elements < length only (element mask).
//     Words go in ascending order when dst_addr <= the vector base and
//     descending otherwise (the memmove rule): every result is then a
//     function of the L2 contents at the start.
//   REDUCE_SUM:
//     per word RDSRC and P COMP cycles into the cores' exact accumulators,
//     then [R_RDDST] (accm) the old destination word, COMBINE (the exact
//     sum of the accumulators, one rounding, the accm add), R_WRITE
//     (element 0, mask 0x01).
// busy = sc + W * (P + 3 + a), or W * (P + 1) + a + 2 for REDUCE_SUM, or 0
// for an error or length = 0 (docs/cvo.md section 4; R = S + 1 + busy).
// EXTRA_CYCLE = 1 spends one more cycle before every retire (a deliberate
// timing bug that only the timing tests build).
module pccx_cvo_engine
  import pccx_pkg::*;
  import pccx_bf16_pkg::*;
  import pccx_cvo_pkg::*;
#(
  parameter int L2_WORDS = 114688,
  parameter int CORES = 2,
  parameter bit EXTRA_CYCLE = 1'b0
) (
  input  logic          clk,
  input  logic          rst_n,
  // Unused bits of the word: the opcode is CVO by routing, cvo_func[3] is 0
  // (8-F are illegal words), the flags' reserved bits, async is the scheduler's.
  /* verilator lint_off UNUSEDSIGNAL */
  input  eng_req_t      req,
  /* verilator lint_on UNUSEDSIGNAL */
  output eng_rsp_t      rsp,
  input  logic [15:0]   e_max,            // the register; sampled at the start
  // L2 port (read data one cycle after rd_en)
  output l2_req_t       l2_req,
  input  l2_rsp_t       l2_rsp
);
  // Compute cycles per word, and the width of their counter.
  localparam int P  = (8 + CORES - 1) / CORES;
  localparam int CW = (P > 1) ? $clog2(P) : 1;

  typedef enum logic [3:0] {
    S_IDLE, S_SCALAR, S_RDDST, S_RDSRC, S_COMP, S_DRAIN, S_WRITE,
    S_R_RDDST, S_COMBINE, S_R_WRITE, S_SKEW, S_RETIRE
  } state_e;

  // The state that ends an instruction.
  localparam state_e S_DONE = EXTRA_CYCLE ? S_SKEW : S_RETIRE;

  state_e      state; /*verilator coverage_off*/
  logic [3:0]  err;
  logic [31:0] ret_seq;
  slot_t       ret_slot; /*verilator coverage_on*/ // no toggle coverage: = rsp.ret_*, counted there (constant or unreachable high bits)
  /* verilator lint_off UNUSEDSIGNAL */  // the instruction being started
  cvo_body_t   s_ins;                     // (async is the scheduler's)
  /* verilator lint_on UNUSEDSIGNAL */
  logic [2:0]  func;
  logic        sub_emax, recip_scale, accm;
  word_addr_t  dst, vbase;     // vbase: the vector's first word (src, or src + 1 for SCALE)
  word_addr_t  src;
  logic [15:0] len;
  logic [13:0] words;          // W = ceil(length / 8) <= 8192
  logic [13:0] wi;             // words done
  logic [CW-1:0] cc;           // compute cycle within the word
  logic        descending;
  logic [15:0] emax_q;         // e_max when the instruction started
  logic [15:0] scalar;         // SCALE's s
  logic        scalar_next;    // the read data of the next cycle is the scalar word
  logic [127:0] old_word;      // the old destination word (accm)
  logic [127:0] out_word;      // the results of the current word
  logic [15:0] red_y;          // the REDUCE_SUM result

  logic is_reduce;
  assign is_reduce = (func == CVO_F_REDUCE_SUM);

  assign rsp.idle      = (state == S_IDLE);
  assign rsp.ret_valid = (state == S_RETIRE);
  assign rsp.ret_seq   = ret_seq;
  assign rsp.ret_op    = OP_CVO;
  assign rsp.ret_err   = err;
  assign rsp.ret_slot  = ret_slot;
  assign s_ins         = req.word.body.cvo;

  // The word being worked on and its element mask (elements < length).
  logic [13:0] widx; /*verilator coverage_off*/
  logic [16:0] wbase; /*verilator coverage_on*/ // widx * 8, the word's first element; no toggle coverage: bits 2:0 constant, the rest is widx
  logic [16:0] wrem;           // elements of the vector from that one on, >= 1
  logic [7:0]  wmask;
  assign widx  = descending ? (words - 14'd1 - wi) : wi;
  assign wbase = {widx, 3'b000};
  assign wrem  = 17'(len) - wbase;
  assign wmask = (wrem >= 17'd8) ? 8'hFF : 8'((9'd1 << wrem[2:0]) - 9'd1);

  always_comb begin
    l2_req.rd_en = (state == S_SCALAR) || (state == S_RDDST) || (state == S_RDSRC)
                || (state == S_R_RDDST);
    case (state)
      S_SCALAR: l2_req.rd_addr = src;
      S_RDSRC:  l2_req.rd_addr = vbase + 17'(widx);
      default:  l2_req.rd_addr = dst + (is_reduce ? 17'd0 : 17'(widx));  // RDDST, R_RDDST
    endcase
    l2_req.wr_en   = (state == S_WRITE) || (state == S_R_WRITE);
    l2_req.wr_addr = dst + (is_reduce ? 17'd0 : 17'(widx));
    l2_req.wr_data = is_reduce ? {112'd0, red_y} : out_word;
    l2_req.wr_mask = is_reduce ? 8'h01 : wmask;
  end

  // ---- the cores ----------------------------------------------------------------------
  logic        core_clear;
  logic        core_out_valid [CORES];
  logic [2:0]  core_out_lane  [CORES];
  logic [15:0] core_out_y     [CORES];
  acc_t        core_acc       [CORES];
  logic        core_nan [CORES], core_pinf [CORES], core_ninf [CORES];

  assign core_clear = req.start && (state == S_IDLE);

  for (genvar k = 0; k < CORES; k++) begin : g_core
    // Element c * CORES + k of the word in compute cycle c; none past the
    // word's eighth element or past length.
    logic [4:0] elem;
    logic       valid;
    assign elem  = 5'(int'(cc) * CORES + k);
    assign valid = (state == S_COMP) && (elem < 5'd8) && (17'(elem) < wrem);

    pccx_ucvo_core u_core (
      .clk, .rst_n,
      .clear (core_clear), .func, .sub_emax, .recip_scale, .accm,
      .e_max (emax_q), .scalar,
      .in_valid (valid), .in_lane (elem[2:0]),
      .in_x (l2_rsp.rd_data[16 * elem[2:0] +: 16]), .in_old (old_word[16 * elem[2:0] +: 16]),
      .out_valid (core_out_valid[k]), .out_lane (core_out_lane[k]), .out_y (core_out_y[k]),
      .acc (core_acc[k]), .acc_nan (core_nan[k]), .acc_pinf (core_pinf[k]),
      .acc_ninf (core_ninf[k])
    );
  end

  // ---- datapath registers ---------------------------------------------------------------
  // The output word collects each core's result in the cycle after it took
  // the element; COMBINE sums the accumulators, rounds once and adds the
  // old element 0 (accm), only in its own cycle.
  always_ff @(posedge clk) begin
    scalar_next <= (state == S_SCALAR);
    if (scalar_next) scalar <= l2_rsp.rd_data[15:0];
    if (state == S_RDSRC && accm) old_word <= l2_rsp.rd_data;
    for (int k = 0; k < CORES; k++)
      if (core_out_valid[k]) out_word[16 * core_out_lane[k] +: 16] <= core_out_y[k];
    if (state == S_COMBINE) begin
      acc_t sum;
      logic nan, pinf, ninf;
      logic [15:0] y;
      sum  = '0;
      nan  = 1'b0;
      pinf = 1'b0;
      ninf = 1'b0;
      for (int k = 0; k < CORES; k++) begin
        sum  = sum + core_acc[k];
        nan  = nan | core_nan[k];
        pinf = pinf | core_pinf[k];
        ninf = ninf | core_ninf[k];
      end
      y = reduce_round(sum, nan, pinf, ninf);
      if (accm) y = bf16_add(l2_rsp.rd_data[15:0], y);
      red_y <= y;
    end
  end

  // ---- control ------------------------------------------------------------------------------
  // Start-cycle checks of docs/cvo.md section 1: the source range, then the
  // destination range; none for length = 0. Called only in a start cycle.
  function automatic logic [3:0] start_error();
    logic [63:0] n, nw, src_n, dst_n;
    n     = 64'(s_ins.length);
    nw    = ceil_shift(n, 3);
    src_n = (s_ins.cvo_func == CVO_SCALE) ? nw + 64'd1 : nw;
    dst_n = (s_ins.cvo_func == CVO_REDUCE_SUM) ? 64'd1 : nw; /*verilator coverage_off*/
    if (n == 64'd0) return ERR_OK; // no coverage here and on the next two lines: Verilator 5.006 puts an if's counter after its arm's return, so these arms never count though they run
    if (64'(s_ins.src_addr) + src_n > 64'(L2_WORDS)) return ERR_L2_RANGE;
    if (64'(s_ins.dst_addr) + dst_n > 64'(L2_WORDS)) return ERR_L2_RANGE; /*verilator coverage_on*/
    return ERR_OK;
  endfunction

  logic        s_scale, s_reduce, s_accm;
  logic [17:0] s_vbase;
  assign s_scale  = (s_ins.cvo_func[2:0] == CVO_F_SCALE);
  assign s_reduce = (s_ins.cvo_func[2:0] == CVO_F_REDUCE_SUM);
  assign s_accm   = s_ins.flags.accm;
  assign s_vbase  = 18'(s_ins.src_addr) + (s_scale ? 18'd1 : 18'd0);

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      state       <= S_IDLE;
      err         <= ERR_OK;
      ret_seq     <= '0;
      ret_slot    <= '0;
      func        <= '0;
      sub_emax    <= 1'b0;
      recip_scale <= 1'b0;
      accm        <= 1'b0;
      src         <= '0;
      dst         <= '0;
      vbase       <= '0;
      len         <= '0;
      words       <= '0;
      wi          <= '0;
      cc          <= '0;
      descending  <= 1'b0;
      emax_q      <= '0;
    end else begin
      case (state)
        S_IDLE: if (req.start) begin
          logic [3:0] e;
          e = start_error();
          ret_seq     <= req.seq;
          ret_slot    <= req.slot;
          err         <= e;
          func        <= s_ins.cvo_func[2:0];
          sub_emax    <= s_ins.flags.sub_emax;
          recip_scale <= s_ins.flags.recip_scale;
          accm        <= s_accm;
          src         <= s_ins.src_addr;
          dst         <= s_ins.dst_addr;
          vbase       <= s_vbase[16:0];  // past 2^17 only on a range error
          len         <= s_ins.length;
          words       <= 14'((17'(s_ins.length) + 17'd7) >> 3);
          wi          <= '0;
          cc          <= '0;
          descending  <= 18'(s_ins.dst_addr) > s_vbase;
          emax_q      <= e_max;
          if (e != ERR_OK || s_ins.length == 16'd0) state <= S_DONE;
          else if (s_scale)               state <= S_SCALAR;
          else if (s_accm && !s_reduce)   state <= S_RDDST;
          else                            state <= S_RDSRC;
        end
        S_SCALAR: state <= accm ? S_RDDST : S_RDSRC;
        S_RDDST:  state <= S_RDSRC;
        S_RDSRC:  state <= S_COMP;
        S_COMP: begin
          cc <= cc + 1'b1;
          if (int'(cc) == P - 1) begin
            cc <= '0;
            if (!is_reduce) state <= S_DRAIN;
            else if (wi != words - 14'd1) begin
              wi    <= wi + 14'd1;
              state <= S_RDSRC;
            end else state <= accm ? S_R_RDDST : S_COMBINE;
          end
        end
        S_DRAIN: state <= S_WRITE;
        S_WRITE: begin
          if (wi == words - 14'd1) state <= S_DONE;
          else begin
            wi    <= wi + 14'd1;
            state <= accm ? S_RDDST : S_RDSRC;
          end
        end
        S_R_RDDST: state <= S_COMBINE;
        S_COMBINE: state <= S_R_WRITE;
        S_R_WRITE: state <= S_DONE; /*verilator coverage_off*/
        S_SKEW:    state <= S_RETIRE; /*verilator coverage_on*/ // no coverage: entered only with EXTRA_CYCLE = 1 (skew_* test configs)
        S_RETIRE:  state <= S_IDLE; /*verilator coverage_off*/
        default:   state <= S_IDLE; /*verilator coverage_on*/ // no coverage: unreachable, state is only ever reset or assigned a named state
      endcase
    end
  end
  // ---- assertions (pccx_assert_pkg.sv, docs/assertions.md) ----------------
  `PCCX_ASSERT(CvoStateLegal_A, state <= S_RETIRE)
  `PCCX_ASSERT_ENGINE
  `PCCX_ASSERT_L2_PORT
endmodule
