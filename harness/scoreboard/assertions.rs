//! The RTL's assertions by name (hw/rtl/pccx_assert_pkg.sv): what each states and which planted bug shows it firing.
//!
//! A failed assertion is a mismatch of kind `assertion` whose signature
//! field is the assertion's name, so the names form a closed set the
//! harness knows: a name the RTL reports that is missing here is an error,
//! never a new field made up on the fly. `tests/assertions.rs` checks this
//! list against the labels in hw/rtl and runs every `fired_by` mutant; the
//! table of docs/assertions.md is this list.

/// One assertion of hw/rtl.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Assertion {
    /// Its label in the RTL (the signature's field).
    pub name: &'static str,
    /// The modules it sits in.
    pub modules: &'static str,
    /// What it states, in words.
    pub states: &'static str,
    /// A planted bug, on `tiny`, whose first failure is this assertion.
    pub fired_by: FiredBy,
}

/// A planted bug that fires an assertion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FiredBy {
    /// A mutant of hw/rtl, `file:line:column:class` (docs/mutation.md),
    /// run by `mutate` from the schema.
    Mutant(&'static str),
    /// A hand-made change, built alone, for an assertion no mutant of the
    /// site list fires first: `original` at (`line`, `column`) of `file`
    /// replaced by `replacement`.
    Edit {
        file: &'static str,
        line: usize,
        column: usize,
        original: &'static str,
        replacement: &'static str,
    },
}

impl std::fmt::Display for FiredBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FiredBy::Mutant(id) => write!(f, "mutant `{id}`"),
            FiredBy::Edit {
                file,
                line,
                original,
                replacement,
                ..
            } => write!(f, "edit `{file}:{line}`: `{original}` -> `{replacement}`"),
        }
    }
}

const fn a(
    name: &'static str,
    modules: &'static str,
    states: &'static str,
    fired_by: FiredBy,
) -> Assertion {
    Assertion {
        name,
        modules,
        states,
        fired_by,
    }
}

const fn edit(
    file: &'static str,
    line: usize,
    column: usize,
    original: &'static str,
    replacement: &'static str,
) -> FiredBy {
    FiredBy::Edit {
        file,
        line,
        column,
        original,
        replacement,
    }
}

use FiredBy::Mutant;

/// Every assertion of hw/rtl, in the order of docs/assertions.md.
#[rustfmt::skip]
pub const ASSERTIONS: &[Assertion] = &[
    a("AxilBHeld_A", "pccx_axil_slave", "BVALID, once raised, stays raised with BRESP unchanged until BREADY",
      edit("pccx_axil_slave.sv", 83, 22, "s_bready", "1'b1")),
    a("AxilRHeld_A", "pccx_axil_slave", "RVALID, once raised, stays raised with RDATA and RRESP unchanged until RREADY",
      edit("pccx_axil_slave.sv", 97, 11, "s_rready", "1'b1")),
    a("AxilLatchHeld_A", "pccx_axil_slave", "a latch request towards the scheduler stays raised, its word unchanged, until taken",
      edit("pccx_axil_slave.sv", 82, 22, "lat_ready", "1'b1")),
    a("AxilWStateLegal_A", "pccx_axil_slave", "the write channel's state is one of IDLE, LATCH, RESP",
      edit("pccx_axil_slave.sv", 83, 42, "W_IDLE", "wstate_e'(2'd3)")),
    a("FifoPushFull_A", "pccx_fifo", "no push into a full engine FIFO",
      Mutant("pccx_scheduler.sv:122:36:broken-conditional")),
    a("FifoPopEmpty_A", "pccx_fifo", "no pop from an empty engine FIFO",
      edit("pccx_scheduler.sv", 137, 27, "!fifo_empty[e]", "1'b1")),
    a("FifoCountRange_A", "pccx_fifo", "the entry count never exceeds the depth",
      Mutant("pccx_fifo.sv:43:22:operator-swap")),
    a("SchedLatchFreeSlot_A", "pccx_scheduler", "a legal instruction is latched into a free slot",
      Mutant("pccx_fifo.sv:33:8:broken-conditional")),
    a("SchedRetireInFlight_A", "pccx_scheduler", "only in-flight slots retire",
      Mutant("pccx_cvo_engine.sv:221:20:broken-conditional")),
    a("SchedHeadInFlight_A", "pccx_scheduler", "every FIFO head names an in-flight slot",
      Mutant("pccx_fifo.sv:38:10:broken-conditional")),
    a("SchedHeadRowInFlight_A", "pccx_scheduler", "a FIFO head's dependency row names in-flight slots only",
      Mutant("pccx_scheduler.sv:209:8:broken-conditional")),
    a("EngStartIdle_A", "every engine", "a start comes only while the engine is idle",
      edit("pccx_scheduler.sv", 137, 45, "eng_rsp[e].idle", "1'b1")),
    a("EngBusyAfterStart_A", "every engine", "the engine is busy in the cycle after a start",
      Mutant("pccx_memset_engine.sv:37:8:broken-conditional")),
    a("EngRetireBusy_A", "every engine", "a retire comes from a busy engine",
      edit("pccx_memset_engine.sv", 26, 36, "2'd1", "2'd0")),
    a("EngRetirePulse_A", "every engine", "a retire lasts one cycle",
      edit("pccx_mem_engine.sv", 175, 28, "S_IDLE", "S_RETIRE")),
    a("EngTagOfStart_A", "every engine", "the retire's sequence number and slot are the started instruction's",
      edit("pccx_memset_engine.sv", 47, 21, "req.seq", "ret_seq")),
    a("EngTagStable_A", "every engine", "the sequence number and slot hold while the engine is busy",
      edit("pccx_mem_engine.sv", 175, 19, "state <= S_IDLE;", "begin state <= S_IDLE; ret_seq <= ret_seq + 32'd1; end")),
    a("L2ReadInRange_A", "MEM, GEMV, GEMM, CVO engines", "every L2 read lies inside L2",
      Mutant("pccx_mem_engine.sv:164:34:off-by-one-constant")),
    a("L2WriteInRange_A", "MEM, GEMV, GEMM, CVO engines", "every L2 write lies inside L2",
      Mutant("pccx_mem_engine.sv:146:19:broken-conditional")),
    a("L2WriteWhileBusy_A", "MEM, GEMV, GEMM, CVO engines", "an engine writes L2 only while busy (no write after its retire)",
      Mutant("pccx_mem_engine.sv:80:48:broken-conditional")),
    a("MemsetPhaseLegal_A", "pccx_memset_engine", "the MEMSET phase counter holds 0, 1 or 2",
      Mutant("pccx_memset_engine.sv:43:41:operator-swap")),
    a("MemStateLegal_A", "pccx_mem_engine", "the MEM engine's state is a named state",
      edit("pccx_mem_engine.sv", 175, 28, "S_IDLE", "state_e'(4'd15)")),
    a("MemAcpReqHeld_A", "pccx_mem_engine", "an ACP request stays raised, its payload unchanged, until taken",
      Mutant("pccx_mem_engine.sv:93:35:operator-swap")),
    a("GemvStateLegal_A", "pccx_gemv_engine", "the GEMV engine's state is a named state",
      edit("pccx_gemv_engine.sv", 282, 28, "S_IDLE", "state_e'(4'd15)")),
    a("GemmStateLegal_A", "pccx_gemm_engine", "the GEMM engine's state is a named state",
      edit("pccx_gemm_engine.sv", 321, 28, "S_IDLE", "state_e'(4'd15)")),
    a("CvoStateLegal_A", "pccx_cvo_engine", "the CVO engine's state is a named state",
      edit("pccx_cvo_engine.sv", 271, 29, "S_IDLE", "state_e'(4'd15)")),
];

/// The assertion named `name`.
pub fn by_name(name: &str) -> Option<&'static Assertion> {
    ASSERTIONS.iter().find(|a| a.name == name)
}

/// The table of docs/assertions.md: assertion, where, what it states,
/// what fires it.
pub fn markdown_table() -> String {
    let mut out =
        String::from("| assertion | in | states | fired by (on tiny) |\n|---|---|---|---|\n");
    for a in ASSERTIONS {
        out += &format!(
            "| `{}` | {} | {} | {} |\n",
            a.name, a.modules, a.states, a.fired_by
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The assertion labels written in hw/rtl: the first argument of every
    /// `PCCX_ASSERT* macro use, in the modules and in the header's
    /// composite macros (not the header's own definitions).
    fn labels_in_rtl() -> BTreeSet<String> {
        let rtl = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("hw/rtl");
        let mut out = BTreeSet::new();
        for entry in std::fs::read_dir(&rtl).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "sv") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (at, _) in text.match_indices("`PCCX_ASSERT") {
                let rest = &text[at..];
                let Some(open) = rest.find('(') else { continue };
                let name: String = rest[open + 1..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                // `define PCCX_ASSERT(NAME, ...) and its kin: parameters.
                let macro_name = &rest[1..open];
                if name != "NAME" && name != "VALID" && !macro_name.contains(' ') {
                    out.insert(name);
                }
            }
        }
        out
    }

    #[test]
    fn the_list_is_the_rtls_assertions() {
        let listed: BTreeSet<String> = ASSERTIONS.iter().map(|a| a.name.to_string()).collect();
        assert_eq!(listed.len(), ASSERTIONS.len(), "a name listed twice");
        let in_rtl = labels_in_rtl();
        assert!(in_rtl.len() > 20, "{in_rtl:?}");
        assert_eq!(
            listed, in_rtl,
            "harness/scoreboard/assertions.rs and the labels in hw/rtl differ"
        );
    }

    /// docs/assertions.md holds the table between its markers
    /// (`PCCX_BLESS=1` writes it there).
    #[test]
    fn the_docs_table_is_this_list() {
        const BEGIN: &str = "<!-- table: harness/scoreboard/assertions.rs -->\n";
        const END: &str = "<!-- end of table -->";
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/assertions.md");
        let text = std::fs::read_to_string(&path).unwrap();
        let (head, rest) = text.split_once(BEGIN).expect("the table's begin marker");
        let (table, tail) = rest.split_once(END).expect("the table's end marker");
        if std::env::var_os("PCCX_BLESS").is_some() {
            let new = format!("{head}{BEGIN}{}{END}{tail}", markdown_table());
            std::fs::write(&path, new).unwrap();
        } else {
            assert_eq!(
                table,
                markdown_table(),
                "run with PCCX_BLESS=1 to rewrite it"
            );
        }
    }

    #[test]
    fn names_end_in_a_and_every_entry_says_what_it_states() {
        for a in ASSERTIONS {
            assert!(a.name.ends_with("_A"), "{}", a.name);
            assert!(!a.states.is_empty() && !a.modules.is_empty(), "{}", a.name);
            assert_eq!(by_name(a.name), Some(a));
        }
        assert_eq!(by_name("NoSuch_A"), None);
    }
}
