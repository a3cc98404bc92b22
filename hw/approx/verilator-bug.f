// hw/approx/verilator-bug.f: the planted bug of the test-only DUT,
// hw/approx/dut-bug.json (docs/dut-contract.md, "Numerics profiles"):
// sources.f's DUT with an EXP that errs by 2 ULP, past the 1 ULP its
// profile (numerics.json) allows.
-F sources.f
+define+PCCX_APPROX_EXP_ULP=2
