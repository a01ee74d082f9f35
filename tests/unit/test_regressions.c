/*
 * Regression tests from fuzzing (tests/fuzz/), in the plain build: no
 * clang or libFuzzer needed, and the sanitizer build of `make check`
 * runs them under ASan and UBSan.
 *
 * The two fuzz targets are compiled in here with their entry points
 * renamed, so every input goes through exactly the checks the fuzzer
 * applies (the response oracle of tests/fuzz/fuzz_common.h; the zone
 * invariants of fuzz_zone_load.c).  A failed check aborts.
 *
 *   - every committed seed of tests/fuzz/corpus/query and corpus/zone;
 *   - each input that once made a target fail, as its own test.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define LLVMFuzzerInitialize fuzz_query_init
#define LLVMFuzzerTestOneInput fuzz_query_one
#include "../fuzz/fuzz_query.c"
#undef LLVMFuzzerInitialize
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerInitialize fuzz_zone_init
#define LLVMFuzzerTestOneInput fuzz_zone_one
#include "../fuzz/fuzz_zone_load.c"
#undef LLVMFuzzerInitialize
#undef LLVMFuzzerTestOneInput

typedef int (*one_input_fn)(const uint8_t *data, size_t size);

/* Feed every file of tests/fuzz/corpus/<sub> to fn; returns how many. */
static size_t replay_corpus(const char *sub, one_input_fn fn)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/%s", APEX_SRCDIR, sub);
	DIR *d = opendir(path);
	assert_non_null(d);
	size_t count = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char file[8192];
		snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
		FILE *fp = fopen(file, "rb");
		assert_non_null(fp);
		static uint8_t data[1 << 16];
		size_t size = fread(data, 1, sizeof(data), fp);
		assert_int_equal(ferror(fp), 0);
		fclose(fp);
		/* An exact-size heap copy, as libFuzzer passes inputs: ASan
		 * sees a read past the end. */
		uint8_t *copy = malloc(size ? size : 1);
		assert_non_null(copy);
		memcpy(copy, data, size);
		assert_int_equal(fn(copy, size), 0);
		free(copy);
		count++;
	}
	closedir(d);
	return count;
}

static void test_query_corpus(void **state)
{
	(void)state;
	/* gen_corpus.py writes about 600; fewer means the corpus is missing. */
	assert_true(replay_corpus("query", fuzz_query_one) >= 500);
}

static void test_zone_corpus(void **state)
{
	(void)state;
	assert_true(replay_corpus("zone", fuzz_zone_one) >= 20);
}

static int setup(void **state)
{
	(void)state;
	/* fuzz_common.h finds the zones through $APEX_SRCDIR. */
	setenv("APEX_SRCDIR", APEX_SRCDIR, 0);
	fuzz_query_init(NULL, NULL);
	fuzz_zone_init(NULL, NULL);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_corpus),
		cmocka_unit_test(test_zone_corpus),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
