//! Running operators natively (`cargo test`): a [`Harness`] calls the same
//! functions the wasm exports call, against a fake host that records every
//! emit, the error text and keyed state.

use crate::host::imp::FAKE;
pub use crate::host::imp::Fake;
use crate::msgpack::{Value, Write};
use crate::record::put_envelope;
use crate::runtime::rt;
use crate::{Filter, FlatMap, Map, OnTimer, Partitioner, Plugin, Process};

/// Runs `f` on this thread's fake host (e.g. to map a tag to a port).
pub fn fake<R>(f: impl FnOnce(&mut Fake) -> R) -> R {
    FAKE.with(|h| f(&mut h.borrow_mut()))
}

/// Appends the envelope `[time, key, value]` to `batch` (the key and value
/// as raw msgpack).
pub fn envelope(batch: &mut Vec<u8>, time: Option<i64>, key: Option<&[u8]>, value: &[u8]) {
    put_envelope(batch, time, key.map(Value::from_raw));
    batch.put_raw(value);
}

/// One plugin instance over the fake host of this thread.
///
/// Every side output the plugin declares is routed: `P::OUTPUTS[i]` gets
/// port `i + 1`, its output handle, as Go's sdktest gives each declared
/// tag a port, so an emit to it shows up in [`Harness::take_emits`]. To
/// test a side output that nothing consumes (the host gives it port -1
/// and the SDK drops what is sent there), use [`Harness::unconsumed`];
/// another mapping can be set before `open` with
/// `fake(|f| f.ports.insert(tag.into(), port))`.
pub struct Harness<P> {
    op: Option<P>,
}

impl<P: Plugin> Harness<P> {
    /// A fresh instance: the engine and the fake host are reset, and each
    /// declared side output `P::OUTPUTS[i]` is mapped to port `i + 1`.
    pub fn new() -> Self {
        rt::reset();
        let mut f = Fake { watermark: i64::MIN, ..Fake::default() };
        for (i, tag) in P::OUTPUTS.iter().enumerate() {
            f.ports.insert((*tag).into(), i as i32 + 1);
        }
        FAKE.with(|h| *h.borrow_mut() = f);
        Harness { op: None }
    }

    /// Marks side outputs as consumed by nothing (port -1), as Go's
    /// `sdktest.Options.Unconsumed`; call it before `open`.
    pub fn unconsumed(self, tags: &[&str]) -> Self {
        fake(|f| {
            for tag in tags {
                f.ports.insert((*tag).into(), -1);
            }
        });
        self
    }

    /// The operator, once open.
    pub fn operator(&mut self) -> Option<&mut P> {
        self.op.as_mut()
    }

    pub fn open(&mut self, config: &[u8]) -> i32 {
        rt::open(&mut self.op, config, 0, 1, 128)
    }

    pub fn close(&mut self) -> i32 {
        rt::close(&mut self.op)
    }

    /// sluice_snapshot: the state is then one emit on port 0.
    pub fn snapshot(&mut self) -> i32 {
        rt::snapshot(&self.op)
    }

    /// sluice_restore with one element (a msgpack bin).
    pub fn restore(&mut self, element: &[u8]) -> i32 {
        rt::restore(&mut self.op, element)
    }

    /// Takes what was emitted so far: (port, bytes, count) per emit.
    pub fn take_emits(&self) -> Vec<(i32, Vec<u8>, i32)> {
        fake(|f| std::mem::take(&mut f.emits))
    }

    /// The last error text sent.
    pub fn error(&self) -> String {
        fake(|f| f.error.clone())
    }
}

impl<P: Plugin> Default for Harness<P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P: Filter> Harness<P> {
    pub fn filter(&mut self, batch: &[u8], count: i32) -> i32 {
        rt::process_filter(&mut self.op, 0, batch, count)
    }
}

impl<P: Map> Harness<P> {
    pub fn map(&mut self, batch: &[u8], count: i32) -> i32 {
        rt::process_map(&mut self.op, 0, batch, count)
    }
}

impl<P: FlatMap> Harness<P> {
    pub fn flat_map(&mut self, batch: &[u8], count: i32) -> i32 {
        rt::process_flat_map(&mut self.op, 0, batch, count)
    }
}

impl<P: Process> Harness<P> {
    pub fn process(&mut self, port: i32, batch: &[u8], count: i32) -> i32 {
        rt::process_process(&mut self.op, port, batch, count)
    }
    /// The batch through a `reduce!` operator (input 0).
    pub fn reduce(&mut self, batch: &[u8], count: i32) -> i32 {
        rt::process_reduce(&mut self.op, 0, batch, count)
    }
}

impl<P: crate::ProcessWindow> Harness<P> {
    /// A window's call through a `process_window!` operator: the batch is
    /// the window's header record, then its records.
    pub fn process_window(&mut self, batch: &[u8], count: i32) -> i32 {
        rt::process_window(&mut self.op, 0, batch, count)
    }
}

impl<P: OnTimer> Harness<P> {
    /// Moves the watermark to `wm` and fires the event-time timers it
    /// passes, earliest first, as the host does; returns the first
    /// non-zero status.
    pub fn watermark(&mut self, wm: i64) -> i32 {
        fake(|f| f.watermark = f.watermark.max(wm));
        self.fire(0, wm)
    }
    /// Moves the processing-time clock to `now` and fires what it passes.
    pub fn processing_time(&mut self, now: i64) -> i32 {
        fake(|f| f.processing_time = f.processing_time.max(now));
        self.fire(1, now)
    }
    fn fire(&mut self, kind: i32, up_to: i64) -> i32 {
        loop {
            let next = fake(|f| {
                let t = f.timers.iter().find(|(k, ts, _)| *k == kind && *ts <= up_to).cloned();
                if let Some(t) = &t {
                    f.timers.remove(t);
                }
                t
            });
            let (k, ts, key) = match next {
                Some(t) => t,
                None => return 0,
            };
            let st = rt::on_timer(&mut self.op, k, ts, &key);
            if st != 0 {
                return st;
            }
        }
    }
}

impl<P: Partitioner> Harness<P> {
    pub fn partition(&mut self, batch: &[u8], count: i32, n: i32) -> i32 {
        rt::partition(&mut self.op, batch, count, n)
    }
}
