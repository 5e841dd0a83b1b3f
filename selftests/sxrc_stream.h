/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc: the byte stream a transfer sends and its receiver checks, the
 * same everywhere: the wire selftests (sxrc_wire_pair.h) and the
 * two-host transfer program tools/sxrc_wire_xfer.c.
 *
 * Byte @off of the stream seeded by @seed is byte (off & 7), little
 * endian, of the 64-bit word sxrc_stream_word(off >> 3, seed): cheap to
 * make at any offset, and with no period a transfer could reach.
 *
 * Header only, everything static inline: it needs nothing but libc, and
 * a program with kselftest_harness.h (which defines symbols of its own)
 * may include it as well as one without.
 */
#ifndef SXRC_STREAM_H
#define SXRC_STREAM_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A 64-bit mixer (splitmix64's finaliser). */
static inline uint64_t sxrc_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The word that holds stream bytes 8 * @i to 8 * @i + 7, in host order. */
static inline uint64_t sxrc_stream_word(uint64_t i, uint64_t seed)
{
	return sxrc_mix64(i * 0x9e3779b97f4a7c15ULL + seed);
}

/* Stream byte @off. */
static inline uint8_t sxrc_stream_byte(uint64_t off, uint64_t seed)
{
	return sxrc_stream_word(off >> 3, seed) >> ((off & 7) * 8);
}

/* @len stream bytes from offset @off into @p. */
static inline void sxrc_stream_fill(uint8_t *p, uint64_t off, size_t len,
				    uint64_t seed)
{
	size_t i = 0;

	for (; i < len && ((off + i) & 7); i++)
		p[i] = sxrc_stream_byte(off + i, seed);
	for (; i + 8 <= len; i += 8) {
		uint64_t w = htole64(sxrc_stream_word((off + i) >> 3, seed));

		memcpy(p + i, &w, 8);
	}
	for (; i < len; i++)
		p[i] = sxrc_stream_byte(off + i, seed);
}

/*
 * The index of the first of the @len bytes at @p that is not the
 * stream's from offset @off, or -1.
 */
static inline long sxrc_stream_check(const uint8_t *p, uint64_t off,
				     size_t len, uint64_t seed)
{
	size_t i = 0;

	for (; i < len && ((off + i) & 7); i++)
		if (p[i] != sxrc_stream_byte(off + i, seed))
			return i;
	for (; i + 8 <= len; i += 8) {
		uint64_t w = htole64(sxrc_stream_word((off + i) >> 3, seed));

		if (memcmp(p + i, &w, 8))
			break;
	}
	for (; i < len; i++)
		if (p[i] != sxrc_stream_byte(off + i, seed))
			return i;
	return -1;
}

#endif /* SXRC_STREAM_H */
