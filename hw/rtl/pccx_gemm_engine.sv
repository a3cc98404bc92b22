// pccx_gemm_engine: the matrix core. GEMM on a weight-stationary systolic
// array of ROWS x COLS processing elements (docs/architecture.md, GEMM
// engine; docs/timing.md for the cycle count of every phase).
//
// One instruction, after its start-cycle checks (pccx_pkg::mat_error):
//   FILL     the M activation rows move from L2 into L1 (route 0x12), one
//            word per cycle.
//   per architectural 32-column tile t, per chunk of ROWS k values:
//     WLOAD    the chunk's weight beats (one per k) from the matrix stream
//              into the weight buffer; the engine waits while the stream is
//              empty.
//     per sub-tile of COLS columns of the tile:
//       PRELOAD  the PEs take their weights W[k0 + r][32t + sub0 + c].
//       STREAM   activation rows enter the left edge, row r delayed by r
//                cycles (the staggered feed); activations move one PE right
//                and partial sums one PE down per cycle; column c's sum for
//                row m leaves the bottom ROWS + c cycles after row m entered
//                and is added to the accumulator buffer (the first chunk
//                assigns). Lasts M + ROWS + COLS - 1 cycles.
//   SCALE    with w_scale, ceil(N/8) scale beats into the scale buffer.
//   OUT      the shared output path converts, scales, accumulates and writes
//            the M x N results (route 0x21), one word per cycle.
// Integer accumulation is exact, so how the array tiles K, M and N never
// shows in the results, only in the cycle count.
module pccx_gemm_engine
  import pccx_pkg::*;
#(
  parameter int L2_WORDS = 114688,
  parameter int ROWS = 32,
  parameter int COLS = 32,
  parameter bit EXTRA_CYCLE = 1'b0
) (
  input  logic          clk,
  input  logic          rst_n,
  /* verilator lint_off UNUSEDSIGNAL */  // parallel_lane and the reserved bits
  input  eng_req_t      req,              // mean nothing to the systolic array
  input  shape_t        fmap,             // fmap[shape_ptr_addr]; c is ignored
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

  typedef enum logic [3:0] {
    S_IDLE, S_FILL, S_WLOAD, S_PRELOAD, S_STREAM, S_SCALE, S_OUT, S_SKEW, S_RETIRE
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
  logic [15:0] m_rows, k_len, n_cols;
  logic [LW:0] in_words;    // M * ceil(K/16) <= MAT_L1_WORDS
  logic [IW:0] out_words;   // M * ceil(N/8)  <= MAT_ACC_WORDS
  logic [IW:0] row_words;   // ceil(N/8)
  logic [11:0] k_words;     // ceil(K/16)
  logic        findemax, accm, w_scale;
  logic [15:0] cnt;         // cycle (or beat) within the current phase
  logic [15:0] tile_n0;     // first column of the current 32-column tile
  logic [15:0] k0;          // first k of the current chunk
  logic [5:0]  sub0;        // first column of the sub-tile within the tile
  logic [IW-1:0] out_col;   // column word of the output word being issued

  assign rsp.idle      = (state == S_IDLE);
  assign rsp.ret_valid = (state == S_RETIRE);
  assign rsp.ret_seq   = ret_seq;
  assign rsp.ret_op    = OP_GEMM;
  assign rsp.ret_err   = err;
  assign rsp.ret_slot  = ret_slot;
  assign s_ins         = req.word.body.mat;

  // Rows of the current chunk and columns of the current tile.
  logic [15:0] chunk_rows, tile_cols;
  assign chunk_rows = (k_len - k0 < 16'(ROWS)) ? k_len - k0 : 16'(ROWS);
  assign tile_cols  = (n_cols - tile_n0 < 16'd32) ? n_cols - tile_n0 : 16'd32;

  // ---- buffers ----------------------------------------------------------------
  logic [127:0] l1 [MAT_L1_WORDS];          // activations, row m at m * k_words
  logic [127:0] wbuf [ROWS];                // the chunk's weight beats
  logic [127:0] sbuf [MAT_ACC_WORDS];       // scale beats
  logic signed [31:0] acc [8 * MAT_ACC_WORDS];  // row m, column n at m*8*ceil(N/8) + n

  // ---- the array ----------------------------------------------------------------
  // Weights and activations are held sign-extended to 32 bits: the values
  // are INT4 and INT8, but a narrower register made the simulator
  // sign-extend both operands of every multiply in every cycle.
  logic signed [31:0] pe_w [ROWS][COLS];    // stationary INT4 weights
  logic signed [31:0] pe_a [ROWS][COLS];    // activation leaving each PE to the right
  logic signed [31:0] pe_p [ROWS][COLS];    // partial sum leaving each PE downwards
  logic signed [31:0] feed [ROWS];          // left-edge INT8 input of each row

  // The array, and the accumulation of what leaves its bottom edge, in one
  // block of blocking assignments in reverse order (last row and column
  // first), so every PE reads its neighbours' values from before the edge:
  // the same registers as non-blocking writes, without the per-element
  // shadow copies Verilator makes for non-blocking writes to unpacked arrays
  // inside loops (docs/architecture.md, simulation speed).
  /* verilator lint_off BLKSEQ */
  always_ff @(posedge clk) begin
    if (state == S_PRELOAD) begin
      for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++) begin
          pe_a[r][c] = 32'sd0;
          pe_w[r][c] = (16'(r) < chunk_rows && 16'(sub0) + 16'(c) < tile_cols)
                       ? 32'(signed'(wbuf[r][4 * (int'(sub0) + c) +: 4])) : 32'sd0;
        end
    end else if (state == S_STREAM) begin
      // Row r's input in stream cycle cnt is a[m][k0 + r] with m = cnt - r
      // (the staggered feed in front of the array).
      for (int r = 0; r < ROWS; r++) begin
        int m, k;
        m = int'(cnt) - r;
        k = int'(k0) + r;
        feed[r] = 32'sd0;
        if (m >= 0 && m < int'(m_rows) && k < int'(k_len))
          feed[r] = 32'(signed'(l1[LW'(m * int'(k_words) + (k >> 4))][8 * (k & 15) +: 8]));
      end
      // Column c's bottom output in stream cycle cnt belongs to row
      // m = cnt - ROWS - c (it left the array at the previous edge).
      for (int c = 0; c < COLS; c++) begin
        int m;
        logic [$clog2(8 * MAT_ACC_WORDS)-1:0] idx;
        m = int'(cnt) - ROWS - c;
        idx = $bits(idx)'(m * 8 * int'(row_words) + int'(tile_n0) + int'(sub0) + c);
        if (m >= 0 && m < int'(m_rows) && int'(sub0) + c < int'(tile_cols))
          acc[idx] = ((k0 == 16'd0) ? 32'sd0 : acc[idx]) + pe_p[ROWS - 1][c];
      end
      for (int r = ROWS - 1; r >= 1; r--) begin
        for (int c = COLS - 1; c >= 1; c--) begin
          pe_p[r][c] = pe_p[r - 1][c] + pe_a[r][c - 1] * pe_w[r][c];
          pe_a[r][c] = pe_a[r][c - 1];
        end
        pe_p[r][0] = pe_p[r - 1][0] + feed[r] * pe_w[r][0];
        pe_a[r][0] = feed[r];
      end
      for (int c = COLS - 1; c >= 1; c--) begin
        pe_p[0][c] = pe_a[0][c - 1] * pe_w[0][c];
        pe_a[0][c] = pe_a[0][c - 1];
      end
      pe_p[0][0] = feed[0] * pe_w[0][0];
      pe_a[0][0] = feed[0];
    end
  end
  /* verilator lint_on BLKSEQ */

  // ---- L1 fill (route 0x12) ---------------------------------------------------------
  logic          fill_wr;
  logic [LW-1:0] fill_idx;
  always_ff @(posedge clk) begin
    fill_wr  <= (state == S_FILL);
    fill_idx <= LW'(cnt);
    if (fill_wr) l1[fill_idx] <= l2_rsp.rd_data;
  end

  // ---- weight and scale beats -------------------------------------------------------
  assign ws_ready = (state == S_WLOAD) || (state == S_SCALE);
  logic ws_fire;
  assign ws_fire = ws_valid && ws_ready;

  always_ff @(posedge clk) begin
    if (ws_fire && state == S_WLOAD) wbuf[cnt[$clog2(ROWS > 1 ? ROWS : 2)-1:0]] <= ws_data;
    if (ws_fire && state == S_SCALE) sbuf[IW'(cnt)] <= ws_data;
  end

  // ---- output path (route 0x21) ----------------------------------------------------
  l2_req_t       wb_l2_req;
  logic [IW-1:0] wb_acc_idx, wb_scale_idx;
  logic signed [31:0] wb_acc_word [8];
  logic [15:0]   wb_emax;
  logic [7:0]    issue_mask;
  logic          issue;

  assign issue = (state == S_OUT) && (cnt < 16'(out_words));
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


  logic last_stream_cycle;
  assign last_stream_cycle = (cnt == m_rows + 16'(ROWS) + 16'(COLS) - 16'd2);

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      state     <= S_IDLE;
      err       <= ERR_OK;
      ret_seq   <= '0;
      ret_slot  <= '0;
      src       <= '0;
      dst       <= '0;
      m_rows    <= '0;
      k_len     <= '0;
      n_cols    <= '0;
      in_words  <= '0;
      out_words <= '0;
      row_words <= '0;
      k_words   <= '0;
      findemax  <= 1'b0;
      accm      <= 1'b0;
      w_scale   <= 1'b0;
      cnt       <= '0;
      tile_n0   <= '0;
      k0        <= '0;
      sub0      <= '0;
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
          m_rows    <= fmap.a;
          k_len     <= fmap.b;
          n_cols    <= weight.b;
          // Meaningful only without a shape error, which bounds them.
          k_words   <= 12'((17'(fmap.b) + 17'd15) >> 4);
          row_words <= (IW + 1)'((17'(weight.b) + 17'd7) >> 3);
          in_words  <= (LW + 1)'(32'(fmap.a) * ((32'(fmap.b) + 32'd15) >> 4));
          out_words <= (IW + 1)'(32'(fmap.a) * ((32'(weight.b) + 32'd7) >> 3));
          cnt       <= '0;
          state     <= (start_error() != ERR_OK) ? S_DONE : S_FILL;
        end
        S_FILL: begin
          cnt <= cnt + 16'd1;
          if (cnt == 16'(in_words) - 16'd1) begin
            cnt     <= '0;
            tile_n0 <= '0;
            k0      <= '0;
            state   <= S_WLOAD;
          end
        end
        S_WLOAD: if (ws_fire) begin
          cnt <= cnt + 16'd1;
          if (cnt == chunk_rows - 16'd1) begin
            sub0  <= '0;
            state <= S_PRELOAD;
          end
        end
        S_PRELOAD: begin
          cnt   <= '0;
          state <= S_STREAM;
        end
        S_STREAM: begin
          cnt <= cnt + 16'd1;
          if (last_stream_cycle) begin
            cnt <= '0;
            if (16'(sub0) + 16'(COLS) < tile_cols) begin
              sub0  <= sub0 + 6'(COLS);
              state <= S_PRELOAD;
            end else if (k0 + 16'(ROWS) < k_len) begin
              k0    <= k0 + 16'(ROWS);
              state <= S_WLOAD;
            end else if (tile_n0 + 16'd32 < n_cols) begin
              tile_n0 <= tile_n0 + 16'd32;
              k0      <= '0;
              state   <= S_WLOAD;
            end else begin
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
          if (cnt == 16'(out_words) + 16'd1) state <= S_DONE;
        end /*verilator coverage_off*/
        S_SKEW:   state <= S_RETIRE; /*verilator coverage_on*/ // no coverage: entered only with EXTRA_CYCLE = 1 (skew_* test configs)
        S_RETIRE: state <= S_IDLE; /*verilator coverage_off*/
        default:  state <= S_IDLE; /*verilator coverage_on*/ // no coverage: unreachable, state is only ever reset or assigned a named state
      endcase
    end
  end
  // ---- assertions (pccx_assert_pkg.sv, docs/assertions.md) ----------------
  `PCCX_ASSERT(GemmStateLegal_A, state <= S_RETIRE)
  `PCCX_ASSERT_ENGINE
  `PCCX_ASSERT_L2_PORT
endmodule
