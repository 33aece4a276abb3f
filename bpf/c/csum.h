/* SPDX-License-Identifier: GPL-2.0 */
/*
 * csum.h: incremental Internet checksum update (RFC 1624, eqn. 3:
 * HC' = ~(~HC + ~m + m')). One's complement sums do not depend on byte
 * order, so header words are used exactly as they sit in memory.
 */
#pragma once

#include <linux/types.h>

static __always_inline __u16 csum_fold32(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

/* Replace 16-bit word old by new under checksum *check. */
static __always_inline void csum_replace_u16(__u16 *check, __u16 old, __u16 new)
{
	__u32 sum = (__u16)~*check;

	sum += (__u16)~old;
	sum += new;
	*check = ~csum_fold32(sum);
}
