//! The Rust SDK for sluice plugins (ABI v1, see abi/doc.go).
//!
//! A plugin is a type implementing [`Plugin`] (its name, side outputs and
//! constructor from the config) and one kind trait ([`Filter`], [`Map`],
//! [`FlatMap`], [`Process`] (also behind `reduce!`) or [`Partitioner`]), registered with the
//! matching macro, which generates every ABI export:
//!
//! ```ignore
//! use sluice::{Error, Filter, Plugin, Record};
//! struct Valid;
//! impl Plugin for Valid {
//!     const NAME: &'static str = "valid";
//!     fn open(_: &sluice::Context, _: sluice::Value<'static>) -> Result<Self, Error> { Ok(Valid) }
//! }
//! impl Filter for Valid {
//!     fn filter(&mut self, r: &Record) -> Result<bool, Error> { Ok(r.int("amount") > 0) }
//! }
//! sluice::filter!(Valid);
//! ```
//!
//! Build for `wasm32-unknown-unknown` as a `cdylib` with `panic = "abort"`.
//! Natively the host imports are fakes, so operators run under `cargo test`
//! through [`testing::Harness`].

mod config;
mod hash;
#[cfg(any(test, all(target_arch = "wasm32", not(feature = "std-alloc"))))]
mod heap;
mod host;
mod index;
mod msgpack;
mod record;
mod runtime;
pub mod text;
mod unicode_tables;
#[cfg(not(target_arch = "wasm32"))]
pub mod testing;

pub use hash::{java_string_hash, key_hash};
pub use msgpack::{skip, type_of, DecodeError, Entries, Items, Type, Value, Write, MAX_DEPTH};
pub use record::{Edit, Record};
pub use runtime::{rt, Context, Kind, Output, TimeDomain, MAIN};

/// The i32 status every export returns (abi.Status).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status(pub i32);

impl Status {
    pub const OK: Status = Status(0);
    pub const MALFORMED: Status = Status(-1);
    pub const OUT_OF_MEMORY: Status = Status(-2);
    pub const USER: Status = Status(-3);
    pub const UNSUPPORTED: Status = Status(-4);
    pub const STATE: Status = Status(-5);
    pub const CONFIG: Status = Status(-6);
    pub const HOST: Status = Status(-7);
    pub const LIMIT: Status = Status(-8);
}

/// An operator's failure: the status the export returns and the text the
/// host reports. Made from a string it takes the call's default status:
/// CONFIG in open, USER elsewhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub status: Status,
    pub text: String,
}

impl Error {
    pub fn new(status: Status, text: impl Into<String>) -> Self {
        Error { status, text: text.into() }
    }
    pub fn user(text: impl Into<String>) -> Self {
        Error::new(Status::USER, text)
    }
    pub fn config(text: impl Into<String>) -> Self {
        Error::new(Status::CONFIG, text)
    }
    pub fn malformed(text: impl Into<String>) -> Self {
        Error::new(Status::MALFORMED, text)
    }
    pub fn state(text: impl Into<String>) -> Self {
        Error::new(Status::STATE, text)
    }
    fn prefixed(mut self, prefix: &str) -> Self {
        self.text.insert_str(0, prefix);
        self
    }
}

impl From<&str> for Error {
    fn from(text: &str) -> Self {
        Error::new(Status::OK, text)
    }
}

impl From<String> for Error {
    fn from(text: String) -> Self {
        Error::new(Status::OK, text)
    }
}

/// What every plugin declares.
pub trait Plugin: Sized {
    /// The name reported by describe.
    const NAME: &'static str;
    /// Side-output tags; output handle i + 1 is `OUTPUTS[i]`.
    const OUTPUTS: &'static [&'static str] = &[];
    /// Whether the operator uses keyed state (reported by describe).
    const KEYED: bool = false;
    /// Builds the operator from its config (a msgpack map, valid for the
    /// instance's life, so views of it may be kept).
    fn open(ctx: &Context, config: Value<'static>) -> Result<Self, Error>;
    /// Called once at the end of the input; may emit final records.
    fn close(&mut self, _out: &mut Output) -> Result<(), Error> {
        Ok(())
    }
    /// Whether the operator keeps operator state (abi.ExportSnapshot):
    /// what it holds in its own fields beyond keyed state, checkpointed
    /// through `snapshot` and `restore`. Without it the SDK answers the
    /// host's calls unsupported and the host checkpoints none.
    const OPERATOR_STATE: bool = false;
    /// The operator state as bytes, at a checkpoint; it must not change it.
    fn snapshot(&self) -> Result<Vec<u8>, Error> {
        Ok(Vec::new())
    }
    /// Bytes `snapshot` returned, given back after open and before the
    /// first record when the job starts from a checkpoint: once per
    /// snapshot the subtask gets (several or none after a rescale), so it
    /// merges them into the state (a count adds).
    fn restore(&mut self, _state: &[u8]) -> Result<(), Error> {
        Ok(())
    }
}

/// Keeps the records for which `filter` is true.
pub trait Filter: Plugin {
    fn filter(&mut self, r: &Record) -> Result<bool, Error>;
}

/// One output record per input record: edit `out`, which starts as `r`.
pub trait Map: Plugin {
    fn map(&mut self, r: &Record, out: &mut Edit) -> Result<(), Error>;
}

/// Zero or more output records per input record.
pub trait FlatMap: Plugin {
    fn flat_map(&mut self, r: &Record, out: &mut Output) -> Result<(), Error>;
}

/// Anything: side outputs, keyed state; `port` is the input (0, or 1 for a
/// second input).
pub trait Process: Plugin {
    fn process(&mut self, port: i32, r: &Record, out: &mut Output) -> Result<(), Error>;
}

/// The window a [`ProcessWindow`] call is for: its bounds in epoch
/// milliseconds (end exclusive) and its key (None for a window-all).
pub struct Window<'a> {
    pub start: i64,
    pub end: i64,
    pub key: Option<Value<'a>>,
}

impl<'a> Window<'a> {
    /// end - 1, the window's last millisecond (Flink's maxTimestamp), the
    /// event time of its output.
    pub fn max_timestamp(&self) -> i64 {
        self.end - 1
    }
}

/// A process-window function, Flink's ProcessWindowFunction: when a window
/// fires it gets the window and every record the window holds, in arrival
/// order, and emits the window's output (maps; the host adds the window's
/// bounds, key and max timestamp). Describe says "process-window".
pub trait ProcessWindow: Plugin {
    fn process_window(&mut self, w: &Window, records: &[Record], out: &mut Output) -> Result<(), Error>;
}

/// A keyed [`Process`] with timers (Flink's KeyedProcessFunction.onTimer):
/// called when a timer it registered (`out.register_event_time_timer(r.key,
/// ts)`) fires, with the timer's key, for emits and keyed state under it.
/// Register it with `sluice::process!(T); sluice::on_timer!(T);`.
pub trait OnTimer: Process {
    fn on_timer(&mut self, domain: TimeDomain, ts: i64, key: Value, out: &mut Output) -> Result<(), Error>;
}

/// Generates the `sluice_on_timer` export of an [`OnTimer`], after
/// `sluice::process!(T)`.
#[macro_export]
macro_rules! on_timer {
    ($t:ty) => {
        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn sluice_on_timer(kind: i32, ts: i64, ptr: i32, len: i32) -> i32 {
            unsafe { $crate::rt::on_timer(&mut __SLUICE_OP, kind, ts, $crate::rt::input(ptr, len)) }
        }
    };
}

/// A custom partitioner: the channel in [0, n) of a record's key.
pub trait Partitioner: Plugin {
    fn partition(&mut self, key: Option<Value>, n: i32) -> Result<i32, Error>;
}

/// Registers a [`Filter`] and generates the ABI exports.
#[macro_export]
macro_rules! filter {
    ($t:ty) => {
        $crate::__operator!($t, $crate::rt::Kind::Filter, $crate::rt::process_filter);
    };
}

/// Registers a [`Map`] and generates the ABI exports.
#[macro_export]
macro_rules! map {
    ($t:ty) => {
        $crate::__operator!($t, $crate::rt::Kind::Map, $crate::rt::process_map);
    };
}

/// Registers a [`FlatMap`] and generates the ABI exports.
#[macro_export]
macro_rules! flat_map {
    ($t:ty) => {
        $crate::__operator!($t, $crate::rt::Kind::FlatMap, $crate::rt::process_flat_map);
    };
}

/// Registers a [`Process`] and generates the ABI exports.
#[macro_export]
macro_rules! process {
    ($t:ty) => {
        $crate::__operator!($t, $crate::rt::Kind::Process, $crate::rt::process_process);
    };
}

/// Registers a keyed reduce, Flink's `KeyedStream.reduce`: a [`Process`]
/// run on input 0 after a key-by, which keeps the key's accumulator in
/// keyed state (`out.state_get/state_put`) and emits the running result;
/// describe says "reduce", keyed. Generates the ABI exports.
#[macro_export]
macro_rules! reduce {
    ($t:ty) => {
        $crate::__operator!($t, $crate::rt::Kind::Reduce, $crate::rt::process_reduce);
    };
}

/// Registers a [`ProcessWindow`] and generates the ABI exports.
#[macro_export]
macro_rules! process_window {
    ($t:ty) => {
        $crate::__operator!($t, $crate::rt::Kind::ProcessWindow, $crate::rt::process_window);
    };
}

/// Registers a [`Partitioner`] and generates the ABI exports.
#[macro_export]
macro_rules! partitioner {
    ($t:ty) => {
        $crate::__common_exports!($t, $crate::rt::Kind::Partitioner);
        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn sluice_partition(ptr: i32, len: i32, count: i32, n: i32) -> i32 {
            unsafe { $crate::rt::partition(&mut __SLUICE_OP, $crate::rt::input(ptr, len), count, n) }
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __operator {
    ($t:ty, $kind:expr, $run:path) => {
        $crate::__common_exports!($t, $kind);
        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn sluice_process(port: i32, ptr: i32, len: i32, count: i32) -> i32 {
            unsafe { $run(&mut __SLUICE_OP, port, $crate::rt::input(ptr, len), count) }
        }
        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn sluice_close() -> i32 {
            unsafe { $crate::rt::close(&mut __SLUICE_OP) }
        }
        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn sluice_snapshot() -> i32 {
            unsafe { $crate::rt::snapshot(&__SLUICE_OP) }
        }
        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn sluice_restore(ptr: i32, len: i32) -> i32 {
            unsafe { $crate::rt::restore(&mut __SLUICE_OP, $crate::rt::input(ptr, len)) }
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __common_exports {
    ($t:ty, $kind:expr) => {
        // The instance's operator: a wasm instance runs one call at a time.
        #[cfg(target_arch = "wasm32")]
        static mut __SLUICE_OP: Option<$t> = None;
        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn sluice_abi_v1() {}
        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn sluice_buffer(size: i32) -> i32 {
            $crate::rt::buffer(size)
        }
        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn sluice_open(ptr: i32, len: i32, subtask: i32, par: i32, maxpar: i32) -> i32 {
            unsafe { $crate::rt::open(&mut __SLUICE_OP, $crate::rt::input(ptr, len), subtask, par, maxpar) }
        }
        #[cfg(target_arch = "wasm32")]
        #[no_mangle]
        pub extern "C" fn sluice_describe() -> i32 {
            $crate::rt::describe::<$t>($kind)
        }
    };
}
