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
    use std::collections::HashMap;

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
        /// When non-zero, what emit returns.
        pub emit_status: i32,
    }

    thread_local!(pub static FAKE: RefCell<Fake> = RefCell::new(Fake::default()));

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
}

pub(crate) use imp::{emit, emit_ends, error, port, state_del, state_get, state_put};
