// pccx_mem_engine: the MEM dispatcher, MEMCPY in its three directions
// (docs/semantics.md section 5).
//
//   host -> L2 : reads are requested on the ACP port as fast as it accepts
//                them; each response is written to L2 in the next cycle.
//   L2 -> host : per word, one L2 read cycle, then an ACP write request held
//                until accepted; retires when every write is acknowledged.
//   L2 -> L2   : per word, one read cycle and one write cycle, ascending when
//                dest <= src and descending otherwise, which gives memmove
//                semantics (no word is overwritten before it has been read).
//
// Length, range checks and errors are evaluated in the start cycle from the
// fmap entry; an error or an empty copy retires in the next cycle.
// EXTRA_CYCLE = 1 spends one more cycle before every retire (a deliberate
// timing bug that only the timing tests build).
module pccx_mem_engine
  import pccx_pkg::*;
#(
  parameter int L2_WORDS = 114688,
  parameter bit EXTRA_CYCLE = 1'b0
) (
  input  logic          clk,
  input  logic          rst_n,
  /* verilator lint_off UNUSEDSIGNAL */  // the opcode is MEMCPY by routing
  input  eng_req_t      req,
  /* verilator lint_on UNUSEDSIGNAL */
  output eng_rsp_t      rsp,
  input  shape_t        fmap,             // fmap[shape_ptr_addr]
  // L2 port
  output l2_req_t       l2_req,
  input  l2_rsp_t       l2_rsp,
  // ACP host port: every request gets exactly one response, in order
  output logic          acp_req_valid,
  input  logic          acp_req_ready,
  output logic          acp_req_write,
  output word_addr_t    acp_req_addr,
  output logic [127:0]  acp_req_wdata,
  input  logic          acp_rsp_valid,
  output logic          acp_rsp_ready,
  input  logic [127:0]  acp_rsp_rdata
);
  typedef enum logic [3:0] {
    S_IDLE, S_H2L, S_L2H_READ, S_L2H_REQ, S_L2H_ACKS, S_L2L_READ, S_L2L_WRITE, S_SKEW, S_RETIRE
  } state_e;

  // The state that ends an instruction.
  localparam state_e S_DONE = EXTRA_CYCLE ? S_SKEW : S_RETIRE;

  state_e      state; /*verilator coverage_off*/
  logic [31:0] ret_seq;
  slot_t       ret_slot; /*verilator coverage_on*/ // no toggle coverage: = rsp.ret_*, counted there (constant or unreachable high bits)
  /* verilator lint_off UNUSEDSIGNAL */  // aux_addr is ignored, shape_ptr_addr
  memcpy_body_t s_ins;                    // and async are the scheduler's
  /* verilator lint_on UNUSEDSIGNAL */
  word_addr_t  src, dst;
  logic [17:0] len;        // <= 2^17 once the range checks passed
  logic [17:0] n_req;      // requests accepted / words read
  logic [17:0] n_rsp;      // responses received
  logic        descending; /*verilator coverage_off*/ // L2 -> L2 with dest > src
  logic [3:0]  err; /*verilator coverage_on*/ // no toggle coverage: = rsp.ret_*, counted there (constant or unreachable high bits)
  // host -> L2: the response captured last cycle, written this cycle
  logic        wbuf_valid;
  word_addr_t  wbuf_addr;
  logic [127:0] wbuf_data;

  assign rsp.idle      = (state == S_IDLE);
  assign rsp.ret_valid = (state == S_RETIRE);
  assign rsp.ret_seq   = ret_seq;
  assign rsp.ret_op    = OP_MEMCPY;
  assign rsp.ret_err   = err;
  assign rsp.ret_slot  = ret_slot;
  assign s_ins         = req.word.body.memcpy;

  // Index of the word being moved in the L2 -> L2 copy: an offset, not an address.
  logic [16:0] l2l_index;
  assign l2l_index = 17'(descending ? (len - 18'd1 - n_req) : n_req);

  assign l2_req.rd_en   = (state == S_L2H_READ) || (state == S_L2L_READ);
  assign l2_req.rd_addr = src + ((state == S_L2L_READ) ? l2l_index : n_req[16:0]);
  assign l2_req.wr_en   = wbuf_valid || (state == S_L2L_WRITE);
  assign l2_req.wr_addr = wbuf_valid ? wbuf_addr : dst + l2l_index;
  assign l2_req.wr_data = wbuf_valid ? wbuf_data : l2_rsp.rd_data;
  assign l2_req.wr_mask = 8'hFF;

  assign acp_req_valid = ((state == S_H2L) && (n_req < len)) || (state == S_L2H_REQ);
  assign acp_req_write = (state == S_L2H_REQ);
  assign acp_req_addr  = (state == S_L2H_REQ) ? dst + n_req[16:0] : src + n_req[16:0];
  assign acp_req_wdata = l2_rsp.rd_data;
  assign acp_rsp_ready = (state == S_H2L) || (state == S_L2H_READ)
                      || (state == S_L2H_REQ) || (state == S_L2H_ACKS);

  logic req_fire, rsp_fire;
  assign req_fire = acp_req_valid && acp_req_ready;
  assign rsp_fire = acp_rsp_valid && acp_rsp_ready;

  // Start-cycle evaluation: length from the fmap entry, then the range checks
  // (source first, then destination).
  logic [63:0] s_len;
  logic [63:0] s_src_end, s_dst_end;
  logic        s_from_host, s_to_host;
  logic [3:0]  s_err;
  always_comb begin
    s_from_host = s_ins.from_device;
    s_to_host   = s_ins.to_device;
    s_len       = memcpy_words(fmap);
    s_src_end   = 64'(s_ins.src_addr) + s_len;
    s_dst_end   = 64'(s_ins.dest_addr) + s_len;
    s_err       = ERR_OK;
    if (s_len != 64'd0) begin
      if (s_src_end > (s_from_host ? 64'(HOST_WORDS) : 64'(L2_WORDS)))
        s_err = s_from_host ? ERR_HOST_RANGE : ERR_L2_RANGE;
      else if (s_dst_end > (s_to_host ? 64'(HOST_WORDS) : 64'(L2_WORDS)))
        s_err = s_to_host ? ERR_HOST_RANGE : ERR_L2_RANGE;
    end
  end

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      state      <= S_IDLE;
      src        <= '0;
      dst        <= '0;
      len        <= '0;
      n_req      <= '0;
      n_rsp      <= '0;
      descending <= 1'b0;
      err        <= ERR_OK;
      ret_seq    <= '0;
      ret_slot   <= '0;
      wbuf_valid <= 1'b0;
      wbuf_addr  <= '0;
      wbuf_data  <= '0;
    end else begin
      wbuf_valid <= 1'b0;
      case (state)
        S_IDLE: if (req.start) begin
          ret_seq    <= req.seq;
          ret_slot   <= req.slot;
          src        <= s_ins.src_addr;
          dst        <= s_ins.dest_addr;
          len        <= s_len[17:0];
          n_req      <= '0;
          n_rsp      <= '0;
          descending <= s_ins.dest_addr > s_ins.src_addr;
          err        <= s_err;
          if (s_err != ERR_OK || s_len == 64'd0) state <= S_DONE;
          else if (s_from_host)                  state <= S_H2L;
          else if (s_to_host)                    state <= S_L2H_READ;
          else                                   state <= S_L2L_READ;
        end
        S_H2L: begin
          if (req_fire) n_req <= n_req + 18'd1;
          if (rsp_fire) begin
            wbuf_valid <= 1'b1;
            wbuf_addr  <= dst + n_rsp[16:0];
            wbuf_data  <= acp_rsp_rdata;
            n_rsp      <= n_rsp + 18'd1;
            if (n_rsp == len - 18'd1) state <= S_DONE;
          end
        end
        S_L2H_READ, S_L2H_REQ, S_L2H_ACKS: begin
          if (rsp_fire) n_rsp <= n_rsp + 18'd1;
          if (state == S_L2H_READ) state <= S_L2H_REQ;
          if (state == S_L2H_REQ && req_fire) begin
            n_req <= n_req + 18'd1;
            state <= (n_req == len - 18'd1) ? S_L2H_ACKS : S_L2H_READ;
          end
          if (state == S_L2H_ACKS && (n_rsp + 18'(rsp_fire) == len)) state <= S_DONE;
        end
        S_L2L_READ: state <= S_L2L_WRITE;
        S_L2L_WRITE: begin
          n_req <= n_req + 18'd1;
          state <= (n_req == len - 18'd1) ? S_DONE : S_L2L_READ;
        end /*verilator coverage_off*/
        S_SKEW:   state <= S_RETIRE; /*verilator coverage_on*/ // no coverage: entered only with EXTRA_CYCLE = 1 (skew_* test configs)
        S_RETIRE: state <= S_IDLE; /*verilator coverage_off*/
        default:  state <= S_IDLE; /*verilator coverage_on*/ // no coverage: unreachable, state is only ever reset or assigned a named state
      endcase
    end
  end
  // ---- assertions (pccx_assert_pkg.sv, docs/assertions.md) ----------------
  `PCCX_ASSERT(MemStateLegal_A, state <= S_RETIRE)
  `PCCX_ASSERT_HANDSHAKE(MemAcpReqHeld_A, acp_req_valid, acp_req_ready, {acp_req_write, acp_req_addr, acp_req_wdata})
  `PCCX_ASSERT_ENGINE
  `PCCX_ASSERT_L2_PORT
endmodule
