// SPDX-License-Identifier: MIT
// tests/programs/cxx_containers.cc - a deterministic C++ workload for the
// LD_PRELOAD comparison test: std containers, strings, shared_ptr,
// over-aligned new, nothrow new, bad_alloc, and threads.  Prints a digest
// that must be identical with and without libheapscope preloaded.
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

struct alignas(128) Wide {
	std::uint64_t v[16];
};

static std::uint64_t work(unsigned seed)
{
	std::uint64_t h = seed;
	std::map<int, std::string> m;
	std::unordered_map<std::string, std::vector<int>> u;
	std::vector<std::shared_ptr<std::string>> sp;
	for (int i = 0; i < 20000; i++) {
		std::string k = "key" + std::to_string((i * 7919 + seed) % 5000);
		m[i % 3000] = k + std::string(i % 200, 'x');
		u[k].push_back(i);
		if (i % 5 == 0)
			sp.push_back(std::make_shared<std::string>(k));
		if (i % 7 == 0)
			m.erase((i * 13) % 3000);
	}
	for (auto &kv : m)
		h = h * 31 + kv.second.size();
	for (auto &kv : u)
		h += kv.second.size() * kv.first.size();
	for (auto &p : sp)
		h ^= p->size();
	std::vector<std::unique_ptr<Wide>> w;
	for (int i = 0; i < 1000; i++) {
		w.emplace_back(new Wide());
		if (reinterpret_cast<std::uintptr_t>(w.back().get()) % 128)
			h = 0xbad;
		w.back()->v[i % 16] = i;
	}
	return h;
}

int main()
{
	std::uint64_t results[4] = {};
	std::vector<std::thread> ts;
	for (unsigned t = 0; t < 4; t++)
		ts.emplace_back([t, &results] { results[t] = work(t); });
	for (auto &t : ts)
		t.join();
	for (unsigned t = 0; t < 4; t++)
		std::printf("thread %u digest %llx\n", t,
			    (unsigned long long)results[t]);

	volatile std::size_t huge = (std::size_t)1 << 62;
	char *none = new (std::nothrow) char[huge];
	std::printf("nothrow huge: %s\n", none ? "non-null" : "null");
	try {
		volatile std::size_t n = (std::size_t)1 << 62;
		char *p = new char[n];
		std::printf("huge new returned %p\n", (void *)p);
	} catch (const std::bad_alloc &) {
		std::printf("bad_alloc caught\n");
	}
	int *arr = new int[1000]();
	long sum = 0;
	for (int i = 0; i < 1000; i++)
		sum += arr[i];
	delete[] arr;
	std::printf("sum %ld\n", sum);
	return 0;
}
