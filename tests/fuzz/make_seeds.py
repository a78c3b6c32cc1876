#!/usr/bin/env python3
"""Writes the seed corpora of the wire targets (corpus/wire_frame,
corpus/wire_messages): frames sealed as lib/preflight/wire.cpp seals them,
under wire_frame.cpp's fixed key and nonces, and the answers nodes send, as
encode_kv writes them. Run it again when the wire format changes.
Also the shapes that once cost the doctor far too long (issue 23 item 9):
corpus/elf/dynstr-no-nul, a plugin whose .dynstr has no NUL, and
corpus/plugstack/include-cycle, five files each including all five."""
import hashlib
import hmac
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))
KEY, SN, CN = b"k" * 32, b"s" * 16, b"c" * 16
CLIENT = 1


def kv(d):
    return "".join(f"{k}={v}\n" for k, v in sorted(d.items())).encode()


def frame(typ, seq, payload):
    session = hmac.new(KEY, b"gangway-preflight-2 session" + SN + CN, hashlib.sha256).digest()
    mac = hmac.new(session, b"gangway-preflight-2 frame" + bytes([CLIENT]) + struct.pack(">Q", seq) + bytes([typ]) + payload,
                   hashlib.sha256).digest()
    body = bytes([typ]) + struct.pack(">Q", seq) + payload + mac
    return struct.pack(">I", len(body)) + body


card = {"card.node_rank": 0, "card.node": "n0", "card.hostname": "n0", "card.data_iface": "eth1",
        "card.data_addr": "198.18.0.1", "card.data_port": 29501, "card.gpus": 8, "card.version.driver": "550.54.15",
        "card.nics": 1, "card.nic.0.name": "mlx5_0", "card.nic.0.kind": "ib", "card.nic.0.state": "ACTIVE",
        "card.nic.0.rate_mbps": 200000, "card.nic.0.addrs": "198.18.0.1,fe80::1"}
reach = {"n": 2, "r.0.ok": 1, "r.0.ms": 0.25, "r.0.error": "", "r.1.ok": 0, "r.1.ms": 0, "r.1.error": "connect timed out"}
bw = {"rx_ok": 1, "rx_bps": 1.2e9, "rx_error": "", "tx_ok": 1, "tx_error": ""}
rdma = {"ok": 1, "error": "", "bps": 2.4e10, "q.lid": 7, "q.qpn": 1234, "q.psn": 99, "q.rkey": 5, "q.addr": 140000000,
        "q.len": 1048576, "q.gid": "fe80:0000:0000:0000:0000:0000:0000:0001", "q.mtu": 4096}
nccl = {"ok": 1, "error": "", "seconds": 0.0042, "data_ok": 1}
failed = {"ok": 0, "error": "ncclSystemError", "seconds": 0, "data_ok": 0}

seeds = {"wire_messages": {"card": kv(card), "reach": kv(reach), "bw": kv(bw), "rdma": kv(rdma), "nccl": kv(nccl),
                           "nccl-failed": kv(failed)},
         "wire_frame": {"hello": frame(1, 1, kv(card)), "reach": frame(5, 1, kv(reach)), "empty": frame(7, 1, b""),
                        "escaped": kv({"error": "a%3Db%0Ac", "x": "%25"})}}


def elf_dynstr_no_nul(strtab_size=4096, nsyms=256):
    """ELF64 header; sections: 0 null, 1 .dynsym (link 2), 2 .dynstr of 'p'
    without a NUL, 3 .data at 0x1000; every symbol named somewhere in 2."""
    shnum, shoff = 4, 64
    symoff = shoff + shnum * 64
    dataoff = symoff + nsyms * 24
    stroff = dataoff + 16
    eh = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    eh += struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, shnum, 0)
    sh = bytes(64)
    sh += struct.pack("<IIQQQQIIQQ", 0, 11, 0, 0, symoff, nsyms * 24, 2, 0, 8, 24)
    sh += struct.pack("<IIQQQQIIQQ", 0, 3, 0, 0, stroff, strtab_size, 0, 0, 1, 0)
    sh += struct.pack("<IIQQQQIIQQ", 0, 1, 0, 0x1000, dataoff, 16, 0, 0, 8, 0)
    syms = b"".join(struct.pack("<IBBHQQ", (k * 16) % strtab_size, 0x11, 0, 3, 0x1000, 4) for k in range(nsyms))
    data = struct.pack("<I", 0x160508) + b"spank\0" + bytes(6)
    return eh + sh + syms + data + b"p" * strtab_size


seeds["elf"] = {"dynstr-no-nul": elf_dynstr_no_nul()}
seeds["plugstack"] = {"include-cycle": "\n%%\n".join(
    ["include d/*.conf\n"] + ["include /etc/slurm/d/*.conf\n" +
                               ("required /usr/lib/slurm/gangway.so iface=eth1\n" if i == 3 else "")
                               for i in range(1, 6)]).encode()}
for target, files in seeds.items():
    os.makedirs(os.path.join(here, "corpus", target), exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(here, "corpus", target, name), "wb") as f:
            f.write(data)
