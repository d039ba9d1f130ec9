/*
 * sluice.h: the C SDK for sluice plugins (ABI v1, see abi/doc.go and abi/abi.go).
 *
 * A plugin defines one `sl_plugin` with its callbacks and registers it with
 * SLUICE_OPERATOR(p) or SLUICE_PARTITIONER(p); the SDK (sluice.c) implements
 * every export of the ABI: it splits batches into records, calls the
 * callbacks, buffers the output per port, emits it once per port per batch
 * and turns failures into a status plus an error text.
 *
 * Build (one command, the SDK and the plugin together):
 *   clang --target=wasm32-wasi -O2 -flto -mbulk-memory -mexec-model=reactor \
 *     -Wl,--stack-first -Wl,--strip-all -I sdk/c sdk/c/sluice.c op.c -o op.wasm
 *
 * Views (sl_value, sl_str) point into memory the SDK owns: a record's views
 * are valid during its callback; the config's views for the instance's life.
 */
#ifndef SLUICE_H
#define SLUICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- statuses (abi.Status) --------------------------------------------- */

enum {
	SL_OK = 0,
	SL_MALFORMED = -1,     /* the input could not be decoded */
	SL_OUT_OF_MEMORY = -2, /* the guest could not allocate */
	SL_USER = -3,          /* the user's function failed */
	SL_UNSUPPORTED = -4,   /* the plugin does not implement this call */
	SL_STATE = -5,         /* keyed state misuse */
	SL_CONFIG = -6,        /* the operator configuration is invalid */
	SL_HOST = -7,          /* the host refused a host call */
	SL_LIMIT = -8,         /* a limit was reached (output bytes per call) */
};

#define SL_MAX_DEPTH 64   /* abi.MaxDepth */
#define SL_MAX_OUTPUTS 15 /* side outputs per plugin */

/* ---- reading msgpack: zero-copy views --------------------------------- */

typedef enum {
	SL_T_INVALID, SL_T_NIL, SL_T_BOOL, SL_T_INT, SL_T_FLOAT,
	SL_T_STR, SL_T_BIN, SL_T_ARRAY, SL_T_MAP, SL_T_EXT,
} sl_type;

/* The raw msgpack bytes of one value. {NULL, 0} means absent (and is how a
 * nil envelope key is given). */
typedef struct { const uint8_t *p; uint32_t n; } sl_value;

/* A string's bytes (UTF-8 by convention, not checked). */
typedef struct { const uint8_t *p; uint32_t n; } sl_str;

sl_type sl_type_of(sl_value v);
bool sl_is_nil(sl_value v);
bool sl_as_int(sl_value v, int64_t *out);    /* any integer width; false if a uint64 > INT64_MAX */
bool sl_as_float(sl_value v, double *out);   /* float32, float64 or an integer */
bool sl_as_bool(sl_value v, bool *out);
bool sl_as_str(sl_value v, sl_str *out);
bool sl_as_bin(sl_value v, sl_str *out);
bool sl_str_eq(sl_str s, const char *cstr);

/* Lenient getters with the Go SDK's semantics (sdk/go Value.Int, .Float):
 * 0 when missing or of another type; sl_int truncates a float toward zero,
 * saturating (NaN is 0), as a Go plugin compiled to wasm does. */
int64_t sl_int(sl_value v);
double sl_float(sl_value v);

/* sl_skip returns the offset just past the value at b[off], or -1 when it is
 * malformed (truncated, invalid byte, nested deeper than SL_MAX_DEPTH). */
int64_t sl_skip(const uint8_t *b, uint32_t n, uint32_t off);

/* Iterating arrays and maps. Values the SDK hands out are already checked,
 * so the iterators fail only on hand-made bytes. */
typedef struct { const uint8_t *p, *end; uint32_t left; } sl_iter;
bool sl_array_iter(sl_value arr, sl_iter *it);                   /* false if not an array */
bool sl_array_next(sl_iter *it, sl_value *elem);                 /* false at the end */
bool sl_map_iter(sl_value map, sl_iter *it);                     /* false if not a map */
bool sl_map_next(sl_iter *it, sl_value *key, sl_value *val);     /* false at the end */

/* The value of the top-level string key `name` of a map (no copy). */
bool sl_map_get(sl_value map, const char *name, sl_value *out);
bool sl_map_getn(sl_value map, const uint8_t *name, uint32_t len, sl_value *out);

/* ---- records ------------------------------------------------------------ */

/* One envelope [event_time|nil, key|nil, value]; views into the batch. */
typedef struct {
	sl_value raw;     /* the whole envelope */
	bool has_time;    /* event time present */
	int64_t time;     /* ms since the Unix epoch */
	sl_value key;     /* raw msgpack key; {NULL, 0} when nil */
	sl_value value;   /* the record, by convention a map str -> any */
} sl_record;

/* Field lookup on the record's value map. The typed ones are strict: they
 * return false when the field is missing or of another msgpack type (a
 * float for sl_field_int); sl_int and sl_float over sl_field's value are
 * the lenient getters of the other SDKs (a float truncates, a missing field
 * is 0). */
bool sl_field(const sl_record *r, const char *name, sl_value *out);
bool sl_field_int(const sl_record *r, const char *name, int64_t *out);
bool sl_field_float(const sl_record *r, const char *name, double *out);
bool sl_field_str(const sl_record *r, const char *name, sl_str *out);
bool sl_field_bool(const sl_record *r, const char *name, bool *out);

/* ---- writing msgpack (smallest encodings, as abi/append.go) ------------ */

/* A growable buffer. Allocation failure is sticky in `oom`; the SDK turns it
 * into SL_OUT_OF_MEMORY when the call ends. */
typedef struct { uint8_t *p; uint32_t len, cap; bool oom; } sl_buf;

uint8_t *sl_buf_grow(sl_buf *b, uint32_t n); /* appends n bytes, returns them (NULL on oom) */
void sl_put_raw(sl_buf *b, const void *p, uint32_t n);
void sl_put_nil(sl_buf *b);
void sl_put_bool(sl_buf *b, bool v);
void sl_put_int(sl_buf *b, int64_t v);
void sl_put_float(sl_buf *b, double v); /* always float64 */
void sl_put_str(sl_buf *b, const void *s, uint32_t n);
void sl_put_cstr(sl_buf *b, const char *s);
void sl_put_bin(sl_buf *b, const void *p, uint32_t n);
void sl_put_array(sl_buf *b, uint32_t n);
void sl_put_map(sl_buf *b, uint32_t n);

/* ---- output --------------------------------------------------------------
 * An output handle is SL_MAIN or 1 + the index of a tag in
 * sl_plugin.outputs. Records go to a per-port buffer flushed with one emit
 * per port at the end of the call (or when it passes 64 KiB). Records sent
 * to a side output no downstream consumes are dropped. Each returns a
 * status (SL_OK, or the failure to return from the callback). */
#define SL_MAIN 0
#define SL_NO_OUTPUT (-1) /* sl_output of a tag the plugin does not declare */

/* sl_output is the handle of the side output tag, one of sl_plugin.outputs
 * (as sdk/go's EmitTo names it): sl_emit(sl_output("late"), r). For a tag
 * the plugin does not declare it is SL_NO_OUTPUT, which every emit refuses
 * with the tags the plugin has. It compares the tags: keep the handle
 * (in open, or a static) where a record loop would look it up often. */
int sl_output(const char *tag);

int sl_emit(int out, const sl_record *r);                     /* r unchanged */
int sl_emit_value(int out, const sl_record *r, sl_value v);   /* r's time and key, value v */
/* Starts a new record stamped with r's event time and no key, as sdk/go's
 * NewRecord (no time when r is NULL): write exactly one value to the
 * returned buffer with sl_put_*, then sl_end. sl_begin_with sets both. */
sl_buf *sl_begin(int out, const sl_record *r);
sl_buf *sl_begin_with(int out, bool has_time, int64_t time, sl_value key);
int sl_end(int out);

/* Editing a record: typed setters that rebuild the value map. Existing
 * fields keep their order, new fields are appended in the order they are
 * first set; setting a field twice keeps the last value. Field names are
 * not copied: they must outlive the edit (literals, config views). */
typedef struct sl_edit sl_edit;
sl_edit *sl_edit_begin(const sl_record *r);  /* for flat_map/process; map gets one ready */
void sl_set_raw(sl_edit *e, const char *name, sl_value v);
void sl_set_rawn(sl_edit *e, const uint8_t *name, uint32_t len, sl_value v);
void sl_set_nil(sl_edit *e, const char *name);
void sl_set_bool(sl_edit *e, const char *name, bool v);
void sl_set_int(sl_edit *e, const char *name, int64_t v);
void sl_set_float(sl_edit *e, const char *name, double v);
void sl_set_str(sl_edit *e, const char *name, const void *s, uint32_t n);
void sl_set_cstr(sl_edit *e, const char *name, const char *s);
void sl_unset(sl_edit *e, const char *name);
int sl_edit_emit(sl_edit *e, int out); /* SL_MALFORMED if the value is not a map */

/* ---- keyed state (host-managed, under the current record's key) ------- */

/* 1 and *val (valid until the next sl_state_get) when found, 0 when absent,
 * a negative status on failure (SL_STATE for a record without a key). */
int sl_state_get(int32_t slot, sl_str *val);
int sl_state_put(int32_t slot, const void *p, uint32_t n);
int sl_state_del(int32_t slot);
/* The same with an explicit key (raw msgpack), e.g. from close: a key this
 * subtask received (the current record's, or one it saw earlier). Keyed
 * state is scoped to the keys a subtask owns, as Flink scopes it to the
 * current key: another key's state is refused (SL_STATE), or reachable only
 * at the parallelisms that happen to put its key group here. */
int sl_state_get_key(int32_t slot, sl_value key, sl_str *val);
int sl_state_put_key(int32_t slot, sl_value key, const void *p, uint32_t n);
int sl_state_del_key(int32_t slot, sl_value key);

/* ---- list and map state (Flink's ListState and MapState) ----------------
 * Under the current record's key, as sl_state_get; a slot holds one kind
 * of state (value, list or map): the host refuses a slot used as two.
 * Elements and values are bytes (put msgpack there, e.g. sl_put_int into
 * an sl_buf); map user keys are bytes too (a string's UTF-8).
 *
 * sl_liststate_get and sl_mapstate_entries return 1 and a wire view (valid until the
 * next list or map read), 0 when there is none, a negative status on
 * failure; walk the view with sl_liststate_next / sl_mapstate_next (1 per item, 0 at
 * the end). sl_mapstate_get returns 1 and the value, 0 when absent.
 * sl_liststate_update replaces the list with the elements of a wire built with
 * sl_wire_put (n 0 clears it). sl_mapstate_contains returns 1 or 0. */
int sl_liststate_get(int32_t slot, sl_str *wire);
int sl_liststate_next(sl_str *wire, sl_str *elem);
int sl_liststate_add(int32_t slot, const void *p, uint32_t n);
int sl_liststate_update(int32_t slot, const void *wire, uint32_t n);
void sl_wire_put(sl_buf *b, const void *p, uint32_t n);
int sl_mapstate_get(int32_t slot, const void *ukey, uint32_t ukn, sl_str *val);
int sl_mapstate_put(int32_t slot, const void *ukey, uint32_t ukn, const void *p, uint32_t n);
int sl_mapstate_del(int32_t slot, const void *ukey, uint32_t ukn);
int sl_mapstate_contains(int32_t slot, const void *ukey, uint32_t ukn);
int sl_mapstate_entries(int32_t slot, sl_str *wire);
int sl_mapstate_next(sl_str *wire, sl_str *key, sl_str *val);
/* sl_state_clear removes the slot's state under the key, whatever its kind. */
int sl_state_clear(int32_t slot);

/* ---- timers (Flink's TimerService, abi/timers.go) -------------------------
 * For the current record's key (in on_timer: the timer's), or an explicit
 * key with the *_key variants. One timer per (kind, key, time): registering
 * it again does nothing, deleting one that is not there is no error. An
 * event-time timer fires once the watermark reaches its time; the plugin's
 * on_timer callback gets it. SL_STATE on an unkeyed operator. */
#define SL_EVENT_TIME 0
#define SL_PROCESSING_TIME 1
int sl_timer_register(int32_t kind, int64_t ts);
int sl_timer_delete(int32_t kind, int64_t ts);
int sl_timer_register_key(int32_t kind, sl_value key, int64_t ts);
int sl_timer_delete_key(int32_t kind, sl_value key, int64_t ts);
int64_t sl_current_watermark(void);       /* INT64_MIN before the first */
int64_t sl_current_processing_time(void); /* ms: the real clock when granted clock, else the host's deterministic one */

/* ---- config ----------------------------------------------------------------
 * Typed getters for the config open receives, as the Go SDK's: the value of
 * the top-level key name, or def when the key is missing or nil. An integer
 * takes a whole float and a numeric string, a float an integer, a boolean
 * "true" and "false", a string an integer, a whole float or a boolean
 * formatted (the SDK formats no fractions). A value of
 * another type returns def and records "config NAME: want T, got V": open
 * then fails with SL_CONFIG and that text once the callback returns SL_OK
 * (the host points at NAME's line in the pipeline file). */
int64_t sl_config_int(sl_value config, const char *name, int64_t def);
double sl_config_float(sl_value config, const char *name, double def);
bool sl_config_bool(sl_value config, const char *name, bool def);
sl_str sl_config_str(sl_value config, const char *name, const char *def); /* a view, valid for the instance's life; call in open (a formatted number is allocated) */

/* ---- errors --------------------------------------------------------------
 * Sends msg (and detail bytes appended) as the call's error text and returns
 * status, so that `return sl_fail(SL_USER, "no amount");` reads naturally. */
int sl_fail(int status, const char *msg);
int sl_failn(int status, const char *msg, const void *detail, uint32_t n);

/* ---- text and keys as Go sees them --------------------------------------
 * So that a C plugin matches a Go one byte for byte: UTF-8 as Go's
 * unicode/utf8 reads it (an invalid byte is U+FFFD of size 1), Go's Unicode
 * tables (sluice_unicode.h, generated from Go) and abi.KeyHash. */

#define SL_RUNE_ERROR 0xFFFDu

uint32_t sl_decode_rune(const uint8_t *p, uint32_t n, uint32_t *size);      /* utf8.DecodeRune */
uint32_t sl_decode_last_rune(const uint8_t *p, uint32_t n, uint32_t *size); /* utf8.DecodeLastRune */
void sl_put_rune(sl_buf *b, uint32_t r); /* utf8.AppendRune: raw UTF-8, no msgpack header */
bool sl_is_space(uint32_t r);            /* unicode.IsSpace */
bool sl_is_punct(uint32_t r);            /* unicode.IsPunct */
uint32_t sl_to_lower(uint32_t r);        /* unicode.ToLower */

/* Java's String.hashCode over the UTF-16 code units of UTF-8 bytes (invalid
 * bytes count as U+FFFD), as abi.StringHash: Flink's hash of a string key. */
int32_t sl_java_string_hash(sl_str s);

/* abi.KeyHash: Java's hashCode of a key (string, int, float, bool, or a
 * non-empty array of them), Flink's partitioning hash. NULL and *hash set,
 * or why the key has no hash (nil, a map, binary...). */
const char *sl_key_hash(sl_value key, int32_t *hash);

/* ---- the plugin ---------------------------------------------------------- */

typedef enum {
	SL_KIND_MAP, SL_KIND_FILTER, SL_KIND_FLAT_MAP, SL_KIND_PROCESS, SL_KIND_PARTITIONER,
	/* a keyed reduce (Flink's KeyedStream.reduce), describe says "reduce":
	 * its process callback (input port 0 only) keeps the key's accumulator in
	 * keyed state (sl_state_get/put) and emits the running result; set keyed */
	SL_KIND_REDUCE,
	/* a process-window function (Flink's ProcessWindowFunction), describe
	 * says "process-window": when a window fires, its process callback gets
	 * each of the window's records in arrival order, sl_window() the
	 * window, and then window_end is called once: it emits the window's
	 * output (maps; the host adds the window's bounds, key and time). The
	 * records' bytes stay valid until window_end returns; the sl_record a
	 * callback gets does not (copy the struct to keep one) */
	SL_KIND_PROCESS_WINDOW,
} sl_kind;

/* The window a process-window call is for: its bounds in epoch ms (end
 * exclusive) and its key ({NULL, 0} for a window-all). */
typedef struct {
	int64_t start, end;
	sl_value key;
	uint32_t index; /* in process: the record's place in the window, 0 for the first */
} sl_window_info;

/* The window of the current process-window call; NULL outside one. */
const sl_window_info *sl_window(void);

typedef struct {
	int32_t subtask, parallelism, max_parallelism;
} sl_context;

/* Fill in the name, the kind and that kind's callback; the rest is optional.
 * Callbacks return SL_OK or a negative status (set its text with sl_fail). */
typedef struct {
	const char *name;
	sl_kind kind;
	const char *const *outputs; /* side-output tags, NULL-terminated, or NULL */
	bool keyed;                 /* uses keyed state (reported by describe) */
	int (*open)(const sl_context *ctx, sl_value config); /* config: a map */
	int (*close)(void);                                  /* may emit final records */
	int (*filter)(const sl_record *in);                  /* 1 keep, 0 drop */
	int (*map)(const sl_record *in, sl_edit *out);       /* edits, the SDK emits */
	int (*flat_map)(const sl_record *in);                /* emits 0..n records */
	int (*process)(int32_t port, const sl_record *in);   /* emits, side outputs, state; also a reduce's */
	int (*partition)(sl_value key, int32_t n, int32_t *channel);
	/* Operator state (abi.ExportSnapshot), optional, both or neither: what the
	 * operator keeps in its own variables, checkpointed. snapshot appends the
	 * state's bytes to out (sl_put_raw) without changing it; restore gets such
	 * bytes back after open and before the first record when the job starts
	 * from a checkpoint, once per snapshot the subtask is given (several or
	 * none after a rescale: it merges them). Without them the SDK answers
	 * SL_UNSUPPORTED and the host checkpoints no operator state. */
	int (*snapshot)(sl_buf *out);
	int (*restore)(const uint8_t *p, uint32_t n);
	/* A process-window's end of a window's records: emits its output. */
	int (*window_end)(const sl_window_info *w);
	/* A timer fired (kind SL_EVENT_TIME or SL_PROCESSING_TIME, at ts): timer
	 * is a record with the timer's key, no value, and time ts for an
	 * event-time timer, so sl_begin(out, timer) stamps it as Flink does and
	 * sl_state_get works under its key. Register with SLUICE_ON_TIMER(p)
	 * after SLUICE_OPERATOR(p). */
	int (*on_timer)(int32_t kind, int64_t ts, const sl_record *timer);
} sl_plugin;

/* The context of the open call, valid for the instance's life. */
const sl_context *sl_ctx(void);

/* The SDK's implementations behind the exports (callable natively in tests). */
int32_t sl__open(const sl_plugin *p, const uint8_t *cfg, uint32_t n, int32_t subtask, int32_t par, int32_t maxpar);
int32_t sl__process(const sl_plugin *p, int32_t port, const uint8_t *b, uint32_t n, int32_t count);
int32_t sl__close(const sl_plugin *p);
int32_t sl__partition(const sl_plugin *p, const uint8_t *b, uint32_t n, int32_t count, int32_t parts);
int32_t sl__describe(const sl_plugin *p);
int32_t sl__snapshot(const sl_plugin *p);
int32_t sl__restore(const sl_plugin *p, const uint8_t *b, uint32_t n);
int32_t sl__on_timer(const sl_plugin *p, int32_t kind, int64_t ts, const uint8_t *key, uint32_t n);
uint8_t *sl__buffer(uint32_t size);
void sl__reset(void); /* tests: forget the open instance */

#ifdef __wasm__
#define SL__EXPORT(name) __attribute__((export_name(name)))
#define SL__PTR(x) ((uint8_t *)(uintptr_t)(x))
#define SL__COMMON_EXPORTS(P) \
	SL__EXPORT("sluice_abi_v1") void sluice_abi_v1(void) {} \
	SL__EXPORT("sluice_buffer") int32_t sluice_buffer(int32_t size) { \
		return (int32_t)(uintptr_t)sl__buffer((uint32_t)size); } \
	SL__EXPORT("sluice_open") int32_t sluice_open(int32_t ptr, int32_t len, int32_t st, int32_t par, int32_t maxpar) { \
		return sl__open(&(P), SL__PTR(ptr), (uint32_t)len, st, par, maxpar); } \
	SL__EXPORT("sluice_describe") int32_t sluice_describe(void) { return sl__describe(&(P)); }
/* Registers an operator (map, filter, flat_map, process). */
#define SLUICE_OPERATOR(P) \
	SL__COMMON_EXPORTS(P) \
	SL__EXPORT("sluice_process") int32_t sluice_process(int32_t port, int32_t ptr, int32_t len, int32_t count) { \
		return sl__process(&(P), port, SL__PTR(ptr), (uint32_t)len, count); } \
	SL__EXPORT("sluice_close") int32_t sluice_close(void) { return sl__close(&(P)); } \
	SL__EXPORT("sluice_snapshot") int32_t sluice_snapshot(void) { return sl__snapshot(&(P)); } \
	SL__EXPORT("sluice_restore") int32_t sluice_restore(int32_t ptr, int32_t len) { \
		return sl__restore(&(P), SL__PTR(ptr), (uint32_t)len); }
/* Exports sluice_on_timer for P's on_timer, after SLUICE_OPERATOR(P). */
#define SLUICE_ON_TIMER(P) \
	SL__EXPORT("sluice_on_timer") int32_t sluice_on_timer(int32_t kind, int64_t ts, int32_t ptr, int32_t len) { \
		return sl__on_timer(&(P), kind, ts, SL__PTR(ptr), (uint32_t)len); }
/* Registers a custom partitioner. */
#define SLUICE_PARTITIONER(P) \
	SL__COMMON_EXPORTS(P) \
	SL__EXPORT("sluice_partition") int32_t sluice_partition(int32_t ptr, int32_t len, int32_t count, int32_t n) { \
		return sl__partition(&(P), SL__PTR(ptr), (uint32_t)len, count, n); }
#else /* native builds (tests) call sl__* directly */
#define SLUICE_OPERATOR(P)
#define SLUICE_ON_TIMER(P)
#define SLUICE_PARTITIONER(P)
#endif

#ifdef __cplusplus
}
#endif
#endif /* SLUICE_H */
