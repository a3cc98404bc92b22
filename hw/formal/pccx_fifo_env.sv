// pccx_fifo_env: pccx_fifo's formal environment (docs/formal.md): the
// trace starts in reset, the caller keeps its side of the contract (named
// assumptions, each dropped in turn by scripts/formal.sh to show it is
// needed), and a cover of what makes each assertion bite.
module pccx_fifo_env #(
  parameter int DEPTH = 2
) (
  input logic       clk,
  input logic       rst_n,
  input logic       push,
  input logic [7:0] push_data,
  input logic       pop
);
  logic [7:0] head;
  logic       empty, full;

  pccx_fifo #(.WIDTH(8), .DEPTH(DEPTH)) dut (.*);

  // The trace starts in reset: rst_n is low in the first cycle.
  logic started = 1'b0;
  always @(posedge clk) started <= 1'b1;
  always @* if (!started) assume (!rst_n);

  always @(posedge clk) if (rst_n) begin
    // The scheduler pushes only into a FIFO with room and pops only a
    // non-empty one (FifoPushFull_A and FifoPopEmpty_A state it for the
    // simulation, where the caller is the real one).
`ifndef DROP_FifoCallerPushRoom_M
    FifoCallerPushRoom_M: assume (!(push && full));
`endif
`ifndef DROP_FifoCallerPopData_M
    FifoCallerPopData_M: assume (!(pop && empty));
`endif
    // What the assertions are about: a full FIFO (FifoPushFull_A,
    // FifoCountRange_A at its bound), an empty one (FifoPopEmpty_A), and
    // both ends moving in one cycle.
    FifoFull_C: cover (full);
    FifoEmptyAfterData_C: cover (empty && $past(!empty));
    FifoPushPop_C: cover ($past(push && pop && !empty) && !empty);
  end
endmodule
