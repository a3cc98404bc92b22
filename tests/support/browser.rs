//! Pages opened in a real browser: headless Chromium (Debian's `chromium`,
//! installed by scripts/setup.sh) loads a file, and the test reads the DOM
//! it built (`--dump-dom`) or keeps a screenshot under
//! target/test-artefacts.

use scraper::{Html, Selector};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The browser, or a panic that says how to install it.
pub fn chromium() -> PathBuf {
    let path = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        path.is_file(),
        "no Chromium at {}: install it with `bash scripts/setup.sh` (Debian's `chromium`), \
         or set CHROMIUM",
        path.display()
    );
    path
}

/// Runs Chromium headless on `url` with `args`; its stdout. A browser
/// that has not finished in 90 s is killed and the test fails.
fn run(url: &str, args: &[String]) -> String {
    // A profile of its own: tests run in parallel, and Chromium locks it.
    let profile = std::env::temp_dir().join(format!(
        "pccx-chromium-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("Chromium starts");
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).ok();
        s
    });
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("Chromium did not finish {url} in 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = std::fs::remove_dir_all(&profile);
    reader.join().unwrap()
}

/// `file://` URL of a file.
pub fn file_url(path: &Path) -> String {
    let abs = std::fs::canonicalize(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    format!("file://{}", abs.display())
}

/// The DOM Chromium built from the file at `path`.
pub fn dom(path: &Path) -> Html {
    let text = run(&file_url(path), &["--dump-dom".to_string()]);
    assert!(
        !text.trim().is_empty(),
        "Chromium printed no DOM for {}",
        path.display()
    );
    Html::parse_document(&text)
}

/// Chromium's screenshot of the page at `path`, kept as
/// target/test-artefacts/NAME.png; its path.
pub fn screenshot(path: &Path, name: &str, height: u32) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artefacts");
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join(format!("{name}.png"));
    let _ = std::fs::remove_file(&png);
    run(
        &file_url(path),
        &[
            format!("--screenshot={}", png.display()),
            format!("--window-size=1280,{height}"),
        ],
    );
    let size = std::fs::metadata(&png).map_or(0, |m| m.len());
    assert!(size > 10_000, "{}: {size} bytes", png.display());
    png
}

/// The elements `selector` finds.
pub fn select<'a>(dom: &'a Html, selector: &str) -> Vec<scraper::ElementRef<'a>> {
    let s = Selector::parse(selector).unwrap_or_else(|e| panic!("{selector}: {e:?}"));
    dom.select(&s).collect()
}

/// The text of the one element `selector` finds.
pub fn text_of(dom: &Html, selector: &str) -> String {
    let found = select(dom, selector);
    assert_eq!(found.len(), 1, "{selector}: {} elements", found.len());
    found[0].text().collect()
}

/// The file a relative `href` of a page in `page_dir` names: its
/// percent-encoding undone, `.` and `..` applied.
pub fn resolve(page_dir: &Path, href: &str) -> PathBuf {
    assert!(
        href.starts_with("./") || href.starts_with("../"),
        "not a relative link: {href}"
    );
    let mut path = std::fs::canonicalize(page_dir).unwrap();
    for part in href.split('/') {
        match part {
            "." | "" => {}
            ".." => {
                path.pop();
            }
            p => path.push(percent_decode(p)),
        }
    }
    path
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}
