/* double (C): filter and map in one operator: keeps the records whose
 * field "amount" is greater than zero and doubles it, as the Go plugin
 * (plugins/double/main.go): a float amount is truncated toward zero, a
 * missing or non-numeric one is 0 (dropped), the doubled amount is an int. */
#include "sluice.h"

static int double_(const sl_record *r) {
	sl_value v = {0};
	sl_field(r, "amount", &v);
	int64_t amount = sl_int(v);
	if (amount <= 0) return SL_OK;
	sl_edit *e = sl_edit_begin(r);
	sl_set_int(e, "amount", (int64_t)((uint64_t)amount * 2)); /* wraps as Go's int64 does */
	return sl_edit_emit(e, SL_MAIN);
}

static const sl_plugin plugin = {.name = "double", .kind = SL_KIND_FLAT_MAP, .flat_map = double_};
SLUICE_OPERATOR(plugin)
