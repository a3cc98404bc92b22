//! The `pccx-cosim` binary: disasm, asm, gen, campaigns and exit codes.

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn cosim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pccx-cosim"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// A file in a directory of this test's own (tests run in parallel).
fn temp_file(test: &str, name: &str, contents: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pccx-cosim-cli-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

fn json_lines(o: &Output) -> Vec<Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// (word, op, fields).
type Vector = (&'static str, &'static str, &'static [(&'static str, u64)]);

/// The words of shared/vectors/upstream-smoke-program.jsonl with the fields
/// the upstream generator put in (it leaves reserved fields out).
const UPSTREAM: &[Vector] = &[
    (
        "0x3030001000100090",
        "MEMSET",
        &[
            ("a_value", 1),
            ("b_value", 1),
            ("c_value", 9),
            ("dest_addr", 3),
            ("dest_cache", 0),
        ],
    ),
    (
        "0x2800c80000000006",
        "MEMCPY",
        &[
            ("async", 0),
            ("aux_addr", 0),
            ("dest_addr", 100),
            ("from_device", 1),
            ("shape_ptr_addr", 3),
            ("src_addr", 0),
            ("to_device", 0),
        ],
    ),
    (
        "0x10100004b0804320",
        "GEMM",
        &[
            ("dest_reg", 512),
            ("flags", 8),
            ("parallel_lane", 4),
            ("shape_ptr_addr", 3),
            ("size_ptr_addr", 1),
            ("src_addr", 300),
        ],
    ),
    (
        "0x45018000e0001000",
        "CVO",
        &[
            ("async", 0),
            ("cvo_func", 5),
            ("dst_addr", 896),
            ("flags", 0),
            ("length", 64),
            ("src_addr", 768),
        ],
    ),
];

#[test]
fn disasm_json_agrees_with_the_upstream_vectors() {
    let words: Vec<&str> = UPSTREAM.iter().map(|u| u.0).collect();
    let mut args = vec!["disasm", "--json"];
    args.extend(&words);
    let o = cosim(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines = json_lines(&o);
    assert_eq!(lines.len(), UPSTREAM.len());
    for (line, (word, op, fields)) in lines.iter().zip(UPSTREAM) {
        assert_eq!(line["word"], *word);
        assert_eq!(line["op"], *op);
        assert!(line.get("illegal").is_none());
        for (name, value) in *fields {
            assert_eq!(line["fields"][name], *value, "{word} {name}");
        }
        assert!(
            line["fields"].get("opcode").is_none(),
            "op names the opcode"
        );
    }
}

#[test]
fn disasm_json_names_every_illegal_kind() {
    let o = cosim(&[
        "disasm",
        "--json",
        "0x5000000000000000",
        "0x4800000000000000",
        "0x3800000000000000",
        "0x2c00000000000000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let kinds: Vec<(String, String)> = json_lines(&o)
        .iter()
        .map(|l| {
            (
                l["op"].as_str().unwrap().into(),
                l["illegal"].as_str().unwrap().into(),
            )
        })
        .collect();
    let want = [
        "ILLEGAL_OPCODE",
        "ILLEGAL_FUNC",
        "ILLEGAL_DEST_CACHE",
        "ILLEGAL_DIRECTION",
    ];
    assert_eq!(kinds, want.map(|k| ("ILLEGAL".to_string(), k.to_string())));
}

#[test]
fn disasm_prints_each_word_with_its_mnemonic() {
    let o = cosim(&["disasm", "0x2800c80000000006", "0x5000000000000000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[0].starts_with("0x2800c80000000006  memcpy l2[100] <- host[0], shape=3"),
        "{text}"
    );
    assert!(
        lines[1].starts_with("0x5000000000000000  .word 0x5000000000000000"),
        "{text}"
    );
}

const PROGRAM: &str = "\
; two shapes, then a copy
memset fmap[3] = (1, 1, 9)
.idle 20
memcpy l2[100] <- host[0], shape=3
.write 0x08, 0x0
.word 0x5000000000000000
";

const PROGRAM_WORDS: [&str; 3] = [
    "0x3030001000100090",
    "0x2800c80000000006",
    "0x5000000000000000",
];

#[test]
fn asm_prints_words_and_directives_as_comments() {
    let path = temp_file("asm", "p.asm", PROGRAM);
    let o = cosim(&["asm", path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        format!(
            "{}\n# .idle 20\n{}\n# .write 0x08, 0x00000000\n{}\n",
            PROGRAM_WORDS[0], PROGRAM_WORDS[1], PROGRAM_WORDS[2]
        )
    );
}

#[test]
fn disasm_reads_assembler_files_and_word_files() {
    let asm = temp_file("disasm-files", "p.asm", PROGRAM);
    let from_asm = cosim(&["disasm", "--json", asm.to_str().unwrap()]);
    assert!(from_asm.status.success(), "{}", stderr(&from_asm));
    // What `asm` prints is itself a word file.
    let words = temp_file(
        "disasm-files",
        "p.words",
        &stdout(&cosim(&["asm", asm.to_str().unwrap()])),
    );
    let from_words = cosim(&["disasm", "--json", words.to_str().unwrap()]);
    assert!(from_words.status.success(), "{}", stderr(&from_words));
    let got: Vec<Value> = json_lines(&from_words)
        .iter()
        .map(|l| l["word"].clone())
        .collect();
    assert_eq!(got, PROGRAM_WORDS.map(Value::from));
    assert_eq!(stdout(&from_asm), stdout(&from_words));
}

#[test]
fn an_assembler_error_is_file_line_column_message_and_exit_2() {
    let path = temp_file(
        "asm-error",
        "bad.asm",
        "memset fmap[1] = (1, 2, 3)\nmemcpy l2[5] <- bogus[3], shape=1\n",
    );
    let p = path.to_str().unwrap();
    for args in [vec!["asm", p], vec!["disasm", p]] {
        let o = cosim(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        assert!(err.starts_with(&format!("{p}:2:")), "{err}");
        let col = err[p.len() + 3..].split(':').next().unwrap();
        assert!(col.parse::<usize>().is_ok(), "column in {err}");
    }
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        vec![],
        vec!["--count", "3"],
        vec!["--seed", "x"],
        vec!["--seed", "1", "--config", "no-such-board"],
        vec!["--seed", "1", "--no-such-flag"],
        vec!["--seed", "1", "--inject-fault", "no-such-fault"],
        vec!["disasm"],
        vec!["disasm", "0x1", "two-arguments-not-words"],
        vec!["disasm", "/no/such/file"],
        vec!["asm", "/no/such/file"],
    ] {
        let o = cosim(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).is_empty(), "{args:?} says nothing");
    }
}

#[test]
fn a_matching_campaign_prints_one_line_per_seed_and_exits_0() {
    let o = cosim(&[
        "--seed", "17", "--count", "3", "--instrs", "20", "--config", "tiny",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let text = stdout(&o);
    for seed in 17..20 {
        assert!(
            text.contains(&format!("seed {seed}: ok, 20 instrs")),
            "{text}"
        );
    }
    assert!(
        text.contains("summary: 3 seeds, 3 matched, 0 mismatched, 60 instructions"),
        "{text}"
    );
}

#[test]
fn a_mismatch_exits_1_and_says_where() {
    let json = temp_file("mismatch", "r.json", "");
    let o = cosim(&[
        "--seed",
        "0x10",
        "--count",
        "2",
        "--config",
        "tiny",
        "--inject-fault",
        "retire-err",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("seed 16: MISMATCH retire-err at seq 0"),
        "{text}"
    );
    assert!(text.contains("reproduce: pccx-cosim --seed 16"), "{text}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["summary"]["mismatched"], 2);
    assert_eq!(report["results"][1]["seed"], 17);
    assert_eq!(report["results"][1]["mismatch"]["kind"], "retire-err");
}

/// An injected hang or panic stops the campaign at its second seed: exit
/// 2, and the JSON still holds the first seed's result and says where and
/// why it stopped.
#[test]
fn an_infrastructure_error_exits_2_and_keeps_the_results() {
    for (fault, why) in [("hang", "watchdog"), ("panic", "a model panicked")] {
        let json = temp_file("infra", &format!("{fault}.json"), "");
        let o = cosim(&[
            "--seed",
            "5",
            "--count",
            "4",
            "--config",
            "tiny",
            "--inject-fault",
            fault,
            "--json",
            json.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("infrastructure error at seed 6"), "{err}");
        let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let results = report["results"].as_array().unwrap();
        assert_eq!(results.len(), 1, "{fault}");
        assert_eq!(results[0]["seed"], 5);
        assert_eq!(results[0]["status"], "ok");
        let stopped = &report["summary"]["stopped"];
        assert_eq!(stopped["seed"], 6);
        assert!(
            stopped["error"].as_str().unwrap().contains(why),
            "{stopped}"
        );
    }
}

#[test]
fn gen_prints_a_program_that_assembles() {
    let o = cosim(&["gen", "--seed", "3", "--instrs", "25", "--config", "tiny"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let path = temp_file("gen", "g.asm", &stdout(&o));
    let words = cosim(&["asm", path.to_str().unwrap()]);
    assert!(words.status.success(), "{}", stderr(&words));
    let count = stdout(&words)
        .lines()
        .filter(|l| l.starts_with("0x"))
        .count();
    assert_eq!(count, 25);
}
