// hw/approx/sources.f: what hw/approx/verilator.f and verilator-bug.f share:
// hw/rtl's pccx_top with its uCVO core replaced by this folder's, whose EXP
// is approximate by design (docs/dut-contract.md, "Numerics profiles").
// hw/rtl is read unchanged. The approximation's size is each caller's
// PCCX_APPROX_EXP_ULP.
-Wall
--assert
--top-module pccx_top
// hw/rtl's sources in its manifest's order (../rtl/manifest.txt), but
// pccx_ucvo_core.sv: this folder's takes its place.
../rtl/pccx_assert_pkg.sv
../rtl/pccx_pkg.sv
../rtl/pccx_bf16_pkg.sv
../rtl/pccx_cvo_rom_pkg.sv
../rtl/pccx_cvo_pkg.sv
../rtl/pccx_fifo.sv
../rtl/pccx_axil_slave.sv
../rtl/pccx_scheduler.sv
../rtl/pccx_status.sv
../rtl/pccx_l2.sv
../rtl/pccx_mem_engine.sv
../rtl/pccx_memset_engine.sv
../rtl/pccx_mat_writeback.sv
../rtl/pccx_gemv_engine.sv
../rtl/pccx_gemm_engine.sv
pccx_ucvo_core.sv
../rtl/pccx_cvo_engine.sv
../rtl/pccx_top.sv
