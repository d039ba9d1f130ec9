/*
 * alloc_test.c: the C SDK's malloc (sluice_alloc.h) run natively over an
 * arena that stands for a wasm memory: size classes, reuse, alignment,
 * realloc keeping contents, calloc zeroing, running out of memory, memory
 * grown by someone else, and a double free trapping. Run by
 * scripts/build-plugins.sh test.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define ARENA (64u << 20)
static _Alignas(65536) unsigned char arena[ARENA];
static uint64_t arena_end;   /* the "memory"'s end, an address in arena */
static size_t arena_limit;   /* how far it may grow */
static unsigned arena_grows; /* memory.grow calls */

static uint64_t fake_end(void) {
	if (!arena_end) arena_end = (uint64_t)(uintptr_t)arena + 65536; /* one page to start */
	return arena_end;
}
static int fake_grow(size_t pages) {
	fake_end();
	if (arena_end + pages * 65536 > (uint64_t)(uintptr_t)arena + arena_limit) return -1;
	arena_end += pages * 65536, arena_grows++;
	return 0;
}

#define SL_ALLOC_BASE (arena + 100) /* not aligned: the allocator aligns it */
#define SL_ALLOC_END() fake_end()
#define SL_ALLOC_GROW(pages) fake_grow(pages)
#include "../sluice_alloc.h"

static int failures;
#define CHECK(cond, ...)                                                  \
	do {                                                              \
		if (!(cond)) {                                            \
			fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);   \
			fprintf(stderr, __VA_ARGS__);                     \
			fprintf(stderr, "\n");                            \
			failures++;                                       \
		}                                                         \
	} while (0)

static void test_classes(void) {
	size_t prev = 0;
	uint32_t prev_c = 0;
	for (size_t n = 1; n <= (1u << 20) + 77; n += n < 5000 ? 1 : 97) {
		size_t size;
		uint32_t c = sl_alloc_class(n, &size);
		CHECK(size >= n, "class of %zu holds %zu", n, size);
		CHECK(size % 16 == 0, "class of %zu: %zu is not a multiple of 16", n, size);
		CHECK(size <= 64 || size * 4 <= n * 5 + 4 * 16, "class of %zu wastes too much: %zu", n, size);
		CHECK(sl_alloc_class_size(c) == size, "class %u: size %zu, class_size %zu", c, size, sl_alloc_class_size(c));
		CHECK(c < SL_ALLOC_CLASSES, "class %u of %zu out of range", c, n);
		CHECK(n == 1 || (c >= prev_c && (c == prev_c) == (size == prev)), "classes of %zu not monotonic", n);
		prev = size, prev_c = c;
	}
	for (int k = 4; k <= 30; k++) { /* a power of two fits its class exactly: the SDK's buffers */
		size_t size;
		sl_alloc_class((size_t)1 << k, &size);
		CHECK(size == (size_t)1 << k, "2^%d gets %zu", k, size);
	}
	size_t size;
	CHECK(sl_alloc_class(SL_ALLOC_MAX, &size) == SL_ALLOC_CLASSES - 1 && size == SL_ALLOC_MAX, "the largest class");
}

static uint8_t pattern(uintptr_t id, size_t i) { return (uint8_t)(id * 131 + i * 7 + 1); }

/* random allocations, checked against their patterns at every step */
static void test_random(void) {
	enum { N = 512 };
	struct {
		uint8_t *p;
		size_t n, align;
		uintptr_t id;
	} live[N] = {{0}};
	uint64_t rng = 42;
	uintptr_t next_id = 1;
	for (int step = 0; step < 200000; step++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		int i = (int)(rng % N);
		size_t n = (size_t)(rng >> 20) % (rng % 17 == 0 ? 70000 : 300);
		if (live[i].p) { /* check, then free or realloc */
			for (size_t j = 0; j < live[i].n; j++)
				if (live[i].p[j] != pattern(live[i].id, j)) {
					CHECK(0, "step %d: block %d byte %zu overwritten", step, i, j);
					return;
				}
			if (rng % 3 == 0) {
				uint8_t *q = sl_alloc_realloc(live[i].p, n);
				CHECK(q && ((uintptr_t)q & 15) == 0, "realloc to %zu", n);
				size_t keep = n < live[i].n ? n : live[i].n;
				for (size_t j = 0; j < keep; j++) CHECK(q[j] == pattern(live[i].id, j), "realloc lost byte %zu", j);
				CHECK(sl_alloc_usable(q) >= n, "usable %zu < %zu", sl_alloc_usable(q), n);
				live[i].p = q, live[i].n = sl_alloc_usable(q), live[i].align = 16; /* realloc keeps 16 */
				for (size_t j = 0; j < live[i].n; j++) q[j] = pattern(live[i].id, j);
			} else {
				sl_alloc_free(live[i].p);
				live[i].p = NULL;
			}
			continue;
		}
		bool zeroed = rng % 5 == 0;
		size_t align = !zeroed && rng % 11 == 0 ? (size_t)32 << (rng % 5) : 16;
		uint8_t *p = zeroed ? sl_alloc_calloc(1, n) : align > 16 ? sl_alloc_aligned(align, n) : sl_alloc(n);
		CHECK(p != NULL, "alloc %zu", n);
		CHECK(((uintptr_t)p & (align - 1)) == 0, "alloc %zu aligned %zu: %p", n, align, (void *)p);
		CHECK((uint64_t)(uintptr_t)p >= (uint64_t)(uintptr_t)SL_ALLOC_BASE && (uint64_t)(uintptr_t)p + n <= arena_end,
		      "block outside the memory");
		if (zeroed)
			for (size_t j = 0; j < n; j++) CHECK(p[j] == 0, "calloc byte %zu not zero", j);
		CHECK(sl_alloc_usable(p) >= n, "usable %zu < %zu", sl_alloc_usable(p), n);
		/* the whole usable size is the block's: fill it all, so that a usable
		 * size reaching into the next block shows as that block's bytes lost */
		live[i].p = p, live[i].n = sl_alloc_usable(p), live[i].align = align, live[i].id = next_id++;
		for (size_t j = 0; j < live[i].n; j++) p[j] = pattern(live[i].id, j);
	}
	for (int i = 0; i < N; i++) sl_alloc_free(live[i].p);
}

static void test_reuse_and_limits(void) {
	void *a = sl_alloc(100), *b = sl_alloc(100);
	CHECK(a != b, "two live blocks share an address");
	sl_alloc_free(a);
	CHECK(sl_alloc(112) == a, "a freed block is not reused for its class"); /* 100 and 112: one class */
	sl_alloc_free(b);

	uint8_t *p = sl_alloc(64);
	memset(p, 7, 64);
	CHECK(sl_alloc_realloc(p, 60) == p, "a smaller realloc moved");
	CHECK(sl_alloc_realloc(p, 64) == p, "a realloc within the class moved");
	CHECK(sl_alloc(SL_ALLOC_MAX + 1) == NULL, "over the largest block");
	CHECK(sl_alloc_calloc((size_t)1 << 40, (size_t)1 << 40) == NULL, "calloc overflow");
	CHECK(sl_alloc_aligned(48, 10) == NULL && sl_alloc_aligned(12, 10) == NULL && sl_alloc_aligned(0, 10) == NULL,
	      "alignment not a power of two");

	/* out of memory: NULL, and realloc leaves the block as it was */
	size_t saved = arena_limit;
	arena_limit = (size_t)(arena_end - (uint64_t)(uintptr_t)arena);
	CHECK(sl_alloc(1 << 20) == NULL, "alloc past the limit");
	CHECK(sl_alloc_realloc(p, 1 << 20) == NULL, "realloc past the limit");
	for (int j = 0; j < 64; j++) CHECK(p[j] == 7, "a failed realloc changed byte %d", j);
	arena_limit = saved;

	/* memory grown by another: the allocator starts after it */
	uint64_t theirs = fake_end();
	arena_end += 3 * 65536; /* someone's sbrk */
	uint8_t *big = sl_alloc(1 << 17);
	CHECK((uint64_t)(uintptr_t)big >= theirs + 3 * 65536, "a block in memory another grew: %p", (void *)big);
	sl_alloc_free(big);
	sl_alloc_free(p);
}

/* a double free and a wild free trap (the host reports a wasm trap) */
static void test_bad_free_traps(void) {
	for (int wild = 0; wild < 2; wild++) {
		pid_t pid = fork();
		if (pid == 0) {
			uint8_t *p = sl_alloc(32);
			if (wild) {
				sl_alloc_free(p + 16);
			} else {
				sl_alloc_free(p);
				sl_alloc_free(p);
			}
			_exit(0); /* not reached */
		}
		int st = 0;
		waitpid(pid, &st, 0);
		CHECK(WIFSIGNALED(st), "%s free did not trap", wild ? "a wild" : "a double");
	}
}

/* memory grown by another between the start (the constructor) and the
 * first allocation is not the heap's either */
static void test_growth_before_first_alloc(void) {
	sl_alloc_start();
	uint64_t theirs = fake_end();
	arena_end += 2 * 65536;
	uint8_t *p = sl_alloc(100000);
	CHECK((uint64_t)(uintptr_t)p >= theirs + 2 * 65536, "the first block is in memory another grew: %p", (void *)p);
	sl_alloc_free(p);
}

int main(void) {
	arena_limit = ARENA;
	test_growth_before_first_alloc();
	test_classes();
	test_random();
	test_reuse_and_limits();
	test_bad_free_traps();
	if (failures) {
		fprintf(stderr, "sluice_alloc: %d failures\n", failures);
		return 1;
	}
	printf("sluice_alloc: ok (%u memory.grow calls)\n", arena_grows);
	return 0;
}
