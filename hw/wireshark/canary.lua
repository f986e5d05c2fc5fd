-- SPDX-License-Identifier: MIT
-- Wireshark/tshark dissector for Canary frames (EtherType 0x88B5), the wire
-- format of libhost/wire.h: after Ethernet, 19 bytes in the
-- paper's field order, then big-endian int32 elements.
--
--   tshark -X lua_script:hw/wireshark/canary.lua -r run.pcap -V
--   tshark -X lua_script:hw/wireshark/canary.lua -r run.pcap -T fields \
--          -e canary.id -e canary.opcode -e canary.counter -e canary.run
--
-- Install for Wireshark: copy to ~/.local/lib/wireshark/plugins/.

local canary = Proto("canary", "Canary in-network allreduce")

local opcodes = {
	[1] = "REDUCE", [2] = "BCAST", [3] = "RESTORE", [4] = "RETX_REQ", [5] = "RETX_DATA",
	[6] = "FAILURE", [7] = "FALLBACK", [8] = "DONE", [9] = "TREE_REDUCE", [10] = "TREE_BCAST", [11] = "RECOVER",
}

local f = canary.fields
f.dst = ProtoField.ipv4("canary.dst", "Destination (leader)")
f.id = ProtoField.uint32("canary.id", "Id", base.HEX)
f.tenant = ProtoField.uint32("canary.tenant", "Tenant", base.DEC, nil, 0xff000000)
f.seq = ProtoField.uint32("canary.seq", "Sequence", base.DEC, nil, 0x00ffffff)
f.counter = ProtoField.uint16("canary.counter", "Counter", base.DEC)
f.hosts = ProtoField.uint16("canary.hosts", "Hosts", base.DEC)
f.children = ProtoField.uint32("canary.children", "Children (port / bitmap)", base.HEX)
f.switch = ProtoField.uint16("canary.switch", "Switch address", base.DEC)
f.flags = ProtoField.uint8("canary.flags", "Flags", base.HEX)
f.bypass = ProtoField.bool("canary.bypass", "Bypass", 8, nil, 0x80)
f.multicast = ProtoField.bool("canary.multicast", "Multicast", 8, nil, 0x40)
f.run = ProtoField.uint8("canary.run", "Run id (modulo 4)", base.DEC, nil, 0x30)
f.opcode = ProtoField.uint8("canary.opcode", "Opcode", base.DEC, opcodes, 0x0f)
f.nelem = ProtoField.uint32("canary.elements", "Elements", base.DEC)
f.elem = ProtoField.int32("canary.element", "Element", base.DEC)

local ef_short = ProtoExpert.new("canary.short", "Canary header truncated", expert.group.MALFORMED, expert.severity.ERROR)
local ef_len = ProtoExpert.new("canary.badlen", "Data is not whole int32 elements", expert.group.MALFORMED, expert.severity.ERROR)
canary.experts = { ef_short, ef_len }

function canary.dissector(buf, pinfo, tree)
	pinfo.cols.protocol = "CANARY"
	local t = tree:add(canary, buf())
	if buf:len() < 19 then
		t:add_proto_expert_info(ef_short)
		return
	end
	t:add(f.dst, buf(0, 4))
	local idt = t:add(f.id, buf(4, 4))
	idt:add(f.tenant, buf(4, 4))
	idt:add(f.seq, buf(4, 4))
	t:add(f.counter, buf(8, 2))
	t:add(f.hosts, buf(10, 2))
	t:add(f.children, buf(12, 4))
	t:add(f.switch, buf(16, 2))
	local fl = t:add(f.flags, buf(18, 1))
	fl:add(f.bypass, buf(18, 1))
	fl:add(f.multicast, buf(18, 1))
	fl:add(f.run, buf(18, 1))
	fl:add(f.opcode, buf(18, 1))
	local op = bit.band(buf(18, 1):uint(), 0x0f)
	local dlen = buf:len() - 19
	if dlen % 4 ~= 0 then
		t:add_proto_expert_info(ef_len)
	end
	local n = math.floor(dlen / 4)
	t:add(f.nelem, n):set_generated()
	if n > 0 then
		local d = t:add(buf(19, n * 4), "Data (" .. n .. " x int32)")
		for i = 0, n - 1 do
			d:add(f.elem, buf(19 + 4 * i, 4))
		end
	end
	pinfo.cols.info = string.format("%s id=%u/%u counter=%u/%u run=%u%s%s",
		opcodes[op] or ("op" .. op), buf(4, 1):uint(), bit.band(buf(4, 4):uint(), 0xffffff),
		buf(8, 2):uint(), buf(10, 2):uint(), bit.rshift(bit.band(buf(18, 1):uint(), 0x30), 4),
		bit.band(buf(18, 1):uint(), 0x80) ~= 0 and " bypass" or "",
		bit.band(buf(18, 1):uint(), 0x40) ~= 0 and " multicast" or "")
end

DissectorTable.get("ethertype"):add(0x88B5, canary)
