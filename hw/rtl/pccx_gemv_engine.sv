// pccx_gemv_engine: the vector core. GEMV (M = 1) on LANES uV lanes
// (docs/architecture.md, GEMV engine; docs/timing.md for the cycle counts).
//
// One instruction, after its start-cycle checks (pccx_pkg::mat_error):
//   FILL   the K activations move from L2 into L1 (route 0x13), one word per
//          cycle.
//   TILE   per architectural 32-column tile: the K weight beats of the tile
//          arrive from the vector stream; beat j goes to lane j % P, where P
//          is the number of working lanes (parallel_lane, 0 = all). A lane
//          multiplies its beat's 32 INT4 weights by a[j] at 8 MACs per cycle,
//          so it is busy for 4 cycles and takes its next beat in the cycle it
//          finishes the last group. Each lane keeps 32 exact partial sums; in
//          the cycle after every lane is done the partial sums are added into
//          the accumulator buffer (the reduce) and cleared.
//   SCALE  with w_scale, ceil(N/8) scale beats into the scale buffer.
//   OUT    the shared output path writes the N results (route 0x31).
// Partial sums are exact, so the lane count and parallel_lane change the
// cycle count only.
module pccx_gemv_engine
  import pccx_pkg::*;
#(
  parameter int L2_WORDS = 114688,
  parameter int LANES = 4,
  parameter bit EXTRA_CYCLE = 1'b0
) (
  input  logic          clk,
  input  logic          rst_n,
  /* verilator lint_off UNUSEDSIGNAL */  // the opcode and reserved bits; fmap c
  input  eng_req_t      req,              // and weight c are ignored
  input  shape_t        fmap,             // fmap[shape_ptr_addr]
  input  shape_t        weight,           // weight[size_ptr_addr]
  /* verilator lint_on UNUSEDSIGNAL */
  output eng_rsp_t      rsp,
  output l2_req_t       l2_req,
  input  l2_rsp_t       l2_rsp,
  input  logic          ws_valid,
  output logic          ws_ready,
  input  logic [127:0]  ws_data,
  output logic          emax_we,
  output logic [15:0]   emax_value
);
  localparam int IW = $clog2(MAT_ACC_WORDS);
  localparam int LW = $clog2(MAT_L1_WORDS);
  localparam int LANE_W = (LANES > 1) ? $clog2(LANES) : 1;
  // A lane does 8 of a beat's 32 MACs per cycle.
  localparam int GROUPS = 4;

  typedef enum logic [3:0] {
    S_IDLE, S_FILL, S_TILE, S_SCALE, S_OUT, S_SKEW, S_RETIRE
  } state_e;
  localparam state_e S_DONE = EXTRA_CYCLE ? S_SKEW : S_RETIRE;

  state_e      state; /*verilator coverage_off*/
  logic [3:0]  err;
  logic [31:0] ret_seq;
  slot_t       ret_slot; /*verilator coverage_on*/ // no toggle coverage: = rsp.ret_*, counted there (constant or unreachable high bits)
  /* verilator lint_off UNUSEDSIGNAL */  // the instruction being started; the
  mat_body_t   s_ins;                     // table pointers are the scheduler's
  /* verilator lint_on UNUSEDSIGNAL */
  word_addr_t  src, dst;
  logic [15:0] k_len, n_cols;
  logic [LW:0] in_words;    // ceil(K/16) <= MAT_L1_WORDS
  logic [IW:0] row_words;   // ceil(N/8)  <= MAT_ACC_WORDS
  logic        findemax, accm, w_scale;
  logic [LANE_W:0] active;  // P
  logic [15:0] cnt;         // cycle, or beats accepted, within the phase
  logic [15:0] tile_n0;     // first column of the current tile
  logic [LANE_W-1:0] next_lane;
  logic [IW-1:0] out_col;

  assign rsp.idle      = (state == S_IDLE);
  assign rsp.ret_valid = (state == S_RETIRE);
  assign rsp.ret_seq   = ret_seq;
  assign rsp.ret_op    = OP_GEMV;
  assign rsp.ret_err   = err;
  assign rsp.ret_slot  = ret_slot;
  assign s_ins         = req.word.body.mat;

  logic [127:0] l1 [MAT_L1_WORDS];
  logic [127:0] sbuf [MAT_ACC_WORDS];
  logic signed [31:0] acc [8 * MAT_ACC_WORDS];

  // ---- lanes ------------------------------------------------------------------------
  logic [127:0]       lane_beat [LANES];
  logic signed [31:0] lane_act  [LANES];  // INT8, held sign-extended (no extension per MAC)
  logic [2:0]         lane_left [LANES];  // MAC groups still to do, 0 = idle
  logic signed [31:0] lane_sum  [LANES][32];

  logic lanes_idle;
  always_comb begin
    lanes_idle = 1'b1;
    for (int l = 0; l < LANES; l++) if (lane_left[l] != 3'd0) lanes_idle = 1'b0;
  end

  // The activation of beat `cnt`. The last L1 word is written at the end of
  // the first TILE cycle, where beat 0 may already arrive: forward it.
  logic          fill_wr;
  logic [LW-1:0] fill_idx;
  logic [127:0]  act_word;
  logic signed [7:0] act_now;
  assign act_word = (fill_wr && fill_idx == LW'(cnt >> 4)) ? l2_rsp.rd_data : l1[LW'(cnt >> 4)];
  assign act_now  = act_word[8 * cnt[3:0] +: 8];

  assign ws_ready = ((state == S_TILE) && (cnt < k_len) && (lane_left[next_lane] <= 3'd1))
                 || (state == S_SCALE);
  logic ws_fire;
  assign ws_fire = ws_valid && ws_ready;

  logic reduce;
  assign reduce = (state == S_TILE) && (cnt == k_len) && lanes_idle;

  // Lanes, the reduce into the accumulator buffer and the buffers, with
  // blocking writes for the same reason as the GEMM array (no shadow copies
  // of unpacked arrays written in loops); every read below happens before
  // the write of the same element.
  /* verilator lint_off BLKSEQ */
  always_ff @(posedge clk) begin
    if (state == S_IDLE && req.start) begin
      for (int l = 0; l < LANES; l++) begin
        lane_left[l] = 3'd0;
        for (int j = 0; j < 32; j++) lane_sum[l][j] = 32'sd0;
      end
    end
    if (reduce) begin
      for (int j = 0; j < 32; j++) begin
        logic signed [31:0] total;
        total = 32'sd0;
        for (int l = 0; l < LANES; l++) begin
          total = total + lane_sum[l][j];
          lane_sum[l][j] = 32'sd0;
        end
        if (int'(tile_n0) + j < int'(n_cols)) acc[int'(tile_n0) + j] = total;
      end
    end
    for (int l = 0; l < LANES; l++) begin
      if (lane_left[l] != 3'd0) begin
        int g;
        g = GROUPS - int'(lane_left[l]);
        for (int i = 0; i < 8; i++)
          lane_sum[l][8 * g + i] = lane_sum[l][8 * g + i]
            + lane_act[l] * 32'(signed'(lane_beat[l][4 * (8 * g + i) +: 4]));
        lane_left[l] = lane_left[l] - 3'd1;
      end
    end
    if (ws_fire && state == S_TILE) begin
      lane_beat[next_lane] = ws_data;
      lane_act[next_lane]  = 32'(act_now);
      lane_left[next_lane] = 3'(GROUPS);
    end
  end
  /* verilator lint_on BLKSEQ */

  // ---- L1 fill (route 0x13) and scale beats -------------------------------------------
  always_ff @(posedge clk) begin
    fill_wr  <= (state == S_FILL);
    fill_idx <= LW'(cnt);
    if (fill_wr) l1[fill_idx] <= l2_rsp.rd_data;
    if (ws_fire && state == S_SCALE) sbuf[IW'(cnt)] <= ws_data;
  end

  // ---- output path (route 0x31) -----------------------------------------------------
  l2_req_t       wb_l2_req;
  logic [IW-1:0] wb_acc_idx, wb_scale_idx;
  logic signed [31:0] wb_acc_word [8];
  logic [15:0]   wb_emax;
  logic [7:0]    issue_mask;
  logic          issue;

  assign issue = (state == S_OUT) && (cnt < 16'(row_words));
  assign issue_mask = (out_col == IW'(row_words - 1'b1) && n_cols[2:0] != 3'd0)
                      ? 8'((16'd1 << n_cols[2:0]) - 16'd1) : 8'hFF;
  for (genvar i = 0; i < 8; i++) begin : g_acc_word
    assign wb_acc_word[i] = acc[8 * int'(wb_acc_idx) + i];
  end

  pccx_mat_writeback #(.ACC_WORDS(MAT_ACC_WORDS)) u_writeback (
    .clk, .rst_n,
    .clear (req.start), .dest (dst), .accm, .w_scale,
    .issue, .issue_idx (IW'(cnt)), .issue_col (out_col), .issue_mask,
    .acc_idx (wb_acc_idx), .acc_word (wb_acc_word),
    .scale_idx (wb_scale_idx), .scale_word (sbuf[wb_scale_idx]),
    .l2_req (wb_l2_req), .l2_rsp,
    .emax (wb_emax)
  );

  // FILL reads the activations; every other L2 access is the output path's.
  always_comb begin
    l2_req         = wb_l2_req;
    l2_req.rd_en   = (state == S_FILL) || wb_l2_req.rd_en;
    l2_req.rd_addr = (state == S_FILL) ? src + 17'(cnt) : wb_l2_req.rd_addr;
  end
  assign emax_we    = rsp.ret_valid && findemax && (err == ERR_OK);
  assign emax_value = wb_emax;

  // ---- control ------------------------------------------------------------------------
  function automatic logic [3:0] start_error();
    return mat_error(req.word, fmap, weight, 64'(L2_WORDS));
  endfunction

  logic [4:0] s_lanes;
  assign s_lanes = s_ins.parallel_lane;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      state     <= S_IDLE;
      err       <= ERR_OK;
      ret_seq   <= '0;
      ret_slot  <= '0;
      src       <= '0;
      dst       <= '0;
      k_len     <= '0;
      n_cols    <= '0;
      in_words  <= '0;
      row_words <= '0;
      findemax  <= 1'b0;
      accm      <= 1'b0;
      w_scale   <= 1'b0;
      active    <= '0;
      cnt       <= '0;
      tile_n0   <= '0;
      next_lane <= '0;
      out_col   <= '0;
    end else begin
      case (state)
        S_IDLE: if (req.start) begin
          ret_seq   <= req.seq;
          ret_slot  <= req.slot;
          // The start checks are evaluated only here, in a start cycle:
          // as a continuous assignment a simulator computed them every cycle.
          err       <= start_error();
          src       <= s_ins.src_addr;
          dst       <= s_ins.dest_reg;
          findemax  <= s_ins.flags.findemax;
          accm      <= s_ins.flags.accm;
          w_scale   <= s_ins.flags.w_scale;
          k_len     <= fmap.b;
          n_cols    <= weight.b;
          in_words  <= (LW + 1)'((17'(fmap.b) + 17'd15) >> 4);
          row_words <= (IW + 1)'((17'(weight.b) + 17'd7) >> 3);
          active    <= (s_lanes == 5'd0 || 32'(s_lanes) > LANES)
                       ? (LANE_W + 1)'(LANES) : (LANE_W + 1)'(s_lanes);
          cnt       <= '0;
          state     <= (start_error() != ERR_OK) ? S_DONE : S_FILL;
        end
        S_FILL: begin
          cnt <= cnt + 16'd1;
          if (cnt == 16'(in_words) - 16'd1) begin
            cnt       <= '0;
            tile_n0   <= '0;
            next_lane <= '0;
            state     <= S_TILE;
          end
        end
        S_TILE: begin
          if (ws_fire) begin
            cnt       <= cnt + 16'd1;
            next_lane <= (32'(next_lane) + 1 == 32'(active)) ? '0 : next_lane + 1'b1;
          end
          if (reduce) begin
            cnt       <= '0;
            next_lane <= '0;
            if (tile_n0 + 16'd32 < n_cols) tile_n0 <= tile_n0 + 16'd32;
            else begin
              out_col <= '0;
              state   <= w_scale ? S_SCALE : S_OUT;
            end
          end
        end
        S_SCALE: if (ws_fire) begin
          cnt <= cnt + 16'd1;
          if (cnt == 16'(row_words) - 16'd1) begin
            cnt   <= '0;
            state <= S_OUT;
          end
        end
        S_OUT: begin
          cnt <= cnt + 16'd1;
          if (issue) out_col <= (out_col == IW'(row_words - 1'b1)) ? '0 : out_col + 1'b1;
          if (cnt == 16'(row_words) + 16'd1) state <= S_DONE;
        end /*verilator coverage_off*/
        S_SKEW:   state <= S_RETIRE; /*verilator coverage_on*/ // no coverage: entered only with EXTRA_CYCLE = 1 (skew_* test configs)
        S_RETIRE: state <= S_IDLE; /*verilator coverage_off*/
        default:  state <= S_IDLE; /*verilator coverage_on*/ // no coverage: unreachable, state is only ever reset or assigned a named state
      endcase
    end
  end
  // ---- assertions (pccx_assert_pkg.sv, docs/assertions.md) ----------------
  `PCCX_ASSERT(GemvStateLegal_A, state <= S_RETIRE)
  `PCCX_ASSERT_ENGINE
  `PCCX_ASSERT_L2_PORT
endmodule
