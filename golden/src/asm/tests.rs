use super::*;

fn words(text: &str) -> Vec<u64> {
    parse_program(text)
        .unwrap_or_else(|e| panic!("{e}"))
        .items
        .into_iter()
        .map(|item| match item {
            Item::Instr(word) => word,
            other => panic!("{other:?}"),
        })
        .collect()
}

fn error(text: &str) -> AsmError {
    parse_program(text).expect_err("should not assemble")
}

/// The upstream smoke program (shared/vectors), written in assembly.
const SMOKE: &[(&str, u64)] = &[
    ("memset fmap[3] = (1, 1, 9)", 0x3030_0010_0010_0090),
    ("memset fmap[9] = (4, 4, 4)", 0x3090_0040_0040_0040),
    ("memcpy l2[100] <- host[0], shape=3", 0x2800_c800_0000_0006),
    (
        "gemm l2[512] <- l2[300], fmap=3, weight=1, lanes=4, w_scale",
        0x1010_0004_b080_4320,
    ),
    (
        "gemv l2[768] <- l2[400], fmap=9, weight=2, lanes=4, accm",
        0x0018_0006_4100_8920,
    ),
    (
        "cvo.reduce_sum l2[896] <- l2[768], len=64",
        0x4501_8000_e000_1000,
    ),
    ("memcpy host[0] <- l2[896], shape=3", 0x2400_0003_8000_0006),
];

#[test]
fn smoke_program_assembles_and_disassembles() {
    for &(line, word) in SMOKE {
        assert_eq!(words(line), [word], "{line}");
        assert_eq!(disasm(word), line);
    }
}

#[test]
fn every_option_disassembles() {
    for line in [
        "memset weight[5] = (4, 16, 0), rsvd=0x3",
        "memcpy l2[5] <- l2[9], shape=3, async, aux=0x12",
        "gemm l2[1] <- l2[2], fmap=3, weight=4, lanes=31, findemax, accm, w_scale, flags_rsvd=7, rsvd=5",
        "cvo.scale l2[1] <- l2[2], len=65535, sub_emax, recip_scale, accm, flags_rsvd=3, async",
        ".word 0x5000000000000000 ; illegal: opcode 0x5",
        ".word 0x4800000000000000 ; illegal: cvo_func 0x8",
        ".word 0x3800000000000000 ; illegal: memset dest_cache 2",
        ".word 0x2c00000000000000 ; illegal: memcpy host -> host",
    ] {
        let word = words(line)[0];
        assert_eq!(disasm(word), line);
    }
    for func in [
        "exp",
        "sqrt",
        "gelu",
        "sin",
        "cos",
        "reduce_sum",
        "scale",
        "recip",
    ] {
        let line = format!("cvo.{func} l2[0] <- l2[0], len=0");
        assert_eq!(disasm(words(&line)[0]), line);
    }
}

#[test]
fn syntax_is_lenient_where_harmless() {
    let text = "
        # a comment line
        MEMCPY L2[0x64] <- HOST[0] shape=0x3   ; no comma, upper case, hex
        memcpy l2[100] <- host[0_0], SHAPE=3, async,aux=1
        Cvo.Exp l2[1]<-l2[2],len=8,ACCM
        .WORD 0x2800_c800_0000_0006
    ";
    let w = words(text);
    assert_eq!(w[0], 0x2800_c800_0000_0006);
    assert_eq!(w[1], 0x2800_c800_0000_0006 | 1 << 7 | 1);
    assert_eq!(disasm(w[2]), "cvo.exp l2[1] <- l2[2], len=8, accm");
    assert_eq!(w[3], w[0]);
}

#[test]
fn directives() {
    let program = parse_program(".idle 20\n.write 0x08, 0x0\n.write 12, 0xffffffff\n").unwrap();
    assert_eq!(
        program.items,
        vec![
            Item::Idle(20),
            Item::RegWrite {
                offset: 8,
                value: 0
            },
            Item::RegWrite {
                offset: 12,
                value: u32::MAX
            }
        ]
    );
    assert_eq!(
        format_program(&program),
        ".idle 20\n.write 0x08, 0x0\n.write 0x0c, 0xffffffff\n"
    );
}

#[test]
fn empty_program() {
    assert_eq!(parse_program("").unwrap(), Program::default());
    assert_eq!(
        parse_program("\n  ; only\n# comments\n").unwrap(),
        Program::default()
    );
    assert_eq!(format_program(&Program::default()), "");
}

fn assert_error(text: &str, line: usize, column: usize, message: &str) {
    let e = error(text);
    assert_eq!(
        (e.line, e.column, e.message.as_str()),
        (line, column, message),
        "{text:?}"
    );
}

#[test]
fn error_bad_mnemonic() {
    assert_error(
        "memset fmap[0] = (1,1,1)\n\n  memcopy l2[0] <- l2[1]",
        3,
        3,
        "unknown mnemonic 'memcopy'",
    );
    assert_error(
        "cvo.tanh l2[0] <- l2[1], len=1",
        1,
        1,
        "unknown cvo function 'tanh'",
    );
    assert_error(
        "cvo l2[0] <- l2[1], len=1",
        1,
        1,
        "cvo needs a function: cvo.exp, cvo.scale, ...",
    );
    assert_error("[", 1, 1, "expected a mnemonic or directive, found '['");
}

#[test]
fn error_field_too_wide() {
    assert_error(
        "memcpy l2[200000] <- host[0], shape=3",
        1,
        11,
        "dest_addr 200000 does not fit in 17 bits",
    );
    assert_error(
        "\nmemset weight[64] = (0, 0, 0)",
        2,
        15,
        "dest_addr 64 does not fit in 6 bits",
    );
    assert_error(
        "memset fmap[1] = (0, 65536, 0)",
        1,
        22,
        "b_value 65536 does not fit in 16 bits",
    );
    assert_error(
        "gemv l2[0] <- l2[0], fmap=64, weight=0",
        1,
        27,
        "shape_ptr_addr 64 does not fit in 6 bits",
    );
    assert_error(
        "gemv l2[0] <- l2[0], fmap=0, weight=0, lanes=32",
        1,
        46,
        "parallel_lane 32 does not fit in 5 bits",
    );
    assert_error(
        "gemm l2[0] <- l2[0], fmap=0, weight=0, flags_rsvd=8",
        1,
        51,
        "flags_rsvd 8 does not fit in 3 bits",
    );
    assert_error(
        "cvo.sin l2[0] <- l2[0], len=65536",
        1,
        29,
        "length 65536 does not fit in 16 bits",
    );
    assert_error(
        "cvo.sin l2[0] <- l2[0], len=1, flags_rsvd=4",
        1,
        43,
        "flags_rsvd 4 does not fit in 2 bits",
    );
    assert_error(
        ".idle 0x100000000",
        1,
        7,
        "idle cycles 4294967296 does not fit in 32 bits",
    );
    assert_error(
        ".word 0x10000000000000000",
        1,
        7,
        "'0x10000000000000000' is not a number that fits in 64 bits",
    );
}

#[test]
fn error_missing_operand() {
    assert_error(
        "memcpy l2[100] <-",
        1,
        18,
        "missing source l2[..] or host[..]",
    );
    assert_error("memcpy l2[100] <- host[0]", 1, 26, "missing shape=");
    assert_error("gemv l2[1] <- l2[2], weight=1", 1, 30, "missing fmap=");
    assert_error(
        "cvo.exp l2[1] <- l2[2]   # len forgotten",
        1,
        23,
        "missing len=",
    );
    assert_error("memset fmap[1] = (1, 2)", 1, 23, "expected ',', found ')'");
    assert_error(
        ".write 0x08",
        1,
        12,
        "missing ',' before the register value",
    );
    assert_error(".idle", 1, 6, "missing idle cycles");
    assert_error(
        "memcpy l2[1] <- host[2], shape=",
        1,
        32,
        "missing shape_ptr_addr",
    );
    assert_error(
        "memcpy l2[1] <- host[2], shape=1,",
        1,
        34,
        "missing an option after ','",
    );
}

#[test]
fn error_other() {
    assert_error(
        "memcpy host[0] <- host[1], shape=1",
        1,
        19,
        "memcpy host -> host is illegal (write it as .word)",
    );
    assert_error(
        "gemv host[0] <- l2[1], fmap=1, weight=1",
        1,
        6,
        "the destination must be in l2",
    );
    assert_error(
        "memcpy l2[1] <- host[2], shape=1, lanes=3",
        1,
        35,
        "unknown option 'lanes' for memcpy",
    );
    assert_error(
        "memcpy l2[1] <- host[2], shape=1, shape=2",
        1,
        35,
        "option 'shape' given twice",
    );
    assert_error(
        "memcpy l2[1] <- host[2], shape=1, async=1",
        1,
        35,
        "option 'async' takes no value",
    );
    assert_error(
        "memcpy dram[1] <- host[2], shape=1",
        1,
        8,
        "expected destination l2[..] or host[..], found 'dram'",
    );
    assert_error(".word 5 6", 1, 9, "unexpected '6' after the statement");
    assert_error(
        "memset fmap[1] = (1, 2, 3) @",
        1,
        28,
        "unexpected character '@'",
    );
    assert_error(
        ".word 12ab",
        1,
        7,
        "'12ab' is not a number that fits in 64 bits",
    );
}

#[test]
fn error_display() {
    let e = error("\n\nfoo");
    assert_eq!(e.to_string(), "line 3, column 1: unknown mnemonic 'foo'");
}
