//! `pccx-cosim`: random co-simulation campaigns (reference against DUT),
//! and the assembler / disassembler on the command line. The command line
//! itself is `harness/cli/` (`pccx_cosim::cli`), one file per subcommand.
//!
//! Exit status: 0 all seeds matched (or the tool did its job), 1 some seed
//! mismatched (`cvo-accuracy`: some function failed its bound), 2 usage or
//! infrastructure error (the message says which).

fn main() -> std::process::ExitCode {
    pccx_cosim::cli::main()
}
