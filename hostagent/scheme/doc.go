// Package scheme implements the host agent's path-selection and
// loss-detection schemes as transport.Scheme values:
//
//   - ecmp: one random EV per flow (sigma = 1); loss recovery by RTO.
//   - rps: a random EV per packet; loss recovery by RTO.
//   - rss: Reactive Subflow Spraying (Ordered Chaos, section III). PSN p
//     travels on subflow p mod sigma; each subflow keeps an EV, a feedback
//     count, an RTT sum, a maximum RTT and an ECN count. At the first ACK
//     at or after each deadline the worst subflow that had samples (by
//     mean RTT, ECN fraction or maximum RTT) gets a new EV: random upper
//     bits, its subflow id in the low log2(sigma) bits. All counters reset
//     and the next deadline is now + tau + a random jitter. An optional
//     no-feedback timer reroutes subflows that hear nothing. Loss recovery
//     by RTO.
//   - rss+pfld: RSS plus Precise Fast Loss Detection (section IV). A
//     reroute sets the EV to the low 16 bits of the next PSN the subflow
//     will carry, so the EV marks the start of a new ordered section and
//     its low bits still name the subflow. The receiver keeps one bitmap
//     per flow, sliding forward by absolute PSN; it lifts each 16-bit EV
//     to the section's start PSN and, whenever a packet or probe shows
//     that an earlier PSN of the same subflow and section is missing,
//     NACKs it at once (paths are FIFO, so that PSN is lost, not late).
//     Tail probes follow each subflow's last packet of a message, a
//     section-end probe closes the old EV at each reroute, periodic probes
//     follow every P packets of a subflow and, in V-F's other variant, at
//     most one per smoothed RTT (PFLDParams.PeriodicPerRTT), and an RTX
//     probe follows every retransmission. Every probe is low priority at
//     the sender (the engine's rule).
//
// The Ordered Chaos evaluation's baselines and PSN-PATH, each documented
// with the choices its sources leave open on its configuration type:
//
//   - rss+rack (RACK): RSS with sender-side RACK-TLP (RFC 8985) per
//     subflow, the paper's stand-in for Falcon.
//   - psnpath (PSNPath): K logical paths, PSN p on path (p - FPSN) mod A;
//     the receiver NACKs only a gap against the same path's predecessor
//     within the packet's mapping epoch, which each DATA packet carries
//     (wire.PathMap); a path manager scores paths (DT-Switch). gapnack is
//     the same sender with a receiver that NACKs every global PSN gap: a
//     baseline for PSN-PATH's comparison, not a scheme to deploy.
//   - reps (REPS): per-packet EVs, reusing those whose ACKs came back
//     unmarked, exploring random ones otherwise, freezing on timeouts.
//   - plb (PLB): one EV per flow, moved when a round's CE fraction exceeds
//     a threshold (FlowBender's parameters, as Ordered Chaos sets them).
//
// Choices the Ordered Chaos paper leaves open for rss and rss+pfld, and
// what is done here:
//
//   - Feedback counts toward a subflow only if the acknowledged copy was
//     sent on the subflow's current EV: samples from the old path must not
//     steer the new one.
//   - On an RTO every scheme by default moves the timed-out subflows (the
//     flow, for ecmp) to a new EV, as Linux rethinks a flow's hash on RTO;
//     without it a flow whose path fails never recovers unless the
//     no-feedback timer is on. Set KeepPathOnRTO to follow the paper
//     strictly. Under rss+pfld, RTO retransmissions go on a random EV of
//     their subflow (the receiver never uses a retransmission for gap
//     detection, so any EV is safe), because a subflow whose section has
//     not carried a packet yet cannot change its PSN-derived EV.
//   - Jitter defaults to tau/10, and P to 8 with the once-per-RTT limit:
//     the paper gives no single default for either.
package scheme
