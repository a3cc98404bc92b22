// hw/verilator.f: the part of the Verilator command line that every use of
// hw/rtl shares. Read it with `verilator -F <repo>/hw/verilator.f ...`:
// under -F (capital), relative paths in it are taken from this file's folder,
// so it works from any working directory and in a copy of hw/ (a mutant's
// build directory). The callers and what each adds (docs/build.md):
//
//   build.rs                       --cc --output-split 5000 --prefix -Mdir,
//                                  coverage and trace flags, -G per config
//   harness/tools/mutate/build.rs  --cc --prefix -Mdir, -Wno-fatal -Wno-lint
//                                  -Wno-style (a mutant may warn), -G
//   scripts/lint.sh                --lint-only, -G per config
//
// Every warning on: a lint warning fails the model build and the lint.
-Wall
// Assertions (hw/rtl/pccx_assert_pkg.sv) are compiled into every model.
--assert
--top-module pccx_top
// The sources, in compile order: the list in rtl/manifest.txt (`#` comments
// there are Verilator's too).
-F rtl/manifest.txt
