// pccx_scheduler: the decoder, the five engine FIFOs and the conflict /
// barrier rule of docs/semantics.md section 8, for all engines.
//
// Every legal in-flight instruction (latched, not retired) owns a slot that
// holds its word and sequence number. The engine FIFOs hold slot numbers.
// When an instruction is latched, its dependency row is computed once
// against every older in-flight slot (conflicting footprints, barriers,
// unresolved footprints); a slot's bit is cleared from every row when it
// retires. The instruction at a FIFO head starts when its engine is idle and
// its row is empty. Doing the comparison at latch time, not every cycle,
// keeps the cost per simulated cycle independent of the number of slots.
//
// The scheduler also holds the two shape tables: footprints are computed
// from them, and keeping them here (not behind an array-valued port) saves
// the simulator a copy of both tables per module boundary every cycle. The
// engines get the entries their head instruction names (eng_fmap,
// eng_weight); MEMSET writes through tbl_wr_*, the harness through bd_*.
//
// Slots: every in-flight instruction is either in a FIFO or running in its
// engine, so NUM_ENGINES * FIFO_DEPTH + NUM_ENGINES slots never run out
// while the target FIFO has room.
module pccx_scheduler
  import pccx_pkg::*;
#(
  parameter int FIFO_DEPTH = 8,
  // 1: illegal encodings retire two cycles after their latch instead of one
  // (a deliberate timing bug that only the timing tests build).
  parameter bit DECODER_EXTRA_CYCLE = 1'b0,
  localparam int NSLOT = NUM_ENGINES * FIFO_DEPTH + NUM_ENGINES,
  localparam int SW = $clog2(NSLOT)
) (
  input  logic          clk,
  input  logic          rst_n,
  // latch request from the AXI-Lite slave
  input  logic          lat_valid,
  input  instr_t        lat_word,
  output logic          lat_ready,
  output logic          lat_fire, /*verilator coverage_off*/
  output logic [31:0]   lat_seq, /*verilator coverage_on*/ // sequence number given to the latched word; no toggle coverage: a sequence number, top bits unreachable in a bounded case (counted in req.seq)
  // shape tables: the MEMSET engine's write port and the backdoor (used
  // while idle); the entries named by each engine's head instruction
  input  logic          tbl_wr_en,
  input  entry_id_t     tbl_wr_entry,
  input  shape_t        tbl_wr_value,
  input  logic          bd_wr_en,
  input  entry_id_t     bd_wr_entry,
  input  shape_t        bd_wr_value, /*verilator coverage_off*/
  output shape_t        eng_fmap   [NUM_ENGINES],  // fmap[shape_ptr_addr]
  output shape_t        eng_weight [NUM_ENGINES], /*verilator coverage_on*/ // weight[size_ptr_addr]; no toggle coverage on both: tied to zero or an engine's fmap/weight port, counted there
  // engines (the handshake of pccx_pkg). Of a response the scheduler reads
  // idle, ret_valid and ret_slot; the rest goes to the status register.
  output eng_req_t      eng_req [NUM_ENGINES], /*verilator coverage_off*/
  input  eng_rsp_t      eng_rsp [NUM_ENGINES], /*verilator coverage_on*/ // no toggle coverage: the engines' rsp ports, counted there
  // the decoder's own retire port (illegal encodings)
  output logic          dec_ret_valid, /*verilator coverage_off*/
  output logic [31:0]   dec_ret_seq, /*verilator coverage_on*/ // no toggle coverage: a sequence number, top bits unreachable in a bounded case (counted in req.seq)
  output logic [3:0]    dec_ret_op,
  output logic [3:0]    dec_ret_err
);
  // The handshake carries slot numbers in pccx_pkg::SLOT_W bits: a
  // FIFO_DEPTH with more slots than that is refused at elaboration.
  if (SW > SLOT_W) begin : g_slots_fit
    $error("pccx_scheduler: %0d slots need %0d bits, the handshake has SLOT_W = %0d",
           NSLOT, SW, SLOT_W);
  end

  shape_t fmap   [64] /*verilator public_flat_rd*/;
  shape_t weight [64] /*verilator public_flat_rd*/;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      for (int i = 0; i < 64; i++) begin
        fmap[i]   <= '0;
        weight[i] <= '0;
      end
    end else if (bd_wr_en) begin
      if (bd_wr_entry.weight) weight[bd_wr_entry.index] <= bd_wr_value;
      else                    fmap[bd_wr_entry.index]   <= bd_wr_value;
    end else if (tbl_wr_en) begin
      if (tbl_wr_entry.weight) weight[tbl_wr_entry.index] <= tbl_wr_value;
      else                     fmap[tbl_wr_entry.index]   <= tbl_wr_value;
    end
  end

  // Only MEM (fmap), GEMV and GEMM (both) read table entries; the other
  // engines' ports are tied off so that no lookup runs for them.
  for (genvar e = 0; e < NUM_ENGINES; e++) begin : g_entries
    if (e == ENG_MEM || e == ENG_GEMV || e == ENG_GEMM) begin : g_fmap
      assign eng_fmap[e] = fmap[shape_ptr_of(eng_req[e].word)];
    end else begin : g_no_fmap
      assign eng_fmap[e] = '0;
    end
    if (e == ENG_GEMV || e == ENG_GEMM) begin : g_weight
      assign eng_weight[e] = weight[size_ptr_of(eng_req[e].word)];
    end else begin : g_no_weight
      assign eng_weight[e] = '0;
    end
  end

  logic [NSLOT-1:0] slot_valid;
  instr_t           slot_word [NSLOT];
  logic [31:0]      slot_seq  [NSLOT];
  typedef logic [NSLOT-1:0] dep_rows_t [NSLOT];
  dep_rows_t        dep; /*verilator coverage_off*/ // dep[i][j]: slot i waits for slot j
  logic [31:0]      next_seq; // no toggle coverage: a sequence number (see lat_seq)
  logic             dec_ret_late; /*verilator coverage_on*/ // DECODER_EXTRA_CYCLE: retire next cycle; no toggle coverage: toggles only in skew_decoder

  // ---- decode the word being latched --------------------------------------
  logic [3:0] lat_err;
  logic       lat_legal;
  logic [2:0] lat_engine;
  assign lat_err    = decode_error(lat_word);
  assign lat_legal  = (lat_err == ERR_OK);
  assign lat_engine = lat_word.opcode[2:0];  // legal opcodes are 0..4 = engine ids

  // ---- FIFOs ----------------------------------------------------------------
  logic [NUM_ENGINES-1:0] eng_start;
  logic [NUM_ENGINES-1:0] fifo_empty, fifo_full;
  logic [SW-1:0]          fifo_head [NUM_ENGINES];
  logic [SW-1:0]          free_slot;  // lowest_free(slot_valid), registered

  assign lat_ready = lat_valid && (!lat_legal || !fifo_full[lat_engine]);
  assign lat_fire  = lat_valid && lat_ready;
  assign lat_seq   = next_seq;

  for (genvar e = 0; e < NUM_ENGINES; e++) begin : g_engine
    pccx_fifo #(.WIDTH(SW), .DEPTH(FIFO_DEPTH)) u_fifo (
      .clk,
      .rst_n,
      .push      (lat_fire && lat_legal && (lat_engine == 3'(e))),
      .push_data (free_slot),
      .pop       (eng_start[e]),
      .head      (fifo_head[e]),
      .empty     (fifo_empty[e]),
      .full      (fifo_full[e])
    );
    assign eng_start[e] = !fifo_empty[e] && eng_rsp[e].idle && (dep[fifo_head[e]] == '0);
    assign eng_req[e]   = '{start: eng_start[e], word: slot_word[fifo_head[e]],
                            seq: slot_seq[fifo_head[e]], slot: slot_t'(fifo_head[e])};
  end

  // The lowest-numbered free slot, kept in a register that is recomputed only
  // in a cycle that changes slot_valid (a latch or a retire): as a
  // combinational scan it cost a 45-step loop every simulated cycle.
  function automatic logic [SW-1:0] lowest_free(logic [NSLOT-1:0] valid);
    logic [SW-1:0] f;
    f = '0; /*verilator coverage_off*/
    for (int i = NSLOT - 1; i >= 0; i--) if (!valid[i]) f = SW'(i); /*verilator coverage_on*/ // no coverage: Verilator 5.006 counts this if before it sets `valid` (still 0), so its else arm never counts though it runs
    return f;
  endfunction

  logic [NSLOT-1:0] retiring;
  always_comb begin
    retiring = '0;
    for (int e = 0; e < NUM_ENGINES; e++)
      if (eng_rsp[e].ret_valid) retiring[SW'(eng_rsp[e].ret_slot)] = 1'b1;
  end

  // ---- footprints -------------------------------------------------------------
  // The dependency row is computed only in a latch cycle. It is a separate,
  // pure function that Verilator keeps out of line (no_inline_task): inlined,
  // its wide temporaries (footprints are 543 bits) were zeroed on every
  // simulated cycle, latch or not.
  typedef instr_t      slot_words_t [NSLOT];
  typedef logic [31:0] slot_seqs_t  [NSLOT];
  typedef shape_t      table_t      [64];

  function automatic logic [NSLOT-1:0] dependency_row(
      instr_t new_word, logic [NSLOT-1:0] valid, logic [NSLOT-1:0] retiring_now,
      slot_words_t words, slot_seqs_t seqs,
      table_t fm, table_t wt);
    /*verilator no_inline_task*/
    footprint_t nf, of;
    logic [NSLOT-1:0] row;
    logic new_unresolved, old_unresolved;
    nf  = footprint(new_word, fm[shape_ptr_of(new_word)], wt[size_ptr_of(new_word)]);
    row = '0;
    // A footprint is unresolved while an older in-flight MEMSET (one retiring
    // this cycle included: its write lands only at this edge) writes a table
    // entry it reads; the word being latched is younger than all.
    new_unresolved = 1'b0;
    for (int j = 0; j < NSLOT; j++)
      if (valid[j] && words[j].opcode == OP_MEMSET
          && ((nf.tbl_rd0_en && memset_entry(words[j]) == nf.tbl_rd0)
           || (nf.tbl_rd1_en && memset_entry(words[j]) == nf.tbl_rd1)))
        new_unresolved = 1'b1;
    for (int i = 0; i < NSLOT; i++) begin
      if (valid[i] && !retiring_now[i]) begin
        of = footprint(words[i], fm[shape_ptr_of(words[i])], wt[size_ptr_of(words[i])]);
        old_unresolved = 1'b0;
        for (int j = 0; j < NSLOT; j++)
          if (valid[j] && seq_older(seqs[j], seqs[i]) && words[j].opcode == OP_MEMSET
              && ((of.tbl_rd0_en && memset_entry(words[j]) == of.tbl_rd0)
               || (of.tbl_rd1_en && memset_entry(words[j]) == of.tbl_rd1)))
            old_unresolved = 1'b1;
        if (nf.barrier || of.barrier || new_unresolved || old_unresolved
            || footprints_conflict(of, nf))
          row = row | (NSLOT'(1) << i);
      end
    end
    return row;
  endfunction

  // The dependency rows change only in a latch or retire cycle, and then as a
  // whole: one non-blocking write of the whole array, where a write per row
  // made the simulator test 45 per-row write flags every cycle. Rows need
  // no reset: a row is written in full when its slot is latched.
  always_ff @(posedge clk) begin
    if (retiring != '0 || (lat_fire && lat_legal)) begin : update_dep
      dep_rows_t next;
      for (int i = 0; i < NSLOT; i++) next[i] = dep[i] & ~retiring;
      if (lat_fire && lat_legal)
        next[free_slot] = dependency_row(lat_word, slot_valid, retiring, slot_word, slot_seq,
                                         fmap, weight);
      dep <= next;
    end
  end

  // ---- state ----------------------------------------------------------------
  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      slot_valid    <= '0;
      free_slot     <= '0;
      next_seq      <= '0;
      dec_ret_valid <= 1'b0;
      dec_ret_late  <= 1'b0;
      dec_ret_seq   <= '0;
      dec_ret_op    <= '0;
      dec_ret_err   <= '0;
    end else begin
      dec_ret_valid <= dec_ret_late;
      dec_ret_late  <= 1'b0;
      slot_valid <= slot_valid & ~retiring;
      if (retiring != '0 || (lat_fire && lat_legal))
        free_slot <= lowest_free((slot_valid & ~retiring)
                                 | ((lat_fire && lat_legal) ? NSLOT'(1) << free_slot : '0));
      if (lat_fire) begin
        next_seq <= next_seq + 32'd1;
        if (lat_legal) begin
          slot_valid[free_slot] <= 1'b1;
          slot_word[free_slot]  <= lat_word;
          slot_seq[free_slot]   <= next_seq;
        end else begin
          // Illegal encodings retire from the decoder one cycle after their
          // latch: no effect, so nothing to order them against.
          dec_ret_valid <= !DECODER_EXTRA_CYCLE;
          dec_ret_late  <= DECODER_EXTRA_CYCLE;
          dec_ret_seq   <= next_seq;
          dec_ret_op    <= lat_word.opcode;
          dec_ret_err   <= lat_err;
        end
      end
    end
  end
  // ---- assertions (pccx_assert_pkg.sv, docs/assertions.md) ----------------
  `PCCX_ASSERT(SchedLatchFreeSlot_A, lat_fire && lat_legal |-> !slot_valid[free_slot])
  `PCCX_ASSERT(SchedRetireInFlight_A, (retiring & ~slot_valid) == '0)
  for (genvar e = 0; e < NUM_ENGINES; e++) begin : g_assert
    `PCCX_ASSERT_NOW(SchedHeadInFlight_A, fifo_empty[e] || slot_valid[fifo_head[e]])
    `PCCX_ASSERT_NOW(SchedHeadRowInFlight_A, fifo_empty[e] || (dep[fifo_head[e]] & ~slot_valid) == '0)
  end
endmodule
