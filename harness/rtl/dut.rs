//! The DUT manifest (`hw/dut.json`, docs/dut-contract.md): the level a DUT
//! is seen at, its top module, its files and the port behind each role the
//! shim drives or reads, read with serde and checked against the ports of
//! the Verilated top. Shared with build.rs (`#[path]`), so it needs only
//! serde and the standard library.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// The manifest's `format`, and the version this harness reads.
pub const FORMAT: &str = "pccx-cosim dut";
pub const VERSION: u64 = 1;

/// The manifest of the repository's own RTL, from the repository root.
pub const DEFAULT_MANIFEST: &str = "hw/dut.json";

/// The observation levels by name, lowest first (golden's `Observation`;
/// a unit test of the library keeps the two lists equal).
pub const LEVELS: [&str; 3] = ["black-box", "retire", "full"];

/// One DUT, as its manifest declares it.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub format: String,
    pub version: u64,
    /// A short name for reports.
    pub name: String,
    /// The highest observation level the DUT offers (docs/dut-contract.md).
    pub level: Level,
    /// The top module; it must be the one `verilator_file` selects.
    pub top: String,
    /// Verilator's command-line file (`-F`), relative to the manifest's
    /// folder: the sources, their order and the flags every use shares.
    pub verilator_file: PathBuf,
    /// The folder of the configurations (`*.cfg`, the top's parameters),
    /// relative to the manifest's folder.
    pub configs: PathBuf,
    /// The port behind each role (`ROLES`), by the role's name.
    pub ports: BTreeMap<String, String>,
    /// L2's storage in the Verilated model, by the name Verilator gives it
    /// (`<top>__DOT__<instance>__DOT__<array>`): left out of the random
    /// power-up state (a RAM keeps its words through a reset, and the
    /// harness loads them), and the L2 back door when `back_door` is given.
    /// None (a vendor RAM macro Verilator cannot name; only without a back
    /// door): L2's words power up random with the rest of the state, and
    /// after such a reset the harness loads L2 in full.
    #[serde(default)]
    pub l2_array: Option<String>,
    /// How the top's reset reaches the design's flops (docs/dut-contract.md,
    /// "Reset").
    #[serde(default)]
    pub reset: Reset,
    /// The back door into the design's state, by Verilated names: what the
    /// `full` level reads besides L2 (and L2 itself, by `l2_array`).
    #[serde(default)]
    pub back_door: Option<BackDoor>,
    /// The shape of the DUT's ports; every field has today's `pccx_top`
    /// as its default.
    #[serde(default)]
    pub interface: Interface,
    /// The numerics profile (relative to the manifest's folder): where the
    /// DUT's CVO is approximate by design, the error it may make per
    /// function (docs/dut-contract.md, "Numerics profiles"). None: exact.
    #[serde(default)]
    pub numerics: Option<PathBuf>,
    /// How the DUT's timing is judged against the golden timing model.
    #[serde(default)]
    pub timing: DutTiming,
}

/// How the DUT's timing is judged (docs/dut-contract.md, "Timing").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, tag = "rule")]
pub enum DutTiming {
    /// Every cycle as the golden timing model predicts (our RTL, whose
    /// timing the model describes).
    #[default]
    Exact,
    /// Another design's timing: per instruction only the ordering rules
    /// (from the `retire` level), and per program a cycle budget: the
    /// DUT's cycles up to the end of its drain at most
    /// `(100 + tolerance_pct) %` of the golden model's prediction, plus
    /// `slack_cycles` (a fixed cost per program, such as a drain by
    /// polling).
    Budget {
        tolerance_pct: u32,
        #[serde(default)]
        slack_cycles: u64,
    },
}

/// How the top's reset reaches the flops: what the random power-up state
/// must allow for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reset {
    /// The top's `rst_n` is every flop's asynchronous reset (`pccx_top`):
    /// its falling edge resets them before any clock edge, so a drawn
    /// state cannot act, and L2 is not guarded (a write during the reset
    /// is the DUT's, and the final comparison sees it).
    #[default]
    Direct,
    /// The reset passes through a synchroniser (`pccx_wrap_top`): a
    /// synchronised reset drawn low sees no falling edge, and the flops
    /// behind it act on their drawn values at the first clock edge, an L2
    /// write port among them. Silicon holds those flops by the reset's
    /// level, so the harness keeps L2's words through the reset sequence
    /// (by `l2_array`; without one L2 powers up random and is loaded in
    /// full, so there is nothing to keep).
    Synchronised,
}

/// The Verilated names of the state the back door reads.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackDoor {
    /// The fmap shape table, 64 entries `{a, b, c}` of 48 bits.
    pub fmap_table: String,
    /// The weight shape table, likewise.
    pub weight_table: String,
    /// The e_max register, 16 bits.
    pub e_max: String,
}

/// How the harness's canonical operations (docs/dut-contract.md,
/// "Adapters") reach the DUT's ports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interface {
    #[serde(default)]
    pub command: Command,
    #[serde(default)]
    pub status: Status,
    #[serde(default)]
    pub clocks: Clocks,
    #[serde(default)]
    pub weights: Weights,
    #[serde(default)]
    pub host: Host,
}

/// How host memory reaches the DUT.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Host {
    /// `pccx_top`'s request port (`acp_*`): an address per word, one
    /// response per request, in order.
    #[default]
    RequestPort,
    /// Two AXI-Stream ports with no addresses (`host_in_*` into the DUT,
    /// `host_out_*` out of it), fed and drained by a DMA the harness
    /// programs from the MEMCPYs it sends (harness/rtl/host_streams.rs).
    Streams,
}

/// The weight-stream ports: how many, how wide, and which of the two
/// streams (GEMM's matrix stream 0, GEMV's vector stream 1) each carries.
/// A stream's 128-bit beats are cut into `128 / bits` pieces, lowest bits
/// first, and its pieces dealt to its ports in turn, in port order
/// (harness/rtl/weight_lanes.rs; docs/dut-contract.md, "Adapters").
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(try_from = "WeightsField")]
pub struct Weights {
    pub ports: u32,
    pub bits: u32,
    /// Bit p: port p carries the vector (GEMV) stream.
    pub gemv_ports: u32,
}

impl Default for Weights {
    /// pccx_top's: two ports of 128 bits, GEMM's then GEMV's.
    fn default() -> Weights {
        Weights {
            ports: 2,
            bits: 128,
            gemv_ports: 0b10,
        }
    }
}

/// One of the two weight streams, as `interface.weights.streams` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WeightStream {
    Gemm,
    Gemv,
}

/// `interface.weights` as written: `{"bits": 64, "streams": ["gemm", ...]}`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct WeightsField {
    bits: u32,
    streams: Vec<WeightStream>,
}

/// The most weight ports the shim has room for (pccx_shim.h).
pub const MAX_WEIGHT_PORTS: usize = 8;

impl TryFrom<WeightsField> for Weights {
    type Error = String;

    fn try_from(f: WeightsField) -> Result<Weights, String> {
        if ![32, 64, 128].contains(&f.bits) {
            return Err(format!(
                "`bits` is {}: a weight port is 32, 64 or 128 bits wide (a 128-bit beat in whole pieces)",
                f.bits
            ));
        }
        if f.streams.is_empty() || f.streams.len() > MAX_WEIGHT_PORTS {
            return Err(format!(
                "`streams` names {} ports: the harness drives 1 to {MAX_WEIGHT_PORTS}",
                f.streams.len()
            ));
        }
        for (stream, name) in [(WeightStream::Gemm, "gemm"), (WeightStream::Gemv, "gemv")] {
            if !f.streams.contains(&stream) {
                return Err(format!(
                    "`streams` gives no port to the `{name}` stream: each stream needs one"
                ));
            }
        }
        let gemv_ports = f
            .streams
            .iter()
            .enumerate()
            .filter(|(_, s)| **s == WeightStream::Gemv)
            .fold(0, |mask, (p, _)| mask | 1 << p);
        Ok(Weights {
            ports: f.streams.len() as u32,
            bits: f.bits,
            gemv_ports,
        })
    }
}

/// The command port: how an instruction word reaches the NPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Command {
    /// A 32-bit AXI-Lite: the low word to 0x00, the high word to 0x04,
    /// which latches the instruction (CONTRACT section 10).
    #[default]
    Axil32TwoWrites,
    /// A 64-bit AXI-Lite: the whole word to 0x000, then any write to 0x008
    /// (the kick) sends it; clear-ERR at 0x010.
    Axil64PushKick,
}

/// How status is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Registers: status at 0x08, the retired count at 0x0C.
    #[default]
    Register,
    /// A FIFO of status changes read at 0x010: bit 63 an entry was there,
    /// 62:32 the retired count, 31:0 the status bits.
    Fifo,
}

/// The clocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Clocks {
    /// One clock (`clk`) for everything.
    #[default]
    One,
    /// A core clock (`clk`) and an AXI-Lite clock (`axi_clk`) at half its
    /// rate, rising with every second core edge.
    CoreAndHalfRateAxi,
}

impl Command {
    /// The AXI-Lite data width.
    pub fn data_bits(self) -> u32 {
        match self {
            Command::Axil32TwoWrites => 32,
            Command::Axil64PushKick => 64,
        }
    }
}

/// An observation level, by its name in `LEVELS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Level(usize);

impl Level {
    pub fn name(self) -> &'static str {
        LEVELS[self.0]
    }

    pub fn by_name(name: &str) -> Option<Level> {
        LEVELS.iter().position(|l| *l == name).map(Level)
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Level {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Level, D::Error> {
        let name = String::deserialize(d)?;
        Level::by_name(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown level `{name}`, expected one of `{}`",
                LEVELS.join("`, `")
            ))
        })
    }
}

/// Which way a port carries its signal, seen from the DUT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    In,
    Out,
}

impl Dir {
    fn name(self) -> &'static str {
        match self {
            Dir::In => "an input",
            Dir::Out => "an output",
        }
    }
}

/// A signal the shim drives or reads (harness/rtl/shim/pccx_shim.cpp names
/// each as `PCCX_PORT(name)`): its direction, its width in bits and the
/// lowest level that needs it.
#[derive(Clone, Copy, Debug)]
pub struct Role {
    pub name: &'static str,
    pub dir: Dir,
    pub bits: u32,
    pub level: usize,
    pub what: &'static str,
}

const fn role(name: &'static str, dir: Dir, bits: u32, level: usize, what: &'static str) -> Role {
    Role {
        name,
        dir,
        bits,
        level,
        what,
    }
}

const BLACK_BOX: usize = 0;
const RETIRE: usize = 1;
const FULL: usize = 2;

/// Every role, by interface. Widths are those of pccx_shim.h's structures
/// (6 retire slots, 4 observed L2 write ports, 2 weight streams, 5
/// engines, 17-bit word addresses).
pub const ROLES: &[Role] = &[
    role(
        "clk",
        Dir::In,
        1,
        BLACK_BOX,
        "the clock (the core clock of two)",
    ),
    role(
        "axi_clk",
        Dir::In,
        1,
        BLACK_BOX,
        "the AXI-Lite clock (`interface.clocks` core-and-half-rate-axi only)",
    ),
    role("rst_n", Dir::In, 1, BLACK_BOX, "the reset, active low"),
    role(
        "awvalid",
        Dir::In,
        1,
        BLACK_BOX,
        "AXI-Lite write address valid",
    ),
    role(
        "awready",
        Dir::Out,
        1,
        BLACK_BOX,
        "AXI-Lite write address ready",
    ),
    role("awaddr", Dir::In, 12, BLACK_BOX, "AXI-Lite write address"),
    role("wvalid", Dir::In, 1, BLACK_BOX, "AXI-Lite write data valid"),
    role(
        "wready",
        Dir::Out,
        1,
        BLACK_BOX,
        "AXI-Lite write data ready",
    ),
    role("wdata", Dir::In, 32, BLACK_BOX, "AXI-Lite write data"),
    role("wstrb", Dir::In, 4, BLACK_BOX, "AXI-Lite write strobes"),
    role(
        "bvalid",
        Dir::Out,
        1,
        BLACK_BOX,
        "AXI-Lite write response valid",
    ),
    role(
        "bready",
        Dir::In,
        1,
        BLACK_BOX,
        "AXI-Lite write response ready",
    ),
    role("bresp", Dir::Out, 2, BLACK_BOX, "AXI-Lite write response"),
    role(
        "arvalid",
        Dir::In,
        1,
        BLACK_BOX,
        "AXI-Lite read address valid",
    ),
    role(
        "arready",
        Dir::Out,
        1,
        BLACK_BOX,
        "AXI-Lite read address ready",
    ),
    role("araddr", Dir::In, 12, BLACK_BOX, "AXI-Lite read address"),
    role("rvalid", Dir::Out, 1, BLACK_BOX, "AXI-Lite read data valid"),
    role("rready", Dir::In, 1, BLACK_BOX, "AXI-Lite read data ready"),
    role("rdata", Dir::Out, 32, BLACK_BOX, "AXI-Lite read data"),
    role("rresp", Dir::Out, 2, BLACK_BOX, "AXI-Lite read response"),
    role(
        "acp_req_valid",
        Dir::Out,
        1,
        BLACK_BOX,
        "host-memory request valid",
    ),
    role(
        "acp_req_ready",
        Dir::In,
        1,
        BLACK_BOX,
        "host-memory request ready",
    ),
    role(
        "acp_req_write",
        Dir::Out,
        1,
        BLACK_BOX,
        "host-memory request is a write",
    ),
    role(
        "acp_req_addr",
        Dir::Out,
        17,
        BLACK_BOX,
        "host-memory word address",
    ),
    role(
        "acp_req_wdata",
        Dir::Out,
        128,
        BLACK_BOX,
        "host-memory write data",
    ),
    role(
        "acp_rsp_valid",
        Dir::In,
        1,
        BLACK_BOX,
        "host-memory response valid",
    ),
    role(
        "acp_rsp_ready",
        Dir::Out,
        1,
        BLACK_BOX,
        "host-memory response ready",
    ),
    role(
        "acp_rsp_rdata",
        Dir::In,
        128,
        BLACK_BOX,
        "host-memory read data",
    ),
    role(
        "host_in_valid",
        Dir::In,
        1,
        BLACK_BOX,
        "host words into the DUT: valid (`interface.host` streams only)",
    ),
    role(
        "host_in_ready",
        Dir::Out,
        1,
        BLACK_BOX,
        "host words into the DUT: ready (`interface.host` streams only)",
    ),
    role(
        "host_in_data",
        Dir::In,
        128,
        BLACK_BOX,
        "host words into the DUT: data (`interface.host` streams only)",
    ),
    role(
        "host_out_valid",
        Dir::Out,
        1,
        BLACK_BOX,
        "host words out of the DUT: valid (`interface.host` streams only)",
    ),
    role(
        "host_out_ready",
        Dir::In,
        1,
        BLACK_BOX,
        "host words out of the DUT: ready (`interface.host` streams only)",
    ),
    role(
        "host_out_data",
        Dir::Out,
        128,
        BLACK_BOX,
        "host words out of the DUT: data (`interface.host` streams only)",
    ),
    role(
        "ws_valid",
        Dir::In,
        2,
        BLACK_BOX,
        "weight stream valid, per port",
    ),
    role(
        "ws_ready",
        Dir::Out,
        2,
        BLACK_BOX,
        "weight stream ready, per port",
    ),
    role(
        "ws_data",
        Dir::In,
        256,
        BLACK_BOX,
        "weight stream beats, `interface.weights.bits` per port",
    ),
    role(
        "ret_valid",
        Dir::Out,
        6,
        RETIRE,
        "retire tap: a retire in slot p",
    ),
    role(
        "ret_seq",
        Dir::Out,
        192,
        RETIRE,
        "retire tap: sequence numbers, 32 bits per slot",
    ),
    role(
        "ret_op",
        Dir::Out,
        24,
        RETIRE,
        "retire tap: opcodes, 4 bits per slot",
    ),
    role(
        "ret_err",
        Dir::Out,
        24,
        RETIRE,
        "retire tap: error codes, 4 bits per slot",
    ),
    role(
        "acp_req_seq",
        Dir::Out,
        32,
        FULL,
        "tap: the instruction behind a host request",
    ),
    role(
        "ws_seq",
        Dir::Out,
        64,
        FULL,
        "tap: the instruction taking a beat, per stream",
    ),
    role(
        "latch_valid",
        Dir::Out,
        1,
        FULL,
        "latch tap: an instruction latched",
    ),
    role(
        "latch_seq",
        Dir::Out,
        32,
        FULL,
        "latch tap: its sequence number",
    ),
    role("latch_word", Dir::Out, 64, FULL, "latch tap: its word"),
    role(
        "start_valid",
        Dir::Out,
        5,
        FULL,
        "start tap: engine e starts",
    ),
    role(
        "start_seq",
        Dir::Out,
        160,
        FULL,
        "start tap: sequence numbers, 32 bits per engine",
    ),
    role(
        "l2w_valid",
        Dir::Out,
        4,
        FULL,
        "L2 write tap: a write on port p",
    ),
    role(
        "l2w_addr",
        Dir::Out,
        68,
        FULL,
        "L2 write tap: word addresses, 17 bits per port",
    ),
    role(
        "l2w_data",
        Dir::Out,
        512,
        FULL,
        "L2 write tap: data, 128 bits per port",
    ),
    role(
        "l2w_mask",
        Dir::Out,
        32,
        FULL,
        "L2 write tap: element masks, 8 bits per port",
    ),
    role(
        "l2w_seq",
        Dir::Out,
        128,
        FULL,
        "L2 write tap: sequence numbers, 32 bits per port",
    ),
    role("tbl_valid", Dir::Out, 1, FULL, "shape-table write tap"),
    role(
        "tbl_entry",
        Dir::Out,
        7,
        FULL,
        "shape-table write tap: {weight, index}",
    ),
    role(
        "tbl_value",
        Dir::Out,
        48,
        FULL,
        "shape-table write tap: {a, b, c}",
    ),
    role(
        "tbl_seq",
        Dir::Out,
        32,
        FULL,
        "shape-table write tap: sequence number",
    ),
    role("emax_valid", Dir::Out, 1, FULL, "e_max write tap"),
    role("emax_value", Dir::Out, 16, FULL, "e_max write tap: value"),
    role(
        "emax_seq",
        Dir::Out,
        32,
        FULL,
        "e_max write tap: sequence number",
    ),
    role(
        "status",
        Dir::Out,
        32,
        FULL,
        "the status register, every cycle",
    ),
    role(
        "bd_tbl_we",
        Dir::In,
        1,
        FULL,
        "back door: shape-table write enable",
    ),
    role(
        "bd_tbl_entry",
        Dir::In,
        7,
        FULL,
        "back door: shape-table entry",
    ),
    role(
        "bd_tbl_value",
        Dir::In,
        48,
        FULL,
        "back door: shape-table value",
    ),
    role(
        "bd_emax_we",
        Dir::In,
        1,
        FULL,
        "back door: e_max write enable",
    ),
    role("bd_emax_value", Dir::In, 16, FULL, "back door: e_max value"),
];

/// A port of a Verilated top, as its header declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Port {
    pub dir: Dir,
    pub bits: u32,
}

impl Manifest {
    /// Reads and checks the manifest at `path`: its format and version, and
    /// that it names a port for every role its level needs and only known
    /// roles. Errors name the file, and the field (and line) at fault.
    pub fn read(path: &Path) -> Result<Manifest, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the DUT manifest {}: {e}", path.display()))?;
        Manifest::parse(&text, path)
    }

    /// [`Manifest::read`] of `text`, `path` naming it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Manifest, String> {
        let file = path.display();
        let mut de = serde_json::Deserializer::from_str(text);
        let m: Manifest = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let field = e.path().to_string();
            let inner = e.into_inner();
            format!("{file}: field `{field}`: {inner}")
        })?;
        if m.format != FORMAT {
            return Err(format!(
                "{file}: field `format` is `{}`; a DUT manifest says `{FORMAT}`",
                m.format
            ));
        }
        if m.version != VERSION {
            return Err(format!(
                "{file}: field `version` is {}; this pccx-cosim reads version {VERSION}",
                m.version
            ));
        }
        if m.level.0 == FULL && m.interface.host != Host::RequestPort {
            return Err(format!(
                "{file}: field `interface.host`: the `full` level needs pccx_top's request port \
                 (its `acp_req_seq` tap names the instruction behind each host word)"
            ));
        }
        if let Some(unknown) = m.ports.keys().find(|k| !ROLES.iter().any(|r| r.name == *k)) {
            return Err(format!(
                "{file}: field `ports.{unknown}`: no such role (the roles: {})",
                ROLES.iter().map(|r| r.name).collect::<Vec<_>>().join(", ")
            ));
        }
        if let Some(missing) = m.needed().find(|r| !m.ports.contains_key(r.name)) {
            return Err(format!(
                "{file}: field `ports.{}` is missing: the `{}` level needs it ({})",
                missing.name, m.level, missing.what
            ));
        }
        if let Some(extra) = m.ports.keys().find(|k| !m.needed().any(|r| r.name == *k)) {
            return Err(format!(
                "{file}: field `ports.{extra}`: the `{}` level with this `interface` has no \
                 use for it (a port the harness would not drive is a port nobody checks)",
                m.level
            ));
        }
        if m.level.0 == FULL && m.interface.weights != Weights::default() {
            return Err(format!(
                "{file}: field `interface.weights`: the `full` level needs pccx_top's two \
                 128-bit ports, GEMM's then GEMV's (its `ws_seq` tap is per stream)"
            ));
        }
        if m.l2_array.is_none() && m.back_door.is_some() {
            return Err(format!(
                "{file}: field `l2_array` is missing: the back door reads and writes L2 by it"
            ));
        }
        if m.level.0 == FULL && m.back_door.is_none() {
            return Err(format!(
                "{file}: field `back_door` is missing: the `full` level reads the shape \
                 tables and e_max by it"
            ));
        }
        Ok(m)
    }

    /// The roles the manifest's level and interface need, each at the
    /// width this interface gives it.
    pub fn needed(&self) -> impl Iterator<Item = Role> + '_ {
        let data = self.interface.command.data_bits();
        let weights = self.interface.weights;
        ROLES
            .iter()
            .filter(|r| r.level <= self.level.0)
            .filter(|r| r.name != "axi_clk" || self.interface.clocks == Clocks::CoreAndHalfRateAxi)
            .filter(|r| match self.interface.host {
                Host::RequestPort => !r.name.starts_with("host_"),
                Host::Streams => !r.name.starts_with("acp_"),
            })
            .map(move |r| match r.name {
                "wdata" | "rdata" => Role { bits: data, ..*r },
                "wstrb" => Role {
                    bits: data / 8,
                    ..*r
                },
                "ws_valid" | "ws_ready" => Role {
                    bits: weights.ports,
                    ..*r
                },
                "ws_data" => Role {
                    bits: weights.ports * weights.bits,
                    ..*r
                },
                _ => *r,
            })
    }

    /// Checks every needed role's port against the ports of the Verilated
    /// top (`ports`, from [`header_ports`] of `header`): it exists, goes the
    /// right way and has the role's width. `manifest` names the file.
    pub fn check_ports(
        &self,
        manifest: &Path,
        ports: &BTreeMap<String, Port>,
        header: &Path,
    ) -> Result<(), String> {
        let file = manifest.display();
        for role in self.needed() {
            let name = &self.ports[role.name];
            let Some(port) = ports.get(name) else {
                return Err(format!(
                    "{file}: field `ports.{}` names `{name}`, which `{}` does not have \
                     (its ports, from {}: {})",
                    role.name,
                    self.top,
                    header.display(),
                    ports.keys().cloned().collect::<Vec<_>>().join(", ")
                ));
            };
            if port.dir != role.dir || port.bits != role.bits {
                return Err(format!(
                    "{file}: field `ports.{}` names `{name}`, {} of {} bits in `{}`; the \
                     harness needs {} of {} bits ({})",
                    role.name,
                    port.dir.name(),
                    port.bits,
                    self.top,
                    role.dir.name(),
                    role.bits,
                    role.what
                ));
            }
        }
        Ok(())
    }

    /// The C++ defines the shim is compiled with: `PCCX_PORT_<role>` = the
    /// port for each needed role, the level (`PCCX_LEVEL`, 0 black box to
    /// 2 full), L2's array (`PCCX_L2_MEM`, when named) and whether it is kept
    /// through the reset (`PCCX_KEEP_L2`), the back door's names
    /// (`PCCX_BD_*`, when there is one) and the interface's shape.
    pub fn shim_defines(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = self
            .needed()
            .map(|r| (format!("PCCX_PORT_{}", r.name), self.ports[r.name].clone()))
            .collect();
        let flag = |b: bool| String::from(if b { "1" } else { "0" });
        let i = self.interface;
        out.extend([
            ("PCCX_LEVEL".into(), self.level.0.to_string()),
            ("PCCX_AXIL_BITS".into(), i.command.data_bits().to_string()),
            (
                "PCCX_PUSH_KICK".into(),
                flag(i.command == Command::Axil64PushKick),
            ),
            ("PCCX_STATUS_FIFO".into(), flag(i.status == Status::Fifo)),
            ("PCCX_HOST_STREAMS".into(), flag(i.host == Host::Streams)),
            (
                "PCCX_TWO_CLOCKS".into(),
                flag(i.clocks == Clocks::CoreAndHalfRateAxi),
            ),
            ("PCCX_WS_PORTS".into(), i.weights.ports.to_string()),
            ("PCCX_WS_BITS".into(), i.weights.bits.to_string()),
            (
                "PCCX_WS_GEMV_PORTS".into(),
                i.weights.gemv_ports.to_string(),
            ),
        ]);
        // Without a name L2 powers up random and is loaded in full: there
        // is nothing to keep.
        out.push((
            "PCCX_KEEP_L2".into(),
            flag(self.reset == Reset::Synchronised && self.l2_array.is_some()),
        ));
        if let Some(l2) = &self.l2_array {
            out.push(("PCCX_L2_MEM".into(), l2.clone()));
        }
        if let Some(bd) = &self.back_door {
            out.extend([
                ("PCCX_BD_FMAP".into(), bd.fmap_table.clone()),
                ("PCCX_BD_WEIGHT".into(), bd.weight_table.clone()),
                ("PCCX_BD_EMAX".into(), bd.e_max.clone()),
            ]);
        }
        out
    }

    /// Checks that `verilator_file` (read from `text`) selects this
    /// manifest's top module with `--top-module`.
    pub fn check_top(
        &self,
        manifest: &Path,
        verilator_file: &Path,
        text: &str,
    ) -> Result<(), String> {
        let mut words = text
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .flat_map(str::split_whitespace);
        let named = std::iter::from_fn(|| words.next())
            .collect::<Vec<_>>()
            .windows(2)
            .find(|w| w[0] == "--top-module")
            .map(|w| w[1].to_string());
        match named {
            Some(t) if t == self.top => Ok(()),
            Some(t) => Err(format!(
                "{}: field `top` is `{}`, but {} selects `--top-module {t}`",
                manifest.display(),
                self.top,
                verilator_file.display()
            )),
            None => Err(format!(
                "{}: field `top` is `{}`, but {} has no `--top-module`",
                manifest.display(),
                self.top,
                verilator_file.display()
            )),
        }
    }
}

/// The ports a Verilated top's header (`V<prefix>.h`) declares, from its
/// `VL_IN*`/`VL_OUT*` lines: `VL_IN8(&clk,0,0);`, `VL_OUTW(&d,127,0,4);`.
pub fn header_ports(text: &str) -> BTreeMap<String, Port> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        let dir = if line.starts_with("VL_IN") {
            Dir::In
        } else if line.starts_with("VL_OUT") {
            Dir::Out
        } else {
            continue;
        };
        let Some(args) = line
            .split_once("(&")
            .and_then(|(_, rest)| rest.split_once(')'))
            .map(|(args, _)| args)
        else {
            continue;
        };
        let fields: Vec<&str> = args.split(',').map(str::trim).collect();
        let (Some(name), Some(msb), Some(lsb)) = (fields.first(), fields.get(1), fields.get(2))
        else {
            continue;
        };
        if let (Ok(msb), Ok(lsb)) = (msb.parse::<u32>(), lsb.parse::<u32>()) {
            out.insert(
                name.to_string(),
                Port {
                    dir,
                    bits: msb - lsb + 1,
                },
            );
        }
    }
    out
}

/// The source files a Verilator command-line file reads, itself first:
/// every `-F` file it names (relative to its own folder, as `-F` takes
/// them) and every Verilog or SystemVerilog file, recursively; `//` and `#`
/// start comments. A `-f` (relative to the working directory, which a build
/// cannot know) is refused.
pub fn options_file_sources(file: &Path) -> Result<Vec<PathBuf>, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut out = vec![file.to_path_buf()];
    let mut words = text
        .lines()
        .map(|l| {
            l.split("//")
                .next()
                .unwrap_or("")
                .split('#')
                .next()
                .unwrap_or("")
        })
        .flat_map(str::split_whitespace);
    while let Some(word) = words.next() {
        match word {
            "-F" => {
                let next = words
                    .next()
                    .ok_or_else(|| format!("{}: `-F` names no file", file.display()))?;
                out.extend(options_file_sources(&dir.join(next))?);
            }
            "-f" => {
                return Err(format!(
                    "{}: `-f {}` is taken from the working directory; use `-F`, which \
                     takes it from the file's folder",
                    file.display(),
                    words.next().unwrap_or("")
                ))
            }
            w if [".sv", ".v", ".svh", ".vh"].iter().any(|e| w.ends_with(e)) => {
                let source = dir.join(w);
                if !source.is_file() {
                    return Err(format!(
                        "{} lists {w}, which does not exist",
                        file.display()
                    ));
                }
                out.push(source);
            }
            _ => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }

    fn default_text() -> String {
        std::fs::read_to_string(root().join(DEFAULT_MANIFEST)).unwrap()
    }

    fn parse(text: &str) -> Result<Manifest, String> {
        Manifest::parse(text, Path::new("x/dut.json"))
    }

    /// The header lines a top with exactly the manifest's ports at the
    /// roles' widths would have.
    fn header_of(m: &Manifest) -> String {
        m.needed()
            .map(|r| {
                let dir = if r.dir == Dir::In { "IN" } else { "OUT" };
                format!("    VL_{dir}W(&{},{},0,4);\n", m.ports[r.name], r.bits - 1)
            })
            .collect()
    }

    /// `text` with only the roles a black box needs in `ports`.
    fn only_black_box_roles(text: &str) -> String {
        let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
        let ports = v["ports"].as_object_mut().unwrap();
        ports.retain(|k, _| ROLES.iter().any(|r| r.name == k && r.level == BLACK_BOX));
        v.to_string()
    }

    #[test]
    fn weight_ports_of_another_count_and_width_are_read_checked_and_refused_by_field() {
        let black_box = only_black_box_roles(
            &default_text().replace("\"level\": \"full\"", "\"level\": \"black-box\""),
        );
        let mut v: serde_json::Value = serde_json::from_str(&black_box).unwrap();
        v["interface"] = serde_json::json!({"weights": {"bits": 64, "streams": ["gemm", "gemm", "gemv", "gemv"]}});
        let m = parse(&v.to_string()).unwrap();
        assert_eq!(
            m.interface.weights,
            Weights {
                ports: 4,
                bits: 64,
                gemv_ports: 0b1100
            }
        );
        let widths: Vec<(&str, u32)> = m
            .needed()
            .filter(|r| r.name.starts_with("ws_"))
            .map(|r| (r.name, r.bits))
            .collect();
        assert_eq!(widths, [("ws_valid", 4), ("ws_ready", 4), ("ws_data", 256)]);
        let defines = m.shim_defines();
        for d in [
            ("PCCX_WS_PORTS", "4"),
            ("PCCX_WS_BITS", "64"),
            ("PCCX_WS_GEMV_PORTS", "12"),
        ] {
            assert!(defines.contains(&(d.0.into(), d.1.into())), "{d:?}");
        }
        for (weights, says) in [
            (
                serde_json::json!({"bits": 48, "streams": ["gemm", "gemv"]}),
                "field `interface.weights`: `bits` is 48",
            ),
            (
                serde_json::json!({"bits": 64, "streams": ["gemm", "gemm"]}),
                "gives no port to the `gemv` stream",
            ),
            (
                serde_json::json!({"bits": 64, "streams": ["gemm", "gemv", "dma"]}),
                "unknown variant `dma`",
            ),
        ] {
            v["interface"]["weights"] = weights;
            let e = parse(&v.to_string()).unwrap_err();
            assert!(e.contains(says), "{e}");
        }
        // At full, only pccx_top's two 128-bit ports (ws_seq is per stream).
        let mut full: serde_json::Value = serde_json::from_str(&default_text()).unwrap();
        full["interface"] =
            serde_json::json!({"weights": {"bits": 128, "streams": ["gemm", "gemv", "gemv"]}});
        let e = parse(&full.to_string()).unwrap_err();
        assert!(
            e.contains("field `interface.weights`: the `full` level needs pccx_top's two"),
            "{e}"
        );
    }

    #[test]
    fn a_push_and_kick_interface_needs_a_64_bit_axi_lite_and_two_clocks_a_second_clock() {
        let mut v: serde_json::Value = serde_json::from_str(&only_black_box_roles(
            &default_text().replace("\"level\": \"full\"", "\"level\": \"black-box\""),
        ))
        .unwrap();
        v["interface"] = serde_json::json!({
            "command": "axil64-push-kick", "status": "fifo", "clocks": "core-and-half-rate-axi"
        });
        let e = parse(&v.to_string()).unwrap_err();
        assert!(
            e.contains("field `ports.axi_clk` is missing: the `black-box` level needs it"),
            "{e}"
        );
        v["ports"]["axi_clk"] = "aclk".into();
        let m = parse(&v.to_string()).unwrap();
        let header = header_of(&m);
        assert!(header.contains("(&s_wdata,63,0") && header.contains("(&s_wstrb,7,0"));
        assert!(check(&m, &header).is_ok());
        let e = check(&m, &header.replace("(&s_rdata,63,0", "(&s_rdata,31,0")).unwrap_err();
        assert!(
            e.contains("field `ports.rdata` names `s_rdata`, an output of 32 bits")
                && e.contains("needs an output of 64 bits"),
            "{e}"
        );
        let defines = m.shim_defines();
        for d in [
            ("PCCX_PUSH_KICK", "1"),
            ("PCCX_STATUS_FIFO", "1"),
            ("PCCX_TWO_CLOCKS", "1"),
        ] {
            assert!(defines.contains(&(d.0.into(), d.1.into())), "{d:?}");
        }
        v["interface"]["command"] = "axil64-push".into();
        let e = parse(&v.to_string()).unwrap_err();
        assert!(
            e.contains("field `interface.command`: unknown variant `axil64-push`"),
            "{e}"
        );
    }

    #[test]
    fn a_timing_rule_and_a_numerics_profile_are_read_with_their_fields() {
        let m = parse(&default_text()).unwrap();
        assert_eq!(m.timing, DutTiming::Exact);
        assert!(m.numerics.is_none());
        let mut v: serde_json::Value = serde_json::from_str(&default_text()).unwrap();
        v["timing"] = serde_json::json!({"rule": "budget", "tolerance_pct": 25});
        v["numerics"] = "numerics.json".into();
        let m = parse(&v.to_string()).unwrap();
        assert_eq!(
            m.timing,
            DutTiming::Budget {
                tolerance_pct: 25,
                slack_cycles: 0
            }
        );
        assert_eq!(m.numerics.as_deref(), Some(Path::new("numerics.json")));
        v["timing"] = serde_json::json!({"rule": "loose"});
        let e = parse(&v.to_string()).unwrap_err();
        assert!(
            e.contains("field `timing.rule`") && e.contains("unknown variant `loose`"),
            "{e}"
        );
        v["timing"] = serde_json::json!({"rule": "budget"});
        let e = parse(&v.to_string()).unwrap_err();
        assert!(e.contains("missing field `tolerance_pct`"), "{e}");
    }

    fn check(m: &Manifest, header: &str) -> Result<(), String> {
        m.check_ports(
            Path::new("x/dut.json"),
            &header_ports(header),
            Path::new("Vtop.h"),
        )
    }

    #[test]
    fn the_levels_are_golden_s_observation_levels() {
        use pccx_golden::model::Observation;
        let names: Vec<&str> = Observation::ALL.iter().map(|o| o.name()).collect();
        assert_eq!(names, LEVELS);
    }

    #[test]
    fn the_repository_s_manifest_reads_and_names_every_role() {
        let m = parse(&default_text()).unwrap();
        assert_eq!(m.level.name(), "full");
        assert_eq!(m.top, "pccx_top");
        // Every role but the second clock and the six of host streams.
        assert_eq!(m.needed().count(), ROLES.len() - 1 - 6);
        assert!(check(&m, &header_of(&m)).is_ok());
        let defines = m.shim_defines();
        assert!(defines.contains(&("PCCX_PORT_awvalid".into(), "s_awvalid".into())));
        assert!(defines.contains(&("PCCX_LEVEL".into(), "2".into())));
        assert!(defines.contains(&("PCCX_AXIL_BITS".into(), "32".into())));
        assert!(defines.iter().any(|(d, _)| d == "PCCX_BD_EMAX"));
    }

    #[test]
    fn l2_s_name_and_the_reset_s_kind_decide_what_the_random_power_up_keeps() {
        let has = |m: &Manifest, name: &str, value: &str| {
            m.shim_defines().contains(&(name.into(), value.into()))
        };
        // pccx_top: L2 named (left out of the draw), a direct reset (no copy).
        let m = parse(&default_text()).unwrap();
        assert_eq!(m.reset, Reset::Direct);
        assert!(has(&m, "PCCX_KEEP_L2", "0"));
        assert!(m.shim_defines().iter().any(|(d, _)| d == "PCCX_L2_MEM"));
        // The wrapper's variants: named, synchronised: kept by a copy.
        let read = |f: &str| std::fs::read_to_string(root().join(f)).unwrap();
        let m = parse(&read("hw/wrap/dut-4x64.json")).unwrap();
        assert_eq!(m.reset, Reset::Synchronised);
        assert!(has(&m, "PCCX_KEEP_L2", "1"));
        // The wrapper itself: L2 unnamed (a vendor RAM), nothing to keep.
        let m = parse(&read("hw/wrap/dut.json")).unwrap();
        assert!(m.l2_array.is_none());
        assert!(has(&m, "PCCX_KEEP_L2", "0"));
        assert!(!m.shim_defines().iter().any(|(d, _)| d == "PCCX_L2_MEM"));
        // A back door reads L2 by its name.
        let mut v: serde_json::Value = serde_json::from_str(&default_text()).unwrap();
        v.as_object_mut().unwrap().remove("l2_array");
        let e = parse(&v.to_string()).unwrap_err();
        assert!(
            e.contains("field `l2_array` is missing: the back door reads and writes L2 by it"),
            "{e}"
        );
        let mut v: serde_json::Value = serde_json::from_str(&default_text()).unwrap();
        v["reset"] = "synchronized".into();
        let e = parse(&v.to_string()).unwrap_err();
        assert!(
            e.contains("field `reset`: unknown variant `synchronized`, expected `direct` or `synchronised`"),
            "{e}"
        );
    }

    #[test]
    fn host_streams_replace_the_request_port_below_full_only() {
        let text = std::fs::read_to_string(root().join("hw/wrap/dut-streams.json")).unwrap();
        let m = parse(&text).unwrap();
        assert_eq!(m.interface.host, Host::Streams);
        let roles: Vec<&str> = m.needed().map(|r| r.name).collect();
        assert!(roles.contains(&"host_in_data") && roles.contains(&"host_out_ready"));
        assert!(!roles.iter().any(|r| r.starts_with("acp_")), "{roles:?}");
        assert!(m
            .shim_defines()
            .contains(&("PCCX_HOST_STREAMS".into(), "1".into())));
        // A request-port role in a streams manifest is refused by name.
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["ports"]["acp_req_valid"] = "m_acp_req_valid".into();
        let e = parse(&v.to_string()).unwrap_err();
        assert!(
            e.contains("field `ports.acp_req_valid`: the `black-box` level"),
            "{e}"
        );
        // The full level needs the request port's tap.
        let mut v: serde_json::Value = serde_json::from_str(&default_text()).unwrap();
        v["interface"] = serde_json::json!({"host": "streams"});
        let e = parse(&v.to_string()).unwrap_err();
        assert!(
            e.contains("field `interface.host`: the `full` level needs"),
            "{e}"
        );
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["interface"]["host"] = "dma".into();
        let e = parse(&v.to_string()).unwrap_err();
        assert!(
            e.contains("field `interface.host`: unknown variant `dma`, expected `request-port` or `streams`"),
            "{e}"
        );
    }

    #[test]
    fn a_header_s_ports_are_read_with_direction_and_width() {
        let ports = header_ports(
            "    VL_IN8(&clk,0,0);\n    VL_OUTW(&acp_req_wdata,127,0,4);\n    \
             VL_IN16(&s_awaddr,11,0);\n    VL_OUT64(&ws_seq,63,0);\n    int other;\n",
        );
        assert_eq!(ports.len(), 4);
        assert_eq!(
            ports["clk"],
            Port {
                dir: Dir::In,
                bits: 1
            }
        );
        assert_eq!(
            ports["acp_req_wdata"],
            Port {
                dir: Dir::Out,
                bits: 128
            }
        );
        assert_eq!(
            ports["s_awaddr"],
            Port {
                dir: Dir::In,
                bits: 12
            }
        );
        assert_eq!(
            ports["ws_seq"],
            Port {
                dir: Dir::Out,
                bits: 64
            }
        );
    }

    #[test]
    fn an_unknown_level_is_refused_with_the_field_and_line() {
        let text = default_text().replace("\"level\": \"full\"", "\"level\": \"partial\"");
        let e = parse(&text).unwrap_err();
        assert!(e.starts_with("x/dut.json: field `level`"), "{e}");
        assert!(
            e.contains("unknown level `partial`") && e.contains("line 5"),
            "{e}"
        );
    }

    #[test]
    fn a_missing_role_an_unknown_role_and_an_unknown_field_are_refused_by_name() {
        let text = default_text().replace("    \"ret_seq\": \"tr_ret_seq\",\n", "");
        let e = parse(&text).unwrap_err();
        assert!(
            e.contains("field `ports.ret_seq` is missing: the `full` level needs it"),
            "{e}"
        );
        // A black box needs no retire tap, and names no port it does not
        // use.
        let black_box = text.replace("\"level\": \"full\"", "\"level\": \"black-box\"");
        let e = parse(&black_box).unwrap_err();
        assert!(
            e.contains(
                "field `ports.acp_req_seq`: the `black-box` level with this `interface` has no \
                 use for it"
            ),
            "{e}"
        );
        let m = parse(&only_black_box_roles(&black_box)).unwrap();
        assert!(m.needed().all(|r| !r.name.starts_with("ret_")));
        // The full level needs the back door.
        let mut v: serde_json::Value = serde_json::from_str(&default_text()).unwrap();
        v.as_object_mut().unwrap().remove("back_door");
        let e = parse(&v.to_string()).unwrap_err();
        assert!(e.contains("field `back_door` is missing"), "{e}");
        let e = parse(&default_text().replace("\"rst_n\": \"rst_n\"", "\"reset\": \"rst_n\""))
            .unwrap_err();
        assert!(e.contains("field `ports.reset`: no such role"), "{e}");
        let e = parse(&default_text().replace("\"top\":", "\"tops\":")).unwrap_err();
        assert!(e.contains("unknown field `tops`"), "{e}");
        let e = parse(&default_text().replace("\"version\": 1", "\"version\": 2")).unwrap_err();
        assert!(e.contains("field `version` is 2"), "{e}");
    }

    #[test]
    fn a_port_the_top_lacks_or_of_the_wrong_width_or_way_is_refused_by_name() {
        let m = parse(&default_text()).unwrap();
        let header = header_of(&m);
        let e = check(&m, &header.replace("(&tr_ret_seq,", "(&tr_retire_seq,")).unwrap_err();
        assert!(
            e.contains("field `ports.ret_seq` names `tr_ret_seq`, which `pccx_top` does not have"),
            "{e}"
        );
        assert!(
            e.contains("tr_retire_seq"),
            "the top's ports are listed: {e}"
        );
        let e = check(&m, &header.replace("(&s_wdata,31,0", "(&s_wdata,63,0")).unwrap_err();
        assert!(
            e.contains("field `ports.wdata` names `s_wdata`, an input of 64 bits")
                && e.contains("needs an input of 32 bits"),
            "{e}"
        );
        let e = check(&m, &header.replace("VL_INW(&s_wdata", "VL_OUTW(&s_wdata")).unwrap_err();
        assert!(
            e.contains("an output of 32 bits") && e.contains("needs an input"),
            "{e}"
        );
    }

    #[test]
    fn the_top_must_be_the_one_the_verilator_file_selects() {
        let m = parse(&default_text()).unwrap();
        let (path, f) = (Path::new("x/dut.json"), Path::new("x/v.f"));
        assert!(m
            .check_top(path, f, "-Wall\n--top-module pccx_top\n")
            .is_ok());
        let e = m
            .check_top(path, f, "--top-module other_top // a comment\n")
            .unwrap_err();
        assert!(e.contains("field `top` is `pccx_top`, but x/v.f selects `--top-module other_top`"));
        let e = m
            .check_top(path, f, "// --top-module pccx_top\n")
            .unwrap_err();
        assert!(e.contains("has no `--top-module`"), "{e}");
    }

    #[test]
    fn an_options_file_lists_itself_its_f_files_and_their_sources() {
        let files = options_file_sources(&root().join("hw/verilator.f")).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|f| f.strip_prefix(root()).unwrap().display().to_string())
            .collect();
        assert_eq!(names[..2], ["hw/verilator.f", "hw/rtl/manifest.txt"]);
        assert_eq!(names[2], "hw/rtl/pccx_assert_pkg.sv");
        assert!(names.len() > 10 && names[2..].iter().all(|n| n.ends_with(".sv")));
        let dir = std::env::temp_dir().join(format!("pccx-dut-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.f"), "-f b.f\n").unwrap();
        let e = options_file_sources(&dir.join("a.f")).unwrap_err();
        assert!(e.contains("use `-F`"), "{e}");
        std::fs::write(dir.join("a.f"), "gone.sv\n").unwrap();
        let e = options_file_sources(&dir.join("a.f")).unwrap_err();
        assert!(e.contains("lists gone.sv, which does not exist"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
