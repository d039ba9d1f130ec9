/* split (C): a flatMap that splits the field "line" into words and emits
 * one record {"word": w} per word, lowercased, with punctuation trimmed
 * from both ends ("Don't!" gives "don't"), exactly as the Go plugin
 * (plugins/split/main.go): words are separated by Unicode white space,
 * text is read as Go reads UTF-8 and lowercased with Go's tables. Each word
 * carries the line's event time and no key (as sdk.NewRecord). A record
 * without a line emits nothing. */
#include "sluice.h"

static sl_buf word; /* the lowercased word being built: reused */

static int split(const sl_record *r) {
	sl_value v;
	sl_str line;
	if (!sl_field(r, "line", &v) || !(sl_as_str(v, &line) || sl_as_bin(v, &line))) return SL_OK;
	const uint8_t *s = line.p;
	uint32_t n = line.n, size;
	while (n > 0) {
		/* the next field: skip white space, take the run of other runes */
		uint32_t i = 0, j;
		while (i < n && sl_is_space(sl_decode_rune(s + i, n - i, &size))) i += size;
		for (j = i; j < n && !sl_is_space(sl_decode_rune(s + j, n - j, &size)); j += size) {}
		const uint8_t *w = s + i;
		uint32_t wn = j - i;
		s += j, n -= j;
		/* trim punctuation from both ends, then lowercase */
		while (wn > 0 && sl_is_punct(sl_decode_rune(w, wn, &size))) w += size, wn -= size;
		while (wn > 0 && sl_is_punct(sl_decode_last_rune(w, wn, &size))) wn -= size;
		if (wn == 0) continue;
		word.len = 0;
		for (uint32_t k = 0; k < wn; k += size) sl_put_rune(&word, sl_to_lower(sl_decode_rune(w + k, wn - k, &size)));
		if (word.oom) return sl_fail(SL_OUT_OF_MEMORY, "split: out of memory");
		sl_buf *b = sl_begin(SL_MAIN, r); /* the line's event time, no key */
		sl_put_map(b, 1);
		sl_put_cstr(b, "word");
		sl_put_str(b, word.p, word.len);
		int st = sl_end(SL_MAIN);
		if (st < 0) return st;
	}
	return SL_OK;
}

static const sl_plugin plugin = {.name = "split", .kind = SL_KIND_FLAT_MAP, .flat_map = split};
SLUICE_OPERATOR(plugin)
