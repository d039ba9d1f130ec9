/* enrich (C): a map that adds every config key as a field: with config
 * {bank: NBI} each record gets "bank": "NBI". A field the record already
 * has is overwritten in place; new fields are appended in the config's
 * key order, sorted bytewise (the host sorts them too). Values are copied
 * as the host encoded them. */
#include "sluice.h"

#include <stdlib.h>
#include <string.h>

typedef struct { sl_str name; sl_value value; } field;

static field *fields; /* views into the config, valid for the instance's life */
static uint32_t nfields;

static int less(sl_str a, sl_str b) {
	int c = memcmp(a.p, b.p, a.n < b.n ? a.n : b.n);
	return c < 0 || (c == 0 && a.n < b.n);
}

static int open_(const sl_context *ctx, sl_value config) {
	(void)ctx;
	sl_iter it;
	sl_value k, v;
	sl_map_iter(config, &it); /* the SDK checked that config is a map */
	fields = calloc(it.left ? it.left : 1, sizeof *fields);
	if (!fields) return sl_fail(SL_OUT_OF_MEMORY, "enrich: out of memory");
	while (sl_map_next(&it, &k, &v)) {
		field f = {.value = v};
		if (!sl_as_str(k, &f.name)) return sl_fail(SL_CONFIG, "enrich: config keys must be strings");
		uint32_t i = nfields++; /* insertion sort: configs are small */
		for (; i > 0 && less(f.name, fields[i - 1].name); i--) fields[i] = fields[i - 1];
		fields[i] = f;
	}
	return SL_OK;
}

static int enrich(const sl_record *r, sl_edit *out) {
	(void)r;
	for (uint32_t i = 0; i < nfields; i++) sl_set_rawn(out, fields[i].name.p, fields[i].name.n, fields[i].value);
	return SL_OK;
}

static const sl_plugin plugin = {.name = "enrich", .kind = SL_KIND_MAP, .open = open_, .map = enrich};
SLUICE_OPERATOR(plugin)
