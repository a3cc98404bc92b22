// pccx_fifo: a synchronous FIFO of DEPTH entries (any DEPTH >= 1), used for
// the five engine instruction queues. Push and pop may happen in the same
// cycle; `full` and `empty` are registered-state functions, so a push is
// never accepted into a full FIFO even when a pop happens in that cycle.
module pccx_fifo #(
  parameter int WIDTH = 8,
  parameter int DEPTH = 8
) (
  input  logic             clk,
  input  logic             rst_n,
  input  logic             push,
  input  logic [WIDTH-1:0] push_data,
  input  logic             pop,
  output logic [WIDTH-1:0] head,
  output logic             empty,
  output logic             full
);
  localparam int PW = (DEPTH > 1) ? $clog2(DEPTH) : 1;

  logic [WIDTH-1:0] entries [DEPTH];
  logic [PW-1:0]    rd_ptr, wr_ptr;
  logic [PW:0]      count;

  assign head  = entries[rd_ptr];
  assign empty = (count == '0);
  assign full  = (count == (PW+1)'(DEPTH));

  function automatic logic [PW-1:0] next_ptr(logic [PW-1:0] p);
    return (p == PW'(DEPTH - 1)) ? '0 : p + PW'(1);
  endfunction

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      rd_ptr <= '0;
      wr_ptr <= '0;
      count  <= '0;
    end else begin
      if (push && !full) begin
        entries[wr_ptr] <= push_data;
        wr_ptr          <= next_ptr(wr_ptr);
      end
      if (pop && !empty) rd_ptr <= next_ptr(rd_ptr);
      count <= count + (PW+1)'(push && !full) - (PW+1)'(pop && !empty);
    end
  end
  // ---- assertions (pccx_assert_pkg.sv, docs/assertions.md) ----------------
  `PCCX_ASSERT_NEVER(FifoPushFull_A, push && full)
  `PCCX_ASSERT_NEVER(FifoPopEmpty_A, pop && empty)
  `PCCX_ASSERT(FifoCountRange_A, count <= (PW+1)'(DEPTH))
endmodule
