/* top-bids (C): the Go plugin plugins/top-bids/main.go in C, with the same
 * output. A process-window plugin: when a window fires it emits the n
 * records with the highest "price" (config "field"), highest first, the
 * earlier first on equal prices; a record without a numeric field ranks
 * below every price. Config: field (default "price"), n (default 1). */
#include "sluice.h"

#include <string.h>

#define MAX_N 64

static int64_t n = 1;
static char field[128] = "price";

typedef struct {
	sl_record r; /* a copy: its views stay valid until window_end returns */
	double price;
	bool ok;
} cand;

static cand top[MAX_N];
static int ntop;

static int open(const sl_context *ctx, sl_value cfg) {
	(void)ctx;
	n = sl_config_int(cfg, "n", 1);
	if (n < 1 || n > MAX_N) return sl_fail(SL_CONFIG, "config n: want 1 to 64");
	sl_str f = sl_config_str(cfg, "field", "price");
	if (f.n == 0 || f.n >= sizeof field) return sl_fail(SL_CONFIG, "config field: want 1 to 127 bytes");
	memcpy(field, f.p, f.n);
	field[f.n] = 0;
	return SL_OK;
}

static bool better(const cand *a, const cand *b) {
	if (a->ok != b->ok) return a->ok;
	return a->price > b->price;
}

static int process(int32_t port, const sl_record *r) {
	(void)port;
	if (sl_window()->index == 0) ntop = 0; /* a new window (a failed call may have left some) */
	cand c = {.r = *r};
	sl_value v;
	if (sl_field(r, field, &v)) {
		sl_type t = sl_type_of(v);
		c.ok = (t == SL_T_INT || t == SL_T_FLOAT) && sl_as_float(v, &c.price);
	}
	int j = ntop;
	while (j > 0 && better(&c, &top[j - 1])) j--;
	if (j >= n) return SL_OK;
	if (ntop < n) ntop++;
	memmove(&top[j + 1], &top[j], (size_t)(ntop - 1 - j) * sizeof top[0]);
	top[j] = c;
	return SL_OK;
}

static int window_end(const sl_window_info *w) {
	(void)w;
	int st = SL_OK;
	for (int i = 0; i < ntop && st == SL_OK; i++) st = sl_emit(SL_MAIN, &top[i].r);
	ntop = 0;
	return st;
}

static const sl_plugin plugin = {.name = "top-bids", .kind = SL_KIND_PROCESS_WINDOW, .open = open, .process = process, .window_end = window_end};
SLUICE_OPERATOR(plugin)
