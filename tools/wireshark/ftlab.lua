-- ftlab.lua: Wireshark/tshark dissector for ftlab's transport header
-- (hostagent/wire). Load it with
--   wireshark -X lua_script:tools/wireshark/ftlab.lua ...
--   tshark -X lua_script:tools/wireshark/ftlab.lua -r capture.pcapng
-- or copy it into ~/.local/lib/wireshark/plugins/.
--
-- The header rides in UDP. Every agent of a lab listens on one UDP port
-- (hostagent --port, default 4791, which Wireshark otherwise gives to
-- RoCEv2; the "ftlab" protocol preferences change it), and a packet's UDP
-- source port is its entropy value (EV), except that EV 0 is sent from
-- port 0x8000. Packets on other ports are found by a heuristic: magic
-- 0x4654 ("FT"), version 2 and a known type.
--
-- Layout (big-endian), from hostagent/wire/doc.go:
--   common (36): magic(2) version(1) type(1) flags(1) sfbits(1) ev(2)
--                flow(4) msg(4) psn(4) tsval(4) tsecr(4) delay(4) jitter(4)
--   DATA  (+12): offset(4) msglen(4) length(2) path(2), then the payload
--   ACK   (+12): cumack(4) sack(8)
--   NACK  (+4n+4): count(2) reserved(2) psn(4) x count
--   TAIL, SECTION_END, PERIODIC, RTX probes: nothing more

local ftlab = Proto("ftlab", "ftlab transport")

local MAGIC = 0x4654
local VERSION = 2
local COMMON_LEN = 36
local DATA_LEN = 48
local ACK_LEN = 48
local NACK_BASE_LEN = 40
local C = COMMON_LEN -- where a type's own part starts
local EV_ZERO_PORT = 0x8000
local MAX_NACK_PSNS = 256
local SACK_BITS = 64
local MAP_FPSN_BITS = 11

local types = {
	[1] = "DATA", [2] = "ACK", [3] = "NACK", [4] = "TAIL",
	[5] = "SECTION_END", [6] = "PERIODIC", [7] = "RTX",
}
local probe_meaning = {
	[4] = "last PSN sent on its EV section (tail of a subflow's part of a message)",
	[5] = "last PSN sent on an EV section closed by a reroute",
	[6] = "last PSN sent on its EV section (periodic probe)",
	[7] = "the PSN just retransmitted",
}
-- flags each type may carry (hostagent/wire allowedFlags)
local allowed_flags = { [1] = 0x01, [2] = 0x0e }

local f = ftlab.fields
f.magic = ProtoField.uint16("ftlab.magic", "Magic", base.HEX)
f.version = ProtoField.uint8("ftlab.version", "Version", base.DEC)
f.type = ProtoField.uint8("ftlab.type", "Type", base.DEC, types)
f.flags = ProtoField.uint8("ftlab.flags", "Flags", base.HEX)
f.flag_retx = ProtoField.bool("ftlab.flags.retx", "RETX (retransmission)", 8, nil, 0x01)
f.flag_ece = ProtoField.bool("ftlab.flags.ece", "ECE (acknowledged packet arrived CE-marked)", 8, nil, 0x02)
f.flag_dup = ProtoField.bool("ftlab.flags.dup", "DUP (acknowledged copy was a duplicate)", 8, nil, 0x04)
f.flag_probe_ack = ProtoField.bool("ftlab.flags.probe_ack", "PROBE_ACK (answers a probe)", 8, nil, 0x08)
f.sfbits = ProtoField.uint8("ftlab.sfbits", "Subflow bits (log2 sigma)", base.DEC)
f.sigma = ProtoField.uint32("ftlab.sigma", "Subflows (sigma)", base.DEC)
f.ev = ProtoField.uint16("ftlab.ev", "Entropy value (EV)", base.HEX)
f.flow = ProtoField.uint32("ftlab.flow", "Flow", base.DEC)
f.msg = ProtoField.uint32("ftlab.msg", "Message", base.DEC)
f.psn = ProtoField.uint32("ftlab.psn", "PSN", base.DEC)
f.tsval = ProtoField.uint32("ftlab.tsval", "TSval (sender clock, ns, low 32 bits)", base.DEC)
f.tsecr = ProtoField.uint32("ftlab.tsecr", "TSecr (echoed TSval)", base.DEC)
f.delay = ProtoField.uint32("ftlab.delay", "Propagation delay so far (ns, added by each switch)", base.DEC)
f.jitter = ProtoField.uint32("ftlab.jitter", "Jitter bound so far (ns)", base.DEC)
-- DATA
f.offset = ProtoField.uint32("ftlab.offset", "Offset in message", base.DEC)
f.msglen = ProtoField.uint32("ftlab.msglen", "Message length", base.DEC)
f.length = ProtoField.uint16("ftlab.length", "Payload length", base.DEC)
f.path = ProtoField.uint16("ftlab.path", "Path map", base.HEX)
f.path_paths = ProtoField.uint16("ftlab.path.paths", "Active paths", base.DEC, nil, 0xf800)
f.path_fpsn = ProtoField.uint16("ftlab.path.fpsn_low", "First PSN of the mapping (low 11 bits)", base.DEC, nil, 0x07ff)
f.path_fpsn_full = ProtoField.uint32("ftlab.path.fpsn", "First PSN of the mapping", base.DEC)
f.payload = ProtoField.bytes("ftlab.payload", "Payload")
-- ACK
f.cumack = ProtoField.uint32("ftlab.cumack", "Cumulative ACK (every PSN before it received)", base.DEC)
f.sack = ProtoField.uint64("ftlab.sack", "SACK bitmap", base.HEX)
f.sack_psn = ProtoField.uint32("ftlab.sack.psn", "SACKed PSN", base.DEC)
f.acked_psn = ProtoField.uint32("ftlab.acked_psn", "Acknowledged PSN", base.DEC)
-- NACK
f.nack_count = ProtoField.uint16("ftlab.nack.count", "Missing PSNs", base.DEC)
f.nack_reserved = ProtoField.uint16("ftlab.nack.reserved", "Reserved", base.HEX)
f.nack_psn = ProtoField.uint32("ftlab.nack.psn", "Missing PSN", base.DEC)
-- probes
f.probe_for = ProtoField.uint32("ftlab.probe.psn", "Probe speaks for PSN", base.DEC)

local e = ftlab.experts
e.bad = ProtoExpert.new("ftlab.malformed", "Malformed ftlab packet", expert.group.MALFORMED, expert.severity.ERROR)
e.ev_port = ProtoExpert.new("ftlab.ev_port", "EV does not match the UDP source port", expert.group.PROTOCOL, expert.severity.WARN)
e.retx = ProtoExpert.new("ftlab.retx", "Retransmission", expert.group.SEQUENCE, expert.severity.NOTE)
e.cut = ProtoExpert.new("ftlab.cut", "Packet cut short by the capture's snaplen", expert.group.UNDECODED, expert.severity.NOTE)

ftlab.prefs.port = Pref.uint("UDP port", 4791, "The agents' UDP port (hostagent --port)")

local udp_srcport = Field.new("udp.srcport")

-- EV of a UDP source port (hostagent/netio PortEV).
local function port_ev(port, header_ev)
	if port == EV_ZERO_PORT and header_ev == 0 then
		return 0
	end
	return port
end

local function looks_like_ftlab(tvb)
	if tvb:captured_len() < 4 then
		return false
	end
	local t = tvb(3, 1):uint()
	return tvb(0, 2):uint() == MAGIC and tvb(2, 1):uint() == VERSION and types[t] ~= nil
end

-- Adds the SACKed PSNs of an ACK: bit i set means psn-1-i was received.
local function add_sack(tree, sack_range, psn)
	local sack = sack_range:uint64()
	local list = {}
	local sub = tree:add(f.sack, sack_range)
	for i = 0, SACK_BITS - 1 do
		if sack:rshift(i):band(1):tonumber() == 1 then
			local p = (psn - 1 - i) % 4294967296
			sub:add(f.sack_psn, sack_range, p):set_generated()
			list[#list + 1] = p
		end
	end
	return #list
end

local function dissect(tvb, pinfo, root)
	local cap = tvb:captured_len()
	local rep = tvb:reported_length_remaining()
	if not looks_like_ftlab(tvb) then
		return 0
	end
	pinfo.cols.protocol = "ftlab"
	local t = tvb(3, 1):uint()
	local tname = types[t]
	local tree = root:add(ftlab, tvb(), "ftlab " .. tname)
	if cap < COMMON_LEN then
		tree:add_proto_expert_info(e.cut)
		pinfo.cols.info = tname .. " [cut short]"
		return cap
	end
	tree:add(f.magic, tvb(0, 2))
	tree:add(f.version, tvb(2, 1))
	tree:add(f.type, tvb(3, 1))
	local flags = tvb(4, 1):uint()
	local ft = tree:add(f.flags, tvb(4, 1))
	ft:add(f.flag_retx, tvb(4, 1))
	ft:add(f.flag_ece, tvb(4, 1))
	ft:add(f.flag_dup, tvb(4, 1))
	ft:add(f.flag_probe_ack, tvb(4, 1))
	if bit.band(flags, bit.bnot(allowed_flags[t] or 0)) ~= 0 then
		ft:add_proto_expert_info(e.bad, string.format("flags 0x%02x not allowed on %s", flags, tname))
	end
	local sfbits = tvb(5, 1):uint()
	local sft = tree:add(f.sfbits, tvb(5, 1))
	if sfbits <= 15 then
		tree:add(f.sigma, tvb(5, 1), bit.lshift(1, sfbits)):set_generated()
	else
		sft:add_proto_expert_info(e.bad, "sfbits above 15")
	end
	local ev = tvb(6, 2):uint()
	local evt = tree:add(f.ev, tvb(6, 2))
	local sport = udp_srcport()
	if sport ~= nil and port_ev(sport.value, ev) ~= ev then
		evt:add_proto_expert_info(e.ev_port, string.format("EV 0x%04x, UDP source port 0x%04x", ev, sport.value))
	end
	local flow, msg, psn = tvb(8, 4):uint(), tvb(12, 4):uint(), tvb(16, 4):uint()
	tree:add(f.flow, tvb(8, 4))
	tree:add(f.msg, tvb(12, 4))
	tree:add(f.psn, tvb(16, 4))
	tree:add(f.tsval, tvb(20, 4))
	tree:add(f.tsecr, tvb(24, 4))
	tree:add(f.delay, tvb(28, 4))
	tree:add(f.jitter, tvb(32, 4))

	local info = string.format("%s flow %d msg %d psn %d ev 0x%04x", tname, flow, msg, psn, ev)
	local consumed = COMMON_LEN
	if t == 1 then -- DATA
		if cap < DATA_LEN then
			tree:add_proto_expert_info(e.cut)
		else
			local off, mlen, plen = tvb(C, 4):uint(), tvb(C + 4, 4):uint(), tvb(C + 8, 2):uint()
			tree:add(f.offset, tvb(C, 4))
			tree:add(f.msglen, tvb(C + 4, 4))
			local lt = tree:add(f.length, tvb(C + 8, 2))
			if rep - DATA_LEN ~= plen then
				lt:add_proto_expert_info(e.bad, string.format("length %d but %d payload bytes follow", plen, rep - DATA_LEN))
			end
			local path = tvb(C + 10, 2):uint()
			local pt = tree:add(f.path, tvb(C + 10, 2))
			pt:add(f.path_paths, tvb(C + 10, 2))
			pt:add(f.path_fpsn, tvb(C + 10, 2))
			local paths = bit.rshift(path, MAP_FPSN_BITS)
			if paths > 0 then
				-- the largest PSN <= psn with those low bits (wire PathMap.FPSN)
				local low = bit.band(path, 0x7ff)
				local fpsn = (psn - bit.band(psn - low, 0x7ff)) % 4294967296
				pt:add(f.path_fpsn_full, tvb(C + 10, 2), fpsn):set_generated()
				info = info .. string.format(" paths %d fpsn %d", paths, fpsn)
			elseif path ~= 0 then
				pt:add_proto_expert_info(e.bad, "path map without paths must be 0")
			end
			info = info .. string.format(" off %d len %d/%d", off, plen, mlen)
			if plen > 0 and cap > DATA_LEN then
				tree:add(f.payload, tvb(DATA_LEN, math.min(cap, rep) - DATA_LEN))
			end
			consumed = rep
		end
	elseif t == 2 then -- ACK
		if cap < ACK_LEN then
			tree:add_proto_expert_info(e.cut)
		else
			tree:add(f.cumack, tvb(C, 4))
			local n = add_sack(tree, tvb(C + 4, 8), psn)
			if bit.band(flags, 0x08) ~= 0 then
				info = string.format("ACK (probe) flow %d msg %d psn %d ev 0x%04x", flow, msg, psn, ev)
			else
				tree:add(f.acked_psn, tvb(16, 4), psn):set_generated()
			end
			info = info .. string.format(" cumack %d sacked %d", tvb(C, 4):uint(), n)
			consumed = ACK_LEN
		end
	elseif t == 3 then -- NACK
		if cap < NACK_BASE_LEN then
			tree:add_proto_expert_info(e.cut)
		else
			local n = tvb(C, 2):uint()
			local ct = tree:add(f.nack_count, tvb(C, 2))
			if n == 0 or n > MAX_NACK_PSNS then
				ct:add_proto_expert_info(e.bad, string.format("count %d outside 1..%d", n, MAX_NACK_PSNS))
			end
			local rt = tree:add(f.nack_reserved, tvb(C + 2, 2))
			if tvb(C + 2, 2):uint() ~= 0 then
				rt:add_proto_expert_info(e.bad, "reserved must be 0")
			end
			local shown = {}
			for i = 0, n - 1 do
				local o = NACK_BASE_LEN + 4 * i
				if o + 4 > cap then
					tree:add_proto_expert_info(e.cut, string.format("%d of %d PSNs captured", i, n))
					break
				end
				tree:add(f.nack_psn, tvb(o, 4))
				if #shown < 8 then
					shown[#shown + 1] = tostring(tvb(o, 4):uint())
				end
			end
			local list = table.concat(shown, ",")
			if n > #shown then
				list = list .. ",..."
			end
			info = info .. string.format(" missing %d [%s]", n, list)
			consumed = NACK_BASE_LEN + 4 * n
		end
	else -- probes
		tree:add(f.probe_for, tvb(16, 4), psn):set_generated():append_text(" (" .. probe_meaning[t] .. ")")
		if rep ~= COMMON_LEN then
			tree:add_proto_expert_info(e.bad, string.format("probe of %d bytes, must be %d", rep, COMMON_LEN))
		end
	end
	if bit.band(flags, 0x01) ~= 0 then
		info = info .. " [RETX]"
		tree:add_proto_expert_info(e.retx)
	end
	if bit.band(flags, 0x02) ~= 0 then info = info .. " [ECE]" end
	if bit.band(flags, 0x04) ~= 0 then info = info .. " [DUP]" end
	pinfo.cols.info = info
	return consumed
end

function ftlab.dissector(tvb, pinfo, root)
	return dissect(tvb, pinfo, root)
end

local function heuristic(tvb, pinfo, root)
	if not looks_like_ftlab(tvb) then
		return false
	end
	dissect(tvb, pinfo, root)
	return true
end

local registered_port = nil
local function register_port()
	local udp = DissectorTable.get("udp.port")
	if registered_port ~= nil then
		udp:remove(registered_port, ftlab)
	end
	registered_port = ftlab.prefs.port
	udp:add(registered_port, ftlab)
end

function ftlab.prefs_changed()
	if registered_port ~= ftlab.prefs.port then
		register_port()
	end
end

register_port()
ftlab:register_heuristic("udp", heuristic)
