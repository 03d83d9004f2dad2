// SPDX-License-Identifier: MIT
/*
 * tests/programs/sizes_new.cc - operator new of impossible sizes (issue 14
 * item 2), through libheapscope (linked): every throwing form throws
 * std::bad_alloc after calling the new-handler once per attempt (the
 * handler here gives up on its first call by uninstalling itself), every
 * nothrow form returns nullptr.  The sizes come on the command line
 * (test_sizes list: sizes the kernel refuses).  Prints the time of each
 * call; exit 0 when every check passed.
 */
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>

static int failures;
static int handler_calls;

static void give_up()
{
	handler_calls++;
	std::set_new_handler(nullptr); // the retry then throws
}

static double since_us(std::chrono::steady_clock::time_point t0)
{
	return std::chrono::duration<double, std::micro>(
		       std::chrono::steady_clock::now() - t0)
		.count();
}

static void *volatile sink;

template <typename F>
static void expect_throw(const char *what, size_t n, F f)
{
	std::set_new_handler(give_up);
	handler_calls = 0;
	bool thrown = false;
	auto t0 = std::chrono::steady_clock::now();
	try {
		sink = f(n);
	} catch (const std::bad_alloc &) {
		thrown = true;
	}
	double us = since_us(t0);
	std::printf("%-26s %20zu -> %-9s handler x%d %9.1f us\n", what, n,
		    thrown ? "bad_alloc" : "RETURNED", handler_calls, us);
	if (!thrown || handler_calls != 1) {
		std::printf("FAIL %s(%zu): thrown %d, new-handler called %d "
			    "times (want 1)\n",
			    what, n, thrown, handler_calls);
		failures++;
	}
	std::set_new_handler(nullptr);
}

template <typename F>
static void expect_null(const char *what, size_t n, F f)
{
	auto t0 = std::chrono::steady_clock::now();
	void *p = f(n);
	double us = since_us(t0);
	std::printf("%-26s %20zu -> %-9s %21.1f us\n", what, n,
		    p ? "NOT NULL" : "nullptr", us);
	if (p) {
		std::printf("FAIL %s(%zu) returned %p\n", what, n, p);
		failures++;
	}
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		volatile size_t n = std::strtoull(argv[i], nullptr, 10);
		expect_throw("operator new", n,
			     [](size_t k) { return ::operator new(k); });
		expect_throw("operator new[]", n,
			     [](size_t k) { return ::operator new[](k); });
		expect_throw("operator new(align 4096)", n, [](size_t k) {
			return ::operator new(k, std::align_val_t(4096));
		});
		expect_null("operator new(nothrow)", n, [](size_t k) {
			return ::operator new(k, std::nothrow);
		});
		expect_null("operator new[](nothrow)", n, [](size_t k) {
			return ::operator new[](k, std::nothrow);
		});
		expect_null("new(align 64, nothrow)", n, [](size_t k) {
			return ::operator new(k, std::align_val_t(64),
					      std::nothrow);
		});
	}
	// still allocating
	for (int i = 0; i < 1000; i++)
		delete[] new char[(size_t)i * 37 + 1];
	return failures ? 1 : 0;
}
