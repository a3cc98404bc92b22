// hw/wrap/verilator-streams.f: hw/wrap's DUT with host memory as two
// streams, top pccx_wrap_stream_top (hw/wrap/dut-streams.json;
// docs/dut-contract.md, "Host memory by streams").
-Wall
--assert
--top-module pccx_wrap_stream_top
-F ../rtl/manifest.txt
pccx_wrap_cdc_fifo.sv
pccx_wrap_top.sv
pccx_wrap_stream_top.sv
