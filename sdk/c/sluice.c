/*
 * sluice.c: the C SDK (see sluice.h). Three parts: a zero-copy msgpack
 * reader and writer (mirrors abi/msgpack.go and abi/append.go), the output
 * side (per-port buffers, record edits, errors, state), and the runtime
 * behind the ABI exports (open, process, close, partition, describe).
 * Natively (tests) the host imports are plain functions the test defines.
 */
#include "sluice.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- malloc (sluice_alloc.h; SLUICE_LIBC_MALLOC keeps wasi-libc's) ------ */

#if defined(__wasm__) && !defined(SLUICE_LIBC_MALLOC)
extern unsigned char __heap_base;
#define SL_ALLOC_BASE (&__heap_base)
#define SL_ALLOC_END() ((uint64_t)__builtin_wasm_memory_size(0) * 65536)
#define SL_ALLOC_GROW(pages) (__builtin_wasm_memory_grow(0, (pages)) == (size_t)-1 ? -1 : 0)
#include "sluice_alloc.h"
__attribute__((constructor)) static void sl_alloc_init(void) { sl_alloc_start(); }
/* every symbol of wasi-libc's dlmalloc.o, so that the linker never takes it */
void *malloc(size_t n) { return sl_alloc(n); }
void free(void *p) { sl_alloc_free(p); }
void *calloc(size_t a, size_t b) { return sl_alloc_calloc(a, b); }
void *realloc(void *p, size_t n) { return sl_alloc_realloc(p, n); }
void *aligned_alloc(size_t align, size_t n) { return sl_alloc_aligned(align, n); }
int posix_memalign(void **out, size_t align, size_t n) {
	if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
	void *p = sl_alloc_aligned(align, n);
	if (!p) return ENOMEM;
	*out = p;
	return 0;
}
size_t malloc_usable_size(void *p) { return p ? sl_alloc_usable(p) : 0; }
void *__libc_malloc(size_t n) { return sl_alloc(n); }
void __libc_free(void *p) { sl_alloc_free(p); }
void *__libc_calloc(size_t a, size_t b) { return sl_alloc_calloc(a, b); }
#endif

/* ---- host imports (abi/abi.go) ------------------------------------------ */

#ifdef __wasm__
#define SL__IMPORT(name) __attribute__((import_module("sluice_v1"), import_name(name)))
#else
#define SL__IMPORT(name)
#endif
SL__IMPORT("emit") int32_t sl_host_emit(int32_t port, const uint8_t *p, uint32_t n, int32_t count);
/* emit with the end of each record (count little-endian u32 at ends): the
 * host then checks the records one by one instead of finding their ends */
SL__IMPORT("emit_ends") int32_t sl_host_emit_ends(int32_t port, const uint8_t *p, uint32_t n, int32_t count, const uint8_t *ends);
SL__IMPORT("port") int32_t sl_host_port(const uint8_t *p, uint32_t n);
SL__IMPORT("error") void sl_host_error(const uint8_t *p, uint32_t n);
SL__IMPORT("state_get") int32_t sl_host_state_get(int32_t slot, const uint8_t *k, uint32_t kn, uint8_t *buf, uint32_t cap);
SL__IMPORT("state_put") int32_t sl_host_state_put(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *v, uint32_t vn);
SL__IMPORT("state_del") int32_t sl_host_state_del(int32_t slot, const uint8_t *k, uint32_t kn);
/* optional: list and map state; a module imports only those it calls */
SL__IMPORT("state_list_get") int32_t sl_host_state_list_get(int32_t slot, const uint8_t *k, uint32_t kn, uint8_t *buf, uint32_t cap);
SL__IMPORT("state_list_append") int32_t sl_host_state_list_append(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *v, uint32_t vn);
SL__IMPORT("state_list_update") int32_t sl_host_state_list_update(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *w, uint32_t wn);
SL__IMPORT("state_map_get") int32_t sl_host_state_map_get(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *uk, uint32_t ukn, uint8_t *buf, uint32_t cap);
SL__IMPORT("state_map_put") int32_t sl_host_state_map_put(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *uk, uint32_t ukn, const uint8_t *v, uint32_t vn);
SL__IMPORT("state_map_del") int32_t sl_host_state_map_del(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *uk, uint32_t ukn);
SL__IMPORT("state_map_contains") int32_t sl_host_state_map_contains(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *uk, uint32_t ukn);
SL__IMPORT("state_map_entries") int32_t sl_host_state_map_entries(int32_t slot, const uint8_t *k, uint32_t kn, uint8_t *buf, uint32_t cap);
SL__IMPORT("state_clear") int32_t sl_host_state_clear(int32_t slot, const uint8_t *k, uint32_t kn);
/* optional: timers */
SL__IMPORT("timer_register") int32_t sl_host_timer_register(int32_t kind, const uint8_t *k, uint32_t kn, int64_t ts);
SL__IMPORT("timer_delete") int32_t sl_host_timer_delete(int32_t kind, const uint8_t *k, uint32_t kn, int64_t ts);
SL__IMPORT("current_watermark") int64_t sl_host_current_watermark(void);
SL__IMPORT("current_processing_time") int64_t sl_host_current_processing_time(void);

#ifndef __wasm__
/* Natively (tests) emit_ends checks the ends as the host does, then hands
 * the records to the test's sl_host_emit; a test may define its own. */
__attribute__((weak)) int32_t sl_host_emit_ends(int32_t port, const uint8_t *p, uint32_t n, int32_t count, const uint8_t *ends) {
	uint32_t start = 0;
	for (int32_t i = 0; i < count; i++) {
		const uint8_t *e = ends + 4 * (uint32_t)i;
		uint32_t end = e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16 | (uint32_t)e[3] << 24;
		if (end <= start || end > n || sl_skip(p, end, start) != (int64_t)end) return SL_MALFORMED;
		start = end;
	}
	return start == n ? sl_host_emit(port, p, n, count) : SL_MALFORMED;
}
/* Natively, a test's fake host that keeps only value state still links:
 * the optional list and map imports refuse (SL_STATE) unless the test
 * defines its own, as sdk/c/test/sluice_test.c does. */
__attribute__((weak)) int32_t sl_host_state_list_get(int32_t slot, const uint8_t *k, uint32_t kn, uint8_t *buf, uint32_t cap) { (void)slot, (void)k, (void)kn, (void)buf, (void)cap; return SL_STATE; }
__attribute__((weak)) int32_t sl_host_state_list_append(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *v, uint32_t vn) { (void)slot, (void)k, (void)kn, (void)v, (void)vn; return SL_STATE; }
__attribute__((weak)) int32_t sl_host_state_list_update(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *w, uint32_t wn) { (void)slot, (void)k, (void)kn, (void)w, (void)wn; return SL_STATE; }
__attribute__((weak)) int32_t sl_host_state_map_get(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *uk, uint32_t ukn, uint8_t *buf, uint32_t cap) { (void)slot, (void)k, (void)kn, (void)uk, (void)ukn, (void)buf, (void)cap; return SL_STATE; }
__attribute__((weak)) int32_t sl_host_state_map_put(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *uk, uint32_t ukn, const uint8_t *v, uint32_t vn) { (void)slot, (void)k, (void)kn, (void)uk, (void)ukn, (void)v, (void)vn; return SL_STATE; }
__attribute__((weak)) int32_t sl_host_state_map_del(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *uk, uint32_t ukn) { (void)slot, (void)k, (void)kn, (void)uk, (void)ukn; return SL_STATE; }
__attribute__((weak)) int32_t sl_host_state_map_contains(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *uk, uint32_t ukn) { (void)slot, (void)k, (void)kn, (void)uk, (void)ukn; return SL_STATE; }
__attribute__((weak)) int32_t sl_host_state_map_entries(int32_t slot, const uint8_t *k, uint32_t kn, uint8_t *buf, uint32_t cap) { (void)slot, (void)k, (void)kn, (void)buf, (void)cap; return SL_STATE; }
__attribute__((weak)) int32_t sl_host_state_clear(int32_t slot, const uint8_t *k, uint32_t kn) { (void)slot, (void)k, (void)kn; return SL_STATE; }
__attribute__((weak)) int32_t sl_host_timer_register(int32_t kind, const uint8_t *k, uint32_t kn, int64_t ts) { (void)kind, (void)k, (void)kn, (void)ts; return SL_STATE; }
__attribute__((weak)) int32_t sl_host_timer_delete(int32_t kind, const uint8_t *k, uint32_t kn, int64_t ts) { (void)kind, (void)k, (void)kn, (void)ts; return SL_STATE; }
__attribute__((weak)) int64_t sl_host_current_watermark(void) { return INT64_MIN; }
__attribute__((weak)) int64_t sl_host_current_processing_time(void) { return 0; }
#endif

/* ---- reading ------------------------------------------------------------ */

static const char *g_why; /* why the last skip failed */

static inline uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ /* wasm is */
/* one unaligned load each, not four or eight byte loads */
static inline uint32_t be32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return __builtin_bswap32(v); }
static inline uint64_t be64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return __builtin_bswap64(v); }
#else
static inline uint32_t be32(const uint8_t *p) {
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t be64(const uint8_t *p) { return (uint64_t)be32(p) << 32 | be32(p + 4); }
#endif

static const uint8_t *truncated(void) { g_why = "truncated msgpack"; return NULL; }

/* need returns p+size when size bytes remain before e. */
static inline const uint8_t *need(const uint8_t *p, const uint8_t *e, uint64_t size) {
	return size <= (uint64_t)(e - p) ? p + size : truncated();
}

/* fixed[c] is the whole size of a value whose header byte is c when the
 * header alone gives it (fixint, fixstr, nil, bool, fixed-width numbers,
 * fixext), else 0 (containers, str/bin/ext 8/16/32, 0xc1): the common case
 * of every scan is one table load and one length check (as fixedSize in
 * abi/msgpack.go). */
#define X16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
static const uint8_t fixed[256] = {
	X16(1), X16(1), X16(1), X16(1), X16(1), X16(1), X16(1), X16(1), /* 0x00-0x7f fixint */
	X16(0), X16(0),                                                  /* 0x80-0x9f fixmap, fixarray */
	1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,           /* 0xa0-0xbf fixstr */
	17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
	1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 5, 9, 2, 3, 5, 9,                  /* 0xc0-0xcf */
	2, 3, 5, 9, 3, 4, 6, 10, 18, 0, 0, 0, 0, 0, 0, 0,                /* 0xd0-0xdf */
	X16(1), X16(1),                                                  /* 0xe0-0xff fixint */
};
#undef X16

static const uint8_t *skip(const uint8_t *p, const uint8_t *e, int depth);

/* skip_fast is skip with its common cases inline: a fixint, a value whose
 * header gives its size. */
static inline const uint8_t *skip_fast(const uint8_t *p, const uint8_t *e, int depth) {
	if (p < e) {
		if (*p <= 0x7f || *p >= 0xe0) return p + 1;
		uint32_t size = fixed[*p];
		if (size && size <= (uint32_t)(e - p)) return p + size;
	}
	return skip(p, e, depth);
}

/* skip_n skips n values (a container's body) at nesting depth+1. Only a
 * nested container or a str/bin/ext 8/16/32 costs a call. */
static inline const uint8_t *skip_n(const uint8_t *p, const uint8_t *e, uint64_t n, int depth) {
	if (depth + 1 > SL_MAX_DEPTH) { g_why = "msgpack nested deeper than the limit"; return NULL; }
	if (n > (uint64_t)(e - p)) return truncated(); /* each value takes a byte */
	while (n-- > 0)
		if (!(p = skip_fast(p, e, depth + 1))) return NULL;
	return p;
}

/* skip_pairs is skip_n for the n key/value pairs of a map, with a fixstr
 * key skipped without the table: the next load then waits on one add, not
 * on a second load. */
static inline const uint8_t *skip_pairs(const uint8_t *p, const uint8_t *e, uint32_t n, int depth) {
	if (depth + 1 > SL_MAX_DEPTH) { g_why = "msgpack nested deeper than the limit"; return NULL; }
	while (n-- > 0) {
		if (p < e && (*p & 0xe0) == 0xa0) {
			uint32_t size = 1 + (*p & 0x1fu);
			if (size > (uint32_t)(e - p)) return truncated();
			p += size;
		} else if (!(p = skip(p, e, depth + 1))) {
			return NULL;
		}
		if (!(p = skip_fast(p, e, depth + 1))) return NULL;
	}
	return p;
}

/* skip returns the end of the value at p, or NULL (reason in g_why). */
static const uint8_t *skip(const uint8_t *p, const uint8_t *e, int depth) {
	if (p >= e) return truncated();
	uint8_t c = *p;
	if (fixed[c]) return need(p, e, fixed[c]);
	if (c <= 0x8f) return skip_n(p + 1, e, 2u * (c & 0x0f), depth);
	if (c <= 0x9f) return skip_n(p + 1, e, c & 0x0f, depth);
	uint64_t hdr, n;
	switch (c) {
	case 0xc4: case 0xd9: case 0xc7: /* bin8, str8, ext8: len8 (+type) */
		if (!need(p, e, 2)) return NULL;
		hdr = c == 0xc7 ? 3 : 2;
		return need(p, e, hdr + p[1]);
	case 0xc5: case 0xda: case 0xc8:
		if (!need(p, e, 3)) return NULL;
		hdr = c == 0xc8 ? 4 : 3;
		return need(p, e, hdr + be16(p + 1));
	case 0xc6: case 0xdb: case 0xc9:
		if (!need(p, e, 5)) return NULL;
		hdr = c == 0xc9 ? 6 : 5;
		return need(p, e, hdr + (uint64_t)be32(p + 1));
	case 0xdc: case 0xde:
		if (!need(p, e, 3)) return NULL;
		n = be16(p + 1);
		return skip_n(p + 3, e, c == 0xde ? 2 * n : n, depth);
	case 0xdd: case 0xdf:
		if (!need(p, e, 5)) return NULL;
		n = be32(p + 1);
		return skip_n(p + 5, e, c == 0xdf ? 2 * n : n, depth);
	}
	g_why = "invalid msgpack byte"; /* 0xc1 */
	return NULL;
}

int64_t sl_skip(const uint8_t *b, uint32_t n, uint32_t off) {
	const uint8_t *end = off < n ? skip(b + off, b + n, 0) : truncated();
	return end ? (int64_t)(end - b) : -1;
}

sl_type sl_type_of(sl_value v) {
	if (v.n == 0) return SL_T_INVALID;
	uint8_t c = v.p[0];
	if (c <= 0x7f || c >= 0xe0) return SL_T_INT;
	if (c <= 0x8f) return SL_T_MAP;
	if (c <= 0x9f) return SL_T_ARRAY;
	if (c <= 0xbf) return SL_T_STR;
	switch (c) {
	case 0xc0: return SL_T_NIL;
	case 0xc2: case 0xc3: return SL_T_BOOL;
	case 0xc4: case 0xc5: case 0xc6: return SL_T_BIN;
	case 0xca: case 0xcb: return SL_T_FLOAT;
	case 0xd9: case 0xda: case 0xdb: return SL_T_STR;
	case 0xdc: case 0xdd: return SL_T_ARRAY;
	case 0xde: case 0xdf: return SL_T_MAP;
	case 0xc1: return SL_T_INVALID;
	}
	return c >= 0xcc && c <= 0xd3 ? SL_T_INT : SL_T_EXT;
}

bool sl_is_nil(sl_value v) { return v.n > 0 && v.p[0] == 0xc0; }

bool sl_as_int(sl_value v, int64_t *out) {
	if (v.n == 0) return false;
	const uint8_t *p = v.p;
	uint8_t c = p[0];
	if (c <= 0x7f || c >= 0xe0) { *out = c <= 0x7f ? (int64_t)c : (int8_t)c; return true; }
	static const uint8_t size[8] = {2, 3, 5, 9, 2, 3, 5, 9}; /* 0xcc..0xd3 */
	if (c < 0xcc || c > 0xd3 || v.n < size[c - 0xcc]) return false;
	switch (c) {
	case 0xcc: *out = p[1]; break;
	case 0xcd: *out = be16(p + 1); break;
	case 0xce: *out = be32(p + 1); break;
	case 0xcf: if (be64(p + 1) > INT64_MAX) return false; *out = (int64_t)be64(p + 1); break;
	case 0xd0: *out = (int8_t)p[1]; break;
	case 0xd1: *out = (int16_t)be16(p + 1); break;
	case 0xd2: *out = (int32_t)be32(p + 1); break;
	default: *out = (int64_t)be64(p + 1); break;
	}
	return true;
}

bool sl_as_float(sl_value v, double *out) {
	if (v.n >= 5 && v.p[0] == 0xca) {
		uint32_t b = be32(v.p + 1); float f;
		memcpy(&f, &b, 4); *out = f; return true;
	}
	if (v.n >= 9 && v.p[0] == 0xcb) {
		uint64_t b = be64(v.p + 1);
		memcpy(out, &b, 8); return true;
	}
	int64_t i;
	if (sl_as_int(v, &i)) { *out = (double)i; return true; }
	return false;
}

bool sl_as_bool(sl_value v, bool *out) {
	if (v.n == 0 || (v.p[0] != 0xc2 && v.p[0] != 0xc3)) return false;
	*out = v.p[0] == 0xc3;
	return true;
}

/* int_slow is sl_int past a fixint. */
static int64_t int_slow(sl_value v) {
	int64_t i;
	double f;
	if (sl_as_int(v, &i)) return i;
	if (sl_type_of(v) != SL_T_FLOAT || !sl_as_float(v, &f) || f != f) return 0;
	if (f >= 9223372036854775808.0) return INT64_MAX;
	if (f <= -9223372036854775808.0) return INT64_MIN;
	return (int64_t)f;
}

int64_t sl_int(sl_value v) {
	if (v.n > 0 && (v.p[0] <= 0x7f || v.p[0] >= 0xe0)) return (int8_t)v.p[0]; /* fixint, inline */
	return int_slow(v);
}

double sl_float(sl_value v) {
	double f;
	return sl_as_float(v, &f) ? f : 0;
}

/* sized reads the (header, length) of a str or bin at v. */
static bool sized(sl_value v, uint8_t h8, sl_str *out) {
	if (v.n == 0) return false;
	uint8_t c = v.p[0];
	uint64_t hdr, n;
	if (h8 == 0xd9 && c >= 0xa0 && c <= 0xbf) hdr = 1, n = c & 0x1f;
	else if (c == h8 && v.n >= 2) hdr = 2, n = v.p[1];
	else if (c == h8 + 1 && v.n >= 3) hdr = 3, n = be16(v.p + 1);
	else if (c == h8 + 2 && v.n >= 5) hdr = 5, n = be32(v.p + 1);
	else return false;
	if (hdr + n > v.n) return false;
	out->p = v.p + hdr;
	out->n = (uint32_t)n;
	return true;
}

bool sl_as_str(sl_value v, sl_str *out) { return sized(v, 0xd9, out); }
bool sl_as_bin(sl_value v, sl_str *out) { return sized(v, 0xc4, out); }

bool sl_str_eq(sl_str s, const char *cstr) {
	size_t n = strlen(cstr);
	return n == s.n && memcmp(s.p, cstr, n) == 0;
}

/* container reads the element count and body of an array (map=false) or map. */
static bool container(sl_value v, bool map, sl_iter *it) {
	if (v.n == 0) return false;
	uint8_t c = v.p[0], fix = map ? 0x80 : 0x90, c16 = map ? 0xde : 0xdc;
	uint32_t n, hdr;
	if (c >= fix && c <= fix + 0x0f) n = c & 0x0f, hdr = 1;
	else if (c == c16 && v.n >= 3) n = be16(v.p + 1), hdr = 3;
	else if (c == c16 + 1 && v.n >= 5) n = be32(v.p + 1), hdr = 5;
	else return false;
	it->p = v.p + hdr;
	it->end = v.p + v.n;
	it->left = n;
	return true;
}

bool sl_array_iter(sl_value arr, sl_iter *it) { return container(arr, false, it); }
bool sl_map_iter(sl_value map, sl_iter *it) { return container(map, true, it); }

static bool next_value(sl_iter *it, sl_value *out) {
	const uint8_t *end = skip(it->p, it->end, 1);
	if (!end) { it->left = 0; return false; }
	out->p = it->p;
	out->n = (uint32_t)(end - it->p);
	it->p = end;
	return true;
}

bool sl_array_next(sl_iter *it, sl_value *elem) {
	if (it->left == 0) return false;
	it->left--;
	return next_value(it, elem);
}

bool sl_map_next(sl_iter *it, sl_value *key, sl_value *val) {
	if (it->left == 0) return false;
	it->left--;
	return next_value(it, key) && next_value(it, val);
}

/* same_bytes compares n bytes with at most two loads per side for n <= 16
 * (overlapping when n is not a power of two); for a literal name, inlined,
 * its loads are constants. */
static inline bool same_bytes(const uint8_t *a, const uint8_t *b, uint32_t n) {
	uint64_t x, y, x2, y2;
	uint32_t u, w, u2, w2;
	uint16_t h, k, h2, k2;
	if (n >= 8 && n <= 16) {
		memcpy(&x, a, 8), memcpy(&y, b, 8), memcpy(&x2, a + n - 8, 8), memcpy(&y2, b + n - 8, 8);
		return x == y && x2 == y2;
	}
	if (n >= 4 && n < 8) {
		memcpy(&u, a, 4), memcpy(&w, b, 4), memcpy(&u2, a + n - 4, 4), memcpy(&w2, b + n - 4, 4);
		return u == w && u2 == w2;
	}
	if (n >= 2 && n < 4) {
		memcpy(&h, a, 2), memcpy(&k, b, 2), memcpy(&h2, a + n - 2, 2), memcpy(&k2, b + n - 2, 2);
		return h == k && h2 == k2;
	}
	if (n < 2) return n == 0 || *a == *b;
	return memcmp(a, b, n) == 0;
}

/* g_fx indexes the record parse_record read last when its value is a
 * fixmap whose keys are all fixstrs (what writers produce): off[i] is where
 * the key of field i starts, from the map's header, and off[n] is the map's
 * size. The walk that finds the record's end stores one word a field, and a
 * lookup or an edit on that map then reads keys in place, none waiting on
 * another, instead of walking the map again. map is NULL when there is no
 * index (another shape, or between calls). */
static struct { const uint8_t *map; uint32_t n, off[17]; } g_fx;

/* index_pairs is skip_pairs for the n (<= 15) pairs of the fixmap whose
 * header is at p - 1, filling g_fx; at a key that is not a fixstr it
 * leaves no index and skip_pairs reads the rest. */
static inline const uint8_t *index_pairs(const uint8_t *p, const uint8_t *e, uint32_t n) {
	const uint8_t *map = p - 1;
	g_fx.map = NULL;
	for (uint32_t i = 0; i < n; i++) {
		if (p >= e || (*p & 0xe0) != 0xa0) return skip_pairs(p, e, n - i, 1);
		uint32_t size = 1 + (*p & 0x1fu);
		if (size > (uint32_t)(e - p)) return truncated();
		g_fx.off[i] = (uint32_t)(p - map);
		if (!(p = skip_fast(p + size, e, 2))) return NULL;
	}
	g_fx.map = map, g_fx.n = n, g_fx.off[n] = (uint32_t)(p - map);
	return p;
}

/* indexed says whether g_fx indexes the map v. */
static inline bool indexed(sl_value v) { return v.p && v.p == g_fx.map && v.n == g_fx.off[g_fx.n]; }

bool sl_map_getn(sl_value map, const uint8_t *name, uint32_t len, sl_value *out) {
	sl_iter it;
	sl_value k, v;
	sl_str s;
	if (indexed(map)) {
		for (uint32_t i = 0; i < g_fx.n; i++) {
			const uint8_t *key = map.p + g_fx.off[i];
			if ((*key & 0x1fu) != len || !same_bytes(key + 1, name, len)) continue;
			out->p = key + 1 + len, out->n = (uint32_t)(map.p + g_fx.off[i + 1] - out->p);
			return true;
		}
		return false;
	}
	if (!sl_map_iter(map, &it)) return false;
	const uint8_t *p = it.p, *e = it.end;
	while (it.left > 0) {
		/* fast path: a fixstr key compared in place; a value whose header
		 * gives its size skipped in place */
		uint8_t c = p < e ? *p : 0;
		if (c >= 0xa0 && c <= 0xbf && (uint32_t)(e - p) > (c & 0x1fu)) {
			uint32_t kn = c & 0x1f;
			const uint8_t *val = p + 1 + kn;
			bool hit = kn == len && same_bytes(p + 1, name, len);
			it.left--;
			if (!(p = skip_fast(val, e, 1))) return false;
			if (hit) { out->p = val, out->n = (uint32_t)(p - val); return true; }
			continue;
		}
		it.p = p;
		if (!sl_map_next(&it, &k, &v)) return false;
		p = it.p;
		if (sl_as_str(k, &s) && s.n == len && memcmp(s.p, name, len) == 0) { *out = v; return true; }
	}
	return false;
}

bool sl_map_get(sl_value map, const char *name, sl_value *out) {
	return sl_map_getn(map, (const uint8_t *)name, (uint32_t)strlen(name), out);
}

bool sl_field(const sl_record *r, const char *name, sl_value *out) { return sl_map_get(r->value, name, out); }
bool sl_field_int(const sl_record *r, const char *name, int64_t *out) {
	sl_value v;
	return sl_field(r, name, &v) && sl_as_int(v, out);
}
bool sl_field_float(const sl_record *r, const char *name, double *out) {
	sl_value v;
	return sl_field(r, name, &v) && sl_as_float(v, out);
}
bool sl_field_str(const sl_record *r, const char *name, sl_str *out) {
	sl_value v;
	return sl_field(r, name, &v) && sl_as_str(v, out);
}
bool sl_field_bool(const sl_record *r, const char *name, bool *out) {
	sl_value v;
	return sl_field(r, name, &v) && sl_as_bool(v, out);
}

/* parse_record reads the envelope at p (abi.ParseRecord); NULL when bad.
 * Inline fast paths for what writers produce: an int64/uint64 or nil time,
 * a nil key, a fixmap value. */
static const uint8_t *parse_record(const uint8_t *p, const uint8_t *e, sl_record *r) {
	const uint8_t *start = p;
	if (p >= e) return truncated();
	if (*p++ != 0x93) { g_why = "record is not a [event_time, key, value] envelope"; return NULL; }
	if (p >= e) return truncated();
	const uint8_t *q;
	uint8_t c = *p;
	if (c == 0xc0) {
		r->has_time = false, r->time = 0, p++;
	} else if ((c == 0xd3 || c == 0xcf) && e - p >= 9) {
		uint64_t t = be64(p + 1);
		if (c == 0xcf && t > INT64_MAX) { g_why = "event time out of range"; return NULL; }
		r->has_time = true, r->time = (int64_t)t, p += 9;
	} else {
		sl_value t = {p, (uint32_t)(e - p)};
		if (sl_type_of(t) != SL_T_INT) { g_why = "event time is not an int or nil"; return NULL; }
		if (!(q = skip(p, e, 1))) return NULL;
		t.n = (uint32_t)(q - p);
		if (!sl_as_int(t, &r->time)) { g_why = "event time out of range"; return NULL; }
		r->has_time = true, p = q;
	}
	if (p < e && *p == 0xc0) {
		r->key.p = NULL, r->key.n = 0, p++;
	} else {
		if (!(q = skip(p, e, 1))) return NULL;
		r->key.p = p, r->key.n = (uint32_t)(q - p), p = q;
	}
	if (p < e && (*p & 0xf0) == 0x80) q = index_pairs(p + 1, e, *p & 0x0f);
	else g_fx.map = NULL, q = skip(p, e, 1);
	if (!q) return NULL;
	r->value.p = p, r->value.n = (uint32_t)(q - p);
	r->raw.p = start, r->raw.n = (uint32_t)(q - start);
	return q;
}

/* ---- writing ------------------------------------------------------------- */

/* grow_slow is sl_buf_grow when b has no room: out of line, so that the
 * common case (grow) is a compare and an add with no call, which in a
 * metered module also means no spill of the fuel counter. */
__attribute__((noinline)) static uint8_t *grow_slow(sl_buf *b, uint32_t n) {
	if (b->oom) return NULL;
	if ((uint64_t)b->len + n > b->cap) {
		uint64_t cap = b->cap ? b->cap : 256;
		while (cap < (uint64_t)b->len + n) cap *= 2;
		uint8_t *p = cap <= UINT32_MAX ? realloc(b->p, (size_t)cap) : NULL;
		if (!p) { b->oom = true; return NULL; }
		b->p = p, b->cap = (uint32_t)cap;
	}
	uint8_t *at = b->p + b->len;
	b->len += n;
	return at;
}

static inline __attribute__((always_inline)) uint8_t *grow(sl_buf *b, uint32_t n) {
	if (b->oom || (uint64_t)b->len + n > b->cap) return grow_slow(b, n);
	uint8_t *at = b->p + b->len;
	b->len += n;
	return at;
}

uint8_t *sl_buf_grow(sl_buf *b, uint32_t n) { return grow(b, n); }

static inline __attribute__((always_inline)) void put_raw(sl_buf *b, const void *p, uint32_t n) {
	uint8_t *d = grow(b, n);
	if (d && n) memcpy(d, p, n);
}

void sl_put_raw(sl_buf *b, const void *p, uint32_t n) { put_raw(b, p, n); }

static inline void put1(sl_buf *b, uint8_t c) { uint8_t *d = grow(b, 1); if (d) *d = c; }

/* put_be writes header c then v in n big-endian bytes. */
static inline void put_be(sl_buf *b, uint8_t c, uint64_t v, int n) {
	uint8_t *d = grow(b, 1 + (uint32_t)n);
	if (!d) return;
	d[0] = c;
	for (int i = n; i >= 1; i--, v >>= 8) d[i] = (uint8_t)v;
}

void sl_put_nil(sl_buf *b) { put1(b, 0xc0); }
void sl_put_bool(sl_buf *b, bool v) { put1(b, v ? 0xc3 : 0xc2); }

void sl_put_int(sl_buf *b, int64_t v) { /* abi.AppendInt */
	if (v >= 0 && v <= 0x7f) put1(b, (uint8_t)v);
	else if (v < 0 && v >= -32) put1(b, (uint8_t)(int8_t)v);
	else if (v >= 0 && v <= UINT8_MAX) put_be(b, 0xcc, (uint64_t)v, 1);
	else if (v >= 0 && v <= UINT16_MAX) put_be(b, 0xcd, (uint64_t)v, 2);
	else if (v >= 0 && v <= UINT32_MAX) put_be(b, 0xce, (uint64_t)v, 4);
	else if (v >= INT8_MIN && v <= INT8_MAX) put_be(b, 0xd0, (uint8_t)(int8_t)v, 1);
	else if (v >= INT16_MIN && v <= INT16_MAX) put_be(b, 0xd1, (uint16_t)(int16_t)v, 2);
	else if (v >= INT32_MIN && v <= INT32_MAX) put_be(b, 0xd2, (uint32_t)(int32_t)v, 4);
	else put_be(b, v >= 0 ? 0xcf : 0xd3, (uint64_t)v, 8);
}

void sl_put_float(sl_buf *b, double v) {
	uint64_t bits;
	memcpy(&bits, &v, 8);
	put_be(b, 0xcb, bits, 8);
}

void sl_put_str(sl_buf *b, const void *s, uint32_t n) {
	if (n <= 31) put1(b, (uint8_t)(0xa0 | n));
	else if (n <= UINT8_MAX) put_be(b, 0xd9, n, 1);
	else if (n <= UINT16_MAX) put_be(b, 0xda, n, 2);
	else put_be(b, 0xdb, n, 4);
	put_raw(b, s, n);
}

void sl_put_cstr(sl_buf *b, const char *s) { sl_put_str(b, s, (uint32_t)strlen(s)); }

void sl_put_bin(sl_buf *b, const void *p, uint32_t n) {
	if (n <= UINT8_MAX) put_be(b, 0xc4, n, 1);
	else if (n <= UINT16_MAX) put_be(b, 0xc5, n, 2);
	else put_be(b, 0xc6, n, 4);
	put_raw(b, p, n);
}

/* header writes a fix/16/32 container header (fix is 0x80 or 0x90). */
static void header(sl_buf *b, uint8_t fix, uint8_t c16, uint32_t n) {
	if (n <= 15) put1(b, (uint8_t)(fix | n));
	else if (n <= UINT16_MAX) put_be(b, c16, n, 2);
	else put_be(b, (uint8_t)(c16 + 1), n, 4);
}

void sl_put_array(sl_buf *b, uint32_t n) { header(b, 0x90, 0xdc, n); }
void sl_put_map(sl_buf *b, uint32_t n) { header(b, 0x80, 0xde, n); }

/* ---- errors ---------------------------------------------------------------- */

static char g_err[4096]; /* abi.MaxErrorText */
static uint32_t g_err_len;
static bool g_err_set; /* the current call has sent an error text */

static void err_add(const void *p, uint32_t n) {
	if (n > sizeof g_err - g_err_len) n = sizeof g_err - g_err_len;
	if (n) memcpy(g_err + g_err_len, p, n);
	g_err_len += n;
}
static void err_adds(const char *s) { err_add(s, (uint32_t)strlen(s)); }
/* fmt_int writes v in decimal to d (24 bytes) and returns its length. */
static uint32_t fmt_int(char *d, int64_t v) {
	char t[24];
	int i = sizeof t;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do t[--i] = (char)('0' + u % 10); while ((u /= 10) > 0);
	if (v < 0) t[--i] = '-';
	memcpy(d, t + i, sizeof t - (size_t)i);
	return (uint32_t)(sizeof t - (size_t)i);
}
/* fmt_float writes f for a message as Go's strconv.FormatFloat(f, 'g', -1,
 * 64) writes the numbers people type (1.5, -0.25, 2.675, 1e+06, 1.5e-05):
 * an exponent below 1e-4 and from 1e6 up, at most 15 significant digits,
 * trailing zeros dropped. It is no shortest round trip (0.1 + 0.2 shows as
 * 0.3, Go's 0.30000000000000004): for messages only. d holds 32 bytes. */
static uint32_t fmt_float(char *d, double f) {
	uint32_t n = 0;
	if (f != f) { memcpy(d, "NaN", 3); return 3; }
	if (f < 0 || (f == 0 && 1 / f < 0)) d[n++] = '-', f = -f;
	if (f > 1.7976931348623157e308) {
		if (!n) d[n++] = '+';
		memcpy(d + n, "Inf", 3);
		return n + 3;
	}
	int e = 0;
	if (f != 0 && (f < 1e-4 || f >= 1e6)) { /* f = m × 10^e, m in [1, 10): big steps first, few roundings */
		while (f >= 1e100) f /= 1e100, e += 100;
		while (f >= 1e10) f /= 1e10, e += 10;
		while (f >= 10) f /= 10, e++;
		while (f < 1e-99) f *= 1e100, e -= 100;
		while (f < 1e-9) f *= 1e10, e -= 10;
		while (f < 1) f *= 10, e--;
	}
	/* the integer part, then as many fraction digits as make 15 in all */
	uint64_t ip = (uint64_t)f;
	int k = 15;
	for (uint64_t t = ip; t > 0; t /= 10) k--;
	if (!ip) /* zeros after the point are no significant digits */
		for (double t = f; t != 0 && t < 0.1 && k < 18; t *= 10) k++;
	if (k < 0) k = 0;
	uint64_t p10 = 1;
	for (int i = 0; i < k; i++) p10 *= 10;
	uint64_t q = (uint64_t)((f - (double)ip) * (double)p10 + 0.5);
	if (q >= p10) q -= p10, ip++;
	if (e && ip >= 10) ip /= 10, e++; /* 9.99...96 rounded up to 10 */
	n += fmt_int(d + n, (int64_t)ip);
	if (q) {
		char t[20];
		for (int i = k - 1; i >= 0; i--) t[i] = (char)('0' + q % 10), q /= 10;
		int m = k;
		while (m > 0 && t[m - 1] == '0') m--;
		d[n++] = '.';
		memcpy(d + n, t, (size_t)m), n += (uint32_t)m;
	}
	if (e) {
		int a = e < 0 ? -e : e;
		d[n++] = 'e', d[n++] = e < 0 ? '-' : '+';
		if (a < 10) d[n++] = '0';
		n += fmt_int(d + n, a);
	}
	return n;
}

static void err_addi(int64_t v) {
	char d[24];
	err_add(d, fmt_int(d, v));
}
static int err_send(int status) {
	sl_host_error((const uint8_t *)g_err, g_err_len);
	g_err_set = true; /* g_err keeps the text: user_failed may prefix it */
	return status;
}

int sl_failn(int status, const char *msg, const void *detail, uint32_t n) {
	g_err_len = 0;
	err_adds(msg);
	err_add(detail, n);
	return err_send(status);
}

int sl_fail(int status, const char *msg) { return sl_failn(status, msg, NULL, 0); }

/* ---- output ports ------------------------------------------------------------ */

typedef struct {
	sl_buf buf;
	sl_buf ends; /* the end of each record in buf, a little-endian u32 each (emit_ends) */
	int32_t count;
	int32_t port; /* the host's port; negative: nothing consumes it, drop */
} sl_out;

enum { FLUSH_AT = 64 << 10 };

static const sl_plugin *g_plugin;
static sl_context g_ctx;
static bool g_opened;
static sl_out g_outs[1 + SL_MAX_OUTPUTS];
static int g_nouts = 1;
static int g_fail;            /* first failure of an output call in this call */
static const sl_record *g_cur; /* the record being processed */
static sl_buf g_sink;          /* where records for a bad handle go */
/* A filter's kept records that lie back to back in the batch: copied to the
 * main output as one block when the run breaks, before anything else is
 * written there, and at the end of the call. */
static struct { const uint8_t *p; uint32_t n; int32_t count; } g_run;
/* The ends of the run's records but the last, from g_run.p: a run breaks
 * at RUN_MAX records, so that keeping one costs a store. */
enum { RUN_MAX = 1024 };
static uint32_t g_run_end[RUN_MAX - 1];

/* le32 stores v at d as a little-endian u32 (emit_ends' layout). */
static inline void le32(uint8_t *d, uint32_t v) {
	d[0] = (uint8_t)v, d[1] = (uint8_t)(v >> 8), d[2] = (uint8_t)(v >> 16), d[3] = (uint8_t)(v >> 24);
}

/* put_end appends end to an output's ends. */
static inline void put_end(sl_buf *ends, uint32_t end) {
	uint8_t *d = grow(ends, 4);
	if (d) le32(d, end);
}

const sl_context *sl_ctx(void) { return &g_ctx; }

static int fail_once(int status) {
	if (!g_fail) g_fail = status;
	return status;
}

static int run_flush(void);

static const char *g_bad_tag; /* the last tag sl_output did not find */

int sl_output(const char *tag) {
	int h = 1;
	for (const char *const *t = g_plugin ? g_plugin->outputs : NULL; t && *t && tag; t++, h++)
		if (strcmp(*t, tag) == 0) return h;
	g_bad_tag = tag ? tag : "(null)";
	return SL_NO_OUTPUT;
}

static sl_out *out_of(int h) {
	if (h == SL_MAIN && g_run.count) run_flush(); /* keeps the main output in order */
	if (h == SL_NO_OUTPUT && g_bad_tag) {
		g_err_len = 0;
		err_adds("unknown side output \"");
		err_adds(g_bad_tag);
		err_adds("\" (sl_output): the plugin declares ");
		int n = 0;
		for (const char *const *t = g_plugin ? g_plugin->outputs : NULL; t && *t; t++, n++) {
			err_adds(n ? ", \"" : "\"");
			err_adds(*t);
			err_adds("\"");
		}
		err_adds(n ? " in its .outputs" : "no side outputs (.outputs)");
		fail_once(err_send(SL_USER));
		return NULL;
	}
	if (h < 0 || h >= g_nouts) {
		g_err_len = 0;
		err_adds("unknown output handle ");
		err_addi(h);
		err_adds(": the plugin has SL_MAIN (0) and ");
		err_addi(g_nouts - 1);
		err_adds(" side outputs (1 on), in the order of its .outputs tags");
		fail_once(err_send(SL_USER));
		return NULL;
	}
	return &g_outs[h];
}

static int flush(sl_out *o) {
	if (o->buf.oom || o->ends.oom) {
		o->buf.oom = o->ends.oom = false, o->buf.len = o->ends.len = 0, o->count = 0;
		return fail_once(sl_fail(SL_OUT_OF_MEMORY, "out of memory for output"));
	}
	int32_t st = SL_OK;
	if (o->count > 0 && o->port >= 0) st = sl_host_emit_ends(o->port, o->buf.p, o->buf.len, o->count, o->ends.p);
	o->buf.len = 0, o->ends.len = 0, o->count = 0;
	if (st != SL_OK) {
		g_err_len = 0;
		err_adds(st == SL_LIMIT ? "output limit reached on port " : "emit refused on port ");
		err_addi(o->port);
		return fail_once(err_send(st));
	}
	return SL_OK;
}

/* record_done counts a record written to o and flushes a full buffer. */
static int record_done(sl_out *o) {
	put_end(&o->ends, o->buf.len);
	o->count++;
	return o->buf.len >= FLUSH_AT || o->buf.oom || o->ends.oom ? flush(o) : (g_fail ? g_fail : SL_OK);
}

static int run_flush(void) {
	sl_out *o = &g_outs[SL_MAIN];
	uint32_t base = o->buf.len;
	put_raw(&o->buf, g_run.p, g_run.n);
	/* the ends of all but the last record (a run of one has none: no grow
	 * by 0, which on a buffer never grown would offset a NULL pointer) */
	uint8_t *d = g_run.count > 1 ? grow(&o->ends, 4 * (uint32_t)(g_run.count - 1)) : NULL;
	for (int32_t i = 0; d && i < g_run.count - 1; i++, d += 4) le32(d, base + g_run_end[i]);
	o->count += g_run.count - 1; /* record_done counts the last one */
	g_run.n = 0, g_run.count = 0;
	return record_done(o);
}

/* keep is sl_emit(SL_MAIN, r) for a filter's record r: it extends the run
 * when r follows it in the batch. */
static int keep(const sl_record *r) {
	if (g_run.count && g_run.p + g_run.n == r->raw.p && g_run.n < FLUSH_AT && g_run.count < RUN_MAX) {
		g_run_end[g_run.count - 1] = g_run.n; /* where the run's last record ends */
		g_run.n += r->raw.n, g_run.count++;
		return g_fail;
	}
	int st = g_run.count ? run_flush() : g_fail;
	g_run.p = r->raw.p, g_run.n = r->raw.n, g_run.count = 1;
	return st;
}

static void put_envelope(sl_buf *b, bool has_time, int64_t time, sl_value key) {
	put1(b, 0x93);
	if (has_time) sl_put_int(b, time); else sl_put_nil(b);
	if (key.n) put_raw(b, key.p, key.n); else sl_put_nil(b);
}

int sl_emit(int h, const sl_record *r) {
	sl_out *o = out_of(h);
	if (!o) return g_fail;
	put_raw(&o->buf, r->raw.p, r->raw.n);
	return record_done(o);
}

int sl_emit_value(int h, const sl_record *r, sl_value v) {
	sl_buf *b = sl_begin_with(h, r->has_time, r->time, r->key);
	put_raw(b, v.p, v.n);
	return sl_end(h);
}

sl_buf *sl_begin_with(int h, bool has_time, int64_t time, sl_value key) {
	sl_out *o = out_of(h);
	sl_buf *b = o ? &o->buf : (g_sink.len = 0, &g_sink);
	put_envelope(b, has_time, time, key);
	return b;
}

sl_buf *sl_begin(int h, const sl_record *r) {
	static const sl_value none = {NULL, 0};
	return r ? sl_begin_with(h, r->has_time, r->time, none) : sl_begin_with(h, false, 0, none);
}

int sl_end(int h) {
	sl_out *o = out_of(h);
	return o ? record_done(o) : g_fail;
}

/* ---- record edits -------------------------------------------------------------- */

typedef struct {
	const uint8_t *name;
	uint32_t name_len, val_off, val_len;
	bool unset, found;
} sl_op;

struct sl_edit {
	const sl_record *rec;
	sl_op *ops;
	uint32_t nops, cap;
	sl_buf vals; /* the encoded values of the ops */
};

static sl_edit g_edit;

sl_edit *sl_edit_begin(const sl_record *r) {
	g_edit.rec = r, g_edit.nops = 0, g_edit.vals.len = 0;
	return &g_edit;
}

/* op_for returns the op for name, adding one; NULL when out of memory. */
static sl_op *op_for(sl_edit *e, const uint8_t *name, uint32_t n) {
	for (uint32_t i = 0; i < e->nops; i++)
		if (e->ops[i].name_len == n && memcmp(e->ops[i].name, name, n) == 0) return &e->ops[i];
	if (e->nops == e->cap) {
		uint32_t cap = e->cap ? 2 * e->cap : 8;
		sl_op *ops = realloc(e->ops, cap * sizeof *ops);
		if (!ops) { e->vals.oom = true; return NULL; }
		e->ops = ops, e->cap = cap;
	}
	sl_op *op = &e->ops[e->nops++];
	op->name = name, op->name_len = n;
	return op;
}

/* The setters encode the value into e->vals, then record where it is. */
#define SET(e, name, n, unset_, encode) do { \
	sl_op *op_ = op_for(e, (const uint8_t *)(name), n); \
	if (!op_) break; \
	uint32_t off_ = (e)->vals.len; \
	encode; \
	op_->val_off = off_, op_->val_len = (e)->vals.len - off_, op_->unset = unset_; \
} while (0)

void sl_set_rawn(sl_edit *e, const uint8_t *name, uint32_t len, sl_value v) { SET(e, name, len, false, put_raw(&e->vals, v.p, v.n)); }
void sl_set_raw(sl_edit *e, const char *name, sl_value v) { sl_set_rawn(e, (const uint8_t *)name, (uint32_t)strlen(name), v); }
void sl_set_nil(sl_edit *e, const char *name) { SET(e, name, (uint32_t)strlen(name), false, sl_put_nil(&e->vals)); }
void sl_set_bool(sl_edit *e, const char *name, bool v) { SET(e, name, (uint32_t)strlen(name), false, sl_put_bool(&e->vals, v)); }
void sl_set_int(sl_edit *e, const char *name, int64_t v) { SET(e, name, (uint32_t)strlen(name), false, sl_put_int(&e->vals, v)); }
void sl_set_float(sl_edit *e, const char *name, double v) { SET(e, name, (uint32_t)strlen(name), false, sl_put_float(&e->vals, v)); }
void sl_set_str(sl_edit *e, const char *name, const void *s, uint32_t n) { SET(e, name, (uint32_t)strlen(name), false, sl_put_str(&e->vals, s, n)); }
void sl_set_cstr(sl_edit *e, const char *name, const char *s) { sl_set_str(e, name, s, (uint32_t)strlen(s)); }
void sl_unset(sl_edit *e, const char *name) { SET(e, name, (uint32_t)strlen(name), true, (void)0); }

/* edit_fast writes r edited by e to b when r's value is a fixmap whose keys
 * are all fixstrs, none matching a name twice (what writers produce): one
 * walk finds the edited fields, then the envelope as it was encoded and the
 * bytes between the edited fields are copied as blocks. It writes nothing
 * and returns false for any other record, which the general path takes. */
static bool edit_fast(sl_edit *e, const sl_record *r, sl_buf *b) {
	const uint8_t *v = r->value.p, *ve = v + r->value.n; /* a fixmap */
	if (e->nops > 16) return false;
	if (e->nops == 1 && !e->ops[0].unset && indexed(r->value)) {
		/* one field set, the common edit: a splice */
		const sl_op *op = &e->ops[0];
		const uint8_t *end = r->raw.p + r->raw.n;
		for (uint32_t i = 0; i < g_fx.n; i++) {
			const uint8_t *key = v + g_fx.off[i];
			if ((*key & 0x1fu) != op->name_len || !same_bytes(key + 1, op->name, op->name_len)) continue;
			/* the first field of that name (the general path edits only
			 * that one too) */
			const uint8_t *val = key + 1 + op->name_len, *next = v + g_fx.off[i + 1];
			if ((uint32_t)(next - val) == op->val_len) {
				/* a value of the same size: the record in one copy, the
				 * value written over its own in the output */
				uint32_t at = b->len;
				put_raw(b, r->raw.p, r->raw.n);
				if (b->len == at + r->raw.n) memcpy(b->p + at + (uint32_t)(val - r->raw.p), e->vals.p + op->val_off, op->val_len);
				return true;
			}
			put_raw(b, r->raw.p, (uint32_t)(val - r->raw.p));
			put_raw(b, e->vals.p + op->val_off, op->val_len);
			put_raw(b, next, (uint32_t)(end - next));
			return true;
		}
		if (g_fx.n == 15) return false;
		if (ve == end) {
			/* the record in one copy, its header then counting one
			 * field more, and the field after it */
			uint32_t at = b->len;
			put_raw(b, r->raw.p, r->raw.n);
			if (b->len == at + r->raw.n) b->p[at + (uint32_t)(v - r->raw.p)] = (uint8_t)(0x81 + g_fx.n);
		} else {
			put_raw(b, r->raw.p, (uint32_t)(v - r->raw.p));
			put1(b, (uint8_t)(0x81 + g_fx.n));
			put_raw(b, v + 1, (uint32_t)(ve - v - 1));
		}
		sl_put_str(b, op->name, op->name_len);
		put_raw(b, e->vals.p + op->val_off, op->val_len);
		return true;
	}
	struct { const uint8_t *k, *end; const sl_op *op; } hit[16];
	uint32_t n = *v & 0x0fu, count = n, nhit = 0;
	for (uint32_t j = 0; j < e->nops; j++) e->ops[j].found = false;
	bool ix = indexed(r->value);
	const uint8_t *p = v + 1;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *k = p, *end;
		if (!ix && (p >= ve || (*p & 0xe0) != 0xa0)) return false;
		uint32_t kn = *p & 0x1fu;
		if (ix) end = v + g_fx.off[i + 1];
		else if (kn >= (uint32_t)(ve - p) || !(end = skip_fast(p + 1 + kn, ve, 2))) return false;
		for (uint32_t j = 0; j < e->nops; j++) {
			sl_op *op = &e->ops[j];
			if (op->name_len != kn || !same_bytes(k + 1, op->name, kn)) continue;
			if (op->found) return false; /* a key twice: the general path's rules */
			op->found = true, count -= op->unset;
			hit[nhit].k = k, hit[nhit].end = end, hit[nhit].op = op, nhit++;
			break;
		}
		p = end;
	}
	if (p != ve) return false;
	for (uint32_t j = 0; j < e->nops; j++) count += !e->ops[j].found && !e->ops[j].unset;
	put_raw(b, r->raw.p, (uint32_t)(v - r->raw.p));
	sl_put_map(b, count);
	const uint8_t *at = v + 1;
	for (uint32_t i = 0; i < nhit; i++) {
		const sl_op *op = hit[i].op;
		put_raw(b, at, (uint32_t)(hit[i].k - at));
		if (!op->unset) {
			put_raw(b, hit[i].k, 1 + op->name_len);
			put_raw(b, e->vals.p + op->val_off, op->val_len);
		}
		at = hit[i].end;
	}
	put_raw(b, at, (uint32_t)(ve - at));
	for (uint32_t j = 0; j < e->nops; j++) {
		const sl_op *op = &e->ops[j];
		if (op->found || op->unset) continue;
		sl_put_str(b, op->name, op->name_len);
		put_raw(b, e->vals.p + op->val_off, op->val_len);
	}
	return true;
}

int sl_edit_emit(sl_edit *e, int h) {
	const sl_record *r = e->rec;
	sl_iter it;
	if (e->vals.oom) { e->vals.oom = false; return fail_once(sl_fail(SL_OUT_OF_MEMORY, "out of memory for a record edit")); }
	if (e->nops == 0) return sl_emit(h, r); /* unchanged: byte for byte, whatever the value */
	bool fixmap = r->value.n && (*r->value.p & 0xf0) == 0x80; /* sl_map_iter takes it */
	if (!fixmap && !sl_map_iter(r->value, &it)) return fail_once(sl_fail(SL_MALFORMED, "record value is not a map"));
	sl_out *o = out_of(h);
	if (!o) return g_fail;
	sl_buf *b = &o->buf;
	if (fixmap) {
		if (edit_fast(e, r, b)) return record_done(o);
		sl_map_iter(r->value, &it);
	}
	put_raw(b, r->raw.p, (uint32_t)(r->value.p - r->raw.p)); /* the envelope as it was encoded */
	uint32_t at = b->len, count = 0;
	sl_buf_grow(b, 5); /* room for the largest map header, fixed below */
	for (uint32_t i = 0; i < e->nops; i++) e->ops[i].found = false;
	uint32_t unseen = e->nops;
	sl_value k, v;
	sl_str s;
	while (sl_map_next(&it, &k, &v)) {
		sl_op *op = NULL;
		if (sl_as_str(k, &s))
			for (uint32_t i = 0; i < e->nops && !op; i++)
				if (e->ops[i].name_len == s.n && memcmp(e->ops[i].name, s.p, s.n) == 0) op = &e->ops[i];
		if (op && !op->found) op->found = true, unseen--;
		if (!op || !op->unset) {
			put_raw(b, k.p, k.n);
			if (op) put_raw(b, e->vals.p + op->val_off, op->val_len);
			else put_raw(b, v.p, v.n);
			count++;
		}
		if (unseen == 0) { /* every edit applied: the rest is copied as it is (as sdk/go) */
			put_raw(b, it.p, (uint32_t)(it.end - it.p));
			count += it.left;
			break;
		}
	}
	for (uint32_t i = 0; i < e->nops; i++) {
		sl_op *op = &e->ops[i];
		if (op->found || op->unset) continue;
		sl_put_str(b, op->name, op->name_len);
		put_raw(b, e->vals.p + op->val_off, op->val_len);
		count++;
	}
	if (b->oom) return record_done(o);
	/* write the smallest map header and close the 5-byte gap */
	uint8_t hdr[5];
	sl_buf hb = {hdr, 0, sizeof hdr, false};
	sl_put_map(&hb, count);
	memmove(b->p + at + hb.len, b->p + at + 5, b->len - at - 5);
	memcpy(b->p + at, hdr, hb.len);
	b->len -= 5 - hb.len;
	return record_done(o);
}

/* ---- keyed state ---------------------------------------------------------------- */

static sl_buf g_state; /* state_get's buffer */

int sl_state_get_key(int32_t slot, sl_value key, sl_str *val) {
	if (key.n == 0) return sl_fail(SL_STATE, "keyed state needs a key (the record's key is nil)");
	if (g_state.cap == 0 && !sl_buf_grow(&g_state, 256)) return sl_fail(SL_OUT_OF_MEMORY, "out of memory for state");
	for (;;) {
		int32_t n = sl_host_state_get(slot, key.p, key.n, g_state.p, g_state.cap);
		if (n == -1) return 0;
		if (n < 0) return sl_fail(n < -1 ? n : SL_STATE, "state_get failed");
		if ((uint32_t)n <= g_state.cap) { val->p = g_state.p, val->n = (uint32_t)n; return 1; }
		g_state.len = 0;
		if (!sl_buf_grow(&g_state, (uint32_t)n)) return sl_fail(SL_OUT_OF_MEMORY, "out of memory for state");
	}
}

int sl_state_put_key(int32_t slot, sl_value key, const void *p, uint32_t n) {
	if (key.n == 0) return sl_fail(SL_STATE, "keyed state needs a key (the record's key is nil)");
	int32_t st = sl_host_state_put(slot, key.p, key.n, p, n);
	return st == SL_OK ? SL_OK : sl_fail(st, "state_put failed");
}

int sl_state_del_key(int32_t slot, sl_value key) {
	if (key.n == 0) return sl_fail(SL_STATE, "keyed state needs a key (the record's key is nil)");
	int32_t st = sl_host_state_del(slot, key.p, key.n);
	return st == SL_OK ? SL_OK : sl_fail(st, "state_del failed");
}

static const sl_record *cur_or_fail(void) {
	if (!g_cur) sl_fail(SL_STATE, "keyed state outside a record: use the *_key variants");
	return g_cur;
}

int sl_state_get(int32_t slot, sl_str *val) { return cur_or_fail() ? sl_state_get_key(slot, g_cur->key, val) : SL_STATE; }
int sl_state_put(int32_t slot, const void *p, uint32_t n) { return cur_or_fail() ? sl_state_put_key(slot, g_cur->key, p, n) : SL_STATE; }
int sl_state_del(int32_t slot) { return cur_or_fail() ? sl_state_del_key(slot, g_cur->key) : SL_STATE; }

/* ---- timers ---------------------------------------------------------------------------- */

int sl_timer_register_key(int32_t kind, sl_value key, int64_t ts) {
	if (key.n == 0) return sl_fail(SL_STATE, "timers need a key (the record's key is nil)");
	int32_t st = sl_host_timer_register(kind, key.p, key.n, ts);
	return st == SL_OK ? SL_OK : sl_fail(st, "timer_register failed");
}

int sl_timer_delete_key(int32_t kind, sl_value key, int64_t ts) {
	if (key.n == 0) return sl_fail(SL_STATE, "timers need a key (the record's key is nil)");
	int32_t st = sl_host_timer_delete(kind, key.p, key.n, ts);
	return st == SL_OK ? SL_OK : sl_fail(st, "timer_delete failed");
}

int sl_timer_register(int32_t kind, int64_t ts) { return cur_or_fail() ? sl_timer_register_key(kind, g_cur->key, ts) : SL_STATE; }
int sl_timer_delete(int32_t kind, int64_t ts) { return cur_or_fail() ? sl_timer_delete_key(kind, g_cur->key, ts) : SL_STATE; }
int64_t sl_current_watermark(void) { return sl_host_current_watermark(); }
int64_t sl_current_processing_time(void) { return sl_host_current_processing_time(); }

/* ---- list and map state -------------------------------------------------------------- */

static sl_buf g_kinds; /* the buffer of list and map reads */

/* key_or_fail returns the current record's key, or fails. */
static int key_or_fail(sl_value *key) {
	if (!cur_or_fail()) return SL_STATE;
	if (g_cur->key.n == 0) return sl_fail(SL_STATE, "keyed state needs a key (the record's key is nil)");
	*key = g_cur->key;
	return SL_OK;
}

/* kinds_read calls a list or map read until g_kinds holds the answer. */
#define KINDS_READ(call, name, out)                                                            \
	do {                                                                                       \
		if (g_kinds.cap == 0 && !sl_buf_grow(&g_kinds, 256)) return sl_fail(SL_OUT_OF_MEMORY, "out of memory for state"); \
		g_kinds.len = 0;                                                                       \
		for (int try_ = 0;; try_++) {                                                          \
			int32_t n_ = (call);                                                               \
			if (n_ == -1) { (out)->p = NULL, (out)->n = 0; return 0; }                         \
			if (n_ < 0) return sl_fail(n_, name " failed");                                    \
			if ((uint32_t)n_ <= g_kinds.cap) { (out)->p = g_kinds.p, (out)->n = (uint32_t)n_; return 1; } \
			if (try_ > 0) return sl_fail(SL_STATE, name ": the state grew between two reads"); \
			g_kinds.len = 0;                                                                   \
			if (!sl_buf_grow(&g_kinds, (uint32_t)n_)) return sl_fail(SL_OUT_OF_MEMORY, "out of memory for state"); \
			g_kinds.len = 0;                                                                   \
		}                                                                                      \
	} while (0)

int sl_liststate_get(int32_t slot, sl_str *wire) {
	sl_value k;
	int st = key_or_fail(&k);
	if (st) return st;
	KINDS_READ(sl_host_state_list_get(slot, k.p, k.n, g_kinds.p, g_kinds.cap), "state_list_get", wire);
}

/* wire_item reads one u32-prefixed item off *w. */
static int wire_item(sl_str *w, sl_str *item) {
	if (w->n < 4) return SL_STATE;
	uint32_t n = (uint32_t)w->p[0] | (uint32_t)w->p[1] << 8 | (uint32_t)w->p[2] << 16 | (uint32_t)w->p[3] << 24;
	if (n > w->n - 4) return SL_STATE;
	item->p = w->p + 4, item->n = n;
	w->p += 4 + n, w->n -= 4 + n;
	return SL_OK;
}

int sl_liststate_next(sl_str *wire, sl_str *elem) {
	if (wire->n == 0) return 0;
	return wire_item(wire, elem) == SL_OK ? 1 : sl_fail(SL_STATE, "state_list_get: malformed answer from the host");
}

int sl_liststate_add(int32_t slot, const void *p, uint32_t n) {
	sl_value k;
	int st = key_or_fail(&k);
	if (st) return st;
	st = sl_host_state_list_append(slot, k.p, k.n, p, n);
	return st == SL_OK ? SL_OK : sl_fail(st, "state_list_append failed");
}

void sl_wire_put(sl_buf *b, const void *p, uint32_t n) {
	uint8_t len[4] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
	sl_put_raw(b, len, 4);
	sl_put_raw(b, p, n);
}

int sl_liststate_update(int32_t slot, const void *wire, uint32_t n) {
	sl_value k;
	int st = key_or_fail(&k);
	if (st) return st;
	st = sl_host_state_list_update(slot, k.p, k.n, wire, n);
	return st == SL_OK ? SL_OK : sl_fail(st, "state_list_update failed");
}

int sl_mapstate_get(int32_t slot, const void *uk, uint32_t ukn, sl_str *val) {
	sl_value k;
	int st = key_or_fail(&k);
	if (st) return st;
	KINDS_READ(sl_host_state_map_get(slot, k.p, k.n, uk, ukn, g_kinds.p, g_kinds.cap), "state_map_get", val);
}

int sl_mapstate_put(int32_t slot, const void *uk, uint32_t ukn, const void *p, uint32_t n) {
	sl_value k;
	int st = key_or_fail(&k);
	if (st) return st;
	st = sl_host_state_map_put(slot, k.p, k.n, uk, ukn, p, n);
	return st == SL_OK ? SL_OK : sl_fail(st, "state_map_put failed");
}

int sl_mapstate_del(int32_t slot, const void *uk, uint32_t ukn) {
	sl_value k;
	int st = key_or_fail(&k);
	if (st) return st;
	st = sl_host_state_map_del(slot, k.p, k.n, uk, ukn);
	return st == SL_OK ? SL_OK : sl_fail(st, "state_map_del failed");
}

int sl_mapstate_contains(int32_t slot, const void *uk, uint32_t ukn) {
	sl_value k;
	int st = key_or_fail(&k);
	if (st) return st;
	st = sl_host_state_map_contains(slot, k.p, k.n, uk, ukn);
	return st >= 0 ? st : sl_fail(st, "state_map_contains failed");
}

int sl_mapstate_entries(int32_t slot, sl_str *wire) {
	sl_value k;
	int st = key_or_fail(&k);
	if (st) return st;
	KINDS_READ(sl_host_state_map_entries(slot, k.p, k.n, g_kinds.p, g_kinds.cap), "state_map_entries", wire);
}

int sl_mapstate_next(sl_str *wire, sl_str *key, sl_str *val) {
	if (wire->n == 0) return 0;
	if (wire_item(wire, key) != SL_OK || wire_item(wire, val) != SL_OK)
		return sl_fail(SL_STATE, "state_map_entries: malformed answer from the host");
	return 1;
}

int sl_state_clear(int32_t slot) {
	sl_value k;
	int st = key_or_fail(&k);
	if (st) return st;
	st = sl_host_state_clear(slot, k.p, k.n);
	return st == SL_OK ? SL_OK : sl_fail(st, "state_clear failed");
}

/* ---- text and keys as Go sees them --------------------------------------------------- */

#include "sluice_unicode.h"

uint32_t sl_decode_rune(const uint8_t *p, uint32_t left, uint32_t *size) {
	if (left == 0) { *size = 0; return SL_RUNE_ERROR; }
	uint8_t c = p[0];
	*size = 1;
	if (c < 0x80) return c;
	uint32_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
	uint8_t lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80; /* no overlong forms */
	uint8_t hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf; /* no surrogates, nothing past U+10FFFF */
	if (n == 0 || left < n || p[1] < lo || p[1] > hi) return SL_RUNE_ERROR;
	for (uint32_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf) return SL_RUNE_ERROR;
	*size = n;
	if (n == 2) return (uint32_t)(c & 0x1f) << 6 | (p[1] & 0x3f);
	if (n == 3) return (uint32_t)(c & 0x0f) << 12 | (uint32_t)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
	return (uint32_t)(c & 0x07) << 18 | (uint32_t)(p[1] & 0x3f) << 12 | (uint32_t)(p[2] & 0x3f) << 6 | (p[3] & 0x3f);
}

uint32_t sl_decode_last_rune(const uint8_t *p, uint32_t n, uint32_t *size) {
	if (n == 0) { *size = 0; return SL_RUNE_ERROR; }
	if (p[n - 1] < 0x80) { *size = 1; return p[n - 1]; }
	/* back to a byte that can start a rune, at most 4 bytes */
	uint32_t start = n - 1, lim = n >= 4 ? n - 4 : 0;
	while (start > lim && (p[start] & 0xc0) == 0x80) start--;
	uint32_t r = sl_decode_rune(p + start, n - start, size);
	if (start + *size != n) { *size = 1; return SL_RUNE_ERROR; }
	return r;
}

void sl_put_rune(sl_buf *b, uint32_t r) {
	if ((r >= 0xd800 && r <= 0xdfff) || r > 0x10ffff) r = SL_RUNE_ERROR;
	uint8_t u[4];
	uint32_t n;
	if (r < 0x80) u[0] = (uint8_t)r, n = 1;
	else if (r < 0x800) u[0] = (uint8_t)(0xc0 | r >> 6), u[1] = (uint8_t)(0x80 | (r & 0x3f)), n = 2;
	else if (r < 0x10000) u[0] = (uint8_t)(0xe0 | r >> 12), u[1] = (uint8_t)(0x80 | (r >> 6 & 0x3f)), u[2] = (uint8_t)(0x80 | (r & 0x3f)), n = 3;
	else u[0] = (uint8_t)(0xf0 | r >> 18), u[1] = (uint8_t)(0x80 | (r >> 12 & 0x3f)), u[2] = (uint8_t)(0x80 | (r >> 6 & 0x3f)), u[3] = (uint8_t)(0x80 | (r & 0x3f)), n = 4;
	put_raw(b, u, n);
}

/* in_table finds r's range (binary search) and checks its stride. */
static bool in_table(const uint32_t (*t)[3], uint32_t n, uint32_t r) {
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t m = (lo + hi) / 2;
		if (r < t[m][0]) hi = m;
		else if (r > t[m][1]) lo = m + 1;
		else return (r - t[m][0]) % t[m][2] == 0;
	}
	return false;
}

#define COUNT(t) ((uint32_t)(sizeof t / sizeof t[0]))

bool sl_is_space(uint32_t r) { return in_table(sl_space_table, COUNT(sl_space_table), r); }
bool sl_is_punct(uint32_t r) { return in_table(sl_punct_table, COUNT(sl_punct_table), r); }

uint32_t sl_to_lower(uint32_t r) {
	if (r < 0x80) return r >= 'A' && r <= 'Z' ? r + 32 : r;
	uint32_t lo = 0, hi = COUNT(sl_lower_table);
	while (lo < hi) {
		uint32_t m = (lo + hi) / 2;
		const uint32_t *t = sl_lower_table[m];
		if (r < t[0]) hi = m;
		else if (r > t[1]) lo = m + 1;
		else if (t[2] == 0x110000) return t[0] + (((r - t[0]) & ~1u) | 1); /* upper/lower pairs */
		else return r + t[2]; /* the delta, wrapping as an int32 */
	}
	return r;
}

/* java_step is abi.javaStep: the first character of p (n > 0) as Java's
 * UTF-8 decoder (new String(bytes, UTF_8)) reads it, its size in *size: a
 * valid sequence gives its code point; a malformed one U+FFFD for the bytes
 * Java takes as one malformed sequence (E2 82 41 is U+FFFD 'A', ED A0 80 one
 * U+FFFD): neither one per byte nor Unicode's maximal subparts. */
static uint32_t java_step(const uint8_t *p, uint32_t n, uint32_t *size) {
	uint32_t r = sl_decode_rune(p, n, size);
	if (r != 0xfffd || *size != 1) return r;
	uint8_t b1 = p[0], b2 = n > 1 ? p[1] : 0;
#define CONT(i) (n > (i) && (p[i] & 0xc0) == 0x80)
	if (b1 >= 0xe0 && b1 <= 0xef) {
		if (n == 1 || (b1 == 0xe0 && (b2 & 0xe0) == 0x80) || !CONT(1)) *size = 1;
		else if (n == 2 || !CONT(2)) *size = 2;
		else *size = 3; /* well formed but a surrogate (ED A0..BF xx) */
	} else if (b1 >= 0xf0 && b1 <= 0xf7) {
		if (b1 > 0xf4 || n == 1 || (b1 == 0xf0 && (b2 < 0x90 || b2 > 0xbf)) || (b1 == 0xf4 && (b2 & 0xf0) != 0x80) || !CONT(1)) *size = 1;
		else if (n == 2 || !CONT(2)) *size = 2;
		else *size = 3;
	}
#undef CONT
	return 0xfffd;
}

int32_t sl_java_string_hash(sl_str s) {
	uint32_t h = 0; /* unsigned: wraps like Java's int */
	for (uint32_t i = 0, size; i < s.n; i += size) {
		uint32_t r = java_step(s.p + i, s.n - i, &size);
		if (r >= 0x10000) {
			r -= 0x10000;
			h = 31 * h + (0xd800 + (r >> 10));
			h = 31 * h + (0xdc00 + (r & 0x3ff));
		} else {
			h = 31 * h + r;
		}
	}
	return (int32_t)h;
}

const char *sl_key_hash(sl_value key, int32_t *hash) {
	sl_str s;
	int64_t i;
	double d;
	sl_iter it;
	sl_value e;
	switch (sl_type_of(key)) {
	case SL_T_NIL: case SL_T_INVALID:
		return "key must not be null";
	case SL_T_STR:
		if (!sl_as_str(key, &s)) return "truncated msgpack";
		*hash = sl_java_string_hash(s);
		return NULL;
	case SL_T_INT: /* Integer.hashCode, or Long.hashCode past 32 bits */
		if (!sl_as_int(key, &i)) return "integer out of range";
		*hash = i >= INT32_MIN && i <= INT32_MAX ? (int32_t)i : (int32_t)(uint32_t)((uint64_t)i ^ (uint64_t)i >> 32);
		return NULL;
	case SL_T_FLOAT:
		if (key.p[0] == 0xca) { /* Float.hashCode */
			if (key.n < 5) return "truncated msgpack";
			uint32_t bits = (uint32_t)key.p[1] << 24 | (uint32_t)key.p[2] << 16 | (uint32_t)key.p[3] << 8 | key.p[4];
			bool nan = (bits & 0x7f800000) == 0x7f800000 && (bits & 0x007fffff);
			*hash = (int32_t)(nan ? 0x7fc00000 : bits);
			return NULL;
		}
		if (!sl_as_float(key, &d)) return "truncated msgpack";
		uint64_t bits; /* Double.hashCode of doubleToLongBits */
		memcpy(&bits, &d, 8);
		if (d != d) bits = 0x7ff8000000000000ull;
		*hash = (int32_t)(uint32_t)(bits ^ bits >> 32);
		return NULL;
	case SL_T_BOOL:
		*hash = key.p[0] == 0xc3 ? 1231 : 1237;
		return NULL;
	case SL_T_ARRAY: { /* a composite key, Flink's Tuple: 31 * h + hash(field) */
		if (!sl_array_iter(key, &it) || it.left == 0 || it.left > (uint32_t)(it.end - it.p)) return "unexpected msgpack type";
		uint32_t h = 0;
		while (sl_array_next(&it, &e)) {
			int32_t eh;
			if (sl_type_of(e) == SL_T_ARRAY) return "nested composite key";
			const char *why = sl_key_hash(e, &eh);
			if (why) return why;
			h = 31 * h + (uint32_t)eh;
		}
		*hash = (int32_t)h;
		return NULL;
	}
	default:
		return "a map, binary or ext value is not a key";
	}
}

/* ---- the runtime behind the exports ---------------------------------------------------- */

static uint8_t *g_in;     /* the input buffer handed out by sluice_buffer */
static uint32_t g_in_cap;

uint8_t *sl__buffer(uint32_t size) {
	if (size == 0) size = 1; /* 0 means failure: always hand out a real pointer */
	if (size > g_in_cap) {
		uint8_t *p = realloc(g_in, size);
		if (!p) return NULL;
		g_in = p, g_in_cap = size;
	}
	return g_in;
}

/* begin_call resets the per-call state. */
static void begin_call(void) {
	g_fail = SL_OK, g_err_set = false, g_cur = NULL, g_fx.map = NULL;
	g_run.n = 0, g_run.count = 0;
	for (int i = 0; i < g_nouts; i++) {
		sl_out *o = &g_outs[i];
		o->buf.len = o->ends.len = 0, o->count = 0, o->buf.oom = o->ends.oom = false;
	}
}

/* finish flushes every port, or returns the first failure. */
static int finish(int st) {
	if (st == SL_OK && g_run.count) st = run_flush();
	for (int i = 0; i < g_nouts && st == SL_OK; i++) st = flush(&g_outs[i]);
	return st == SL_OK && g_fail ? g_fail : st;
}

/* user_failed gives a failing callback's status its text, prefixed with
 * the record's position (i >= 0) or the callback's name, as sdk/go does:
 * "record 3: no amount", "open: bad config". */
static int user_failed(int st, const char *what, int32_t i) {
	if (g_fail) return g_fail;
	char prefix[48];
	sl_buf pb = {(uint8_t *)prefix, 0, sizeof prefix, false};
	if (i >= 0) {
		put_raw(&pb, "record ", 7);
		pb.len += fmt_int(prefix + pb.len, i);
	} else {
		put_raw(&pb, what, (uint32_t)strlen(what));
	}
	put_raw(&pb, ": ", 2);
	if (!g_err_set) {
		g_err_len = 0;
		err_adds(g_plugin && g_plugin->name ? g_plugin->name : "plugin");
		err_adds(": ");
		err_adds(what);
		err_adds(" failed with status ");
		err_addi(st);
	}
	uint32_t n = g_err_len + pb.len <= sizeof g_err ? g_err_len : (uint32_t)sizeof g_err - pb.len;
	memmove(g_err + pb.len, g_err, n);
	memcpy(g_err, prefix, pb.len);
	g_err_len = n + pb.len;
	return err_send(st);
}

/* positive_return fails a callback that returned a positive number: no
 * status is positive, and taking it for SL_OK dropped the record silently. */
static int positive_return(int st, const char *what, int32_t i) {
	if (g_fail) return g_fail;
	g_err_len = 0;
	err_adds(g_plugin && g_plugin->name ? g_plugin->name : "plugin");
	err_adds(": ");
	err_adds(what);
	err_adds(" returned ");
	err_addi(st);
	err_adds(", not a status: return SL_OK or a negative status (sl_fail)");
	g_err_set = true;
	return user_failed(SL_USER, what, i);
}

static int bad_record(int32_t i, const uint8_t *at, const uint8_t *base) {
	g_err_len = 0;
	err_adds("malformed input: record ");
	err_addi(i);
	err_adds(" at byte ");
	err_addi(at - base);
	err_adds(": ");
	err_adds(g_why ? g_why : "bad envelope");
	return err_send(SL_MALFORMED);
}

static int unsupported(const char *what) {
	g_err_len = 0;
	err_adds(g_plugin && g_plugin->name ? g_plugin->name : "plugin");
	err_adds(": ");
	err_adds(what);
	return err_send(SL_UNSUPPORTED);
}

/* ---- config ------------------------------------------------------------------ */

static char g_cfg_err[512]; /* the config getters' refusals, "; "-joined */
static uint32_t g_cfg_err_len;

static void cfg_add(const void *p, uint32_t n) {
	if (n > sizeof g_cfg_err - g_cfg_err_len) n = (uint32_t)sizeof g_cfg_err - g_cfg_err_len;
	memcpy(g_cfg_err + g_cfg_err_len, p, n);
	g_cfg_err_len += n;
}
static void cfg_adds(const char *s) { cfg_add(s, (uint32_t)strlen(s)); }

/* cfg_bad records that key name holds v where want was wanted, naming v
 * as the Go SDK does: a scalar as written (a string quoted, cut at 40
 * bytes), a list or a map by its kind. */
static void cfg_bad(const char *name, const char *want, sl_value v) {
	char d[24];
	int64_t i;
	double f;
	bool b;
	sl_str s;
	if (g_cfg_err_len) cfg_adds("; ");
	cfg_adds("config "), cfg_adds(name), cfg_adds(": want "), cfg_adds(want), cfg_adds(", got ");
	if (sl_as_str(v, &s)) {
		cfg_adds("\"");
		cfg_add(s.p, s.n > 40 ? 40 : s.n);
		cfg_adds(s.n > 40 ? "\"..." : "\"");
	} else if (sl_as_int(v, &i)) {
		cfg_add(d, fmt_int(d, i));
	} else if (sl_as_bool(v, &b)) {
		cfg_adds(b ? "true" : "false");
	} else if (sl_as_float(v, &f)) {
		char fd[32];
		cfg_add(fd, fmt_float(fd, f));
	} else {
		switch (sl_type_of(v)) {
		case SL_T_ARRAY: cfg_adds("a list"); break;
		case SL_T_MAP: cfg_adds("a map"); break;
		case SL_T_BIN: cfg_adds("binary"); break;
		default: cfg_adds("a value of another type"); break;
		}
	}
}

/* cfg_value finds key name, false when it is missing or nil. */
static bool cfg_value(sl_value config, const char *name, sl_value *v) {
	return sl_map_get(config, name, v) && !sl_is_nil(*v);
}

/* trim drops white space around s, as Go's strings.TrimSpace (ASCII). */
static sl_str trim(sl_str s) {
	while (s.n && (s.p[0] == ' ' || (s.p[0] >= '\t' && s.p[0] <= '\r'))) s.p++, s.n--;
	while (s.n && (s.p[s.n - 1] == ' ' || (s.p[s.n - 1] >= '\t' && s.p[s.n - 1] <= '\r'))) s.n--;
	return s;
}

/* parse_int reads a decimal integer with white space around it. */
static bool parse_int(sl_str s, int64_t *out) {
	s = trim(s);
	uint32_t i = 0, end = s.n;
	bool neg = i < end && (s.p[i] == '-' || s.p[i] == '+') && s.p[i++] == '-';
	if (i == end) return false;
	uint64_t u = 0;
	for (; i < end; i++) {
		if (s.p[i] < '0' || s.p[i] > '9' || u > (UINT64_C(1) << 63) / 10) return false;
		u = u * 10 + (uint64_t)(s.p[i] - '0');
	}
	if (u > (neg ? UINT64_C(1) << 63 : (uint64_t)INT64_MAX)) return false;
	*out = neg ? (int64_t)(0 - u) : (int64_t)u;
	return true;
}

int64_t sl_config_int(sl_value config, const char *name, int64_t def) {
	sl_value v;
	int64_t i;
	double f;
	sl_str s;
	if (!cfg_value(config, name, &v)) return def;
	if (sl_as_int(v, &i)) return i;
	if (sl_type_of(v) == SL_T_FLOAT && sl_as_float(v, &f) && f >= -9223372036854775808.0 && f < 9223372036854775808.0 && f == (double)(int64_t)f) return (int64_t)f;
	if (sl_as_str(v, &s) && parse_int(s, &i)) return i;
	cfg_bad(name, "an integer (int64)", v);
	return def;
}

double sl_config_float(sl_value config, const char *name, double def) {
	sl_value v;
	double f;
	sl_str s;
	if (!cfg_value(config, name, &v)) return def;
	if (sl_as_float(v, &f)) return f;
	if (v.n == 9 && v.p[0] == 0xcf) return (double)be64(v.p + 1); /* a uint64 past int64 */
	if (sl_as_str(v, &s) && (s = trim(s)).n > 0 && s.n < 64) {
		char t[64];
		bool decimal = true; /* digits, sign, point, exponent: no hex, inf or nan */
		for (uint32_t i = 0; i < s.n; i++) {
			char c = (char)s.p[i];
			decimal = decimal && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E');
			t[i] = c;
		}
		t[s.n] = 0;
		char *end;
		f = decimal ? strtod(t, &end) : 0;
		if (decimal && end != t && *end == 0) return f;
	}
	cfg_bad(name, "a number", v);
	return def;
}

bool sl_config_bool(sl_value config, const char *name, bool def) {
	sl_value v;
	bool b;
	sl_str s;
	if (!cfg_value(config, name, &v)) return def;
	if (sl_as_bool(v, &b)) return b;
	if (sl_as_str(v, &s)) { /* as Go's strconv.ParseBool */
		static const char *const yes[] = {"1", "t", "T", "true", "TRUE", "True"}, *const no[] = {"0", "f", "F", "false", "FALSE", "False"};
		s = trim(s);
		for (int i = 0; i < 6; i++) {
			if (sl_str_eq(s, yes[i])) return true;
			if (sl_str_eq(s, no[i])) return false;
		}
	}
	cfg_bad(name, "a boolean", v);
	return def;
}

sl_str sl_config_str(sl_value config, const char *name, const char *def) {
	sl_value v;
	sl_str s = {(const uint8_t *)def, def ? (uint32_t)strlen(def) : 0};
	int64_t i;
	bool b;
	if (!cfg_value(config, name, &v)) return s;
	if (sl_as_str(v, &s)) return s; /* a view of the config */
	if (sl_as_bool(v, &b)) return (sl_str){(const uint8_t *)(b ? "true" : "false"), b ? 4u : 5u};
	double f;
	bool whole = sl_as_int(v, &i);
	if (!whole && sl_type_of(v) == SL_T_FLOAT && sl_as_float(v, &f) && f > -1e15 && f < 1e15 && f == (double)(int64_t)f)
		i = (int64_t)f, whole = true; /* a whole float, as Go's 'g' formats it: 3.0 is "3" */
	if (whole) {
		char *t = malloc(24); /* kept for the instance's life, as the config is */
		if (t) {
			s.p = (const uint8_t *)t, s.n = fmt_int(t, i);
			return s;
		}
	}
	cfg_bad(name, "a string", v);
	return (sl_str){(const uint8_t *)def, def ? (uint32_t)strlen(def) : 0};
}

int32_t sl__open(const sl_plugin *p, const uint8_t *cfg, uint32_t n, int32_t subtask, int32_t par, int32_t maxpar) {
	static uint8_t *g_cfg; /* the config, copied: its views outlive the input buffer */
	g_plugin = p;
	begin_call();
	if (g_opened) return unsupported("open called twice");
	free(g_cfg); /* from an open that failed */
	g_cfg = malloc(n ? n : 1);
	if (!g_cfg) return sl_fail(SL_OUT_OF_MEMORY, "out of memory for the config");
	if (n) memcpy(g_cfg, cfg, n);
	sl_value config = {g_cfg, n};
	sl_iter it;
	if (sl_skip(g_cfg, n, 0) != (int64_t)n || !sl_map_iter(config, &it))
		return sl_fail(SL_CONFIG, "the config is not a msgpack map");
	g_ctx.subtask = subtask, g_ctx.parallelism = par, g_ctx.max_parallelism = maxpar;
	g_nouts = 1;
	g_outs[0].port = 0;
	for (const char *const *tag = p->outputs; tag && *tag; tag++) {
		if (g_nouts == 1 + SL_MAX_OUTPUTS) return sl_fail(SL_CONFIG, "too many side outputs");
		g_outs[g_nouts++].port = sl_host_port((const uint8_t *)*tag, (uint32_t)strlen(*tag));
	}
	g_cfg_err_len = 0;
	if (p->open) {
		int st = p->open(&g_ctx, config);
		if (st > 0) return positive_return(st, "open", -1);
		/* a refused config value ("config NAME: ...") goes as sdk/go's does,
		 * unprefixed: the host reads NAME to point at its line */
		if (st == SL_CONFIG && g_err_set && g_err_len >= 7 && memcmp(g_err, "config ", 7) == 0) return st;
		if (st < 0) return user_failed(st, "open", -1);
	}
	if (g_cfg_err_len) return sl_failn(SL_CONFIG, "", g_cfg_err, g_cfg_err_len); /* as sdk/go: no "open: " */
	g_opened = true;
	begin_call(); /* open emits nothing */
	return SL_OK;
}

/* call runs the kind's callback for one record. */
static int call(const sl_plugin *p, int32_t port, const sl_record *r, int32_t i) {
	int st;
	switch (p->kind) {
	case SL_KIND_FILTER:
		st = p->filter(r);
		if (st > 0) return keep(r);
		return st < 0 ? user_failed(st, "filter", i) : SL_OK;
	case SL_KIND_MAP: {
		sl_edit *e = sl_edit_begin(r);
		st = p->map(r, e);
		if (st > 0) return positive_return(st, "map", i);
		return st < 0 ? user_failed(st, "map", i) : sl_edit_emit(e, SL_MAIN);
	}
	case SL_KIND_FLAT_MAP:
		st = p->flat_map(r);
		if (st > 0) return positive_return(st, "flat_map", i);
		return st < 0 ? user_failed(st, "flat_map", i) : g_fail;
	default:
		st = p->process(port, r);
		if (st > 0) return positive_return(st, "process", i);
		return st < 0 ? user_failed(st, "process", i) : g_fail;
	}
}

static const char *const kind_names[] = {"map", "filter", "flat-map", "process", "partitioner", "reduce", "process-window"};

static sl_window_info g_window;
static bool g_in_window;

const sl_window_info *sl_window(void) { return g_in_window ? &g_window : NULL; }

/* window_header reads a process-window call's first record (abi
 * .AppendWindowHeader): [max timestamp, key, {"start": s, "end": e}]. */
static bool window_header(const sl_record *r) {
	sl_value s, e;
	if (!sl_map_get(r->value, "start", &s) || !sl_map_get(r->value, "end", &e)) return false;
	if (!sl_as_int(s, &g_window.start) || !sl_as_int(e, &g_window.end)) return false;
	g_window.key = r->key;
	return true;
}

/* has_callback says whether p provides its kind's callback. */
static bool has_callback(const sl_plugin *p) {
	switch (p->kind) {
	case SL_KIND_MAP: return p->map;
	case SL_KIND_FILTER: return p->filter;
	case SL_KIND_FLAT_MAP: return p->flat_map;
	case SL_KIND_PROCESS:
	case SL_KIND_REDUCE: return p->process;
	case SL_KIND_PROCESS_WINDOW: return p->process && p->window_end;
	default: return p->partition;
	}
}

int32_t sl__process(const sl_plugin *p, int32_t port, const uint8_t *b, uint32_t n, int32_t count) {
	begin_call();
	if (!g_opened) return unsupported("process called before open");
	if (p->kind == SL_KIND_PARTITIONER || !has_callback(p)) return unsupported("no process callback for this kind");
	if (port != 0 && (p->kind != SL_KIND_PROCESS || port != 1)) return unsupported("no such input port");
	if (count < 0) return sl_fail(SL_MALFORMED, "malformed input: negative record count");
	const uint8_t *q = b, *e = n ? b + n : b; /* a native test may pass NULL for an empty batch */
	sl_record r;
	bool windowed = p->kind == SL_KIND_PROCESS_WINDOW;
	for (int32_t i = 0; i < count; i++) {
		const uint8_t *next = parse_record(q, e, &r);
		if (!next) {
			if (q >= e) g_why = "batch holds fewer records than its count";
			g_in_window = false;
			return bad_record(i, q, b);
		}
		if (windowed && i == 0) { /* the window's header, not one of its records */
			if (!window_header(&r)) return sl_fail(SL_MALFORMED, "malformed input: a process-window call's first record is not a window header");
			g_in_window = true;
			q = next;
			continue;
		}
		if (windowed) g_window.index = (uint32_t)(i - 1);
		g_cur = &r;
		int st = call(p, port, &r, i);
		g_cur = NULL;
		if (st < 0) { g_in_window = false; return st; }
		q = next;
	}
	if (q != e) { g_in_window = false; g_why = "bytes left after the last record"; return bad_record(count, q, b); }
	if (windowed && g_in_window) {
		int st = p->window_end(&g_window);
		g_in_window = false;
		if (st > 0) return positive_return(st, "window_end", -1);
		if (st < 0) return user_failed(st, "window_end", -1);
		if (g_fail) return g_fail;
	}
	return finish(SL_OK);
}

int32_t sl__close(const sl_plugin *p) {
	begin_call();
	if (!g_opened) return unsupported("close called before open");
	int st = p->close ? p->close() : SL_OK;
	if (st > 0) return positive_return(st, "close", -1);
	if (st < 0) return user_failed(st, "close", -1);
	return finish(SL_OK);
}

int32_t sl__on_timer(const sl_plugin *p, int32_t kind, int64_t ts, const uint8_t *key, uint32_t n) {
	begin_call();
	if (!g_opened) return unsupported("on_timer called before open");
	if (!p->on_timer) return unsupported("the plugin has no on_timer callback");
	if (kind != SL_EVENT_TIME && kind != SL_PROCESSING_TIME) return sl_fail(SL_MALFORMED, "on_timer: unknown timer kind");
	if (n == 0 || sl_skip(key, n, 0) != (int64_t)n) return sl_fail(SL_MALFORMED, "on_timer: the key is not one msgpack value");
	static const uint8_t nil = 0xc0;
	sl_record r = {.raw = {NULL, 0}, .has_time = kind == SL_EVENT_TIME, .time = ts, .key = {key, n}, .value = {&nil, 1}};
	g_cur = &r;
	int st = p->on_timer(kind, ts, &r);
	g_cur = NULL;
	if (st > 0) return positive_return(st, "on_timer", -1);
	if (st < 0) return user_failed(st, "on_timer", -1);
	return finish(SL_OK);
}

int32_t sl__partition(const sl_plugin *p, const uint8_t *b, uint32_t n, int32_t count, int32_t parts) {
	begin_call();
	if (!g_opened) return unsupported("partition called before open");
	if (p->kind != SL_KIND_PARTITIONER || !p->partition) return unsupported("not a partitioner");
	if (parts < 1) return sl_fail(SL_MALFORMED, "partition: the number of channels must be at least 1");
	if (count < 0 || (uint32_t)count > n) {
		g_why = "batch holds fewer records than its count";
		return bad_record(0, b, b);
	}
	sl_buf *out = &g_outs[0].buf;
	uint8_t *ch = sl_buf_grow(out, 4 * (uint32_t)count);
	if (!ch) return sl_fail(SL_OUT_OF_MEMORY, "out of memory for channels");
	const uint8_t *q = b, *e = b + n;
	sl_record r;
	for (int32_t i = 0; i < count; i++, ch += 4) {
		const uint8_t *next = parse_record(q, e, &r);
		if (!next) {
			if (q >= e) g_why = "batch holds fewer records than its count";
			return bad_record(i, q, b);
		}
		int32_t c = 0;
		int st = p->partition(r.key, parts, &c);
		if (st < 0) return user_failed(st, "partition", i);
		ch[0] = (uint8_t)c, ch[1] = (uint8_t)(c >> 8), ch[2] = (uint8_t)(c >> 16), ch[3] = (uint8_t)(c >> 24);
		q = next;
	}
	if (q != e) { g_why = "bytes left after the last record"; return bad_record(count, q, b); }
	int32_t st = sl_host_emit(0, out->p, out->len, count);
	out->len = 0;
	return st == SL_OK ? SL_OK : sl_fail(st, "emit of the channels refused");
}

void sl__reset(void) { g_opened = false, g_nouts = 1; }

int32_t sl__describe(const sl_plugin *p) {
	sl_buf b = {0};
	uint32_t n = 0;
	for (const char *const *tag = p->outputs; tag && *tag; tag++) n++;
	sl_put_map(&b, 5); /* abi.Describe (kind, sdk, name, outputs) + keyed, as sdk/go */
	sl_put_cstr(&b, "kind");
	sl_put_cstr(&b, kind_names[p->kind <= SL_KIND_PROCESS_WINDOW ? p->kind : 0]);
	sl_put_cstr(&b, "sdk");
	sl_put_cstr(&b, "c");
	sl_put_cstr(&b, "name");
	sl_put_cstr(&b, p->name ? p->name : "");
	sl_put_cstr(&b, "outputs");
	sl_put_array(&b, n);
	for (const char *const *tag = p->outputs; tag && *tag; tag++) sl_put_cstr(&b, *tag);
	sl_put_cstr(&b, "keyed");
	sl_put_bool(&b, p->keyed || p->kind == SL_KIND_REDUCE); /* a reduce is keyed */
	int32_t st = b.oom ? sl_fail(SL_OUT_OF_MEMORY, "out of memory for describe") : sl_host_emit(0, b.p, b.len, 1);
	free(b.p);
	return st;
}

/* sluice_snapshot: the state's bytes as one msgpack bin on port 0. */
int32_t sl__snapshot(const sl_plugin *p) {
	if (!p->snapshot || !p->restore) return sl_fail(SL_UNSUPPORTED, "the operator declares no operator state (sl_plugin.snapshot)");
	sl_buf state = {0}, b = {0};
	int st = p->snapshot(&state);
	if (st == SL_OK) {
		sl_put_bin(&b, state.p, state.len);
		st = state.oom || b.oom ? sl_fail(SL_OUT_OF_MEMORY, "out of memory for the snapshot") : sl_host_emit(0, b.p, b.len, 1);
	}
	free(state.p);
	free(b.p);
	return st;
}

/* sluice_restore: one element, the bin sl__snapshot emitted. */
int32_t sl__restore(const sl_plugin *p, const uint8_t *b, uint32_t n) {
	if (!p->snapshot || !p->restore) return sl_fail(SL_UNSUPPORTED, "the operator declares no operator state (sl_plugin.snapshot)");
	sl_value v = {b, n};
	sl_str bin;
	if (sl_skip(b, n, 0) != (int64_t)n || !sl_as_bin(v, &bin))
		return sl_fail(SL_MALFORMED, "sluice_restore: the element is not the msgpack bin the SDK snapshots");
	return p->restore(bin.p, bin.n);
}
