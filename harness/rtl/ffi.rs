//! Raw bindings: bindgen's rendering of harness/rtl/shim/pccx_shim.h, and the
//! per-configuration `pccx_sim_ops_<name>()` entry points build.rs wrote.
#![allow(non_camel_case_types, non_upper_case_globals, dead_code)]

include!(concat!(env!("OUT_DIR"), "/shim_bindings.rs"));
include!(concat!(env!("OUT_DIR"), "/rtl_ops.rs"));
