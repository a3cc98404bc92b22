// pccx_pkg: ISA field positions, error codes, engine numbering, the engine
// handshake and the footprint of an instruction (docs/semantics.md sections
// 2, 3 and 8). Everything here is a pure function of an instruction word and
// the shape-table entries it names, shared by the scheduler and the engines.
package pccx_pkg;

  localparam int unsigned HOST_WORDS = 1 << 17;

  // Opcodes [63:60].
  localparam logic [3:0] OP_GEMV   = 4'h0;
  localparam logic [3:0] OP_GEMM   = 4'h1;
  localparam logic [3:0] OP_MEMCPY = 4'h2;
  localparam logic [3:0] OP_MEMSET = 4'h3;
  localparam logic [3:0] OP_CVO    = 4'h4;

  // Error codes (docs/semantics.md section 3). The whole table is listed;
  // some codes belong to engines that a configuration may not contain.
  /* verilator lint_off UNUSEDPARAM */
  localparam logic [3:0] ERR_OK                 = 4'd0;
  localparam logic [3:0] ERR_ILLEGAL_OPCODE     = 4'd1;
  localparam logic [3:0] ERR_ILLEGAL_FUNC       = 4'd2;
  localparam logic [3:0] ERR_ILLEGAL_DEST_CACHE = 4'd3;
  localparam logic [3:0] ERR_ILLEGAL_DIRECTION  = 4'd4;
  localparam logic [3:0] ERR_SHAPE              = 4'd5;
  localparam logic [3:0] ERR_L2_RANGE           = 4'd6;
  localparam logic [3:0] ERR_HOST_RANGE         = 4'd7;
  localparam logic [3:0] ERR_UNIMPLEMENTED      = 4'd15;
  /* verilator lint_on UNUSEDPARAM */

  // Engines, numbered like their opcodes; the decoder's own retire port
  // (illegal encodings) comes after them.
  localparam int ENG_GEMV    = 0;
  localparam int ENG_GEMM    = 1;
  localparam int ENG_MEM     = 2;
  localparam int ENG_MEMSET  = 3;
  localparam int ENG_CVO     = 4;
  localparam int NUM_ENGINES = 5;
  localparam int RET_DECODER = 5;
  localparam int NUM_RETIRE  = 6;

  // L2 client ports (pccx_l2), each observed by the harness as a write port.
  localparam int L2P_MEM      = 0;
  localparam int L2P_GEMV     = 1;
  localparam int L2P_GEMM     = 2;
  localparam int L2P_CVO      = 3;  // reserved for the CVO engine
  localparam int NUM_L2_PORTS = 4;

  // Weight streams: matrix (GEMM, "HP0/1") and vector (GEMV, "HP2/3").
  localparam int WS_MATRIX  = 0;
  localparam int WS_VECTOR  = 1;
  localparam int NUM_STREAMS = 2;

  // CVO function codes used by the footprint.
  localparam logic [3:0] CVO_REDUCE_SUM = 4'h5;
  localparam logic [3:0] CVO_SCALE      = 4'h6;

  // ---- instruction formats ------------------------------------------------
  // The bit position of every field (docs/semantics.md section 2), the SV
  // twin of golden/src/isa/layout.rs. A packed struct lists its members from
  // the most significant bit down; each member's comment gives its bits in
  // the 64-bit word. tests/isa_layout_sv.rs parses these typedefs and checks
  // every position and width (and these comments) against layout.rs, so the
  // two cannot drift apart. Nothing else in hw/rtl slices a word by hand:
  // code names the field (`w.body.memcpy.src_addr`).
  //
  // Multi-bit fields have named types: they say what the field holds.
  typedef logic [3:0]  opcode_t;
  typedef logic [16:0] word_addr_t;  // an L2 or host word address
  typedef logic [5:0]  tbl_index_t;  // an index into one shape table
  typedef logic [15:0] u16_t;        // a 16-bit count or value

  // GEMV and GEMM share one body.
  typedef struct packed {
    logic       findemax;            // [25]
    logic       accm;                // [24]
    logic       w_scale;             // [23]
    logic [2:0] reserved;            // [22:20]
  } mat_flags_t;

  typedef struct packed {
    word_addr_t dest_reg;            // [59:43]
    word_addr_t src_addr;            // [42:26]
    mat_flags_t flags;               // [25:20]
    tbl_index_t size_ptr_addr;       // [19:14]
    tbl_index_t shape_ptr_addr;      // [13:8]
    logic [4:0] parallel_lane;       // [7:3]
    logic [2:0] reserved;            // [2:0]
  } mat_body_t;

  typedef struct packed {
    logic       from_device;         // [59] 1 = FROM_HOST
    logic       to_device;           // [58] 1 = TO_HOST
    word_addr_t dest_addr;           // [57:41]
    word_addr_t src_addr;            // [40:24]
    word_addr_t aux_addr;            // [23:7]
    tbl_index_t shape_ptr_addr;      // [6:1]
    logic       async;               // [0]
  } memcpy_body_t;

  typedef struct packed {
    logic [1:0] dest_cache;          // [59:58] 0 fmap, 1 weight, 2-3 illegal
    tbl_index_t dest_addr;           // [57:52]
    u16_t       a_value;             // [51:36]
    u16_t       b_value;             // [35:20]
    u16_t       c_value;             // [19:4]
    logic [3:0] reserved;            // [3:0]
  } memset_body_t;

  // The seed numbers these flags one bit higher, in body bits
  // (docs/semantics.md section 2); the word bits are the same.
  typedef struct packed {
    logic       sub_emax;            // [5]
    logic       recip_scale;         // [4]
    logic       accm;                // [3]
    logic [1:0] reserved;            // [2:1]
  } cvo_flags_t;

  typedef struct packed {
    logic [3:0] cvo_func;            // [59:56] 8-F illegal
    word_addr_t src_addr;            // [55:39]
    word_addr_t dst_addr;            // [38:22]
    u16_t       length;              // [21:6]
    cvo_flags_t flags;               // [5:1]
    logic       async;               // [0]
  } cvo_body_t;

  // Every body is 60 bits; `raw` is the body of an illegal opcode.
  typedef union packed {
    logic [59:0]  raw;               // [59:0]
    mat_body_t    mat;               // [59:0] GEMV, GEMM
    memcpy_body_t memcpy;            // [59:0]
    memset_body_t memset;            // [59:0]
    cvo_body_t    cvo;               // [59:0]
  } body_t;

  typedef struct packed {
    opcode_t opcode;                 // [63:60]
    body_t   body;                   // [59:0]
  } instr_t;

  // ---- the engine handshake -----------------------------------------------
  // Every engine has the same two ports to the scheduler: a request (start
  // the instruction at its FIFO head) and a response (idle, and the retire
  // port). Slot numbers are carried in SLOT_W bits whatever the slot count;
  // the scheduler checks that its slots fit.
  localparam int SLOT_W = 8;
  typedef logic [SLOT_W-1:0] slot_t;

  typedef struct packed {
    logic        start;  // one cycle, only while the engine is idle
    instr_t      word;   // the instruction; meaningful with start
    logic [31:0] seq;    // its sequence number
    slot_t       slot;   // its scheduler slot, handed back at the retire
  } eng_req_t;

  typedef struct packed {
    logic        idle;       // can start an instruction in this cycle
    logic        ret_valid;  // the retire cycle: the final writes commit at this edge
    logic [31:0] ret_seq;    // the running instruction's; tags its writes too
    logic [3:0]  ret_op;
    logic [3:0]  ret_err;
    slot_t       ret_slot;
  } eng_rsp_t;

  // ---- the L2 client port ---------------------------------------------------
  // Every L2 client (L2P_*) has the same two ports to pccx_l2: a request (a
  // read and a write, each with its enable) and a response (the read data).

  // One client's L2 request: a read whose data comes one cycle later, and a
  // masked write committed at the clock edge.
  typedef struct packed {
    logic         rd_en;
    word_addr_t   rd_addr;
    logic         wr_en;
    word_addr_t   wr_addr;
    logic [127:0] wr_data;
    logic [7:0]   wr_mask;   // one bit per 16-bit element: 1 writes it
  } l2_req_t;

  // One client's L2 response: the word its read of the previous cycle named.
  typedef struct packed {
    logic [127:0] rd_data;
  } l2_rsp_t;

  typedef struct packed {
    logic [15:0] a;
    logic [15:0] b;
    logic [15:0] c;
  } shape_t;

  // Half-open word range [lo, hi); `en` = 0 means the empty range.
  typedef struct packed {
    logic        en;
    logic [63:0] lo;
    logic [63:0] hi;
  } range_t;

  // A shape-table entry id: which table, which of its entries. The harness
  // builds and takes apart the same bits (golden/src/isa/layout.rs, entry_id).
  typedef struct packed {
    logic       weight;              // [6] 1: the weight table, 0: fmap
    tbl_index_t index;               // [5:0]
  } entry_id_t;

  typedef struct packed {
    range_t    l2_rd;
    range_t    l2_wr;
    range_t    host_rd;
    range_t    host_wr;
    logic      tbl_rd0_en;  // fmap[shape_ptr_addr]
    entry_id_t tbl_rd0;
    logic      tbl_rd1_en;  // weight[size_ptr_addr] (GEMV/GEMM)
    entry_id_t tbl_rd1;
    logic      tbl_wr_en;   // MEMSET target
    entry_id_t tbl_wr;
    logic      emax_rd;
    logic      emax_wr;
    logic      barrier;     // async = 0 MEMCPY / CVO
  } footprint_t;

  // The functions below take a whole instruction word or footprint and pick
  // the fields they need; the bits they ignore are meant to be ignored.
  /* verilator lint_off UNUSEDSIGNAL */

  // ---- field accessors ----------------------------------------------------
  // No line coverage: a covered line is a counter increment, which Verilator
  // >= 5.030 takes as a side effect where an index calls these (SIDEEFFECT).
  /*verilator coverage_off*/
  function automatic tbl_index_t shape_ptr_of(instr_t w);  // MEMCPY or GEMV/GEMM
    return (w.opcode == OP_MEMCPY) ? w.body.memcpy.shape_ptr_addr : w.body.mat.shape_ptr_addr;
  endfunction
  function automatic tbl_index_t size_ptr_of(instr_t w);  // GEMV/GEMM
    return w.body.mat.size_ptr_addr;
  endfunction /*verilator coverage_on*/

  // Entry `i` of the fmap table and of the weight table.
  function automatic entry_id_t fmap_entry(tbl_index_t i);
    return '{weight: 1'b0, index: i};
  endfunction
  function automatic entry_id_t weight_entry(tbl_index_t i);
    return '{weight: 1'b1, index: i};
  endfunction

  // The table entry a MEMSET writes: dest_cache 1 is the weight table, 0
  // fmap (2 and 3 are illegal words), dest_addr the entry.
  function automatic entry_id_t memset_entry(instr_t w);
    return '{weight: w.body.memset.dest_cache[0], index: w.body.memset.dest_addr};
  endfunction

  // Decode-time error of a word (docs/semantics.md section 2, in priority
  // order); ERR_OK for a legal word.
  function automatic logic [3:0] decode_error(instr_t w);
    if (w.opcode > OP_CVO) return ERR_ILLEGAL_OPCODE;
    if (w.opcode == OP_CVO && w.body.cvo.cvo_func[3]) return ERR_ILLEGAL_FUNC;
    if (w.opcode == OP_MEMSET && w.body.memset.dest_cache[1]) return ERR_ILLEGAL_DEST_CACHE;
    if (w.opcode == OP_MEMCPY && w.body.memcpy.from_device && w.body.memcpy.to_device)
      return ERR_ILLEGAL_DIRECTION;
    return ERR_OK;
  endfunction

  // ceil(n / 2^s). Every divisor in the ISA is a power of two (8 or 16
  // elements per word); a shift, not a division, because several of these
  // sit in combinational start checks that a simulator evaluates every cycle
  // (a 64-bit divide is tens of CPU cycles).
  function automatic logic [63:0] ceil_shift(logic [63:0] n, int s);
    return (n + ((64'd1 << s) - 64'd1)) >> s;
  endfunction

  // MEMCPY length in words: ceil(a*b*c / 8), exact (a*b*c < 2^48).
  function automatic logic [63:0] memcpy_words(shape_t fm);
    return ceil_shift(64'(fm.a) * 64'(fm.b) * 64'(fm.c), 3);
  endfunction

  function automatic range_t make_range(logic [63:0] base, logic [63:0] len);
    range_t r;
    r.en = (len != 64'd0);
    r.lo = base;
    r.hi = base + len;
    return r;
  endfunction

  function automatic logic ranges_overlap(range_t x, range_t y);
    return x.en && y.en && (x.lo < y.hi) && (y.lo < x.hi);
  endfunction

  // The footprint of a legal word (docs/semantics.md section 8). `fm` is
  // fmap[shape_ptr_of(w)], `wt` is weight[size_ptr_of(w)].
  function automatic footprint_t footprint(instr_t w, shape_t fm, shape_t wt);
    footprint_t f;
    logic [63:0] len;
    logic [63:0] m_rows;
    mat_body_t    mb;
    memcpy_body_t cb;
    cvo_body_t    vb;
    mb = w.body.mat;
    cb = w.body.memcpy;
    vb = w.body.cvo;
    f = '0;
    case (w.opcode)
      OP_MEMSET: begin
        f.tbl_wr_en = 1'b1;
        f.tbl_wr    = memset_entry(w);
      end
      OP_MEMCPY: begin
        len          = memcpy_words(fm);
        f.tbl_rd0_en = 1'b1;
        f.tbl_rd0    = fmap_entry(cb.shape_ptr_addr);
        f.barrier    = !cb.async;
        // from_device = FROM_HOST, to_device = TO_HOST.
        if (cb.from_device) f.host_rd = make_range(64'(cb.src_addr), len);
        else                f.l2_rd   = make_range(64'(cb.src_addr), len);
        if (cb.to_device) f.host_wr = make_range(64'(cb.dest_addr), len);
        else              f.l2_wr   = make_range(64'(cb.dest_addr), len);
      end
      OP_GEMV, OP_GEMM: begin
        m_rows       = 64'(fm.a);
        f.tbl_rd0_en = 1'b1;
        f.tbl_rd0    = fmap_entry(mb.shape_ptr_addr);
        f.tbl_rd1_en = 1'b1;
        f.tbl_rd1    = weight_entry(mb.size_ptr_addr);
        f.l2_rd      = make_range(64'(mb.src_addr), m_rows * ceil_shift(64'(fm.b), 4));
        f.l2_wr      = make_range(64'(mb.dest_reg), m_rows * ceil_shift(64'(wt.b), 3));
        f.emax_wr    = mb.flags.findemax;
      end
      OP_CVO: begin
        len       = ceil_shift(64'(vb.length), 3);
        f.barrier = !vb.async;
        f.emax_rd = vb.flags.sub_emax;
        if (vb.cvo_func == CVO_SCALE) f.l2_rd = make_range(64'(vb.src_addr), len + 64'd1);
        else                          f.l2_rd = make_range(64'(vb.src_addr), len);
        if (vb.cvo_func == CVO_REDUCE_SUM)
          f.l2_wr = make_range(64'(vb.dst_addr), (vb.length != 16'd0) ? 64'd1 : 64'd0);
        else
          f.l2_wr = make_range(64'(vb.dst_addr), len);
      end
      default: ;
    endcase
    return f;
  endfunction

  function automatic logic reads_entry(footprint_t f, entry_id_t e);
    return (f.tbl_rd0_en && f.tbl_rd0 == e) || (f.tbl_rd1_en && f.tbl_rd1 == e);
  endfunction

  // RAW, WAR or WAW between an older and a younger footprint on any shared
  // resource. Barriers are the caller's business.
  function automatic logic footprints_conflict(footprint_t o, footprint_t y);
    logic c;
    c = ranges_overlap(o.l2_wr, y.l2_rd) || ranges_overlap(o.l2_wr, y.l2_wr)
     || ranges_overlap(o.l2_rd, y.l2_wr)
     || ranges_overlap(o.host_wr, y.host_rd) || ranges_overlap(o.host_wr, y.host_wr)
     || ranges_overlap(o.host_rd, y.host_wr)
     || (o.tbl_wr_en && (reads_entry(y, o.tbl_wr) || (y.tbl_wr_en && y.tbl_wr == o.tbl_wr)))
     || (y.tbl_wr_en && reads_entry(o, y.tbl_wr))
     || (o.emax_wr && (y.emax_rd || y.emax_wr))
     || (y.emax_wr && o.emax_rd);
    return c;
  endfunction

  // ---- GEMV / GEMM ------------------------------------------------------------
  // Architectural limits, equal on every configuration so that results never
  // depend on it (docs/numerics.md section 3): the L1 activation buffer holds
  // M*ceil(K/16) words, the accumulator buffer M*ceil(N/8) output words.
  localparam int MAT_L1_WORDS  = 2048;
  localparam int MAT_ACC_WORDS = 512;

  // The start-time error of a GEMV/GEMM (docs/semantics.md section 3):
  // SHAPE first (zero dimension, K mismatch, GEMV with M != 1, over a
  // limit), then the L2 range of the source and of the destination.
  function automatic logic [3:0] mat_error(instr_t w, shape_t fm, shape_t wt,
                                           logic [63:0] l2_words);
    logic [63:0] m, k, n, in_words, out_words;
    m = 64'(fm.a);
    k = 64'(fm.b);
    n = 64'(wt.b);
    in_words  = m * ceil_shift(k, 4);
    out_words = m * ceil_shift(n, 3);
    if (m == 0 || k == 0 || n == 0 || fm.b != wt.a) return ERR_SHAPE;
    if (w.opcode == OP_GEMV && m != 64'd1) return ERR_SHAPE;
    if (in_words > 64'(MAT_L1_WORDS) || out_words > 64'(MAT_ACC_WORDS)) return ERR_SHAPE;
    if (64'(w.body.mat.src_addr) + in_words > l2_words) return ERR_L2_RANGE;
    if (64'(w.body.mat.dest_reg) + out_words > l2_words) return ERR_L2_RANGE;
    return ERR_OK;
  endfunction

  /* verilator lint_on UNUSEDSIGNAL */

  // Signed sequence-number order, robust to wrap-around.
  function automatic logic seq_older(logic [31:0] a, logic [31:0] b);
    return $signed(a - b) < 0;
  endfunction

endpackage
