package bpf

// The C sources live in c/; bpf2go compiles one object per program and
// generates the Go bindings (the switch's types from xdp_ingress only: the
// other two switch objects share its maps and types; qdisc_monitor, which
// runs outside the switches, has its own map and type).
//go:generate go tool bpf2go -cc clang-19 -strip llvm-strip-19 -cflags "-O2 -g -Wall -Werror -mcpu=v3 -I/usr/include/x86_64-linux-gnu" -target bpfel -type sw_cfg -type port_cfg -type port_counters -type fifo -type route_key -type route_val -type pointer -type ftl_mode -type ftl_policy -type ftl_route_kind xdpIngress c/xdp_ingress.c
//go:generate go tool bpf2go -cc clang-19 -strip llvm-strip-19 -cflags "-O2 -g -Wall -Werror -mcpu=v3 -I/usr/include/x86_64-linux-gnu" -target bpfel -no-global-types tcShaped c/tc_shaped.c
//go:generate go tool bpf2go -cc clang-19 -strip llvm-strip-19 -cflags "-O2 -g -Wall -Werror -mcpu=v3 -I/usr/include/x86_64-linux-gnu" -target bpfel -no-global-types xdpPass c/xdp_pass.c
//go:generate go tool bpf2go -cc clang-19 -strip llvm-strip-19 -cflags "-O2 -g -Wall -Werror -mcpu=v3 -I/usr/include/x86_64-linux-gnu" -target bpfel -type dq_stats qdiscMonitor c/qdisc_monitor.c
