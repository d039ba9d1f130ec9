/* valid (C): a filter that keeps the records whose field "amount" is
 * greater than zero. Like the Go plugin (r.Int("amount") > 0), a float
 * amount is truncated toward zero and a missing or non-numeric one is 0. */
#include "sluice.h"

static int valid(const sl_record *r) {
	sl_value amount = {0};
	sl_field(r, "amount", &amount);
	return sl_int(amount) > 0; /* 1 keeps the record, 0 drops it */
}

static const sl_plugin plugin = {.name = "valid", .kind = SL_KIND_FILTER, .filter = valid};
SLUICE_OPERATOR(plugin)
