/*
 * Native tests of the C SDK: the codec, record edits, the runtime behind
 * the exports (through sl__*), keyed state and the Java string hash, with
 * the host imports faked below. Run: make -C sdk/c test
 */
#include "../sluice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond) do { if (!(cond)) { failures++; fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); } } while (0)

/* ---- fake host -------------------------------------------------------------------- */

static uint8_t emitted[4][1 << 16]; /* bytes emitted per port */
static uint32_t emitted_len[4];
static int32_t emitted_count[4], emit_calls, emit_status;
static char last_error[4096];

int32_t sl_host_emit(int32_t port, const uint8_t *p, uint32_t n, int32_t count) {
	if (emit_status) return emit_status;
	if (port < 0 || port > 3 || emitted_len[port] + n > sizeof emitted[port]) return SL_HOST;
	memcpy(emitted[port] + emitted_len[port], p, n);
	emitted_len[port] += n;
	emitted_count[port] += count;
	emit_calls++;
	return SL_OK;
}

int32_t sl_host_port(const uint8_t *p, uint32_t n) {
	if (n == 4 && memcmp(p, "late", 4) == 0) return 1;
	return -1; /* nothing consumes any other tag */
}

void sl_host_error(const uint8_t *p, uint32_t n) {
	memcpy(last_error, p, n);
	last_error[n] = 0;
}

static struct { int32_t slot; uint8_t key[32], val[512]; uint32_t kn, vn; } state[16];
static int nstate;

static int find_state(int32_t slot, const uint8_t *k, uint32_t kn) {
	for (int i = 0; i < nstate; i++)
		if (state[i].slot == slot && state[i].kn == kn && memcmp(state[i].key, k, kn) == 0) return i;
	return -1;
}

int32_t sl_host_state_get(int32_t slot, const uint8_t *k, uint32_t kn, uint8_t *buf, uint32_t cap) {
	int i = find_state(slot, k, kn);
	if (i < 0) return -1;
	if (state[i].vn <= cap) memcpy(buf, state[i].val, state[i].vn);
	return (int32_t)state[i].vn;
}

int32_t sl_host_state_put(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *v, uint32_t vn) {
	int i = find_state(slot, k, kn);
	if (i < 0) i = nstate++;
	state[i].slot = slot, state[i].kn = kn, state[i].vn = vn;
	memcpy(state[i].key, k, kn);
	memcpy(state[i].val, v, vn);
	return SL_OK;
}

int32_t sl_host_state_del(int32_t slot, const uint8_t *k, uint32_t kn) {
	int i = find_state(slot, k, kn);
	if (i >= 0) state[i] = state[--nstate];
	return SL_OK;
}

/* list and map state: one key's lists as wires, one map per slot (the
 * tests use one key), entries kept sorted by user key as the host's */
static uint8_t list_wire[4][1024];
static uint32_t list_len[4];
static int list_has[4];
static struct { uint8_t k[16], v[16]; uint32_t kn, vn; } map_ent[4][8];
static int map_n[4];

static void put_u32(uint8_t *b, uint32_t n) { b[0] = (uint8_t)n, b[1] = (uint8_t)(n >> 8), b[2] = (uint8_t)(n >> 16), b[3] = (uint8_t)(n >> 24); }

static int32_t give(const uint8_t *w, uint32_t n, uint8_t *buf, uint32_t cap) {
	if (n <= cap) memcpy(buf, w, n);
	return (int32_t)n;
}

int32_t sl_host_state_list_get(int32_t slot, const uint8_t *k, uint32_t kn, uint8_t *buf, uint32_t cap) {
	(void)k, (void)kn;
	return list_has[slot] ? give(list_wire[slot], list_len[slot], buf, cap) : -1;
}

int32_t sl_host_state_list_append(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *v, uint32_t vn) {
	(void)k, (void)kn;
	put_u32(list_wire[slot] + list_len[slot], vn);
	memcpy(list_wire[slot] + list_len[slot] + 4, v, vn);
	list_len[slot] += 4 + vn, list_has[slot] = 1;
	return SL_OK;
}

int32_t sl_host_state_list_update(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *w, uint32_t wn) {
	(void)k, (void)kn;
	memcpy(list_wire[slot], w, wn);
	list_len[slot] = wn, list_has[slot] = wn > 0;
	return SL_OK;
}

static int map_find(int32_t slot, const uint8_t *uk, uint32_t ukn) {
	for (int i = 0; i < map_n[slot]; i++)
		if (map_ent[slot][i].kn == ukn && memcmp(map_ent[slot][i].k, uk, ukn) == 0) return i;
	return -1;
}

int32_t sl_host_state_map_get(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *uk, uint32_t ukn, uint8_t *buf, uint32_t cap) {
	(void)k, (void)kn;
	int i = map_find(slot, uk, ukn);
	return i < 0 ? -1 : give(map_ent[slot][i].v, map_ent[slot][i].vn, buf, cap);
}

int32_t sl_host_state_map_put(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *uk, uint32_t ukn, const uint8_t *v, uint32_t vn) {
	(void)k, (void)kn;
	int i = map_find(slot, uk, ukn);
	if (i < 0) { /* sorted insert: the keys of the test are one length */
		i = map_n[slot]++;
		while (i > 0 && memcmp(map_ent[slot][i - 1].k, uk, ukn) > 0) { map_ent[slot][i] = map_ent[slot][i - 1]; i--; }
		memcpy(map_ent[slot][i].k, uk, ukn), map_ent[slot][i].kn = ukn;
	}
	memcpy(map_ent[slot][i].v, v, vn), map_ent[slot][i].vn = vn;
	return SL_OK;
}

int32_t sl_host_state_map_del(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *uk, uint32_t ukn) {
	(void)k, (void)kn;
	int i = map_find(slot, uk, ukn);
	if (i >= 0) { memmove(&map_ent[slot][i], &map_ent[slot][i + 1], (size_t)(map_n[slot] - i - 1) * sizeof map_ent[slot][0]); map_n[slot]--; }
	return SL_OK;
}

int32_t sl_host_state_map_contains(int32_t slot, const uint8_t *k, uint32_t kn, const uint8_t *uk, uint32_t ukn) {
	(void)k, (void)kn;
	return map_find(slot, uk, ukn) >= 0;
}

int32_t sl_host_state_map_entries(int32_t slot, const uint8_t *k, uint32_t kn, uint8_t *buf, uint32_t cap) {
	(void)k, (void)kn;
	if (map_n[slot] == 0) return -1;
	uint8_t w[512];
	uint32_t n = 0;
	for (int i = 0; i < map_n[slot]; i++) {
		put_u32(w + n, map_ent[slot][i].kn), memcpy(w + n + 4, map_ent[slot][i].k, map_ent[slot][i].kn), n += 4 + map_ent[slot][i].kn;
		put_u32(w + n, map_ent[slot][i].vn), memcpy(w + n + 4, map_ent[slot][i].v, map_ent[slot][i].vn), n += 4 + map_ent[slot][i].vn;
	}
	return give(w, n, buf, cap);
}

int32_t sl_host_state_clear(int32_t slot, const uint8_t *k, uint32_t kn) {
	(void)k, (void)kn;
	list_len[slot] = 0, list_has[slot] = 0, map_n[slot] = 0;
	return SL_OK;
}

static void reset_host(void) {
	memset(emitted_len, 0, sizeof emitted_len);
	memset(emitted_count, 0, sizeof emitted_count);
	emit_calls = 0, emit_status = 0, last_error[0] = 0;
}

/* ---- helpers ------------------------------------------------------------------------- */

static sl_value val(const void *p, uint32_t n) { sl_value v = {p, n}; return v; }
#define V(...) val((const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__}))

static bool bytes_eq(const uint8_t *a, uint32_t an, const uint8_t *b, uint32_t bn) {
	return an == bn && memcmp(a, b, an) == 0;
}

/* record appends the envelope [time, nil, {"amount": amount, "name": "x"}]. */
static void record(sl_buf *b, int64_t time, int64_t amount) {
	sl_put_array(b, 3);
	sl_put_int(b, time);
	sl_put_nil(b);
	sl_put_map(b, 2);
	sl_put_cstr(b, "amount");
	sl_put_int(b, amount);
	sl_put_cstr(b, "name");
	sl_put_cstr(b, "x");
}

/* ---- codec ---------------------------------------------------------------------------- */

static void test_put_int_smallest(void) {
	static const struct { int64_t v; uint8_t want[9]; uint32_t n; } cases[] = {
		{0, {0x00}, 1}, {127, {0x7f}, 1}, {-1, {0xff}, 1}, {-32, {0xe0}, 1},
		{128, {0xcc, 0x80}, 2}, {255, {0xcc, 0xff}, 2}, {256, {0xcd, 0x01, 0x00}, 3},
		{65536, {0xce, 0, 1, 0, 0}, 5}, {-33, {0xd0, 0xdf}, 2}, {-129, {0xd1, 0xff, 0x7f}, 3},
		{-32769, {0xd2, 0xff, 0xff, 0x7f, 0xff}, 5}, {1LL << 32, {0xcf, 0, 0, 0, 1, 0, 0, 0, 0}, 9},
		{INT64_MIN, {0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0}, 9},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		sl_buf b = {0};
		int64_t back;
		sl_put_int(&b, cases[i].v);
		CHECK(bytes_eq(b.p, b.len, cases[i].want, cases[i].n));
		CHECK(sl_as_int(val(b.p, b.len), &back) && back == cases[i].v);
		CHECK(sl_skip(b.p, b.len, 0) == b.len);
		free(b.p);
	}
}

static void test_scalars(void) {
	sl_buf b = {0};
	double f;
	bool t;
	sl_str s;
	sl_put_float(&b, 1.5);
	CHECK(b.len == 9 && b.p[0] == 0xcb && sl_as_float(val(b.p, b.len), &f) && f == 1.5);
	CHECK(sl_as_float(V(0xca, 0x3f, 0xc0, 0, 0), &f) && f == 1.5); /* float32 */
	CHECK(sl_as_float(V(0x05), &f) && f == 5.0);
	CHECK(sl_as_bool(V(0xc3), &t) && t);
	CHECK(sl_int(V(0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0)) == 1);                 /* 1.5 */
	CHECK(sl_int(V(0xcb, 0xbf, 0xe0, 0, 0, 0, 0, 0, 0)) == 0);                 /* -0.5 */
	CHECK(sl_int(V(0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1)) == 0);                 /* NaN */
	CHECK(sl_int(V(0xcb, 0x7f, 0xf0, 0, 0, 0, 0, 0, 0)) == INT64_MAX);         /* +Inf */
	CHECK(sl_int(V(0xa1, '5')) == 0 && sl_int(val(NULL, 0)) == 0);
	CHECK(!sl_as_bool(V(0xc0), &t) && sl_is_nil(V(0xc0)));
	CHECK(!sl_as_int(V(0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), &(int64_t){0}));
	b.len = 0;
	char big[300];
	memset(big, 'a', sizeof big);
	sl_put_str(&b, big, 31);
	CHECK(b.p[0] == 0xbf && b.len == 32);
	b.len = 0;
	sl_put_str(&b, big, 32);
	CHECK(b.p[0] == 0xd9 && b.p[1] == 32 && sl_as_str(val(b.p, b.len), &s) && s.n == 32);
	b.len = 0;
	sl_put_str(&b, big, 300);
	CHECK(b.p[0] == 0xda && sl_as_str(val(b.p, b.len), &s) && s.n == 300);
	CHECK(!sl_as_str(val(b.p, 10), &s)); /* truncated */
	b.len = 0;
	sl_put_bin(&b, "ab", 2);
	CHECK(sl_as_bin(val(b.p, b.len), &s) && s.n == 2 && !sl_as_str(val(b.p, b.len), &s));
	CHECK(sl_type_of(V(0xd4, 1, 2)) == SL_T_EXT && sl_type_of(V(0xc1)) == SL_T_INVALID);
	free(b.p);
}

static void test_skip_errors(void) {
	CHECK(sl_skip((const uint8_t[]){0x92, 0x01}, 2, 0) == -1);   /* truncated array */
	CHECK(sl_skip((const uint8_t[]){0xc1}, 1, 0) == -1);         /* never used */
	CHECK(sl_skip((const uint8_t[]){0xdd, 0xff, 0xff, 0xff, 0xff}, 5, 0) == -1); /* huge header */
	CHECK(sl_skip((const uint8_t[]){0xd9, 0x05, 'a'}, 3, 0) == -1);
	uint8_t deep[70];
	memset(deep, 0x91, sizeof deep);
	deep[69] = 0x01;
	CHECK(sl_skip(deep, 64, 0) == -1);               /* truncated */
	CHECK(sl_skip(deep + 69 - 64, 65, 0) == 65);     /* 64 levels: accepted */
	CHECK(sl_skip(deep, sizeof deep, 0) == -1);      /* 69 levels: too deep */
}

/* spec_size is the msgpack spec's size of a value of header c followed by
 * zero bytes (lengths and counts 0), the oracle of the scanner's tables. */
static uint32_t spec_size(uint8_t c) {
	if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3) return 1;
	if ((c >= 0x80 && c <= 0x9f)) return 1;   /* empty fixmap / fixarray */
	if (c >= 0xa0 && c <= 0xbf) return 1 + (c & 0x1f);
	switch (c) {
	case 0xcc: case 0xd0: return 2;
	case 0xcd: case 0xd1: return 3;
	case 0xce: case 0xd2: case 0xca: return 5;
	case 0xcf: case 0xd3: case 0xcb: return 9;
	case 0xd4: return 3;
	case 0xd5: return 4;
	case 0xd6: return 6;
	case 0xd7: return 10;
	case 0xd8: return 18;
	case 0xc4: case 0xd9: return 2;   /* bin8, str8 of length 0 */
	case 0xc7: return 3;              /* ext8: length, type */
	case 0xc5: case 0xda: case 0xdc: case 0xde: return 3;
	case 0xc8: return 4;
	case 0xc6: case 0xdb: case 0xdd: case 0xdf: return 5;
	case 0xc9: return 6;
	}
	return 0; /* 0xc1 */
}

static void test_skip_every_header(void) {
	uint8_t b[64];
	for (int c = 0; c < 256; c++) {
		memset(b, 0, sizeof b);
		b[0] = (uint8_t)c;
		if (c >= 0x81 && c <= 0x8f) continue; /* fixmap, fixarray with elements: below */
		if (c >= 0x91 && c <= 0x9f) continue;
		uint32_t n = spec_size((uint8_t)c);
		CHECK(sl_skip(b, sizeof b, 0) == (n ? (int64_t)n : -1));
		if (n > 1) CHECK(sl_skip(b, n - 1, 0) == -1); /* one byte short */
	}
	/* {"a": each fixed-size value} as a map skips to its end */
	for (int c = 0; c < 256; c++) {
		uint32_t n = spec_size((uint8_t)c);
		if (!n || (c >= 0x80 && c <= 0x9f)) continue;
		memset(b, 0, sizeof b);
		b[0] = 0x81, b[1] = 0xa1, b[2] = 'a', b[3] = (uint8_t)c;
		CHECK(sl_skip(b, sizeof b, 0) == 3 + (int64_t)n);
		CHECK(sl_skip(b, 3 + n - 1, 0) == -1);
	}
}

/* The fast paths of the lookup: fixstr keys of every length compared in
 * place, each kind of value skipped in place or by the general scanner. */
static void test_map_lookup_every_length(void) {
	char name[24];
	sl_buf b = {0};
	sl_put_map(&b, 22);
	for (uint32_t n = 1; n <= 22; n++) {
		for (uint32_t i = 0; i < n; i++) name[i] = (char)('a' + (n + i) % 26);
		sl_put_str(&b, name, n);
		switch (n % 6) { /* values whose size the header gives, and others */
		case 0: sl_put_int(&b, (int64_t)n); break;
		case 1: sl_put_int(&b, 100000 + (int64_t)n); break;
		case 2: sl_put_str(&b, name, n); break;
		case 3: sl_put_str(&b, "0123456789012345678901234567890123456789", 40); break; /* str8 */
		case 4: sl_put_array(&b, 2); sl_put_int(&b, (int64_t)n); sl_put_nil(&b); break;
		default: sl_put_float(&b, (double)n); break;
		}
	}
	sl_value m = val(b.p, b.len), v;
	CHECK(sl_skip(b.p, b.len, 0) == b.len);
	for (uint32_t n = 1; n <= 22; n++) {
		for (uint32_t i = 0; i < n; i++) name[i] = (char)('a' + (n + i) % 26);
		CHECK(sl_map_getn(m, (const uint8_t *)name, n, &v));
		CHECK(v.p > b.p && v.p + v.n <= b.p + b.len && sl_skip(v.p, v.n, 0) == v.n);
		if (n % 6 == 0) CHECK(sl_int(v) == (int64_t)n);
		if (n % 6 == 1) CHECK(sl_int(v) == 100000 + (int64_t)n);
		if (n % 6 == 5) CHECK(sl_float(v) == (double)n);
		name[0] ^= 1; /* first byte differs */
		CHECK(!sl_map_getn(m, (const uint8_t *)name, n, &v));
		name[0] ^= 1, name[n - 1] ^= 1; /* last byte differs */
		CHECK(!sl_map_getn(m, (const uint8_t *)name, n, &v));
	}
	CHECK(!sl_map_getn(m, (const uint8_t *)"", 0, &v));
	/* truncated after a key, inside a value, in the middle of a key */
	CHECK(!sl_map_get(V(0x82, 0xa1, 'a', 0x01, 0xa1, 'b'), "b", &v));
	CHECK(!sl_map_get(V(0x81, 0xa1, 'b', 0xcd, 0x01), "b", &v));
	CHECK(!sl_map_get(V(0x82, 0xa1, 'a', 0xcd, 0x01), "b", &v));
	CHECK(!sl_map_get(V(0x81, 0xa6, 'a', 'm', 'o'), "amo", &v));
	free(b.p);
}

static void test_map_lookup(void) {
	/* {1: 2, "amount": 7, "long-key-that-is-str8-encoded-ok": "v"} with a str8 key */
	sl_buf b = {0};
	sl_put_map(&b, 3);
	sl_put_int(&b, 1); sl_put_int(&b, 2);
	sl_put_cstr(&b, "amount"); sl_put_int(&b, 7);
	uint8_t key8[] = {0xd9, 3, 'k', 'e', 'y'};
	sl_put_raw(&b, key8, sizeof key8); sl_put_cstr(&b, "v");
	sl_value v;
	int64_t i;
	sl_str s;
	CHECK(sl_map_get(val(b.p, b.len), "amount", &v) && sl_as_int(v, &i) && i == 7);
	CHECK(sl_map_get(val(b.p, b.len), "key", &v) && sl_as_str(v, &s) && sl_str_eq(s, "v"));
	CHECK(!sl_map_get(val(b.p, b.len), "amoun", &v));
	CHECK(!sl_map_get(V(0x91, 0x01), "a", &v)); /* not a map */
	sl_iter it;
	sl_value k;
	int n = 0;
	CHECK(sl_map_iter(val(b.p, b.len), &it));
	while (sl_map_next(&it, &k, &v)) n++;
	CHECK(n == 3);
	free(b.p);
}

static void test_text_like_go(void) {
	uint32_t size;
	/* utf8.DecodeRune / DecodeLastRune */
	CHECK(sl_decode_rune((const uint8_t *)"\xc3\xa9", 2, &size) == 0xe9 && size == 2);
	CHECK(sl_decode_rune((const uint8_t *)"\xc3", 1, &size) == SL_RUNE_ERROR && size == 1);
	CHECK(sl_decode_rune((const uint8_t *)"\xe0\x80\x80", 3, &size) == SL_RUNE_ERROR && size == 1); /* overlong */
	CHECK(sl_decode_last_rune((const uint8_t *)"a\xe2\x80\x94", 4, &size) == 0x2014 && size == 3);
	CHECK(sl_decode_last_rune((const uint8_t *)"a\x80", 2, &size) == SL_RUNE_ERROR && size == 1);
	/* unicode.IsSpace, IsPunct, ToLower */
	CHECK(sl_is_space(' ') && sl_is_space(0x85) && sl_is_space(0x3000) && !sl_is_space('a') && !sl_is_space(0x200b));
	CHECK(sl_is_punct('!') && sl_is_punct(0x2014) && sl_is_punct(0x201c) && !sl_is_punct('$') && !sl_is_punct('a'));
	CHECK(sl_to_lower('A') == 'a' && sl_to_lower(0xc7) == 0xe7 && sl_to_lower(0x100) == 0x101 && sl_to_lower(0x101) == 0x101);
	CHECK(sl_to_lower(0x130) == 'i' && sl_to_lower(0x391) == 0x3b1 && sl_to_lower(0x10400) == 0x10428 && sl_to_lower(0x2c00) == 0x2c30);
	sl_buf b = {0};
	sl_put_rune(&b, 0xe9);
	sl_put_rune(&b, 0xd800); /* a surrogate: U+FFFD */
	CHECK(bytes_eq(b.p, b.len, (const uint8_t *)"\xc3\xa9\xef\xbf\xbd", 5));
	free(b.p);
	/* abi.KeyHash (abi/keyhash_test.go vectors) */
	int32_t h;
	CHECK(!sl_key_hash(V(0xa5, 'h', 'e', 'l', 'l', 'o'), &h) && h == 99162322);
	CHECK(!sl_key_hash(V(0x2a), &h) && h == 42);
	CHECK(!sl_key_hash(V(0xff), &h) && h == -1);
	CHECK(!sl_key_hash(V(0xcf, 0, 0, 0, 1, 0, 0, 0, 0), &h) && h == 1);           /* long 2^32 */
	CHECK(!sl_key_hash(V(0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0), &h) && h == INT32_MIN); /* long min */
	CHECK(!sl_key_hash(V(0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0), &h) && h == 1072693248); /* 1.0 */
	CHECK(!sl_key_hash(V(0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1), &h) && h == 2146959360); /* NaN */
	CHECK(!sl_key_hash(V(0xc3), &h) && h == 1231);
	CHECK(!sl_key_hash(V(0x92, 0xa1, 'a', 0x01), &h) && h == 31 * 97 + 1);
	CHECK(sl_key_hash(V(0xc0), &h) && sl_key_hash(V(0x80), &h) && sl_key_hash(V(0x90), &h));
	CHECK(sl_key_hash(V(0x91, 0x91, 0x01), &h)); /* nested */
}

static void test_java_hash(void) {
	static const struct { const char *s; int32_t want; } cases[] = {
		{"hello", 99162322}, {"", 0}, {"a", 97}, {"\xc3\xa9", 233},
		{"\xf0\x9f\x98\x80", 31 * 0xD83D + 0xDE00}, {"NL", 2494},
		/* malformed UTF-8: new String(bytes, UTF_8).hashCode() in Java 17
		 * (abi/testdata/java-strings.txt.gz holds the host to thousands more) */
		{"\xff", 65533}, {"\xe2\x82\x41", 2031588}, {"\xed\xa0\x80", 65533}, {"\xf0\x9f\x98\x41", 2031588},
		{"\xe0\x80", 2097056}, {"\xf0\x90\x80", 65533}, {"\xf4\x90\x80\x80", 2017367872}, {"\xc2\x41", 2031588},
		{"\xc2", 65533}, {"\xe2", 65533}, {"\xe2\x82", 65533}, {"\xf0\x9f", 65533}, {"\xf0\x9f\x98", 65533},
		{"\xf0\x9f\x41", 2031588}, {"\xf5\x80\x80\x80", 2017367872}, {"\xed\x9f\xbf", 55295}, {"\x80", 65533},
		{"\xe0\xa0\x41", 2031588}, {"\xf0\x90\x80\x41", 2031588}, {"\x41\xff\x42", 2094054},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		sl_str s = {(const uint8_t *)cases[i].s, (uint32_t)strlen(cases[i].s)};
		CHECK(sl_java_string_hash(s) == cases[i].want);
	}
}

/* ---- runtime ---------------------------------------------------------------------------- */

static int keep_positive(const sl_record *r) {
	int64_t a;
	return sl_field_int(r, "amount", &a) && a > 0;
}

static int double_and_tag(const sl_record *r, sl_edit *e) {
	int64_t a = 0;
	sl_field_int(r, "amount", &a);
	sl_set_int(e, "amount", 2 * a);
	sl_set_cstr(e, "tag", "t");
	sl_unset(e, "name");
	return SL_OK;
}

static int process_late(int32_t port, const sl_record *r) {
	(void)port;
	sl_str seen;
	int st = sl_state_get(0, &seen);
	if (st < 0) return st;
	if ((st = sl_state_put(0, "1", 1)) < 0) return st;
	return sl_emit(r->time < 100 ? 1 : SL_MAIN, r);
}

static int open_fail(const sl_context *ctx, sl_value cfg) {
	(void)ctx, (void)cfg;
	return sl_fail(SL_CONFIG, "bad config");
}

static const char *const late_outputs[] = {"late", "unused", NULL};

static const char *g_tag = "late";

static int emits_by_tag(int32_t port, const sl_record *r) {
	(void)port;
	return sl_emit(sl_output(g_tag), r);
}

static void test_filter_and_map(void) {
	sl_buf in = {0};
	record(&in, 1, 5);
	record(&in, 2, -3);
	record(&in, 300, 200);
	uint8_t empty_map = 0x80;
	sl_plugin f = {.name = "f", .kind = SL_KIND_FILTER, .filter = keep_positive};
	reset_host();
	CHECK(sl__open(&f, &empty_map, 1, 0, 1, 128) == SL_OK);
	CHECK(sl__process(&f, 0, in.p, in.len, 3) == SL_OK);
	CHECK(emitted_count[0] == 2 && emit_calls == 1);
	sl_buf want = {0};
	record(&want, 1, 5);
	record(&want, 300, 200);
	CHECK(bytes_eq(emitted[0], emitted_len[0], want.p, want.len));

	/* the map reuses the opened instance's state: one plugin per instance in
	 * wasm, but natively the plugin is just an argument */
	sl_plugin m = {.name = "m", .kind = SL_KIND_MAP, .map = double_and_tag};
	reset_host();
	CHECK(sl__process(&m, 0, in.p, in.len, 1) != SL_OK); /* count says 1, 3 records follow */
	CHECK(strstr(last_error, "bytes left") != NULL);
	reset_host();
	CHECK(sl__process(&m, 0, in.p, in.len, 3) == SL_OK && emitted_count[0] == 3);
	want.len = 0;
	/* [1, nil, {"amount": 10, "tag": "t"}] */
	sl_put_array(&want, 3); sl_put_int(&want, 1); sl_put_nil(&want);
	sl_put_map(&want, 2); sl_put_cstr(&want, "amount"); sl_put_int(&want, 10); sl_put_cstr(&want, "tag"); sl_put_cstr(&want, "t");
	CHECK(emitted_len[0] > want.len && memcmp(emitted[0], want.p, want.len) == 0);
	CHECK(sl__process(&m, 0, in.p, in.len, 4) == SL_MALFORMED && strstr(last_error, "fewer records"));
	CHECK(sl__process(&m, 1, in.p, in.len, 3) == SL_UNSUPPORTED);
	uint8_t bad[] = {0x93, 0xa1, 'x', 0xc0, 0x80}; /* time is a string */
	CHECK(sl__process(&m, 0, bad, sizeof bad, 1) == SL_MALFORMED && strstr(last_error, "event time"));
	free(in.p), free(want.p);
}

/* keep_some keeps records whose amount is > 0 and, for amount 7, first
 * emits the record itself to the main output (so the main output holds
 * it twice, in order). */
static int keep_some(const sl_record *r) {
	int64_t a = 0;
	sl_field_int(r, "amount", &a);
	if (a == 7) {
		int st = sl_emit(SL_MAIN, r);
		if (st < 0) return st;
	}
	return a > 0;
}

/* A filter's kept records go out as runs of neighbours: the output must be
 * the records one by one, in order, with what the callback emits itself. */
static void test_filter_runs(void) {
	static const int64_t amounts[] = {1, 2, -1, 3, 7, 4, -2, -3, 7, 7, 5, -4, 6};
	enum { N = sizeof amounts / sizeof amounts[0] };
	sl_buf in = {0}, want = {0};
	int32_t kept = 0;
	for (int i = 0; i < N; i++) {
		record(&in, i, amounts[i]);
		if (amounts[i] == 7) record(&want, i, amounts[i]), kept++;
		if (amounts[i] > 0) record(&want, i, amounts[i]), kept++;
	}
	sl_plugin f = {.name = "f", .kind = SL_KIND_FILTER, .filter = keep_some};
	uint8_t empty_map = 0x80;
	sl__reset();
	CHECK(sl__open(&f, &empty_map, 1, 0, 1, 128) == SL_OK);
	reset_host();
	CHECK(sl__process(&f, 0, in.p, in.len, N) == SL_OK);
	CHECK(emitted_count[0] == kept && emit_calls == 1);
	CHECK(bytes_eq(emitted[0], emitted_len[0], want.p, want.len));
	/* a batch larger than the 64 KiB flush threshold, everything kept */
	in.len = 0;
	int32_t n = 0;
	while (in.len < (40u << 10)) record(&in, n++, 1);
	reset_host();
	CHECK(sl__process(&f, 0, in.p, in.len, n) == SL_OK);
	CHECK(emitted_count[0] == n && bytes_eq(emitted[0], emitted_len[0], in.p, in.len));
	/* a refused emit of a run fails the call */
	reset_host();
	emit_status = SL_LIMIT;
	CHECK(sl__process(&f, 0, in.p, in.len, n) == SL_LIMIT);
	free(in.p), free(want.p);
}

/* ---- edits and lookups on indexed records ---------------------------------------- */

/* The edit test_edits applies: set (or unset) one or two fields. */
static struct { const char *set, *set2, *unset; int64_t v; } g_ed;
static const char *g_look; /* a field test_edits looks up first */
static sl_value g_found;
static bool g_has;

static int apply_edit(const sl_record *r) {
	static uint8_t found[64]; /* a copy: the batch is gone when the test looks */
	if (g_look && (g_has = sl_field(r, g_look, &g_found))) {
		if (g_found.n > sizeof found) return sl_fail(SL_USER, "test: value too long");
		memcpy(found, g_found.p, g_found.n);
		g_found.p = found;
	}
	sl_edit *e = sl_edit_begin(r);
	if (g_ed.set) sl_set_int(e, g_ed.set, g_ed.v);
	if (g_ed.set2) sl_set_int(e, g_ed.set2, g_ed.v + 1);
	if (g_ed.unset) sl_unset(e, g_ed.unset);
	return sl_edit_emit(e, SL_MAIN);
}

/* envelope appends [time, nil, value] with the time as an int64 (0xd3)
 * whatever its size: an edit must keep the envelope as it was encoded. */
static void envelope(sl_buf *b, int64_t time, const sl_buf *value) {
	uint8_t t[9] = {0xd3};
	for (int i = 8; i >= 1; i--, time >>= 8) t[i] = (uint8_t)time;
	sl_put_array(b, 3);
	sl_put_raw(b, t, 9);
	sl_put_nil(b);
	sl_put_raw(b, value->p, value->len);
}

/* edit_case runs apply_edit over one record with value `in` and checks the
 * output is one record with value `want` and in's envelope. */
static void edit_case(int line, const sl_buf *in, const sl_buf *want) {
	sl_plugin p = {.name = "e", .kind = SL_KIND_FLAT_MAP, .flat_map = apply_edit};
	uint8_t empty_map = 0x80;
	sl_buf batch = {0}, out = {0};
	envelope(&batch, 1700000000000, in);
	envelope(&out, 1700000000000, want);
	sl__reset();
	reset_host();
	if (sl__open(&p, &empty_map, 1, 0, 1, 128) != SL_OK || sl__process(&p, 0, batch.p, batch.len, 1) != SL_OK ||
	    emitted_count[0] != 1 || !bytes_eq(emitted[0], emitted_len[0], out.p, out.len)) {
		failures++;
		fprintf(stderr, "%s:%d: edit case failed (%s)\n", __FILE__, line, last_error);
	}
	free(batch.p), free(out.p);
}

static void test_edits(void) {
	sl_buf in = {0}, want = {0};
#define RESET() (in.len = 0, want.len = 0, memset(&g_ed, 0, sizeof g_ed), g_look = NULL)
	/* one field set in place: the bytes around it as they were */
	RESET();
	sl_put_map(&in, 3); sl_put_cstr(&in, "id"); sl_put_int(&in, 1000); sl_put_cstr(&in, "amount"); sl_put_int(&in, 5);
	sl_put_cstr(&in, "cur"); sl_put_cstr(&in, "EUR");
	sl_put_map(&want, 3); sl_put_cstr(&want, "id"); sl_put_int(&want, 1000); sl_put_cstr(&want, "amount"); sl_put_int(&want, 300);
	sl_put_cstr(&want, "cur"); sl_put_cstr(&want, "EUR");
	g_ed.set = "amount", g_ed.v = 300;
	edit_case(__LINE__, &in, &want);
	/* the first and the last field */
	g_ed.set = "id", g_ed.v = -1;
	want.len = 0;
	sl_put_map(&want, 3); sl_put_cstr(&want, "id"); sl_put_int(&want, -1); sl_put_cstr(&want, "amount"); sl_put_int(&want, 5);
	sl_put_cstr(&want, "cur"); sl_put_cstr(&want, "EUR");
	edit_case(__LINE__, &in, &want);
	g_ed.set = "cur", g_ed.v = 7;
	want.len = 0;
	sl_put_map(&want, 3); sl_put_cstr(&want, "id"); sl_put_int(&want, 1000); sl_put_cstr(&want, "amount"); sl_put_int(&want, 5);
	sl_put_cstr(&want, "cur"); sl_put_int(&want, 7);
	edit_case(__LINE__, &in, &want);
	/* a new field goes last, the header counts it */
	g_ed.set = "tag", g_ed.v = 2;
	want.len = 0;
	sl_put_map(&want, 4); sl_put_cstr(&want, "id"); sl_put_int(&want, 1000); sl_put_cstr(&want, "amount"); sl_put_int(&want, 5);
	sl_put_cstr(&want, "cur"); sl_put_cstr(&want, "EUR"); sl_put_cstr(&want, "tag"); sl_put_int(&want, 2);
	edit_case(__LINE__, &in, &want);
	/* a lookup before the edit sees the field in place */
	g_ed.set = "amount", g_ed.v = 9, g_look = "cur";
	want.len = 0;
	sl_put_map(&want, 3); sl_put_cstr(&want, "id"); sl_put_int(&want, 1000); sl_put_cstr(&want, "amount"); sl_put_int(&want, 9);
	sl_put_cstr(&want, "cur"); sl_put_cstr(&want, "EUR");
	edit_case(__LINE__, &in, &want);
	sl_str s;
	CHECK(g_has && sl_as_str(g_found, &s) && sl_str_eq(s, "EUR"));
	g_look = "cu";
	edit_case(__LINE__, &in, &want);
	CHECK(!g_has);
	/* two sets, a set and an unset, an unset alone */
	RESET();
	sl_put_map(&in, 2); sl_put_cstr(&in, "a"); sl_put_int(&in, 1); sl_put_cstr(&in, "b"); sl_put_int(&in, 2);
	g_ed.set = "b", g_ed.set2 = "a", g_ed.v = 10;
	sl_put_map(&want, 2); sl_put_cstr(&want, "a"); sl_put_int(&want, 11); sl_put_cstr(&want, "b"); sl_put_int(&want, 10);
	edit_case(__LINE__, &in, &want);
	g_ed.set2 = NULL, g_ed.unset = "a";
	want.len = 0;
	sl_put_map(&want, 1); sl_put_cstr(&want, "b"); sl_put_int(&want, 10);
	edit_case(__LINE__, &in, &want);
	g_ed.set = NULL;
	want.len = 0;
	sl_put_map(&want, 1); sl_put_cstr(&want, "b"); sl_put_int(&want, 2);
	edit_case(__LINE__, &in, &want);
	/* a name twice: the first is edited, the second kept */
	RESET();
	sl_put_map(&in, 3); sl_put_cstr(&in, "a"); sl_put_int(&in, 1); sl_put_cstr(&in, "x"); sl_put_int(&in, 0);
	sl_put_cstr(&in, "a"); sl_put_int(&in, 2);
	sl_put_map(&want, 3); sl_put_cstr(&want, "a"); sl_put_int(&want, 5); sl_put_cstr(&want, "x"); sl_put_int(&want, 0);
	sl_put_cstr(&want, "a"); sl_put_int(&want, 2);
	g_ed.set = "a", g_ed.v = 5;
	edit_case(__LINE__, &in, &want);
	/* 15 fields and a new one: a map16 header */
	RESET();
	char names[16][16];
	sl_put_map(&in, 15);
	sl_put_map(&want, 16);
	for (int i = 0; i < 15; i++) {
		snprintf(names[i], sizeof names[i], "f%d", i);
		sl_put_cstr(&in, names[i]), sl_put_int(&in, i);
		sl_put_cstr(&want, names[i]), sl_put_int(&want, i);
	}
	sl_put_cstr(&want, "new"); sl_put_int(&want, 3);
	g_ed.set = "new", g_ed.v = 3;
	edit_case(__LINE__, &in, &want);
	/* a key that is not a fixstr: no index, the general path */
	RESET();
	sl_put_map(&in, 2); sl_put_int(&in, 1); sl_put_int(&in, 2); sl_put_cstr(&in, "amount"); sl_put_int(&in, 3);
	sl_put_map(&want, 2); sl_put_int(&want, 1); sl_put_int(&want, 2); sl_put_cstr(&want, "amount"); sl_put_int(&want, 6);
	g_ed.set = "amount", g_ed.v = 6, g_look = "amount";
	edit_case(__LINE__, &in, &want);
	int64_t i;
	CHECK(g_has && sl_as_int(g_found, &i) && i == 3);
	/* a nested map value and a str8 value are skipped whole */
	RESET();
	uint8_t str8[] = {0xd9, 40, 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a',
	                  'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a'};
	sl_put_map(&in, 3); sl_put_cstr(&in, "m"); sl_put_map(&in, 1); sl_put_cstr(&in, "amount"); sl_put_int(&in, 1);
	sl_put_cstr(&in, "s"); sl_put_raw(&in, str8, sizeof str8); sl_put_cstr(&in, "amount"); sl_put_int(&in, 4);
	sl_put_map(&want, 3); sl_put_cstr(&want, "m"); sl_put_map(&want, 1); sl_put_cstr(&want, "amount"); sl_put_int(&want, 1);
	sl_put_cstr(&want, "s"); sl_put_raw(&want, str8, sizeof str8); sl_put_cstr(&want, "amount"); sl_put_int(&want, 8);
	g_ed.set = "amount", g_ed.v = 8, g_look = "amount";
	edit_case(__LINE__, &in, &want);
	CHECK(g_has && sl_as_int(g_found, &i) && i == 4);
	g_look = "s";
	edit_case(__LINE__, &in, &want);
	CHECK(g_has && g_found.n == sizeof str8 && memcmp(g_found.p, str8, sizeof str8) == 0);
#undef RESET
	free(in.p), free(want.p);
}

/* Every lookup on a record's value (indexed by the SDK) agrees with the
 * same lookup on a copy of the value (walked), for each field and for
 * names that are not there. */
static const char *const g_names[] = {"", "a", "ab", "amount", "amounts", "txnId", "accountId", "x"};
static int g_mismatch;

static int compare_lookups(const sl_record *r) {
	uint8_t copy[256];
	if (r->value.n > sizeof copy) return SL_OK;
	memcpy(copy, r->value.p, r->value.n);
	for (size_t i = 0; i < sizeof g_names / sizeof g_names[0]; i++) {
		sl_value a = {0}, b = {0};
		bool ha = sl_map_get(r->value, g_names[i], &a), hb = sl_map_get(val(copy, r->value.n), g_names[i], &b);
		if (ha != hb || a.n != b.n || (ha && (a.p - r->value.p != b.p - copy || memcmp(a.p, b.p, a.n) != 0))) g_mismatch++;
	}
	return 0;
}

static void test_indexed_lookups(void) {
	sl_plugin f = {.name = "f", .kind = SL_KIND_FILTER, .filter = compare_lookups};
	uint8_t empty_map = 0x80;
	sl_buf in = {0}, v = {0};
	int32_t n = 0;
	for (int shape = 0; shape < 64; shape++) {
		v.len = 0;
		uint32_t fields = (uint32_t)shape % 6;
		sl_put_map(&v, fields);
		for (uint32_t f2 = 0; f2 < fields; f2++) {
			sl_put_cstr(&v, g_names[(shape + f2 * 3) % 8]);
			switch ((shape + f2) % 4) {
			case 0: sl_put_int(&v, shape * 1000 - 5000); break;
			case 1: sl_put_cstr(&v, "acct-1"); break;
			case 2: sl_put_map(&v, 1), sl_put_cstr(&v, "a"), sl_put_int(&v, 1); break;
			default: sl_put_float(&v, 1.5); break;
			}
		}
		envelope(&in, shape, &v);
		n++;
	}
	sl__reset();
	reset_host();
	g_mismatch = 0;
	CHECK(sl__open(&f, &empty_map, 1, 0, 1, 128) == SL_OK && sl__process(&f, 0, in.p, in.len, n) == SL_OK);
	CHECK(g_mismatch == 0);
	free(in.p), free(v.p);
}

static void test_event_times(void) {
	sl_plugin f = {.name = "f", .kind = SL_KIND_FILTER, .filter = keep_positive};
	uint8_t empty_map = 0x80;
	sl__reset();
	CHECK(sl__open(&f, &empty_map, 1, 0, 1, 128) == SL_OK);
	/* int64 and uint64 times as writers encode them, and every other int */
	static const int64_t times[] = {0, 5, -1, -100, 200, 70000, -70000, 1LL << 40, -(1LL << 40), INT64_MAX, INT64_MIN};
	for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
		sl_buf in = {0};
		record(&in, times[i], 1);
		reset_host();
		CHECK(sl__process(&f, 0, in.p, in.len, 1) == SL_OK && bytes_eq(emitted[0], emitted_len[0], in.p, in.len));
		free(in.p);
	}
	uint8_t big[] = {0x93, 0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0, 0xc0, 0x80}; /* 2^63: out of range */
	CHECK(sl__process(&f, 0, big, sizeof big, 1) == SL_MALFORMED && strstr(last_error, "out of range"));
	uint8_t u64[] = {0x93, 0xcf, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xc0, 0x81, 0xa6, 'a', 'm', 'o', 'u', 'n', 't', 1};
	reset_host();
	CHECK(sl__process(&f, 0, u64, sizeof u64, 1) == SL_OK && emitted_count[0] == 1);
	uint8_t cut[] = {0x93, 0xd3, 0, 0, 0, 0, 0, 0, 0}; /* 8 bytes of a 9-byte time */
	CHECK(sl__process(&f, 0, cut, sizeof cut, 1) == SL_MALFORMED && strstr(last_error, "truncated"));
	uint8_t nokey[] = {0x93, 0xc0}; /* ends after the time */
	CHECK(sl__process(&f, 0, nokey, sizeof nokey, 1) == SL_MALFORMED && strstr(last_error, "truncated"));
	uint8_t keyed[] = {0x93, 0xc0, 0xa1, 'k', 0x81, 0xa6, 'a', 'm', 'o', 'u', 'n', 't', 1};
	reset_host();
	CHECK(sl__process(&f, 0, keyed, sizeof keyed, 1) == SL_OK && bytes_eq(emitted[0], emitted_len[0], keyed, sizeof keyed));
}

/* Every cut of an envelope is malformed, whatever the value holds: the
 * envelope parser's inline paths check what the general scanner does. */
static void test_envelope_cuts(void) {
	sl_plugin f = {.name = "f", .kind = SL_KIND_FILTER, .filter = keep_positive};
	uint8_t empty_map = 0x80;
	sl__reset();
	CHECK(sl__open(&f, &empty_map, 1, 0, 1, 128) == SL_OK);
	sl_buf in = {0};
	for (int v = 0; v < 4; v++) {
		in.len = 0;
		sl_put_array(&in, 3);
		sl_put_int(&in, 1700000000000LL + v);
		if (v == 3) sl_put_cstr(&in, "key"); else sl_put_nil(&in);
		sl_put_map(&in, 5);
		sl_put_cstr(&in, "txnId"); sl_put_int(&in, v == 0 ? 5 : 1000);
		sl_put_cstr(&in, "accountId"); sl_put_cstr(&in, "acct-12");
		if (v == 1) { uint8_t k8[] = {0xd9, 6, 'a', 'm', 'o', 'u', 'n', 't'}; sl_put_raw(&in, k8, sizeof k8); }
		else if (v == 2) sl_put_int(&in, 7); /* an int key */
		else sl_put_cstr(&in, "amount");
		sl_put_int(&in, v == 0 ? -3 : 3);
		sl_put_cstr(&in, "nested"); sl_put_map(&in, 1); sl_put_cstr(&in, "a"); sl_put_float(&in, 1.5);
		sl_put_cstr(&in, "currency"); sl_put_cstr(&in, "EUR");
		reset_host();
		CHECK(sl__process(&f, 0, in.p, in.len, 1) == SL_OK);
		CHECK(emitted_count[0] == (v == 0 || v == 2 ? 0 : 1));
		for (uint32_t cut = 0; cut < in.len; cut++) {
			uint8_t *b = malloc(cut ? cut : 1); /* exactly the cut: a read past it is caught by ASan */
			memcpy(b, in.p, cut);
			CHECK(sl__process(&f, 0, b, cut, 1) == SL_MALFORMED);
			free(b);
		}
	}
	free(in.p);
}

/* A process-window: the header's window reaches sl_window(), the records
 * the process callback, then window_end once; the header is not a record. */
static int64_t win_sum, win_n, win_start, win_end_seen;
static sl_record win_best; /* a copy: its views stay valid for the call */
static bool win_has_best;
static int win_process(int32_t port, const sl_record *r) {
	(void)port;
	int64_t a = 0;
	const sl_window_info *w = sl_window();
	if (!w) return sl_fail(SL_USER, "no window");
	win_start = w->start;
	if (w->index != (uint32_t)win_n) return sl_fail(SL_USER, "index");
	sl_field_int(r, "amount", &a);
	win_sum += a, win_n++;
	if (a == 7) win_best = *r, win_has_best = true;
	return SL_OK;
}
static int win_end(const sl_window_info *w) {
	win_end_seen = w->end;
	return win_has_best ? sl_emit(SL_MAIN, &win_best) : SL_OK;
}

static void test_process_window(void) {
	sl_buf in = {0};
	sl_put_array(&in, 3); sl_put_int(&in, 9999); sl_put_cstr(&in, "k");
	sl_put_map(&in, 2); sl_put_cstr(&in, "start"); sl_put_int(&in, 0); sl_put_cstr(&in, "end"); sl_put_int(&in, 10000);
	record(&in, 5, 3);
	uint32_t best = in.len;
	record(&in, 6, 7);
	uint32_t best_end = in.len;
	record(&in, 7, 1);
	sl_plugin p = {.name = "w", .kind = SL_KIND_PROCESS_WINDOW, .process = win_process, .window_end = win_end};
	uint8_t empty_map = 0x80;
	sl__reset();
	CHECK(sl__open(&p, &empty_map, 1, 0, 1, 128) == SL_OK);
	reset_host();
	win_sum = win_n = 0, win_has_best = false;
	CHECK(sl__process(&p, 0, in.p, in.len, 4) == SL_OK);
	CHECK(win_n == 3 && win_sum == 11 && win_start == 0 && win_end_seen == 10000);
	CHECK(emitted_count[0] == 1 && bytes_eq(emitted[0], emitted_len[0], in.p + best, best_end - best));
	CHECK(sl_window() == NULL);
	/* a call whose first record is no header is malformed */
	sl_buf bad = {0};
	record(&bad, 1, 1);
	reset_host();
	CHECK(sl__process(&p, 0, bad.p, bad.len, 1) == SL_MALFORMED && strstr(last_error, "window header"));
	/* describe says process-window */
	reset_host();
	CHECK(sl__describe(&p) == SL_OK);
	bool named = false;
	for (uint32_t i = 0; i + 14 <= emitted_len[0]; i++) named |= memcmp(emitted[0] + i, "process-window", 14) == 0;
	CHECK(named);
	free(in.p), free(bad.p);
}

static void test_process_state_and_side_outputs(void) {
	sl_buf in = {0};
	/* keyed records: key "k" */
	for (int t = 50; t <= 150; t += 100) {
		sl_put_array(&in, 3); sl_put_int(&in, t); sl_put_cstr(&in, "k"); sl_put_map(&in, 0);
	}
	sl_plugin p = {.name = "p", .kind = SL_KIND_PROCESS, .outputs = late_outputs, .process = process_late};
	uint8_t empty_map = 0x80;
	sl__reset();
	CHECK(sl__open(&p, &empty_map, 1, 0, 1, 128) == SL_OK);
	reset_host();
	CHECK(sl__process(&p, 0, in.p, in.len, 2) == SL_OK);
	CHECK(emitted_count[0] == 1 && emitted_count[1] == 1 && nstate == 1);
	/* an unkeyed record cannot use state */
	sl_buf un = {0};
	record(&un, 1, 1);
	CHECK(sl__process(&p, 0, un.p, un.len, 1) == SL_STATE && strstr(last_error, "key"));
	/* a refused emit fails the call */
	reset_host();
	emit_status = SL_LIMIT;
	CHECK(sl__process(&p, 0, in.p, in.len, 2) == SL_LIMIT && strstr(last_error, "limit"));
	free(in.p), free(un.p);
}

/* kinds_proc: per record, adds v to list slot 0 and puts "m<v%2>" = v in
 * map slot 1; keeps the list's last two; records what it read back. */
static sl_value val_of(sl_str s) { sl_value v = {s.p, s.n}; return v; }
static int64_t kinds_sum, kinds_len, kinds_entries, kinds_m1;
static int kinds_has_m0;

static int kinds_proc(int32_t port, const sl_record *r) {
	(void)port;
	int64_t v = 0;
	sl_field_int(r, "v", &v);
	sl_buf b = {0};
	sl_put_int(&b, v);
	int st = sl_liststate_add(0, b.p, b.len);
	char uk[2] = {'m', (char)('0' + v % 2)};
	if (st >= 0) st = sl_mapstate_put(1, uk, 2, b.p, b.len);
	free(b.p);
	if (st < 0) return st;
	sl_str w, e, k, val;
	int n = 0;
	sl_str elems[8];
	if ((st = sl_liststate_get(0, &w)) != 1) return st < 0 ? st : sl_fail(SL_USER, "no list");
	while ((st = sl_liststate_next(&w, &e)) == 1) elems[n++] = e;
	if (st < 0) return st;
	if (n > 2) { /* keep the last two */
		sl_buf u = {0};
		sl_wire_put(&u, elems[n - 2].p, elems[n - 2].n);
		sl_wire_put(&u, elems[n - 1].p, elems[n - 1].n);
		st = sl_liststate_update(0, u.p, u.len);
		free(u.p);
		if (st < 0) return st;
	}
	kinds_sum = 0, kinds_len = 0;
	if ((st = sl_liststate_get(0, &w)) < 0) return st;
	while (sl_liststate_next(&w, &e) == 1) {
		int64_t x;
		sl_as_int(val_of(e), &x);
		kinds_sum += x, kinds_len++;
	}
	kinds_entries = 0;
	if ((st = sl_mapstate_entries(1, &w)) < 0) return st;
	while (sl_mapstate_next(&w, &k, &val) == 1) kinds_entries++;
	kinds_has_m0 = sl_mapstate_contains(1, "m0", 2);
	kinds_m1 = -1;
	if (sl_mapstate_get(1, "m1", 2, &val) == 1) sl_as_int(val_of(val), &kinds_m1);
	if (v == 100) {
		if ((st = sl_mapstate_del(1, "m0", 2)) < 0) return st;
		kinds_has_m0 = sl_mapstate_contains(1, "m0", 2);
		if ((st = sl_state_clear(0)) < 0) return st;
		if ((st = sl_liststate_get(0, &w)) != 0) return sl_fail(SL_USER, "cleared list still there");
	}
	return SL_OK;
}

static void test_list_and_map_state(void) {
	sl_plugin p = {.name = "k", .kind = SL_KIND_PROCESS, .keyed = true, .process = kinds_proc};
	uint8_t empty_map = 0x80;
	sl__reset();
	CHECK(sl__open(&p, &empty_map, 1, 0, 1, 128) == SL_OK);
	int64_t vs[] = {3, 4, 5, 100};
	int64_t want_sum[] = {3, 7, 9, 105}, want_len[] = {1, 2, 2, 2}, want_ent[] = {1, 2, 2, 2}, want_m1[] = {3, 3, 5, 5};
	for (int i = 0; i < 4; i++) {
		sl_buf in = {0};
		sl_put_array(&in, 3); sl_put_nil(&in); sl_put_cstr(&in, "acct");
		sl_put_map(&in, 1); sl_put_cstr(&in, "v"); sl_put_int(&in, vs[i]);
		reset_host();
		CHECK(sl__process(&p, 0, in.p, in.len, 1) == SL_OK);
		CHECK(kinds_sum == want_sum[i] && kinds_len == want_len[i] && kinds_entries == want_ent[i] && kinds_m1 == want_m1[i]);
		CHECK(kinds_has_m0 == (i == 1 || i == 2));
		free(in.p);
	}
	CHECK(!list_has[0] && map_n[1] == 1); /* cleared; m0 deleted */
}

static int by_length(sl_value key, int32_t n, int32_t *ch) {
	sl_str s;
	if (!sl_as_str(key, &s)) return sl_fail(SL_USER, "key must be a string");
	*ch = (int32_t)(s.n % (uint32_t)n);
	return SL_OK;
}

static void test_partition_and_describe(void) {
	sl_buf in = {0};
	const char *keys[] = {"a", "bbb"};
	for (int i = 0; i < 2; i++) {
		sl_put_array(&in, 3); sl_put_nil(&in); sl_put_cstr(&in, keys[i]); sl_put_map(&in, 0);
	}
	sl_plugin p = {.name = "len", .kind = SL_KIND_PARTITIONER, .partition = by_length};
	uint8_t empty_map = 0x80;
	sl__reset();
	CHECK(sl__open(&p, &empty_map, 1, 0, 1, 128) == SL_OK);
	reset_host();
	CHECK(sl__partition(&p, in.p, in.len, 2, 2) == SL_OK);
	uint8_t nil_key[] = {0x93, 0xc0, 0xc0, 0x80};
	CHECK(sl__partition(&p, nil_key, sizeof nil_key, 1, 2) == SL_USER && strcmp(last_error, "record 0: key must be a string") == 0);
	reset_host();
	CHECK(sl__partition(&p, in.p, in.len, 2, 2) == SL_OK);
	uint8_t want[] = {1, 0, 0, 0, 1, 0, 0, 0};
	CHECK(bytes_eq(emitted[0], emitted_len[0], want, sizeof want) && emitted_count[0] == 2);
	CHECK(sl__process(&p, 0, in.p, in.len, 2) == SL_UNSUPPORTED);
	reset_host();
	CHECK(sl__describe(&p) == SL_OK && emitted_count[0] == 1);
	sl_value v;
	sl_str s;
	CHECK(sl_map_get(val(emitted[0], emitted_len[0]), "kind", &v) && sl_as_str(v, &s) && sl_str_eq(s, "partitioner"));
	free(in.p);
}

/* a keyed running count, registered as a reduce */
static int count_reduce(int32_t port, const sl_record *r) {
	(void)port;
	sl_str s = {0};
	int64_t n = 0;
	int found = sl_state_get(7, &s);
	if (found < 0) return found;
	if (found) sl_as_int((sl_value){s.p, s.n}, &n);
	uint8_t b = (uint8_t)(n + 1);
	int st = sl_state_put(7, &b, 1);
	if (st != SL_OK) return st;
	return sl_emit_value(SL_MAIN, r, (sl_value){&b, 1});
}

static void test_reduce(void) {
	sl_buf in = {0};
	const char *keys[] = {"a", "b", "a"};
	for (int i = 0; i < 3; i++) {
		sl_put_array(&in, 3); sl_put_int(&in, 1); sl_put_cstr(&in, keys[i]); sl_put_map(&in, 0);
	}
	sl_plugin p = {.name = "count", .kind = SL_KIND_REDUCE, .process = count_reduce};
	uint8_t empty_map = 0x80;
	sl__reset();
	CHECK(sl__open(&p, &empty_map, 1, 0, 1, 128) == SL_OK);
	reset_host();
	CHECK(sl__process(&p, 0, in.p, in.len, 3) == SL_OK && emitted_count[0] == 3);
	uint8_t want[] = {0x93, 1, 0xa1, 'a', 1, 0x93, 1, 0xa1, 'b', 1, 0x93, 1, 0xa1, 'a', 2};
	CHECK(bytes_eq(emitted[0], emitted_len[0], want, sizeof want));
	CHECK(sl__process(&p, 1, in.p, in.len, 3) == SL_UNSUPPORTED); /* one input */
	reset_host();
	CHECK(sl__describe(&p) == SL_OK && emitted_count[0] == 1);
	sl_value v;
	sl_str s;
	bool keyed = false;
	CHECK(sl_map_get(val(emitted[0], emitted_len[0]), "kind", &v) && sl_as_str(v, &s) && sl_str_eq(s, "reduce"));
	CHECK(sl_map_get(val(emitted[0], emitted_len[0]), "keyed", &v) && sl_as_bool(v, &keyed) && keyed); /* a reduce is keyed */
	free(in.p);
}

static void test_open(void) {
	sl_plugin p = {.name = "o", .kind = SL_KIND_MAP, .map = double_and_tag, .open = open_fail};
	uint8_t empty_map = 0x80, not_map = 0x90;
	sl__reset();
	CHECK(sl__open(&p, &not_map, 1, 0, 1, 1) == SL_CONFIG && strstr(last_error, "not a msgpack map"));
	CHECK(sl__open(&p, &empty_map, 1, 0, 1, 1) == SL_CONFIG && strcmp(last_error, "open: bad config") == 0);
	CHECK(sl__process(&p, 0, NULL, 0, 0) == SL_UNSUPPORTED); /* not open */
	p.open = NULL;
	CHECK(sl__open(&p, &empty_map, 1, 0, 1, 1) == SL_OK);
	CHECK(sl__open(&p, &empty_map, 1, 0, 1, 1) == SL_UNSUPPORTED); /* twice */
	reset_host();
	CHECK(sl__process(&p, 0, NULL, 0, 0) == SL_OK && emit_calls == 0); /* an empty batch */
}

/* the typed config getters take what the Go SDK's take, and a value of
 * another type fails open with SL_CONFIG, "config NAME: want T, got V",
 * after the callback returned SL_OK */
static int64_t got_n, got_text;
static double got_f;
static bool got_b;
static sl_str got_s, got_num;
static int open_reads_config(const sl_context *ctx, sl_value cfg) {
	(void)ctx;
	got_n = sl_config_int(cfg, "n", -1);
	got_text = sl_config_int(cfg, "text", -1);
	got_f = sl_config_float(cfg, "half", 0);
	got_b = sl_config_bool(cfg, "yes", false);
	got_s = sl_config_str(cfg, "word", "def");
	got_num = sl_config_str(cfg, "n", "");
	(void)sl_config_int(cfg, "missing", 5);
	return SL_OK;
}
static int open_reads_bad_config(const sl_context *ctx, sl_value cfg) {
	(void)ctx;
	CHECK(sl_config_int(cfg, "half", 9) == 9);
	CHECK(sl_config_bool(cfg, "n", true) == true);
	CHECK(sl_config_float(cfg, "hex", 2) == 2); /* strtod would read 16 */
	sl_str s = sl_config_str(cfg, "list", "d");
	CHECK(s.n == 1 && s.p[0] == 'd');
	return SL_OK;
}
static int open_refuses_config(const sl_context *ctx, sl_value cfg) {
	(void)ctx, (void)cfg;
	return sl_fail(SL_CONFIG, "config hot: want a string");
}
static void test_config_getters(void) {
	sl_buf c = {0};
	sl_put_map(&c, 7);
	sl_put_cstr(&c, "hex"), sl_put_cstr(&c, "0x10");
	sl_put_cstr(&c, "n"), sl_put_int(&c, 7);
	sl_put_cstr(&c, "text"), sl_put_cstr(&c, " -42 ");
	sl_put_cstr(&c, "half"), sl_put_float(&c, 1.5);
	sl_put_cstr(&c, "yes"), sl_put_cstr(&c, "\tT\n");
	sl_put_cstr(&c, "word"), sl_put_cstr(&c, "hot");
	sl_put_cstr(&c, "list"), sl_put_array(&c, 0);
	sl_plugin p = {.name = "cfg", .kind = SL_KIND_MAP, .map = double_and_tag, .open = open_reads_config};
	sl__reset();
	CHECK(sl__open(&p, c.p, c.len, 0, 1, 1) == SL_OK);
	CHECK(got_n == 7 && got_text == -42 && got_f == 1.5 && got_b);
	CHECK(sl_str_eq(got_s, "hot") && sl_str_eq(got_num, "7"));
	p.open = open_reads_bad_config;
	sl__reset();
	last_error[0] = 0;
	CHECK(sl__open(&p, c.p, c.len, 0, 1, 1) == SL_CONFIG);
	CHECK(strcmp(last_error, "config half: want an integer (int64), got 1.5; config n: want a boolean, got 7; config hex: want a number, got \"0x10\"; config list: want a string, got a list") == 0);
	/* an open's own "config NAME: ..." is not prefixed "open: " */
	p.open = open_refuses_config;
	sl__reset();
	CHECK(sl__open(&p, c.p, c.len, 0, 1, 1) == SL_CONFIG && strcmp(last_error, "config hot: want a string") == 0);
	free(c.p);
}

/* a float in a config error reads as Go's strconv.FormatFloat(f, 'g', -1)
 * writes it, for the numbers people type */
static int open_reads_f(const sl_context *ctx, sl_value cfg) {
	(void)ctx;
	sl_config_int(cfg, "f", 0);
	return SL_OK;
}
static void test_config_float_text(void) {
	static const struct { double f; const char *want; } cases[] = {
		{1.5, "1.5"}, {-0.25, "-0.25"}, {0.1, "0.1"}, {2.675, "2.675"}, {3.25e-3, "0.00325"},
		{999999.5, "999999.5"}, {1234567.5, "1.2345675e+06"}, {123456789.125, "1.23456789125e+08"}, {1e21, "1e+21"},
		{1.5e-5, "1.5e-05"}, {0.0001, "0.0001"}, {1e-300, "1e-300"}, {2.5e100, "2.5e+100"}, {-7.25e-200, "-7.25e-200"}, {1.7976931348623157e308, "1.79769313486232e+308"},
		{1.0 / 0.0, "+Inf"}, {-1.0 / 0.0, "-Inf"}, {0.0 / 0.0, "NaN"}, {12.0, "12"},
	};
	sl_plugin p = {.name = "cfg", .kind = SL_KIND_MAP, .map = double_and_tag, .open = open_reads_f};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		sl_buf c = {0};
		sl_put_map(&c, 1);
		sl_put_cstr(&c, "f"), sl_put_float(&c, cases[i].f);
		char want[80];
		snprintf(want, sizeof want, "config f: want an integer (int64), got %s", cases[i].want);
		sl__reset();
		last_error[0] = 0;
		int st = sl__open(&p, c.p, c.len, 0, 1, 1);
		if (cases[i].f == 12.0) CHECK(st == SL_OK); /* a whole float is an int */
		else {
			if (strcmp(last_error, want) != 0) fprintf(stderr, "float %g: got %s\n", cases[i].f, last_error);
			CHECK(st == SL_CONFIG && strcmp(last_error, want) == 0);
		}
		free(c.p);
	}
}

static int returns_seven(const sl_record *r) { (void)r; return 7; }
static int emits_to_nine(int32_t port, const sl_record *r) { (void)port; return sl_emit(9, r); }
static int open_returns_five(const sl_context *ctx, sl_value cfg) { (void)ctx, (void)cfg; return 5; }

/* a callback that returns a positive number fails: no status is positive,
 * and taking it for SL_OK dropped the record without a word */
static void test_positive_return(void) {
	uint8_t empty_map = 0x80;
	sl_buf in = {0};
	record(&in, 1, 5);
	record(&in, 2, 6);
	sl_plugin p = {.name = "seven", .kind = SL_KIND_FLAT_MAP, .flat_map = returns_seven};
	sl__reset();
	reset_host();
	CHECK(sl__open(&p, &empty_map, 1, 0, 1, 128) == SL_OK);
	CHECK(sl__process(&p, 0, in.p, in.len, 2) == SL_USER &&
	      strcmp(last_error, "record 0: seven: flat_map returned 7, not a status: return SL_OK or a negative status (sl_fail)") == 0);
	sl_plugin o = {.name = "five", .kind = SL_KIND_MAP, .map = double_and_tag, .open = open_returns_five};
	sl__reset();
	CHECK(sl__open(&o, &empty_map, 1, 0, 1, 128) == SL_USER && strstr(last_error, "open: five: open returned 5, not a status"));
	/* an output handle the plugin does not have says which it has */
	sl_plugin n = {.name = "nine", .kind = SL_KIND_PROCESS, .process = emits_to_nine, .outputs = late_outputs};
	sl__reset();
	reset_host();
	CHECK(sl__open(&n, &empty_map, 1, 0, 1, 128) == SL_OK);
	CHECK(sl__process(&n, 0, in.p, in.len, 2) == SL_USER &&
	      strstr(last_error, "unknown output handle 9: the plugin has SL_MAIN (0) and 2 side outputs (1 on), in the order of its .outputs tags"));
	/* a side output by its tag; a tag the plugin does not declare says
	 * which it does */
	CHECK(sl_output("late") == 1 && sl_output("unused") == 2 && sl_output("lat") == SL_NO_OUTPUT);
	sl_plugin l = {.name = "by-tag", .kind = SL_KIND_PROCESS, .process = emits_by_tag, .outputs = late_outputs};
	sl__reset();
	reset_host();
	CHECK(sl__open(&l, &empty_map, 1, 0, 1, 128) == SL_OK);
	CHECK(sl__process(&l, 0, in.p, in.len, 2) == SL_OK && emitted_count[1] == 2);
	g_tag = "alerts";
	reset_host();
	CHECK(sl__process(&l, 0, in.p, in.len, 2) == SL_USER &&
	      strstr(last_error, "unknown side output \"alerts\" (sl_output): the plugin declares \"late\", \"unused\" in its .outputs"));
	g_tag = "late";
	free(in.p);
}

/* ---- timers ------------------------------------------------------------------------ */

static struct { int32_t kind; int64_t ts; uint8_t key[32]; uint32_t kn; } timers[8];
static int ntimers;
static int64_t fake_watermark = INT64_MIN;

int32_t sl_host_timer_register(int32_t kind, const uint8_t *k, uint32_t kn, int64_t ts) {
	if (kind < 0 || kind > 1 || kn > 32) return SL_STATE;
	for (int i = 0; i < ntimers; i++)
		if (timers[i].kind == kind && timers[i].ts == ts && timers[i].kn == kn && memcmp(timers[i].key, k, kn) == 0) return SL_OK;
	if (ntimers == 8) return SL_STATE;
	timers[ntimers].kind = kind, timers[ntimers].ts = ts, timers[ntimers].kn = kn;
	memcpy(timers[ntimers].key, k, kn);
	ntimers++;
	return SL_OK;
}

int32_t sl_host_timer_delete(int32_t kind, const uint8_t *k, uint32_t kn, int64_t ts) {
	for (int i = 0; i < ntimers; i++)
		if (timers[i].kind == kind && timers[i].ts == ts && timers[i].kn == kn && memcmp(timers[i].key, k, kn) == 0) {
			timers[i] = timers[--ntimers];
			return SL_OK;
		}
	return SL_OK;
}

int64_t sl_host_current_watermark(void) { return fake_watermark; }
int64_t sl_host_current_processing_time(void) { return 0; }

/* timed: each record registers an event-time timer at its time + 10 (twice:
 * one timer) and a processing-time one it deletes again; on_timer emits
 * {"wm": current watermark} stamped with the timer and the key's state. */
static int timed_proc(int32_t port, const sl_record *r) {
	(void)port;
	int st = sl_timer_register(SL_EVENT_TIME, r->time + 10);
	if (st == SL_OK) st = sl_timer_register(SL_EVENT_TIME, r->time + 10);
	if (st == SL_OK) st = sl_timer_register(SL_PROCESSING_TIME, 99);
	if (st == SL_OK) st = sl_timer_delete(SL_PROCESSING_TIME, 99);
	if (st == SL_OK) st = sl_state_put(0, "\x01", 1);
	return st;
}

static int timed_fired;
static int timed_on_timer(int32_t kind, int64_t ts, const sl_record *t) {
	sl_str v;
	if (kind != SL_EVENT_TIME || !t->has_time || t->time != ts || sl_state_get(0, &v) != 1) return sl_fail(SL_USER, "bad timer");
	timed_fired++;
	sl_buf *b = sl_begin(SL_MAIN, t);
	sl_put_map(b, 1);
	sl_put_cstr(b, "wm");
	sl_put_int(b, sl_current_watermark());
	return sl_end(SL_MAIN);
}

static void test_timers(void) {
	sl_plugin p = {.name = "timed", .kind = SL_KIND_PROCESS, .keyed = true, .process = timed_proc, .on_timer = timed_on_timer};
	uint8_t empty_map = 0x80;
	sl__reset();
	CHECK(sl__open(&p, &empty_map, 1, 0, 1, 128) == SL_OK);
	reset_host();
	ntimers = 0, nstate = 0;
	sl_buf in = {0};
	sl_put_array(&in, 3); sl_put_int(&in, 100); sl_put_cstr(&in, "k"); sl_put_map(&in, 0);
	CHECK(sl__process(&p, 0, in.p, in.len, 1) == SL_OK);
	CHECK(ntimers == 1 && timers[0].kind == SL_EVENT_TIME && timers[0].ts == 110);
	/* the host fires it: the key as the buffer's input */
	fake_watermark = 110;
	CHECK(sl__on_timer(&p, timers[0].kind, timers[0].ts, timers[0].key, timers[0].kn) == SL_OK);
	CHECK(timed_fired == 1 && emitted_count[0] == 1);
	sl_buf want = {0};
	sl_put_array(&want, 3); sl_put_int(&want, 110); sl_put_nil(&want);
	sl_put_map(&want, 1); sl_put_cstr(&want, "wm"); sl_put_int(&want, 110);
	CHECK(emitted_len[0] == want.len && memcmp(emitted[0], want.p, want.len) == 0);
	/* an unkeyed record cannot register one; a malformed key is refused */
	sl_buf un = {0};
	record(&un, 1, 1);
	CHECK(sl__process(&p, 0, un.p, un.len, 1) == SL_STATE);
	uint8_t bad = 0xc1;
	CHECK(sl__on_timer(&p, 0, 1, &bad, 1) == SL_MALFORMED);
	sl_plugin none = {.name = "none", .kind = SL_KIND_PROCESS, .process = timed_proc};
	CHECK(sl__on_timer(&none, 0, 1, timers[0].key, timers[0].kn) == SL_UNSUPPORTED);
	fake_watermark = INT64_MIN;
	free(in.p), free(want.p), free(un.p);
}

int main(void) {
	test_put_int_smallest();
	test_scalars();
	test_skip_errors();
	test_skip_every_header();
	test_map_lookup();
	test_map_lookup_every_length();
	test_java_hash();
	test_text_like_go();
	test_filter_and_map();
	test_filter_runs();
	test_edits();
	test_indexed_lookups();
	test_event_times();
	test_envelope_cuts();
	test_process_state_and_side_outputs();
	test_process_window();
	test_list_and_map_state();
	test_partition_and_describe();
	test_reduce();
	test_open();
	test_config_getters();
	test_config_float_text();
	test_positive_return();
	test_timers();
	if (failures) {
		fprintf(stderr, "FAIL: %d check(s)\n", failures);
		return 1;
	}
	printf("ok: sdk/c native tests\n");
	return 0;
}
