// hw/wrap/verilator-slow.f: hw/wrap/verilator.f's DUT with a command master
// that rests 256 core cycles after each command (CMD_GAP): a DUT slower than
// the cycle budget hw/wrap/dut-slow.json declares, for the test that the
// budget fires (tests/gate/other_duts.rs).
-F verilator.f
-GCMD_GAP=256
