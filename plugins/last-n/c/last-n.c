/* last-n (C): the Go plugin plugins/last-n/main.go in C, with the same
 * output. Keyed by account, each transaction {account, merchant, amount}
 * goes out with "last" (the account's last n amounts, oldest first; list
 * state, slot 0), "merchant_count" (the account's transactions to this
 * merchant; map state, slot 1) and "merchants" (the map's size). Config:
 * n (default 3). */
#include "sluice.h"


static int64_t n = 3;

static int open(const sl_context *ctx, sl_value cfg) {
	(void)ctx;
	n = sl_config_int(cfg, "n", 3);
	if (n < 1 || n > 4000) return sl_fail(SL_CONFIG, "config n: want 1 to 4000");
	return SL_OK;
}

static sl_buf tmp, upd, arr;
static sl_str elems[4096];

static int process(int32_t port, const sl_record *r) {
	(void)port;
	int64_t amount = 0;
	sl_field_int(r, "amount", &amount);
	tmp.len = 0;
	sl_put_int(&tmp, amount);
	int st = sl_liststate_add(0, tmp.p, tmp.len);
	if (st < 0) return st;
	sl_str w, e;
	if ((st = sl_liststate_get(0, &w)) < 0) return st;
	uint32_t k = 0;
	while ((st = sl_liststate_next(&w, &e)) == 1) {
		if (k == sizeof elems / sizeof elems[0]) return sl_fail(SL_STATE, "the list holds more than 4096 elements");
		elems[k++] = e;
	}
	if (st < 0) return st;
	uint32_t from = k > (uint64_t)n ? k - (uint32_t)n : 0;
	arr.len = 0;
	sl_put_array(&arr, k - from);
	for (uint32_t i = from; i < k; i++) sl_put_raw(&arr, elems[i].p, elems[i].n);
	if (from > 0) {
		upd.len = 0;
		for (uint32_t i = from; i < k; i++) sl_wire_put(&upd, elems[i].p, elems[i].n);
		if ((st = sl_liststate_update(0, upd.p, upd.len)) < 0) return st;
	}
	if (arr.oom) return sl_fail(SL_OUT_OF_MEMORY, "out of memory");
	sl_value mv;
	sl_str merchant = {0};
	if (sl_field(r, "merchant", &mv)) sl_as_str(mv, &merchant);
	sl_str cur;
	int64_t seen = 1;
	if ((st = sl_mapstate_get(1, merchant.p, merchant.n, &cur)) < 0) return st;
	if (st == 1) {
		sl_value cv = {cur.p, cur.n};
		int64_t c = 0;
		sl_as_int(cv, &c);
		seen = c + 1;
	}
	tmp.len = 0;
	sl_put_int(&tmp, seen);
	if ((st = sl_mapstate_put(1, merchant.p, merchant.n, tmp.p, tmp.len)) < 0) return st;
	sl_str kw, mk, mval;
	int64_t merchants = 0;
	if ((st = sl_mapstate_entries(1, &kw)) < 0) return st;
	while (sl_mapstate_next(&kw, &mk, &mval) == 1) merchants++;
	sl_edit *ed = sl_edit_begin(r);
	sl_value av = {arr.p, arr.len};
	sl_set_raw(ed, "last", av);
	sl_set_int(ed, "merchant_count", seen);
	sl_set_int(ed, "merchants", merchants);
	return sl_edit_emit(ed, SL_MAIN);
}

static const sl_plugin plugin = {.name = "last-n", .kind = SL_KIND_PROCESS, .keyed = true, .open = open, .process = process};
SLUICE_OPERATOR(plugin)
