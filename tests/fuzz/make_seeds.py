#!/usr/bin/env python3
"""Writes the seed corpora of the wire targets (corpus/wire_frame,
corpus/wire_messages): frames sealed as lib/preflight/wire.cpp seals them,
under wire_frame.cpp's fixed key and nonces, and the answers nodes send, as
encode_kv writes them. Run it again when the wire format changes.
Also the shapes that once cost the doctor far too long (issue 23 item 9):
corpus/elf/dynstr-no-nul, a plugin whose .dynstr has no NUL, and
corpus/plugstack/include-cycle, five files each including all five.
And the fleet ingest's (issue 31, items 2 and 9), each 64 KiB: corpus/fleet_report/
empty-objects (a report whose nodes are 21,000 `{}`: the callback parser looked
through the array after each), many-keys (an object of 5,000 keys: ordered_json's
linear search), many-links (a valid report of 700 links), unterminated (a string
that never ends: the refusal quoted all of it) and duplicate-keys."""
import hashlib
import json
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
K64 = 64 * 1024
head = '{"kind": "gangway-job-check", "schema": 2, '


def to_64k(prefix, item, suffix):
    n = (K64 - len(prefix) - len(suffix)) // len(item)
    return (prefix + item * n + suffix).encode()


def many_links():
    names = ["n%02d" % i for i in range(8)]
    r = {"kind": "gangway-job-check", "schema": 2, "id": "job-1.0.1700000000.0", "time": 1700000000, "verdict": "ok",
         "exit_code": 0, "job_id": "1", "step_id": "0", "mode": "quick", "bootstrap": "tcp", "seconds": 1,
         "deadline_s": 60, "expected_bps": 1.25e9, "slow_ratio": 0.5,
         "nodes": [{"name": m, "addr": "198.19.0.%d" % (i + 1), "status": "ok", "tx_bps": 1.2e9, "rx_bps": 1.2e9,
                    "nic_mbps": 10000, "reasons": []} for i, m in enumerate(names)],
         "links": [], "stages": [], "gpus": [], "nccl": [], "ports": [], "findings": [], "notes": []}
    link = lambda k: {"from": names[k % 8], "to": names[(k + 1 + k // 8) % 8], "stage": "bandwidth", "ok": True,
                      "bps": 1.2e9, "ms": None, "error": ""}
    k = 0
    while len(json.dumps(r)) + 200 < K64:
        r["links"].append(link(k))
        k += 1
    return json.dumps(r).encode()


seeds["fleet_report"] = {
    "empty-objects": to_64k(head + '"nodes": [{}', ", {}", "]}"),
    "many-links": many_links(),
    "unterminated": (head + '"id": "' + "a" * (K64 - len(head) - 7)).encode(),
    "duplicate-keys": to_64k(head, '"id": "x", ', '"time": 0}'),
}
keys = []
while len(head) + sum(len(k) + 2 for k in keys) + 20 < K64:
    keys.append('"k%d": 0' % len(keys))
seeds["fleet_report"]["many-keys"] = (head + ", ".join(keys) + "}").encode()  # distinct keys, 64 KiB
for target, files in seeds.items():
    os.makedirs(os.path.join(here, "corpus", target), exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(here, "corpus", target, name), "wb") as f:
            f.write(data)
