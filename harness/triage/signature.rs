//! Failure signatures: what kind of bug a mismatch looks like, without the
//! particulars (sequence number, address, values) that differ from seed to
//! seed. A campaign groups its failures by signature, and the shrinker keeps
//! a case only while it still fails with the signature it started with.
//!
//! A signature is (check, engine, field): the check that fired, the engine
//! the instruction's opcode goes to (`decoder` for an illegal word, `none`
//! when the mismatch names no instruction), and which part of what the
//! check compares differed ("data", "mask", "missing", "status.ERR").

use crate::scoreboard::{CheckKind, Field, Mismatch, Unit};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Signature {
    pub kind: CheckKind,
    /// The engine the instruction goes to (`decoder` for an illegal word,
    /// `none` when the mismatch names no instruction).
    pub engine: Unit,
    pub field: Field,
}

impl Signature {
    /// Computed from the mismatch's typed difference, never from its text.
    pub fn of(m: &Mismatch) -> Signature {
        Signature {
            kind: m.kind,
            engine: m.unit(),
            field: m.difference.field(),
        }
    }
}

impl Signature {
    /// The signature as files hold it.
    pub fn record(&self) -> SignatureRecord {
        SignatureRecord {
            text: self.to_string(),
            kind: self.kind.name().to_string(),
            engine: self.engine.name().to_string(),
            field: self.field.to_string(),
        }
    }
}

/// A signature as a file holds it: its text and its three parts, rendered.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SignatureRecord {
    pub text: String,
    pub kind: String,
    pub engine: String,
    pub field: String,
}

impl fmt::Display for SignatureRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.kind, self.engine, self.field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::faults::{Fault, Faulty};
    use crate::scoreboard::{run_case, Difference, GroupDiff};
    use crate::stimulus::{GenOptions, TestCase};
    use pccx_golden::asm::parse_program;
    use pccx_golden::model::reg;
    use pccx_golden::{Golden, GoldenConfig};

    const L2_WORDS: u32 = 4096;

    fn golden() -> Golden {
        Golden::new(GoldenConfig { l2_words: L2_WORDS })
    }

    /// A MEMSET (seq 0), a host -> L2 copy (1), an L2 -> host copy (2), an
    /// illegal word (3), a `.write` to the read-only 0x0C.
    fn case() -> TestCase {
        let program = parse_program(
            "memset fmap[1] = (1, 2, 8)\n\
             memcpy l2[16] <- host[256], shape=1\n\
             memcpy host[512] <- l2[16], shape=1\n\
             .word 0x5000000000000001\n\
             .write 0x0c, 0x1\n",
        )
        .unwrap();
        TestCase::directed(3, &GenOptions::new(0, L2_WORDS, 4), program)
    }

    fn signature(fault: Fault) -> String {
        let mut dut = Faulty::new(golden(), fault);
        let outcome = run_case(&case(), &mut golden(), &mut dut).unwrap();
        let m = outcome
            .first_mismatch
            .unwrap_or_else(|| panic!("{fault:?} unnoticed"));
        Signature::of(&m).to_string()
    }

    #[test]
    fn each_fault_has_the_signature_of_what_it_broke() {
        for (fault, want) in [
            (Fault::L2Data { nth: 1, bit: 5 }, "l2-writes/MEM/data"),
            (Fault::L2Mask { nth: 0, xor: 0x80 }, "l2-writes/MEM/mask"),
            (Fault::DropL2 { nth: 1 }, "l2-writes/MEM/missing"),
            (Fault::ExtraL2 { seq: 0, addr: 9 }, "l2-writes/MEMSET/extra"),
            (Fault::HostData { nth: 0, bit: 1 }, "host-writes/MEM/data"),
            (Fault::DropHost { nth: 0 }, "host-writes/MEM/missing"),
            (
                Fault::ShapeValue { nth: 0, xor: 1 },
                "shape-writes/MEMSET/value",
            ),
            (
                Fault::ExtraEMax { seq: 2, value: 1 },
                "emax-writes/MEM/extra",
            ),
            (
                Fault::RetireErr { nth: 3, xor: 1 },
                "retire-err/decoder/err",
            ),
            (
                Fault::RetireOpcode { nth: 0, xor: 1 },
                "retire-opcode/MEMSET/opcode",
            ),
            (Fault::DropRetire { nth: 2 }, "missing-retire/MEM/missing"),
            (
                Fault::DuplicateRetire {
                    nth: 1,
                    later: false,
                },
                "extra-retire/MEM/extra",
            ),
            (Fault::LatchWord { nth: 1, xor: 2 }, "latch/MEM/word"),
            (
                Fault::DuplicateLatch {
                    nth: 1,
                    later: true,
                },
                "latch/MEM/duplicate",
            ),
            (Fault::LateL2 { nth: 0 }, "write-after-retire/MEM/late"),
            (Fault::AxiResp { nth: 0 }, "reg-response/MEMSET/issue"),
            (Fault::AxiResp { nth: 8 }, "reg-response/none/write"),
            (Fault::CorruptL2 { addr: 7 }, "final-l2/none/data"),
            (Fault::StatusBit { bit: 2 }, "final-status/none/status.ERR"),
            (
                Fault::StatusBit { bit: 5 },
                "final-status/none/status.err_code",
            ),
            (
                Fault::StatusBit { bit: 9 },
                "final-status/none/status.reserved",
            ),
            (
                Fault::RetiredCount { delta: 1 },
                "final-retired-count/none/count",
            ),
        ] {
            assert_eq!(signature(fault), want, "{fault:?}");
        }
    }

    /// A GEMV with findemax (seq 2) and a GEMM (seq 3), 16 x 8 each.
    fn mat_case() -> TestCase {
        let program = parse_program(
            "memset fmap[1] = (1, 16, 1)\n\
             memset weight[2] = (16, 8, 1)\n\
             gemv l2[100] <- l2[0], fmap=1, weight=2, findemax\n\
             gemm l2[200] <- l2[0], fmap=1, weight=2, w_scale\n",
        )
        .unwrap();
        TestCase::directed(4, &GenOptions::new(0, L2_WORDS, 4), program)
    }

    #[test]
    fn each_gemv_gemm_fault_has_its_signature() {
        for (fault, want) in [
            (
                Fault::StreamBeats { nth: 0, delta: 1 },
                "weight-stream/GEMV/beats",
            ),
            (
                Fault::StreamBeats { nth: 1, delta: -1 },
                "weight-stream/GEMM/beats",
            ),
            (
                Fault::DropStreamRead { nth: 1 },
                "weight-stream/GEMM/missing",
            ),
            (Fault::MatData { nth: 1, bit: 5 }, "l2-writes/GEMM/data"),
            (Fault::DropEMax { nth: 0 }, "emax-writes/GEMV/missing"),
            (
                Fault::EMaxValue { nth: 0, xor: 1 },
                "emax-writes/GEMV/value",
            ),
            (
                Fault::BeatsConsumed {
                    stream: 1,
                    delta: 1,
                },
                "final-weight-stream/none/vector",
            ),
            (
                Fault::BeatsConsumed {
                    stream: 0,
                    delta: -1,
                },
                "final-weight-stream/none/matrix",
            ),
        ] {
            let mut dut = Faulty::new(golden(), fault);
            let outcome = run_case(&mat_case(), &mut golden(), &mut dut).unwrap();
            let m = outcome
                .first_mismatch
                .unwrap_or_else(|| panic!("{fault:?} unnoticed"));
            assert_eq!(Signature::of(&m).to_string(), want, "{fault:?}:\n{m}");
        }
    }

    #[test]
    fn several_status_fields_are_joined() {
        let bits = reg::STATUS_DONE | reg::STATUS_ERR;
        assert_eq!(Field::Status(bits).to_string(), "status.DONE+ERR");
        assert_eq!(Field::StatusResp.to_string(), "status.resp");
        let count = Difference::L2Write {
            addr: 16,
            diff: GroupDiff::Count {
                reference: 1,
                dut: 2,
            },
            totals: (1, 2),
        };
        assert_eq!(count.field(), Field::Count);
    }

    #[test]
    fn engines_follow_the_opcode() {
        let engine_of = |w| Unit::of(w).name();
        assert_eq!(engine_of(0x3030001000100090), "MEMSET");
        assert_eq!(engine_of(0x2800c80000000006), "MEM");
        assert_eq!(engine_of(0x10100004b0804320), "GEMM");
        assert_eq!(engine_of(0x0010_0004_b080_4320), "GEMV");
        assert_eq!(engine_of(0x45018000e0001000), "CVO");
        assert_eq!(engine_of(0x5000000000000000), "decoder");
        assert_eq!(engine_of(0x2c00000000000000), "decoder");
    }
}
