package bpf

// The C sources live in c/; bpf2go compiles one object per program and
// generates the Go bindings (the switch's types from xdp_ingress only: the
// other two switch objects share its maps and types; qdisc_monitor, which
// runs outside the switches, has its own map and type).
//
// The compiler, strip tool and flags come from the environment, which
// `make generate` sets from the Makefile's BPF_CLANG, BPF_STRIP and
// BPF_CFLAGS (one place for the toolchain); a bare `go generate` stops at
// the first line saying so instead of compiling with other flags.
//
//go:generate sh -c "[ -n \"$BPF_CLANG\" ] && [ -n \"$BPF_CFLAGS\" ] || { echo 'bpf: run make generate (it sets BPF_CLANG, BPF_STRIP and BPF_CFLAGS)' >&2; exit 1; }"
//go:generate go tool bpf2go -cc $BPF_CLANG -strip $BPF_STRIP -cflags $BPF_CFLAGS -target bpfel -type sw_cfg -type port_cfg -type port_counters -type fifo -type route_key -type route_val -type pointer -type ftl_mode -type ftl_policy -type ftl_route_kind xdpIngress c/xdp_ingress.c
//go:generate go tool bpf2go -cc $BPF_CLANG -strip $BPF_STRIP -cflags $BPF_CFLAGS -target bpfel -no-global-types tcShaped c/tc_shaped.c
//go:generate go tool bpf2go -cc $BPF_CLANG -strip $BPF_STRIP -cflags $BPF_CFLAGS -target bpfel -no-global-types xdpPass c/xdp_pass.c
//go:generate go tool bpf2go -cc $BPF_CLANG -strip $BPF_STRIP -cflags $BPF_CFLAGS -target bpfel -type dq_stats qdiscMonitor c/qdisc_monitor.c
