/* country (C): a custom partitioner keyed by a country code, as the Go
 * plugin (plugins/country/main.go): the hot country (config "hot", default
 * "NL") always goes to channel 0, every other key hashes (Java hashCode, as
 * Flink: abi.KeyHash) over channels 1..n-1; with one channel everything
 * goes to 0. A key without a hash (nil, a map...) fails the batch. */
#include "sluice.h"

#include <string.h>

static sl_str hot = {(const uint8_t *)"NL", 2};
static char hot_text[24]; /* an integer "hot", formatted as Go's ConfigString does */

static int open_(const sl_context *ctx, sl_value config) {
	(void)ctx;
	sl_value v;
	int64_t i;
	bool b;
	if (!sl_map_get(config, "hot", &v) || sl_is_nil(v)) return SL_OK;
	if (sl_as_str(v, &hot)) return SL_OK; /* a view of the config: valid for the instance's life */
	if (sl_as_bool(v, &b)) {
		hot.p = (const uint8_t *)(b ? "true" : "false"), hot.n = b ? 4 : 5;
		return SL_OK;
	}
	if (!sl_as_int(v, &i)) return sl_fail(SL_CONFIG, "config hot: want a string");
	char d[24];
	int k = sizeof d;
	uint64_t u = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;
	do d[--k] = (char)('0' + u % 10); while ((u /= 10) > 0);
	if (i < 0) d[--k] = '-';
	memcpy(hot_text, d + k, sizeof d - (size_t)k);
	hot.p = (const uint8_t *)hot_text, hot.n = (uint32_t)(sizeof d - (size_t)k);
	return SL_OK;
}

static int country(sl_value key, int32_t n, int32_t *channel) {
	sl_str code = {0};
	*channel = 0;
	if (n == 1) return SL_OK;
	if (!sl_as_str(key, &code)) sl_as_bin(key, &code); /* the key's bytes, as Go's StrBytes */
	if (code.n == hot.n && (hot.n == 0 || memcmp(code.p, hot.p, hot.n) == 0)) return SL_OK;
	int32_t h;
	const char *why = sl_key_hash(key, &h);
	if (why) return sl_failn(SL_USER, "country: ", why, (uint32_t)strlen(why));
	int32_t m = n - 1, c = h % m;
	*channel = 1 + (c < 0 ? c + m : c);
	return SL_OK;
}

static const sl_plugin plugin = {.name = "country", .kind = SL_KIND_PARTITIONER, .open = open_, .partition = country};
SLUICE_PARTITIONER(plugin)
