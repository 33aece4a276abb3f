package bpf

// Bounds and constants of the C side (c/consts.h); TestConstsMatchC
// checks that they agree.
const (
	MaxPorts     = 128     // port numbers are below this
	MaxUplinks   = 64      // uplink indexes are below this (u64 valid sets)
	MaxGroups    = 256     // default group table size
	MaxRoutes    = 4096    // default route table size
	MaxPointers  = 4096    // default pointer table size
	NumClasses   = 2       // ofan classes: data and ack
	HistBuckets  = 16      // queue histogram buckets (buffer/16 each)
	TrimKeep     = 64      // transport payload bytes kept by trimming
	TrimPriority = 0x10010 // skb->priority of trimmed/header packets: htb class 1:10 (switchd/shaping.HighPriority)
)

// Class is the traffic class of an ofan pointer.
type Class uint32

const (
	ClassData Class = 0 // IPv4 total length above the ack threshold
	ClassAck  Class = 1 // header-only packets: total length <= ack threshold
)
