/* country (C): a custom partitioner keyed by a country code, as the Go
 * plugin (plugins/country/main.go): the hot country (config "hot", default
 * "NL") always goes to channel 0, every other key hashes (Java hashCode, as
 * Flink: abi.KeyHash) over channels 1..n-1; with one channel everything
 * goes to 0. A key without a hash (nil, a map...) fails the batch. */
#include "sluice.h"

#include <string.h>

static sl_str hot;

static int open_(const sl_context *ctx, sl_value config) {
	(void)ctx;
	/* as Go's ConfigString: a string (a view of the config, valid for the
	 * instance's life), or an integer or boolean formatted */
	hot = sl_config_str(config, "hot", "NL");
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
