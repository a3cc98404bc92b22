// hw/wrap/verilator.f: hw/verilator.f's flags for the wrapped DUT top
// pccx_wrap_top (read it with `verilator -F <repo>/hw/wrap/verilator.f ...`).
-Wall
--assert
--top-module pccx_wrap_top
// hw/rtl's sources in compile order (paths here are taken from this folder),
// then the wrapper's own, which use them.
-F ../rtl/manifest.txt
pccx_wrap_cdc_fifo.sv
pccx_wrap_top.sv
