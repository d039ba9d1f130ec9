/* timeout (C): the Go plugin plugins/timeout/main.go in C, with the same
 * output, Flink's CountWithTimeoutFunction. Keyed; each record counts
 * (slot 1), notes its event time (slot 0) and registers an event-time
 * timer at that time + timeout-ms (default 10 s); a timer that finds no
 * later record of its key emits {"key", "count", "last", "message"}
 * stamped with the timer's time. */
#include "sluice.h"

#include <stdio.h>

enum { SLOT_LAST = 0, SLOT_COUNT = 1 };

static int64_t timeout = 10000;

static int open(const sl_context *ctx, sl_value cfg) {
	(void)ctx;
	timeout = sl_config_int(cfg, "timeout-ms", 10000);
	if (timeout <= 0) return sl_fail(SL_CONFIG, "config timeout-ms: want a positive number of milliseconds");
	return SL_OK;
}

static int int_state(int32_t slot, int64_t *v) {
	sl_str s;
	*v = 0;
	int st = sl_state_get(slot, &s);
	if (st == 1) {
		sl_value x = {s.p, s.n};
		sl_as_int(x, v);
	}
	return st < 0 ? st : SL_OK;
}

static sl_buf tmp;

static int put_int(int32_t slot, int64_t v) {
	tmp.len = 0;
	sl_put_int(&tmp, v);
	return sl_state_put(slot, tmp.p, tmp.len);
}

static int process(int32_t port, const sl_record *r) {
	(void)port;
	if (!r->has_time) return SL_OK; /* no event time: nothing to time out */
	int64_t n;
	int st = int_state(SLOT_COUNT, &n);
	if (st == SL_OK) st = put_int(SLOT_COUNT, n + 1);
	if (st == SL_OK) st = put_int(SLOT_LAST, r->time);
	if (st == SL_OK) st = sl_timer_register(SL_EVENT_TIME, r->time + timeout);
	return st;
}

static int on_timer(int32_t kind, int64_t ts, const sl_record *t) {
	(void)kind;
	int64_t last, n;
	int st = int_state(SLOT_LAST, &last);
	if (st < 0 || ts != last + timeout) return st; /* a later record of the key set a later timer */
	if ((st = int_state(SLOT_COUNT, &n)) < 0) return st;
	sl_str k = {0};
	sl_as_str(t->key, &k);
	char msg[320];
	int len;
	if (timeout % 1000 == 0)
		len = snprintf(msg, sizeof msg, "key %.*s silent for %lld s", (int)(k.n > 200 ? 200 : k.n), (const char *)k.p, (long long)(timeout / 1000));
	else
		len = snprintf(msg, sizeof msg, "key %.*s silent for %g s", (int)(k.n > 200 ? 200 : k.n), (const char *)k.p, (double)timeout / 1000);
	sl_buf *b = sl_begin(SL_MAIN, t);
	sl_put_map(b, 4);
	sl_put_cstr(b, "key");
	sl_put_str(b, k.p, k.n);
	sl_put_cstr(b, "count");
	sl_put_int(b, n);
	sl_put_cstr(b, "last");
	sl_put_int(b, last);
	sl_put_cstr(b, "message");
	sl_put_str(b, msg, (uint32_t)(len < (int)sizeof msg ? len : (int)sizeof msg - 1));
	return sl_end(SL_MAIN);
}

static sl_plugin plugin = {
	.name = "timeout",
	.kind = SL_KIND_PROCESS,
	.keyed = true,
	.open = open,
	.process = process,
	.on_timer = on_timer,
};

SLUICE_OPERATOR(plugin)
SLUICE_ON_TIMER(plugin)
