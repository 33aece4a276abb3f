// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_pass: passes everything. Attached to host-facing peer veths it turns
 * on veth NAPI, which XDP_REDIRECT into that veth needs (KERNEL-NOTES).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("xdp.frags")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}
