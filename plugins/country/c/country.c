/* country (C): a custom partitioner keyed by a country code (a string).
 * The hot country (config "hot", default "NL") always goes to channel 0;
 * every other country to 1 + floorMod(javaHash(code), n-1), so the hot
 * country has a channel to itself; with n == 1 everything goes to 0. */
#include "sluice.h"

static sl_str hot = {(const uint8_t *)"NL", 2};

static int open_(const sl_context *ctx, sl_value config) {
	(void)ctx;
	sl_value v;
	if (!sl_map_get(config, "hot", &v) || sl_is_nil(v)) return SL_OK;
	if (!sl_as_str(v, &hot)) return sl_fail(SL_CONFIG, "country: config hot: want a string");
	return SL_OK; /* hot views the config: valid for the instance's life */
}

static int country(sl_value key, int32_t n, int32_t *channel) {
	sl_str code;
	if (!sl_as_str(key, &code)) return sl_fail(SL_USER, "country: the key must be a country code string");
	if (n == 1 || (code.n == hot.n && __builtin_memcmp(code.p, hot.p, hot.n) == 0)) {
		*channel = 0;
		return SL_OK;
	}
	int32_t m = n - 1, c = sl_java_string_hash(code) % m;
	*channel = 1 + (c < 0 ? c + m : c);
	return SL_OK;
}

static const sl_plugin plugin = {.name = "country", .kind = SL_KIND_PARTITIONER, .open = open_, .partition = country};
SLUICE_PARTITIONER(plugin)
