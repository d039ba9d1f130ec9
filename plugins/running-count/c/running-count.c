/* running-count (C): sets the field "count" of each record to the number of
 * records its subtask has seen, kept as operator state (sl_plugin.snapshot
 * and .restore: 8 little-endian bytes), as the Go plugin
 * (plugins/running-count/main.go). */
#include "sluice.h"


static int64_t count;

static int map(const sl_record *r, sl_edit *e) {
	(void)r;
	count++;
	sl_set_int(e, "count", count);
	return SL_OK;
}

static int snapshot(sl_buf *out) {
	uint8_t b[8];
	for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)count >> (8 * i));
	sl_put_raw(out, b, 8);
	return SL_OK;
}

static int restore(const uint8_t *p, uint32_t n) {
	if (n != 8) return sl_fail(SL_MALFORMED, "a count snapshot has 8 bytes");
	uint64_t v = 0;
	for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
	count += (int64_t)v;
	return SL_OK;
}

static const sl_plugin plugin = {.name = "running-count", .kind = SL_KIND_MAP, .map = map, .snapshot = snapshot, .restore = restore};
SLUICE_OPERATOR(plugin)
