//! The typed keys of the coverage bins: what a bin counts, as the sampler
//! and the steering name it. A bin's name (in reports and coverage files)
//! is rendered from its key, and only people and files read it: code
//! matches on the key, so a renamed bin is still sampled and steered to.

use super::Group;
use pccx_golden::isa::{CvoFunc, MemRoute};
use pccx_golden::model::{ErrorCode, ShapeTable};
use pccx_golden::Engine;

/// What one coverage bin counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinKey {
    /// A GEMV or GEMM that retired OK with these flags.
    MatFlags {
        engine: Engine,
        findemax: bool,
        accm: bool,
        w_scale: bool,
    },
    /// A MEMCPY along `route` that retired OK, `async` or not.
    MemcpyMode { route: MemRoute, async_: bool },
    /// A MEMSET of this table that retired OK.
    MemsetTable(ShapeTable),
    /// A CVO of this function that retired OK with this flag.
    CvoFlag(CvoFunc, CvoFlag),
    /// A CVO that retired OK with an operand of this shape.
    CvoShape(CvoShape),
    /// Words moved along a data route.
    Route(Route),
    /// An illegal word, by the decoder's reason.
    Illegal(Illegal),
    /// A GEMV or GEMM that failed SHAPE for this reason first.
    Shape(Engine, ShapeReason),
    /// A MEMCPY along `route` that failed with `code` (L2_RANGE or
    /// HOST_RANGE) because of the operand at `end`.
    MemcpyRange {
        code: ErrorCode,
        route: MemRoute,
        end: End,
    },
    /// A GEMV, GEMM or CVO that failed L2_RANGE because of the operand at
    /// this end.
    L2Range(Engine, End),
    /// A CVO of this class that failed L2_RANGE because the operand at this
    /// end ends exactly one word past L2: the edge each of the three range
    /// formulas (SCALE's source has its scale word, REDUCE_SUM's
    /// destination is one word) is off by one at.
    CvoRangeEdge(CvoRangeClass, End),
    /// A GEMV or GEMM that retired OK exactly at this buffer limit.
    AtLimit(Engine, MatLimit),
    /// An instruction of this engine that retired OK.
    Ok(Engine),
    /// A hazard of this kind on this resource between an instruction and
    /// an older one in flight.
    Hazard(HazardKind, Resource),
    /// A barrier of this engine latched while older instructions were in
    /// flight.
    BarrierWaits(Engine),
    /// An instruction latched while a barrier of this engine was in flight.
    BehindBarrier(Engine),
    /// A latch that waited because this engine's FIFO was full.
    FifoFull(Engine),
}

impl BinKey {
    /// The group the bin is reported in.
    pub fn group(self) -> Group {
        match self {
            BinKey::MatFlags { .. }
            | BinKey::MemcpyMode { .. }
            | BinKey::MemsetTable(_)
            | BinKey::CvoFlag(..)
            | BinKey::CvoShape(_) => Group::Flags,
            BinKey::Route(_) => Group::Routes,
            BinKey::Illegal(_)
            | BinKey::Shape(..)
            | BinKey::MemcpyRange { .. }
            | BinKey::L2Range(..)
            | BinKey::CvoRangeEdge(..)
            | BinKey::AtLimit(..)
            | BinKey::Ok(_) => Group::Errors,
            BinKey::Hazard(..) | BinKey::BarrierWaits(_) | BinKey::BehindBarrier(_) => {
                Group::Hazards
            }
            BinKey::FifoFull(_) => Group::FifoFull,
        }
    }

    /// The bin's name as reports and coverage files show it
    /// (docs/coverage.md).
    pub fn name(self) -> String {
        match self {
            BinKey::MatFlags {
                engine,
                findemax,
                accm,
                w_scale,
            } => format!(
                "{} findemax={} accm={} w_scale={}",
                mnemonic(engine),
                u8::from(findemax),
                u8::from(accm),
                u8::from(w_scale)
            ),
            BinKey::MemcpyMode { route, async_ } => format!(
                "memcpy {} {}",
                direction(route),
                if async_ { "async" } else { "sync" }
            ),
            BinKey::MemsetTable(table) => format!("memset {}", table.name()),
            BinKey::CvoFlag(func, flag) => format!("cvo {} {}", func.name(), flag.name()),
            BinKey::CvoShape(shape) => format!("cvo {}", shape.name()),
            BinKey::Route(route) => route.name().into(),
            BinKey::Illegal(reason) => reason.name().into(),
            BinKey::Shape(engine, reason) => {
                format!("SHAPE {} {}", mnemonic(engine), reason.name())
            }
            BinKey::MemcpyRange { code, route, end } => {
                format!("{} memcpy {} {}", code.name(), direction(route), end.name())
            }
            BinKey::L2Range(engine, end) => {
                format!("L2_RANGE {} {}", mnemonic(engine), end.name())
            }
            BinKey::CvoRangeEdge(class, end) => {
                format!("L2_RANGE cvo {} {} one past", class.name(), end.name())
            }
            BinKey::AtLimit(engine, limit) => {
                format!("OK {} at {} limit", mnemonic(engine), limit.name())
            }
            BinKey::Ok(engine) => format!("OK {}", mnemonic(engine)),
            BinKey::Hazard(kind, resource) => format!("{} {}", kind.name(), resource.name()),
            BinKey::BarrierWaits(engine) => format!("barrier {} waits for older", mnemonic(engine)),
            BinKey::BehindBarrier(engine) => {
                format!("younger waits for {} barrier", mnemonic(engine))
            }
            BinKey::FifoFull(engine) => engine.name().into(),
        }
    }

    /// The engine whose instructions the bin is about, when it names one
    /// (a decoder error, a hazard on a resource do not).
    pub fn engine(self) -> Option<Engine> {
        match self {
            BinKey::MatFlags { engine, .. }
            | BinKey::Shape(engine, _)
            | BinKey::L2Range(engine, _)
            | BinKey::AtLimit(engine, _)
            | BinKey::Ok(engine)
            | BinKey::BarrierWaits(engine)
            | BinKey::BehindBarrier(engine)
            | BinKey::FifoFull(engine) => Some(engine),
            BinKey::MemcpyMode { .. } | BinKey::MemcpyRange { .. } => Some(Engine::Mem),
            BinKey::MemsetTable(_) => Some(Engine::Memset),
            BinKey::CvoFlag(..) | BinKey::CvoShape(_) | BinKey::CvoRangeEdge(..) => {
                Some(Engine::Cvo)
            }
            BinKey::Route(route) => Some(route.engine()),
            BinKey::Illegal(reason) => reason.engine(),
            BinKey::Hazard(..) => None,
        }
    }
}

/// The engine's assembler mnemonic, as bin names spell it: `gemv`,
/// `memcpy`, ...
fn mnemonic(engine: Engine) -> String {
    engine.opcode().name().to_ascii_lowercase()
}

/// A MEMCPY's route as bin names spell it.
pub fn direction(route: MemRoute) -> &'static str {
    match route {
        MemRoute::HostToL2 => "host->l2",
        MemRoute::L2ToHost => "l2->host",
        MemRoute::L2ToL2 => "l2->l2",
    }
}

/// The MEMCPY routes, in catalogue order.
pub const MEMCPY_ROUTES: [MemRoute; 3] = [MemRoute::HostToL2, MemRoute::L2ToHost, MemRoute::L2ToL2];

/// A CVO flag a bin counts: its `async` bit either way, or one of its
/// flag bits set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CvoFlag {
    Sync,
    Async,
    SubEmax,
    Accm,
    /// Only SCALE has it.
    RecipScale,
}

impl CvoFlag {
    /// The flags every function has, in catalogue order.
    pub const EVERY_FUNCTION: [CvoFlag; 4] = [
        CvoFlag::Sync,
        CvoFlag::Async,
        CvoFlag::SubEmax,
        CvoFlag::Accm,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CvoFlag::Sync => "sync",
            CvoFlag::Async => "async",
            CvoFlag::SubEmax => "sub_emax",
            CvoFlag::Accm => "accm",
            CvoFlag::RecipScale => "recip_scale",
        }
    }
}

/// CVO operand shapes: the lengths that end on and off a word boundary,
/// and the walk direction the overlap rule picks (docs/cvo.md section 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CvoShape {
    LenZero,
    LenEndsMidWord,
    LenWholeWords,
    Ascending,
    Descending,
}

impl CvoShape {
    pub const ALL: [CvoShape; 5] = [
        CvoShape::LenZero,
        CvoShape::LenEndsMidWord,
        CvoShape::LenWholeWords,
        CvoShape::Ascending,
        CvoShape::Descending,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CvoShape::LenZero => "len=0",
            CvoShape::LenEndsMidWord => "len ends mid-word",
            CvoShape::LenWholeWords => "len whole words",
            CvoShape::Ascending => "dst <= src (ascending)",
            CvoShape::Descending => "dst > src (descending)",
        }
    }
}

/// The data routes words move along.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Route {
    MemcpyHostToL2,
    MemcpyL2ToHost,
    MemcpyL2ToL2,
    GemmFill,
    GemvFill,
    GemmResult,
    GemvResult,
    L2ToCvo,
    CvoToL2,
}

impl Route {
    pub const ALL: [Route; 9] = [
        Route::MemcpyHostToL2,
        Route::MemcpyL2ToHost,
        Route::MemcpyL2ToL2,
        Route::GemmFill,
        Route::GemvFill,
        Route::GemmResult,
        Route::GemvResult,
        Route::L2ToCvo,
        Route::CvoToL2,
    ];

    /// The route's name: its seed route number where it has one.
    pub fn name(self) -> &'static str {
        match self {
            Route::MemcpyHostToL2 => "0x01 host->l2 (memcpy)",
            Route::MemcpyL2ToHost => "0x10 l2->host (memcpy)",
            Route::MemcpyL2ToL2 => "l2->l2 (memcpy)",
            Route::GemmFill => "0x12 l2->l1 (gemm fill)",
            Route::GemvFill => "0x13 l2->l1 (gemv fill)",
            Route::GemmResult => "0x21 gemm->l2 (result)",
            Route::GemvResult => "0x31 gemv->l2 (result)",
            Route::L2ToCvo => "0x14 l2->cvo",
            Route::CvoToL2 => "0x41 cvo->l2",
        }
    }

    /// The engine that moves words along it.
    pub fn engine(self) -> Engine {
        match self {
            Route::MemcpyHostToL2 | Route::MemcpyL2ToHost | Route::MemcpyL2ToL2 => Engine::Mem,
            Route::GemmFill | Route::GemmResult => Engine::Gemm,
            Route::GemvFill | Route::GemvResult => Engine::Gemv,
            Route::L2ToCvo | Route::CvoToL2 => Engine::Cvo,
        }
    }
}

/// Why the decoder rejected a word, without the offending field value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Illegal {
    Opcode,
    CvoFunc,
    DestCache,
    Direction,
}

impl Illegal {
    pub const ALL: [Illegal; 4] = [
        Illegal::Opcode,
        Illegal::CvoFunc,
        Illegal::DestCache,
        Illegal::Direction,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Illegal::Opcode => "ILLEGAL_OPCODE",
            Illegal::CvoFunc => "ILLEGAL_FUNC cvo",
            Illegal::DestCache => "ILLEGAL_DEST_CACHE memset",
            Illegal::Direction => "ILLEGAL_DIRECTION memcpy",
        }
    }

    /// The engine whose field was illegal; none for an opcode no engine
    /// has.
    pub fn engine(self) -> Option<Engine> {
        match self {
            Illegal::Opcode => None,
            Illegal::CvoFunc => Some(Engine::Cvo),
            Illegal::DestCache => Some(Engine::Memset),
            Illegal::Direction => Some(Engine::Mem),
        }
    }
}

/// SHAPE reasons: the one check that refuses the shape when it is the only
/// one that fails (a mutant that breaks one check is seen only then), or
/// `Several`. GEMV has no `zero-m` (M = 0 also fails M = 1), GEMM no `m!=1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShapeReason {
    /// M = 0, every other check passing.
    ZeroM,
    /// K = K' = 0, every other check passing.
    ZeroK,
    /// N = 0, every other check passing.
    ZeroN,
    KMismatch,
    MNotOne,
    OverL1,
    OverAcc,
    /// More than one check fails.
    Several,
}

impl ShapeReason {
    pub const ALL: [ShapeReason; 8] = [
        ShapeReason::ZeroM,
        ShapeReason::ZeroK,
        ShapeReason::ZeroN,
        ShapeReason::KMismatch,
        ShapeReason::MNotOne,
        ShapeReason::OverL1,
        ShapeReason::OverAcc,
        ShapeReason::Several,
    ];

    /// Whether an instruction of `engine` can fail for this reason.
    pub fn possible(self, engine: Engine) -> bool {
        match self {
            ShapeReason::ZeroM => engine == Engine::Gemm,
            ShapeReason::MNotOne => engine == Engine::Gemv,
            _ => true,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ShapeReason::ZeroM => "zero-m",
            ShapeReason::ZeroK => "zero-k",
            ShapeReason::ZeroN => "zero-n",
            ShapeReason::KMismatch => "k-mismatch",
            ShapeReason::MNotOne => "m!=1",
            ShapeReason::OverL1 => "over-l1",
            ShapeReason::OverAcc => "over-acc",
            ShapeReason::Several => "several",
        }
    }
}

/// Which operand of an instruction a range error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum End {
    Src,
    Dest,
}

impl End {
    pub fn name(self) -> &'static str {
        match self {
            End::Src => "src",
            End::Dest => "dest",
        }
    }
}

/// The CVO functions by their range formulas: SCALE reads a scale word
/// before its vector, REDUCE_SUM writes one word, the others read and write
/// the vector's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CvoRangeClass {
    Scale,
    ReduceSum,
    Other,
}

impl CvoRangeClass {
    pub const ALL: [CvoRangeClass; 3] = [
        CvoRangeClass::Scale,
        CvoRangeClass::ReduceSum,
        CvoRangeClass::Other,
    ];

    pub fn of(func: CvoFunc) -> CvoRangeClass {
        match func {
            CvoFunc::Scale => CvoRangeClass::Scale,
            CvoFunc::ReduceSum => CvoRangeClass::ReduceSum,
            _ => CvoRangeClass::Other,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CvoRangeClass::Scale => "scale",
            CvoRangeClass::ReduceSum => "reduce_sum",
            CvoRangeClass::Other => "other",
        }
    }
}

/// The two buffer limits of the SHAPE check: activation words against L1,
/// output words against the accumulators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatLimit {
    L1,
    Acc,
}

impl MatLimit {
    pub const ALL: [MatLimit; 2] = [MatLimit::L1, MatLimit::Acc];

    pub fn name(self) -> &'static str {
        match self {
            MatLimit::L1 => "l1",
            MatLimit::Acc => "acc",
        }
    }
}

/// Hazard kinds: the older instruction writes what the younger reads
/// (RAW), reads what it writes (WAR), or both write it (WAW).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HazardKind {
    Raw,
    War,
    Waw,
}

impl HazardKind {
    pub const ALL: [HazardKind; 3] = [HazardKind::Raw, HazardKind::War, HazardKind::Waw];

    pub fn name(self) -> &'static str {
        match self {
            HazardKind::Raw => "RAW",
            HazardKind::War => "WAR",
            HazardKind::Waw => "WAW",
        }
    }
}

/// The resources a hazard can be on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Resource {
    L2,
    Host,
    /// The shape tables.
    Table,
    EMax,
}

impl Resource {
    pub const ALL: [Resource; 4] = [
        Resource::L2,
        Resource::Host,
        Resource::Table,
        Resource::EMax,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Resource::L2 => "l2",
            Resource::Host => "host",
            Resource::Table => "table",
            Resource::EMax => "e_max",
        }
    }
}
