//! The SDK's global allocator in a wasm build: segregated free lists over
//! the memory `memory.grow` extends, as the C SDK's sluice_alloc.h (see
//! RATIONALE.md, "Why do the C and Rust SDKs bring their own malloc?").
//!
//! Rust's std brings dlmalloc, about 9 KB of a small plugin's code, which
//! the host validates at every start, and which takes new pages with
//! `memory.grow` at the first allocation instead of the free tail of the
//! initial memory. A plugin allocates little (the SDK's buffers grow by
//! doubling and live as long as the instance), so this is enough: a size
//! class per request (16-byte steps up to 64 bytes, then four classes per
//! power of two: at most a quarter wasted, a power of two fits exactly);
//! a freed block goes on its class's list, reused for that class only; new
//! blocks are cut from the top of the heap, starting at `__heap_base`. No
//! header: `dealloc` is told the layout, hence the class. Memory grown by
//! someone else after the heap's first allocation is left alone. The
//! feature `std-alloc` keeps dlmalloc.

/// The number of size classes (requests up to 2^30 bytes).
pub(crate) const CLASSES: usize = 100;
const MAX: usize = 1 << 30;

/// class returns the size class of a request of n bytes (1 <= n <= MAX)
/// and the size of its blocks.
#[inline]
pub(crate) fn class(n: usize) -> (usize, usize) {
    if n <= 64 {
        let s = (n + 15) & !15;
        return (s / 16 - 1, s);
    }
    let k = (usize::BITS - 1 - (n - 1).leading_zeros()) as usize; // 2^k < n <= 2^(k+1), k >= 6
    let q = ((n - 1) >> (k - 2)) + 1; // 5..8: the size in quarters of 2^k
    (4 + (k - 6) * 4 + (q - 5), q << (k - 2))
}

/// The memory a heap cuts blocks from: wasm's linear memory, or a test's arena.
pub(crate) trait Memory {
    /// Where memory ends now (an address).
    fn end(&self) -> usize;
    /// Adds pages of 64 KiB at the end; false when it cannot.
    fn grow(&mut self, pages: usize) -> bool;
}

pub(crate) struct Heap<M> {
    pub(crate) mem: M,
    base: usize,
    top: usize, // where the next new block goes (0: not started)
    end: usize, // where the memory the heap may cut from ends
    free: [usize; CLASSES],
}

impl<M> Heap<M> {
    pub(crate) const fn new(mem: M, base: usize) -> Self {
        Heap { mem, base, top: 0, end: 0, free: [0; CLASSES] }
    }
}

impl<M: Memory> Heap<M> {
    /// A block of size bytes aligned to align (a power of two), or null.
    pub(crate) unsafe fn alloc(&mut self, size: usize, align: usize) -> *mut u8 {
        if align > 16 {
            return self.alloc_aligned(size, align);
        }
        let n = size.max(1);
        if n > MAX {
            return core::ptr::null_mut();
        }
        let (c, bytes) = class(n);
        let p = self.free[c];
        if p != 0 {
            self.free[c] = *(p as *const usize); // a free block's first word: the next one
            return p as *mut u8;
        }
        self.cut(bytes)
    }

    unsafe fn cut(&mut self, bytes: usize) -> *mut u8 {
        if self.top == 0 {
            self.top = (self.base + 15) & !15;
            self.end = self.mem.end();
        }
        if bytes > self.end.saturating_sub(self.top) {
            let now = self.mem.end();
            let start = if now == self.end { self.top } else { now }; // memory grown by another is its
            // checked: usize is 32 bits in wasm, and memory may reach 4 GiB
            let (pages, end) = match start.checked_add(bytes).and_then(|need| {
                let pages = (need - now + 65535) / 65536;
                Some((pages, now.checked_add(pages.checked_mul(65536)?)?))
            }) {
                Some(p) => p,
                None => return core::ptr::null_mut(),
            };
            if !self.mem.grow(pages) {
                return core::ptr::null_mut();
            }
            self.top = start;
            self.end = end;
        }
        let p = self.top;
        self.top += bytes;
        p as *mut u8
    }

    /// Frees a block alloc(size, align) returned.
    pub(crate) unsafe fn dealloc(&mut self, p: *mut u8, size: usize, align: usize) {
        let (p, size) = if align > 16 { aligned_block(p, size, align) } else { (p, size) };
        let (c, _) = class(size.max(1));
        *(p as *mut usize) = self.free[c];
        self.free[c] = p as usize;
    }

    /// realloc keeps a block whose class stays the same where it is, and
    /// moves it otherwise, shrinking too: a block kept for a smaller size
    /// would be freed to the smaller class, and its class would lose it.
    pub(crate) unsafe fn realloc(&mut self, p: *mut u8, size: usize, align: usize, new: usize) -> *mut u8 {
        if align <= 16 && class(new.max(1)).0 == class(size.max(1)).0 {
            return p;
        }
        let q = self.alloc(new, align);
        if q.is_null() {
            // out of memory: a shrink can still keep its block (its class
            // then loses it, a leak only when memory is exhausted anyway)
            return if new <= size && align <= 16 { p } else { q };
        }
        core::ptr::copy_nonoverlapping(p, q, size.min(new));
        self.dealloc(p, size, align);
        q
    }

    // an over-aligned block: class(size + align + 16), the pointer aligned
    // past a word holding the block's start
    unsafe fn alloc_aligned(&mut self, size: usize, align: usize) -> *mut u8 {
        let n = match size.checked_add(align + 16) {
            Some(n) if n <= MAX => n,
            _ => return core::ptr::null_mut(),
        };
        let p = self.alloc(n, 16);
        if p.is_null() {
            return p;
        }
        let q = ((p as usize + 16 + align - 1) & !(align - 1)) as *mut u8;
        *(q as *mut usize).sub(1) = p as usize;
        q
    }
}

unsafe fn aligned_block(q: *mut u8, size: usize, align: usize) -> (*mut u8, usize) {
    (*(q as *const usize).sub(1) as *mut u8, size + align + 16)
}

#[cfg(all(target_arch = "wasm32", not(feature = "std-alloc")))]
mod wasm {
    use super::{Heap, Memory};
    use core::alloc::{GlobalAlloc, Layout};
    use core::arch::wasm32;

    pub(crate) struct Linear;

    impl Memory for Linear {
        fn end(&self) -> usize {
            // 65536 pages (4 GiB) do not fit a 32-bit usize: say the last page is not there
            wasm32::memory_size(0).saturating_mul(65536).min(usize::MAX - 65535)
        }
        fn grow(&mut self, pages: usize) -> bool {
            wasm32::memory_grow(0, pages) != usize::MAX
        }
    }

    extern "C" {
        static __heap_base: u8;
    }

    struct Global;

    static mut HEAP: Heap<Linear> = Heap::new(Linear, 0);

    // one thread: wasm32-unknown-unknown guests have no threads
    unsafe fn heap() -> &'static mut Heap<Linear> {
        let h = &mut *core::ptr::addr_of_mut!(HEAP);
        if h.base == 0 {
            h.base = core::ptr::addr_of!(__heap_base) as usize;
        }
        h
    }

    unsafe impl GlobalAlloc for Global {
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            heap().alloc(l.size(), l.align())
        }
        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            heap().dealloc(p, l.size(), l.align())
        }
        unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
            heap().realloc(p, l.size(), l.align(), new)
        }
    }

    #[global_allocator]
    static GLOBAL: Global = Global;
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Arena {
        start: usize,
        end: usize,
        limit: usize,
    }

    impl Memory for Arena {
        fn end(&self) -> usize {
            self.end
        }
        fn grow(&mut self, pages: usize) -> bool {
            if self.end + pages * 65536 > self.limit {
                return false;
            }
            self.end += pages * 65536;
            true
        }
    }

    fn heap(buf: &mut Vec<u8>, pages: usize) -> Heap<Arena> {
        let start = (buf.as_mut_ptr() as usize + 65535) & !65535;
        let limit = buf.as_ptr() as usize + buf.len();
        Heap::new(Arena { start, end: start + pages * 65536, limit }, start + 100)
    }

    #[test]
    fn classes() {
        let mut prev = (0, 0);
        for n in (1..5000).chain((5000..(1 << 20) + 77).step_by(97)) {
            let (c, s) = class(n);
            assert!(s >= n && s % 16 == 0, "class of {} holds {}", n, s);
            assert!(s <= 64 || s * 4 <= n * 5 + 64, "class of {} wastes: {}", n, s);
            assert!(c < CLASSES);
            if n > 1 {
                assert!(c >= prev.0 && (c == prev.0) == (s == prev.1), "classes of {} not monotonic", n);
            }
            prev = (c, s);
        }
        for k in 4..=30 {
            assert_eq!(class(1 << k).1, 1 << k, "2^{} fits its class", k);
        }
        assert_eq!(class(MAX), (CLASSES - 1, MAX));
    }

    #[test]
    fn random_blocks_keep_their_bytes() {
        let mut buf = vec![0u8; 80 << 20];
        let mut h = heap(&mut buf, 1);
        let mut live: Vec<Option<(*mut u8, usize, usize, u8)>> = vec![None; 400];
        let mut rng = 42u64;
        unsafe {
            for step in 0..100_000u32 {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let i = (rng % 400) as usize;
                let n = ((rng >> 20) % if rng % 17 == 0 { 70_000 } else { 300 }) as usize;
                if let Some((p, size, align, tag)) = live[i] {
                    for j in 0..size {
                        assert_eq!(*p.add(j), tag.wrapping_add(j as u8), "step {}: block {} byte {}", step, i, j);
                    }
                    if rng % 3 == 0 && n > 0 {
                        let q = h.realloc(p, size, align, n);
                        assert!(!q.is_null() && q as usize % align == 0);
                        for j in 0..size.min(n) {
                            assert_eq!(*q.add(j), tag.wrapping_add(j as u8), "realloc lost byte {}", j);
                        }
                        for j in 0..n {
                            *q.add(j) = tag.wrapping_add(j as u8);
                        }
                        live[i] = Some((q, n, align, tag));
                    } else {
                        h.dealloc(p, size, align);
                        live[i] = None;
                    }
                    continue;
                }
                let align = if rng % 11 == 0 { 32 << (rng % 5) } else { 1 << (rng % 5) };
                let p = h.alloc(n, align);
                assert!(!p.is_null(), "alloc {}", n);
                assert_eq!(p as usize % align, 0, "alloc {} aligned {}", n, align);
                assert!(p as usize >= h.mem.start + 100 && p as usize + n <= h.mem.end, "block outside the memory");
                let tag = step as u8;
                for j in 0..n {
                    *p.add(j) = tag.wrapping_add(j as u8);
                }
                live[i] = Some((p, n, align, tag));
            }
        }
    }

    // grow a buffer by doubling, shrink it, drop it, many times: the heap
    // must not grow past the first round's memory (every block back on the
    // list of its own class)
    #[test]
    fn grow_shrink_cycles_reuse_memory() {
        let mut buf = vec![0u8; 64 << 20];
        let mut h = heap(&mut buf, 1);
        unsafe {
            let mut high = 0;
            for round in 0..50 {
                let (mut p, mut size) = (h.alloc(256, 1), 256);
                while size < 1 << 20 {
                    p = h.realloc(p, size, 1, size * 2);
                    size *= 2;
                }
                p = h.realloc(p, size, 1, 600_000);
                h.dealloc(p, 600_000, 1);
                if round == 0 {
                    high = h.mem.end;
                }
                assert_eq!(h.mem.end, high, "round {}: the heap grew", round);
            }
        }
    }

    #[test]
    fn reuse_limits_and_foreign_growth() {
        let mut buf = vec![0u8; 4 << 20];
        let mut h = heap(&mut buf, 1);
        unsafe {
            let a = h.alloc(100, 8);
            let b = h.alloc(100, 8);
            assert_ne!(a, b);
            h.dealloc(a, 100, 8);
            assert_eq!(h.alloc(112, 16), a, "a freed block is reused for its class");
            assert_eq!(h.realloc(b, 100, 8, 112), b, "a realloc within the class stays");
            // a shrink to a smaller class moves: the block goes back to its own class
            let c = h.alloc(1000, 8);
            let small = h.realloc(c, 1000, 8, 100);
            assert_ne!(small, c);
            assert_eq!(h.alloc(1000, 8), c, "the shrunk block's class has it back");
            assert!(h.alloc(MAX + 1, 8).is_null());
            h.mem.limit = h.mem.end; // out of memory: null, and realloc keeps the block
            *b = 7;
            assert!(h.alloc(1 << 20, 8).is_null());
            assert!(h.realloc(b, 112, 8, 1 << 20).is_null());
            assert_eq!(*b, 7);
            h.mem.limit = h.mem.start + (4 << 20) - 65536;
            let theirs = h.mem.end;
            h.mem.end += 3 * 65536; // someone's memory.grow
            let big = h.alloc(1 << 17, 8);
            assert!(big as usize >= theirs + 3 * 65536, "a block in memory another grew");
        }
    }
}
