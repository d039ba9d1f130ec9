/* split (C): a flatMap that turns the string field "line" into one record
 * {"word": w} per word, with the input's event time and key. Words are
 * separated by ASCII whitespace, lowercased (A-Z) and trimmed of ASCII
 * punctuation at both ends; words left empty are skipped. A record without
 * a string "line" gives no output. */
#include "sluice.h"

static int is_space(uint8_t c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static int is_punct(uint8_t c) {
	return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

static int split(const sl_record *r) {
	sl_str line;
	if (!sl_field_str(r, "line", &line)) return SL_OK;
	for (uint32_t i = 0; i < line.n;) {
		while (i < line.n && is_space(line.p[i])) i++;
		uint32_t start = i;
		while (i < line.n && !is_space(line.p[i])) i++;
		uint32_t end = i;
		while (start < end && is_punct(line.p[start])) start++;
		while (end > start && is_punct(line.p[end - 1])) end--;
		if (start == end) continue;
		sl_buf *b = sl_begin(SL_MAIN, r);
		sl_put_map(b, 1);
		sl_put_cstr(b, "word");
		sl_put_str(b, line.p + start, end - start);
		if (!b->oom) /* lowercase the word where it was written */
			for (uint8_t *c = b->p + b->len - (end - start); c < b->p + b->len; c++)
				if (*c >= 'A' && *c <= 'Z') *c += 'a' - 'A';
		int st = sl_end(SL_MAIN);
		if (st < 0) return st;
	}
	return SL_OK;
}

static const sl_plugin plugin = {.name = "split", .kind = SL_KIND_FLAT_MAP, .flat_map = split};
SLUICE_OPERATOR(plugin)
