/*
 * keys.c - SAMPLE's kernels without communication (see keys.h).
 *
 * One function, the splitmix64 finalizer, serves as the generator's output
 * function and as the key hash (after adding a constant, so that the hash is
 * not the generator's output for the key).
 */
#include "common/keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int keys_parse(int argc, char **argv, struct keys_options *o)
{
    *o = (struct keys_options){.keys = 262144, .seed = 1, .oversample = 64};
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--corrupt") == 0)
            o->corrupt = 1;
        else if (strcmp(argv[i], "--batched") == 0)
            o->batched = 1;
        else if (v && strcmp(argv[i], "--keys") == 0 && ++i)
            o->keys = strtoull(v, NULL, 0);
        else if (v && strcmp(argv[i], "--seed") == 0 && ++i)
            o->seed = strtoull(v, NULL, 0);
        else if (v && strcmp(argv[i], "--oversample") == 0 && ++i)
            o->oversample = (unsigned)strtoul(v, NULL, 0);
        else
            return -1;
    }
    if (o->keys == 0 || o->keys > (1u << 28) || o->oversample == 0 || o->oversample > 4096)
        return -1;
    return 0;
}

uint64_t keys_rng(uint64_t seed, int rank)
{
    return mix64(seed * 0x2545f4914f6cdd1dull + (uint64_t)rank);
}

uint64_t keys_next(uint64_t *state)
{
    return mix64(*state += 0x9e3779b97f4a7c15ull);
}

void keys_generate(uint32_t *keys, size_t n, uint64_t *state)
{
    for (size_t i = 0; i < n; i++)
        keys[i] = (uint32_t)(keys_next(state) >> 32);
}

void keys_pick(const uint32_t *keys, size_t n, uint64_t *state, uint32_t *out, size_t count)
{
    for (size_t i = 0; i < count; i++)
        out[i] = keys[keys_next(state) % n];
}

void keys_splitters(uint32_t *samples, size_t per, unsigned p, uint32_t *split)
{
    size_t total = per * p;
    uint32_t *tmp = malloc((total ? total : 1) * sizeof *tmp);

    if (!tmp) {
        fprintf(stderr, "keys: out of memory for %zu samples\n", total);
        exit(1);
    }
    keys_radix_sort(samples, tmp, total);
    for (unsigned i = 1; i < p; i++)
        split[i - 1] = samples[(size_t)i * per];
    free(tmp);
}

unsigned keys_owner(uint32_t key, const uint32_t *split, unsigned nsplit)
{
    unsigned lo = 0, hi = nsplit;

    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (split[mid] <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void keys_radix_sort(uint32_t *a, uint32_t *tmp, size_t n)
{
    for (int shift = 0; shift < 32; shift += 8) {
        size_t count[257] = {0};
        for (size_t i = 0; i < n; i++)
            count[((a[i] >> shift) & 255) + 1]++;
        for (int b = 0; b < 256; b++)
            count[b + 1] += count[b];
        for (size_t i = 0; i < n; i++)
            tmp[count[(a[i] >> shift) & 255]++] = a[i];
        uint32_t *swap = a;
        a = tmp;
        tmp = swap;
    }
    /* Four passes: the result is back in the caller's a. */
}

struct keys_hash keys_hash(const uint32_t *k, size_t n)
{
    struct keys_hash h = {n, 0, 0};

    for (size_t i = 0; i < n; i++) {
        uint64_t m = mix64(k[i] + 0x632be59bd9b4e019ull);
        h.sum += m;
        h.xor ^= m;
    }
    return h;
}

int keys_sorted(const uint32_t *a, size_t n)
{
    int ok = 1;

    for (size_t i = 1; i < n; i++)
        ok &= a[i - 1] <= a[i];
    return ok;
}

void keys_summary(const uint32_t *a, size_t n, uint64_t info[3])
{
    info[0] = n;
    info[1] = n ? a[0] : 0;
    info[2] = n ? a[n - 1] : 0;
}

int keys_check_order(const uint64_t *info, int p, const char *prog)
{
    uint64_t last = 0;
    int seen = 0, ok = 1;

    for (int r = 0; r < p; r++) {
        if (info[r * 3] == 0)
            continue;
        if (seen && info[r * 3 + 1] < last) {
            fprintf(stderr, "%s: rank %d starts below rank %d's end\n", prog, r, r - 1);
            ok = 0;
        }
        last = info[r * 3 + 2];
        seen = 1;
    }
    return ok;
}

int keys_check_total(uint64_t count, uint64_t want, uint64_t dsum, uint64_t dxor, int loud,
                     const char *prog)
{
    if (count == want && dsum == 0 && dxor == 0)
        return 1;
    if (loud)
        fprintf(stderr, "%s: keys lost or changed: %llu of %llu, hash %s\n", prog,
                (unsigned long long)count, (unsigned long long)want,
                dsum || dxor ? "differs" : "equal");
    return 0;
}
