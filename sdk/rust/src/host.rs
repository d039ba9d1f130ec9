//! The host functions of ABI v1 (module "sluice_v1", abi/abi.go). On wasm32
//! they are the real imports; natively they are fakes recording what the
//! guest did, so operators run under `cargo test` (see [`crate::testing`]).

#[cfg(target_arch = "wasm32")]
mod imp {
    #[link(wasm_import_module = "sluice_v1")]
    extern "C" {
        #[link_name = "emit"]
        fn host_emit(port: i32, ptr: *const u8, len: usize, count: i32) -> i32;
        #[link_name = "emit_ends"]
        fn host_emit_ends(port: i32, ptr: *const u8, len: usize, count: i32, ends: *const u8) -> i32;
        #[link_name = "port"]
        fn host_port(ptr: *const u8, len: usize) -> i32;
        #[link_name = "error"]
        fn host_error(ptr: *const u8, len: usize);
        #[link_name = "state_get"]
        fn host_state_get(slot: i32, kp: *const u8, kl: usize, bp: *mut u8, bc: usize) -> i32;
        #[link_name = "state_put"]
        fn host_state_put(slot: i32, kp: *const u8, kl: usize, vp: *const u8, vl: usize) -> i32;
        #[link_name = "state_del"]
        fn host_state_del(slot: i32, kp: *const u8, kl: usize) -> i32;
        // optional: list and map state; a module imports only those it calls
        #[link_name = "state_list_get"]
        fn host_list_get(slot: i32, kp: *const u8, kl: usize, bp: *mut u8, bc: usize) -> i32;
        #[link_name = "state_list_append"]
        fn host_list_append(slot: i32, kp: *const u8, kl: usize, vp: *const u8, vl: usize) -> i32;
        #[link_name = "state_list_update"]
        fn host_list_update(slot: i32, kp: *const u8, kl: usize, wp: *const u8, wl: usize) -> i32;
        #[link_name = "state_map_get"]
        fn host_map_get(slot: i32, kp: *const u8, kl: usize, up: *const u8, ul: usize, bp: *mut u8, bc: usize) -> i32;
        #[link_name = "state_map_put"]
        fn host_map_put(slot: i32, kp: *const u8, kl: usize, up: *const u8, ul: usize, vp: *const u8, vl: usize) -> i32;
        #[link_name = "state_map_del"]
        fn host_map_del(slot: i32, kp: *const u8, kl: usize, up: *const u8, ul: usize) -> i32;
        #[link_name = "state_map_contains"]
        fn host_map_contains(slot: i32, kp: *const u8, kl: usize, up: *const u8, ul: usize) -> i32;
        #[link_name = "state_map_entries"]
        fn host_map_entries(slot: i32, kp: *const u8, kl: usize, bp: *mut u8, bc: usize) -> i32;
        #[link_name = "state_clear"]
        fn host_state_clear(slot: i32, kp: *const u8, kl: usize) -> i32;
        // optional: timers (abi/timers.go)
        #[link_name = "timer_register"]
        fn host_timer_register(kind: i32, kp: *const u8, kl: usize, ts: i64) -> i32;
        #[link_name = "timer_delete"]
        fn host_timer_delete(kind: i32, kp: *const u8, kl: usize, ts: i64) -> i32;
        #[link_name = "current_watermark"]
        fn host_current_watermark() -> i64;
        #[link_name = "current_processing_time"]
        fn host_current_processing_time() -> i64;
    }
    pub fn timer_register(kind: i32, key: &[u8], ts: i64) -> i32 {
        unsafe { host_timer_register(kind, key.as_ptr(), key.len(), ts) }
    }
    pub fn timer_delete(kind: i32, key: &[u8], ts: i64) -> i32 {
        unsafe { host_timer_delete(kind, key.as_ptr(), key.len(), ts) }
    }
    pub fn current_watermark() -> i64 {
        unsafe { host_current_watermark() }
    }
    pub fn current_processing_time() -> i64 {
        unsafe { host_current_processing_time() }
    }
    pub fn list_get(slot: i32, key: &[u8], buf: &mut [u8]) -> i32 {
        unsafe { host_list_get(slot, key.as_ptr(), key.len(), buf.as_mut_ptr(), buf.len()) }
    }
    pub fn list_append(slot: i32, key: &[u8], val: &[u8]) -> i32 {
        unsafe { host_list_append(slot, key.as_ptr(), key.len(), val.as_ptr(), val.len()) }
    }
    pub fn list_update(slot: i32, key: &[u8], wire: &[u8]) -> i32 {
        unsafe { host_list_update(slot, key.as_ptr(), key.len(), wire.as_ptr(), wire.len()) }
    }
    pub fn map_get(slot: i32, key: &[u8], uk: &[u8], buf: &mut [u8]) -> i32 {
        unsafe { host_map_get(slot, key.as_ptr(), key.len(), uk.as_ptr(), uk.len(), buf.as_mut_ptr(), buf.len()) }
    }
    pub fn map_put(slot: i32, key: &[u8], uk: &[u8], val: &[u8]) -> i32 {
        unsafe { host_map_put(slot, key.as_ptr(), key.len(), uk.as_ptr(), uk.len(), val.as_ptr(), val.len()) }
    }
    pub fn map_del(slot: i32, key: &[u8], uk: &[u8]) -> i32 {
        unsafe { host_map_del(slot, key.as_ptr(), key.len(), uk.as_ptr(), uk.len()) }
    }
    pub fn map_contains(slot: i32, key: &[u8], uk: &[u8]) -> i32 {
        unsafe { host_map_contains(slot, key.as_ptr(), key.len(), uk.as_ptr(), uk.len()) }
    }
    pub fn map_entries(slot: i32, key: &[u8], buf: &mut [u8]) -> i32 {
        unsafe { host_map_entries(slot, key.as_ptr(), key.len(), buf.as_mut_ptr(), buf.len()) }
    }
    pub fn state_clear(slot: i32, key: &[u8]) -> i32 {
        unsafe { host_state_clear(slot, key.as_ptr(), key.len()) }
    }

    // Safety: the host reads (or, for state_get, writes at most buf.len()
    // bytes of) exactly the ranges given, and copies before returning.
    pub fn emit(port: i32, b: &[u8], count: i32) -> i32 {
        unsafe { host_emit(port, b.as_ptr(), b.len(), count) }
    }
    /// emit with the end of each record: `ends` holds count little-endian
    /// u32 (abi.ImportEmitEnds).
    pub fn emit_ends(port: i32, b: &[u8], count: i32, ends: &[u8]) -> i32 {
        debug_assert_eq!(ends.len(), 4 * count as usize);
        unsafe { host_emit_ends(port, b.as_ptr(), b.len(), count, ends.as_ptr()) }
    }
    pub fn port(tag: &[u8]) -> i32 {
        unsafe { host_port(tag.as_ptr(), tag.len()) }
    }
    pub fn error(text: &[u8]) {
        unsafe { host_error(text.as_ptr(), text.len()) }
    }
    pub fn state_get(slot: i32, key: &[u8], buf: &mut [u8]) -> i32 {
        unsafe { host_state_get(slot, key.as_ptr(), key.len(), buf.as_mut_ptr(), buf.len()) }
    }
    pub fn state_put(slot: i32, key: &[u8], val: &[u8]) -> i32 {
        unsafe { host_state_put(slot, key.as_ptr(), key.len(), val.as_ptr(), val.len()) }
    }
    pub fn state_del(slot: i32, key: &[u8]) -> i32 {
        unsafe { host_state_del(slot, key.as_ptr(), key.len()) }
    }
}

#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod imp {
    use std::cell::RefCell;
    use std::collections::{BTreeMap, HashMap};

    /// What the fake host saw during calls on this thread.
    #[derive(Default)]
    pub struct Fake {
        /// (port, bytes, count) of every emit.
        pub emits: Vec<(i32, Vec<u8>, i32)>,
        /// The last error text.
        pub error: String,
        /// Ports by side-output tag; a missing tag gets -1 (not consumed).
        /// `Harness::new` maps each declared output `OUTPUTS[i]` to i + 1.
        pub ports: HashMap<String, i32>,
        /// Keyed state by (slot, key).
        pub state: HashMap<(i32, Vec<u8>), Vec<u8>>,
        /// List state by (slot, key).
        pub lists: HashMap<(i32, Vec<u8>), Vec<Vec<u8>>>,
        /// Map state by (slot, key), user keys in order.
        pub maps: HashMap<(i32, Vec<u8>), BTreeMap<Vec<u8>, Vec<u8>>>,
        /// When non-zero, what emit returns.
        pub emit_status: i32,
        /// Pending timers: (kind, ts, key), one per (kind, key, ts).
        pub timers: std::collections::BTreeSet<(i32, i64, Vec<u8>)>,
        /// What current_watermark and current_processing_time return.
        pub watermark: i64,
        pub processing_time: i64,
    }

    thread_local!(pub static FAKE: RefCell<Fake> = RefCell::new(Fake::default()));

    pub fn timer_register(kind: i32, key: &[u8], ts: i64) -> i32 {
        if !(0..=1).contains(&kind) {
            return -5;
        }
        FAKE.with(|f| f.borrow_mut().timers.insert((kind, ts, key.to_vec())));
        0
    }
    pub fn timer_delete(kind: i32, key: &[u8], ts: i64) -> i32 {
        if !(0..=1).contains(&kind) {
            return -5;
        }
        FAKE.with(|f| f.borrow_mut().timers.remove(&(kind, ts, key.to_vec())));
        0
    }
    pub fn current_watermark() -> i64 {
        FAKE.with(|f| f.borrow().watermark)
    }
    pub fn current_processing_time() -> i64 {
        FAKE.with(|f| f.borrow().processing_time)
    }

    pub fn emit(port: i32, b: &[u8], count: i32) -> i32 {
        FAKE.with(|f| {
            let mut f = f.borrow_mut();
            if f.emit_status != 0 {
                return f.emit_status;
            }
            f.emits.push((port, b.to_vec(), count));
            0
        })
    }
    /// Checks the ends as the host does (abi.CheckBatchEnds), then emits.
    pub fn emit_ends(port: i32, b: &[u8], count: i32, ends: &[u8]) -> i32 {
        let mut start = 0;
        for i in 0..count.max(0) as usize {
            let end = match ends.get(4 * i..4 * i + 4) {
                Some(e) => u32::from_le_bytes([e[0], e[1], e[2], e[3]]) as usize,
                None => return -1,
            };
            if end <= start || end > b.len() || crate::msgpack::skip(&b[..end], start) != Ok(end) {
                return -1; // StatusMalformed
            }
            start = end;
        }
        if start != b.len() || ends.len() != 4 * count.max(0) as usize {
            return -1;
        }
        emit(port, b, count)
    }
    pub fn port(tag: &[u8]) -> i32 {
        FAKE.with(|f| *f.borrow().ports.get(&*String::from_utf8_lossy(tag)).unwrap_or(&-1))
    }
    pub fn error(text: &[u8]) {
        FAKE.with(|f| f.borrow_mut().error = String::from_utf8_lossy(text).into_owned());
    }
    pub fn state_get(slot: i32, key: &[u8], buf: &mut [u8]) -> i32 {
        FAKE.with(|f| match f.borrow().state.get(&(slot, key.to_vec())) {
            None => -1,
            Some(v) => {
                if v.len() <= buf.len() {
                    buf[..v.len()].copy_from_slice(v);
                }
                v.len() as i32
            }
        })
    }
    pub fn state_put(slot: i32, key: &[u8], val: &[u8]) -> i32 {
        FAKE.with(|f| f.borrow_mut().state.insert((slot, key.to_vec()), val.to_vec()));
        0
    }
    pub fn state_del(slot: i32, key: &[u8]) -> i32 {
        FAKE.with(|f| f.borrow_mut().state.remove(&(slot, key.to_vec())));
        0
    }

    fn give(w: &[u8], buf: &mut [u8]) -> i32 {
        if w.len() <= buf.len() {
            buf[..w.len()].copy_from_slice(w);
        }
        w.len() as i32
    }
    fn put_item(w: &mut Vec<u8>, b: &[u8]) {
        w.extend_from_slice(&(b.len() as u32).to_le_bytes());
        w.extend_from_slice(b);
    }
    pub fn list_get(slot: i32, key: &[u8], buf: &mut [u8]) -> i32 {
        FAKE.with(|f| match f.borrow().lists.get(&(slot, key.to_vec())) {
            None => -1,
            Some(l) => {
                let mut w = Vec::new();
                for e in l {
                    put_item(&mut w, e);
                }
                give(&w, buf)
            }
        })
    }
    pub fn list_append(slot: i32, key: &[u8], val: &[u8]) -> i32 {
        FAKE.with(|f| f.borrow_mut().lists.entry((slot, key.to_vec())).or_default().push(val.to_vec()));
        0
    }
    pub fn list_update(slot: i32, key: &[u8], wire: &[u8]) -> i32 {
        let mut l = Vec::new();
        let mut w = wire;
        while !w.is_empty() {
            if w.len() < 4 {
                return -5;
            }
            let n = u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as usize;
            if n > w.len() - 4 {
                return -5;
            }
            l.push(w[4..4 + n].to_vec());
            w = &w[4 + n..];
        }
        FAKE.with(|f| {
            let mut f = f.borrow_mut();
            if l.is_empty() {
                f.lists.remove(&(slot, key.to_vec()));
            } else {
                f.lists.insert((slot, key.to_vec()), l);
            }
        });
        0
    }
    pub fn map_get(slot: i32, key: &[u8], uk: &[u8], buf: &mut [u8]) -> i32 {
        FAKE.with(|f| match f.borrow().maps.get(&(slot, key.to_vec())).and_then(|m| m.get(uk)) {
            None => -1,
            Some(v) => give(v, buf),
        })
    }
    pub fn map_put(slot: i32, key: &[u8], uk: &[u8], val: &[u8]) -> i32 {
        FAKE.with(|f| f.borrow_mut().maps.entry((slot, key.to_vec())).or_default().insert(uk.to_vec(), val.to_vec()));
        0
    }
    pub fn map_del(slot: i32, key: &[u8], uk: &[u8]) -> i32 {
        FAKE.with(|f| {
            let mut f = f.borrow_mut();
            let k = (slot, key.to_vec());
            if let Some(m) = f.maps.get_mut(&k) {
                m.remove(uk);
                if m.is_empty() {
                    f.maps.remove(&k);
                }
            }
        });
        0
    }
    pub fn map_contains(slot: i32, key: &[u8], uk: &[u8]) -> i32 {
        FAKE.with(|f| f.borrow().maps.get(&(slot, key.to_vec())).map_or(0, |m| m.contains_key(uk) as i32))
    }
    pub fn map_entries(slot: i32, key: &[u8], buf: &mut [u8]) -> i32 {
        FAKE.with(|f| match f.borrow().maps.get(&(slot, key.to_vec())) {
            None => -1,
            Some(m) => {
                let mut w = Vec::new();
                for (k, v) in m {
                    put_item(&mut w, k);
                    put_item(&mut w, v);
                }
                give(&w, buf)
            }
        })
    }
    pub fn state_clear(slot: i32, key: &[u8]) -> i32 {
        FAKE.with(|f| {
            let mut f = f.borrow_mut();
            let k = (slot, key.to_vec());
            f.state.remove(&k);
            f.lists.remove(&k);
            f.maps.remove(&k);
        });
        0
    }
}

pub(crate) use imp::{
    current_processing_time, current_watermark, emit, emit_ends, error, list_append, list_get, list_update, map_contains, map_del, map_entries, map_get, map_put, port,
    state_clear, state_del, state_get, state_put, timer_delete, timer_register,
};
