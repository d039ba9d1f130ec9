/*
 * sluice_alloc.h: the C SDK's malloc for wasm guests (included by
 * sluice.c; natively, by the test over an arena of its own).
 *
 * Why not wasi-libc's dlmalloc: it is about 11.6 KB of the 25 KB of code of
 * a C filter, and the host validates every byte of code at each plugin
 * start, cache or not (wazero's CompileModule): a C plugin starts about a
 * third faster without it (RATIONALE.md, "Why do the C and Rust SDKs bring
 * their own malloc?"). A guest allocates little (the SDK's buffers grow by doubling
 * and live as long as the instance), so a small allocator does the job:
 *
 *   - segregated free lists, one per size class; classes are 16, 32, 48, 64
 *     bytes, then four per power of two (80, 96, 112, 128, 160, ...), so a
 *     block wastes at most a quarter of its size, and a power of two (the
 *     SDK's buffers) fits its class exactly;
 *   - a 16-byte header before every block (16-byte alignment, max_align_t's
 *     on wasm32) holding its class and a tag: freeing a pointer whose 16
 *     bytes before are not a live block's header (a double free, a pointer
 *     never allocated) traps instead of corrupting the heap, and the host
 *     reports the trap (a best guess: a stale pointer to a block allocated
 *     again, or an interior one after bytes that look like a header, pass);
 *   - new blocks are cut from the top of the heap, which memory.grow
 *     extends; memory is never given back (wasm cannot shrink it), freed
 *     blocks are reused for their class only;
 *   - a failure returns NULL and leaves errno alone (errno is thread-local
 *     in wasi-libc, which LLVM 14 cannot compile here under LTO).
 *
 * A plugin that wants wasi-libc's malloc defines SLUICE_LIBC_MALLOC.
 * The includer defines SL_ALLOC_BASE (the address where the heap starts),
 * SL_ALLOC_END() (the address where memory ends now, as a uint64_t) and
 * SL_ALLOC_GROW(pages) (memory.grow: 0, or -1 when it cannot). Memory that
 * grew by someone else's memory.grow (a plugin's own sbrk) after
 * sl_alloc_start is left alone.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SL_ALLOC_CLASSES 100          /* 4 up to 64 bytes, then 4 per power of two up to 2^30 */
#define SL_ALLOC_MAX ((size_t)1 << 30) /* the largest block: 1 GiB */
#define SL_ALLOC_LIVE 0x51A1CE11u
#define SL_ALLOC_FREE 0xF4EEB10Cu

typedef struct {
	uint32_t tag;   /* SL_ALLOC_LIVE or SL_ALLOC_FREE */
	uint32_t class; /* size class */
	uint32_t off;   /* aligned_alloc: bytes from the block's start to the pointer */
	uint32_t pad;
} sl_alloc_hdr;

static uint64_t sl_alloc_top;                       /* where the next new block's header goes (0: not started) */
static uint64_t sl_alloc_end;                       /* where the memory the allocator may cut from ends */
static void *sl_alloc_free_list[SL_ALLOC_CLASSES]; /* the next free block of each class */

/* sl_alloc_class returns the class of a request of n bytes (1 <= n <=
 * SL_ALLOC_MAX) and sets *size to the class's block size. */
static inline uint32_t sl_alloc_class(size_t n, size_t *size) {
	if (n <= 64) {
		size_t s = (n + 15) & ~(size_t)15;
		*size = s;
		return (uint32_t)(s / 16 - 1);
	}
	uint32_t k = 31u - (uint32_t)__builtin_clz((uint32_t)(n - 1)); /* 2^k < n <= 2^(k+1), k >= 6 */
	size_t q = ((n - 1) >> (k - 2)) + 1;                            /* 5..8: the size in quarters of 2^k */
	*size = q << (k - 2);
	return 4 + (k - 6) * 4 + (uint32_t)(q - 5);
}

static size_t sl_alloc_class_size(uint32_t c) {
	if (c < 4) return (size_t)(c + 1) * 16;
	uint32_t k = 6 + (c - 4) / 4;
	return (size_t)(5 + (c - 4) % 4) << (k - 2);
}

static sl_alloc_hdr *sl_alloc_hdr_of(void *p) {
	sl_alloc_hdr *h = (sl_alloc_hdr *)p - 1;
	if (h->tag != SL_ALLOC_LIVE) __builtin_trap(); /* not a live block: a double or wild free */
	if (h->off) {                                   /* an over-aligned block: the real header is before */
		h = (sl_alloc_hdr *)((uint8_t *)p - h->off) - 1;
		if (h->tag != SL_ALLOC_LIVE) __builtin_trap();
	}
	return h;
}

/* sl_alloc_start notes where the heap starts and the memory ends; sluice.c
 * calls it from a constructor (the reactor's _initialize), so memory a
 * plugin grows itself at any time after is never taken for the heap. */
static void sl_alloc_start(void) {
	if (!sl_alloc_top) sl_alloc_top = ((uintptr_t)SL_ALLOC_BASE + 15) & ~(uintptr_t)15, sl_alloc_end = SL_ALLOC_END();
}

static void *sl_alloc(size_t n) {
	if (n == 0) n = 1;
	if (n > SL_ALLOC_MAX) return NULL;
	size_t size;
	uint32_t c = sl_alloc_class(n, &size);
	sl_alloc_hdr *h;
	void *p = sl_alloc_free_list[c];
	if (p) {
		memcpy(&sl_alloc_free_list[c], p, sizeof p); /* a free block's first word: the next one */
		h = (sl_alloc_hdr *)p - 1;
	} else {
		uint64_t need = sizeof(sl_alloc_hdr) + size;
		sl_alloc_start();
		if (sl_alloc_top + need > sl_alloc_end) {
			uint64_t now = SL_ALLOC_END();
			uint64_t start = now == sl_alloc_end ? sl_alloc_top : now; /* memory grown by another (sbrk) is its */
			uint64_t pages = (start + need - now + 65535) / 65536;
			if (start + need > UINTPTR_MAX || SL_ALLOC_GROW((size_t)pages) != 0) return NULL;
			sl_alloc_top = start, sl_alloc_end = now + pages * 65536;
		}
		h = (sl_alloc_hdr *)(uintptr_t)sl_alloc_top;
		sl_alloc_top += need; /* 64 bits: at a 4 GiB memory's very end it does not wrap to "not started" */
		p = h + 1;
	}
	*h = (sl_alloc_hdr){.tag = SL_ALLOC_LIVE, .class = c};
	return p;
}

static void sl_alloc_free(void *p) {
	if (!p) return;
	sl_alloc_hdr *h = sl_alloc_hdr_of(p);
	((sl_alloc_hdr *)p - 1)->tag = SL_ALLOC_FREE; /* the header the caller saw: a second free traps */
	h->tag = SL_ALLOC_FREE;
	void *block = h + 1;
	memcpy(block, &sl_alloc_free_list[h->class], sizeof block);
	sl_alloc_free_list[h->class] = block;
}

/* sl_alloc_usable is how many bytes from p its block holds. */
static size_t sl_alloc_usable(void *p) {
	uint32_t off = ((sl_alloc_hdr *)p - 1)->off;
	return sl_alloc_class_size(sl_alloc_hdr_of(p)->class) - off;
}

static void *sl_alloc_realloc(void *p, size_t n) {
	if (!p) return sl_alloc(n);
	size_t have = sl_alloc_usable(p);
	if (n <= have && ((sl_alloc_hdr *)p - 1)->off == 0) return p; /* it fits: no copy, no shrink */
	void *q = sl_alloc(n);
	if (!q) return NULL; /* p stays valid, as C requires */
	memcpy(q, p, have < n ? have : n);
	sl_alloc_free(p);
	return q;
}

static void *sl_alloc_calloc(size_t a, size_t b) {
	size_t n;
	if (__builtin_mul_overflow(a, b, &n)) return NULL;
	void *p = sl_alloc(n);
	if (p) memset(p, 0, n);
	return p;
}

/* sl_alloc_aligned is aligned_alloc for any power of two alignment (NULL
 * for 0 or any other). */
static void *sl_alloc_aligned(size_t align, size_t n) {
	if (align == 0 || align & (align - 1) || align > SL_ALLOC_MAX || n > SL_ALLOC_MAX - align) return NULL;
	if (align <= 16) return sl_alloc(n);
	uint8_t *p = sl_alloc(n + align);
	if (!p) return NULL;
	uint8_t *q = (uint8_t *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	if (q != p) { /* a header of its own before q says where the block starts */
		sl_alloc_hdr *h = (sl_alloc_hdr *)q - 1;
		*h = (sl_alloc_hdr){.tag = SL_ALLOC_LIVE, .off = (uint32_t)(q - p)};
	}
	return q;
}
