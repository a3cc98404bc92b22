//! The `pccx-cosim` binary: disasm, asm, gen, campaigns and exit codes.

use crate::support;

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};
use support::without_wall;

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
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn a_matching_campaign_prints_one_line_per_seed_and_exits_0() {
    let o = cosim(&[
        "--seed", "17", "--count", "3", "--instrs", "20", "--config", "tiny",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let text = stdout(&o);
    for seed in 17..20 {
        assert!(
            text.contains(&format!("seed {seed}: match, 20 instrs")),
            "{text}"
        );
    }
    assert!(
        text.contains("summary: 3 seeds, 3 matched, 0 mismatched, 60 instructions"),
        "{text}"
    );
}

#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn a_mismatch_exits_1_and_says_where() {
    let json = temp_file("mismatch", "r.json", "");
    let out = json.with_file_name("out");
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
        "--out",
        out.to_str().unwrap(),
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
    assert_eq!(
        report["results"][1]["signature"]["text"],
        "retire-err/MEMSET/err"
    );
    // Grouped by signature, in the summary and in the JSON.
    assert!(
        text.contains("failures by signature: retire-err/MEMSET/err x2 (seeds 16, 17)"),
        "{text}"
    );
    assert_eq!(
        report["failures_by_signature"][0]["seeds"],
        serde_json::json!([16, 17])
    );
    // A repro and a shrunk program per seed, and where they are.
    for seed in [16, 17] {
        let repro = out.join(format!("repro-tiny-seed{seed}.json"));
        let min = out.join(format!("repro-tiny-seed{seed}-min.asm"));
        assert!(
            text.contains(&format!("repro: {}", repro.display())),
            "{text}"
        );
        assert!(text.contains("shrunk: 40 instructions ("), "{text}");
        assert!(text.contains("-> 1 instruction (1 item) in "), "{text}");
        assert!(repro.is_file() && min.is_file(), "seed {seed}");
        let r = &report["results"][seed as usize - 16]["artefacts"];
        assert_eq!(r["repro"], repro.to_str().unwrap());
        assert_eq!(r["shrink"]["after_instructions"], 1);
    }
    assert!(
        !text.contains('\r') && !text.contains("seeds, eta"),
        "no progress bar in a pipe"
    );
}

#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn no_shrink_writes_the_repro_only() {
    let out = temp_file("no-shrink", "x", "").with_file_name("out");
    let o = cosim(&[
        "--seed",
        "3",
        "--config",
        "tiny",
        "--inject-fault",
        "l2-data",
        "--no-shrink",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(out.join("repro-tiny-seed3.json").is_file());
    assert!(!out.join("repro-tiny-seed3-min.asm").exists());
    assert!(!stdout(&o).contains("shrunk:"), "{}", stdout(&o));
}

/// `replay`: 1 while the mismatch reproduces (full or shrunk program), 0
/// once reference and DUT agree, 2 for a file it cannot use, with the file
/// and the field named.
#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn replay_exits_1_while_it_reproduces_0_when_fixed_2_when_malformed() {
    let out = temp_file("replay", "x", "").with_file_name("out");
    let o = cosim(&[
        "--seed",
        "21",
        "--config",
        "tiny",
        "--inject-fault",
        "l2-data",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let path = out.join("repro-tiny-seed21.json");
    let p = path.to_str().unwrap();
    for args in [vec!["replay", p], vec!["replay", "--min", p]] {
        let o = cosim(&args);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{args:?}: {}{}",
            stdout(&o),
            stderr(&o)
        );
        assert!(stdout(&o).contains("reproduces: the same mismatch (l2-writes/"));
    }
    let original: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let variant = |name: &str, change: &dyn Fn(&mut Value)| {
        let mut v = original.clone();
        change(&mut v);
        temp_file("replay", name, &serde_json::to_string(&v).unwrap())
    };
    // The fault "fixed": the DUT is the plain RTL.
    let fixed = variant("fixed.json", &|v| v["inject_fault"] = Value::Null);
    let o = cosim(&["replay", fixed.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("no longer reproduces"),
        "{}",
        stdout(&o)
    );
    // Malformed files.
    let bad_field = variant("bad-field.json", &|v| {
        v["gen_options"]["hazard_pct"] = "many".into()
    });
    let bad_item = variant("bad-item.json", &|v| {
        v["program"]["items"][1] = serde_json::json!({"instr": "0xnothex"})
    });
    let not_json = temp_file("replay", "not.json", "{ this is not JSON");
    for (file, says) in [
        (&bad_field, "field `gen_options.hazard_pct`"),
        (&bad_item, "field `program.items[1].instr`"),
        (&not_json, "not JSON"),
        (&out.join("missing.json"), "cannot read"),
    ] {
        let o = cosim(&["replay", file.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{file:?}: {}", stdout(&o));
        let err = stderr(&o);
        assert!(
            err.contains(file.to_str().unwrap()),
            "the file is named: {err}"
        );
        assert!(err.contains(says), "{err}");
    }
}

/// A panic in the harness (here injected into a model's drain) stops the
/// campaign at its second seed: exit 2, and the JSON still holds the first
/// seed's result and says where and why it stopped.
#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn an_infrastructure_error_exits_2_and_keeps_the_results() {
    let (fault, why) = ("panic", "a model panicked");
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
    // The seed that ran, and the seed at which the model failed.
    assert_eq!(results.len(), 2, "{fault}");
    assert_eq!(results[0]["seed"], 5);
    assert_eq!(results[0]["verdict"], "match");
    assert_eq!(results[1]["seed"], 6);
    assert_eq!(results[1]["verdict"], "error");
    assert!(
        results[1]["error"].as_str().unwrap().contains(why),
        "{}",
        results[1]
    );
    let stopped = &report["summary"]["stopped"];
    assert_eq!(stopped["seed"], 6);
    assert!(
        stopped["error"].as_str().unwrap().contains(why),
        "{stopped}"
    );
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

// ----- JUnit ----------------------------------------------------------------

/// An XML element as the tiny parser below reads it.
#[derive(Debug)]
struct Element {
    name: String,
    attrs: Vec<(String, String)>,
    children: Vec<Element>,
    text: String,
}

impl Element {
    fn attr(&self, name: &str) -> &str {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("<{}> has no {name}", self.name))
    }

    fn all(&self, name: &str) -> Vec<&Element> {
        self.children.iter().filter(|c| c.name == name).collect()
    }
}

/// A strict reader for the subset of XML the JUnit writer uses (a prolog,
/// elements, attributes in double quotes, text, the five entities and
/// numeric references): panics on anything else, so a malformed document
/// fails the test.
fn parse_xml(doc: &str) -> Element {
    let rest = doc
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        .expect("an XML prolog");
    let mut p = XmlParser {
        s: rest.as_bytes(),
        i: 0,
    };
    p.skip_space();
    let root = p.element();
    p.skip_space();
    assert_eq!(p.i, p.s.len(), "text after the root element");
    root
}

struct XmlParser<'a> {
    s: &'a [u8],
    i: usize,
}

impl XmlParser<'_> {
    fn peek(&self) -> u8 {
        *self.s.get(self.i).expect("unexpected end of document")
    }

    fn eat(&mut self, what: &str) {
        assert!(
            self.s[self.i..].starts_with(what.as_bytes()),
            "expected `{what}` at byte {}",
            self.i
        );
        self.i += what.len();
    }

    fn skip_space(&mut self) {
        while self.i < self.s.len() && self.peek().is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn name(&mut self) -> String {
        let start = self.i;
        while self.peek().is_ascii_alphanumeric() || b"_-.:".contains(&self.peek()) {
            self.i += 1;
        }
        assert!(self.i > start, "a name expected at byte {start}");
        String::from_utf8(self.s[start..self.i].to_vec()).unwrap()
    }

    /// Text up to `end` (not included), entities decoded.
    fn chars_until(&mut self, end: u8) -> String {
        let start = self.i;
        while self.peek() != end {
            self.i += 1;
        }
        let raw = std::str::from_utf8(&self.s[start..self.i]).unwrap();
        unescape(raw)
    }

    fn element(&mut self) -> Element {
        self.eat("<");
        let name = self.name();
        let mut attrs = Vec::new();
        loop {
            self.skip_space();
            match self.peek() {
                b'/' => {
                    self.eat("/>");
                    return Element {
                        name,
                        attrs,
                        children: Vec::new(),
                        text: String::new(),
                    };
                }
                b'>' => {
                    self.eat(">");
                    break;
                }
                _ => {
                    let key = self.name();
                    self.eat("=\"");
                    let start = self.i;
                    let value = self.chars_until(b'"');
                    assert!(
                        !self.s[start..self.i].contains(&b'<'),
                        "`<` in an attribute"
                    );
                    self.eat("\"");
                    assert!(attrs.iter().all(|(k, _)| *k != key), "{key} twice");
                    attrs.push((key, value));
                }
            }
        }
        let mut children = Vec::new();
        let mut text = String::new();
        loop {
            text.push_str(&self.chars_until(b'<'));
            if self.s[self.i..].starts_with(b"</") {
                self.eat("</");
                let closing = self.name();
                assert_eq!(closing, name, "mismatched closing tag");
                self.eat(">");
                return Element {
                    name,
                    attrs,
                    children,
                    text,
                };
            }
            children.push(self.element());
        }
    }
}

fn unescape(raw: &str) -> String {
    let mut out = String::new();
    let mut rest = raw;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let semi = rest[amp..].find(';').expect("an unterminated entity") + amp;
        let entity = &rest[amp + 1..semi];
        out.push(match entity {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let code = match entity.strip_prefix("#x") {
                    Some(hex) => u32::from_str_radix(hex, 16),
                    None => entity.strip_prefix('#').expect("a known entity").parse(),
                }
                .unwrap();
                char::from_u32(code).unwrap()
            }
        });
        rest = &rest[semi + 1..];
    }
    out.push_str(rest);
    for c in out.chars() {
        assert!(
            (c as u32) >= 0x20 || "\n\r\t".contains(c),
            "control character {c:?} in XML text"
        );
    }
    out
}

#[test]
fn the_xml_reader_of_these_tests_rejects_what_it_should() {
    let prolog = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";
    let e = parse_xml(&format!(
        "{prolog}<a x=\"1 &amp; &lt;2&gt;\"><b/>t&#10;&apos;</a>"
    ));
    assert_eq!((e.attr("x"), e.text.as_str()), ("1 & <2>", "t\n'"));
    for bad in [
        "<a></b>",
        "<a x=\"1\">",
        "<a>&bogus;</a>",
        "<a x=1/>",
        "<a/>junk",
        "<a x=\"<\"/>",
        "<a>&#1;</a>",
    ] {
        let doc = format!("{prolog}{bad}");
        assert!(
            std::panic::catch_unwind(|| parse_xml(&doc)).is_err(),
            "accepted {bad}"
        );
    }
}

#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn junit_has_a_testcase_per_seed_with_failures_and_their_artefacts() {
    let xml = temp_file("junit", "x", "").with_file_name("mismatch.xml");
    let out = xml.with_file_name("out");
    let o = cosim(&[
        "--seed",
        "7",
        "--count",
        "2",
        "--config",
        "tiny",
        "--inject-fault",
        "l2-data",
        "--out",
        out.to_str().unwrap(),
        "--junit",
        xml.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let doc = parse_xml(&std::fs::read_to_string(&xml).unwrap());
    assert_eq!(doc.name, "testsuites");
    assert_eq!((doc.attr("tests"), doc.attr("failures")), ("2", "2"));
    let suites = doc.all("testsuite");
    assert_eq!(suites.len(), 1);
    let cases = suites[0].all("testcase");
    assert_eq!(cases.len(), 2);
    for (case, seed) in cases.iter().zip([7, 8]) {
        assert_eq!(case.attr("classname"), "tiny");
        assert_eq!(case.attr("name"), format!("seed {seed}"));
        let failure = &case.all("failure")[0];
        assert!(failure
            .attr("message")
            .starts_with("MISMATCH l2-writes at seq "));
        // The signature names the engine whose write the fault hit first
        // (MEMCPY or, since CVO writes L2, a CVO).
        let kind = failure.attr("type");
        assert!(
            kind.starts_with("l2-writes/") && kind.ends_with("/data"),
            "{kind}"
        );
        let repro = out.join(format!("repro-tiny-seed{seed}.json"));
        let min = out.join(format!("repro-tiny-seed{seed}-min.asm"));
        for path in [&repro, &min] {
            assert!(path.is_file());
            assert!(
                failure.text.contains(path.to_str().unwrap()),
                "{}",
                failure.text
            );
        }
        // The report itself, markup characters and all, survives escaping.
        assert!(failure.text.contains("] <- "), "{}", failure.text);
    }
}

/// A DUT that hangs (injected into its second drain) fails that seed as a
/// mismatch of kind `hang`, with its signature and repro file; the campaign
/// goes on to the next seeds, and the exit is 1: the RTL's failure, not the
/// harness's (exit 2).
#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn a_hang_of_the_rtl_is_a_mismatch_and_the_campaign_goes_on() {
    let dir = temp_file("hang-run", "x", "").with_file_name("hang-out");
    let _ = std::fs::remove_dir_all(&dir);
    let json = dir.with_extension("json");
    let o = cosim(&[
        "--seed",
        "5",
        "--count",
        "4",
        "--config",
        "tiny",
        "--inject-fault",
        "hang",
        "--out",
        dir.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(!stderr(&o).contains("infrastructure"), "{}", stderr(&o));
    assert!(out.contains("seed 6: MISMATCH hang at seq"), "{out}");
    assert!(out.contains("signature: hang/"), "{out}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let verdicts: Vec<&str> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["match", "mismatch", "match", "match"]);
    let hang = &report["results"][1];
    assert_eq!(hang["mismatch"]["kind"], "hang", "{hang}");
    assert!(hang["mismatch"]["cycle"].as_u64().is_some(), "{hang}");
    assert!(
        report["summary"]["stopped"].is_null(),
        "{}",
        report["summary"]
    );
    assert!(dir.join("repro-tiny-seed6.json").is_file());
}

#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn junit_reports_an_infrastructure_error_as_an_error() {
    let xml = temp_file("junit-error", "x", "").with_file_name("panic.xml");
    let o = cosim(&[
        "--seed",
        "5",
        "--count",
        "4",
        "--config",
        "tiny",
        "--inject-fault",
        "panic",
        "--junit",
        xml.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    let doc = parse_xml(&std::fs::read_to_string(&xml).unwrap());
    assert_eq!(
        (doc.attr("tests"), doc.attr("failures"), doc.attr("errors")),
        ("2", "0", "1")
    );
    let cases = doc.all("testsuite")[0].all("testcase");
    assert_eq!(cases.len(), 2);
    assert_eq!(cases[0].attr("name"), "seed 5");
    assert!(cases[0].children.is_empty(), "seed 5 passed");
    assert_eq!(cases[1].attr("name"), "seed 6");
    let error = &cases[1].all("error")[0];
    assert_eq!(error.attr("type"), "infrastructure");
    assert!(
        error.attr("message").contains("panicked"),
        "{}",
        error.attr("message")
    );
}

// ----- the edges a new user met (issue 12) ---------------------------------------

#[test]
fn an_unwritable_output_path_fails_before_the_first_seed() {
    let o = cosim(&[
        "--seed",
        "1",
        "--count",
        "50",
        "--dut",
        "golden",
        "--json",
        "/proc/x.json",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--json /proc/x.json: cannot write"),
        "{}",
        stderr(&o)
    );
    assert!(
        !stdout(&o).contains("seed 1:"),
        "no seed ran: {}",
        stdout(&o)
    );
}

#[test]
fn a_word_wider_than_64_bits_is_named_as_such() {
    let o = cosim(&["disasm", "0x1234567890abcdef12"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("does not fit in a 64-bit instruction word"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_seed_range_past_2_pow_64_is_an_error() {
    let o = cosim(&[
        "--seed",
        "18446744073709551615",
        "--count",
        "2",
        "--dut",
        "golden",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("passes 2^64 - 1"), "{}", stderr(&o));
    let one = cosim(&[
        "--seed",
        "18446744073709551615",
        "--count",
        "1",
        "--dut",
        "golden",
    ]);
    assert_eq!(one.status.code(), Some(0), "{}", stderr(&one));
}

#[test]
fn the_reproduce_line_repeats_the_injected_fault() {
    let dir = std::env::temp_dir().join(format!("pccx-cli-reproduce-{}", std::process::id()));
    let o = cosim(&[
        "--seed",
        "1",
        "--dut",
        "golden",
        "--inject-fault",
        "l2-data",
        "--no-shrink",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let line = stdout(&o)
        .lines()
        .find(|l| l.contains("reproduce:"))
        .map(str::to_string)
        .expect("a reproduce line");
    assert!(
        line.contains("--dut golden --inject-fault l2-data"),
        "{line}"
    );
    // And the line does reproduce: the same seed with those flags mismatches.
    let args: Vec<&str> = line
        .split("reproduce: pccx-cosim ")
        .nth(1)
        .unwrap()
        .split("   (program")
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    let mut args = args;
    args.extend(["--no-shrink", "--out", dir.to_str().unwrap()]);
    assert_eq!(cosim(&args).status.code(), Some(1));
}

#[test]
fn jobs_change_nothing_but_wall_time() {
    let dut = if cfg!(feature = "rtl") {
        "rtl"
    } else {
        "golden"
    };
    let dir = temp_file("jobs", "x", "").parent().unwrap().to_path_buf();
    let mut files = Vec::new();
    for jobs in ["1", "2"] {
        let json = dir.join(format!("j{jobs}.json"));
        let cov = dir.join(format!("c{jobs}.json"));
        let o = cosim(&[
            "--seed",
            "3",
            "--count",
            "12",
            "--config",
            "tiny",
            "--dut",
            dut,
            "--jobs",
            jobs,
            "--json",
            json.to_str().unwrap(),
            "--coverage",
            cov.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let lines: Vec<String> = stdout(&o)
            .lines()
            .filter(|l| l.starts_with("seed "))
            .map(String::from)
            .collect();
        let read = |p: &PathBuf| {
            serde_json::from_str::<Value>(&std::fs::read_to_string(p).unwrap()).unwrap()
        };
        files.push((lines, without_wall(&read(&json)), read(&cov)));
    }
    assert_eq!(files[0].0.len(), 12);
    assert_eq!(files[0], files[1]);
}

#[test]
fn jobs_flags_that_cannot_work_are_refused() {
    let o = cosim(&["--seed", "1", "--jobs", "0", "--dut", "golden"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--jobs 0"), "{}", stderr(&o));
    let o = cosim(&[
        "--seed",
        "1",
        "--jobs",
        "2",
        "--dut",
        "golden",
        "--inject-fault",
        "l2-data",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("one worker"), "{}", stderr(&o));
}

/// `bench --busy` sizes its instruction to the configuration: every engine
/// runs on every shipped configuration (tiny's L2 once refused the GEMM and
/// GEMV, whose output went to word 8192).
#[test]
#[cfg_attr(not(feature = "rtl"), ignore = "runs the RTL DUT")]
fn every_busy_benchmark_runs_on_every_shipped_configuration() {
    for config in ["tiny", "small", "kv260"] {
        for engine in ["gemm", "gemv", "cvo"] {
            let o = cosim(&[
                "bench", "--busy", engine, "--config", config, "--repeat", "1",
            ]);
            assert_eq!(
                o.status.code(),
                Some(0),
                "--busy {engine} --config {config}: {}",
                stderr(&o)
            );
            assert!(
                stdout(&o).contains(&format!("{config}, {engine} busy: median")),
                "{}",
                stdout(&o)
            );
        }
    }
}

/// `mutate-combine`: each configuration's row and the combined one, a
/// mutant killed on one configuration only counted killed, exit 1 for a
/// mutant that survives both, the JSON written; a file that is no report
/// is named in the error (exit 2).
#[test]
fn mutate_combine_counts_a_kill_on_any_configuration() {
    use pccx_cosim::tools::mutants::{MutantRecord, MutateReport, Verdict};
    let record = |id: &str, result: Verdict, equivalent: bool| MutantRecord {
        id: id.into(),
        class: "operator-swap".into(),
        change: format!("{id}: `+` -> `-`"),
        result,
        equivalent: equivalent.then(|| "widths equal on tiny".into()),
        build_seconds: 0.0,
        evidence: None,
    };
    let killed = || Verdict::Killed {
        seed: 3,
        programs: 3,
        instructions: 90,
        seconds: 0.2,
        by: "l2-writes".into(),
        mismatch: None,
        assertion: None,
    };
    let survived = || Verdict::Survived {
        seeds: 40,
        instructions: 1600,
        battery: Default::default(),
    };
    let report = |config: &str, mutants: Vec<MutantRecord>| {
        serde_json::to_string(&MutateReport::of_mutants(config, 3, mutants)).unwrap()
    };
    let tiny = temp_file(
        "combine",
        "tiny.json",
        &report(
            "tiny",
            vec![
                record("pccx_fifo.sv:29:28:operator-swap", survived(), true),
                record("pccx_fifo.sv:43:22:operator-swap", killed(), false),
                record("pccx_pkg.sv:329:82:operator-swap", survived(), false),
            ],
        ),
    );
    let small = temp_file(
        "combine",
        "small.json",
        &report(
            "small",
            vec![
                record("pccx_fifo.sv:29:28:operator-swap", killed(), false),
                record("pccx_fifo.sv:43:22:operator-swap", killed(), false),
                record("pccx_pkg.sv:329:82:operator-swap", survived(), false),
            ],
        ),
    );
    let json = tiny.with_file_name("combined.json");
    let o = cosim(&[
        "mutate-combine",
        tiny.to_str().unwrap(),
        small.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{text}{}", stderr(&o));
    assert!(text.contains("combined over tiny, small"), "{text}");
    assert!(
        text.contains("pccx_fifo.sv:29:28:operator-swap: small killed, tiny equivalent"),
        "{text}"
    );
    let combined: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(combined["summary"]["killed"], 2, "{combined}");
    assert_eq!(combined["summary"]["survived"], 1);
    assert_eq!(combined["summary"]["equivalent"], 0);
    // Not a report: the file is named.
    let bad = temp_file("combine", "bad.json", "{\"config\": 3}");
    let o = cosim(&[
        "mutate-combine",
        tiny.to_str().unwrap(),
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("bad.json: not a mutation report"),
        "{}",
        stderr(&o)
    );
}
