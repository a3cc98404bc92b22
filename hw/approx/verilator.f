// hw/approx/verilator.f: the test-only DUT hw/approx/dut.json
// (docs/dut-contract.md, "Numerics profiles"): sources.f's DUT with an EXP
// 1 ULP from hw/rtl's, the error its profile (numerics.json) allows.
-F sources.f
+define+PCCX_APPROX_EXP_ULP=1
