//! The public pccx project's own smoke program (shared/vectors): our decoder
//! must read every word as that project's generator meant it.

use pccx_golden::asm::{disasm, parse_program, Item};
use pccx_golden::isa::{decode, fields, op_name, Decoded};
use std::path::PathBuf;

fn vectors_path() -> PathBuf {
    match std::env::var_os("PCCX_VECTORS") {
        Some(path) => PathBuf::from(path),
        // shared/ sits beside the repository root.
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/vectors/upstream-smoke-program.jsonl"),
    }
}

fn parse_word(text: &str) -> u64 {
    let hex = text.strip_prefix("0x").expect("word is 0x hex");
    u64::from_str_radix(hex, 16).expect("word is 0x hex")
}

#[test]
fn upstream_smoke_program() {
    let path = vectors_path();
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!(
            "notice: {} is absent; upstream vector test skipped",
            path.display()
        );
        return;
    };
    let mut checked = 0;
    for (index, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let vector: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}", index + 1));
        let label = vector["label"].as_str().unwrap_or("?");
        let word = parse_word(vector["word"].as_str().expect("word"));
        assert_eq!(op_name(word), vector["op"].as_str().expect("op"), "{label}");
        let ours = fields(word);
        for (name, value) in vector["fields"].as_object().expect("fields") {
            let found = ours.iter().find(|(n, _)| n == name).map(|&(_, v)| v);
            assert_eq!(found, value.as_u64(), "{label}: field {name}");
        }
        let Decoded::Legal(instr) = decode(word) else {
            panic!("{label}: {word:#x} does not decode as legal");
        };
        assert_eq!(instr.encode(), word, "{label}: encode round trip");
        let program = parse_program(&disasm(word)).unwrap();
        assert_eq!(
            program.items,
            [Item::Instr(word)],
            "{label}: assembler round trip"
        );
        checked += 1;
    }
    assert!(checked > 0, "{} holds no vectors", path.display());
}
