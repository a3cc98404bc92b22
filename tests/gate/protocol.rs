//! The AXI-Lite protocol check of the RTL model fires: a slave that raises
//! RVALID with no read outstanding is reported as a protocol violation, not
//! taken as read data. The faulty slave is a real one: the mutant of
//! pccx_axil_slave.sv that answers a read whenever it is ready, built the
//! way `pccx-cosim mutate` builds every mutant.

use std::path::Path;

use pccx_cosim::config;
use pccx_cosim::rtl::{HostTiming, RtlModel};
use pccx_cosim::tools::mutate::{all_sites, build, MutantClass};
use pccx_golden::model::{ModelError, NpuModel};

#[test]
fn unsolicited_read_response_is_a_protocol_violation() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tiny = config::by_name("tiny").expect("the tiny configuration");
    let sites = all_sites(root).expect("mutation sites of hw/rtl");
    let mutant = sites
        .iter()
        .find(|m| {
            m.file == "pccx_axil_slave.sv"
                && m.class == MutantClass::SignalMixUp
                && m.original == "s_arvalid"
                && m.replacement == "s_arready"
        })
        .expect("the read-without-request mutant of the AXI-Lite slave");
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("protocol-mutant");
    let builder = build::Builder::new(root, &work, tiny).expect("mutant builder");
    let so = builder
        .build(mutant)
        .unwrap_or_else(|(stage, e)| panic!("{stage}: {e}"));
    let model = build::load(&so).expect("load the mutant");
    let mut rtl = RtlModel::open_with_ops(tiny, model.ops(), HostTiming::default())
        .expect("open the mutant model");
    rtl.reset().expect("reset");
    match rtl.idle(8) {
        Err(ModelError::Protocol(m)) => assert!(m.contains("RVALID"), "{m}"),
        other => panic!("expected a protocol violation, got {other:?}"),
    }

    // The real slave answers only what was asked.
    let mut good = RtlModel::open(tiny, HostTiming::default()).expect("open tiny");
    good.reset().expect("reset");
    good.idle(8).expect("no protocol violation while idle");
    good.reg_read(0x08).expect("a status read");
    good.idle(8).expect("no protocol violation after a read");
}
