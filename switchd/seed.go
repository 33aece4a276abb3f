package switchd

// SwitchSeed is the seed the switch at node index index (its position in
// the topology's Nodes) is programmed with, from the data plane's seed
// (Config.Seed): the low 32 bits are bpf.Config.Seed, the ECMP hash seed.
func SwitchSeed(seed uint64, index int) uint32 { return uint32(switchSeed(seed, index)) }
