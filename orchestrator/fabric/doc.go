// Package fabric turns a resolved topology into network namespaces and veth
// links on the running kernel, and removes them again.
//
// A build has three passes, each parallel across nodes:
//
//  1. namespaces: one per node, created with the sysctls a lab needs
//     (no IPv6, so no autoconfiguration noise; no reverse-path filter);
//  2. links: one veth pair per topology link, created directly inside the two
//     nodes' namespaces with their final names, MACs and MTU, so no lab
//     interface ever appears in the caller's namespace;
//  3. configuration: per namespace, interfaces up, the identity address on
//     every port, a /32 route and a permanent neighbour entry for each peer
//     (switches do not answer ARP), the hosts' default route and their veth
//     offload settings.
//
// Everything goes through netlink and ioctls from Go; nothing is shelled out.
// A failed or cancelled build removes every namespace it made before it
// returns.
package fabric
