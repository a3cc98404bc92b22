// Placeholder while the real build script is written (see build_rtl.rs).
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
}
